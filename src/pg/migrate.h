/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `sbx db migrate`: applies the missing migrations of projections/ in
 * order, each in its own transaction, recorded in sbx_migrations.
 */
#ifndef SBX_MIGRATE_H
#define SBX_MIGRATE_H

#include <stddef.h>

#include "sbx/err.h"

typedef void(sbx_migrate_report_cb_t)(const char *line, void *opaque);

/**
 * Migrates the database at @p conninfo to the files of @p dir. Every
 * pending migration is first run in one transaction that is rolled back,
 * so a broken file stops the run with its file, line and PostgreSQL's
 * reason before anything is committed. A migration that was applied and
 * whose file has since changed is an error. Concurrent runs serialise on
 * an advisory lock. *ret_applied (may be NULL) counts applied files.
 */
sbx_err_t sbx_migrate(const char *conninfo, const char *dir, int dry_run,
                      sbx_migrate_report_cb_t *report, void *opaque,
                      int *ret_applied, char *errstr, size_t errstr_size);

#endif
