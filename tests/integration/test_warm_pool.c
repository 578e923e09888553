/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Warm pools end to end: an executor with one pool (runc/browser-medium/
 * host, one sandbox kept ready; the class of ITEST_TASK, see itest_exec.h
 * for why not python-small) makes a pool sandbox with no tenant and
 * reports it in its node status; a claim of that class placed on the node
 * takes that sandbox (not the one the scheduler named), which adopts the
 * claim's tenant and session and gets the session's workspace, where a
 * file written inside shows up on the host; the pool makes a new ready
 * sandbox; a claim of a class without a pool is served cold. Then
 * everything is released and destroyed, and the executor, restarted with
 * the pool's buffer at zero, retires the spare ready sandbox. Prints the
 * warm and the cold claim's time from request to ClaimBound (after a
 * claim the guard rejects has warmed the control plane up) and from
 * Placed to ClaimBound (the executor's part).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "itest_exec.h"

#define POOL_KEY "runc/" ITEST_CLASS "/host"

static char pools[128];

static void write_pools(int buffer)
{
        FILE *f = fopen(pools, "w");
        assert_non_null(f);
        fprintf(f,
                "pool.py.class = " ITEST_CLASS
                "\n"
                "pool.py.runtime = runc\n"
                "pool.py.template = host\n"
                "pool.py.buffer_min = %d\n"
                "pool.py.buffer_max = %d\n"
                "pool.py.pool_max = 4\n",
                buffer, buffer);
        fclose(f);
}

/* A READY, unleased pool sandbox of this node other than @p except. */
static const sbx_state_t *ready_pool_sandbox(itest_log_t *l, const char *except)
{
        size_t i;
        for (i = 0; i < l->n; i++) {
                const sbx_event_t *ev = l->ev[i];
                const sbx_state_t *s;
                if (ev->type != SBX_EV_SANDBOX_CREATED ||
                    l->verdict[i] != SBX_FOLD_ACCEPTED ||
                    !sbx_streq(sbx_event_str(ev, "node_id"), itest_node.id) ||
                    !sbx_streq(sbx_event_str(ev, "origin"), "pool") ||
                    (except && !strcmp(ev->aggregate_id, except)))
                        continue;
                s = itest_state(l, ev->aggregate_id);
                if (s && s->phase == SBX_SB_READY && !s->lease_owner)
                        return s;
        }
        return NULL;
}

static const sbx_state_t *wait_ready_pool_sandbox(itest_log_t *l,
                                                  const char *except)
{
        int64_t deadline = sbx_mono_us() + 90 * 1000000LL;
        const sbx_state_t *s;
        while (sbx_mono_us() < deadline) {
                itest_log_pump(l, 100);
                if ((s = ready_pool_sandbox(l, except)))
                        return s;
        }
        fail_msg("no ready pool sandbox on %s within 90 s", itest_node.id);
        return NULL;
}

/* Waits until the node's status on sbx.nodes.v1 shows pool POOL_KEY with
 * @p ready ready and @p leased leased sandboxes. */
static void wait_pool_status(int ready, int leased)
{
        const char *topics[] = {SBX_TOPIC_NODES, NULL};
        char err[512], group[256];
        sbx_kconsumer_t *k;
        int64_t deadline = sbx_mono_us() + 60 * 1000000LL;
        int seen_ready = -1, seen_leased = -1;

        snprintf(group, sizeof(group), "%s-nodes-%d-%d", itest_prefix, ready,
                 leased);
        k = sbx_kconsumer_new(cfg, group, topics, err, sizeof(err));
        if (!k)
                fail_msg("consumer of %s: %s", SBX_TOPIC_NODES, err);
        while (sbx_mono_us() < deadline &&
               (seen_ready != ready || seen_leased != leased)) {
                sbx_kmsg_t *m = NULL;
                const void *kb, *v;
                size_t ks, vs, i;
                json_t *st = NULL, *pl;
                if (sbx_kconsumer_poll(k, 200, &m, err, sizeof(err)) || !m)
                        continue;
                kb = sbx_kmsg_key(m, &ks);
                v  = sbx_kmsg_value(m, &vs);
                if (ks == strlen(itest_node.id) &&
                    !memcmp(kb, itest_node.id, ks) &&
                    !sbx_codec_decode(codec, SBX_SCHEMA_NODE_STATUS, v, vs, &st,
                                      err, sizeof(err)))
                        json_array_foreach(json_object_get(st, "pools"), i, pl)
                        {
                                if (!sbx_streq(json_string_value(
                                                   json_object_get(pl, "pool")),
                                               POOL_KEY))
                                        continue;
                                assert_int_equal(
                                    json_integer_value(
                                        json_object_get(pl, "buffer_max")),
                                    1);
                                seen_ready = (int)json_integer_value(
                                    json_object_get(pl, "ready"));
                                seen_leased = (int)json_integer_value(
                                    json_object_get(pl, "leased"));
                        }
                json_decref(st);
                sbx_kmsg_destroy(m);
        }
        sbx_kconsumer_destroy(k);
        if (seen_ready != ready || seen_leased != leased)
                fail_msg(
                    "node %s reports pool %s ready %d leased %d, not "
                    "%d and %d",
                    itest_node.id, POOL_KEY, seen_ready, seen_leased, ready,
                    leased);
}

static void test_claim_takes_a_warm_sandbox_and_the_pool_refills(void **state)
{
        itest_proc_t ex, cp;
        itest_log_t *l;
        itest_claim_t w, cold;
        const sbx_state_t *s;
        const sbx_event_t *ev;
        char p1[128], p2[128], sw[64], sc[64], ws[1400], path[1500];
        char code[256], want[128];
        FILE *f;
        (void)state;

        write_pools(1);
        ex = itest_executor("exec", pools);
        cp = itest_control_plane("cp");
        l  = itest_exec_log_open();

        /* A pool sandbox: no tenant yet, ready before anyone asks. */
        s = wait_ready_pool_sandbox(l, NULL);
        snprintf(p1, sizeof(p1), "%s", s->id);
        ev = itest_find(l, p1, SBX_EV_SANDBOX_CREATED);
        assert_string_equal(sbx_event_str(ev, "pool"), POOL_KEY);
        assert_string_equal(sbx_event_str(ev, "resource_class"), ITEST_CLASS);
        assert_true(!ev->tenant_id || !*ev->tenant_id);
        print_message(
            "pool sandbox provisioned in %.1f ms\n",
            (double)sbx_event_int(itest_find(l, p1, SBX_EV_PROVISIONED),
                                  "startup_us", 0) /
                1000.0);
        wait_pool_status(1, 0);

        /* A claim that needs a GPU (no class of the tenant has one) goes
         * through intake, planner and guard: the first claim of a fresh
         * control plane is slower, and the times below are compared. */
        {
                char claim[64], uuid[37];
                json_t *req;
                sbx_uuid(uuid);
                snprintf(claim, sizeof(claim), "claim-%s", uuid);
                req = itest_acquire(claim, ITEST_TENANT, "s-warm-up",
                                    "train the model with cuda on the gpu");
                itest_request(prod, codec, req, claim);
                json_decref(req);
                itest_wait_phase(l, claim, SBX_CLAIM_REJECTED, 60);
        }

        /* The claim gets the pool sandbox, not the one it was placed as. */
        itest_claim(l, &w, itest_session(sw, sizeof(sw)), NULL);
        assert_string_equal(w.sandbox, p1);
        assert_string_not_equal(w.placed, p1);
        assert_true(sbx_event_bool(itest_find(l, w.id, SBX_EV_PLACED), "warm"));
        s = itest_state(l, w.placed);
        assert_true(!s || s->seq == 0); /* never made */
        ev = itest_find(l, p1, SBX_EV_LEASE_GRANTED);
        assert_non_null(ev);
        assert_string_equal(sbx_event_str(ev, "owner"), w.id);
        s = itest_state(l, p1);
        assert_string_equal(s->tenant_id, ITEST_TENANT);
        assert_string_equal(s->session_id, sw);
        assert_string_equal(s->pool, POOL_KEY);

        /* The session's workspace is the sandbox's /workspace. */
        snprintf(want, sizeof(want), "warm %s", sw);
        snprintf(code, sizeof(code),
                 "open('/workspace/hello.txt', 'w').write('%s')", want);
        ev = itest_run(l, &w, "w-write",
                       json_pack("[s,s,s]", "python3", "-c", code));
        assert_int_equal(sbx_event_int(ev, "exit_code", -1), 0);
        snprintf(path, sizeof(path), "%s/hello.txt",
                 itest_workspace(sw, ws, sizeof(ws)));
        f = fopen(path, "r");
        if (!f)
                fail_msg("%s is not on the host", path);
        {
                char got[128] = "";
                size_t n      = fread(got, 1, sizeof(got) - 1, f);
                got[n]        = '\0';
                fclose(f);
                assert_string_equal(got, want);
        }

        /* The pool refills. */
        s = wait_ready_pool_sandbox(l, p1);
        snprintf(p2, sizeof(p2), "%s", s->id);
        assert_string_not_equal(p2, p1);
        wait_pool_status(1, 1);

        /* A class without a pool (4 GB of data: compute-large): a cold
         * sandbox made for the claim. */
        itest_claim(l, &cold, itest_session(sc, sizeof(sc)),
                    json_pack("{s:s, s:i}", "text",
                              "analyze the parquet dataset in python",
                              "data_size_mb", 4096));
        assert_string_not_equal(itest_state(l, cold.sandbox)->resource_class,
                                ITEST_CLASS);
        assert_string_equal(cold.sandbox, cold.placed);
        assert_string_equal(
            sbx_event_str(itest_find(l, cold.sandbox, SBX_EV_SANDBOX_CREATED),
                          "origin"),
            "claim");
        print_message(
            "%s pool claim: request -> bound %.1f ms, placed -> "
            "bound %.1f ms\n",
            ITEST_CLASS, (double)(w.bound_us - w.sent_us) / 1000.0,
            (double)w.place_us / 1000.0);
        print_message(
            "cold %s claim: request -> bound %.1f ms, placed -> "
            "bound %.1f ms (provision %.1f ms)\n",
            itest_state(l, cold.sandbox)->resource_class,
            (double)(cold.bound_us - cold.sent_us) / 1000.0,
            (double)cold.place_us / 1000.0,
            (double)sbx_event_int(
                itest_find(l, cold.sandbox, SBX_EV_PROVISIONED), "startup_us",
                0) /
                1000.0);

        itest_release(l, &w);
        itest_release(l, &cold);
        itest_destroy(l, sw, w.sandbox);
        itest_destroy(l, sc, cold.sandbox);

        /* The spare ready sandbox has no tenant to destroy it as; an
         * executor whose pool keeps none ready retires it. */
        itest_kill(&ex, SIGTERM);
        write_pools(0);
        ex = itest_executor("exec2", pools);
        itest_wait_phase(l, p2, SBX_SB_TERMINATED, 60);
        assert_int_equal(itest_node_list().n, 0);

        itest_kill(&cp, SIGTERM);
        itest_kill(&ex, SIGTERM);
}

int main(int argc, char **argv)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_teardown(
                test_claim_takes_a_warm_sandbox_and_the_pool_refills,
                itest_exec_teardown),
        };
        int rc;
        snprintf(pools, sizeof(pools), "/tmp/sbx-itest-pools-%ld.conf",
                 (long)getpid());
        rc = itest_exec_main(argc, argv, "itest-pool", tests,
                             sizeof(tests) / sizeof(tests[0]));
        unlink(pools);
        return rc;
}
