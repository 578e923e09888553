/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The executor as a reconciler (DESIGN.md §7, §9): after the replay and
 * every 30 s it lists what the runtime really has and converges it with
 * the log. A container the log does not know on this node, or knows as
 * terminated, is an orphan and is destroyed; a sandbox the log says is
 * alive whose container is gone is reported SandboxLost (the keeper then
 * recycles it and places its claim again, from its latest snapshot), and
 * one whose container stopped (its init exited) SandboxFailed (the keeper
 * fails its claim: the work may have killed it); a frozen container
 * is remembered as frozen, so a sandbox that must run is thawed. Sandboxes
 * with work in flight (a job, or an append not yet read back) are left
 * for the next round: their state is about to change.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/event.h"
#include "core/util.h"
#include "kafka/processor.h"
#include "stages/executor_int.h"

typedef struct rec_s {
        exec_t *x;
        sbx_proc_t *p;
        json_t *seen; /* id -> sbx_seen_t */
        int orphans, lost;
} rec_t;

static void seen_cb(const char *id, sbx_seen_t seen, void *opaque)
{
        rec_t *r = opaque;
        json_object_set_new(r->seen, id, json_integer(seen));
}

static int alive(int phase)
{
        switch (phase) {
        case SBX_SB_READY:
        case SBX_SB_LEASED:
        case SBX_SB_RUNNING:
        case SBX_SB_IDLE:
        case SBX_SB_REUSE_CHECKING:
        case SBX_SB_SANITIZING:
        case SBX_SB_HIBERNATING:
                return 1;
        default:
                return 0;
        }
}

static int settled(rec_t *r, const char *id)
{
        return !sbx_jobs_busy(r->x->jobs, id) && !sbx_proc_pending(r->p, id);
}

static void lost_cb(const sbx_state_t *s, void *opaque)
{
        rec_t *r = opaque;
        json_t *k;
        const char *why;
        sbx_evtype_t t;
        if (s->aggregate != SBX_AGG_SANDBOX || !sbx_exec_mine(r->x, s) ||
            !alive(s->phase) || !settled(r, s->id))
                return;
        k = json_object_get(r->seen, s->id);
        if (!k || json_integer_value(k) == SBX_SEEN_ABSENT) {
                why = "reconcile: the runtime has no such container";
                t   = SBX_EV_SANDBOX_LOST; /* its claim is placed again */
        } else if (json_integer_value(k) == SBX_SEEN_STOPPED) {
                why = "reconcile: the container stopped (its init exited)";
                t   = SBX_EV_SANDBOX_FAILED; /* a runtime error */
        } else
                return;
        sbx_exec_append(r->p,
                        sbx_exec_next(s, t, json_pack("{s:s}", "reason", why)));
        r->lost++;
}

void sbx_exec_reconcile(exec_t *x, sbx_proc_t *p)
{
        rec_t r = {x, p, json_object(), 0, 0};
        const char *id;
        json_t *k;
        char err[512];

        if (x->ops->list(x->rt, seen_cb, &r, err, sizeof(err))) {
                fprintf(stderr, "sbxd: executor %s: reconcile: %s\n", x->node,
                        err);
                json_decref(r.seen);
                return;
        }
        json_object_foreach(r.seen, id, k)
        {
                const sbx_state_t *s = sbx_proc_state(p, id);
                if (!settled(&r, id))
                        continue;
                if (!s || s->seq == 0 || s->phase == SBX_SB_TERMINATED ||
                    !sbx_exec_mine(x, s)) {
                        sbx_state_t *orphan =
                            sbx_state_new(SBX_AGG_SANDBOX, id);
                        sbx_exec_submit(x, p, SBX_JOB_DESTROY, orphan, NULL);
                        sbx_state_destroy(orphan);
                        r.orphans++;
                        continue;
                }
                if (json_integer_value(k) == SBX_SEEN_PAUSED)
                        json_object_set_new(x->frozen, id, json_true());
        }
        sbx_proc_foreach_state(p, lost_cb, &r);
        if (r.orphans || r.lost)
                fprintf(stderr,
                        "sbxd: executor %s: reconcile: %d orphan container(s) "
                        "destroyed, %d sandbox(es) lost or failed\n",
                        x->node, r.orphans, r.lost);
        json_decref(r.seen);
}
