/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the keeper's rule: what time makes true. A lease expires only
 * after its deadline and fenced with the version it expires; an idle
 * sandbox hibernates; a sandbox whose node went silent is lost, then
 * destroyed, then terminated, and never loops (the regression of a
 * sandbox declared LOST again while RECYCLING, forever); a bound claim
 * follows its sandbox. Every decision must encode with the real codec and
 * be accepted by the fold on the state it was decided on.
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
#include "stages/keeper.h"

#define T0  1789200000000000LL /* µs: when the sandbox was created */
#define SEC 1000000LL

static sbx_codec_t *codec;
static sbx_keeper_conf_t conf;

static int setup(void **state)
{
        char err[256];
        (void)state;
        codec = sbx_codec_new(err, sizeof(err));
        sbx_keeper_conf_default(&conf);
        return codec ? 0 : -1;
}

static int teardown(void **state)
{
        (void)state;
        sbx_codec_destroy(codec);
        return 0;
}

/* Appends an event of @p t at time @p at to @p st; must be accepted. */
static void put_at(sbx_state_t *st, sbx_evtype_t t, json_t *payload, int64_t at)
{
        sbx_event_t *ev = sbx_event_new(t, st->id, st->seq + 1, payload);
        sbx_verdict_t v;

        ev->occurred_at = at;
        sbx_event_set(&ev->producer, "test/1");
        sbx_event_set(&ev->correlation_id, "c-1");
        sbx_event_set(&ev->tenant_id, "acme");
        sbx_event_set(&ev->session_id, "s-1");
        if (sbx_evtype_fenced(t))
                ev->lease_version = st->lease_version;
        v = sbx_fold(st, ev);
        if (v != SBX_FOLD_ACCEPTED)
                fail_msg("setup: %s in %s: %s", sbx_evtype_name(t),
                         sbx_phase_name(st->aggregate, st->phase),
                         sbx_verdict_name(v));
        sbx_event_destroy(ev);
}

static void grant(sbx_state_t *st, int64_t at, int64_t expires_at)
{
        put_at(st, SBX_EV_LEASE_GRANTED,
               json_pack("{s:s, s:I, s:I}", "owner", "c-1", "lease_version",
                         (json_int_t)(st->lease_version + 1), "expires_at",
                         (json_int_t)expires_at),
               at);
}

/* A sandbox on node n1, created at T0 and READY. */
static sbx_state_t *ready_sandbox(void)
{
        sbx_state_t *st = sbx_state_new(SBX_AGG_SANDBOX, "sb-1");
        put_at(st, SBX_EV_SANDBOX_CREATED,
               json_pack("{s:s, s:s, s:s, s:s, s:s, s:f, s:I}", "origin",
                         "claim", "node_id", "n1", "resource_class",
                         "python-small", "template", "host", "runtime", "runc",
                         "cpu", 1.0, "memory_mb", (json_int_t)2048),
               T0);
        put_at(st, SBX_EV_PROVISIONED,
               json_pack("{s:s, s:I}", "runtime_instance", "sbx-1",
                         "startup_us", (json_int_t)47000),
               T0 + SEC);
        return st;
}

/* Leased at T0 + 2 s until @p expires_at. */
static sbx_state_t *leased_sandbox(int64_t expires_at)
{
        sbx_state_t *st = ready_sandbox();
        grant(st, T0 + 2 * SEC, expires_at);
        return st;
}

/* Leased at T0 + 2 s, released (and sanitized) at @p at: IDLE. */
static sbx_state_t *idle_sandbox(int64_t at)
{
        sbx_state_t *st = leased_sandbox(T0 + 3600 * SEC);
        put_at(st, SBX_EV_LEASE_RELEASED, NULL, at);
        put_at(st, SBX_EV_SANITIZED, NULL, at);
        assert_int_equal(st->phase, SBX_SB_IDLE);
        return st;
}

/* The status of node n1 as last heard at @p at. */
typedef struct tnode_s {
        sbx_node_t node;
} tnode_t;

static void node_at(tnode_t *n, int64_t at)
{
        json_decref(n->node.status);
        memset(n, 0, sizeof(*n));
        n->node.id     = "n1";
        n->node.at     = at;
        n->node.status = json_pack("{s:s, s:I, s:b}", "node_id", "n1", "at",
                                   (json_int_t)at, "healthy", 1);
}

static void node_done(tnode_t *n)
{
        json_decref(n->node.status);
}

/*
 * The keeper's decision on @p st at @p now, checked like any append: it
 * must carry the aggregate's next seq, encode and decode with the real
 * schemas, and be accepted by the fold on @p st (which it advances).
 * Returns the event (caller destroys) or NULL.
 */
static sbx_event_t *decide(sbx_state_t *st,
                           const sbx_state_t *other,
                           const tnode_t *n,
                           int64_t now)
{
        sbx_event_t *ev =
            sbx_keeper_decide(&conf, st, other, n ? &n->node : NULL, now);
        sbx_event_t *back  = NULL;
        unsigned char *buf = NULL;
        size_t len         = 0;
        char err[512]      = "";
        sbx_verdict_t v;

        if (!ev)
                return NULL;
        assert_string_equal(ev->aggregate_id, st->id);
        assert_int_equal(ev->seq, st->seq + 1);
        assert_string_equal(ev->tenant_id, "acme");
        assert_string_equal(ev->correlation_id, "c-1");
        sbx_event_set(&ev->producer, "keeper/test");
        if (sbx_event_encode(codec, ev, &buf, &len, err, sizeof(err)))
                fail_msg("%s does not encode: %s", sbx_evtype_name(ev->type),
                         err);
        if (sbx_event_decode(codec, buf, len, &back, err, sizeof(err)))
                fail_msg("%s does not decode: %s", sbx_evtype_name(ev->type),
                         err);
        free(buf);
        v = sbx_fold(st, back);
        if (v != SBX_FOLD_ACCEPTED)
                fail_msg("the fold refuses the keeper's %s: %s",
                         sbx_evtype_name(ev->type), sbx_verdict_name(v));
        sbx_event_destroy(back);
        return ev;
}

/* Asserts the keeper decides @p want on @p st at @p now; returns it. */
static sbx_event_t *expect(sbx_evtype_t want,
                           sbx_state_t *st,
                           const sbx_state_t *other,
                           const tnode_t *n,
                           int64_t now)
{
        int phase       = st->phase;
        sbx_event_t *ev = decide(st, other, n, now);
        if (!ev)
                fail_msg("%s in %s: nothing decided", sbx_evtype_name(want),
                         sbx_phase_name(st->aggregate, phase));
        if (ev->type != want)
                fail_msg("expected %s in %s, got %s", sbx_evtype_name(want),
                         sbx_phase_name(st->aggregate, phase),
                         sbx_evtype_name(ev->type));
        return ev;
}

static void expect_nothing(const sbx_state_t *st,
                           const sbx_state_t *other,
                           const tnode_t *n,
                           int64_t now)
{
        sbx_event_t *ev =
            sbx_keeper_decide(&conf, st, other, n ? &n->node : NULL, now);
        if (ev)
                fail_msg("%s in %s: unexpected %s", st->id,
                         sbx_phase_name(st->aggregate, st->phase),
                         sbx_evtype_name(ev->type));
}

/* ---- sandboxes --------------------------------------------------------- */

static void test_lease_expires_only_after_its_deadline(void **state)
{
        int64_t exp     = T0 + 300 * SEC;
        sbx_state_t *sb = leased_sandbox(exp);
        tnode_t n       = {{0}};
        sbx_event_t *ev;
        (void)state;

        node_at(&n, exp);
        expect_nothing(sb, NULL, &n, exp - SEC);
        expect_nothing(sb, NULL, &n, exp);
        ev = expect(SBX_EV_LEASE_EXPIRED, sb, NULL, &n, exp + 1);
        assert_int_equal(ev->lease_version, 1);
        assert_int_equal(sbx_event_int(ev, "expired_at", 0), exp);
        sbx_event_destroy(ev);
        assert_int_equal(sb->phase, SBX_SB_SANITIZING);
        assert_null(sb->lease_owner);
        /* Nothing more until the executor sanitized it. */
        expect_nothing(sb, NULL, &n, exp + 2);
        sbx_state_destroy(sb);
        node_done(&n);
}

/* The third lease expires as version 3, also while an exec runs. */
static void test_lease_expiry_is_fenced_with_the_current_version(void **state)
{
        int64_t exp     = T0 + 600 * SEC;
        sbx_state_t *sb = leased_sandbox(T0 + 100 * SEC);
        tnode_t n       = {{0}};
        sbx_event_t *ev;
        int i;
        (void)state;

        for (i = 0; i < 2; i++) {
                put_at(sb, SBX_EV_LEASE_RELEASED, NULL, T0 + 50 * SEC);
                put_at(sb, SBX_EV_SANITIZED, NULL, T0 + 50 * SEC);
                grant(sb, T0 + 60 * SEC, exp);
        }
        put_at(sb, SBX_EV_EXEC_REQUESTED,
               json_pack("{s:s, s:[s]}", "exec_id", "e-1", "argv", "sleep"),
               T0 + 70 * SEC);
        assert_int_equal(sb->phase, SBX_SB_RUNNING);
        node_at(&n, exp);
        expect_nothing(sb, NULL, &n, exp);
        ev = expect(SBX_EV_LEASE_EXPIRED, sb, NULL, &n, exp + SEC);
        assert_int_equal(ev->lease_version, 3);
        sbx_event_destroy(ev);
        assert_int_equal(sb->phase, SBX_SB_SANITIZING);
        sbx_state_destroy(sb);
        node_done(&n);
}

static void test_idle_timeout_hibernates(void **state)
{
        int64_t released = T0 + 60 * SEC;
        sbx_state_t *sb  = idle_sandbox(released);
        tnode_t n        = {{0}};
        int64_t deadline = released + conf.idle_timeout_us;
        sbx_event_t *ev;
        (void)state;

        node_at(&n, deadline);
        expect_nothing(sb, NULL, &n, deadline);
        ev = expect(SBX_EV_HIBERNATED, sb, NULL, &n, deadline + 1);
        sbx_event_destroy(ev);
        assert_int_equal(sb->phase, SBX_SB_HIBERNATING);
        expect_nothing(sb, NULL, &n, deadline + 2);
        sbx_state_destroy(sb);
        node_done(&n);
}

static void test_idle_past_max_lifetime_destroyed(void **state)
{
        sbx_state_t *sb = idle_sandbox(T0 + 60 * SEC);
        tnode_t n       = {{0}};
        int64_t end     = T0 + conf.max_lifetime_us;
        sbx_event_t *ev;
        (void)state;

        put_at(sb, SBX_EV_HIBERNATED, NULL, T0 + 700 * SEC);
        node_at(&n, end + SEC);
        expect_nothing(sb, NULL, &n, end);
        ev = expect(SBX_EV_RECYCLE_STARTED, sb, NULL, &n, end + SEC);
        assert_string_equal(sbx_event_str(ev, "level"), "destroy");
        assert_string_equal(sbx_event_str(ev, "reason"), "max lifetime");
        sbx_event_destroy(ev);
        assert_int_equal(sb->phase, SBX_SB_RECYCLING);
        /* The executor, alive, destroys it: not the keeper's job. */
        expect_nothing(sb, NULL, &n, end + 2 * SEC);
        sbx_state_destroy(sb);
        node_done(&n);
}

/* Unknown pollution: never reused, so recycled at once. Level 2 (fork)
 * when a clean snapshot keeps its dependencies and workspace, level 3
 * when only a snapshot taken after the pollution (or none) exists. */
static void test_polluted_idle_sandbox_recycled_by_level(void **state)
{
        sbx_state_t *sb = leased_sandbox(T0 + 600 * SEC);
        tnode_t n       = {{0}};
        sbx_event_t *ev;
        int dirty;
        (void)state;

        node_at(&n, T0 + 100 * SEC);
        put_at(sb, SBX_EV_SNAPSHOT_REQUESTED,
               json_pack("{s:s}", "request_id", "r-1"), T0 + 20 * SEC);
        put_at(sb, SBX_EV_SNAPSHOT_TAKEN,
               json_pack("{s:s, s:I}", "snapshot_id", "snap-clean",
                         "size_bytes", (json_int_t)10),
               T0 + 21 * SEC);
        for (dirty = 2; dirty <= 3; dirty++)
                put_at(sb, SBX_EV_ENVIRONMENT_UPDATED,
                       json_pack("{s:{s:s, s:i}}", "manifest", "fingerprint",
                                 dirty == 2 ? "env-2" : "env-3", "dirty_level",
                                 dirty),
                       T0 + (20 + dirty) * SEC);
        put_at(sb, SBX_EV_SNAPSHOT_REQUESTED,
               json_pack("{s:s}", "request_id", "r-2"), T0 + 30 * SEC);
        put_at(sb, SBX_EV_SNAPSHOT_TAKEN,
               json_pack("{s:s, s:I}", "snapshot_id", "snap-dirty",
                         "size_bytes", (json_int_t)10),
               T0 + 31 * SEC);
        assert_string_equal(sb->last_snapshot, "snap-dirty");
        assert_string_equal(sb->clean_snapshot, "snap-clean");
        /* leased, it is its client's until release */
        expect_nothing(sb, NULL, &n, T0 + 40 * SEC);
        put_at(sb, SBX_EV_LEASE_RELEASED, NULL, T0 + 50 * SEC);
        put_at(sb, SBX_EV_SANITIZED, NULL, T0 + 51 * SEC);
        ev = expect(SBX_EV_RECYCLE_STARTED, sb, NULL, &n, T0 + 52 * SEC);
        assert_string_equal(sbx_event_str(ev, "level"), "fork");
        assert_string_equal(sbx_event_str(ev, "reason"),
                            "unknown pollution (dirty level 3); its "
                            "dependencies and workspace go on in snapshot "
                            "snap-clean");
        sbx_event_destroy(ev);
        sbx_state_destroy(sb);

        /* tainted: no snapshot of it is clean */
        sb = leased_sandbox(T0 + 600 * SEC);
        put_at(sb, SBX_EV_SNAPSHOT_REQUESTED,
               json_pack("{s:s}", "request_id", "r-1"), T0 + 20 * SEC);
        put_at(sb, SBX_EV_SNAPSHOT_TAKEN,
               json_pack("{s:s, s:I}", "snapshot_id", "snap-1", "size_bytes",
                         (json_int_t)10),
               T0 + 21 * SEC);
        put_at(sb, SBX_EV_TAINTED, json_pack("{s:s}", "reason", "escape"),
               T0 + 22 * SEC);
        put_at(sb, SBX_EV_ENVIRONMENT_UPDATED,
               json_pack("{s:{s:s, s:i}}", "manifest", "fingerprint", "env-3",
                         "dirty_level", 3),
               T0 + 23 * SEC);
        assert_null(sb->clean_snapshot);
        put_at(sb, SBX_EV_LEASE_RELEASED, NULL, T0 + 50 * SEC);
        put_at(sb, SBX_EV_SANITIZED, NULL, T0 + 51 * SEC);
        ev = decide(sb, NULL, &n, T0 + 52 * SEC);
        assert_non_null(ev);
        assert_string_equal(sbx_event_str(ev, "level"), "destroy");
        sbx_event_destroy(ev);
        sbx_state_destroy(sb);
        node_done(&n);
}

static void test_silent_node_loses_its_sandboxes(void **state)
{
        int64_t now      = T0 + 120 * SEC;
        sbx_state_t *sb  = leased_sandbox(T0 + 3600 * SEC);
        sbx_state_t *sb2 = leased_sandbox(T0 + 3600 * SEC);
        tnode_t n        = {{0}};
        sbx_event_t *ev;
        (void)state;

        /* Within the grace nothing happens. */
        node_at(&n, now - conf.node_grace_us);
        expect_nothing(sb, NULL, &n, now);
        node_at(&n, now - conf.node_grace_us - SEC);
        ev = expect(SBX_EV_SANDBOX_LOST, sb, NULL, &n, now);
        assert_string_equal(sbx_event_str(ev, "reason"),
                            "node n1 silent for 31 s");
        sbx_event_destroy(ev);
        assert_int_equal(sb->phase, SBX_SB_LOST);
        assert_null(sb->lease_owner);

        /* A node never heard of: lost once the grace after creation. */
        expect_nothing(sb2, NULL, NULL, T0 + conf.node_grace_us);
        ev = expect(SBX_EV_SANDBOX_LOST, sb2, NULL, NULL, now);
        sbx_event_destroy(ev);
        sbx_state_destroy(sb);
        sbx_state_destroy(sb2);
        node_done(&n);
}

static void test_lost_and_failed_sandboxes_destroyed(void **state)
{
        int64_t now       = T0 + 120 * SEC;
        sbx_state_t *lost = leased_sandbox(T0 + 3600 * SEC);
        sbx_state_t *fail = leased_sandbox(T0 + 3600 * SEC);
        tnode_t n         = {{0}};
        sbx_event_t *ev;
        (void)state;

        node_at(&n, now);
        put_at(lost, SBX_EV_SANDBOX_LOST,
               json_pack("{s:s}", "reason", "runtime instance vanished"),
               T0 + 100 * SEC);
        ev = expect(SBX_EV_RECYCLE_STARTED, lost, NULL, &n, now);
        assert_string_equal(sbx_event_str(ev, "level"), "destroy");
        assert_string_equal(sbx_event_str(ev, "reason"),
                            "runtime instance vanished");
        sbx_event_destroy(ev);
        assert_int_equal(lost->phase, SBX_SB_RECYCLING);

        put_at(fail, SBX_EV_SANDBOX_FAILED,
               json_pack("{s:s}", "reason", "agent crashed"), T0 + 100 * SEC);
        ev = expect(SBX_EV_RECYCLE_STARTED, fail, NULL, &n, now);
        assert_string_equal(sbx_event_str(ev, "level"), "destroy");
        assert_string_equal(sbx_event_str(ev, "reason"), "agent crashed");
        sbx_event_destroy(ev);
        assert_int_equal(fail->phase, SBX_SB_RECYCLING);
        sbx_state_destroy(lost);
        sbx_state_destroy(fail);
        node_done(&n);
}

static void test_recycling_on_a_dead_node_terminated(void **state)
{
        int64_t now     = T0 + 600 * SEC;
        sbx_state_t *sb = idle_sandbox(T0 + 60 * SEC);
        tnode_t n       = {{0}};
        sbx_event_t *ev;
        (void)state;

        put_at(sb, SBX_EV_RECYCLE_STARTED,
               json_pack("{s:s, s:s}", "level", "destroy", "reason", "client"),
               T0 + 100 * SEC);
        node_at(&n, now - conf.node_grace_us - SEC);
        ev = expect(SBX_EV_TERMINATED, sb, NULL, &n, now);
        sbx_event_destroy(ev);
        assert_int_equal(sb->phase, SBX_SB_TERMINATED);
        expect_nothing(sb, NULL, &n, now + 3600 * SEC);
        sbx_state_destroy(sb);
        node_done(&n);
}

/*
 * Regression: a sandbox on a dead node went LOST -> RECYCLING -> LOST ...
 * forever (680,000 events in minutes). Whatever phase it was in when its
 * node died, folding the keeper's decisions must end in TERMINATED within
 * a handful of events, and then the keeper must fall silent.
 */
static void test_dead_node_ends_in_terminated(void **state)
{
        static const int phases[] = {
            SBX_SB_PROVISIONING, SBX_SB_READY,       SBX_SB_LEASED,
            SBX_SB_RUNNING,      SBX_SB_IDLE,        SBX_SB_REUSE_CHECKING,
            SBX_SB_SANITIZING,   SBX_SB_HIBERNATING, SBX_SB_RECYCLING,
            SBX_SB_FAILED,       SBX_SB_LOST,
        };
        tnode_t n = {{0}};
        size_t i;
        (void)state;

        for (i = 0; i < SBX_ARRAY_SIZE(phases); i++) {
                int64_t now     = T0 + 3 * 3600 * SEC;
                sbx_state_t *sb = sbx_state_new(SBX_AGG_SANDBOX, "sb-1");
                sbx_event_t *ev;
                int events = 0;

                /* Walk the sandbox into the phase. */
                put_at(
                    sb, SBX_EV_SANDBOX_CREATED,
                    json_pack("{s:s, s:s, s:s, s:s, s:s}", "origin", "pool",
                              "node_id", "n1", "resource_class", "python-small",
                              "template", "host", "runtime", "runc"),
                    T0);
                if (phases[i] != SBX_SB_PROVISIONING)
                        put_at(sb, SBX_EV_PROVISIONED, NULL, T0 + SEC);
                switch (phases[i]) {
                case SBX_SB_LEASED:
                case SBX_SB_RUNNING:
                case SBX_SB_SANITIZING:
                        grant(sb, T0 + 2 * SEC, now + 3600 * SEC);
                        if (phases[i] == SBX_SB_RUNNING)
                                put_at(sb, SBX_EV_EXEC_REQUESTED,
                                       json_pack("{s:s}", "exec_id", "e-1"),
                                       now - SEC);
                        if (phases[i] == SBX_SB_SANITIZING)
                                put_at(sb, SBX_EV_LEASE_RELEASED, NULL,
                                       now - SEC);
                        break;
                case SBX_SB_IDLE:
                case SBX_SB_REUSE_CHECKING:
                case SBX_SB_HIBERNATING:
                        grant(sb, T0 + 2 * SEC, now + 3600 * SEC);
                        put_at(sb, SBX_EV_LEASE_RELEASED, NULL, now - SEC);
                        put_at(sb, SBX_EV_SANITIZED, NULL, now - SEC);
                        if (phases[i] == SBX_SB_REUSE_CHECKING)
                                put_at(sb, SBX_EV_REUSE_CHECK_STARTED,
                                       json_pack("{s:s}", "claim_id", "c-2"),
                                       now - SEC);
                        if (phases[i] == SBX_SB_HIBERNATING)
                                put_at(sb, SBX_EV_HIBERNATED, NULL, now - SEC);
                        break;
                case SBX_SB_RECYCLING:
                        put_at(sb, SBX_EV_RECYCLE_STARTED,
                               json_pack("{s:s, s:s}", "level", "destroy",
                                         "reason", "client"),
                               now - SEC);
                        break;
                case SBX_SB_FAILED:
                        put_at(sb, SBX_EV_SANDBOX_FAILED,
                               json_pack("{s:s}", "reason", "oom"), now - SEC);
                        break;
                case SBX_SB_LOST:
                        put_at(sb, SBX_EV_SANDBOX_LOST,
                               json_pack("{s:s}", "reason", "gone"), now - SEC);
                        break;
                default:
                        break;
                }
                assert_int_equal(sb->phase, phases[i]);

                /* The node died a minute ago; the keeper ticks. */
                node_at(&n, now - 60 * SEC);
                while ((ev = decide(sb, NULL, &n, now)) != NULL) {
                        sbx_event_destroy(ev);
                        if (++events > 4)
                                fail_msg(
                                    "from %s: still deciding after %d "
                                    "events, now %s",
                                    sbx_phase_name(SBX_AGG_SANDBOX, phases[i]),
                                    events,
                                    sbx_phase_name(SBX_AGG_SANDBOX, sb->phase));
                        now += SEC;
                }
                if (sb->phase != SBX_SB_TERMINATED)
                        fail_msg("from %s: ends %s, not TERMINATED",
                                 sbx_phase_name(SBX_AGG_SANDBOX, phases[i]),
                                 sbx_phase_name(SBX_AGG_SANDBOX, sb->phase));
                assert_true(events >= 1);
                expect_nothing(sb, NULL, &n, now + 3600 * SEC);
                sbx_state_destroy(sb);
        }
        node_done(&n);
}

static void test_nothing_when_all_is_well(void **state)
{
        int64_t now        = T0 + 200 * SEC;
        sbx_state_t *held  = leased_sandbox(now + 60 * SEC);
        sbx_state_t *idle  = idle_sandbox(now - 10 * SEC);
        sbx_state_t *ready = ready_sandbox();
        sbx_state_t *gone  = idle_sandbox(now - 10 * SEC);
        tnode_t n          = {{0}};
        (void)state;

        node_at(&n, now - SEC);
        expect_nothing(held, NULL, &n, now);
        expect_nothing(idle, NULL, &n, now);
        expect_nothing(ready, NULL, &n, now);
        put_at(gone, SBX_EV_RECYCLE_STARTED,
               json_pack("{s:s, s:s}", "level", "destroy", "reason", "x"), now);
        put_at(gone, SBX_EV_TERMINATED, NULL, now);
        expect_nothing(gone, NULL, &n, now + 48 * 3600 * SEC);
        sbx_state_destroy(held);
        sbx_state_destroy(idle);
        sbx_state_destroy(ready);
        sbx_state_destroy(gone);
        node_done(&n);
}

/* ---- claims ------------------------------------------------------------ */

/* Claim c-1 bound to sb-1 under lease version @p lv. */
static sbx_state_t *bound_claim(int64_t lv)
{
        sbx_state_t *c = sbx_state_new(SBX_AGG_CLAIM, "c-1");
        put_at(c, SBX_EV_CLAIM_REQUESTED,
               json_pack("{s:s, s:{s:s}}", "request_id", "r-1", "task", "text",
                         "total the sales column"),
               T0);
        put_at(
            c, SBX_EV_PLAN_PROPOSED,
            json_pack("{s:s, s:s, s:s, s:{s:s, s:f, s:I, s:I}}", "planner",
                      "rules", "input_hash", "h", "signature", "sig", "intent",
                      "workload", "plain-script", "cpu", 1.0, "memory_mb",
                      (json_int_t)2048, "disk_gb", (json_int_t)10),
            T0);
        put_at(
            c, SBX_EV_PLAN_APPROVED,
            json_pack("{s:s, s:f, s:I, s:I, s:s, s:s, s:s, s:I}",
                      "resource_class", "python-small", "cpu", 1.0, "memory_mb",
                      (json_int_t)2048, "disk_gb", (json_int_t)10,
                      "network_profile", "none", "template", "host", "runtime",
                      "runc", "ttl_seconds", (json_int_t)1800),
            T0);
        put_at(c, SBX_EV_PLACED,
               json_pack("{s:s, s:s}", "node_id", "n1", "sandbox_id", "sb-1"),
               T0);
        put_at(c, SBX_EV_CLAIM_BOUND,
               json_pack("{s:s, s:s, s:I, s:I}", "sandbox_id", "sb-1",
                         "node_id", "n1", "lease_version", (json_int_t)lv,
                         "lease_expires_at", (json_int_t)(T0 + 300 * SEC)),
               T0 + 2 * SEC);
        assert_int_equal(c->phase, SBX_CLAIM_BOUND);
        return c;
}

static void test_bound_claim_released_when_its_lease_ended(void **state)
{
        int64_t now     = T0 + 100 * SEC;
        sbx_state_t *c  = bound_claim(1);
        sbx_state_t *sb = leased_sandbox(T0 + 300 * SEC);
        sbx_event_t *ev;
        (void)state;

        expect_nothing(c, sb, NULL, now); /* the lease is live */
        expect_nothing(c, NULL, NULL, now);
        put_at(sb, SBX_EV_LEASE_RELEASED, NULL, now);
        ev = expect(SBX_EV_CLAIM_RELEASED, c, sb, NULL, now + SEC);
        assert_string_equal(sbx_event_str(ev, "reason"), "lease ended");
        sbx_event_destroy(ev);
        assert_int_equal(c->phase, SBX_CLAIM_RELEASED);
        expect_nothing(c, sb, NULL, now + 2 * SEC);
        sbx_state_destroy(c);
        sbx_state_destroy(sb);

        /* An expired lease ends the claim the same way. */
        c  = bound_claim(1);
        sb = leased_sandbox(T0 + 300 * SEC);
        put_at(sb, SBX_EV_LEASE_EXPIRED,
               json_pack("{s:I}", "expired_at", (json_int_t)(T0 + 300 * SEC)),
               T0 + 301 * SEC);
        sbx_event_destroy(
            expect(SBX_EV_CLAIM_RELEASED, c, sb, NULL, T0 + 302 * SEC));
        sbx_state_destroy(c);
        sbx_state_destroy(sb);

        /* So does a sandbox already leased on to a newer claim. */
        c  = bound_claim(1);
        sb = leased_sandbox(T0 + 300 * SEC);
        put_at(sb, SBX_EV_LEASE_RELEASED, NULL, now);
        put_at(sb, SBX_EV_SANITIZED, NULL, now);
        grant(sb, now, now + 300 * SEC);
        sbx_event_destroy(
            expect(SBX_EV_CLAIM_RELEASED, c, sb, NULL, now + SEC));
        sbx_state_destroy(c);
        sbx_state_destroy(sb);
}

/* Lost under its lease (its node silent, or its container gone): the
 * claim is placed again; restored from the sandbox's latest snapshot
 * while its node answers, else anew elsewhere; failed once out of
 * attempts. Failed (the sandbox crashed): the claim fails. */
static void test_bound_claim_of_a_lost_or_failed_sandbox(void **state)
{
        int64_t now     = T0 + 100 * SEC;
        sbx_state_t *c  = bound_claim(1);
        sbx_state_t *sb = leased_sandbox(T0 + 300 * SEC);
        sbx_event_t *ev;
        tnode_t n = {0};
        (void)state;

        /* its node is silent: placed anew, not on that node */
        put_at(sb, SBX_EV_SANDBOX_LOST,
               json_pack("{s:s}", "reason", "node n1 silent for 31 s"), now);
        ev = expect(SBX_EV_PLACEMENT_FAILED, c, sb, NULL, now + SEC);
        assert_string_equal(sbx_event_str(ev, "reason"),
                            "sandbox sb-1 lost (node n1 silent for 31 s): "
                            "placed anew");
        assert_string_equal(sbx_event_str(ev, "node_id"), "n1");
        assert_null(sbx_event_str(ev, "snapshot_id"));
        sbx_event_destroy(ev);
        assert_int_equal(c->phase, SBX_CLAIM_APPROVED);
        assert_null(c->fork_snapshot);
        expect_nothing(c, sb, NULL, now + 2 * SEC);
        sbx_state_destroy(c);
        sbx_state_destroy(sb);

        /* its container is gone but the node answers: from the snapshot */
        c  = bound_claim(1);
        sb = leased_sandbox(T0 + 300 * SEC);
        put_at(sb, SBX_EV_SNAPSHOT_TAKEN,
               json_pack("{s:s, s:s, s:I, s:I}", "snapshot_id",
                         "snap-0123456789ab", "layer_digest", "sha256:x",
                         "size_bytes", (json_int_t)1, "duration_us",
                         (json_int_t)1),
               now - 10 * SEC);
        put_at(sb, SBX_EV_SANDBOX_LOST,
               json_pack("{s:s}", "reason", "container gone (reconcile)"), now);
        node_at(&n, now);
        ev = expect(SBX_EV_PLACEMENT_FAILED, c, sb, &n, now + SEC);
        assert_string_equal(sbx_event_str(ev, "snapshot_id"),
                            "snap-0123456789ab");
        assert_null(sbx_event_str(ev, "node_id"));
        assert_non_null(strstr(sbx_event_str(ev, "reason"),
                               "restored from its latest snapshot"));
        sbx_event_destroy(ev);
        assert_string_equal(c->fork_snapshot, "snap-0123456789ab");
        sbx_state_destroy(c);
        sbx_state_destroy(sb);

        /* out of attempts: it fails */
        c           = bound_claim(1);
        c->attempts = 3;
        sb          = leased_sandbox(T0 + 300 * SEC);
        put_at(sb, SBX_EV_SANDBOX_LOST,
               json_pack("{s:s}", "reason", "node n1 silent for 31 s"), now);
        ev = expect(SBX_EV_PLACEMENT_FAILED, c, sb, NULL, now + SEC);
        assert_true(json_is_true(json_object_get(ev->payload, "final")));
        sbx_event_destroy(ev);
        assert_int_equal(c->phase, SBX_CLAIM_FAILED);
        sbx_state_destroy(c);
        sbx_state_destroy(sb);

        /* lost after its lease ran out: nothing is made for it */
        c  = bound_claim(1);
        sb = leased_sandbox(T0 + 300 * SEC);
        put_at(sb, SBX_EV_SANDBOX_LOST,
               json_pack("{s:s}", "reason", "node n1 silent for 31 s"),
               T0 + 400 * SEC);
        ev = expect(SBX_EV_CLAIM_FAILED, c, sb, NULL, T0 + 401 * SEC);
        assert_non_null(strstr(sbx_event_str(ev, "reason"), "silent"));
        sbx_event_destroy(ev);
        sbx_state_destroy(c);
        sbx_state_destroy(sb);

        /* failed, not lost: the claim fails with the reason */
        c  = bound_claim(1);
        sb = leased_sandbox(T0 + 300 * SEC);
        put_at(sb, SBX_EV_SANDBOX_FAILED,
               json_pack("{s:s}", "reason", "agent crashed"), now);
        ev = expect(SBX_EV_CLAIM_FAILED, c, sb, NULL, now + SEC);
        assert_non_null(strstr(sbx_event_str(ev, "reason"), "agent crashed"));
        sbx_event_destroy(ev);
        sbx_state_destroy(c);
        sbx_state_destroy(sb);
        node_done(&n);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_lease_expires_only_after_its_deadline),
            cmocka_unit_test(
                test_lease_expiry_is_fenced_with_the_current_version),
            cmocka_unit_test(test_idle_timeout_hibernates),
            cmocka_unit_test(test_idle_past_max_lifetime_destroyed),
            cmocka_unit_test(test_polluted_idle_sandbox_recycled_by_level),
            cmocka_unit_test(test_silent_node_loses_its_sandboxes),
            cmocka_unit_test(test_lost_and_failed_sandboxes_destroyed),
            cmocka_unit_test(test_recycling_on_a_dead_node_terminated),
            cmocka_unit_test(test_dead_node_ends_in_terminated),
            cmocka_unit_test(test_nothing_when_all_is_well),
            cmocka_unit_test(test_bound_claim_released_when_its_lease_ended),
            cmocka_unit_test(test_bound_claim_of_a_lost_or_failed_sandbox),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
