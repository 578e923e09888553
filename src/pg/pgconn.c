/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libpq behind sbx_pg_t. Results are always cleared before returning, and
 * a multi-statement exec drains every result, so the connection is ready
 * for the next command whatever happened.
 */
#include "pg/pgconn.h"

#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "core/util.h"

struct sbx_pg_s {
        PGconn *conn;
};

/* PostgreSQL's messages end with a newline (and may hold more lines):
 * keep the first line. */
static sbx_err_t pg_fail(char *errstr,
                         size_t errstr_size,
                         const char *what,
                         const char *msg)
{
        size_t n = strcspn(msg, "\n");
        return sbx_seterr(errstr, errstr_size, SBX_ERR_PG, "%s: %.*s", what,
                          (int)n, msg);
}

sbx_pg_t *sbx_pg_connect(const char *conninfo, char *errstr, size_t errstr_size)
{
        sbx_pg_t *pg = sbx_calloc(1, sizeof(*pg));
        PGresult *r;

        pg->conn = PQconnectdb(conninfo);
        if (PQstatus(pg->conn) != CONNECTION_OK) {
                pg_fail(errstr, errstr_size, "cannot connect to PostgreSQL",
                        PQerrorMessage(pg->conn));
                sbx_pg_close(pg);
                return NULL;
        }
        r = PQexec(pg->conn, "SET client_min_messages = warning");
        PQclear(r);
        return pg;
}

void sbx_pg_close(sbx_pg_t *pg)
{
        if (!pg)
                return;
        PQfinish(pg->conn);
        free(pg);
}

int sbx_pg_alive(const sbx_pg_t *pg)
{
        return PQstatus(pg->conn) == CONNECTION_OK;
}

sbx_err_t sbx_pg_exec(sbx_pg_t *pg,
                      const char *sql,
                      int64_t *ret_rows,
                      char *errstr,
                      size_t errstr_size)
{
        PGresult *r;
        sbx_err_t err = SBX_OK;
        int64_t rows  = 0;

        if (!PQsendQuery(pg->conn, sql))
                return pg_fail(errstr, errstr_size, "query",
                               PQerrorMessage(pg->conn));
        while ((r = PQgetResult(pg->conn))) {
                ExecStatusType st = PQresultStatus(r);
                if (st == PGRES_TUPLES_OK)
                        rows = PQntuples(r);
                else if (st == PGRES_COMMAND_OK)
                        rows = atoll(PQcmdTuples(r));
                else if (st != PGRES_EMPTY_QUERY && !err)
                        err = pg_fail(errstr, errstr_size, "query",
                                      PQresultErrorMessage(r));
                PQclear(r);
        }
        if (!err && ret_rows)
                *ret_rows = rows;
        return err;
}

sbx_err_t sbx_pg_copy_in(sbx_pg_t *pg,
                         const char *copy_sql,
                         const char *data,
                         size_t len,
                         char *errstr,
                         size_t errstr_size)
{
        PGresult *r        = PQexec(pg->conn, copy_sql);
        sbx_err_t err      = SBX_OK;
        const size_t chunk = 1 << 20;
        size_t off;

        if (PQresultStatus(r) != PGRES_COPY_IN) {
                err = pg_fail(errstr, errstr_size, "COPY",
                              PQresultErrorMessage(r));
                PQclear(r);
                return err;
        }
        PQclear(r);
        for (off = 0; off < len; off += chunk) {
                size_t n = len - off < chunk ? len - off : chunk;
                if (PQputCopyData(pg->conn, data + off, (int)n) != 1) {
                        err = pg_fail(errstr, errstr_size, "COPY",
                                      PQerrorMessage(pg->conn));
                        break;
                }
        }
        if (PQputCopyEnd(pg->conn, err ? "aborted" : NULL) != 1 && !err)
                err = pg_fail(errstr, errstr_size, "COPY",
                              PQerrorMessage(pg->conn));
        while ((r = PQgetResult(pg->conn))) {
                if (PQresultStatus(r) != PGRES_COMMAND_OK && !err)
                        err = pg_fail(errstr, errstr_size, "COPY",
                                      PQresultErrorMessage(r));
                PQclear(r);
        }
        return err;
}

sbx_err_t sbx_pg_query(sbx_pg_t *pg,
                       const char *sql,
                       int nparams,
                       const char *const *params,
                       sbx_pg_row_cb_t *row,
                       void *opaque,
                       char *errstr,
                       size_t errstr_size)
{
        PGresult *r =
            PQexecParams(pg->conn, sql, nparams, NULL, params, NULL, NULL, 0);
        const char **vals;
        int i, c, n, nc;

        if (PQresultStatus(r) != PGRES_TUPLES_OK &&
            PQresultStatus(r) != PGRES_COMMAND_OK) {
                sbx_err_t err = pg_fail(errstr, errstr_size, "query",
                                        PQresultErrorMessage(r));
                PQclear(r);
                return err;
        }
        n    = PQntuples(r);
        nc   = PQnfields(r);
        vals = sbx_calloc(nc ? (size_t)nc : 1, sizeof(*vals));
        for (i = 0; i < n; i++) {
                for (c = 0; c < nc; c++)
                        vals[c] =
                            PQgetisnull(r, i, c) ? NULL : PQgetvalue(r, i, c);
                row(opaque, nc, vals);
        }
        free(vals);
        PQclear(r);
        return SBX_OK;
}
