/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The aggregates' state machines: event types, phases, and the transition
 * tables of DESIGN.md §2, defined once here. The README's tables are
 * generated from them (`sbx fsm --markdown`) and a test checks they match.
 */
#ifndef SBX_FSM_H
#define SBX_FSM_H

#include <stddef.h>
#include <stdint.h>

typedef enum sbx_aggregate_e {
        SBX_AGG_CLAIM,
        SBX_AGG_SANDBOX,
        SBX_AGG_REQUEST, /* a rejected client command, keyed by request id */
        SBX_AGG__CNT
} sbx_aggregate_t;

/* Event types; the names are the payload records' names in schemas/. */
#define SBX_EVTYPES(X)                                                         \
        X(CLAIM_REQUESTED, "ClaimRequested", SBX_AGG_CLAIM, 0)                 \
        X(PLAN_PROPOSED, "PlanProposed", SBX_AGG_CLAIM, 0)                     \
        X(PLAN_APPROVED, "PlanApproved", SBX_AGG_CLAIM, 0)                     \
        X(PLAN_REJECTED, "PlanRejected", SBX_AGG_CLAIM, 0)                     \
        X(REUSE_CHOSEN, "ReuseChosen", SBX_AGG_CLAIM, 0)                       \
        X(PLACED, "Placed", SBX_AGG_CLAIM, 0)                                  \
        X(PLACEMENT_FAILED, "PlacementFailed", SBX_AGG_CLAIM, 0)               \
        X(CLAIM_BOUND, "ClaimBound", SBX_AGG_CLAIM, 0)                         \
        X(CLAIM_RELEASED, "ClaimReleased", SBX_AGG_CLAIM, 0)                   \
        X(CLAIM_CANCELLED, "ClaimCancelled", SBX_AGG_CLAIM, 0)                 \
        X(CLAIM_FAILED, "ClaimFailed", SBX_AGG_CLAIM, 0)                       \
        X(SANDBOX_CREATED, "SandboxCreated", SBX_AGG_SANDBOX, 0)               \
        X(PROVISIONED, "Provisioned", SBX_AGG_SANDBOX, 0)                      \
        X(LEASE_GRANTED, "LeaseGranted", SBX_AGG_SANDBOX, 0)                   \
        X(LEASE_RENEWED, "LeaseRenewed", SBX_AGG_SANDBOX, 1)                   \
        X(EXEC_REQUESTED, "ExecRequested", SBX_AGG_SANDBOX, 1)                 \
        X(EXEC_STARTED, "ExecStarted", SBX_AGG_SANDBOX, 1)                     \
        X(EXEC_FINISHED, "ExecFinished", SBX_AGG_SANDBOX, 1)                   \
        X(ENVIRONMENT_UPDATED, "EnvironmentUpdated", SBX_AGG_SANDBOX, 0)       \
        X(LEASE_RELEASED, "LeaseReleased", SBX_AGG_SANDBOX, 1)                 \
        X(LEASE_EXPIRED, "LeaseExpired", SBX_AGG_SANDBOX, 1)                   \
        X(SANITIZED, "Sanitized", SBX_AGG_SANDBOX, 0)                          \
        X(REUSE_CHECK_STARTED, "ReuseCheckStarted", SBX_AGG_SANDBOX, 0)        \
        X(REUSE_REJECTED, "ReuseRejected", SBX_AGG_SANDBOX, 0)                 \
        X(SNAPSHOT_TAKEN, "SnapshotTaken", SBX_AGG_SANDBOX, 0)                 \
        X(HIBERNATED, "Hibernated", SBX_AGG_SANDBOX, 0)                        \
        X(RESUMED, "Resumed", SBX_AGG_SANDBOX, 0)                              \
        X(RECYCLE_STARTED, "RecycleStarted", SBX_AGG_SANDBOX, 0)               \
        X(TERMINATED, "Terminated", SBX_AGG_SANDBOX, 0)                        \
        X(SANDBOX_FAILED, "SandboxFailed", SBX_AGG_SANDBOX, 0)                 \
        X(SANDBOX_LOST, "SandboxLost", SBX_AGG_SANDBOX, 0)                     \
        X(TAINTED, "Tainted", SBX_AGG_SANDBOX, 0)                              \
        X(REQUEST_REJECTED, "RequestRejected", SBX_AGG_REQUEST, 0)             \
        X(SNAPSHOT_REQUESTED, "SnapshotRequested", SBX_AGG_SANDBOX, 1)

typedef enum sbx_evtype_e {
#define SBX_X_ENUM(e, name, agg, fenced) SBX_EV_##e,
        SBX_EVTYPES(SBX_X_ENUM)
#undef SBX_X_ENUM
            SBX_EV__CNT
} sbx_evtype_t;

/* Phases. 0 (NONE) is "the aggregate does not exist yet". */
typedef enum sbx_claim_phase_e {
        SBX_CLAIM_NONE,
        SBX_CLAIM_REQUESTED,
        SBX_CLAIM_PLANNED,
        SBX_CLAIM_APPROVED,
        SBX_CLAIM_REJECTED,
        SBX_CLAIM_PLACING,
        SBX_CLAIM_BOUND,
        SBX_CLAIM_RELEASED,
        SBX_CLAIM_CANCELLED,
        SBX_CLAIM_FAILED,
        SBX_CLAIM__CNT
} sbx_claim_phase_t;

typedef enum sbx_sandbox_phase_e {
        SBX_SB_NONE,
        SBX_SB_PROVISIONING,
        SBX_SB_READY,
        SBX_SB_LEASED,
        SBX_SB_RUNNING,
        SBX_SB_IDLE,
        SBX_SB_REUSE_CHECKING,
        SBX_SB_SANITIZING,
        SBX_SB_HIBERNATING,
        SBX_SB_RECYCLING,
        SBX_SB_TERMINATED,
        SBX_SB_FAILED,
        SBX_SB_LOST,
        SBX_SB__CNT
} sbx_sandbox_phase_t;

typedef enum sbx_request_phase_e {
        SBX_REQ_NONE,
        SBX_REQ_REJECTED,
        SBX_REQ__CNT
} sbx_request_phase_t;

/* "to" value of a transition that keeps the phase. */
#define SBX_PHASE_SAME (-1)

typedef struct sbx_transition_s {
        sbx_evtype_t type;
        uint32_t from; /**< bit mask of phases */
        int to;        /**< phase, or SBX_PHASE_SAME */
        int to_final;  /**< for PlacementFailed{final}: the other target */
        const char *note;
} sbx_transition_t;

const char *sbx_evtype_name(sbx_evtype_t t);
/** Event type by payload record name (short or "sbx."-qualified); -1 if
 * unknown. */
int sbx_evtype_by_name(const char *name);
sbx_aggregate_t sbx_evtype_aggregate(sbx_evtype_t t);
/** Must the event carry the current lease_version? */
int sbx_evtype_fenced(sbx_evtype_t t);

const char *sbx_aggregate_name(sbx_aggregate_t a);
int sbx_aggregate_by_name(const char *name);
const char *sbx_phase_name(sbx_aggregate_t a, int phase);
int sbx_phase_count(sbx_aggregate_t a);
/** Terminal: no event but Tainted is legal any more. */
int sbx_phase_terminal(sbx_aggregate_t a, int phase);

/** The transition for @p type (every type has exactly one row). */
const sbx_transition_t *sbx_fsm_transition(sbx_evtype_t type);

/**
 * Next phase after @p type in @p phase, or -1 if the transition is
 * illegal. @p final selects PlacementFailed's final target.
 */
int sbx_fsm_next(sbx_aggregate_t a, int phase, sbx_evtype_t type, int final);

/** The transition table of @p a as Markdown (caller frees). */
char *sbx_fsm_markdown(sbx_aggregate_t a);

#endif
