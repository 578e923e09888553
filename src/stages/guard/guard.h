/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The guard stage's decision logic (DESIGN.md §5), free of Kafka: it maps
 * a planner's untrusted ResourceIntent onto one of the resource classes
 * the claim's tenant may use and answers PlanApproved or PlanRejected,
 * with the reasons. It trusts neither the planner nor the client: sizes
 * come from the policy's classes, never from the intent; a plan that asks
 * for more than the tenant's largest class gets that class, marked
 * clamped; network profile, runtime and template are checked per tenant
 * and risk level; and each tenant's commitment is kept within its quota.
 *
 * Commitment is what the guard has approved and not yet seen end: a claim
 * counts against its tenant's max_cpu / max_memory_mb / max_sandboxes from
 * its PlanApproved (or from the guard's own approval, before that is read
 * back) through APPROVED, PLACING and BOUND, until ClaimReleased,
 * ClaimCancelled, ClaimFailed or a final PlacementFailed. Counting from
 * the approval, not from the binding, is what stops a burst of plans from
 * being approved past the quota before any of them is placed.
 */
#ifndef SBX_GUARD_H
#define SBX_GUARD_H

#include <stdint.h>

#include "core/event.h"
#include "core/fold.h"
#include "core/policy.h"

typedef struct sbx_guard_s sbx_guard_t;

/** A tenant's current commitment, as the guard counts it. */
typedef struct sbx_guard_usage_s {
        double cpu;
        int64_t memory_mb;
        int64_t sandboxes;
} sbx_guard_usage_t;

/**
 * A guard enforcing @p policy, which is borrowed and must outlive it. A
 * new policy needs a new guard, fed the log again from its start.
 */
sbx_guard_t *sbx_guard_new(const sbx_policy_t *policy);
/** Frees @p g; NULL is fine. */
void sbx_guard_destroy(sbx_guard_t *g);

/**
 * Feeds one lifecycle event (borrowed), in log order; call it for every
 * event, the guard's own included, before deciding on it. Only claim
 * events matter. Like the fold, it takes an event only if its seq is the
 * claim's next and the transition is legal, so redelivered and superseded
 * events change nothing. A claim first seen after its ClaimRequested is
 * not counted: the commitment is exact once the guard has read the log
 * from its start (or from a point before every live claim began).
 */
void sbx_guard_observe(sbx_guard_t *g, const sbx_event_t *ev);

/**
 * Decides @p plan_proposed (borrowed; a PlanProposed the fold accepted)
 * for @p claim (borrowed; the claim's state with that event folded in, so
 * in phase PLANNED). Returns a new PlanApproved or PlanRejected event for
 * the claim at seq @p next_seq, produced by @p producer (copied), with
 * tenant, session and correlation from @p claim and causation_id =
 * @p plan_proposed's event_id; the caller owns it. An approval counts
 * against the tenant's quota at once. Returns NULL when there is nothing
 * to decide: not a PlanProposed of this claim, the claim is not PLANNED,
 * or the guard has already seen a decision for it.
 */
sbx_event_t *sbx_guard_decide(sbx_guard_t *g,
                              const sbx_event_t *plan_proposed,
                              const sbx_state_t *claim,
                              int64_t next_seq,
                              const char *producer);

/**
 * Drops what the guard counts for claim @p claim_id (borrowed): for the
 * glue, when an approval from sbx_guard_decide() could not be appended
 * and will not be retried.
 */
void sbx_guard_forget(sbx_guard_t *g, const char *claim_id);

/**
 * Tenant @p tenant's commitment into *ret_usage; SBX_ERR_NOENT (and
 * nothing written) for a tenant the policy does not know.
 */
sbx_err_t sbx_guard_usage(const sbx_guard_t *g,
                          const char *tenant,
                          sbx_guard_usage_t *ret_usage);

#endif
