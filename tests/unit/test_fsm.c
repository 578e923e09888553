/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the transition tables: every (event, phase) pair of both
 * aggregates is checked against an independent transcription of the
 * tables of DESIGN.md §2 below, so a wrong row in fsm.c fails here; and
 * the README's copy of the tables must be what `sbx fsm --markdown`
 * generates.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/fsm.h"
#include "core/util.h"

/*
 * DESIGN.md §2, one line per event: "Event: FROM... -> TO". ANY means
 * every phase but NONE; LIVE_CLAIM the non-terminal claim phases;
 * LIVE_SB every sandbox phase but TERMINATED, FAILED, LOST and RECYCLING
 * (refined: failing a sandbox being recycled would loop); SAME keeps
 * the phase. Where the design is refined (EnvironmentUpdated also at
 * release time, FAILED/LOST recyclable), the line says so.
 */
static const char *const spec[] = {
    "ClaimRequested: — -> REQUESTED",
    "PlanProposed: REQUESTED -> PLANNED",
    "PlanApproved: PLANNED -> APPROVED",
    "PlanRejected: PLANNED -> REJECTED",
    "ReuseChosen: APPROVED -> PLACING",
    "Placed: APPROVED -> PLACING",
    "PlacementFailed: PLACING BOUND -> APPROVED",
    "ClaimBound: PLACING -> BOUND",
    "ClaimReleased: BOUND -> RELEASED",
    "ClaimCancelled: LIVE_CLAIM -> CANCELLED",
    "ClaimFailed: LIVE_CLAIM -> FAILED",
    "SandboxCreated: — -> PROVISIONING",
    "Provisioned: PROVISIONING -> READY",
    "LeaseGranted: READY IDLE REUSE_CHECKING -> LEASED",
    "LeaseRenewed: LEASED RUNNING -> SAME",
    "ExecRequested: LEASED -> RUNNING",
    "ExecStarted: RUNNING -> SAME",
    "ExecFinished: RUNNING -> LEASED",
    /* refined: the executor records the manifest at release too */
    "EnvironmentUpdated: LEASED RUNNING IDLE SANITIZING -> SAME",
    "LeaseReleased: LEASED RUNNING -> SANITIZING",
    "LeaseExpired: LEASED RUNNING -> SANITIZING",
    "Sanitized: SANITIZING -> IDLE",
    "ReuseCheckStarted: IDLE -> REUSE_CHECKING",
    "ReuseRejected: REUSE_CHECKING -> IDLE",
    "SnapshotTaken: IDLE LEASED -> SAME",
    "Hibernated: IDLE -> HIBERNATING",
    "Resumed: HIBERNATING -> IDLE",
    /* FAILED and LOST sandboxes are then recycled */
    ("RecycleStarted: PROVISIONING READY LEASED RUNNING IDLE "
     "REUSE_CHECKING SANITIZING HIBERNATING FAILED LOST -> RECYCLING"),
    "Terminated: RECYCLING -> TERMINATED",
    "SandboxFailed: LIVE_SB -> FAILED",
    "SandboxLost: LIVE_SB -> LOST",
    "Tainted: ANY -> SAME",
    "RequestRejected: — -> REJECTED",
    "SnapshotRequested: IDLE LEASED -> SAME",
};

static int phase_by_name(sbx_aggregate_t a, const char *name)
{
        int p;
        for (p = 0; p < sbx_phase_count(a); p++)
                if (!strcmp(sbx_phase_name(a, p), name))
                        return p;
        fail_msg("unknown phase %s", name);
        return -1;
}

/* Expected next phase of (type, phase) per the spec above, or -1. */
static int expected(sbx_evtype_t t, int phase)
{
        sbx_aggregate_t a = sbx_evtype_aggregate(t);
        size_t i;
        for (i = 0; i < SBX_ARRAY_SIZE(spec); i++) {
                char line[512], *from, *to, *tok, *save = NULL;
                int legal = 0;
                strcpy(line, spec[i]);
                from  = strchr(line, ':');
                *from = '\0';
                if (strcmp(line, sbx_evtype_name(t)))
                        continue;
                from += 2;
                to  = strstr(from, " -> ");
                *to = '\0';
                to += 4;
                for (tok = strtok_r(from, " ", &save); tok;
                     tok = strtok_r(NULL, " ", &save)) {
                        if (!strcmp(tok, "ANY"))
                                legal |= phase != 0;
                        else if (!strcmp(tok, "LIVE_CLAIM"))
                                legal |=
                                    phase != 0 && !sbx_phase_terminal(a, phase);
                        else if (!strcmp(tok, "LIVE_SB"))
                                legal |= phase != SBX_SB_NONE &&
                                         phase != SBX_SB_TERMINATED &&
                                         phase != SBX_SB_FAILED &&
                                         phase != SBX_SB_LOST &&
                                         phase != SBX_SB_RECYCLING;
                        else
                                legal |= phase_by_name(a, tok) == phase;
                }
                if (!legal)
                        return -1;
                return !strcmp(to, "SAME") ? phase : phase_by_name(a, to);
        }
        fail_msg("event %s missing from the spec", sbx_evtype_name(t));
        return -1;
}

static void test_every_transition_legal_and_illegal(void **state)
{
        int t, p, legal = 0, illegal = 0;
        (void)state;
        for (t = 0; t < SBX_EV__CNT; t++) {
                sbx_aggregate_t a = sbx_evtype_aggregate((sbx_evtype_t)t);
                int other;
                for (p = 0; p < sbx_phase_count(a); p++) {
                        int want = expected((sbx_evtype_t)t, p);
                        int got  = sbx_fsm_next(a, p, (sbx_evtype_t)t, 0);
                        if (want != got)
                                fail_msg("%s in %s: table says %s, spec %s",
                                         sbx_evtype_name((sbx_evtype_t)t),
                                         sbx_phase_name(a, p),
                                         got < 0 ? "illegal"
                                                 : sbx_phase_name(a, got),
                                         want < 0 ? "illegal"
                                                  : sbx_phase_name(a, want));
                        if (want < 0)
                                illegal++;
                        else
                                legal++;
                }
                /* An event is never legal on another aggregate kind. */
                for (other = 0; other < SBX_AGG__CNT; other++)
                        if ((sbx_aggregate_t)other != a)
                                assert_int_equal(
                                    sbx_fsm_next((sbx_aggregate_t)other, 0,
                                                 (sbx_evtype_t)t, 0),
                                    -1);
        }
        /* The tables are not trivially all-legal or all-illegal. */
        assert_true(legal > 60);
        assert_true(illegal > 250);
}

static void test_placement_failed_final_goes_to_failed(void **state)
{
        (void)state;
        assert_int_equal(sbx_fsm_next(SBX_AGG_CLAIM, SBX_CLAIM_PLACING,
                                      SBX_EV_PLACEMENT_FAILED, 0),
                         SBX_CLAIM_APPROVED);
        assert_int_equal(sbx_fsm_next(SBX_AGG_CLAIM, SBX_CLAIM_PLACING,
                                      SBX_EV_PLACEMENT_FAILED, 1),
                         SBX_CLAIM_FAILED);
}

static void test_names_round_trip(void **state)
{
        int t;
        (void)state;
        for (t = 0; t < SBX_EV__CNT; t++) {
                char q[128];
                assert_int_equal(
                    sbx_evtype_by_name(sbx_evtype_name((sbx_evtype_t)t)), t);
                snprintf(q, sizeof(q), "sbx.%s",
                         sbx_evtype_name((sbx_evtype_t)t));
                assert_int_equal(sbx_evtype_by_name(q), t);
        }
        assert_int_equal(sbx_evtype_by_name("NoSuchEvent"), -1);
        assert_int_equal(sbx_aggregate_by_name("sandbox"), SBX_AGG_SANDBOX);
        assert_int_equal(sbx_aggregate_by_name("pod"), -1);
}

static void test_readme_tables_are_generated_from_the_code(void **state)
{
        char *readme = NULL, err[256];
        int a;
        (void)state;
        assert_int_equal(sbx_read_file(SBX_SOURCE_ROOT "/README.md", 1 << 20,
                                       &readme, NULL, err, sizeof(err)),
                         SBX_OK);
        for (a = 0; a < SBX_AGG__CNT; a++) {
                char begin[64], *md = sbx_fsm_markdown((sbx_aggregate_t)a);
                const char *at, *end;
                snprintf(begin, sizeof(begin), "<!-- fsm:%s -->\n",
                         sbx_aggregate_name((sbx_aggregate_t)a));
                at = strstr(readme, begin);
                if (!at)
                        fail_msg("README.md lacks the marker %s", begin);
                at += strlen(begin);
                end = strstr(at, "<!-- /fsm -->");
                assert_non_null(end);
                if ((size_t)(end - at) != strlen(md) ||
                    memcmp(at, md, strlen(md)))
                        fail_msg(
                            "README.md's %s table is stale; regenerate it "
                            "with `sbx fsm --markdown`:\n%s",
                            sbx_aggregate_name((sbx_aggregate_t)a), md);
                free(md);
        }
        free(readme);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_every_transition_legal_and_illegal),
            cmocka_unit_test(test_placement_failed_final_goes_to_failed),
            cmocka_unit_test(test_names_round_trip),
            cmocka_unit_test(test_readme_tables_are_generated_from_the_code),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
