/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `sbx db migrate` against the real PostgreSQL of the local stack, each
 * test in a database of its own: migrations apply once, in order, and are
 * recorded; a second run applies nothing; a broken file is reported with
 * file and line and changes nothing; an edited applied file is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "core/util.h"
#include "itest.h"
#include "pg/migrate.h"

static sbx_config_t *cfg;
static char dbname[64], conninfo[512];

static PGconn *connect_to(const char *ci)
{
        PGconn *pg = PQconnectdb(ci);
        if (PQstatus(pg) != CONNECTION_OK)
                fail_msg("PostgreSQL unreachable (%s): %s", ci,
                         PQerrorMessage(pg));
        return pg;
}

static void exec(PGconn *pg, const char *sql)
{
        PGresult *r = PQexec(pg, sql);
        if (PQresultStatus(r) != PGRES_COMMAND_OK &&
            PQresultStatus(r) != PGRES_TUPLES_OK)
                fail_msg("%s: %s", sql, PQresultErrorMessage(r));
        PQclear(r);
}

static long long scalar(const char *sql)
{
        PGconn *pg = connect_to(conninfo);
        PGresult *r = PQexec(pg, sql);
        long long v;
        if (PQresultStatus(r) != PGRES_TUPLES_OK)
                fail_msg("%s: %s", sql, PQresultErrorMessage(r));
        v = atoll(PQgetvalue(r, 0, 0));
        PQclear(r);
        PQfinish(pg);
        return v;
}

static int setup(void **state)
{
        PGconn *pg;
        char sql[128];
        (void)state;
        cfg = itest_config();
        pg = connect_to(cfg->pg);
        snprintf(dbname, sizeof(dbname), "sbx_test_%ld_%lld", (long)getpid(),
                 (long long)(sbx_now_us() % 1000000000));
        snprintf(sql, sizeof(sql), "CREATE DATABASE %s", dbname);
        exec(pg, sql);
        PQfinish(pg);
        snprintf(conninfo, sizeof(conninfo), "%s dbname=%s", cfg->pg, dbname);
        return 0;
}

static int teardown(void **state)
{
        PGconn *pg = connect_to(cfg->pg);
        char sql[128];
        (void)state;
        snprintf(sql, sizeof(sql), "DROP DATABASE %s WITH (FORCE)", dbname);
        exec(pg, sql);
        PQfinish(pg);
        sbx_config_destroy(cfg);
        return 0;
}

static void count_line(const char *line, void *opaque)
{
        (void)line;
        (*(int *)opaque)++;
}

static void test_project_migrations_apply_once(void **state)
{
        char err[512];
        int n = -1, lines = 0;
        (void)state;
        assert_int_equal(sbx_migrate(conninfo, cfg->projections_dir, 0,
                                     count_line, &lines, &n, err, sizeof(err)),
                         SBX_OK);
        assert_true(n >= 1);
        assert_int_equal(lines, n);
        assert_int_equal(scalar("SELECT count(*) FROM sbx_migrations"), n);
        assert_int_equal(scalar("SELECT count(*) FROM sandbox_event"), 0);
        assert_int_equal(sbx_migrate(conninfo, cfg->projections_dir, 0,
                                     count_line, &lines, &n, err, sizeof(err)),
                         SBX_OK);
        assert_int_equal(n, 0);
        assert_int_equal(scalar("SELECT max(version) FROM sbx_migrations"),
                         scalar("SELECT count(*) FROM sbx_migrations"));
}

static void test_broken_file_changes_nothing(void **state)
{
        const char *dir = itest_tmpdir();
        char err[512];
        int n = -1, lines = 0;
        (void)state;
        itest_write(dir, "0001_a.sql", "CREATE TABLE a (x int);\n");
        itest_write(dir, "0002_b.sql",
                    "CREATE TABLE b (x int);\n"
                    "-- a comment\n"
                    "CREATE TABEL c (x int);\n");
        assert_int_equal(sbx_migrate(conninfo, dir, 0, count_line, &lines, &n,
                                     err, sizeof(err)),
                         SBX_ERR_PG);
        if (!strstr(err, "0002_b.sql:3: syntax error"))
                fail_msg("unexpected error: %s", err);
        /* Neither 0001 nor the valid first statement of 0002 is there. */
        assert_int_equal(scalar("SELECT count(*) FROM sbx_migrations"), 0);
        assert_int_equal(scalar("SELECT count(*) FROM pg_tables WHERE "
                                "tablename IN ('a', 'b')"),
                         0);

        itest_write(dir, "0002_b.sql", "CREATE TABLE b (x int);\n");
        assert_int_equal(sbx_migrate(conninfo, dir, 0, count_line, &lines, &n,
                                     err, sizeof(err)),
                         SBX_OK);
        assert_int_equal(n, 2);

        /* An applied file edited afterwards is refused, not re-run. */
        itest_write(dir, "0002_b.sql", "CREATE TABLE b (x int, y int);\n");
        assert_int_equal(sbx_migrate(conninfo, dir, 0, count_line, &lines, &n,
                                     err, sizeof(err)),
                         SBX_ERR_CONFLICT);
        assert_non_null(strstr(err, "0002_b.sql was changed after it was applied"));
}

static void test_dry_run_applies_nothing(void **state)
{
        const char *dir = itest_tmpdir();
        char err[512];
        int n = -1, lines = 0;
        (void)state;
        itest_write(dir, "0001_a.sql", "CREATE TABLE dry (x int);\n");
        assert_int_equal(sbx_migrate(conninfo, dir, 1, count_line, &lines, &n,
                                     err, sizeof(err)),
                         SBX_OK);
        assert_int_equal(n, 1);
        assert_int_equal(scalar("SELECT count(*) FROM pg_tables WHERE "
                                "tablename = 'dry'"),
                         0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_project_migrations_apply_once,
                                            setup, teardown),
            cmocka_unit_test_setup_teardown(test_broken_file_changes_nothing,
                                            setup, teardown),
            cmocka_unit_test_setup_teardown(test_dry_run_applies_nothing, setup,
                                            teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
