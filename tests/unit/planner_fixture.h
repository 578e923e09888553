/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Planner test helpers: a rules planner, ClaimRequested events for a task,
 * decisions checked to encode, accessors of the intent, and the design
 * origin's three turns.
 */
#ifndef SBX_TEST_PLANNER_FIXTURE_H
#define SBX_TEST_PLANNER_FIXTURE_H

#include "fixture.h"
#include "stages/planner/planner.h"

static inline sbx_planner_t *rules_planner(void)
{
        char err[256];
        sbx_planner_conf_t conf = {.mode = "rules"};
        sbx_planner_t *p        = sbx_planner_new(&conf, err, sizeof(err));
        assert_non_null(p);
        return p;
}

/* A ClaimRequested for @p task (stolen) with optional extra fields. */
static inline sbx_event_t *claim_with(const char *claim_id,
                               json_t *task,
                               json_t *extra)
{
        json_t *pl = json_pack("{s:s, s:o}", "request_id", "r-1", "task", task);
        sbx_event_t *ev;
        assert_non_null(pl);
        if (extra) {
                json_object_update(pl, extra);
                json_decref(extra);
        }
        ev = sbx_event_new(SBX_EV_CLAIM_REQUESTED, claim_id, 1, pl);
        sbx_event_set(&ev->producer, "intake/1");
        sbx_event_set(&ev->correlation_id, claim_id);
        sbx_event_set(&ev->tenant_id, "acme");
        sbx_event_set(&ev->session_id, "sess-1");
        return ev;
}

/* Decides @p task (stolen) for @p claim_id; checks the event encodes. */
static inline sbx_event_t *decide_as(sbx_planner_t *p,
                              const char *claim_id,
                              json_t *task,
                              json_t *extra)
{
        sbx_event_t *req   = claim_with(claim_id, task, extra), *ev;
        unsigned char *buf = NULL;
        size_t len;
        char err[512];

        ev = sbx_planner_decide(p, req, 2, "planner/test");
        assert_non_null(ev);
        if (sbx_event_encode(codec, ev, &buf, &len, err, sizeof(err)))
                fail_msg("PlanProposed does not encode: %s", err);
        free(buf);
        sbx_event_destroy(req);
        return ev;
}

static inline sbx_event_t *decide(sbx_planner_t *p, json_t *task)
{
        return decide_as(p, "claim-1", task, NULL);
}

static inline const json_t *intent(const sbx_event_t *ev)
{
        return json_object_get(ev->payload, "intent");
}

static inline double cpu_of(const sbx_event_t *ev)
{
        return json_number_value(json_object_get(intent(ev), "cpu"));
}

static inline long long mem_of(const sbx_event_t *ev)
{
        return json_integer_value(json_object_get(intent(ev), "memory_mb"));
}

static inline const char *istr(const sbx_event_t *ev, const char *field)
{
        return json_string_value(json_object_get(intent(ev), field));
}

static inline const char *sig_of(const sbx_event_t *ev)
{
        return sbx_event_str(ev, "signature");
}

static inline json_t *turn1(void)
{
        return json_pack("{s:s, s:[s,s,s], s:[{s:s}, {s:s}]}", "text",
                         "read the Excel file and total the sales", "plan",
                         "pip install pandas openpyxl",
                         "load sales.xlsx with pandas", "sum the sales column",
                         "packages", "name", "pandas", "name", "openpyxl");
}

static inline json_t *turn2(void)
{
        return json_pack("{s:s, s:[s,s], s:[{s:s}]}", "text",
                         "draw a bar chart of that data", "plan",
                         "pip install matplotlib",
                         "plot sales per region as a bar chart", "packages",
                         "name", "matplotlib");
}

static inline json_t *turn3(void)
{
        return json_pack("{s:s}", "text",
                         "start Playwright and check a web page");
}

#endif
