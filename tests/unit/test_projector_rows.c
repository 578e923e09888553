/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the projector's rows (src/projector/rows.c, extras.c), without
 * a database: a sandbox's life folded event by event gives the instance,
 * lease, environment and usage rows an operator expects; a superseded
 * event is recorded with its reason; an exec's output stays out of the
 * audit trail; an event_id that is not a UUID still gets a row.
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
#include "projector/extras.h"
#include "projector/rows.h"

typedef struct life_s {
        sbx_aggstore_t *store;
        sbx_prows_t rows;
        int64_t offset;
} life_t;

static void ext_free(sbx_aggentry_t *e, void *opaque)
{
        (void)opaque;
        sbx_pext_destroy(e->ext);
}

/* Folds @p ev (stolen) and writes its rows, as the projector does. */
static sbx_verdict_t feed(life_t *l, sbx_event_t *ev)
{
        sbx_aggentry_t *e =
            sbx_aggstore_upsert(l->store, ev->aggregate, ev->aggregate_id, 0);
        int old         = e->state->phase;
        sbx_verdict_t v = sbx_aggstore_fold(l->store, ev, 0, &e);
        if (v == SBX_FOLD_ACCEPTED) {
                if (!e->ext)
                        e->ext = sbx_pext_new();
                sbx_pext_apply(e->ext, e->state, ev);
        }
        sbx_prows_event(&l->rows, ev, v, e->state->aggregate, old,
                        e->state->phase, 0, l->offset++);
        if (v == SBX_FOLD_ACCEPTED)
                sbx_prows_aggregate(&l->rows, e->state, e->ext);
        sbx_event_destroy(ev);
        return v;
}

static sbx_event_t *event(sbx_evtype_t t,
                          int64_t seq,
                          int64_t lease,
                          json_t *payload)
{
        sbx_event_t *ev   = sbx_event_new(t, "sb-1", seq, payload);
        ev->occurred_at   = 1700000000000000LL + seq * 1000000;
        ev->lease_version = lease;
        sbx_event_set(&ev->tenant_id, "acme");
        return ev;
}

/* Line @p n (0-based) of table @p t's buffer (static storage). */
static const char *row(life_t *l, sbx_ptable_t t, int n)
{
        static char line[8192];
        const sbx_copybuf_t *b = &l->rows.buf[t];
        size_t i = 0, start = 0;
        for (; n > 0 && i < b->len; i++)
                if (b->buf[i] == '\n' && --n == 0)
                        start = i + 1;
        for (i = start; i < b->len && b->buf[i] != '\n'; i++)
                ;
        assert_true(i - start < sizeof(line));
        memcpy(line, b->buf + start, i - start);
        line[i - start] = '\0';
        return line;
}

static void expect_has(const char *text, const char *part)
{
        if (!strstr(text, part))
                fail_msg("'%s' not in '%s'", part, text);
}

static void lives(life_t *l)
{
        memset(l, 0, sizeof(*l));
        l->store = sbx_aggstore_new();
}

static void done(life_t *l)
{
        sbx_aggstore_foreach(l->store, ext_free, NULL);
        sbx_aggstore_destroy(l->store);
        sbx_prows_free(&l->rows);
}

static void test_a_sandbox_life_gives_its_rows(void **state)
{
        life_t l;
        (void)state;
        lives(&l);
        feed(&l, event(SBX_EV_SANDBOX_CREATED, 1, SBX_NO_LEASE,
                       json_pack("{s:s, s:s, s:s, s:s, s:s, s:f, s:I, s:s}",
                                 "origin", "claim", "node_id", "n1",
                                 "resource_class", "python-small", "template",
                                 "host", "template_digest", "sha256:t", "cpu",
                                 1.0, "memory_mb", (json_int_t)2048, "claim_id",
                                 "claim-1")));
        feed(&l, event(SBX_EV_PROVISIONED, 2, SBX_NO_LEASE,
                       json_pack("{s:s, s:I}", "runtime_instance", "runc:sb-1",
                                 "startup_us", (json_int_t)47000)));
        feed(&l, event(SBX_EV_LEASE_GRANTED, 3, SBX_NO_LEASE,
                       json_pack("{s:s, s:I, s:I}", "owner", "claim-1",
                                 "lease_version", (json_int_t)1, "expires_at",
                                 (json_int_t)1700000300000000LL)));
        feed(&l, event(SBX_EV_EXEC_REQUESTED, 4, 1,
                       json_pack("{s:s}", "exec_id", "e-1")));
        feed(&l,
             event(SBX_EV_EXEC_FINISHED, 5, 1,
                   json_pack("{s:s, s:i, s:s, s:{s:I, s:I, s:I, s:I, s:b}}",
                             "exec_id", "e-1", "exit_code", 137, "stdout",
                             "secret output", "usage", "wall_us",
                             (json_int_t)1000, "cpu_user_us", (json_int_t)600,
                             "cpu_sys_us", (json_int_t)200, "peak_memory_bytes",
                             (json_int_t)(3 << 20), "oom_killed", 1)));
        feed(&l, event(SBX_EV_LEASE_RELEASED, 6, 1,
                       json_pack("{s:s}", "reason", "released by client")));

        /* Each accepted event: its sandbox_event row and an instance row. */
        assert_int_equal(l.rows.buf[SBX_PT_EVENT].rows, 6);
        assert_int_equal(l.rows.buf[SBX_PT_SANDBOX].rows, 6);
        expect_has(row(&l, SBX_PT_EVENT, 0),
                   "\tsandbox\tsb-1\t1\tSandboxCreated\t\\N\tPROVISIONING\tt"
                   "\taccepted\t");
        expect_has(row(&l, SBX_PT_SANDBOX, 5), "\tSANITIZING\t6\t\\N\t1\tf\t");
        expect_has(row(&l, SBX_PT_SANDBOX, 5), "\trunc:sb-1\t");
        expect_has(row(&l, SBX_PT_SANDBOX, 5), "\tclaim-1\t");
        /* The lease: granted, heard of at the exec, ended by the release. */
        assert_int_equal(l.rows.buf[SBX_PT_LEASE].rows, 4);
        expect_has(row(&l, SBX_PT_LEASE, 0), "\tsb-1\t1\tclaim-1\tacme\t");
        expect_has(row(&l, SBX_PT_LEASE, 3),
                   "+00\tLeaseReleased\treleased by client");
        /* The environment at creation; usage for the lease's claim. */
        assert_int_equal(l.rows.buf[SBX_PT_ENV].rows, 1);
        expect_has(row(&l, SBX_PT_ENV, 0),
                   "\tsb-1\tsha256:t\t\\N\t\\N\t\\N\t0");
        assert_int_equal(l.rows.buf[SBX_PT_USAGE].rows, 1);
        expect_has(row(&l, SBX_PT_USAGE, 0),
                   "\tclaim-1\t1000\t800\t3145728\tt");
        /* The output is not in the audit trail, its size is. */
        expect_has(row(&l, SBX_PT_EVENT, 4), "\"stdout_bytes\":13");
        assert_null(strstr(row(&l, SBX_PT_EVENT, 4), "secret"));
        done(&l);
}

static void test_superseded_events_are_rows_with_their_reason(void **state)
{
        life_t l;
        (void)state;
        lives(&l);
        feed(&l, event(SBX_EV_SANDBOX_CREATED, 1, SBX_NO_LEASE,
                       json_pack("{s:s, s:s, s:s, s:s, s:f, s:I}", "origin",
                                 "pool", "node_id", "n1", "resource_class",
                                 "python-small", "template", "host", "cpu", 1.0,
                                 "memory_mb", (json_int_t)2048)));
        assert_int_equal(
            feed(&l, event(SBX_EV_SANDBOX_CREATED, 1, SBX_NO_LEASE,
                           json_pack("{s:s, s:s, s:s, s:s, s:f, s:I}", "origin",
                                     "pool", "node_id", "n2", "resource_class",
                                     "python-small", "template", "host", "cpu",
                                     1.0, "memory_mb", (json_int_t)2048))),
            SBX_FOLD_STALE_SEQ);
        assert_int_equal(feed(&l, event(SBX_EV_EXEC_REQUESTED, 2, 3,
                                        json_pack("{s:s}", "exec_id", "e"))),
                         SBX_FOLD_ILLEGAL_TRANSITION);
        assert_int_equal(l.rows.buf[SBX_PT_EVENT].rows, 3);
        assert_int_equal(l.rows.buf[SBX_PT_SANDBOX].rows, 1);
        expect_has(row(&l, SBX_PT_EVENT, 1),
                   "\tPROVISIONING\tPROVISIONING\tf\tstale_seq\t");
        expect_has(row(&l, SBX_PT_EVENT, 2), "\tf\tillegal_transition\t");
        /* No claim made it: its user is unknown, its claim_id none. */
        expect_has(row(&l, SBX_PT_SANDBOX, 0), "\tsb-1\tacme\t\\N\t\\N\tn1\t");
        done(&l);
}

static void test_an_event_id_that_is_not_a_uuid_still_has_a_row(void **state)
{
        life_t l;
        sbx_event_t *ev =
            event(SBX_EV_SANDBOX_CREATED, 1, SBX_NO_LEASE,
                  json_pack("{s:s, s:s, s:s, s:s, s:f, s:I}", "origin", "pool",
                            "node_id", "n1", "resource_class", "python-small",
                            "template", "host", "cpu", 1.0, "memory_mb",
                            (json_int_t)2048));
        char id[37];
        (void)state;
        lives(&l);
        sbx_event_set(&ev->event_id, "not-a-uuid");
        feed(&l, ev);
        snprintf(id, sizeof(id), "%s", row(&l, SBX_PT_EVENT, 0));
        assert_int_equal(id[8], '-');
        assert_int_equal(id[14], '8'); /* version 8: derived */
        expect_has(row(&l, SBX_PT_EVENT, 0), "\"event_id\":\"not-a-uuid\"");
        done(&l);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_a_sandbox_life_gives_its_rows),
            cmocka_unit_test(test_superseded_events_are_rows_with_their_reason),
            cmocka_unit_test(
                test_an_event_id_that_is_not_a_uuid_still_has_a_row),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
