/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the aggregate store, the in-memory table every stage folds the
 * log into: thousands of ids survive the table's growth, each aggregate
 * keeps its own fold verdicts, a stage's pending append is cleared when
 * the log reaches its seq, and foreach visits every entry exactly once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/aggstore.h"
#include "core/util.h"

#define N_IDS 5000

static sbx_event_t *mk(sbx_evtype_t t,
                       const char *id,
                       int64_t seq,
                       json_t *payload)
{
        sbx_event_t *ev = sbx_event_new(t, id, seq, payload);
        sbx_event_set(&ev->producer, "test/1");
        sbx_event_set(&ev->correlation_id, id);
        sbx_event_set(&ev->tenant_id, "acme");
        return ev;
}

static sbx_event_t *requested(const char *id)
{
        return mk(SBX_EV_CLAIM_REQUESTED, id, 1,
                  json_pack("{s:s, s:{s:s}}", "request_id", id, "task", "text",
                            "a task"));
}

static sbx_event_t *proposed(const char *id, int64_t seq)
{
        return mk(
            SBX_EV_PLAN_PROPOSED, id, seq,
            json_pack("{s:s, s:s, s:s, s:{s:s, s:f, s:I, s:I}}", "planner",
                      "rules", "input_hash", "h", "signature", "sig", "intent",
                      "workload", "plain-script", "cpu", 1.0, "memory_mb",
                      (json_int_t)2048, "disk_gb", (json_int_t)10));
}

static sbx_verdict_t fold(sbx_aggstore_t *s,
                          sbx_event_t *ev,
                          int32_t partition,
                          sbx_aggentry_t **ret)
{
        sbx_verdict_t v = sbx_aggstore_fold(s, ev, partition, ret);
        sbx_event_destroy(ev);
        return v;
}

static void test_thousands_of_ids_survive_growth(void **state)
{
        sbx_aggstore_t *s      = sbx_aggstore_new();
        sbx_aggentry_t **first = sbx_calloc(N_IDS, sizeof(*first));
        char id[32];
        int i;
        (void)state;

        for (i = 0; i < N_IDS; i++) {
                sbx_fmt(id, sizeof(id), "claim-%d", i);
                first[i] = sbx_aggstore_upsert(
                    s, i % 2 ? SBX_AGG_SANDBOX : SBX_AGG_CLAIM, id, i % 12);
                assert_non_null(first[i]);
                assert_string_equal(first[i]->state->id, id);
                assert_int_equal(first[i]->state->seq, 0);
                assert_int_equal(sbx_aggstore_count(s), (size_t)i + 1);
        }
        for (i = 0; i < N_IDS; i++) {
                sbx_aggentry_t *e;
                sbx_fmt(id, sizeof(id), "claim-%d", i);
                e = sbx_aggstore_get(s, id);
                /* The same entry, found after the table grew around it. */
                assert_ptr_equal(e, first[i]);
                assert_string_equal(e->state->id, id);
                assert_int_equal(e->state->aggregate,
                                 i % 2 ? SBX_AGG_SANDBOX : SBX_AGG_CLAIM);
                assert_int_equal(e->partition, i % 12);
                /* An upsert of a known id returns it and adds nothing. */
                assert_ptr_equal(sbx_aggstore_upsert(s, SBX_AGG_CLAIM, id, 99),
                                 e);
        }
        assert_int_equal(sbx_aggstore_count(s), N_IDS);
        assert_null(sbx_aggstore_get(s, "claim-5000"));
        assert_null(sbx_aggstore_get(s, "claim-"));
        assert_null(sbx_aggstore_get(s, ""));
        free(first);
        sbx_aggstore_destroy(s);
}

static void test_fold_verdicts_are_per_aggregate(void **state)
{
        sbx_aggstore_t *s  = sbx_aggstore_new();
        sbx_event_t *first = requested("c-1");
        sbx_aggentry_t *e = NULL, *e2 = NULL;
        (void)state;

        assert_int_equal(sbx_aggstore_fold(s, first, 3, &e), SBX_FOLD_ACCEPTED);
        assert_non_null(e);
        assert_int_equal(e->state->aggregate, SBX_AGG_CLAIM);
        assert_int_equal(e->state->phase, SBX_CLAIM_REQUESTED);
        assert_int_equal(e->state->seq, 1);
        assert_int_equal(e->partition, 3);
        /* Redelivered: a duplicate, nothing changes. */
        assert_int_equal(sbx_aggstore_fold(s, first, 3, NULL),
                         SBX_FOLD_DUPLICATE);
        sbx_event_destroy(first);
        /* Another writer's seq 1: stale. A seq from the future: a gap. */
        assert_int_equal(fold(s, requested("c-1"), 3, NULL),
                         SBX_FOLD_STALE_SEQ);
        assert_int_equal(fold(s, proposed("c-1", 3), 3, NULL),
                         SBX_FOLD_SEQ_GAP);
        assert_int_equal(e->state->seq, 1);

        /* A second aggregate starts from its own seq 0. */
        assert_int_equal(fold(s, requested("c-2"), 5, &e2), SBX_FOLD_ACCEPTED);
        assert_true(e2 != e);
        assert_int_equal(e2->state->seq, 1);
        assert_int_equal(e2->partition, 5);
        assert_int_equal(fold(s, proposed("c-2", 2), 5, NULL),
                         SBX_FOLD_ACCEPTED);
        assert_int_equal(e2->state->phase, SBX_CLAIM_PLANNED);
        /* ...and c-1 did not move. */
        assert_int_equal(e->state->seq, 1);
        assert_int_equal(e->state->phase, SBX_CLAIM_REQUESTED);
        assert_int_equal(fold(s, proposed("c-1", 2), 3, NULL),
                         SBX_FOLD_ACCEPTED);
        assert_int_equal(e->state->phase, SBX_CLAIM_PLANNED);

        /* An event of the wrong kind for an existing aggregate. */
        assert_int_equal(fold(s,
                              mk(SBX_EV_PROVISIONED, "c-1", 3,
                                 json_pack("{s:s}", "runtime_instance", "x")),
                              3, NULL),
                         SBX_FOLD_WRONG_AGGREGATE);
        assert_int_equal(e->state->aggregate, SBX_AGG_CLAIM);
        assert_int_equal(sbx_aggstore_count(s), 2);
        sbx_aggstore_destroy(s);
}

/* A stage that looked an id up before its first event (as a claim, say)
 * still folds it as whatever its first event says it is. */
static void test_first_event_sets_the_kind(void **state)
{
        sbx_aggstore_t *s = sbx_aggstore_new();
        sbx_aggentry_t *e = sbx_aggstore_upsert(s, SBX_AGG_CLAIM, "sb-1", 0);
        (void)state;

        assert_int_equal(
            fold(s,
                 mk(SBX_EV_SANDBOX_CREATED, "sb-1", 1,
                    json_pack("{s:s, s:s}", "origin", "pool", "node_id", "n1")),
                 7, NULL),
            SBX_FOLD_ACCEPTED);
        assert_int_equal(e->state->aggregate, SBX_AGG_SANDBOX);
        assert_int_equal(e->state->phase, SBX_SB_PROVISIONING);
        assert_int_equal(e->partition, 7);
        sbx_aggstore_destroy(s);
}

static void test_pending_seq_cleared_when_reached(void **state)
{
        sbx_aggstore_t *s = sbx_aggstore_new();
        sbx_aggentry_t *e = NULL;
        sbx_event_t *mine;
        (void)state;

        assert_int_equal(fold(s, requested("c-1"), 0, &e), SBX_FOLD_ACCEPTED);
        /* This stage appended seq 3 and awaits it. */
        e->pending_seq = 3;
        e->pending_at  = 42;
        assert_int_equal(fold(s, proposed("c-1", 2), 0, NULL),
                         SBX_FOLD_ACCEPTED);
        assert_int_equal(e->pending_seq, 3); /* not there yet */
        /* A superseded event does not move the state: still pending. */
        assert_int_equal(fold(s, proposed("c-1", 2), 0, NULL),
                         SBX_FOLD_STALE_SEQ);
        assert_int_equal(e->pending_seq, 3);
        mine = mk(SBX_EV_PLAN_APPROVED, "c-1", 3,
                  json_pack("{s:s, s:f, s:I}", "resource_class", "python-small",
                            "cpu", 1.0, "memory_mb", (json_int_t)2048));
        assert_int_equal(sbx_aggstore_fold(s, mine, 0, NULL),
                         SBX_FOLD_ACCEPTED);
        assert_int_equal(e->pending_seq, 0);
        sbx_event_destroy(mine);

        /* A rival's event that wins our seq clears it as well: the state
         * reached the seq, and the stage decides again from there. */
        e->pending_seq = 4;
        assert_int_equal(fold(s,
                              mk(SBX_EV_CLAIM_CANCELLED, "c-1", 4,
                                 json_pack("{s:s}", "reason", "user")),
                              0, NULL),
                         SBX_FOLD_ACCEPTED);
        assert_int_equal(e->pending_seq, 0);
        sbx_aggstore_destroy(s);
}

typedef struct visits_s {
        unsigned char *seen;
        size_t calls;
} visits_t;

static void visit(sbx_aggentry_t *e, void *opaque)
{
        visits_t *v = opaque;
        int i       = atoi(e->state->id + strlen("sb-"));
        assert_true(i >= 0 && i < N_IDS);
        v->seen[i]++;
        v->calls++;
}

static void test_foreach_visits_each_entry_once(void **state)
{
        sbx_aggstore_t *s = sbx_aggstore_new();
        visits_t v        = {sbx_calloc(N_IDS, 1), 0};
        char id[32];
        int i;
        (void)state;

        sbx_aggstore_foreach(s, visit, &v);
        assert_int_equal(v.calls, 0);
        for (i = 0; i < N_IDS; i++) {
                sbx_fmt(id, sizeof(id), "sb-%d", i);
                sbx_aggstore_upsert(s, SBX_AGG_SANDBOX, id, 0);
                if (i % 3 == 0) /* some twice */
                        sbx_aggstore_upsert(s, SBX_AGG_SANDBOX, id, 0);
        }
        sbx_aggstore_foreach(s, visit, &v);
        assert_int_equal(v.calls, N_IDS);
        for (i = 0; i < N_IDS; i++)
                if (v.seen[i] != 1)
                        fail_msg("sb-%d visited %d times", i, v.seen[i]);
        free(v.seen);
        sbx_aggstore_destroy(s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_thousands_of_ids_survive_growth),
            cmocka_unit_test(test_fold_verdicts_are_per_aggregate),
            cmocka_unit_test(test_first_event_sets_the_kind),
            cmocka_unit_test(test_pending_seq_cleared_when_reached),
            cmocka_unit_test(test_foreach_visits_each_entry_once),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
