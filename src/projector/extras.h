/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the projector keeps per aggregate beside the fold's state: the
 * parts of its rows that the state does not hold (the runtime instance,
 * the lease history, the environment manifest, the planner's decision).
 * Like the state, extras are a function of the aggregate's accepted
 * events in order and of nothing else, so every replay rebuilds them the
 * same.
 */
#ifndef SBX_PROJECTOR_EXTRAS_H
#define SBX_PROJECTOR_EXTRAS_H

#include <stdint.h>

#include <jansson.h>

#include "core/fold.h"

/* What the last accepted event changed, besides the aggregate's row. */
#define SBX_PX_LEASE 0x1u /**< the current lease's row */
#define SBX_PX_ENV   0x2u /**< the environment's row */
#define SBX_PX_PLAN  0x4u /**< the claim's allocation decision */
#define SBX_PX_USAGE 0x8u /**< an exec finished: its usage */

typedef struct sbx_pext_s {
        unsigned changed; /**< SBX_PX_* of the last event */

        /* sandbox */
        char *claim_id; /* made for it, or the first to lease it */
        char *runtime_instance;
        int64_t startup_us; /* 0: not provisioned */

        /* the sandbox's current or last lease */
        int lease_open;
        int64_t lease_version, acquired_at, heartbeat_at, lease_expires_at;
        int64_t ended_at;
        char *lease_owner, *lease_tenant, *lease_session;
        char *ended_by, *end_reason;
        int reuse;

        /* the sandbox's environment */
        int64_t env_version;
        char *base_digest, *dependency_hash, *env_workspace;
        json_t *manifest;

        /* the last ExecFinished's usage */
        int64_t wall_us, cpu_us, peak_memory_bytes;
        int oom;

        /* claim: the planner's proposal and the guard's decision */
        char *planner, *fallback_reason, *input_hash, *signature;
        char *recommended_class, *plan_reason, *decision, *actual_class;
        char *guard_reasons;
        double recommended_cpu, confidence;
        int64_t recommended_memory_mb, planned_at, decided_at;
        int clamped;
} sbx_pext_t;

sbx_pext_t *sbx_pext_new(void);
void sbx_pext_destroy(sbx_pext_t *x);

/**
 * Brings @p x up to date after @p ev (borrowed) was accepted and folded
 * into @p s (borrowed, the state after it), and sets x->changed.
 */
void sbx_pext_apply(sbx_pext_t *x, const sbx_state_t *s, const sbx_event_t *ev);

#endif
