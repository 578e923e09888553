/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `sbx topics apply` against the real broker: it creates what is missing,
 * is idempotent, puts back a config changed by hand, adds partitions,
 * refuses to shrink them, and a malformed spec changes nothing. The
 * broker is inspected and disturbed here with librdkafka directly, as an
 * operator's tool would.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <librdkafka/rdkafka.h>

#include "core/util.h"
#include "itest.h"
#include "kafka/topics.h"

static sbx_config_t *cfg;
static rd_kafka_t *rk;

static void count_line(const char *line, void *opaque)
{
        (void)line;
        (*(int *)opaque)++;
}

static sbx_err_t apply_dir(const char *dir, int *ret_n, char *err, size_t es)
{
        sbx_topicspecs_t *specs = NULL;
        int lines = 0;
        sbx_err_t e = sbx_topicspecs_load_dir(dir, &specs, err, es);
        if (!e)
                e = sbx_topics_apply(cfg, specs, 0, count_line, &lines, ret_n,
                                     err, es);
        if (!e)
                assert_int_equal(lines, *ret_n);
        sbx_topicspecs_destroy(specs);
        return e;
}

/* Partition count on the broker, -1 if the topic does not exist. */
static int partitions_of(const char *topic)
{
        const struct rd_kafka_metadata *md;
        int i, n = -1;
        assert_int_equal(rd_kafka_metadata(rk, 1, NULL, &md, 10000), 0);
        for (i = 0; i < md->topic_cnt; i++)
                if (!strcmp(md->topics[i].topic, topic) && !md->topics[i].err)
                        n = md->topics[i].partition_cnt;
        rd_kafka_metadata_destroy(md);
        return n;
}

static rd_kafka_event_t *admin_wait(rd_kafka_queue_t *q)
{
        rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 30000);
        assert_non_null(ev);
        assert_int_equal(rd_kafka_event_error(ev), 0);
        return ev;
}

static char *config_of(const char *topic, const char *name)
{
        rd_kafka_ConfigResource_t *res =
            rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic);
        rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
        rd_kafka_event_t *ev;
        const rd_kafka_ConfigResource_t **rres;
        const rd_kafka_ConfigEntry_t **ents;
        size_t n, ne, i;
        char *v = NULL;

        rd_kafka_DescribeConfigs(rk, &res, 1, NULL, q);
        ev = admin_wait(q);
        rres = rd_kafka_DescribeConfigs_result_resources(
            rd_kafka_event_DescribeConfigs_result(ev), &n);
        assert_int_equal(n, 1);
        ents = rd_kafka_ConfigResource_configs(rres[0], &ne);
        for (i = 0; i < ne; i++)
                if (!strcmp(rd_kafka_ConfigEntry_name(ents[i]), name))
                        v = sbx_strdup(rd_kafka_ConfigEntry_value(ents[i]));
        rd_kafka_event_destroy(ev);
        rd_kafka_ConfigResource_destroy(res);
        rd_kafka_queue_destroy(q);
        return v;
}

/* An operator changes configs by hand (a full, non-incremental set). */
static void set_by_hand(const char *topic, const char *n1, const char *v1,
                        const char *n2, const char *v2)
{
        rd_kafka_ConfigResource_t *res =
            rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic);
        rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
        rd_kafka_ConfigResource_set_config(res, n1, v1);
        rd_kafka_ConfigResource_set_config(res, n2, v2);
        rd_kafka_AlterConfigs(rk, &res, 1, NULL, q);
        rd_kafka_event_destroy(admin_wait(q));
        rd_kafka_ConfigResource_destroy(res);
        rd_kafka_queue_destroy(q);
}

static void delete_topic(const char *topic)
{
        rd_kafka_DeleteTopic_t *dt = rd_kafka_DeleteTopic_new(topic);
        rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
        rd_kafka_DeleteTopics(rk, &dt, 1, NULL, q);
        rd_kafka_event_destroy(admin_wait(q));
        rd_kafka_DeleteTopic_destroy(dt);
        rd_kafka_queue_destroy(q);
}

static int setup(void **state)
{
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        char err[256];
        (void)state;
        cfg = itest_config();
        rd_kafka_conf_set(conf, "bootstrap.servers", cfg->brokers, err,
                          sizeof(err));
        rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
        return rk ? 0 : -1;
}

static int teardown(void **state)
{
        (void)state;
        rd_kafka_destroy(rk);
        sbx_config_destroy(cfg);
        return 0;
}

static void wait_partitions(const char *topic, int want)
{
        int64_t deadline = sbx_mono_us() + 10 * 1000000LL;
        while (partitions_of(topic) != want && sbx_mono_us() < deadline)
                usleep(100000);
        assert_int_equal(partitions_of(topic), want);
}

static void test_converges_and_is_idempotent(void **state)
{
        const char *dir = itest_tmpdir();
        char topic[128], spec[512], err[512], *v;
        int n = -1;
        (void)state;

        snprintf(topic, sizeof(topic), "sbx.test.apply-%ld", (long)getpid());
        snprintf(spec, sizeof(spec),
                 "name = %s\npartitions = 2\nconfig.retention.ms = 600000\n"
                 "config.cleanup.policy = delete\n",
                 topic);
        itest_write(dir, "a.topic", spec);

        assert_int_equal(apply_dir(dir, &n, err, sizeof(err)), SBX_OK);
        assert_int_equal(n, 1); /* created */
        wait_partitions(topic, 2);
        v = config_of(topic, "retention.ms");
        assert_string_equal(v, "600000");
        free(v);
        assert_int_equal(apply_dir(dir, &n, err, sizeof(err)), SBX_OK);
        assert_int_equal(n, 0); /* nothing to do the second time */

        /* Drift: an operator changes one config and adds another. */
        set_by_hand(topic, "retention.ms", "1000", "segment.ms", "7200000");
        assert_int_equal(apply_dir(dir, &n, err, sizeof(err)), SBX_OK);
        assert_int_equal(n, 2);
        v = config_of(topic, "retention.ms");
        assert_string_equal(v, "600000");
        free(v);
        v = config_of(topic, "segment.ms");
        assert_string_equal(v, "604800000"); /* back to the default */
        free(v);
        assert_int_equal(apply_dir(dir, &n, err, sizeof(err)), SBX_OK);
        assert_int_equal(n, 0);

        /* More partitions in the file: added. */
        snprintf(spec, sizeof(spec),
                 "name = %s\npartitions = 4\nconfig.retention.ms = 600000\n"
                 "config.cleanup.policy = delete\n",
                 topic);
        itest_write(dir, "a.topic", spec);
        assert_int_equal(apply_dir(dir, &n, err, sizeof(err)), SBX_OK);
        assert_int_equal(n, 1);
        wait_partitions(topic, 4);

        /* Fewer partitions and a new topic in one set: refused whole. */
        snprintf(spec, sizeof(spec),
                 "name = %s\npartitions = 1\nconfig.retention.ms = 600000\n"
                 "config.cleanup.policy = delete\n",
                 topic);
        itest_write(dir, "a.topic", spec);
        snprintf(spec, sizeof(spec), "name = %s-b\npartitions = 1\n", topic);
        itest_write(dir, "b.topic", spec);
        assert_int_equal(apply_dir(dir, &n, err, sizeof(err)),
                         SBX_ERR_INVALID);
        assert_non_null(strstr(err, "cannot remove partitions"));
        snprintf(spec, sizeof(spec), "%s-b", topic);
        assert_int_equal(partitions_of(spec), -1); /* nothing changed */
        assert_int_equal(partitions_of(topic), 4);

        /* A malformed spec stops before the broker is touched. */
        itest_write(dir, "a.topic", "name = x\npartitions = 1\nconfig.bogus = 1\n");
        assert_int_equal(apply_dir(dir, &n, err, sizeof(err)),
                         SBX_ERR_INVALID);
        assert_non_null(strstr(err, "a.topic:3: unknown topic config"));
        assert_int_equal(partitions_of(spec), -1);

        delete_topic(topic);
}

static void test_project_topics_converge(void **state)
{
        char err[512];
        int n = -1;
        (void)state;
        assert_int_equal(apply_dir(cfg->topics_dir, &n, err, sizeof(err)),
                         SBX_OK);
        assert_int_equal(apply_dir(cfg->topics_dir, &n, err, sizeof(err)),
                         SBX_OK);
        assert_int_equal(n, 0);
        assert_int_equal(partitions_of("sbx.lifecycle.v1"), 12);
}

static void test_unreachable_broker_is_an_error(void **state)
{
        sbx_config_t *saved = cfg;
        sbx_config_t *bad = itest_config();
        char err[512];
        int n;
        (void)state;
        free(bad->brokers);
        bad->brokers = sbx_strdup("127.0.0.1:1");
        bad->nkafka_props = 0;
        cfg = bad;
        assert_int_equal(apply_dir(saved->topics_dir, &n, err, sizeof(err)),
                         SBX_ERR_KAFKA);
        assert_non_null(strstr(err, "127.0.0.1:1"));
        cfg = saved;
        sbx_config_destroy(bad);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_converges_and_is_idempotent),
            cmocka_unit_test(test_project_topics_converge),
            cmocka_unit_test(test_unreachable_broker_is_an_error),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
