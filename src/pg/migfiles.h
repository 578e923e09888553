/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The migration files of projections/: "NNNN_name.sql", applied in the
 * order of their number. Loading validates the whole directory (names,
 * gaps, duplicates, text) before anything touches a database.
 */
#ifndef SBX_MIGFILES_H
#define SBX_MIGFILES_H

#include <stddef.h>
#include <stdint.h>

#include "sbx/err.h"

typedef struct sbx_migration_s {
        int version;
        char *name;     /**< file name, e.g. "0001_init.sql" */
        char *path;
        char *sql;
        char checksum[17]; /**< FNV-1a 64 of the file, hex */
} sbx_migration_t;

typedef struct sbx_migrations_s {
        sbx_migration_t *v;
        size_t n;
} sbx_migrations_t;

sbx_err_t sbx_migrations_load(const char *dir, sbx_migrations_t **ret_migs,
                              char *errstr, size_t errstr_size);
void sbx_migrations_destroy(sbx_migrations_t *migs);

/** 1-based line of the 1-based character position @p pos in @p text. */
int sbx_text_line_of(const char *text, long pos);

#endif
