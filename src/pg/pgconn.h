/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A PostgreSQL connection for sbx modules that are not migrations: run
 * SQL, stream COPY data in, read rows. libpq stays behind this header.
 * Every error is SBX_ERR_PG with PostgreSQL's reason in errstr, one line.
 */
#ifndef SBX_PGCONN_H
#define SBX_PGCONN_H

#include <stddef.h>
#include <stdint.h>

#include "sbx/err.h"

typedef struct sbx_pg_s sbx_pg_t;

/** Connects to @p conninfo (borrowed); NULL with errstr on failure. */
sbx_pg_t *sbx_pg_connect(const char *conninfo,
                         char *errstr,
                         size_t errstr_size);
void sbx_pg_close(sbx_pg_t *pg);
/** Is the connection still up (not broken by a server or network error)? */
int sbx_pg_alive(const sbx_pg_t *pg);

/**
 * Runs @p sql (borrowed; one statement or several separated by ";" with
 * no parameters). *ret_rows (may be NULL) is the number of rows the last
 * statement affected or returned.
 */
sbx_err_t sbx_pg_exec(sbx_pg_t *pg,
                      const char *sql,
                      int64_t *ret_rows,
                      char *errstr,
                      size_t errstr_size);

/**
 * Runs @p copy_sql ("COPY t (cols) FROM STDIN") and sends @p len bytes of
 * COPY text @p data (borrowed) as its input.
 */
sbx_err_t sbx_pg_copy_in(sbx_pg_t *pg,
                         const char *copy_sql,
                         const char *data,
                         size_t len,
                         char *errstr,
                         size_t errstr_size);

/** Receives one row: @p ncols values as text, NULL for SQL NULL. */
typedef void(sbx_pg_row_cb_t)(void *opaque,
                              int ncols,
                              const char *const *values);

/**
 * Runs the statement @p sql with @p nparams text parameters (borrowed)
 * and calls @p row for every row of its result (none for a command).
 */
sbx_err_t sbx_pg_query(sbx_pg_t *pg,
                       const char *sql,
                       int nparams,
                       const char *const *params,
                       sbx_pg_row_cb_t *row,
                       void *opaque,
                       char *errstr,
                       size_t errstr_size);

#endif
