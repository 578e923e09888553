/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the scheduler's pure decisions (DESIGN.md §6). The reuse check
 * never crosses a tenant, a session, a taint, a runtime or unknown
 * pollution (the design origin's turn 3: a python-small sandbox does not
 * serve a browser-medium claim) and prefers the fresher of two sandboxes.
 * Placement sees only nodes that are alive, healthy, not draining, run
 * the plan's runtime and have room (counting what was placed since their
 * last heartbeat), prefers a warm pool, and agrees with itself for one
 * seed. Node statuses go through the real codec and the node registry as
 * an executor's heartbeat would.
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
#include "stages/nodes.h"
#include "stages/scheduler.h"

#define NOW 1789200000000000LL /* µs */

#include "fixture.h"

/* ---- reuse ------------------------------------------------------------- */

static void put(sbx_state_t *st,
                sbx_evtype_t t,
                json_t *payload,
                const char *tenant,
                const char *session)
{
        sbx_event_t *ev = sbx_event_new(t, st->id, st->seq + 1, payload);
        sbx_verdict_t v;

        sbx_event_set(&ev->producer, "test/1");
        sbx_event_set(&ev->correlation_id, "c-0");
        sbx_event_set(&ev->tenant_id, tenant);
        sbx_event_set(&ev->session_id, session);
        if (sbx_evtype_fenced(t))
                ev->lease_version = st->lease_version;
        v = sbx_fold(st, ev);
        if (v != SBX_FOLD_ACCEPTED)
                fail_msg("setup: %s in %s: %s", sbx_evtype_name(t),
                         sbx_phase_name(st->aggregate, st->phase),
                         sbx_verdict_name(v));
        sbx_event_destroy(ev);
}

static void sb_put(sbx_state_t *st, sbx_evtype_t t, json_t *payload)
{
        put(st, t, payload, st->tenant_id, st->session_id);
}

/* One lease of @p st from grant to IDLE again. */
static void lease_cycle(sbx_state_t *st)
{
        sb_put(st, SBX_EV_LEASE_GRANTED,
               json_pack("{s:s, s:I, s:I}", "owner", "c-0", "lease_version",
                         (json_int_t)(st->lease_version + 1), "expires_at",
                         (json_int_t)(NOW + 300 * 1000000LL)));
        sb_put(st, SBX_EV_LEASE_RELEASED, json_pack("{s:s}", "reason", "done"));
        sb_put(st, SBX_EV_SANITIZED, NULL);
}

/* An IDLE sandbox of tenant/session made for class/runtime, after
 * @p leases leases. */
static sbx_state_t *idle_sandbox(const char *tenant,
                                 const char *session,
                                 const char *cls,
                                 const char *runtime,
                                 int leases)
{
        sbx_state_t *st = sbx_state_new(SBX_AGG_SANDBOX, "sb-1");
        int i;

        put(st, SBX_EV_SANDBOX_CREATED,
            json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:f, s:I}", "origin",
                      "claim", "node_id", "n1", "pool", "", "resource_class",
                      cls, "template", "host", "runtime", runtime,
                      "network_profile", "none", "cpu", 1.0, "memory_mb",
                      (json_int_t)2048),
            tenant, session);
        sb_put(st, SBX_EV_PROVISIONED,
               json_pack("{s:s, s:I}", "runtime_instance", "sbx-1",
                         "startup_us", (json_int_t)47000));
        for (i = 0; i < leases; i++)
                lease_cycle(st);
        assert_int_equal(st->phase, leases ? SBX_SB_IDLE : SBX_SB_READY);
        return st;
}

static sbx_state_t *claim_of(const char *tenant, const char *session)
{
        sbx_state_t *st = sbx_state_new(SBX_AGG_CLAIM, "c-2");
        put(st, SBX_EV_CLAIM_REQUESTED,
            json_pack("{s:s, s:{s:s}}", "request_id", "r-2", "task", "text",
                      "total the sales column"),
            tenant, session);
        return st;
}

static json_t *plan_for(const char *cls, const char *runtime)
{
        return json_pack("{s:s, s:s, s:s, s:s, s:f, s:I}", "resource_class",
                         cls, "runtime", runtime, "template", "host",
                         "network_profile", "none", "cpu", 1.0, "memory_mb",
                         (json_int_t)2048);
}

/* Asserts reuse is refused with a reason starting with @p prefix. */
static void refused(const sbx_state_t *sb,
                    const sbx_state_t *claim,
                    const json_t *plan,
                    const char *prefix)
{
        char reason[256] = "";
        double score =
            sbx_reuse_check(sb, claim, plan, NULL, reason, sizeof(reason));
        if (score >= 0)
                fail_msg("reuse accepted (%.2f: %s), want %s", score, reason,
                         prefix);
        if (strncmp(reason, prefix, strlen(prefix)))
                fail_msg("reason '%s' does not start with '%s'", reason,
                         prefix);
}

static double accepted(const sbx_state_t *sb,
                       const sbx_state_t *claim,
                       const json_t *plan)
{
        char reason[256] = "";
        double score =
            sbx_reuse_check(sb, claim, plan, NULL, reason, sizeof(reason));
        if (!(score > 0 && score <= 1))
                fail_msg("reuse refused or out of (0,1]: %.3f: %s", score,
                         reason);
        assert_non_null(strstr(reason, "same_session"));
        return score;
}

static void test_reuse_same_session_accepted(void **state)
{
        sbx_state_t *sb =
            idle_sandbox("acme", "s-1", "python-small", "runc", 1);
        sbx_state_t *claim = claim_of("acme", "s-1");
        json_t *plan       = plan_for("python-small", "runc");
        (void)state;

        accepted(sb, claim, plan);
        json_decref(plan);
        sbx_state_destroy(claim);
        sbx_state_destroy(sb);
}

/* A hibernating sandbox of the session is reused (the executor resumes
 * it first), just behind an idle one. */
static void test_reuse_hibernating_accepted_behind_idle(void **state)
{
        sbx_state_t *idle =
            idle_sandbox("acme", "s-1", "python-small", "runc", 1);
        sbx_state_t *frozen =
            idle_sandbox("acme", "s-1", "python-small", "runc", 1);
        sbx_state_t *claim = claim_of("acme", "s-1");
        json_t *plan       = plan_for("python-small", "runc");
        (void)state;

        sb_put(frozen, SBX_EV_HIBERNATED, json_pack("{s:s}", "reason", "idle"));
        assert_int_equal(frozen->phase, SBX_SB_HIBERNATING);
        assert_true(accepted(frozen, claim, plan) <
                    accepted(idle, claim, plan));
        json_decref(plan);
        sbx_state_destroy(claim);
        sbx_state_destroy(idle);
        sbx_state_destroy(frozen);
}

static void test_reuse_never_across_tenants_or_sessions(void **state)
{
        sbx_state_t *sb =
            idle_sandbox("acme", "s-1", "python-small", "runc", 1);
        sbx_state_t *other_tenant  = claim_of("globex", "s-1");
        sbx_state_t *other_session = claim_of("acme", "s-2");
        sbx_state_t *no_session    = claim_of("acme", NULL);
        json_t *plan               = plan_for("python-small", "runc");
        (void)state;

        refused(sb, other_tenant, plan, "tenant_mismatch");
        refused(sb, other_session, plan, "session_mismatch");
        refused(sb, no_session, plan, "session_mismatch");
        json_decref(plan);
        sbx_state_destroy(other_tenant);
        sbx_state_destroy(other_session);
        sbx_state_destroy(no_session);
        sbx_state_destroy(sb);
}

static void test_reuse_refused_when_tainted_or_busy(void **state)
{
        sbx_state_t *tainted =
            idle_sandbox("acme", "s-1", "python-small", "runc", 1);
        sbx_state_t *busy =
            idle_sandbox("acme", "s-1", "python-small", "runc", 1);
        sbx_state_t *fresh =
            idle_sandbox("acme", "s-1", "python-small", "runc", 0);
        sbx_state_t *claim = claim_of("acme", "s-1");
        json_t *plan       = plan_for("python-small", "runc");
        (void)state;

        sb_put(tainted, SBX_EV_TAINTED,
               json_pack("{s:s}", "reason", "wrote to /etc/ld.so.preload"));
        refused(tainted, claim, plan, "tainted: wrote to /etc/ld.so.preload");

        sb_put(busy, SBX_EV_LEASE_GRANTED,
               json_pack("{s:s, s:I, s:I}", "owner", "c-9", "lease_version",
                         (json_int_t)2, "expires_at", (json_int_t)NOW));
        refused(busy, claim, plan, "not_idle: LEASED");
        refused(fresh, claim, plan, "not_idle: READY");
        sb_put(busy, SBX_EV_LEASE_RELEASED, NULL);
        refused(busy, claim, plan, "not_idle: SANITIZING");

        json_decref(plan);
        sbx_state_destroy(claim);
        sbx_state_destroy(tainted);
        sbx_state_destroy(busy);
        sbx_state_destroy(fresh);
}

/* The design origin's turn 3: the session's python-small sandbox is idle,
 * but the next task needs a browser. */
static void test_reuse_refused_on_runtime_capability_mismatch(void **state)
{
        sbx_state_t *sb =
            idle_sandbox("acme", "s-1", "python-small", "runc", 1);
        sbx_state_t *claim     = claim_of("acme", "s-1");
        json_t *browser        = plan_for("browser-medium", "runc");
        json_t *gvisor         = plan_for("python-small", "runsc");
        json_t *other_template = plan_for("python-small", "runc");
        json_t *other_network  = plan_for("python-small", "runc");
        char reason[256];
        (void)state;

        refused(sb, claim, browser, "runtime_capability_mismatch");
        assert_true(sbx_reuse_check(sb, claim, browser, NULL, reason,
                                    sizeof(reason)) < 0);
        assert_non_null(strstr(reason, "browser-medium"));
        refused(sb, claim, gvisor, "runtime_capability_mismatch");

        json_object_set_new(other_template, "template", json_string("node20"));
        refused(sb, claim, other_template, "template_mismatch");
        json_object_set_new(other_network, "network_profile",
                            json_string("pypi-readonly"));
        refused(sb, claim, other_network, "network_profile_mismatch");

        json_decref(browser);
        json_decref(gvisor);
        json_decref(other_template);
        json_decref(other_network);
        sbx_state_destroy(claim);
        sbx_state_destroy(sb);
}

static void environment(sbx_state_t *sb, int dirty_level)
{
        sb_put(sb, SBX_EV_ENVIRONMENT_UPDATED,
               json_pack("{s:{s:s, s:s, s:i}}", "manifest", "template_digest",
                         "sha256:x", "fingerprint", "env-a912", "dirty_level",
                         dirty_level));
        assert_int_equal(sb->dirty_level, dirty_level);
}

static void test_reuse_refused_on_unknown_pollution(void **state)
{
        sbx_state_t *sb =
            idle_sandbox("acme", "s-1", "python-small", "runc", 1);
        sbx_state_t *claim = claim_of("acme", "s-1");
        json_t *plan       = plan_for("python-small", "runc");
        double clean, dirty;
        (void)state;

        clean = accepted(sb, claim, plan);
        environment(sb, 1);
        dirty = accepted(sb, claim, plan);
        assert_true(dirty < clean);
        environment(sb, 3);
        refused(sb, claim, plan, "unknown_pollution");

        json_decref(plan);
        sbx_state_destroy(claim);
        sbx_state_destroy(sb);
}

/* The origin's second turn: the sandbox installed pandas and openpyxl;
 * the task needs pandas and matplotlib. Reused, with matplotlib to add;
 * a pinned version it does not have is a conflict. */
static void test_reuse_weighs_installed_packages(void **state)
{
        sbx_state_t *sb =
            idle_sandbox("acme", "s-1", "python-small", "runc", 1);
        sbx_state_t *claim = claim_of("acme", "s-1");
        json_t *plan       = plan_for("python-small", "runc");
        char reason[512]   = "";
        double none, one;
        (void)state;

        sb_put(
            sb, SBX_EV_ENVIRONMENT_UPDATED,
            json_pack("{s:{s:s, s:s, s:i, s:[{s:s, s:s}, {s:s, s:s}]}}",
                      "manifest", "template_digest", "sha256:x", "fingerprint",
                      "env-a912", "dirty_level", 2, "installed_capabilities",
                      "name", "openpyxl", "version", "3.1.5", "name", "pandas",
                      "version", "3.1.1"));
        assert_string_equal(sb->env_packages, "openpyxl==3.1.5,pandas==3.1.1");

        json_object_set_new(plan, "packages",
                            json_pack("[{s:s}]", "name", "pandas"));
        none = sbx_reuse_check(sb, claim, plan, NULL, reason, sizeof(reason));
        assert_non_null(strstr(reason, "missing=- "));

        json_object_set_new(plan, "packages",
                            json_pack("[{s:s}, {s:s}]", "name", "pandas",
                                      "name", "matplotlib"));
        one = sbx_reuse_check(sb, claim, plan, NULL, reason, sizeof(reason));
        assert_true(one > 0 && one < none);
        assert_non_null(strstr(reason, "required=pandas,matplotlib"));
        assert_non_null(strstr(reason, "missing=matplotlib"));
        assert_non_null(strstr(reason, "existing=openpyxl,pandas "));
        assert_non_null(strstr(reason, "dependency_conflict=false"));

        json_object_set_new(plan, "packages",
                            json_pack("[{s:s, s:s}]", "name", "pandas",
                                      "constraint", "==3.1.1"));
        assert_true(
            sbx_reuse_check(sb, claim, plan, NULL, reason, sizeof(reason)) > 0);
        /* one excluded version: a small change, in an isolated venv,
         * scored below any install into the sandbox itself */
        json_object_set_new(
            plan, "packages",
            json_pack("[{s:s, s:s}, {s:s}]", "name", "pandas", "constraint",
                      "==2.2.3", "name", "matplotlib"));
        assert_true(sbx_reuse_check(sb, claim, plan, NULL, reason,
                                    sizeof(reason)) < one);
        assert_non_null(
            strstr(reason,
                   "dependency_conflict=true: isolated venv, the task "
                   "needs pandas==2.2.3, 3.1.1 is installed"));
        /* two: the environment would be another; refused */
        json_object_set_new(plan, "packages",
                            json_pack("[{s:s, s:s}, {s:s, s:s}]", "name",
                                      "pandas", "constraint", "==2.2.3", "name",
                                      "openpyxl", "constraint", "<3"));
        refused(sb, claim, plan, "dependency_conflict");
        assert_true(
            sbx_reuse_check(sb, claim, plan, NULL, reason, sizeof(reason)) < 0);
        assert_non_null(strstr(reason, "(2 conflicts)"));

        json_decref(plan);
        sbx_state_destroy(claim);
        sbx_state_destroy(sb);
}

/* A runtime version change: the node now makes sandboxes from another
 * digest of the template; one made from the old one is never reused. */
static void test_reuse_refused_on_runtime_version_change(void **state)
{
        sbx_state_t *sb =
            idle_sandbox("acme", "s-1", "python-small", "runc", 1);
        sbx_state_t *claim = claim_of("acme", "s-1");
        json_t *plan       = plan_for("python-small", "runc");
        char reason[256];
        (void)state;

        free(sb->template_digest);
        sb->template_digest = strdup("sha256:aaaa");
        assert_true(sbx_reuse_check(sb, claim, plan, "sha256:aaaa", reason,
                                    sizeof(reason)) > 0);
        assert_true(sbx_reuse_check(sb, claim, plan, "sha256:bbbb", reason,
                                    sizeof(reason)) < 0);
        assert_non_null(strstr(reason, "runtime_version_change"));
        json_decref(plan);
        sbx_state_destroy(claim);
        sbx_state_destroy(sb);
}

static void test_reuse_prefers_fewer_prior_leases(void **state)
{
        sbx_state_t *once =
            idle_sandbox("acme", "s-1", "python-small", "runc", 1);
        sbx_state_t *thrice =
            idle_sandbox("acme", "s-1", "python-small", "runc", 3);
        sbx_state_t *claim = claim_of("acme", "s-1");
        json_t *plan       = plan_for("python-small", "runc");
        (void)state;

        assert_true(accepted(once, claim, plan) >
                    accepted(thrice, claim, plan));
        json_decref(plan);
        sbx_state_destroy(claim);
        sbx_state_destroy(once);
        sbx_state_destroy(thrice);
}

/* ---- placement --------------------------------------------------------- */

/* A node with 8 CPUs, 16 GiB and room for 10 sandboxes, idle, fresh. */
static json_t *node_status(const char *id, int64_t at)
{
        return json_pack(
            "{s:s, s:I, s:b, s:b, s:f, s:I, s:i, s:f, s:I, s:i, "
            "s:[s,s], s:[s], s:i, s:I}",
            "node_id", id, "at", (json_int_t)at, "healthy", 1, "draining", 0,
            "cpu_capacity", 8.0, "memory_mb_capacity", (json_int_t)16384,
            "max_sandboxes", 10, "cpu_committed", 0.0, "memory_mb_committed",
            (json_int_t)0, "sandboxes", 0, "runtimes", "runc", "runsc",
            "templates", "host", "recent_ooms", 0, "seq", (json_int_t)1);
}

/* Publishes @p st (stolen) to the registry as sbx.nodes.v1 would. */
static void heartbeat(sbx_nodes_t *nodes, json_t *st)
{
        unsigned char *buf = NULL;
        size_t len         = 0;
        char err[512]      = "";

        if (sbx_codec_encode(codec, SBX_SCHEMA_NODE_STATUS, st, &buf, &len, err,
                             sizeof(err)))
                fail_msg("node status does not encode: %s", err);
        assert_int_equal(sbx_nodes_update(nodes, codec, buf, len), 0);
        free(buf);
        json_decref(st);
}

static json_t *with(json_t *st, const char *key, json_t *v)
{
        json_object_set_new(st, key, v);
        return st;
}

static json_t *with_pool(json_t *st, const char *pool, int ready)
{
        json_t *pools = json_object_get(st, "pools");
        if (!pools)
                json_object_set_new(st, "pools", pools = json_array());
        json_array_append_new(
            pools,
            json_pack("{s:s, s:s, s:s, s:s, s:i, s:i}", "pool", pool, "runtime",
                      "runc", "resource_class", "python-small", "template",
                      "host", "ready", ready, "pool_max", 4));
        return st;
}

static const char *place(sbx_nodes_t *nodes,
                         const json_t *plan,
                         uint64_t seed,
                         const char *const *refused_nodes,
                         size_t nrefused,
                         sbx_placement_t *out)
{
        if (sbx_place(nodes, plan, seed, refused_nodes, nrefused, NOW, out))
                fail_msg("placement failed: %s", out->reason);
        assert_non_null(out->node);
        return out->node->id;
}

static void no_place(sbx_nodes_t *nodes,
                     const json_t *plan,
                     const char *const *refused_nodes,
                     size_t nrefused,
                     const char *reason)
{
        sbx_placement_t out;
        if (!sbx_place(nodes, plan, 7, refused_nodes, nrefused, NOW, &out))
                fail_msg("placed on %s, expected no feasible node",
                         out.node->id);
        assert_null(out.node);
        assert_int_equal(out.candidates, 0);
        if (strcmp(out.reason, reason))
                fail_msg("reason '%s', want '%s'", out.reason, reason);
}

static void test_pool_key(void **state)
{
        json_t *plan = plan_for("browser-medium", "runsc");
        char key[64];
        (void)state;
        json_object_set_new(plan, "template", json_string("playwright"));
        sbx_pool_key(plan, key, sizeof(key));
        assert_string_equal(key, "runsc/browser-medium/playwright");
        json_decref(plan);
}

/*
 * Each node but one is unusable for one reason; whatever the seed, the
 * plan lands on the good one.
 */
static void test_place_only_on_live_healthy_capable_nodes(void **state)
{
        sbx_nodes_t *nodes = sbx_nodes_new();
        json_t *plan       = plan_for("python-small", "runc");
        sbx_placement_t out;
        uint64_t seed;
        (void)state;

        heartbeat(nodes, node_status("silent", NOW - SBX_NODE_GRACE_US - 1));
        heartbeat(nodes,
                  with(node_status("sick", NOW), "healthy", json_false()));
        heartbeat(nodes,
                  with(node_status("draining", NOW), "draining", json_true()));
        heartbeat(nodes, with(node_status("gvisor-only", NOW), "runtimes",
                              json_pack("[s]", "runsc")));
        heartbeat(nodes, with(node_status("cpu-full", NOW), "cpu_committed",
                              json_real(7.5)));
        heartbeat(nodes, with(node_status("mem-full", NOW),
                              "memory_mb_committed", json_integer(15000)));
        heartbeat(nodes, with(node_status("count-full", NOW), "sandboxes",
                              json_integer(10)));
        heartbeat(nodes, node_status("good", NOW - SBX_NODE_GRACE_US));
        assert_int_equal(nodes->n, 8);

        for (seed = 1; seed <= 64; seed++) {
                assert_string_equal(place(nodes, plan, seed, NULL, 0, &out),
                                    "good");
                assert_int_equal(out.candidates, 1);
                assert_string_equal(out.pool, "runc/python-small/host");
        }
        /* Only the node that really runs gVisor takes a runsc plan. */
        json_object_set_new(plan, "runtime", json_string("runsc"));
        heartbeat(nodes, with(node_status("good", NOW), "runtimes",
                              json_pack("[s]", "runc")));
        assert_string_equal(place(nodes, plan, 3, NULL, 0, &out),
                            "gvisor-only");
        assert_int_equal(out.candidates, 1);
        json_decref(plan);
        sbx_nodes_destroy(nodes);
}

/* What the scheduler placed since a node's last heartbeat counts. */
static void test_place_counts_placements_since_the_heartbeat(void **state)
{
        sbx_nodes_t *nodes          = sbx_nodes_new();
        json_t *plan                = plan_for("python-small", "runc");
        const char *refused_nodes[] = {"b"};
        sbx_placement_t out;
        sbx_node_t *a;
        (void)state;

        heartbeat(nodes,
                  with(node_status("a", NOW), "cpu_committed", json_real(6.0)));
        heartbeat(nodes, node_status("b", NOW));
        a = sbx_nodes_get(nodes, "a");
        assert_non_null(a);
        assert_string_equal(place(nodes, plan, 1, refused_nodes, 1, &out), "a");

        a->extra_cpu = 1.5; /* 6 + 1.5 + 1 > 8 */
        no_place(nodes, plan, refused_nodes, 1,
                 "no feasible node for runc/python-small/host (1.0 CPU, 2048 "
                 "MB): 1 node(s) alive, 1 refused");
        a->extra_cpu = 0;
        a->extra_mem = 14500; /* 14500 + 2048 > 16384 */
        no_place(nodes, plan, refused_nodes, 1,
                 "no feasible node for runc/python-small/host (1.0 CPU, 2048 "
                 "MB): 1 node(s) alive, 1 refused");
        a->extra_mem = 0;
        a->extra_n   = 10;
        no_place(nodes, plan, refused_nodes, 1,
                 "no feasible node for runc/python-small/host (1.0 CPU, 2048 "
                 "MB): 1 node(s) alive, 1 refused");

        /* A newer heartbeat includes them in its commitments. */
        heartbeat(nodes, with(node_status("a", NOW + 1), "cpu_committed",
                              json_real(6.0)));
        assert_int_equal(a->extra_n, 0);
        assert_string_equal(place(nodes, plan, 1, refused_nodes, 1, &out), "a");
        /* An older, replayed heartbeat changes nothing. */
        heartbeat(nodes, with(node_status("a", NOW - 10), "cpu_committed",
                              json_real(8.0)));
        assert_string_equal(place(nodes, plan, 1, refused_nodes, 1, &out), "a");
        json_decref(plan);
        sbx_nodes_destroy(nodes);
}

static void test_place_skips_refused_nodes(void **state)
{
        sbx_nodes_t *nodes          = sbx_nodes_new();
        json_t *plan                = plan_for("python-small", "runc");
        const char *refused_nodes[] = {"n1", "n3"};
        sbx_placement_t out;
        uint64_t seed;
        (void)state;

        heartbeat(nodes, node_status("n1", NOW));
        heartbeat(nodes, node_status("n2", NOW));
        heartbeat(nodes, node_status("n3", NOW));
        for (seed = 1; seed <= 64; seed++)
                assert_string_equal(
                    place(nodes, plan, seed, refused_nodes, 2, &out), "n2");
        heartbeat(nodes, with(node_status("n2", NOW), "draining", json_true()));
        no_place(nodes, plan, refused_nodes, 2,
                 "no feasible node for runc/python-small/host (1.0 CPU, 2048 "
                 "MB): 0 node(s) alive, 2 refused");
        json_decref(plan);
        sbx_nodes_destroy(nodes);
}

static void test_place_prefers_a_warm_pool(void **state)
{
        sbx_nodes_t *nodes = sbx_nodes_new();
        json_t *plan       = plan_for("python-small", "runc");
        sbx_placement_t out;
        uint64_t seed;
        (void)state;

        /* Three nodes (K = 3: all are sampled). "cold" has a warm
         * sandbox, but of another pool, and the most headroom. */
        heartbeat(nodes, with_pool(with(node_status("busy", NOW),
                                        "cpu_committed", json_real(4.0)),
                                   "runc/python-small/host", 2));
        heartbeat(nodes, with_pool(node_status("cold", NOW),
                                   "runc/browser-medium/host", 3));
        heartbeat(nodes, with_pool(node_status("empty", NOW),
                                   "runc/python-small/host", 0));
        for (seed = 1; seed <= 64; seed++) {
                assert_string_equal(place(nodes, plan, seed, NULL, 0, &out),
                                    "busy");
                assert_true(out.warm);
                assert_int_equal(out.candidates, 3);
                assert_non_null(strstr(out.reason, "(warm)"));
        }
        json_decref(plan);
        sbx_nodes_destroy(nodes);
}

static void test_place_is_deterministic_per_seed(void **state)
{
        sbx_nodes_t *nodes = sbx_nodes_new();
        json_t *plan       = plan_for("python-small", "runc");
        sbx_placement_t out;
        char id[16], first[16];
        uint64_t seed;
        int i, distinct = 0;
        (void)state;

        /* Twenty equal nodes: only the sample decides. */
        for (i = 0; i < 20; i++) {
                sbx_fmt(id, sizeof(id), "n%02d", i);
                heartbeat(nodes, node_status(id, NOW));
        }
        for (seed = 1; seed <= 50; seed++) {
                sbx_fmt(first, sizeof(first), "%s",
                        place(nodes, plan, seed, NULL, 0, &out));
                assert_int_equal(out.candidates, 20);
                for (i = 0; i < 5; i++)
                        assert_string_equal(
                            place(nodes, plan, seed, NULL, 0, &out), first);
                if (strcmp(first,
                           place(nodes, plan, seed + 1000, NULL, 0, &out)))
                        distinct++;
        }
        /* ...and different seeds spread claims over the nodes. */
        assert_true(distinct > 10);
        json_decref(plan);
        sbx_nodes_destroy(nodes);
}

static void test_place_reports_no_feasible_node(void **state)
{
        sbx_nodes_t *nodes = sbx_nodes_new();
        json_t *plan       = plan_for("python-small", "runc");
        (void)state;

        no_place(nodes, plan, NULL, 0,
                 "no feasible node for runc/python-small/host (1.0 CPU, 2048 "
                 "MB): 0 node(s) alive, 0 refused");
        heartbeat(nodes, node_status("small", NOW));
        heartbeat(nodes, node_status("gone", NOW - 60 * 1000000LL));
        json_object_set_new(plan, "cpu", json_real(16.0));
        no_place(nodes, plan, NULL, 0,
                 "no feasible node for runc/python-small/host (16.0 CPU, 2048 "
                 "MB): 1 node(s) alive, 0 refused");
        json_decref(plan);
        sbx_nodes_destroy(nodes);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_reuse_same_session_accepted),
            cmocka_unit_test(test_reuse_hibernating_accepted_behind_idle),
            cmocka_unit_test(test_reuse_never_across_tenants_or_sessions),
            cmocka_unit_test(test_reuse_refused_when_tainted_or_busy),
            cmocka_unit_test(test_reuse_refused_on_runtime_capability_mismatch),
            cmocka_unit_test(test_reuse_refused_on_unknown_pollution),
            cmocka_unit_test(test_reuse_weighs_installed_packages),
            cmocka_unit_test(test_reuse_refused_on_runtime_version_change),
            cmocka_unit_test(test_reuse_prefers_fewer_prior_leases),
            cmocka_unit_test(test_pool_key),
            cmocka_unit_test(test_place_only_on_live_healthy_capable_nodes),
            cmocka_unit_test(test_place_counts_placements_since_the_heartbeat),
            cmocka_unit_test(test_place_skips_refused_nodes),
            cmocka_unit_test(test_place_prefers_a_warm_pool),
            cmocka_unit_test(test_place_is_deterministic_per_seed),
            cmocka_unit_test(test_place_reports_no_feasible_node),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
