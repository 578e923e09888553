/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The transition tables. Every event type has exactly one row: the set of
 * phases it may occur in and the phase it leads to. A row is the only
 * place a transition is defined; the fold, the stages' decide functions
 * and the README's tables all read it from here.
 */
#include "core/fsm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

#define B(p) (1u << (p))

static const struct {
        const char *name;
        sbx_aggregate_t agg;
        int fenced;
} evtypes[SBX_EV__CNT] = {
#define SBX_X_ROW(e, name, agg, fenced) {name, agg, fenced},
    SBX_EVTYPES(SBX_X_ROW)
#undef SBX_X_ROW
};

static const char *const claim_phases[SBX_CLAIM__CNT] = {
    "—",       "REQUESTED", "PLANNED",  "APPROVED",  "REJECTED",
    "PLACING", "BOUND",     "RELEASED", "CANCELLED", "FAILED"};

static const char *const sandbox_phases[SBX_SB__CNT] = {
    "—",          "PROVISIONING",   "READY",      "LEASED",      "RUNNING",
    "IDLE",       "REUSE_CHECKING", "SANITIZING", "HIBERNATING", "RECYCLING",
    "TERMINATED", "FAILED",         "LOST"};

static const char *const request_phases[SBX_REQ__CNT] = {"—", "REJECTED"};

#define CLAIM_LIVE                                                             \
        (B(SBX_CLAIM_REQUESTED) | B(SBX_CLAIM_PLANNED) |                       \
         B(SBX_CLAIM_APPROVED) | B(SBX_CLAIM_PLACING) | B(SBX_CLAIM_BOUND))
#define SB_ALL ((B(SBX_SB__CNT) - 1) & ~B(SBX_SB_NONE))
/* A RECYCLING sandbox is already on its way out: failing or losing it
 * again would only loop back into recycling. */
#define SB_LIVE                                                                \
        (SB_ALL & ~(B(SBX_SB_TERMINATED) | B(SBX_SB_FAILED) | B(SBX_SB_LOST) | \
                    B(SBX_SB_RECYCLING)))
#define SB_HELD (B(SBX_SB_LEASED) | B(SBX_SB_RUNNING))

static const sbx_transition_t table[] = {
    {SBX_EV_CLAIM_REQUESTED, B(SBX_CLAIM_NONE), SBX_CLAIM_REQUESTED, 0, NULL},
    {SBX_EV_PLAN_PROPOSED, B(SBX_CLAIM_REQUESTED), SBX_CLAIM_PLANNED, 0, NULL},
    {SBX_EV_PLAN_APPROVED, B(SBX_CLAIM_PLANNED), SBX_CLAIM_APPROVED, 0, NULL},
    {SBX_EV_PLAN_REJECTED, B(SBX_CLAIM_PLANNED), SBX_CLAIM_REJECTED, 0,
     "terminal"},
    {SBX_EV_REUSE_CHOSEN, B(SBX_CLAIM_APPROVED), SBX_CLAIM_PLACING, 0, NULL},
    {SBX_EV_PLACED, B(SBX_CLAIM_APPROVED), SBX_CLAIM_PLACING, 0, NULL},
    {SBX_EV_PLACEMENT_FAILED, B(SBX_CLAIM_PLACING) | B(SBX_CLAIM_BOUND),
     SBX_CLAIM_APPROVED, SBX_CLAIM_FAILED,
     "retry (BOUND: its sandbox was lost); FAILED when final"},
    {SBX_EV_CLAIM_BOUND, B(SBX_CLAIM_PLACING), SBX_CLAIM_BOUND, 0, NULL},
    {SBX_EV_CLAIM_RELEASED, B(SBX_CLAIM_BOUND), SBX_CLAIM_RELEASED, 0,
     "terminal"},
    {SBX_EV_CLAIM_CANCELLED, CLAIM_LIVE, SBX_CLAIM_CANCELLED, 0, "terminal"},
    {SBX_EV_CLAIM_FAILED, CLAIM_LIVE, SBX_CLAIM_FAILED, 0, "terminal"},

    {SBX_EV_SANDBOX_CREATED, B(SBX_SB_NONE), SBX_SB_PROVISIONING, 0, NULL},
    {SBX_EV_PROVISIONED, B(SBX_SB_PROVISIONING), SBX_SB_READY, 0, NULL},
    {SBX_EV_LEASE_GRANTED,
     B(SBX_SB_READY) | B(SBX_SB_IDLE) | B(SBX_SB_REUSE_CHECKING), SBX_SB_LEASED,
     0, "lease_version must be the current one + 1"},
    {SBX_EV_LEASE_RENEWED, SB_HELD, SBX_PHASE_SAME, 0, "fenced"},
    {SBX_EV_EXEC_REQUESTED, B(SBX_SB_LEASED), SBX_SB_RUNNING, 0, "fenced"},
    {SBX_EV_EXEC_STARTED, B(SBX_SB_RUNNING), SBX_PHASE_SAME, 0, "fenced"},
    {SBX_EV_EXEC_FINISHED, B(SBX_SB_RUNNING), SBX_SB_LEASED, 0, "fenced"},
    {SBX_EV_ENVIRONMENT_UPDATED,
     SB_HELD | B(SBX_SB_IDLE) | B(SBX_SB_SANITIZING), SBX_PHASE_SAME, 0, NULL},
    {SBX_EV_LEASE_RELEASED, SB_HELD, SBX_SB_SANITIZING, 0, "fenced"},
    {SBX_EV_LEASE_EXPIRED, SB_HELD, SBX_SB_SANITIZING, 0, "fenced"},
    {SBX_EV_SANITIZED, B(SBX_SB_SANITIZING), SBX_SB_IDLE, 0, NULL},
    {SBX_EV_REUSE_CHECK_STARTED, B(SBX_SB_IDLE), SBX_SB_REUSE_CHECKING, 0,
     NULL},
    {SBX_EV_REUSE_REJECTED, B(SBX_SB_REUSE_CHECKING), SBX_SB_IDLE, 0, NULL},
    {SBX_EV_SNAPSHOT_REQUESTED, B(SBX_SB_IDLE) | B(SBX_SB_LEASED),
     SBX_PHASE_SAME, 0, "fenced (IDLE: by its last lease)"},
    {SBX_EV_SNAPSHOT_TAKEN, B(SBX_SB_IDLE) | B(SBX_SB_LEASED), SBX_PHASE_SAME,
     0, NULL},
    {SBX_EV_HIBERNATED, B(SBX_SB_IDLE), SBX_SB_HIBERNATING, 0, NULL},
    {SBX_EV_RESUMED, B(SBX_SB_HIBERNATING), SBX_SB_IDLE, 0, NULL},
    {SBX_EV_RECYCLE_STARTED,
     SB_ALL & ~(B(SBX_SB_RECYCLING) | B(SBX_SB_TERMINATED)), SBX_SB_RECYCLING,
     0, "level reset|fork|destroy"},
    {SBX_EV_TERMINATED, B(SBX_SB_RECYCLING), SBX_SB_TERMINATED, 0, "terminal"},
    {SBX_EV_SANDBOX_FAILED, SB_LIVE, SBX_SB_FAILED, 0, "then recycled"},
    {SBX_EV_SANDBOX_LOST, SB_LIVE, SBX_SB_LOST, 0, "then recycled"},
    {SBX_EV_TAINTED, SB_ALL, SBX_PHASE_SAME, 0, "forces a level-3 destroy"},

    {SBX_EV_REQUEST_REJECTED, B(SBX_REQ_NONE), SBX_REQ_REJECTED, 0,
     "terminal; the client reads the reasons"},
};

const char *sbx_evtype_name(sbx_evtype_t t)
{
        return (unsigned)t < SBX_EV__CNT ? evtypes[t].name : "?";
}

int sbx_evtype_by_name(const char *name)
{
        int i;
        if (!strncmp(name, "sbx.", 4))
                name += 4;
        for (i = 0; i < SBX_EV__CNT; i++)
                if (!strcmp(evtypes[i].name, name))
                        return i;
        return -1;
}

sbx_aggregate_t sbx_evtype_aggregate(sbx_evtype_t t)
{
        sbx_assert((unsigned)t < SBX_EV__CNT);
        return evtypes[t].agg;
}

int sbx_evtype_fenced(sbx_evtype_t t)
{
        sbx_assert((unsigned)t < SBX_EV__CNT);
        return evtypes[t].fenced;
}

const char *sbx_aggregate_name(sbx_aggregate_t a)
{
        static const char *const names[] = {"claim", "sandbox", "request"};
        return (unsigned)a < SBX_AGG__CNT ? names[a] : "?";
}

int sbx_aggregate_by_name(const char *name)
{
        int a;
        for (a = 0; a < SBX_AGG__CNT; a++)
                if (!strcmp(name, sbx_aggregate_name((sbx_aggregate_t)a)))
                        return a;
        return -1;
}

int sbx_phase_count(sbx_aggregate_t a)
{
        return a == SBX_AGG_CLAIM     ? SBX_CLAIM__CNT
               : a == SBX_AGG_SANDBOX ? SBX_SB__CNT
                                      : SBX_REQ__CNT;
}

const char *sbx_phase_name(sbx_aggregate_t a, int phase)
{
        if (phase < 0 || phase >= sbx_phase_count(a))
                return "?";
        return a == SBX_AGG_CLAIM     ? claim_phases[phase]
               : a == SBX_AGG_SANDBOX ? sandbox_phases[phase]
                                      : request_phases[phase];
}

int sbx_phase_terminal(sbx_aggregate_t a, int phase)
{
        if (a == SBX_AGG_CLAIM)
                return phase == SBX_CLAIM_REJECTED ||
                       phase == SBX_CLAIM_RELEASED ||
                       phase == SBX_CLAIM_CANCELLED ||
                       phase == SBX_CLAIM_FAILED;
        if (a == SBX_AGG_SANDBOX)
                return phase == SBX_SB_TERMINATED;
        return phase == SBX_REQ_REJECTED;
}

const sbx_transition_t *sbx_fsm_transition(sbx_evtype_t type)
{
        size_t i;
        for (i = 0; i < SBX_ARRAY_SIZE(table); i++)
                if (table[i].type == type)
                        return &table[i];
        return NULL;
}

int sbx_fsm_next(sbx_aggregate_t a, int phase, sbx_evtype_t type, int final)
{
        const sbx_transition_t *t;
        if ((unsigned)type >= SBX_EV__CNT || evtypes[type].agg != a ||
            phase < 0 || phase >= sbx_phase_count(a))
                return -1;
        t = sbx_fsm_transition(type);
        if (!t || !(t->from & B(phase)))
                return -1;
        if (t->to == SBX_PHASE_SAME)
                return phase;
        return final && t->to_final ? t->to_final : t->to;
}

char *sbx_fsm_markdown(sbx_aggregate_t a)
{
        size_t cap = 8192, len = 0, i;
        char *out = sbx_malloc(cap);
        int p;

#define EMIT(...)                                                              \
        do {                                                                   \
                int n_ = snprintf(out + len, cap - len, __VA_ARGS__);          \
                sbx_assert(n_ >= 0 && (size_t)n_ < cap - len);                 \
                len += (size_t)n_;                                             \
        } while (0)

        EMIT("| event | from | to | note |\n|---|---|---|---|\n");
        for (i = 0; i < SBX_ARRAY_SIZE(table); i++) {
                const sbx_transition_t *t = &table[i];
                int first                 = 1;
                if (evtypes[t->type].agg != a)
                        continue;
                if (len + 1024 > cap) {
                        cap *= 2;
                        out = sbx_realloc(out, cap);
                }
                EMIT("| %s | ", evtypes[t->type].name);
                for (p = 0; p < sbx_phase_count(a); p++)
                        if (t->from & B(p)) {
                                EMIT("%s%s", first ? "" : ", ",
                                     sbx_phase_name(a, p));
                                first = 0;
                        }
                if (t->to == SBX_PHASE_SAME)
                        EMIT(" | same | ");
                else if (t->to_final)
                        EMIT(" | %s or %s | ", sbx_phase_name(a, t->to),
                             sbx_phase_name(a, t->to_final));
                else
                        EMIT(" | %s | ", sbx_phase_name(a, t->to));
                EMIT("%s |\n", t->note ? t->note : "");
        }
#undef EMIT
        return out;
}
