/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The control plane on the real local broker: a claim flows intake ->
 * planner -> guard -> scheduler to Placed on a node (a hollow node: an
 * executor that binds without containers), is bound, runs an exec and is
 * released. Then: two scheduler replicas with one killed mid-stream, a
 * planner killed with SIGKILL and restarted, and malformed requests - the
 * log must still hold exactly one accepted decision per claim and stage,
 * lose no claim, and every bad input must get a DLQ entry or a rejection.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "itest_stack.h"

static char node[96];

static const char *producer_stage(const sbx_event_t *ev, char *buf, size_t n)
{
        const char *slash = strchr(ev->producer, '/');
        snprintf(buf, n, "%.*s", slash ? (int)(slash - ev->producer) : 0,
                 ev->producer);
        return buf;
}

/* GET http://127.0.0.1:PORT/PATH; the body, or NULL. */
static char *http_get(int port, const char *path)
{
        struct sockaddr_in a;
        char req[256], *buf = sbx_malloc(1 << 20), *body;
        size_t got = 0;
        ssize_t r;
        int fd = socket(AF_INET, SOCK_STREAM, 0);

        memset(&a, 0, sizeof(a));
        a.sin_family = AF_INET;
        a.sin_port = htons((uint16_t)port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
                close(fd);
                free(buf);
                return NULL;
        }
        snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\n\r\n", path);
        (void)!write(fd, req, strlen(req));
        while (got < (1 << 20) - 1 &&
               (r = read(fd, buf + got, (1 << 20) - 1 - got)) > 0)
                got += (size_t)r;
        close(fd);
        buf[got] = '\0';
        body = strstr(buf, "\r\n\r\n");
        if (!body || !strstr(buf, " 200 ")) {
                free(buf);
                return NULL;
        }
        memmove(buf, body + 4, strlen(body + 4) + 1);
        return buf;
}

static void expect_by(itest_log_t *l, const char *id, sbx_evtype_t t,
                      const char *stage)
{
        const sbx_event_t *ev = itest_find(l, id, t);
        char b[64];
        if (!ev)
                fail_msg("%s has no accepted %s", id, sbx_evtype_name(t));
        if (strcmp(producer_stage(ev, b, sizeof(b)), stage))
                fail_msg("%s of %s was appended by %s, not %s",
                         sbx_evtype_name(t), id, ev->producer, stage);
}

static void test_claim_flows_to_bound_exec_and_release(void **state)
{
        itest_proc_t cp, hn;
        itest_log_t l;
        char claim[64], uuid[37];
        const sbx_state_t *c, *sb;
        const sbx_event_t *placed;
        json_t *req;
        int64_t t0;
        (void)state;

        hn = itest_sbxd("node1", "hollow", node);
        itest_metrics_port = 20000 + (int)(getpid() % 20000);
        cp = itest_sbxd("cp", "intake,planner,guard,scheduler,keeper", NULL);
        itest_log_open(&l, cfg, codec);
        itest_log_pump(&l, 500);

        sbx_uuid(uuid);
        snprintf(claim, sizeof(claim), "claim-%s", uuid);
        req = itest_acquire(claim, "acme", "session-1",
                            "read the Excel file and total the sales");
        t0 = sbx_mono_us();
        itest_request(prod, codec, req, claim);
        json_decref(req);

        c = itest_wait_phase(&l, claim, SBX_CLAIM_BOUND, 60);
        print_message("claim -> bound in %.1f ms\n",
                      (double)(sbx_mono_us() - t0) / 1000.0);
        expect_by(&l, claim, SBX_EV_CLAIM_REQUESTED, "intake");
        expect_by(&l, claim, SBX_EV_PLAN_PROPOSED, "planner");
        expect_by(&l, claim, SBX_EV_PLAN_APPROVED, "guard");
        expect_by(&l, claim, SBX_EV_PLACED, "scheduler");
        expect_by(&l, claim, SBX_EV_CLAIM_BOUND, "hollow");
        placed = itest_find(&l, claim, SBX_EV_PLACED);
        assert_string_equal(sbx_event_str(placed, "node_id"), node);
        assert_string_equal(c->resource_class, "python-small");
        sb = itest_state(&l, c->sandbox_id);
        assert_non_null(sb);
        assert_int_equal(sb->phase, SBX_SB_LEASED);
        assert_string_equal(sb->lease_owner, claim);
        assert_int_equal(sb->lease_version, c->lease_version);

        /* Exec under the lease, then release. */
        {
                char rid[64], sbid[128];
                json_t *ex;
                int64_t lv = c->lease_version;
                snprintf(sbid, sizeof(sbid), "%s", c->sandbox_id);
                sbx_uuid(uuid);
                snprintf(rid, sizeof(rid), "req-%s", uuid);
                ex = json_pack("{s:s, s:s, s:s, s:I, s:{s:{s:s, s:I, s:s, "
                               "s:[s,s,s]}}}",
                               "request_id", rid, "tenant_id", "acme",
                               "session_id", "session-1", "occurred_at",
                               (json_int_t)sbx_now_us(), "command", "sbx.Exec",
                               "sandbox_id", sbid, "lease_version",
                               (json_int_t)lv, "exec_id", "e-1", "argv",
                               "python3", "-c", "print(1+1)");
                itest_request(prod, codec, ex, sbid);
                json_decref(ex);
                itest_wait_phase(&l, sbid, SBX_SB_LEASED, 30);
                while (!itest_find(&l, sbid, SBX_EV_EXEC_FINISHED))
                        itest_log_pump(&l, 100);
                expect_by(&l, sbid, SBX_EV_EXEC_REQUESTED, "intake");
                expect_by(&l, sbid, SBX_EV_EXEC_FINISHED, "hollow");

                sbx_uuid(uuid);
                snprintf(rid, sizeof(rid), "req-%s", uuid);
                ex = json_pack("{s:s, s:s, s:s, s:I, s:{s:{s:s, s:I, s:s}}}",
                               "request_id", rid, "tenant_id", "acme",
                               "session_id", "session-1", "occurred_at",
                               (json_int_t)sbx_now_us(), "command",
                               "sbx.Release", "sandbox_id", sbid,
                               "lease_version", (json_int_t)lv, "claim_id",
                               claim);
                itest_request(prod, codec, ex, sbid);
                json_decref(ex);
                itest_wait_phase(&l, sbid, SBX_SB_IDLE, 30);
                itest_wait_phase(&l, claim, SBX_CLAIM_RELEASED, 30);
                expect_by(&l, claim, SBX_EV_CLAIM_RELEASED, "keeper");
        }
        /* The counters are on the metrics endpoint, in Prometheus text. */
        {
                char *text = http_get(20000 + (int)(getpid() % 20000), "/metrics");
                assert_non_null(text);
                if (!strstr(text, "# TYPE sbx_stage_appended counter") ||
                    !strstr(text, "sbx_stage_appended{stage=\"intake\"} ") ||
                    strstr(text, "sbx_stage_appended{stage=\"intake\"} 0\n") ||
                    !strstr(text, "sbx_stage_lag{stage=\"keeper\"}"))
                        fail_msg("unexpected metrics:\n%s", text);
                free(text);
        }
        itest_kill(&cp, SIGTERM);
        itest_kill(&hn, SIGTERM);
        itest_log_close(&l);
}

/* Publishes @p n claims; their ids go to ids[]. */
static void publish_claims(char ids[][64], int from, int n)
{
        int i;
        for (i = from; i < from + n; i++) {
                char uuid[37];
                json_t *req;
                sbx_uuid(uuid);
                snprintf(ids[i], 64, "claim-%s", uuid);
                req = itest_acquire(ids[i], "bench", "burst",
                                    "print hello world");
                itest_request(prod, codec, req, ids[i]);
                json_decref(req);
        }
}

static void expect_exactly_one_decision_each(itest_log_t *l, char ids[][64],
                                             int n)
{
        int i;
        for (i = 0; i < n; i++) {
                itest_wait_phase(l, ids[i], SBX_CLAIM_BOUND, 90);
                assert_int_equal(itest_count(l, ids[i], SBX_EV_CLAIM_REQUESTED, 1), 1);
                assert_int_equal(itest_count(l, ids[i], SBX_EV_PLAN_PROPOSED, 1), 1);
                assert_int_equal(itest_count(l, ids[i], SBX_EV_PLAN_APPROVED, 1), 1);
                assert_int_equal(itest_count(l, ids[i], SBX_EV_PLACED, 1) +
                                     itest_count(l, ids[i], SBX_EV_REUSE_CHOSEN, 1),
                                 1);
                assert_int_equal(itest_count(l, ids[i], SBX_EV_CLAIM_BOUND, 1), 1);
        }
}

static void test_replicas_and_kills_lose_nothing_duplicate_nothing(void **state)
{
        itest_proc_t rest, sa, sb, p1, p2, hn;
        itest_log_t l;
        static char ids[40][64];
        (void)state;

        hn = itest_sbxd("node2", "hollow", node);
        rest = itest_sbxd("rest", "intake,guard,keeper", NULL);
        sa = itest_sbxd("schedA", "scheduler", NULL);
        sb = itest_sbxd("schedB", "scheduler", NULL);
        p1 = itest_sbxd("plan1", "planner", NULL);
        itest_log_open(&l, cfg, codec);

        publish_claims(ids, 0, 15);
        /* Mid-stream, once replica B has placed something: B stops, and
         * a planner dies hard. */
        {
                int64_t until = sbx_mono_us() + 20 * 1000000LL;
                int placed_by_b = 0, i;
                while (!placed_by_b && sbx_mono_us() < until) {
                        itest_log_pump(&l, 100);
                        for (i = 0; i < 15; i++) {
                                const sbx_event_t *ev =
                                    itest_find(&l, ids[i], SBX_EV_PLACED);
                                if (ev && strstr(ev->producer, "-schedB"))
                                        placed_by_b = 1;
                        }
                }
        }
        itest_kill(&sb, SIGTERM);
        itest_kill(&p1, SIGKILL);
        publish_claims(ids, 15, 15);
        p2 = itest_sbxd("plan2", "planner", NULL);
        publish_claims(ids, 30, 10);

        expect_exactly_one_decision_each(&l, ids, 40);
        {
                /* Both scheduler replicas placed claims. */
                int i, a = 0, b = 0;
                for (i = 0; i < 40; i++) {
                        const sbx_event_t *ev = itest_find(&l, ids[i], SBX_EV_PLACED);
                        if (ev && strstr(ev->producer, "-schedA"))
                                a++;
                        if (ev && strstr(ev->producer, "-schedB"))
                                b++;
                }
                print_message("placements: replica A %d, replica B %d\n", a, b);
                assert_true(a > 0);
                assert_true(b > 0);
                assert_int_equal(a + b, 40);
        }
        itest_kill(&p2, SIGTERM);
        itest_kill(&sa, SIGTERM);
        itest_kill(&rest, SIGTERM);
        itest_kill(&hn, SIGTERM);
        itest_log_close(&l);
}

/* Waits for the DLQ entry keyed @p key; returns its reason header. */
static char *wait_dlq(const char *key)
{
        const char *topics[] = {SBX_TOPIC_DLQ, NULL};
        char err[512], group[160];
        sbx_kconsumer_t *k;
        int64_t deadline = sbx_mono_us() + 30 * 1000000LL;
        char *reason = NULL;

        snprintf(group, sizeof(group), "%s-dlq", itest_prefix);
        k = sbx_kconsumer_new(cfg, group, topics, err, sizeof(err));
        assert_non_null(k);
        while (!reason && sbx_mono_us() < deadline) {
                sbx_kmsg_t *m = NULL;
                const void *kb, *r;
                size_t ks, rs;
                if (sbx_kconsumer_poll(k, 200, &m, err, sizeof(err)) || !m)
                        continue;
                kb = sbx_kmsg_key(m, &ks);
                if (ks == strlen(key) && !memcmp(kb, key, ks) &&
                    (r = sbx_kmsg_header(m, "sbx_reason", &rs)))
                        reason = sbx_strndup(r, rs);
                sbx_kmsg_destroy(m);
        }
        sbx_kconsumer_destroy(k);
        return reason;
}

static const sbx_state_t *wait_rejection(itest_log_t *l, const char *rid,
                                         const char *want)
{
        const sbx_state_t *s = itest_wait_phase(l, rid, SBX_REQ_REJECTED, 30);
        const sbx_event_t *ev = itest_find(l, rid, SBX_EV_REQUEST_REJECTED);
        const char *reason = json_string_value(
            json_array_get(json_object_get(ev->payload, "reasons"), 0));
        if (!reason || !strstr(reason, want))
                fail_msg("rejection of %s says '%s', expected '%s'", rid,
                         reason ? reason : "(none)", want);
        return s;
}

static void test_bad_input_gets_dlq_or_rejection_and_stages_go_on(void **state)
{
        itest_proc_t cp, hn;
        itest_log_t l;
        char key[64], claim[64], uuid[37], rid[64], *reason;
        const unsigned char junk[] = {0xde, 0xad, 0xbe, 0xef, 0x00, 0x01};
        json_t *req;
        const sbx_state_t *c;
        (void)state;

        hn = itest_sbxd("node3", "hollow", node);
        cp = itest_sbxd("cp3", "intake,planner,guard,scheduler,keeper", NULL);
        itest_log_open(&l, cfg, codec);

        /* Bytes that are not Avro at all: DLQ, with the reason. */
        snprintf(key, sizeof(key), "junk-%ld", (long)getpid());
        {
                char err[256];
                assert_int_equal(sbx_kproducer_send_sync(
                                     prod, SBX_TOPIC_REQUESTS, key, strlen(key),
                                     junk, sizeof(junk), NULL, 0, 30000, NULL,
                                     NULL, err, sizeof(err)),
                                 SBX_OK);
        }
        reason = wait_dlq(key);
        assert_non_null(reason);
        assert_non_null(strstr(reason, "not an Avro single-object message"));
        free(reason);

        /* An unknown tenant: a rejection the client can read. */
        sbx_uuid(uuid);
        snprintf(claim, sizeof(claim), "claim-%s", uuid);
        req = itest_acquire(claim, "no-such-tenant", "s", "hello");
        snprintf(rid, sizeof(rid), "%s",
                 json_string_value(json_object_get(req, "request_id")));
        itest_request(prod, codec, req, claim);
        json_decref(req);
        wait_rejection(&l, rid, "unknown tenant 'no-such-tenant'");
        assert_null(itest_state(&l, claim));

        /* A valid claim still goes through, then an exec with a stale
         * lease version and one from another tenant are refused. */
        sbx_uuid(uuid);
        snprintf(claim, sizeof(claim), "claim-%s", uuid);
        req = itest_acquire(claim, "acme", "s-bad", "print hello");
        itest_request(prod, codec, req, claim);
        json_decref(req);
        c = itest_wait_phase(&l, claim, SBX_CLAIM_BOUND, 60);
        {
                const char *tenants[] = {"acme", "demo"};
                const char *want[] = {"stale lease", "another tenant"};
                int i;
                for (i = 0; i < 2; i++) {
                        sbx_uuid(uuid);
                        snprintf(rid, sizeof(rid), "req-%s", uuid);
                        req = json_pack(
                            "{s:s, s:s, s:I, s:{s:{s:s, s:I, s:s, s:[s]}}}",
                            "request_id", rid, "tenant_id", tenants[i],
                            "occurred_at", (json_int_t)sbx_now_us(), "command",
                            "sbx.Exec", "sandbox_id", c->sandbox_id,
                            "lease_version",
                            (json_int_t)(i == 0 ? c->lease_version - 1
                                                : c->lease_version),
                            "exec_id", "e-bad", "argv", "true");
                        itest_request(prod, codec, req, c->sandbox_id);
                        json_decref(req);
                        wait_rejection(&l, rid, want[i]);
                }
        }
        itest_kill(&cp, SIGTERM);
        itest_kill(&hn, SIGTERM);
        itest_log_close(&l);
}


int main(int argc, char **argv)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_teardown(test_claim_flows_to_bound_exec_and_release,
                                      itest_stop_children),
            cmocka_unit_test_teardown(
                test_replicas_and_kills_lose_nothing_duplicate_nothing,
                itest_stop_children),
            cmocka_unit_test_teardown(
                test_bad_input_gets_dlq_or_rejection_and_stages_go_on,
                itest_stop_children),
        };
        if (argc < 2) {
                fprintf(stderr, "usage: %s PATH/TO/sbxd\n", argv[0]);
                return 2;
        }
        itest_stack_init(argv[1]);
        snprintf(node, sizeof(node), "itest-node-%ld", (long)getpid());
        return cmocka_run_group_tests(tests, itest_group_setup,
                                      itest_group_teardown);
}
