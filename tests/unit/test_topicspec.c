/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of topic spec parsing: the real topics/ directory parses into the
 * topics of DESIGN.md §3, and every kind of mistake is caught with its
 * file and line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/topicspec.h"

static const sbx_topicspec_t *find(const sbx_topicspecs_t *s, const char *n)
{
        size_t i;
        for (i = 0; i < s->n; i++)
                if (!strcmp(s->specs[i]->name, n))
                        return s->specs[i];
        return NULL;
}

static void test_project_topics_match_design(void **state)
{
        sbx_topicspecs_t *s = NULL;
        const sbx_topicspec_t *t;
        char err[512];
        (void)state;

        assert_int_equal(sbx_topicspecs_load_dir(SBX_SOURCE_ROOT "/topics", &s,
                                                 err, sizeof(err)),
                         SBX_OK);
        assert_int_equal(s->n, 5);
        t = find(s, "sbx.lifecycle.v1");
        assert_non_null(t);
        assert_int_equal(t->partitions, 12);
        assert_string_equal(sbx_topicspec_config(t, "retention.ms"), "-1");
        assert_string_equal(sbx_topicspec_config(t, "cleanup.policy"), "delete");
        t = find(s, "sbx.nodes.v1");
        assert_non_null(t);
        assert_string_equal(sbx_topicspec_config(t, "cleanup.policy"),
                            "compact");
        t = find(s, "sbx.requests.v1");
        assert_string_equal(sbx_topicspec_config(t, "retention.ms"),
                            "604800000"); /* 7 d */
        t = find(s, "sbx.exec-output.v1");
        assert_string_equal(sbx_topicspec_config(t, "retention.ms"),
                            "259200000"); /* 3 d */
        t = find(s, "sbx.dlq.v1");
        assert_string_equal(sbx_topicspec_config(t, "retention.ms"),
                            "2592000000"); /* 30 d */
        assert_null(sbx_topicspec_config(t, "segment.ms"));
        sbx_topicspecs_destroy(s);
}

static void expect_error(const char *text, const char *want)
{
        sbx_topicspec_t *spec = NULL;
        char err[512] = "";
        assert_int_equal(sbx_topicspec_parse("t.topic", text, &spec, err,
                                             sizeof(err)),
                         SBX_ERR_INVALID);
        assert_null(spec);
        if (!strstr(err, want))
                fail_msg("error '%s' lacks '%s'", err, want);
}

static void test_errors_name_file_line_reason(void **state)
{
        (void)state;
        expect_error("name = a\npartitions = 0\n", "t.topic:2: partitions");
        expect_error("name = a\npartitions = many\n", "t.topic:2: partitions");
        expect_error("name = bad name!\n", "t.topic:1: 'bad name!' is not a valid");
        expect_error("name = a\npartitions = 1\nconfig.retension.ms = 5\n",
                     "t.topic:3: unknown topic config 'retension.ms'");
        expect_error("name = a\nconfig.retention.ms = soon\n",
                     "t.topic:2: config retention.ms: 'soon' is not a number");
        expect_error("name = a\nconfig.cleanup.policy = shred\n",
                     "t.topic:2: config cleanup.policy");
        expect_error("name = a\npartitions = 1\nconfig.retention.ms = 1\n"
                     "config.retention.ms = 2\n",
                     "t.topic:4: config retention.ms set twice");
        expect_error("name = a\nname = b\n", "t.topic:2: name set twice");
        expect_error("name = a\nreplicas = 3\n", "t.topic:2: unknown key 'replicas'");
        expect_error("partitions = 3\n", "t.topic: no 'name ='");
        expect_error("name = a\n", "t.topic: no 'partitions ='");
}

static void write_file(const char *dir, const char *name, const char *text)
{
        char path[512];
        FILE *f;
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

static void test_dir_rejects_duplicates_and_reports_file(void **state)
{
        char dir[] = "/tmp/sbx-topics-XXXXXX", err[512];
        sbx_topicspecs_t *s = NULL;
        (void)state;
        assert_non_null(mkdtemp(dir));
        write_file(dir, "a.topic", "name = x\npartitions = 1\n");
        write_file(dir, "b.topic", "name = x\npartitions = 2\n");
        write_file(dir, "notes.txt", "not a spec\n");
        assert_int_equal(sbx_topicspecs_load_dir(dir, &s, err, sizeof(err)),
                         SBX_ERR_INVALID);
        assert_null(s);
        assert_non_null(strstr(err, "b.topic: topic x is already declared in"));
        write_file(dir, "b.topic", "name = y\npartitions = 2\n oops\n");
        assert_int_equal(sbx_topicspecs_load_dir(dir, &s, err, sizeof(err)),
                         SBX_ERR_INVALID);
        assert_non_null(strstr(err, "b.topic:3: expected 'key = value'"));
        write_file(dir, "b.topic", "name = y\npartitions = 2\n");
        assert_int_equal(sbx_topicspecs_load_dir(dir, &s, err, sizeof(err)),
                         SBX_OK);
        assert_int_equal(s->n, 2);
        assert_string_equal(s->specs[0]->name, "x"); /* sorted by file */
        sbx_topicspecs_destroy(s);
        {
                char p[512];
                snprintf(p, sizeof(p), "%s/a.topic", dir);
                unlink(p);
                snprintf(p, sizeof(p), "%s/b.topic", dir);
                unlink(p);
                snprintf(p, sizeof(p), "%s/notes.txt", dir);
                unlink(p);
        }
        assert_int_equal(sbx_topicspecs_load_dir(dir, &s, err, sizeof(err)),
                         SBX_ERR_NOENT);
        rmdir(dir);
}

static void test_topic_names(void **state)
{
        (void)state;
        assert_true(sbx_topic_name_valid("sbx.exec-output.v1"));
        assert_false(sbx_topic_name_valid(""));
        assert_false(sbx_topic_name_valid(".."));
        assert_false(sbx_topic_name_valid("a/b"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_project_topics_match_design),
            cmocka_unit_test(test_errors_name_file_line_reason),
            cmocka_unit_test(test_dir_rejects_duplicates_and_reports_file),
            cmocka_unit_test(test_topic_names),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
