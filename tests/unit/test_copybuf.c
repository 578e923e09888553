/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of COPY text rows (src/pg/copybuf.c): no value can end a column
 * or a row early, NULL is \N, times are UTC and clamped to what
 * PostgreSQL takes, and JSON never carries the \u0000 that jsonb refuses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pg/copybuf.h"

static void expect_text(sbx_copybuf_t *b, const char *want)
{
        char *got = strndup(b->buf, b->len);
        assert_string_equal(got, want);
        free(got);
        sbx_copybuf_reset(b);
}

static void test_separators_in_values_are_escaped(void **state)
{
        sbx_copybuf_t b = {0};
        (void)state;
        sbx_copy_str(&b, "a\tb\nc\\d\re");
        sbx_copy_str(&b, NULL);
        sbx_copy_str(&b, "");
        sbx_copy_end(&b);
        expect_text(&b, "a\\tb\\nc\\\\d\\re\t\\N\t\n");
        sbx_copybuf_free(&b);
}

static void test_numbers_booleans_and_rows(void **state)
{
        sbx_copybuf_t b = {0};
        (void)state;
        sbx_copy_int(&b, -42);
        sbx_copy_num(&b, 0.1);
        sbx_copy_bool(&b, 1);
        sbx_copy_end(&b);
        sbx_copy_bool(&b, 0);
        sbx_copy_end(&b);
        assert_int_equal(b.rows, 2);
        expect_text(&b, "-42\t0.10000000000000001\tt\nf\n");
        sbx_copybuf_free(&b);
}

static void test_times_are_utc_and_clamped(void **state)
{
        sbx_copybuf_t b = {0};
        (void)state;
        sbx_copy_time(&b, 1700000000123456LL);
        sbx_copy_time(&b, 0);
        sbx_copy_time(&b, -5);
        sbx_copy_time(&b, INT64_MAX);
        sbx_copy_end(&b);
        expect_text(&b,
                    "2023-11-14 22:13:20.123456+00\t"
                    "1970-01-01 00:00:00.000000+00\t"
                    "1970-01-01 00:00:00.000000+00\t"
                    "9999-12-31 23:59:59.999999+00\n");
        sbx_copybuf_free(&b);
}

static void test_json_has_no_nul_escape(void **state)
{
        sbx_copybuf_t b = {0};
        json_t *j       = json_object();
        (void)state;
        json_object_set_new(j, "a", json_stringn("x\0y", 3));
        json_object_set_new(j, "b", json_string("\\u0000 stays"));
        sbx_copy_json(&b, j);
        sbx_copy_json(&b, NULL);
        sbx_copy_end(&b);
        /* The backslash of "\\u0000" is itself escaped for COPY. */
        expect_text(&b,
                    "{\"a\":\"x\\\\ufffdy\",\"b\":\"\\\\\\\\u0000 "
                    "stays\"}\t\\N\n");
        json_decref(j);
        sbx_copybuf_free(&b);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_separators_in_values_are_escaped),
            cmocka_unit_test(test_numbers_booleans_and_rows),
            cmocka_unit_test(test_times_are_utc_and_clamped),
            cmocka_unit_test(test_json_has_no_nul_escape),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
