/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the fold: the compare-and-set rule on every transition, the
 * design origin's fencing example, de-duplication, codec round trips of
 * every event type, and a property test in which racing writers append to
 * one log and independent readers must agree on every aggregate's state
 * while every accepted history stays legal.
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

static sbx_codec_t *codec;

/* A minimal valid payload for every event type. */
static json_t *payload_for(sbx_evtype_t t, int64_t lease_version)
{
        switch (t) {
        case SBX_EV_CLAIM_REQUESTED:
                return json_pack("{s:s, s:{s:s}}", "request_id", "r-1", "task",
                                 "text", "read the Excel file and total sales");
        case SBX_EV_PLAN_PROPOSED:
                return json_pack(
                    "{s:s, s:s, s:s, s:{s:s, s:f, s:I, s:I}}", "planner",
                    "rules", "input_hash", "h", "signature", "python-data",
                    "intent", "workload", "python-data-analysis", "cpu", 1.0,
                    "memory_mb", (json_int_t)2048, "disk_gb", (json_int_t)10);
        case SBX_EV_PLAN_APPROVED:
                return json_pack("{s:s, s:f, s:I, s:I, s:s, s:s, s:s, s:I}",
                                 "resource_class", "python-small", "cpu", 1.0,
                                 "memory_mb", (json_int_t)2048, "disk_gb",
                                 (json_int_t)10, "network_profile", "none",
                                 "template", "host", "runtime", "runc",
                                 "ttl_seconds", (json_int_t)1800);
        case SBX_EV_PLAN_REJECTED:
                return json_pack("{s:[s]}", "reasons", "quota");
        case SBX_EV_REUSE_CHOSEN:
                return json_pack("{s:s, s:s, s:s, s:f, s:s}", "sandbox_id",
                                 "sb-1", "node_id", "n1", "mode", "as_is",
                                 "score", 0.91, "reason", "same_session");
        case SBX_EV_PLACED:
                return json_pack("{s:s, s:s}", "node_id", "n1", "sandbox_id",
                                 "sb-1");
        case SBX_EV_PLACEMENT_FAILED:
                return json_pack("{s:s}", "reason", "capacity");
        case SBX_EV_CLAIM_BOUND:
                return json_pack("{s:s, s:s, s:I, s:I}", "sandbox_id", "sb-1",
                                 "node_id", "n1", "lease_version",
                                 (json_int_t)lease_version, "lease_expires_at",
                                 (json_int_t)1);
        case SBX_EV_CLAIM_FAILED:
        case SBX_EV_SANDBOX_FAILED:
        case SBX_EV_SANDBOX_LOST:
        case SBX_EV_TAINTED:
                return json_pack("{s:s}", "reason", "test");
        case SBX_EV_SANDBOX_CREATED:
                return json_pack("{s:s, s:s, s:s, s:s, s:f, s:I}", "origin",
                                 "pool", "node_id", "n1", "resource_class",
                                 "python-small", "template", "host", "cpu", 1.0,
                                 "memory_mb", (json_int_t)2048);
        case SBX_EV_PROVISIONED:
                return json_pack("{s:s, s:I}", "runtime_instance", "sbx-sb-1",
                                 "startup_us", (json_int_t)47000);
        case SBX_EV_LEASE_GRANTED:
                return json_pack("{s:s, s:I, s:I}", "owner", "claim-1",
                                 "lease_version", (json_int_t)lease_version,
                                 "expires_at", (json_int_t)1789192000);
        case SBX_EV_LEASE_RENEWED:
                return json_pack("{s:I}", "expires_at", (json_int_t)1789193000);
        case SBX_EV_EXEC_REQUESTED:
                return json_pack("{s:s, s:[s,s,s]}", "exec_id", "e-1", "argv",
                                 "python3", "-c", "print(1+1)");
        case SBX_EV_EXEC_STARTED:
                return json_pack("{s:s}", "exec_id", "e-1");
        case SBX_EV_EXEC_FINISHED:
                return json_pack("{s:s, s:i, s:s, s:{s:b}}", "exec_id", "e-1",
                                 "exit_code", 0, "stdout", "2\n", "usage",
                                 "oom_killed", 1);
        case SBX_EV_ENVIRONMENT_UPDATED:
                return json_pack("{s:{s:s, s:s, s:i}}", "manifest",
                                 "template_digest", "sha256:x", "fingerprint",
                                 "env-a912", "dirty_level", 2);
        case SBX_EV_LEASE_EXPIRED:
                return json_pack("{s:I}", "expired_at", (json_int_t)1);
        case SBX_EV_REUSE_CHECK_STARTED:
                return json_pack("{s:s}", "claim_id", "c-2");
        case SBX_EV_REUSE_REJECTED:
                return json_pack("{s:s, s:f, s:s}", "claim_id", "c-3", "score",
                                 0.1, "reason", "runtime_capability_mismatch");
        case SBX_EV_SNAPSHOT_REQUESTED:
                return json_pack("{s:s, s:s}", "request_id", "r-1", "reason",
                                 "checkpoint A");
        case SBX_EV_SNAPSHOT_TAKEN:
                return json_pack("{s:s, s:s}", "snapshot_id", "snap-a",
                                 "layer_digest", "sha256:y");
        case SBX_EV_RECYCLE_STARTED:
                return json_pack("{s:s, s:s}", "level", "destroy", "reason",
                                 "ttl");
        case SBX_EV_REQUEST_REJECTED:
                return json_pack("{s:s, s:s, s:[s]}", "request_id", "r-9",
                                 "command", "Exec", "reasons",
                                 "lease_version missing");
        default:
                return json_object(); /* every field has a default */
        }
}

static sbx_event_t *mk(sbx_evtype_t t,
                       const char *id,
                       int64_t seq,
                       int64_t lease_version)
{
        sbx_event_t *ev =
            sbx_event_new(t, id, seq, payload_for(t, lease_version));
        sbx_event_set(&ev->producer, "test/1");
        sbx_event_set(&ev->correlation_id, "claim-1");
        sbx_event_set(&ev->tenant_id, "acme");
        if (sbx_evtype_fenced(t) || t == SBX_EV_LEASE_GRANTED)
                ev->lease_version = lease_version;
        return ev;
}

static int setup(void **state)
{
        char err[256];
        (void)state;
        codec = sbx_codec_new(err, sizeof(err));
        return codec ? 0 : -1;
}

static int teardown(void **state)
{
        (void)state;
        sbx_codec_destroy(codec);
        return 0;
}

/* Is every member of @p small in @p big, recursively, with equal values? */
static int json_subset(const json_t *small, const json_t *big)
{
        const char *k;
        json_t *v;
        if (!json_is_object(small))
                return json_equal(small, big);
        if (!json_is_object(big))
                return 0;
        json_object_foreach(
            (json_t *)small, k,
            v) if (!json_subset(v, json_object_get(big, k))) return 0;
        return 1;
}

static void test_every_event_type_round_trips_through_the_codec(void **state)
{
        int t;
        (void)state;
        for (t = 0; t < SBX_EV__CNT; t++) {
                sbx_event_t *ev    = mk((sbx_evtype_t)t, "agg-1", 7, 3),
                            *back  = NULL;
                unsigned char *buf = NULL;
                size_t len;
                char err[512];
                json_t *b;
                if (sbx_event_encode(codec, ev, &buf, &len, err, sizeof(err)))
                        fail_msg("%s: %s", sbx_evtype_name((sbx_evtype_t)t),
                                 err);
                if (sbx_event_decode(codec, buf, len, &back, err, sizeof(err)))
                        fail_msg("%s: %s", sbx_evtype_name((sbx_evtype_t)t),
                                 err);
                assert_int_equal(back->type, t);
                assert_int_equal(back->seq, 7);
                assert_string_equal(back->event_id, ev->event_id);
                /* The decoded payload holds every field: ours plus defaults. */
                b = sbx_event_to_json(back);
                if (!json_subset(
                        ev->payload,
                        json_object_get(json_object_get(b, "payload"),
                                        json_object_iter_key(json_object_iter(
                                            json_object_get(b, "payload"))))))
                        fail_msg("%s: payload changed in the round trip",
                                 sbx_evtype_name((sbx_evtype_t)t));
                json_decref(b);
                free(buf);
                sbx_event_destroy(ev);
                sbx_event_destroy(back);
        }
}

/* A state of @p a in @p phase at seq 5 holding lease version 3. */
static sbx_state_t *state_in(sbx_aggregate_t a, int phase)
{
        sbx_state_t *s   = sbx_state_new(a, "agg-1");
        s->phase         = phase;
        s->seq           = phase ? 5 : 0;
        s->lease_version = 3;
        return s;
}

static void test_fold_follows_the_table_for_every_pair(void **state)
{
        int t, p;
        (void)state;
        for (t = 0; t < SBX_EV__CNT; t++) {
                sbx_aggregate_t a = sbx_evtype_aggregate((sbx_evtype_t)t);
                for (p = 0; p < sbx_phase_count(a); p++) {
                        sbx_state_t *s = state_in(a, p);
                        int64_t lv     = t == SBX_EV_LEASE_GRANTED ? 4 : 3;
                        sbx_event_t *ev =
                            mk((sbx_evtype_t)t, "agg-1", s->seq + 1, lv);
                        int next = sbx_fsm_next(a, p, (sbx_evtype_t)t, 0);
                        sbx_verdict_t v = sbx_fold(s, ev);
                        if (next < 0) {
                                assert_int_equal(v,
                                                 SBX_FOLD_ILLEGAL_TRANSITION);
                                assert_int_equal(s->phase, p);
                                assert_int_equal(s->seq, p ? 5 : 0);
                        } else {
                                if (v != SBX_FOLD_ACCEPTED)
                                        fail_msg(
                                            "%s in %s: %s",
                                            sbx_evtype_name((sbx_evtype_t)t),
                                            sbx_phase_name(a, p),
                                            sbx_verdict_name(v));
                                assert_int_equal(s->phase, next);
                                assert_int_equal(s->seq, ev->seq);
                        }
                        sbx_event_destroy(ev);
                        sbx_state_destroy(s);
                }
        }
}

static sbx_verdict_t fold1(sbx_state_t *s,
                           sbx_evtype_t t,
                           int64_t seq,
                           int64_t lv)
{
        sbx_event_t *ev = mk(t, s->id, seq, lv);
        sbx_verdict_t v = sbx_fold(s, ev);
        sbx_event_destroy(ev);
        return v;
}

/* The design origin: version 41 comes back after 42 was granted. */
static void test_fencing_41_after_42(void **state)
{
        sbx_state_t *s = sbx_state_new(SBX_AGG_SANDBOX, "sb-123");
        int64_t seq    = 0;
        (void)state;
        assert_int_equal(fold1(s, SBX_EV_SANDBOX_CREATED, ++seq, 0),
                         SBX_FOLD_ACCEPTED);
        assert_int_equal(fold1(s, SBX_EV_PROVISIONED, ++seq, 0),
                         SBX_FOLD_ACCEPTED);
        s->lease_version = 40; /* as if 40 leases came before */
        assert_int_equal(fold1(s, SBX_EV_LEASE_GRANTED, ++seq, 41),
                         SBX_FOLD_ACCEPTED);
        assert_int_equal(s->lease_version, 41);
        /* worker 41 stalls; its lease expires and 42 is granted */
        assert_int_equal(fold1(s, SBX_EV_LEASE_EXPIRED, ++seq, 41),
                         SBX_FOLD_ACCEPTED);
        assert_int_equal(fold1(s, SBX_EV_SANITIZED, ++seq, 0),
                         SBX_FOLD_ACCEPTED);
        assert_int_equal(fold1(s, SBX_EV_LEASE_GRANTED, ++seq, 41),
                         SBX_FOLD_STALE_LEASE); /* a token cannot be reused */
        assert_int_equal(fold1(s, SBX_EV_LEASE_GRANTED, seq, 42),
                         SBX_FOLD_ACCEPTED);
        /* the old worker comes back with 41: rejected, nothing changes */
        assert_int_equal(fold1(s, SBX_EV_EXEC_REQUESTED, seq + 1, 41),
                         SBX_FOLD_STALE_LEASE);
        assert_int_equal(fold1(s, SBX_EV_LEASE_RELEASED, seq + 1, 41),
                         SBX_FOLD_STALE_LEASE);
        assert_int_equal(fold1(s, SBX_EV_LEASE_RENEWED, seq + 1, 41),
                         SBX_FOLD_STALE_LEASE);
        assert_int_equal(s->phase, SBX_SB_LEASED);
        assert_string_equal(s->lease_owner, "claim-1");
        /* the holder of 42 proceeds */
        assert_int_equal(fold1(s, SBX_EV_EXEC_REQUESTED, ++seq, 42),
                         SBX_FOLD_ACCEPTED);
        assert_int_equal(s->phase, SBX_SB_RUNNING);
        assert_int_equal(fold1(s, SBX_EV_EXEC_FINISHED, ++seq, 42),
                         SBX_FOLD_ACCEPTED);
        assert_int_equal(s->n_ooms, 1);
        assert_int_equal(fold1(s, SBX_EV_LEASE_RELEASED, ++seq, 42),
                         SBX_FOLD_ACCEPTED);
        assert_null(s->lease_owner);
        assert_int_equal(s->lease_version, 42); /* kept: tokens only grow */
        /* a fenced event when no lease was ever granted is stale too */
        {
                sbx_state_t *fresh   = state_in(SBX_AGG_SANDBOX, SBX_SB_LEASED);
                fresh->lease_version = 0;
                assert_int_equal(fold1(fresh, SBX_EV_EXEC_REQUESTED, 6, 0),
                                 SBX_FOLD_STALE_LEASE);
                sbx_state_destroy(fresh);
        }
        sbx_state_destroy(s);
}

static void test_duplicate_stale_gap_wrong_aggregate(void **state)
{
        sbx_state_t *s     = sbx_state_new(SBX_AGG_CLAIM, "claim-1");
        sbx_event_t *first = mk(SBX_EV_CLAIM_REQUESTED, "claim-1", 1, 0);
        sbx_event_t *racer = mk(SBX_EV_CLAIM_REQUESTED, "claim-1", 1, 0);
        (void)state;
        assert_int_equal(sbx_fold(s, first), SBX_FOLD_ACCEPTED);
        assert_int_equal(sbx_fold(s, first), SBX_FOLD_DUPLICATE);
        assert_int_equal(sbx_fold(s, racer), SBX_FOLD_STALE_SEQ);
        assert_int_equal(fold1(s, SBX_EV_PLAN_APPROVED, 3, 0),
                         SBX_FOLD_SEQ_GAP);
        assert_int_equal(fold1(s, SBX_EV_PROVISIONED, 2, 0),
                         SBX_FOLD_WRONG_AGGREGATE);
        assert_int_equal(s->seq, 1);
        assert_int_equal(s->phase, SBX_CLAIM_REQUESTED);
        assert_string_equal(s->request_id, "r-1");
        assert_string_equal(s->tenant_id, "acme");
        sbx_event_destroy(first);
        sbx_event_destroy(racer);
        sbx_state_destroy(s);
}

/* ---- property test: racing writers, independent readers ---------------- */

#define NAGG    4
#define NWRITER 4
#define NSTEPS  300

typedef struct writer_s {
        sbx_state_t *view[NAGG];
        size_t cursor; /* how much of the log it has read */
} writer_t;

typedef struct log_s {
        sbx_event_t **ev;
        size_t n, cap;
} log_t;

static const char *agg_id(int i)
{
        static const char *const ids[NAGG] = {"claim-a", "claim-b", "sb-a",
                                              "sb-b"};
        return ids[i];
}

static sbx_aggregate_t agg_kind(int i)
{
        return i < 2 ? SBX_AGG_CLAIM : SBX_AGG_SANDBOX;
}

static int agg_index(const char *id)
{
        int i;
        for (i = 0; i < NAGG; i++)
                if (!strcmp(agg_id(i), id))
                        return i;
        return -1;
}

static void log_append(log_t *l, sbx_event_t *ev)
{
        if (l->n == l->cap) {
                l->cap = l->cap ? l->cap * 2 : 256;
                l->ev  = sbx_realloc(l->ev, l->cap * sizeof(*l->ev));
        }
        l->ev[l->n++] = ev;
}

static sbx_event_t *event_copy(const sbx_event_t *e)
{
        sbx_event_t *c    = sbx_calloc(1, sizeof(*c));
        *c                = *e;
        c->event_id       = sbx_strdup(e->event_id);
        c->aggregate_id   = sbx_strdup(e->aggregate_id);
        c->producer       = sbx_strdup(e->producer);
        c->correlation_id = sbx_strdup(e->correlation_id);
        c->tenant_id      = sbx_strdup(e->tenant_id);
        c->causation_id = e->causation_id ? sbx_strdup(e->causation_id) : NULL;
        c->session_id   = e->session_id ? sbx_strdup(e->session_id) : NULL;
        c->payload      = json_deep_copy(e->payload);
        return c;
}

static void catch_up(writer_t *w, const log_t *l, size_t upto)
{
        for (; w->cursor < upto; w->cursor++) {
                sbx_event_t *e = l->ev[w->cursor];
                sbx_fold(w->view[agg_index(e->aggregate_id)], e);
        }
}

/* A writer proposes an event that is legal in its (maybe stale) view. */
static sbx_event_t *propose(writer_t *w, int agg, unsigned *rng)
{
        sbx_state_t *v = w->view[agg];
        int cand[SBX_EV__CNT], n = 0, t;
        sbx_evtype_t type;
        int64_t lv;
        sbx_event_t *ev;

        /* Mostly the happy path, so leases are granted and fought over;
         * now and then a failure, a cancel or a recycle. */
        int rare = rand_r(rng) % 8 == 0;
        for (t = 0; t < SBX_EV__CNT; t++) {
                int ending =
                    t == SBX_EV_RECYCLE_STARTED || t == SBX_EV_SANDBOX_FAILED ||
                    t == SBX_EV_SANDBOX_LOST || t == SBX_EV_TAINTED ||
                    t == SBX_EV_CLAIM_CANCELLED || t == SBX_EV_CLAIM_FAILED;
                if (sbx_fsm_next(v->aggregate, v->phase, (sbx_evtype_t)t, 0) >=
                        0 &&
                    (rare || !ending))
                        cand[n++] = t;
        }
        if (!n)
                for (t = 0; t < SBX_EV__CNT; t++)
                        if (sbx_fsm_next(v->aggregate, v->phase,
                                         (sbx_evtype_t)t, 0) >= 0)
                                cand[n++] = t;
        if (!n)
                return NULL;
        type = (sbx_evtype_t)cand[rand_r(rng) % (unsigned)n];
        if (rand_r(rng) % 20 == 0) {
                /* a confused writer: any event of the aggregate's kind */
                do
                        type = (sbx_evtype_t)(rand_r(rng) % SBX_EV__CNT);
                while (sbx_evtype_aggregate(type) != v->aggregate);
        }
        lv = type == SBX_EV_LEASE_GRANTED ? v->lease_version + 1
                                          : v->lease_version;
        if (rand_r(rng) % 4 == 0)
                lv--; /* a zombie holding an old token */
        ev = mk(type, v->id, v->seq + 1 + (rand_r(rng) % 40 == 0), lv);
        if (type == SBX_EV_PLACEMENT_FAILED)
                json_object_set_new(ev->payload, "final",
                                    json_boolean(rand_r(rng) % 3 == 0));
        return ev;
}

static char *dump(sbx_state_t *const *states)
{
        json_t *a = json_array();
        char *s;
        int i;
        for (i = 0; i < NAGG; i++)
                json_array_append_new(a, sbx_state_to_json(states[i]));
        s = json_dumps(a, JSON_SORT_KEYS);
        json_decref(a);
        return s;
}

static void new_states(sbx_state_t **st)
{
        int i;
        for (i = 0; i < NAGG; i++)
                st[i] = sbx_state_new(agg_kind(i), agg_id(i));
}

static void free_states(sbx_state_t **st)
{
        int i;
        for (i = 0; i < NAGG; i++)
                sbx_state_destroy(st[i]);
}

/* Independent check that an accepted history is legal, without sbx_fold. */
static void check_legal(const log_t *l, const sbx_verdict_t *verdict)
{
        int64_t seq[NAGG] = {0}, lease[NAGG] = {0};
        int phase[NAGG] = {0};
        size_t i;
        for (i = 0; i < l->n; i++) {
                const sbx_event_t *e = l->ev[i];
                int a                = agg_index(e->aggregate_id), next;
                if (verdict[i] != SBX_FOLD_ACCEPTED)
                        continue;
                assert_int_equal(e->seq, seq[a] + 1);
                next = sbx_fsm_next(agg_kind(a), phase[a], e->type,
                                    e->type == SBX_EV_PLACEMENT_FAILED &&
                                        sbx_event_bool(e, "final"));
                assert_true(next >= 0);
                if (sbx_evtype_fenced(e->type))
                        assert_int_equal(e->lease_version, lease[a]);
                if (e->type == SBX_EV_LEASE_GRANTED) {
                        assert_int_equal(sbx_event_int(e, "lease_version", -1),
                                         lease[a] + 1);
                        lease[a]++;
                }
                seq[a]   = e->seq;
                phase[a] = next;
        }
}

static void test_racing_writers_readers_agree(void **state)
{
        unsigned seed;
        long superseded[SBX_FOLD__CNT] = {0};
        (void)state;

        for (seed = 1; seed <= 60; seed++) {
                unsigned rng = seed;
                writer_t w[NWRITER];
                log_t l = {0};
                sbx_state_t *r1[NAGG], *r2[NAGG], *r3[NAGG];
                sbx_verdict_t *verdict;
                char *d1, *d2, *d3;
                size_t i;
                int k, step, a;

                memset(w, 0, sizeof(w));
                for (k = 0; k < NWRITER; k++)
                        new_states(w[k].view);
                for (step = 0; step < NSTEPS; step++) {
                        writer_t *me = &w[rand_r(&rng) % NWRITER];
                        sbx_event_t *ev;
                        /* read some (not necessarily all) of the log */
                        if (rand_r(&rng) % 2)
                                catch_up(me, &l, l.n);
                        catch_up(me, &l,
                                 me->cursor + (l.n - me->cursor
                                                   ? rand_r(&rng) %
                                                         (l.n - me->cursor + 1)
                                                   : 0));
                        if (rand_r(&rng) % 12 == 0 && l.n) {
                                /* a redelivery of an earlier append */
                                log_append(
                                    &l, event_copy(l.ev[rand_r(&rng) % l.n]));
                                continue;
                        }
                        a  = rand_r(&rng) % NAGG;
                        ev = propose(me, a, &rng);
                        if (ev)
                                log_append(&l, ev);
                }

                /* Reader 1: the whole log in order, recording verdicts. */
                verdict = sbx_calloc(l.n, sizeof(*verdict));
                new_states(r1);
                for (i = 0; i < l.n; i++) {
                        verdict[i] = sbx_fold(
                            r1[agg_index(l.ev[i]->aggregate_id)], l.ev[i]);
                        superseded[verdict[i]]++;
                }
                /* Reader 2: one aggregate at a time (other partitions). */
                new_states(r2);
                for (a = 0; a < NAGG; a++)
                        for (i = 0; i < l.n; i++)
                                if (agg_index(l.ev[i]->aggregate_id) == a)
                                        sbx_fold(r2[a], l.ev[i]);
                /* Reader 3: restarts from a JSON checkpoint half-way. */
                new_states(r3);
                for (i = 0; i < l.n; i++) {
                        sbx_fold(r3[agg_index(l.ev[i]->aggregate_id)], l.ev[i]);
                        if (i == l.n / 2)
                                for (a = 0; a < NAGG; a++) {
                                        json_t *j = sbx_state_to_json(r3[a]);
                                        sbx_state_destroy(r3[a]);
                                        r3[a] = sbx_state_from_json(j);
                                        assert_non_null(r3[a]);
                                        json_decref(j);
                                }
                }
                d1 = dump(r1);
                d2 = dump(r2);
                d3 = dump(r3);
                assert_string_equal(d1, d2);
                assert_string_equal(d1, d3);
                check_legal(&l, verdict);

                free(d1);
                free(d2);
                free(d3);
                free(verdict);
                free_states(r1);
                free_states(r2);
                free_states(r3);
                for (k = 0; k < NWRITER; k++)
                        free_states(w[k].view);
                for (i = 0; i < l.n; i++)
                        sbx_event_destroy(l.ev[i]);
                free(l.ev);
        }
        /* The races really happened: every kind of supersession occurred. */
        print_message(
            "property: %ld accepted, %ld stale_seq, %ld duplicate, "
            "%ld stale_lease, %ld illegal, %ld gap\n",
            superseded[0], superseded[SBX_FOLD_STALE_SEQ],
            superseded[SBX_FOLD_DUPLICATE], superseded[SBX_FOLD_STALE_LEASE],
            superseded[SBX_FOLD_ILLEGAL_TRANSITION],
            superseded[SBX_FOLD_SEQ_GAP]);
        assert_true(superseded[SBX_FOLD_ACCEPTED] > 1000);
        assert_true(superseded[SBX_FOLD_STALE_SEQ] > 100);
        assert_true(superseded[SBX_FOLD_DUPLICATE] > 10);
        assert_true(superseded[SBX_FOLD_STALE_LEASE] > 10);
        assert_true(superseded[SBX_FOLD_ILLEGAL_TRANSITION] +
                        superseded[SBX_FOLD_SEQ_GAP] >
                    0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(
                test_every_event_type_round_trips_through_the_codec),
            cmocka_unit_test(test_fold_follows_the_table_for_every_pair),
            cmocka_unit_test(test_fencing_41_after_42),
            cmocka_unit_test(test_duplicate_stale_gap_wrong_aggregate),
            cmocka_unit_test(test_racing_writers_readers_agree),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
