/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Migration runner. The invariant: after a run, sbx_migrations lists
 * exactly the files whose SQL is committed, with the checksum of the text
 * that was run; a failed run leaves the database as it found it.
 */
#include "pg/migrate.h"

#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "core/util.h"
#include "pg/migfiles.h"

#define MIGRATE_LOCK_KEY 7306111 /* advisory lock id: "sbx migrate" */

static const char bootstrap_sql[] =
    "CREATE TABLE IF NOT EXISTS sbx_migrations ("
    " version integer PRIMARY KEY,"
    " name text NOT NULL,"
    " checksum text NOT NULL,"
    " applied_at timestamptz NOT NULL DEFAULT now())";

static sbx_err_t exec_ok(PGconn *pg, const char *sql, const char *what,
                         char *errstr, size_t errstr_size)
{
        PGresult *r = PQexec(pg, sql);
        ExecStatusType st = PQresultStatus(r);
        sbx_err_t err = SBX_OK;
        if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_PG, "%s: %s",
                                 what, PQresultErrorMessage(r));
        PQclear(r);
        return err;
}

/* Runs one migration's SQL; on error reports file:line: reason. */
static sbx_err_t run_sql(PGconn *pg, const sbx_migration_t *mig, char *errstr,
                         size_t errstr_size)
{
        PGresult *r = PQexec(pg, mig->sql);
        ExecStatusType st = PQresultStatus(r);
        sbx_err_t err = SBX_OK;

        if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK &&
            st != PGRES_EMPTY_QUERY) {
                const char *pos =
                    PQresultErrorField(r, PG_DIAG_STATEMENT_POSITION);
                const char *msg = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
                int line = pos ? sbx_text_line_of(mig->sql, atol(pos)) : 0;
                if (line)
                        err = sbx_seterr(errstr, errstr_size, SBX_ERR_PG,
                                         "%s:%d: %s", mig->path, line,
                                         msg ? msg : PQerrorMessage(pg));
                else
                        err = sbx_seterr(errstr, errstr_size, SBX_ERR_PG,
                                         "%s: %s", mig->path,
                                         msg ? msg : PQerrorMessage(pg));
        }
        PQclear(r);
        return err;
}

/* Fills applied[v-1] with the stored checksum of version v (or NULL). */
static sbx_err_t load_applied(PGconn *pg, const sbx_migrations_t *migs,
                              char **applied, char *errstr,
                              size_t errstr_size)
{
        PGresult *r = PQexec(pg, "SELECT version, checksum, name FROM "
                                 "sbx_migrations ORDER BY version");
        int i, n;
        sbx_err_t err = SBX_OK;

        if (PQresultStatus(r) != PGRES_TUPLES_OK) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_PG,
                                 "reading sbx_migrations: %s",
                                 PQresultErrorMessage(r));
                goto done;
        }
        n = PQntuples(r);
        for (i = 0; i < n; i++) {
                int v = atoi(PQgetvalue(r, i, 0));
                if (v < 1 || (size_t)v > migs->n) {
                        err = sbx_seterr(
                            errstr, errstr_size, SBX_ERR_CONFLICT,
                            "the database has migration %d (%s) but the "
                            "files end at %zu: is this checkout older than "
                            "the database?",
                            v, PQgetvalue(r, i, 2), migs->n);
                        goto done;
                }
                applied[v - 1] = sbx_strdup(PQgetvalue(r, i, 1));
        }
done:
        PQclear(r);
        return err;
}

sbx_err_t sbx_migrate(const char *conninfo, const char *dir, int dry_run,
                      sbx_migrate_report_cb_t *report, void *opaque,
                      int *ret_applied, char *errstr, size_t errstr_size)
{
        sbx_migrations_t *migs = NULL;
        PGconn *pg = NULL;
        char **applied = NULL;
        sbx_err_t err;
        int napplied = 0, locked = 0;
        size_t i;
        char line[1024];

        err = sbx_migrations_load(dir, &migs, errstr, errstr_size);
        if (err)
                return err;
        pg = PQconnectdb(conninfo);
        if (PQstatus(pg) != CONNECTION_OK) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_PG,
                                 "cannot connect to PostgreSQL (%s): %s",
                                 conninfo, PQerrorMessage(pg));
                goto done;
        }
        err = exec_ok(pg, "SET client_min_messages = warning", "set", errstr,
                      errstr_size);
        if (!err)
                err = exec_ok(pg,
                              "SELECT pg_advisory_lock(" SBX_STR(
                                  MIGRATE_LOCK_KEY) ")",
                              "lock", errstr, errstr_size);
        if (err)
                goto done;
        locked = 1;
        err = exec_ok(pg, bootstrap_sql, "creating sbx_migrations", errstr,
                      errstr_size);
        if (err)
                goto done;
        applied = sbx_calloc(migs->n, sizeof(*applied));
        err = load_applied(pg, migs, applied, errstr, errstr_size);
        if (err)
                goto done;
        for (i = 0; i < migs->n; i++)
                if (applied[i] && strcmp(applied[i], migs->v[i].checksum)) {
                        err = sbx_seterr(errstr, errstr_size, SBX_ERR_CONFLICT,
                                         "%s was changed after it was "
                                         "applied; add a new migration "
                                         "instead of editing an applied one",
                                         migs->v[i].path);
                        goto done;
                }

        /* Check pass: everything pending, in one transaction, rolled back. */
        err = exec_ok(pg, "BEGIN", "begin", errstr, errstr_size);
        for (i = 0; !err && i < migs->n; i++)
                if (!applied[i])
                        err = run_sql(pg, &migs->v[i], errstr, errstr_size);
        exec_ok(pg, "ROLLBACK", "rollback", NULL, 0);
        if (err)
                goto done;

        for (i = 0; i < migs->n; i++) {
                const char *params[3];
                char vbuf[16];
                PGresult *r;

                if (applied[i])
                        continue;
                report(sbx_fmt(line, sizeof(line), "%s%s",
                               dry_run ? "would apply " : "applying ",
                               migs->v[i].name),
                       opaque);
                napplied++;
                if (dry_run)
                        continue;
                err = exec_ok(pg, "BEGIN", "begin", errstr, errstr_size);
                if (!err)
                        err = run_sql(pg, &migs->v[i], errstr, errstr_size);
                if (!err) {
                        params[0] = sbx_fmt(vbuf, sizeof(vbuf), "%d",
                                            migs->v[i].version);
                        params[1] = migs->v[i].name;
                        params[2] = migs->v[i].checksum;
                        r = PQexecParams(pg,
                                         "INSERT INTO sbx_migrations (version, "
                                         "name, checksum) VALUES ($1, $2, $3)",
                                         3, NULL, params, NULL, NULL, 0);
                        if (PQresultStatus(r) != PGRES_COMMAND_OK)
                                err = sbx_seterr(errstr, errstr_size,
                                                 SBX_ERR_PG,
                                                 "recording %s: %s",
                                                 migs->v[i].name,
                                                 PQresultErrorMessage(r));
                        PQclear(r);
                }
                if (!err)
                        err = exec_ok(pg, "COMMIT", "commit", errstr,
                                      errstr_size);
                if (err) {
                        exec_ok(pg, "ROLLBACK", "rollback", NULL, 0);
                        goto done;
                }
        }
        if (ret_applied)
                *ret_applied = napplied;
done:
        if (locked)
                exec_ok(pg,
                        "SELECT pg_advisory_unlock(" SBX_STR(
                            MIGRATE_LOCK_KEY) ")",
                        "unlock", NULL, 0);
        if (applied) {
                for (i = 0; i < migs->n; i++)
                        free(applied[i]);
                free(applied);
        }
        PQfinish(pg);
        sbx_migrations_destroy(migs);
        return err;
}
