/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Kafka side of the planner and the guard: "what size". Each keeps
 * the event its decision needs (the ClaimRequested with the task, the
 * PlanProposed with the intent) until the claim moves past it, feeds every
 * event to its learner (telemetry, quotas), and decides for the claims of
 * its partitions in REQUESTED (planner) or PLANNED (guard).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/event.h"
#include "core/policy.h"
#include "core/util.h"
#include "kafka/processor.h"
#include "stages/guard/guard.h"
#include "stages/plan_stages.h"
#include "stages/planner/planner.h"

/* claim id -> the event JSON a decision needs */
static void keep(json_t *memo, const sbx_event_t *ev)
{
        json_object_set_new(memo, ev->aggregate_id, sbx_event_to_json(ev));
}

static sbx_event_t *kept(json_t *memo, const char *claim)
{
        sbx_event_t *ev = NULL;
        const json_t *j = json_object_get(memo, claim);
        if (j && sbx_event_from_json(j, &ev, NULL, 0))
                return NULL;
        return ev;
}

static void append(sbx_proc_t *p, sbx_event_t *ev, const char *who)
{
        char err[512];
        if (ev && sbx_proc_append(p, ev, err, sizeof(err)))
                fprintf(stderr, "sbxd: %s: %s\n", who, err);
}

/* ---- planner --------------------------------------------------------- */

typedef struct planner_stage_s {
        sbx_planner_t *planner;
        json_t *requested; /* claim -> ClaimRequested */
} planner_stage_t;

static void *planner_init(const sbx_config_t *c, sbx_proc_t *p, char *e,
                          size_t es)
{
        planner_stage_t *s = sbx_calloc(1, sizeof(*s));
        sbx_planner_conf_t pc = {
            .mode = c->planner,
            .llm_url = c->llm_url,
            .llm_model = c->llm_model,
            .llm_api_key = c->llm_api_key,
            .llm_timeout_ms = c->llm_timeout_ms,
        };
        (void)p;
        s->planner = sbx_planner_new(&pc, e, es);
        if (!s->planner) {
                free(s);
                return NULL;
        }
        s->requested = json_object();
        return s;
}

static void planner_destroy(void *self)
{
        planner_stage_t *s = self;
        sbx_planner_destroy(s->planner);
        json_decref(s->requested);
        free(s);
}

static void planner_observe(void *self, const sbx_event_t *ev, sbx_verdict_t v,
                            const sbx_state_t *st)
{
        planner_stage_t *s = self;
        if (v != SBX_FOLD_ACCEPTED)
                return;
        sbx_planner_observe(s->planner, ev);
        if (ev->type == SBX_EV_CLAIM_REQUESTED)
                keep(s->requested, ev);
        else if (ev->aggregate == SBX_AGG_CLAIM &&
                 st->phase != SBX_CLAIM_REQUESTED)
                json_object_del(s->requested, ev->aggregate_id);
}

static void planner_decide(void *self, sbx_proc_t *p, const sbx_state_t *st,
                           int64_t now)
{
        planner_stage_t *s = self;
        sbx_event_t *req;
        (void)now;
        if (st->aggregate != SBX_AGG_CLAIM || st->phase != SBX_CLAIM_REQUESTED ||
            !(req = kept(s->requested, st->id)))
                return;
        append(p,
               sbx_planner_decide(s->planner, req, st->seq + 1,
                                  sbx_proc_producer(p)),
               "planner");
        sbx_event_destroy(req);
}

static const char *const no_topics[] = {NULL};

const sbx_stage_t sbx_stage_planner = {
    .name = "planner",
    .group_topics = no_topics,
    .decides = 1,
    .init = planner_init,
    .destroy = planner_destroy,
    .observe = planner_observe,
    .decide = planner_decide,
};

/* ---- guard ------------------------------------------------------------ */

typedef struct guard_stage_s {
        sbx_policy_t *policy;
        sbx_guard_t *guard;
        json_t *proposed; /* claim -> PlanProposed */
} guard_stage_t;

static void *guard_init(const sbx_config_t *c, sbx_proc_t *p, char *e,
                        size_t es)
{
        guard_stage_t *s = sbx_calloc(1, sizeof(*s));
        (void)p;
        s->policy = sbx_policy_load(c->policy, e, es);
        if (!s->policy) {
                free(s);
                return NULL;
        }
        s->guard = sbx_guard_new(s->policy);
        s->proposed = json_object();
        return s;
}

static void guard_destroy(void *self)
{
        guard_stage_t *s = self;
        sbx_guard_destroy(s->guard);
        sbx_policy_destroy(s->policy);
        json_decref(s->proposed);
        free(s);
}

static void guard_observe(void *self, const sbx_event_t *ev, sbx_verdict_t v,
                          const sbx_state_t *st)
{
        guard_stage_t *s = self;
        if (v != SBX_FOLD_ACCEPTED)
                return;
        sbx_guard_observe(s->guard, ev);
        if (ev->type == SBX_EV_PLAN_PROPOSED)
                keep(s->proposed, ev);
        else if (ev->aggregate == SBX_AGG_CLAIM &&
                 st->phase != SBX_CLAIM_PLANNED)
                json_object_del(s->proposed, ev->aggregate_id);
}

static void guard_decide(void *self, sbx_proc_t *p, const sbx_state_t *st,
                         int64_t now)
{
        guard_stage_t *s = self;
        sbx_event_t *plan;
        (void)now;
        if (st->aggregate != SBX_AGG_CLAIM || st->phase != SBX_CLAIM_PLANNED ||
            !(plan = kept(s->proposed, st->id)))
                return;
        append(p,
               sbx_guard_decide(s->guard, plan, st, st->seq + 1,
                                sbx_proc_producer(p)),
               "guard");
        sbx_event_destroy(plan);
}

const sbx_stage_t sbx_stage_guard = {
    .name = "guard",
    .group_topics = no_topics,
    .decides = 1,
    .init = guard_init,
    .destroy = guard_destroy,
    .observe = guard_observe,
    .decide = guard_decide,
};
