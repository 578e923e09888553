/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the guard's decisions against deploy/policy/default.conf, with
 * the design origin's examples: a small data task gets python-small, a
 * Playwright task browser-medium, a plan asking for 64 CPUs the tenant's
 * largest class (clamped); unknown tenants, GPUs, disallowed networks and
 * exhausted quotas are rejected with reasons; high risk runs under runsc.
 * Every claim goes through the real fold, and every event the guard
 * writes must encode with the real schemas and be accepted by the fold.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/fold.h"
#include "core/util.h"
#include "stages/guard/guard.h"

#define DEFAULT_CONF SBX_SOURCE_ROOT "/deploy/policy/default.conf"

typedef struct fx_s {
        sbx_policy_t *policy;
        sbx_guard_t *guard;
        sbx_codec_t *codec;
} fx_t;

/* One claim as the guard's glue would see it. */
typedef struct tclaim_s {
        sbx_state_t *st;
        sbx_event_t *plan; /* the last PlanProposed */
        char tenant[64];
} tclaim_t;

static fx_t *fx_new(const char *policy_text)
{
        fx_t *fx      = sbx_calloc(1, sizeof(*fx));
        char err[512] = "";

        fx->policy =
            policy_text
                ? sbx_policy_parse("test.conf", policy_text, err, sizeof(err))
                : sbx_policy_load(DEFAULT_CONF, err, sizeof(err));
        if (!fx->policy)
                fail_msg("policy: %s", err);
        fx->codec = sbx_codec_new(err, sizeof(err));
        if (!fx->codec)
                fail_msg("codec: %s", err);
        fx->guard = sbx_guard_new(fx->policy);
        return fx;
}

static void fx_destroy(fx_t *fx)
{
        sbx_guard_destroy(fx->guard);
        sbx_codec_destroy(fx->codec);
        sbx_policy_destroy(fx->policy);
        free(fx);
}

static int setup(void **state)
{
        *state = fx_new(NULL);
        return 0;
}

static int teardown(void **state)
{
        fx_destroy(*state);
        return 0;
}

static void must_encode(const fx_t *fx, const sbx_event_t *ev)
{
        unsigned char *buf = NULL;
        size_t len         = 0;
        char err[512]      = "";

        if (sbx_event_encode(fx->codec, ev, &buf, &len, err, sizeof(err)))
                fail_msg("%s does not encode: %s", sbx_evtype_name(ev->type),
                         err);
        free(buf);
}

/* What the glue does with each event it reads: fold it, then observe. */
static void feed(fx_t *fx, tclaim_t *c, const sbx_event_t *ev)
{
        must_encode(fx, ev);
        assert_int_equal(sbx_fold(c->st, ev), SBX_FOLD_ACCEPTED);
        sbx_guard_observe(fx->guard, ev);
}

static sbx_event_t *mk(const tclaim_t *c, sbx_evtype_t type, json_t *payload)
{
        sbx_event_t *ev =
            sbx_event_new(type, c->st->id, c->st->seq + 1, payload);
        sbx_event_set(&ev->producer, "test/1");
        sbx_event_set(&ev->tenant_id, c->tenant);
        sbx_event_set(&ev->session_id, "session-1");
        sbx_event_set(&ev->correlation_id, c->st->id);
        return ev;
}

static void append(fx_t *fx, tclaim_t *c, sbx_evtype_t type, json_t *payload)
{
        sbx_event_t *ev = mk(c, type, payload);
        feed(fx, c, ev);
        sbx_event_destroy(ev);
}

/* ClaimRequested for a task of @p risk; @p network is the client's. */
static void start(fx_t *fx,
                  tclaim_t *c,
                  const char *id,
                  const char *tenant,
                  const char *risk,
                  const char *network)
{
        memset(c, 0, sizeof(*c));
        c->st = sbx_state_new(SBX_AGG_CLAIM, id);
        sbx_fmt(c->tenant, sizeof(c->tenant), "%s", tenant);
        append(fx, c, SBX_EV_CLAIM_REQUESTED,
               json_pack("{s:s, s:{s:s, s:s}, s:s?}", "request_id", id, "task",
                         "text", "a task", "risk", risk, "network_profile",
                         network));
}

static void finish(tclaim_t *c)
{
        sbx_event_destroy(c->plan);
        sbx_state_destroy(c->st);
}

static json_t *intent(double cpu, int64_t memory_mb, int64_t disk_gb)
{
        return json_pack("{s:s, s:f, s:I, s:I}", "workload", "plain-script",
                         "cpu", cpu, "memory_mb", (json_int_t)memory_mb,
                         "disk_gb", (json_int_t)disk_gb);
}

static void propose(fx_t *fx, tclaim_t *c, json_t *in)
{
        sbx_event_destroy(c->plan);
        c->plan =
            mk(c, SBX_EV_PLAN_PROPOSED,
               json_pack("{s:s, s:s, s:s, s:o}", "planner", "rules",
                         "input_hash", "h", "signature", "sig", "intent", in));
        feed(fx, c, c->plan);
}

/* The guard's answer, checked, folded and observed like any event. */
static sbx_event_t *decide(fx_t *fx, tclaim_t *c)
{
        sbx_event_t *ev = sbx_guard_decide(fx->guard, c->plan, c->st,
                                           c->st->seq + 1, "guard/test");
        assert_non_null(ev);
        feed(fx, c, ev);
        return ev;
}

/* A whole claim up to the guard's decision. */
static sbx_event_t *ask(fx_t *fx,
                        tclaim_t *c,
                        const char *id,
                        const char *tenant,
                        const char *risk,
                        json_t *in)
{
        start(fx, c, id, tenant, risk, NULL);
        propose(fx, c, in);
        return decide(fx, c);
}

static const char *cls(const sbx_event_t *ev)
{
        if (ev->type != SBX_EV_PLAN_APPROVED)
                fail_msg(
                    "expected PlanApproved, got %s: %s",
                    sbx_evtype_name(ev->type),
                    json_dumps(json_object_get(ev->payload, "reasons"), 0));
        return sbx_event_str(ev, "resource_class");
}

static void has_reason(const sbx_event_t *ev, const char *needle)
{
        const json_t *rs = json_object_get(ev->payload, "reasons"), *r;
        size_t i;
        char *all;

        json_array_foreach(rs, i, r)
        {
                if (strstr(json_string_value(r), needle))
                        return;
        }
        all = json_dumps(rs, 0);
        fail_msg("%s: no reason holds '%s': %s", sbx_evtype_name(ev->type),
                 needle, all);
}

static void test_small_data_task_gets_python_small(void **state)
{
        fx_t *fx = *state;
        tclaim_t c;
        json_t *in = intent(1, 2048, 10);
        sbx_event_t *ev;

        /* The origin's Excel analysis: pandas on a small file. */
        json_object_set_new(in, "workload", json_string("python-data"));
        json_object_set_new(in, "network_profile",
                            json_string("pypi-readonly"));
        ev = ask(fx, &c, "claim-excel", "acme", "low", in);
        assert_string_equal(cls(ev), "python-small");
        assert_true(sbx_event_num(ev, "cpu", 0) == 1);
        assert_int_equal(sbx_event_int(ev, "memory_mb", 0), 2048);
        assert_int_equal(sbx_event_int(ev, "disk_gb", 0), 10);
        assert_false(sbx_event_bool(ev, "clamped"));
        assert_string_equal(sbx_event_str(ev, "network_profile"),
                            "pypi-readonly");
        assert_string_equal(sbx_event_str(ev, "runtime"), "runc");
        assert_string_equal(sbx_event_str(ev, "template"), "host");
        assert_int_equal(sbx_event_int(ev, "ttl_seconds", 0), 1800);
        has_reason(ev,
                   "python-small (1 CPU / 2048 MB / 10 GB) is the "
                   "smallest class of tenant acme");

        /* The envelope ties the decision to the claim and the plan. */
        assert_int_equal(ev->aggregate, SBX_AGG_CLAIM);
        assert_string_equal(ev->aggregate_id, "claim-excel");
        assert_int_equal(ev->seq, 3);
        assert_string_equal(ev->causation_id, c.plan->event_id);
        assert_string_equal(ev->tenant_id, "acme");
        assert_string_equal(ev->session_id, "session-1");
        assert_string_equal(ev->correlation_id, "claim-excel");
        assert_string_equal(ev->producer, "guard/test");
        assert_int_equal(c.st->phase, SBX_CLAIM_APPROVED);
        assert_string_equal(c.st->resource_class, "python-small");
        sbx_event_destroy(ev);
        finish(&c);
}

static void test_sizes_come_from_the_class_not_the_intent(void **state)
{
        fx_t *fx = *state;
        tclaim_t c;
        sbx_event_t *ev;
        json_t *in;

        /* 1.5 CPU / 3000 MB: the next class up, at the class's size. */
        ev = ask(fx, &c, "claim-ds", "acme", "low", intent(1.5, 3000, 5));
        assert_string_equal(cls(ev), "python-ds");
        assert_true(sbx_event_num(ev, "cpu", 0) == 2);
        assert_int_equal(sbx_event_int(ev, "memory_mb", 0), 4096);
        assert_int_equal(sbx_event_int(ev, "disk_gb", 0), 20);
        sbx_event_destroy(ev);
        finish(&c);

        /* A build of 4 CPUs gets build-medium, not the browser class. */
        ev = ask(fx, &c, "claim-build", "acme", "low", intent(4, 6000, 20));
        assert_string_equal(cls(ev), "build-medium");
        sbx_event_destroy(ev);
        finish(&c);

        /* Between classes of one size, the one the planner names wins,
         * then the one listing the workload. */
        in = intent(4, 8192, 30);
        json_object_set_new(in, "resource_class",
                            json_string("browser-medium"));
        ev = ask(fx, &c, "claim-tie", "acme", "low", in);
        assert_string_equal(cls(ev), "browser-medium");
        sbx_event_destroy(ev);
        finish(&c);
        in = intent(3, 8192, 30);
        json_object_set_new(in, "workload", json_string("browser-automation"));
        ev = ask(fx, &c, "claim-tie2", "acme", "low", in);
        assert_string_equal(cls(ev), "browser-medium");
        sbx_event_destroy(ev);
        finish(&c);

        /* The planner naming a bigger class does not upsize the plan. */
        in = intent(1, 1024, 5);
        json_object_set_new(in, "resource_class", json_string("compute-large"));
        ev = ask(fx, &c, "claim-hint", "demo", "low", in);
        assert_string_equal(cls(ev), "python-small");
        has_reason(ev,
                   "the planner suggested compute-large; the guard sizes "
                   "by the intent's numbers");
        sbx_event_destroy(ev);
        finish(&c);
}

static void test_playwright_gets_browser_medium(void **state)
{
        fx_t *fx = *state;
        tclaim_t c;
        json_t *in = intent(2, 4096, 10);
        sbx_event_t *ev;

        /* The origin's npm install + playwright + chromium screenshot. */
        json_object_set_new(in, "workload", json_string("browser-automation"));
        json_object_set_new(in, "requires_browser", json_true());
        json_object_set_new(in, "template", json_string("node-playwright-v8"));
        json_object_set_new(in, "network_profile",
                            json_string("npm-github-web"));
        json_object_set_new(in, "ttl_seconds", json_integer(2400));
        ev = ask(fx, &c, "claim-pw", "acme", "medium", in);
        assert_string_equal(cls(ev), "browser-medium");
        assert_true(sbx_event_num(ev, "cpu", 0) == 4);
        assert_int_equal(sbx_event_int(ev, "memory_mb", 0), 8192);
        assert_int_equal(sbx_event_int(ev, "disk_gb", 0), 30);
        assert_string_equal(sbx_event_str(ev, "network_profile"),
                            "npm-github-web");
        assert_int_equal(sbx_event_int(ev, "ttl_seconds", 0), 2400);
        /* The template the planner wanted is not offered: the class's. */
        assert_string_equal(sbx_event_str(ev, "template"), "host");
        has_reason(ev,
                   "template node-playwright-v8 is not offered by "
                   "browser-medium; using host");
        sbx_event_destroy(ev);
        finish(&c);
}

static void test_64_cpus_get_the_largest_allowed_class(void **state)
{
        fx_t *fx = *state;
        tclaim_t c;
        json_t *in = intent(64, 524288, 500);
        sbx_event_t *ev;

        ev = ask(fx, &c, "claim-64", "demo", "low", in);
        assert_string_equal(cls(ev), "compute-large");
        assert_true(sbx_event_num(ev, "cpu", 0) == 8);
        assert_int_equal(sbx_event_int(ev, "memory_mb", 0), 16384);
        assert_true(sbx_event_bool(ev, "clamped"));
        has_reason(ev,
                   "asked 64 CPU / 524288 MB / 500 GB; clamped to "
                   "compute-large 8 CPU / 16384 MB / 50 GB");
        sbx_event_destroy(ev);
        finish(&c);

        /* acme may not use compute-large, however the planner names it. */
        in = intent(64, 524288, 500);
        json_object_set_new(in, "resource_class", json_string("compute-large"));
        ev = ask(fx, &c, "claim-64b", "acme", "low", in);
        assert_string_equal(cls(ev), "build-medium");
        assert_true(sbx_event_num(ev, "cpu", 0) == 4);
        assert_true(sbx_event_bool(ev, "clamped"));
        has_reason(ev,
                   "clamped to build-medium 4 CPU / 8192 MB / 30 GB, the "
                   "largest class tenant acme may use");
        has_reason(ev,
                   "the planner suggested compute-large, which the tenant "
                   "may not use");
        sbx_event_destroy(ev);
        finish(&c);
}

static void test_unknown_tenant_and_gpu_are_rejected(void **state)
{
        fx_t *fx = *state;
        tclaim_t c;
        json_t *in;
        sbx_event_t *ev;

        ev = ask(fx, &c, "claim-m", "mallory", "low", intent(1, 1024, 1));
        assert_int_equal(ev->type, SBX_EV_PLAN_REJECTED);
        has_reason(ev, "tenant 'mallory' is not in the policy");
        assert_int_equal(c.st->phase, SBX_CLAIM_REJECTED);
        sbx_event_destroy(ev);
        finish(&c);

        in = intent(4, 16384, 20);
        json_object_set_new(in, "requires_gpu", json_true());
        ev = ask(fx, &c, "claim-gpu", "demo", "low", in);
        assert_int_equal(ev->type, SBX_EV_PLAN_REJECTED);
        has_reason(ev,
                   "a GPU is required, but tenant demo may use no class "
                   "with GPUs");
        sbx_event_destroy(ev);
        finish(&c);
}

static sbx_event_t *ask_network(fx_t *fx,
                                tclaim_t *c,
                                const char *id,
                                const char *risk,
                                const char *client,
                                const char *planner)
{
        json_t *in = intent(1, 1024, 1);
        json_object_set_new(in, "network_profile", json_string(planner));
        start(fx, c, id, "acme", risk, client);
        propose(fx, c, in);
        return decide(fx, c);
}

static void test_network_profiles_are_checked(void **state)
{
        fx_t *fx = *state;
        char long_name[128];
        tclaim_t c;
        sbx_event_t *ev;
        int i;

        ev = ask_network(fx, &c, "claim-web", "low", NULL, "web");
        assert_int_equal(ev->type, SBX_EV_PLAN_REJECTED);
        has_reason(ev, "network profile web is not allowed for tenant acme");
        sbx_event_destroy(ev);
        finish(&c);

        ev = ask_network(fx, &c, "claim-exfil", "low", NULL, "exfil");
        assert_int_equal(ev->type, SBX_EV_PLAN_REJECTED);
        has_reason(ev, "network profile 'exfil' is unknown");
        sbx_event_destroy(ev);
        finish(&c);

        /* A long non-ASCII name cut in its reason is still rejected. */
        for (i = 0; i < 60; i++)
                memcpy(long_name + 1 + 2 * i, "\xc3\xa9", 2);
        long_name[0]   = 'a';
        long_name[121] = '\0';
        ev = ask_network(fx, &c, "claim-utf8", "low", NULL, long_name);
        assert_int_equal(ev->type, SBX_EV_PLAN_REJECTED);
        has_reason(ev, "network profile 'a???");
        sbx_event_destroy(ev);
        finish(&c);

        /* The planner cannot widen what the client asked for. */
        ev = ask_network(fx, &c, "claim-none", "low", "none", "npm-github-web");
        assert_string_equal(cls(ev), "python-small");
        assert_string_equal(sbx_event_str(ev, "network_profile"), "none");
        has_reason(ev, "the client asked for network none");
        sbx_event_destroy(ev);
        finish(&c);
}

static void test_high_risk_gets_runsc_and_no_network(void **state)
{
        fx_t *fx = *state;
        tclaim_t c;
        sbx_event_t *ev;

        ev = ask_network(fx, &c, "claim-hr", "high", NULL, "none");
        assert_string_equal(cls(ev), "python-small");
        assert_string_equal(sbx_event_str(ev, "runtime"), "runsc");
        has_reason(ev, "risk high does not allow runtime runc; using runsc");
        sbx_event_destroy(ev);
        finish(&c);

        ev = ask_network(fx, &c, "claim-hr2", "high", NULL, "pypi-readonly");
        assert_int_equal(ev->type, SBX_EV_PLAN_REJECTED);
        has_reason(ev,
                   "network profile pypi-readonly is not allowed at risk "
                   "high");
        sbx_event_destroy(ev);
        finish(&c);

        /* Medium risk keeps the planner's runc. */
        ev = ask_network(fx, &c, "claim-mr", "medium", NULL, "pypi-readonly");
        assert_string_equal(sbx_event_str(ev, "runtime"), "runc");
        sbx_event_destroy(ev);
        finish(&c);
}

static void test_unseen_claim_is_treated_as_high_risk(void **state)
{
        fx_t *fx           = *state;
        sbx_guard_t *blind = sbx_guard_new(fx->policy);
        tclaim_t c;
        sbx_event_t *ev;

        /* This guard never observed the claim's ClaimRequested. */
        start(fx, &c, "claim-blind", "acme", "low", NULL);
        propose(fx, &c, intent(1, 1024, 1));
        ev = sbx_guard_decide(blind, c.plan, c.st, c.st->seq + 1, "g");
        assert_string_equal(cls(ev), "python-small");
        assert_string_equal(sbx_event_str(ev, "runtime"), "runsc");
        has_reason(ev, "not seen this claim's task risk; it is taken as high");
        sbx_event_destroy(ev);
        finish(&c);
        sbx_guard_destroy(blind);
}

static void test_ttl_is_clamped(void **state)
{
        fx_t *fx = *state;
        tclaim_t c;
        json_t *in = intent(1, 1024, 1);
        sbx_event_t *ev;

        json_object_set_new(in, "ttl_seconds", json_integer(86400));
        ev = ask(fx, &c, "claim-ttl", "acme", "low", in);
        assert_int_equal(sbx_event_int(ev, "ttl_seconds", 0), 7200);
        has_reason(ev,
                   "ttl 86400 s exceeds tenant acme's limit; clamped to "
                   "7200 s");
        sbx_event_destroy(ev);
        finish(&c);
}

static void bind_and_release(fx_t *fx, tclaim_t *c)
{
        append(fx, c, SBX_EV_PLACED,
               json_pack("{s:s, s:s}", "node_id", "n1", "sandbox_id", "sb-1"));
        append(fx, c, SBX_EV_CLAIM_BOUND,
               json_pack("{s:s, s:s, s:I, s:I}", "sandbox_id", "sb-1",
                         "node_id", "n1", "lease_version", (json_int_t)1,
                         "lease_expires_at", (json_int_t)1));
        append(fx, c, SBX_EV_CLAIM_RELEASED, NULL);
}

static void test_quota_exhaustion_and_recovery(void **state)
{
        fx_t *fx = *state;
        tclaim_t c[6];
        sbx_guard_usage_t u;
        sbx_event_t *ev;
        char id[32];
        int i;

        /* acme: 16 CPUs / 32768 MB = four build-medium sandboxes. */
        for (i = 0; i < 4; i++) {
                sbx_fmt(id, sizeof(id), "claim-q%d", i);
                ev = ask(fx, &c[i], id, "acme", "low", intent(4, 8192, 30));
                assert_string_equal(cls(ev), "build-medium");
                sbx_event_destroy(ev);
        }
        assert_int_equal(sbx_guard_usage(fx->guard, "acme", &u), SBX_OK);
        assert_true(u.cpu == 16);
        assert_int_equal(u.memory_mb, 32768);
        assert_int_equal(u.sandboxes, 4);

        ev = ask(fx, &c[4], "claim-q4", "acme", "low", intent(4, 8192, 30));
        assert_int_equal(ev->type, SBX_EV_PLAN_REJECTED);
        has_reason(ev,
                   "quota: tenant acme has 16 of 16 CPUs committed; "
                   "build-medium needs 4 more");
        has_reason(ev, "quota: tenant acme has 32768 of 32768 MB committed");
        sbx_event_destroy(ev);
        /* Another tenant's quota is its own. */
        ev = ask(fx, &c[5], "claim-d", "demo", "low", intent(4, 8192, 30));
        assert_string_equal(cls(ev), "build-medium");
        sbx_event_destroy(ev);
        finish(&c[5]);

        /* One sandbox is bound, then released: room for one more. */
        bind_and_release(fx, &c[0]);
        assert_int_equal(sbx_guard_usage(fx->guard, "acme", &u), SBX_OK);
        assert_int_equal(u.sandboxes, 3);
        finish(&c[4]);
        ev = ask(fx, &c[4], "claim-q5", "acme", "low", intent(4, 8192, 30));
        assert_string_equal(cls(ev), "build-medium");
        sbx_event_destroy(ev);

        /* A cancelled approval frees its share too. */
        append(fx, &c[1], SBX_EV_CLAIM_CANCELLED, NULL);
        assert_int_equal(sbx_guard_usage(fx->guard, "acme", &u), SBX_OK);
        assert_true(u.cpu == 12);
        for (i = 0; i < 5; i++)
                finish(&c[i]);
}

static void test_a_burst_cannot_overshoot_the_quota(void **state)
{
        fx_t *fx = *state;
        tclaim_t c[5];
        sbx_event_t *ev[5];
        char id[32];
        int i;

        /* Five plans decided before any decision is read back. */
        for (i = 0; i < 5; i++) {
                sbx_fmt(id, sizeof(id), "claim-b%d", i);
                start(fx, &c[i], id, "acme", "low", NULL);
                propose(fx, &c[i], intent(4, 8192, 30));
                ev[i] = sbx_guard_decide(fx->guard, c[i].plan, c[i].st,
                                         c[i].st->seq + 1, "g");
                assert_non_null(ev[i]);
        }
        for (i = 0; i < 4; i++)
                assert_string_equal(cls(ev[i]), "build-medium");
        assert_int_equal(ev[4]->type, SBX_EV_PLAN_REJECTED);
        /* A redelivered plan decided again is not counted against
         * itself: the fourth, which filled the quota, still fits. */
        sbx_event_destroy(ev[3]);
        ev[3] = sbx_guard_decide(fx->guard, c[3].plan, c[3].st,
                                 c[3].st->seq + 1, "g");
        assert_string_equal(cls(ev[3]), "build-medium");
        /* Reading the decisions back (twice: redelivery) counts nothing
         * twice, and a second decision for a decided claim is none. */
        for (i = 0; i < 5; i++) {
                feed(fx, &c[i], ev[i]);
                sbx_guard_observe(fx->guard, ev[i]);
                assert_null(sbx_guard_decide(fx->guard, c[i].plan, c[i].st,
                                             c[i].st->seq + 1, "g"));
                sbx_event_destroy(ev[i]);
                finish(&c[i]);
        }
        ev[0] = ask(fx, &c[0], "claim-b5", "acme", "low", intent(1, 512, 1));
        assert_int_equal(ev[0]->type, SBX_EV_PLAN_REJECTED);
        sbx_event_destroy(ev[0]);
        finish(&c[0]);
}

static void test_racing_and_failed_decisions(void **state)
{
        fx_t *fx = *state;
        tclaim_t c;
        sbx_guard_usage_t u;
        sbx_event_t *ev, *racer, *retry;
        sbx_state_t *stale;
        json_t *j;

        /* Another replica's approval wins the seq; ours is superseded. */
        start(fx, &c, "claim-r", "demo", "low", NULL);
        propose(fx, &c, intent(8, 16384, 50));
        ev    = sbx_guard_decide(fx->guard, c.plan, c.st, c.st->seq + 1, "g");
        j     = sbx_state_to_json(c.st);
        stale = sbx_state_from_json(j);
        json_decref(j);
        racer = mk(
            &c, SBX_EV_PLAN_APPROVED,
            json_pack("{s:s, s:f, s:I, s:I, s:s, s:s, s:s, s:I}",
                      "resource_class", "python-small", "cpu", 1.0, "memory_mb",
                      (json_int_t)2048, "disk_gb", (json_int_t)10,
                      "network_profile", "none", "template", "host", "runtime",
                      "runc", "ttl_seconds", (json_int_t)60));
        feed(fx, &c, racer);
        assert_int_equal(sbx_fold(c.st, ev), SBX_FOLD_STALE_SEQ);
        sbx_guard_observe(fx->guard, ev);
        assert_int_equal(sbx_guard_usage(fx->guard, "demo", &u), SBX_OK);
        assert_true(u.cpu == 1);
        assert_int_equal(u.memory_mb, 2048);
        /* A redelivered plan with a stale state: nothing to decide. */
        assert_null(
            sbx_guard_decide(fx->guard, c.plan, stale, stale->seq + 1, "g"));
        sbx_state_destroy(stale);

        /* A final placement failure ends the commitment; a retry not. */
        append(fx, &c, SBX_EV_PLACED,
               json_pack("{s:s, s:s}", "node_id", "n1", "sandbox_id", "sb"));
        retry = mk(&c, SBX_EV_PLACEMENT_FAILED,
                   json_pack("{s:s, s:b}", "reason", "capacity", "final", 0));
        feed(fx, &c, retry);
        assert_int_equal(sbx_guard_usage(fx->guard, "demo", &u), SBX_OK);
        assert_int_equal(u.sandboxes, 1);
        append(fx, &c, SBX_EV_PLACED,
               json_pack("{s:s, s:s}", "node_id", "n2", "sandbox_id", "sb"));
        /* A redelivered old failure changes nothing... */
        sbx_guard_observe(fx->guard, retry);
        sbx_event_destroy(retry);
        append(fx, &c, SBX_EV_PLACEMENT_FAILED,
               json_pack("{s:s, s:b}", "reason", "capacity", "final", 1));
        /* ...and the final one still ends the commitment. */
        assert_int_equal(sbx_guard_usage(fx->guard, "demo", &u), SBX_OK);
        assert_int_equal(u.sandboxes, 0);
        assert_true(u.cpu == 0);
        assert_int_equal(sbx_guard_usage(fx->guard, "mallory", &u),
                         SBX_ERR_NOENT);
        sbx_event_destroy(ev);
        sbx_event_destroy(racer);
        finish(&c);

        /* An approval that was never appended can be forgotten. */
        start(fx, &c, "claim-f", "demo", "low", NULL);
        propose(fx, &c, intent(1, 1024, 1));
        ev = sbx_guard_decide(fx->guard, c.plan, c.st, c.st->seq + 1, "g");
        sbx_guard_usage(fx->guard, "demo", &u);
        assert_int_equal(u.sandboxes, 1);
        sbx_guard_forget(fx->guard, "claim-f");
        sbx_guard_usage(fx->guard, "demo", &u);
        assert_int_equal(u.sandboxes, 0);
        sbx_event_destroy(ev);
        finish(&c);
}

static void test_tenant_limits_from_the_policy(void **state)
{
        fx_t *fx = fx_new(
            "class.s.cpu = 0.5\n"
            "class.s.memory_mb = 512\n"
            "class.s.disk_gb = 1\n"
            "tenant.cautious.classes = s\n"
            "tenant.cautious.max_cpu = 8\n"
            "tenant.cautious.max_memory_mb = 8192\n"
            "tenant.cautious.max_sandboxes = 2\n"
            "tenant.cautious.max_risk = medium\n");
        tclaim_t c[3];
        sbx_event_t *ev;
        (void)state;

        ev = ask(fx, &c[0], "c0", "cautious", "high", intent(0.5, 256, 1));
        assert_int_equal(ev->type, SBX_EV_PLAN_REJECTED);
        has_reason(ev, "risk high exceeds tenant cautious's max_risk medium");
        sbx_event_destroy(ev);
        finish(&c[0]);

        ev = ask(fx, &c[0], "c1", "cautious", "medium", intent(0.1, 256, 1));
        assert_string_equal(cls(ev), "s");
        assert_true(sbx_event_num(ev, "cpu", 0) == 0.5);
        sbx_event_destroy(ev);
        ev = ask(fx, &c[1], "c2", "cautious", "low", intent(0.1, 256, 1));
        assert_string_equal(cls(ev), "s");
        sbx_event_destroy(ev);
        ev = ask(fx, &c[2], "c3", "cautious", "low", intent(0.1, 256, 1));
        assert_int_equal(ev->type, SBX_EV_PLAN_REJECTED);
        has_reason(ev, "quota: tenant cautious already has 2 of 2 sandboxes");
        sbx_event_destroy(ev);
        finish(&c[0]);
        finish(&c[1]);
        finish(&c[2]);
        fx_destroy(fx);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        const struct CMUnitTest tests[] = {
            T(test_small_data_task_gets_python_small),
            T(test_sizes_come_from_the_class_not_the_intent),
            T(test_playwright_gets_browser_medium),
            T(test_64_cpus_get_the_largest_allowed_class),
            T(test_unknown_tenant_and_gpu_are_rejected),
            T(test_network_profiles_are_checked),
            T(test_high_risk_gets_runsc_and_no_network),
            T(test_unseen_claim_is_treated_as_high_risk),
            T(test_ttl_is_clamped),
            T(test_quota_exhaustion_and_recovery),
            T(test_a_burst_cannot_overshoot_the_quota),
            T(test_racing_and_failed_decisions),
            T(test_tenant_limits_from_the_policy),
        };
#undef T
        return cmocka_run_group_tests(tests, NULL, NULL);
}
