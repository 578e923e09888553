/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The planner stage's logic (DESIGN.md §5), free of Kafka: it turns an
 * accepted ClaimRequested into the PlanProposed event to append. The
 * `rules` planner extracts signals from the task into a workload
 * signature, sizes it from the design's resource classes and then from
 * telemetry folded out of the log (peak memory, CPU and OOMs of past
 * ExecFinished events of the same signature); the `llm` planner asks an
 * OpenAI-compatible endpoint and falls back to `rules`, saying why, on
 * any failure. Rules decisions depend only on the events observed and
 * the request, never on clocks or randomness, so replaying the same log
 * gives the same plans. A planner is not thread-safe: one stage thread owns it.
 */
#ifndef SBX_PLANNER_H
#define SBX_PLANNER_H

#include <stddef.h>
#include <stdint.h>

#include "core/event.h"

typedef struct sbx_planner_s sbx_planner_t;

typedef struct sbx_planner_conf_s {
        const char *mode;        /**< "rules" (default when NULL) or "llm" */
        const char *llm_url;     /**< OpenAI-compatible base, e.g.
                                      http://127.0.0.1:8080/v1 */
        const char *llm_model;   /**< required in llm mode */
        const char *llm_api_key; /**< sent as a Bearer token; may be NULL */
        int llm_timeout_ms;      /**< whole-call deadline; <= 0: 3000 */
} sbx_planner_conf_t;

/**
 * A new planner configured by @p conf (borrowed; strings are copied).
 * In llm mode this calls curl_global_init() once for the planner's
 * lifetime (libcurl counts the calls; sbx_planner_destroy() balances it):
 * with a libcurl older than 7.84 that is not thread-safe, create planners
 * before starting other threads that use libcurl. NULL with a reason in
 * @p errstr on a bad configuration.
 */
sbx_planner_t *sbx_planner_new(const sbx_planner_conf_t *conf,
                               char *errstr,
                               size_t errstr_size);
/** Frees @p p; accepts NULL. */
void sbx_planner_destroy(sbx_planner_t *p);

/**
 * Learns from one lifecycle event @p ev (borrowed), in log order, from
 * every partition: PlanProposed and PlanApproved (claim -> signature and
 * allocation), SandboxCreated (the sandbox's size), LeaseGranted and
 * ClaimBound (sandbox -> claim) and
 * ExecFinished (usage, attributed to the signature of the claim holding
 * the sandbox's lease). A redelivered or superseded event (seq not above
 * the last one used for that aggregate) is ignored; other types are too.
 */
void sbx_planner_observe(sbx_planner_t *p, const sbx_event_t *ev);

/**
 * The PlanProposed event (caller destroys it) answering the accepted
 * ClaimRequested @p claim_requested (borrowed): seq @p next_seq (the claim
 * state's seq + 1), tenant and session copied from the request,
 * correlation_id = the claim id, causation_id = the request's event_id,
 * producer @p producer (borrowed). Never fails on bad input: a garbage
 * task gets a small, low-confidence plan. In llm mode this blocks for at
 * most llm_timeout_ms.
 */
sbx_event_t *sbx_planner_decide(sbx_planner_t *p,
                                const sbx_event_t *claim_requested,
                                int64_t next_seq,
                                const char *producer);

/** Telemetry of one workload signature. */
typedef struct sbx_planner_stats_s {
        const char *signature; /**< borrowed: valid until the next
                                    sbx_planner_observe() or destroy */
        long samples;          /**< in the window (the last 256) */
        double p50_mem_mb, p95_mem_mb, p95_cpu; /**< cpu in cores */
        double oom_rate;                        /**< 0..1 */
        long recommended_mem_mb; /**< 0 until the signature has enough
                                      samples for telemetry sizing */
        double recommended_cpu;  /**< 0 likewise */
} sbx_planner_stats_t;

/**
 * Writes the stats of up to @p max signatures, sorted by signature, into
 * @p out and returns how many it wrote. With @p out NULL it writes
 * nothing and returns how many signatures there are.
 */
size_t sbx_planner_stats(const sbx_planner_t *p,
                         sbx_planner_stats_t *out,
                         size_t max);

#endif
