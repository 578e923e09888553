/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An Avro-free byte message through the real local broker: produced by an
 * idempotent acks=all producer, consumed by a group consumer, with key,
 * value (including NUL bytes) and headers intact, and the offset the
 * producer was told is the one the consumer sees.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/util.h"
#include "itest.h"
#include "kafka/kclient.h"
#include "kafka/topics.h"

static void ignore(const char *line, void *opaque)
{
        (void)line;
        (void)opaque;
}

static void test_bytes_roundtrip(void **state)
{
        sbx_config_t *c = itest_config();
        sbx_topicspecs_t *specs = NULL;
        sbx_kproducer_t *p;
        sbx_kconsumer_t *k;
        const char *dir = itest_tmpdir();
        const char *key = itest_unique("key");
        const unsigned char value[] = {0xc3, 0x01, 0x00, 0xff, 'h', 'i', 0x00};
        const char *topics[] = {"sbx.test.roundtrip", NULL};
        sbx_kheader_t hdr[] = {{"ce_type", "sbx.test", 8},
                               {"traceparent", "00-x-y-01", 9}};
        char err[512];
        int32_t part = -1;
        int64_t off = -1, deadline;
        int found = 0;
        (void)state;

        itest_write(dir, "t.topic", "name = sbx.test.roundtrip\npartitions = 3\n"
                                    "config.retention.ms = 3600000\n");
        assert_int_equal(sbx_topicspecs_load_dir(dir, &specs, err, sizeof(err)),
                         SBX_OK);
        if (sbx_topics_apply(c, specs, 0, ignore, NULL, NULL, err, sizeof(err)))
                fail_msg("broker %s unreachable? %s", c->brokers, err);

        p = sbx_kproducer_new(c, err, sizeof(err));
        assert_non_null(p);
        assert_true(sbx_kproducer_idempotent(p));
        assert_int_equal(sbx_kproducer_send_sync(p, "sbx.test.roundtrip", key,
                                                 strlen(key), value,
                                                 sizeof(value), hdr, 2, 30000,
                                                 &part, &off, err, sizeof(err)),
                         SBX_OK);
        assert_true(part >= 0 && part < 3);
        assert_true(off >= 0);
        sbx_kproducer_destroy(p);

        k = sbx_kconsumer_new(c, itest_unique("sbx-test-group"), topics, err,
                              sizeof(err));
        assert_non_null(k);
        deadline = sbx_mono_us() + 30 * 1000000LL;
        while (!found && sbx_mono_us() < deadline) {
                sbx_kmsg_t *m = NULL;
                const void *v, *kb, *h;
                size_t vs, ks, hs;
                if (sbx_kconsumer_poll(k, 500, &m, err, sizeof(err)) || !m)
                        continue;
                kb = sbx_kmsg_key(m, &ks);
                if (ks == strlen(key) && !memcmp(kb, key, ks)) {
                        v = sbx_kmsg_value(m, &vs);
                        assert_int_equal(vs, sizeof(value));
                        assert_memory_equal(v, value, vs);
                        assert_int_equal(sbx_kmsg_partition(m), part);
                        assert_int_equal(sbx_kmsg_offset(m), off);
                        h = sbx_kmsg_header(m, "traceparent", &hs);
                        assert_non_null(h);
                        assert_int_equal(hs, 9);
                        assert_memory_equal(h, "00-x-y-01", 9);
                        assert_int_equal(sbx_kconsumer_commit(k, m), SBX_OK);
                        found = 1;
                }
                sbx_kmsg_destroy(m);
        }
        assert_true(found);
        sbx_kconsumer_destroy(k);
        sbx_topicspecs_destroy(specs);
        sbx_config_destroy(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_bytes_roundtrip),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
