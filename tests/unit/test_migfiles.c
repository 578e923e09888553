/* SPDX-License-Identifier: Apache-2.0 */
/* Tests of migration file loading: names, order, gaps, line mapping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "pg/migfiles.h"

static char dir[64];

static void put(const char *name, const char *text)
{
        char p[256];
        FILE *f;
        snprintf(p, sizeof(p), "%s/%s", dir, name);
        f = fopen(p, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

static void rm(const char *name)
{
        char p[256];
        snprintf(p, sizeof(p), "%s/%s", dir, name);
        unlink(p);
}

static int setup(void **state)
{
        (void)state;
        strcpy(dir, "/tmp/sbx-mig-XXXXXX");
        return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
        char cmd[128];
        (void)state;
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        return system(cmd) == 0 ? 0 : -1;
}

static void test_project_migrations_load_in_order(void **state)
{
        sbx_migrations_t *m = NULL;
        char err[512];
        size_t i;
        (void)state;
        assert_int_equal(sbx_migrations_load(SBX_SOURCE_ROOT "/projections",
                                             &m, err, sizeof(err)),
                         SBX_OK);
        assert_true(m->n >= 1);
        for (i = 0; i < m->n; i++)
                assert_int_equal(m->v[i].version, (int)i + 1);
        assert_non_null(strstr(m->v[0].sql, "sandbox_event"));
        sbx_migrations_destroy(m);
}

static void test_order_gaps_names(void **state)
{
        sbx_migrations_t *m = NULL;
        char err[512];
        (void)state;
        put("0002_b.sql", "select 2;");
        put("0001_a.sql", "select 1;");
        put("README.md", "ignored");
        assert_int_equal(sbx_migrations_load(dir, &m, err, sizeof(err)),
                         SBX_OK);
        assert_int_equal(m->n, 2);
        assert_string_equal(m->v[0].name, "0001_a.sql");
        assert_string_equal(m->v[1].name, "0002_b.sql");
        assert_string_not_equal(m->v[0].checksum, m->v[1].checksum);
        sbx_migrations_destroy(m);

        put("0004_d.sql", "select 4;");
        assert_int_equal(sbx_migrations_load(dir, &m, err, sizeof(err)),
                         SBX_ERR_INVALID);
        assert_non_null(strstr(err, "0004_d.sql: expected migration number 0003"));
        rm("0004_d.sql");

        put("3_bad.sql", "select 3;");
        assert_int_equal(sbx_migrations_load(dir, &m, err, sizeof(err)),
                         SBX_ERR_INVALID);
        assert_non_null(strstr(err, "3_bad.sql: migration files are named"));
        rm("3_bad.sql");

        put("0003_Upper.sql", "select 3;");
        assert_int_equal(sbx_migrations_load(dir, &m, err, sizeof(err)),
                         SBX_ERR_INVALID);
        rm("0003_Upper.sql");

        put("0003_empty.sql", "  \n\n");
        assert_int_equal(sbx_migrations_load(dir, &m, err, sizeof(err)),
                         SBX_ERR_INVALID);
        assert_non_null(strstr(err, "empty migration"));
        rm("0003_empty.sql");

        put("0002_dup.sql", "select 2;");
        assert_int_equal(sbx_migrations_load(dir, &m, err, sizeof(err)),
                         SBX_ERR_INVALID);
        rm("0002_dup.sql");
}

static void test_line_of_position(void **state)
{
        (void)state;
        assert_int_equal(sbx_text_line_of("abc", 1), 1);
        assert_int_equal(sbx_text_line_of("a\nb\nc", 3), 2);
        assert_int_equal(sbx_text_line_of("a\nb\nc", 5), 3);
        /* PostgreSQL counts characters, not bytes. */
        assert_int_equal(sbx_text_line_of("-- \xc3\xa9\xc3\xa9\nx", 7), 2);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_project_migrations_load_in_order),
            cmocka_unit_test_setup_teardown(test_order_gaps_names, setup,
                                            teardown),
            cmocka_unit_test(test_line_of_position),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
