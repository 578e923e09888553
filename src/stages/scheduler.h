/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scheduler: "where" — for an approved claim, reuse a compatible idle
 * sandbox of the same session, or place a new one on the best of K
 * sampled feasible nodes (DESIGN.md §6). The pure parts are exposed for
 * tests: the reuse check and the placement.
 */
#ifndef SBX_SCHEDULER_H
#define SBX_SCHEDULER_H

#include <jansson.h>

#include "core/fold.h"
#include "stages/nodes.h"
#include "stages/stage.h"

extern const sbx_stage_t sbx_stage_scheduler;

#define SBX_SCHED_K            3
#define SBX_SCHED_MAX_ATTEMPTS 3
#define SBX_NODE_GRACE_US      (5 * 1000000LL) /* 5 missed heartbeats */
/* A reuse with this many conflicting packages at most installs them in an
 * isolated venv above the sandbox's own (ReuseChosen mode "venv"). */
#define SBX_REUSE_VENV_MAX 1

/**
 * May @p sandbox (IDLE) serve @p claim with the approved plan @p plan
 * (and the task's "packages" in it, [{name, constraint}], checked against
 * what the sandbox's manifest says it installed)? Returns a score in
 * [0,1], or a negative value when reuse is refused; @p reason always says
 * why (e.g. "runtime_capability_mismatch: ..."). @p now_digest: the
 * digest the sandbox's node now has for its template (NULL: unknown); a
 * sandbox made from another is of an older runtime: never reused.
 */
double sbx_reuse_check(const sbx_state_t *sandbox,
                       const sbx_state_t *claim,
                       const json_t *plan,
                       const char *now_digest,
                       char *reason,
                       size_t reason_size);

/** The digest node @p n reports for template @p name ("name@digest" in
 *  its status), or NULL. */
const char *sbx_node_template_digest(const sbx_node_t *n, const char *name);

typedef struct sbx_placement_s {
        const sbx_node_t *node;
        double score;
        int candidates; /* feasible nodes */
        int warm;       /* the node has a ready sandbox in the pool */
        char pool[192];
        char reason[256];
} sbx_placement_t;

/** The pool key of a plan: runtime/class/template. */
void sbx_pool_key(const json_t *plan, char *out, size_t out_size);

/**
 * Best of K feasible nodes for @p plan; nodes in @p refused (count
 * @p nrefused) are skipped. The sample is seeded by @p seed, so replicas
 * agree. Returns 0 and fills @p out, or -1 with out->reason.
 */
int sbx_place(sbx_nodes_t *nodes,
              const json_t *plan,
              uint64_t seed,
              const char *const *refused,
              size_t nrefused,
              int64_t now_us,
              sbx_placement_t *out);

#endif
