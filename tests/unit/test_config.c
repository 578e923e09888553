/* SPDX-License-Identifier: Apache-2.0 */
/* Tests of config loading: defaults, file, environment precedence, errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/config.h"

static char *write_tmp(const char *text)
{
        static char path[64];
        int fd;
        strcpy(path, "/tmp/sbx-conf-XXXXXX");
        fd = mkstemp(path);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
        return path;
}

static int setup(void **state)
{
        (void)state;
        unsetenv("SBX_CONFIG");
        unsetenv("SBX_BROKERS");
        unsetenv("SBX_PG");
        unsetenv("SBX_TOPICS_DIR");
        return 0;
}

static void test_defaults_point_at_local_stack(void **state)
{
        sbx_config_t *c = NULL;
        char err[256];
        (void)state;
        assert_int_equal(sbx_config_load(NULL, &c, err, sizeof(err)), SBX_OK);
        assert_string_equal(c->brokers, "127.0.0.1:19092");
        assert_non_null(strstr(c->pg, "port=15432"));
        assert_non_null(strstr(c->topics_dir, "/topics"));
        assert_int_equal(c->replication_factor, -1);
        sbx_config_destroy(c);
}

static void test_file_then_env(void **state)
{
        sbx_config_t *c = NULL;
        char err[256];
        char *path = write_tmp("brokers = k1:9092,k2:9092\n"
                               "replication.factor = 3\n"
                               "kafka.debug = broker\n");
        (void)state;
        assert_int_equal(sbx_config_load(path, &c, err, sizeof(err)), SBX_OK);
        assert_string_equal(c->brokers, "k1:9092,k2:9092");
        assert_int_equal(c->replication_factor, 3);
        assert_int_equal(c->nkafka_props, 1);
        assert_string_equal(c->kafka_props[0].name, "debug");
        sbx_config_destroy(c);

        setenv("SBX_BROKERS", "env:1", 1);
        setenv("SBX_CONFIG", path, 1);
        assert_int_equal(sbx_config_load(NULL, &c, err, sizeof(err)), SBX_OK);
        assert_string_equal(c->brokers, "env:1"); /* env wins over file */
        assert_int_equal(c->replication_factor, 3);
        sbx_config_destroy(c);
        unlink(path);
}

static void test_bad_config_is_located(void **state)
{
        sbx_config_t *c = NULL;
        char err[256];
        char *path = write_tmp("brokers = a:1\nbrokerz = b:2\n");
        (void)state;
        assert_int_equal(sbx_config_load(path, &c, err, sizeof(err)),
                         SBX_ERR_INVALID);
        assert_null(c);
        assert_non_null(strstr(err, ":2: unknown config key 'brokerz'"));
        unlink(path);
        path = write_tmp("replication.factor = 0\n");
        assert_int_equal(sbx_config_load(path, &c, err, sizeof(err)),
                         SBX_ERR_INVALID);
        unlink(path);
        assert_int_equal(sbx_config_load("/nonexistent/sbx.conf", &c, err,
                                         sizeof(err)),
                         SBX_ERR_NOENT);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup(test_defaults_point_at_local_stack, setup),
            cmocka_unit_test_setup(test_file_then_env, setup),
            cmocka_unit_test_setup(test_bad_config_is_located, setup),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
