/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fold: the one deterministic rule by which every reader turns an
 * aggregate's events into its state (DESIGN.md §2).
 *
 *     accept e  iff  e.seq == state.seq + 1
 *               and  transition(state.phase, e.type) is legal
 *               and  (e is fenced => e.lease_version == state.lease_version)
 *
 * LeaseGranted is the fencing token's source: it must carry exactly
 * state.lease_version + 1. An event that fails is superseded with a
 * reason and changes nothing. The state depends only on the accepted
 * events in order, never on clocks, so every reader of the same partition
 * reaches the same state.
 */
#ifndef SBX_FOLD_H
#define SBX_FOLD_H

#include <stdint.h>

#include <jansson.h>

#include "core/event.h"

typedef enum sbx_verdict_e {
        SBX_FOLD_ACCEPTED,
        SBX_FOLD_DUPLICATE,          /**< this very event was accepted before */
        SBX_FOLD_STALE_SEQ,          /**< another event won this seq */
        SBX_FOLD_SEQ_GAP,            /**< seq beyond the next one */
        SBX_FOLD_ILLEGAL_TRANSITION, /**< not allowed in this phase */
        SBX_FOLD_STALE_LEASE,        /**< fencing token is not current */
        SBX_FOLD_WRONG_AGGREGATE,    /**< event of another aggregate kind */
        SBX_FOLD__CNT
} sbx_verdict_t;

#define SBX_FOLD_RECENT 8

/** Folded state of one aggregate: what later stages need. */
typedef struct sbx_state_s {
        sbx_aggregate_t aggregate;
        char *id;
        int phase;
        int64_t seq;
        uint64_t recent[SBX_FOLD_RECENT]; /* hashes of recent event ids */

        char *tenant_id, *session_id, *correlation_id;
        int64_t created_at, updated_at, last_active_at;

        /* lease (sandbox) / the lease it holds (claim) */
        char *lease_owner;
        int64_t lease_version; /* 0: never leased */
        int64_t lease_expires_at;

        /* claim */
        char *request_id, *user_id, *sandbox_id, *node_id, *resource_class;
        char *workspace_id, *network_profile;
        int attempts;
        int64_t ttl_seconds, lease_seconds;

        /* sandbox */
        char *origin, *pool, *template_name, *template_digest, *runtime;
        char *env_fingerprint, *last_snapshot, *exec_id, *recycle_level;
        char *env_packages;     /* "name==version,..." of its last manifest */
        char *snapshot_pending; /* the request of a snapshot not taken yet */
        char *fork_snapshot;    /* claim: fork this; sandbox: forked from */
        char *clean_snapshot;   /* its newest, taken untainted, dirty < 3 */
        char *lost_reason;      /* why it was lost (not failed); kept */
        char *taint_reason, *reason;
        char *fail_reason; /* why it failed or was lost; kept for good */
        int tainted, dirty_level;
        double cpu;
        int64_t memory_mb;
        int64_t n_execs, n_leases, n_reuses, n_snapshots, n_ooms;
} sbx_state_t;

const char *sbx_verdict_name(sbx_verdict_t v);

/** An empty state (seq 0, phase NONE) of @p aggregate @p id. */
sbx_state_t *sbx_state_new(sbx_aggregate_t aggregate, const char *id);
void sbx_state_destroy(sbx_state_t *s);

/** Folds @p ev (borrowed) into @p s; changes @p s only if accepted. */
sbx_verdict_t sbx_fold(sbx_state_t *s, const sbx_event_t *ev);

/** 1 if a snapshot of sandbox @p s taken now is clean, one a later claim
 *  may be restored from: @p s is untainted and below dirty level 3. */
int sbx_state_clean(const sbx_state_t *s);

/** The state as JSON (a new reference): for checkpoints and comparisons. */
json_t *sbx_state_to_json(const sbx_state_t *s);
/** A state from sbx_state_to_json()'s output; NULL if malformed. */
sbx_state_t *sbx_state_from_json(const json_t *j);

#endif
