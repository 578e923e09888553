/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the planner's learning: it folds PlanProposed, ClaimBound,
 * LeaseGranted and ExecFinished events as the log delivers them, and a
 * signature that OOMs asks for more memory next time, one whose P95 sits
 * far below its allocation (the origin's "playwright gets 4C8G but uses
 * 2C3G") asks for less, two planners fed the same log decide the same,
 * and redelivered, fenced-out or early events are counted right. Every
 * decided event is encoded with the real codec.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/util.h"
#include "stages/planner/planner.h"

#define MB (1024 * 1024)

#include "fixture.h"

#include "planner_fixture.h"

/* How long each command of run_on() runs. */
static int64_t wall_us = 10000000;

/*
 * The log a planner would read after its plan @p plan (an event it
 * decided) ran @p n commands on sandbox @p sb: ClaimBound, LeaseGranted
 * and one ExecFinished per command with the given peak and CPU.
 */
static void run_on(sbx_planner_t **ps,
                   size_t nps,
                   const sbx_event_t *plan,
                   const char *sb,
                   int n,
                   double peak_mb,
                   double cores,
                   int oom)
{
        sbx_event_t *evs[2 + 16];
        int i, k = 0;
        size_t j;

        assert_true(n <= 16);
        evs[k++] = sbx_event_new(
            SBX_EV_CLAIM_BOUND, plan->aggregate_id, 5,
            json_pack("{s:s, s:s, s:I, s:I}", "sandbox_id", sb, "node_id", "n1",
                      "lease_version", (json_int_t)1, "lease_expires_at",
                      (json_int_t)1));
        evs[k] = sbx_event_new(
            SBX_EV_LEASE_GRANTED, sb, 3,
            json_pack("{s:s, s:I, s:I}", "owner", plan->aggregate_id,
                      "lease_version", (json_int_t)1, "expires_at",
                      (json_int_t)1));
        evs[k++]->lease_version = 1;
        for (i = 0; i < n; i++) {
                evs[k] = sbx_event_new(
                    SBX_EV_EXEC_FINISHED, sb, 5 + 2 * i,
                    json_pack("{s:s, s:i, s:{s:I, s:I, s:I, s:I, s:b}}",
                              "exec_id", "e", "exit_code", oom ? 137 : 0,
                              "usage", "wall_us", (json_int_t)wall_us,
                              "cpu_user_us",
                              (json_int_t)(cores * 0.8 * wall_us), "cpu_sys_us",
                              (json_int_t)(cores * 0.2 * wall_us),
                              "peak_memory_bytes", (json_int_t)(peak_mb * MB),
                              "oom_killed", oom));
                evs[k++]->lease_version = 1;
        }
        for (j = 0; j < nps; j++) {
                sbx_planner_observe(ps[j], plan);
                for (i = 0; i < k; i++)
                        sbx_planner_observe(ps[j], evs[i]);
        }
        for (i = 0; i < k; i++)
                sbx_event_destroy(evs[i]);
}

static json_t *java_task(void)
{
        return json_pack("{s:s, s:[s], s:[s]}", "text",
                         "build the large Java monolith", "tool_calls",
                         "mvn -q -T4 package", "languages", "java");
}

static void test_ooms_raise_memory(void **state)
{
        sbx_planner_t *p = rules_planner();
        sbx_planner_stats_t st[4];
        sbx_event_t *first = decide(p, java_task()), *ev;
        long long prev     = mem_of(first);
        char claim[32], sb[32];
        int i;
        (void)state;

        assert_string_equal(sig_of(first), "java-build");
        assert_int_equal(prev, 8192);
        sbx_event_destroy(first);
        /* Each build OOMs at what it was given: the next one gets more. */
        for (i = 0; i < 6; i++) {
                sbx_fmt(claim, sizeof(claim), "claim-%d", i);
                sbx_fmt(sb, sizeof(sb), "sb-%d", i);
                ev = decide_as(p, claim, java_task(), NULL);
                assert_true(mem_of(ev) >= prev);
                if (i > 0)
                        assert_true(mem_of(ev) > prev);
                prev = mem_of(ev);
                run_on(&p, 1, ev, sb, 1, (double)mem_of(ev), 3.0, 1);
                sbx_event_destroy(ev);
        }
        ev = decide_as(p, "claim-next", java_task(), NULL);
        assert_true(mem_of(ev) > prev);
        assert_string_equal(istr(ev, "resource_class"), "compute-large");
        assert_non_null(strstr(istr(ev, "reason"), "OOM at"));
        assert_int_equal(sbx_planner_stats(p, st, 4), 1);
        assert_string_equal(st[0].signature, "java-build");
        assert_int_equal(st[0].samples, 6);
        assert_true(st[0].oom_rate == 1.0);
        assert_int_equal(st[0].recommended_mem_mb, mem_of(ev));
        sbx_event_destroy(ev);
        sbx_planner_destroy(p);
}

/* The origin's case: playwright tasks get 4C8G, P95 uses about 2C3G. */
static void test_p95_far_below_allocation_lowers_it(void **state)
{
        sbx_planner_t *p = rules_planner();
        sbx_planner_stats_t st;
        sbx_event_t *ev;
        char claim[32], sb[32];
        int i;
        (void)state;

        for (i = 0; i < 3; i++) {
                sbx_fmt(claim, sizeof(claim), "claim-%d", i);
                sbx_fmt(sb, sizeof(sb), "sb-%d", i);
                ev = decide_as(p, claim, turn3(), NULL);
                /* Too few samples yet: the class size stands. */
                assert_int_equal(mem_of(ev), 8192);
                assert_true(cpu_of(ev) == 4.0);
                run_on(&p, 1, ev, sb, 2, 2400 + 150 * i, 1.5 + 0.1 * i, 0);
                sbx_event_destroy(ev);
        }
        ev = decide_as(p, "claim-next", turn3(), NULL);
        assert_true(mem_of(ev) < 8192);
        assert_true(mem_of(ev) >= 2700 * 1.3); /* never below P95 + headroom */
        assert_int_equal(mem_of(ev) % 256, 0);
        assert_true(cpu_of(ev) < 4.0 && cpu_of(ev) >= 1.7 * 1.3);
        assert_string_equal(istr(ev, "resource_class"), "browser-medium");
        assert_non_null(strstr(istr(ev, "reason"), "lowered"));
        assert_int_equal(sbx_planner_stats(p, &st, 1), 1);
        assert_int_equal(st.samples, 6);
        assert_true(st.p95_mem_mb == 2700);
        assert_true(st.p50_mem_mb < st.p95_mem_mb);
        assert_true(st.oom_rate == 0);
        sbx_event_destroy(ev);
        sbx_planner_destroy(p);
}

/* The origin's first turn: pip install and a short script saturate their
 * one core for a few seconds each. That is no reason for more cores: the
 * plan stays python-small, 1 CPU; sustained work at the limit does get
 * more. */
static void test_short_saturating_execs_keep_the_cpu(void **state)
{
        sbx_planner_t *p = rules_planner();
        sbx_event_t *ev;
        char claim[32], sb[32];
        int i;
        (void)state;

        wall_us = 5000000;
        for (i = 0; i < 3; i++) {
                sbx_fmt(claim, sizeof(claim), "claim-%d", i);
                sbx_fmt(sb, sizeof(sb), "sb-%d", i);
                ev = decide_as(p, claim, turn1(), NULL);
                run_on(&p, 1, ev, sb, 3, 260, 0.98, 0);
                sbx_event_destroy(ev);
        }
        ev = decide_as(p, "claim-next", turn1(), NULL);
        assert_string_equal(istr(ev, "resource_class"), "python-small");
        assert_true(cpu_of(ev) == 1.0);
        assert_true(mem_of(ev) < 2048); /* memory still learns */
        sbx_event_destroy(ev);

        wall_us = 60000000;
        for (i = 0; i < 3; i++) {
                sbx_fmt(claim, sizeof(claim), "claim-long-%d", i);
                sbx_fmt(sb, sizeof(sb), "sb-long-%d", i);
                ev = decide_as(p, claim, turn1(), NULL);
                run_on(&p, 1, ev, sb, 3, 260, 0.98, 0);
                sbx_event_destroy(ev);
        }
        ev = decide_as(p, "claim-last", turn1(), NULL);
        assert_true(cpu_of(ev) > 1.0);
        sbx_event_destroy(ev);
        wall_us = 10000000;
        sbx_planner_destroy(p);
}

/* A browser plan of 8 GB served by a 4 GB warm sandbox that OOMs. */
static void test_oom_is_measured_against_the_sandbox_size(void **state)
{
        sbx_planner_t *p = rules_planner();
        sbx_event_t *ev, *created;
        char claim[32], sb[32];
        int i;
        (void)state;

        for (i = 0; i < 5; i++) {
                sbx_fmt(claim, sizeof(claim), "claim-%d", i);
                sbx_fmt(sb, sizeof(sb), "sb-%d", i);
                ev      = decide_as(p, claim, turn3(), NULL);
                created = sbx_event_new(
                    SBX_EV_SANDBOX_CREATED, sb, 1,
                    json_pack("{s:s, s:s, s:s, s:s, s:f, s:I}", "origin",
                              "pool", "node_id", "n1", "resource_class",
                              "python-ds", "template", "host", "cpu", 2.0,
                              "memory_mb", (json_int_t)4096));
                sbx_planner_observe(p, created);
                sbx_event_destroy(created);
                run_on(&p, 1, ev, sb, 1, 4096, 1.0, 1);
                sbx_event_destroy(ev);
        }
        ev = decide_as(p, "claim-next", turn3(), NULL);
        /* 1.5x the 4 GB that OOMed, not 1.5x the 8 GB plan. */
        assert_int_equal(mem_of(ev), 6144);
        assert_non_null(strstr(istr(ev, "reason"), "OOM at 4096 MB"));
        sbx_event_destroy(ev);
        sbx_planner_destroy(p);
}

static void test_same_log_same_decisions(void **state)
{
        sbx_planner_t *ps[2] = {rules_planner(), rules_planner()};
        sbx_planner_stats_t s0[4], s1[4];
        sbx_event_t *a, *b, *req;
        char claim[32], sb[32];
        int i;
        (void)state;

        for (i = 0; i < 12; i++) {
                json_t *task = i % 2 ? turn3() : java_task();
                sbx_fmt(claim, sizeof(claim), "claim-%d", i);
                sbx_fmt(sb, sizeof(sb), "sb-%d", i);
                a = decide_as(ps[0], claim, json_deep_copy(task), NULL);
                b = decide_as(ps[1], claim, task, NULL);
                assert_true(json_equal(a->payload, b->payload));
                run_on(ps, 2, a, sb, 3, 1000 + 700 * (i % 5), 0.5 + i % 3,
                       i % 4 == 0);
                sbx_event_destroy(a);
                sbx_event_destroy(b);
        }
        req = claim_with("claim-last", java_task(), NULL);
        a   = sbx_planner_decide(ps[0], req, 2, "planner/a");
        b   = sbx_planner_decide(ps[1], req, 2, "planner/b");
        assert_true(json_equal(a->payload, b->payload));
        assert_int_equal(sbx_planner_stats(ps[0], NULL, 0), 2);
        assert_int_equal(sbx_planner_stats(ps[0], s0, 1), 1);
        assert_int_equal(sbx_planner_stats(ps[0], s0, 4), 2);
        assert_int_equal(sbx_planner_stats(ps[1], s1, 4), 2);
        for (i = 0; i < 2; i++) {
                assert_string_equal(s0[i].signature, s1[i].signature);
                assert_int_equal(s0[i].samples, s1[i].samples);
                assert_true(s0[i].p95_mem_mb == s1[i].p95_mem_mb);
                assert_int_equal(s0[i].recommended_mem_mb,
                                 s1[i].recommended_mem_mb);
        }
        assert_string_equal(s0[0].signature, "browser"); /* sorted */
        sbx_event_destroy(a);
        sbx_event_destroy(b);
        sbx_event_destroy(req);
        sbx_planner_destroy(ps[0]);
        sbx_planner_destroy(ps[1]);
}

static void test_redelivered_early_and_fenced_out_events(void **state)
{
        sbx_planner_t *p = rules_planner();
        sbx_planner_stats_t st;
        sbx_event_t *plan = decide_as(p, "claim-r", turn1(), NULL), *fin;
        (void)state;

        run_on(&p, 1, plan, "sb-r", 0, 0, 0, 0);
        fin = sbx_event_new(
            SBX_EV_EXEC_FINISHED, "sb-r", 9,
            json_pack("{s:s, s:i, s:{s:I, s:I}}", "exec_id", "e", "exit_code",
                      0, "usage", "wall_us", (json_int_t)1000000,
                      "peak_memory_bytes", (json_int_t)(700 * MB)));
        fin->lease_version = 1;
        sbx_planner_observe(p, fin);
        sbx_planner_observe(p, fin); /* redelivered: counted once */
        assert_int_equal(sbx_planner_stats(p, &st, 1), 1);
        assert_int_equal(st.samples, 1);
        assert_true(st.p95_mem_mb == 700);
        assert_int_equal(st.recommended_mem_mb, 0); /* too few samples */

        /* A report under a lease that is no longer current: ignored. */
        fin->seq           = 11;
        fin->lease_version = 0;
        sbx_planner_observe(p, fin);
        assert_int_equal(sbx_planner_stats(p, &st, 1), 1);
        assert_int_equal(st.samples, 1);
        sbx_event_destroy(fin);
        sbx_event_destroy(plan);

        /* Samples that came before their plan wait for it. */
        plan = decide_as(p, "claim-late", turn2(), NULL);
        fin  = sbx_event_new(
             SBX_EV_LEASE_GRANTED, "sb-late", 3,
             json_pack("{s:s, s:I, s:I}", "owner", "claim-late", "lease_version",
                       (json_int_t)1, "expires_at", (json_int_t)1));
        sbx_planner_observe(p, fin);
        sbx_event_destroy(fin);
        fin = sbx_event_new(
            SBX_EV_EXEC_FINISHED, "sb-late", 5,
            json_pack("{s:s, s:i, s:{s:I, s:I}}", "exec_id", "e", "exit_code",
                      0, "usage", "wall_us", (json_int_t)1000000,
                      "peak_memory_bytes", (json_int_t)(900 * MB)));
        fin->lease_version = 1;
        sbx_planner_observe(p, fin);
        assert_int_equal(sbx_planner_stats(p, &st, 1), 1);
        assert_int_equal(st.samples, 1);
        sbx_planner_observe(p, plan);
        assert_int_equal(sbx_planner_stats(p, &st, 1), 1);
        assert_int_equal(st.samples, 2);
        assert_true(st.p95_mem_mb == 900);
        sbx_event_destroy(fin);
        sbx_event_destroy(plan);
        sbx_planner_destroy(p);
}


static void test_garbage_in_the_log_is_ignored(void **state)
{
        sbx_planner_t *p = rules_planner();
        sbx_planner_stats_t st;
        char longsig[300];
        json_t *payloads[] = {
            json_object(),
            json_pack("{s:s}", "signature", "has spaces"),
            json_pack("{s:s}", "signature", longsig),
            json_pack("{s:s, s:{s:I, s:f}}", "signature", "ok-sig", "intent",
                      "memory_mb", (json_int_t)INT64_MAX, "cpu", 1e300),
        };
        sbx_event_t *ev;
        size_t i;
        int t;
        (void)state;

        memset(longsig, 'a', sizeof(longsig) - 1);
        longsig[sizeof(longsig) - 1] = '\0';
        json_object_set_new(payloads[2], "signature", json_string(longsig));
        /* Every type with an empty payload, then odd plans. */
        for (t = 0; t < SBX_EV__CNT; t++) {
                ev = sbx_event_new((sbx_evtype_t)t, "x", 3, json_object());
                sbx_planner_observe(p, ev);
                sbx_event_destroy(ev);
        }
        for (i = 0; i < SBX_ARRAY_SIZE(payloads); i++) {
                char id[16];
                sbx_fmt(id, sizeof(id), "c-%zu", i);
                ev = sbx_event_new(SBX_EV_PLAN_PROPOSED, id, 2, payloads[i]);
                sbx_planner_observe(p, ev);
                run_on(&p, 1, ev, id, 6, 1e9, 1e9, 1);
                sbx_event_destroy(ev);
        }
        /* Only the well-named signature counts, its numbers bounded. */
        assert_int_equal(sbx_planner_stats(p, NULL, 0), 1);
        assert_int_equal(sbx_planner_stats(p, &st, 1), 1);
        assert_string_equal(st.signature, "ok-sig");
        assert_int_equal(st.samples, 6);
        assert_true(st.p95_mem_mb <= 1048576 && st.p95_cpu <= 256);
        assert_int_equal(st.recommended_mem_mb, 1048576);
        assert_true(st.recommended_cpu == 256);
        sbx_planner_destroy(p);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_ooms_raise_memory),
            cmocka_unit_test(test_p95_far_below_allocation_lowers_it),
            cmocka_unit_test(test_oom_is_measured_against_the_sandbox_size),
            cmocka_unit_test(test_short_saturating_execs_keep_the_cpu),
            cmocka_unit_test(test_same_log_same_decisions),
            cmocka_unit_test(test_redelivered_early_and_fenced_out_events),
            cmocka_unit_test(test_garbage_in_the_log_is_ignored),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
