/* SPDX-License-Identifier: Apache-2.0 */
/* Tests of the "key = value" parser: accepted forms and line-exact errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/kv.h"

typedef struct seen_s {
        int n;
        char keys[8][64];
        char vals[8][64];
        int lines[8];
} seen_t;

static sbx_err_t collect(const char *key, const char *value, int line,
                         void *opaque, char *errstr, size_t errstr_size)
{
        seen_t *s = opaque;
        if (!strcmp(key, "reject")) {
                snprintf(errstr, errstr_size, "rejected '%s'", value);
                return SBX_ERR_INVALID;
        }
        strcpy(s->keys[s->n], key);
        strcpy(s->vals[s->n], value);
        s->lines[s->n] = line;
        s->n++;
        return SBX_OK;
}

static void test_parses_entries_comments_blanks(void **state)
{
        seen_t s = {0};
        char err[256];
        (void)state;
        assert_int_equal(sbx_kv_parse("f", "# comment\n\n  a = 1 \nb.c-d_e=x = y\n",
                                      collect, &s, err, sizeof(err)),
                         SBX_OK);
        assert_int_equal(s.n, 2);
        assert_string_equal(s.keys[0], "a");
        assert_string_equal(s.vals[0], "1");
        assert_int_equal(s.lines[0], 3);
        assert_string_equal(s.keys[1], "b.c-d_e");
        assert_string_equal(s.vals[1], "x = y");
        assert_int_equal(s.lines[1], 4);
}

static void test_missing_equals_names_line(void **state)
{
        seen_t s = {0};
        char err[256];
        (void)state;
        assert_int_equal(sbx_kv_parse("topics/x.topic", "a = 1\n\njust words\nb = 2\n",
                                      collect, &s, err, sizeof(err)),
                         SBX_ERR_INVALID);
        assert_string_equal(err, "topics/x.topic:3: expected 'key = value'");
        assert_int_equal(s.n, 1); /* nothing after the bad line */
}

static void test_bad_key(void **state)
{
        seen_t s = {0};
        char err[256];
        (void)state;
        assert_int_equal(sbx_kv_parse("f", "a b = 1\n", collect, &s, err,
                                      sizeof(err)),
                         SBX_ERR_INVALID);
        assert_non_null(strstr(err, "f:1: bad key 'a b'"));
        assert_int_equal(sbx_kv_parse("f", "= 1\n", collect, &s, err,
                                      sizeof(err)),
                         SBX_ERR_INVALID);
}

static void test_callback_error_gets_location(void **state)
{
        seen_t s = {0};
        char err[256];
        (void)state;
        assert_int_equal(sbx_kv_parse("cfg", "a=1\nreject = me\n", collect, &s,
                                      err, sizeof(err)),
                         SBX_ERR_INVALID);
        assert_string_equal(err, "cfg:2: rejected 'me'");
}

static void test_int_bounds(void **state)
{
        long long v = 0;
        (void)state;
        assert_int_equal(sbx_kv_int("12", 1, 100, &v), SBX_OK);
        assert_int_equal(v, 12);
        assert_int_equal(sbx_kv_int("0", 1, 100, &v), SBX_ERR_INVALID);
        assert_int_equal(sbx_kv_int("101", 1, 100, &v), SBX_ERR_INVALID);
        assert_int_equal(sbx_kv_int("1x", 1, 100, &v), SBX_ERR_INVALID);
        assert_int_equal(sbx_kv_int("", 1, 100, &v), SBX_ERR_INVALID);
        assert_int_equal(sbx_kv_int("99999999999999999999", 1, 100, &v),
                         SBX_ERR_INVALID);
        assert_int_equal(v, 12); /* untouched on error */
}

static void test_file_with_nul_is_rejected(void **state)
{
        char path[] = "/tmp/sbx-kv-XXXXXX", err[256];
        seen_t s = {0};
        int fd = mkstemp(path);
        (void)state;
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "a = 1\n\0b = 2\n", 13), 13);
        close(fd);
        assert_int_equal(sbx_kv_parse_file(path, collect, &s, err, sizeof(err)),
                         SBX_ERR_INVALID);
        assert_non_null(strstr(err, "NUL"));
        unlink(path);
        assert_int_equal(sbx_kv_parse_file(path, collect, &s, err, sizeof(err)),
                         SBX_ERR_NOENT);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_parses_entries_comments_blanks),
            cmocka_unit_test(test_missing_equals_names_line),
            cmocka_unit_test(test_bad_key),
            cmocka_unit_test(test_callback_error_gets_location),
            cmocka_unit_test(test_int_bounds),
            cmocka_unit_test(test_file_with_nul_is_rejected),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
