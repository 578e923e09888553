/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node's snapshots and their collection. The log says which
 * snapshots matter: a snapshot is kept while a live sandbox was forked
 * from it or took it last, while a claim not yet settled asks to fork it,
 * and for snapshot.retention_s after it was taken (a project re-entered
 * tomorrow restores it); the store keeps the ancestors of what is kept.
 * Everything else the store may delete (runtime/layers.h). Collection
 * runs with the reconcile, after the replay, so a restarted executor
 * never deletes a snapshot the log still needs, and never while a
 * snapshot of the node is being taken: its SnapshotTaken is not in the
 * log yet.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "kafka/processor.h"
#include "stages/executor_int.h"

void sbx_exec_snapshot_taken(exec_t *x, const sbx_event_t *ev)
{
        const char *id = sbx_event_str(ev, "snapshot_id");
        if (id && *id && !sbx_event_str(ev, "error"))
                json_object_set_new(
                    x->snapshots, id,
                    json_pack("{s:I, s:O?}", "at", (json_int_t)ev->occurred_at,
                              "manifest",
                              json_object_get(x->envs, ev->aggregate_id)));
}

const json_t *sbx_exec_snapshot_manifest(const exec_t *x, const char *id)
{
        return id ? json_object_get(json_object_get(x->snapshots, id),
                                    "manifest")
                  : NULL;
}

typedef struct keep_s {
        const exec_t *x;
        json_t *ids; /* id -> true */
        int taking;  /* a snapshot is being taken */
} keep_t;

static void keep(keep_t *k, const char *id)
{
        if (id && *id)
                json_object_set_new(k->ids, id, json_true());
}

static void keep_cb(const sbx_state_t *s, void *opaque)
{
        keep_t *k = opaque;
        if (s->aggregate == SBX_AGG_CLAIM) {
                if (s->phase != SBX_CLAIM_RELEASED &&
                    s->phase != SBX_CLAIM_FAILED &&
                    s->phase != SBX_CLAIM_CANCELLED &&
                    s->phase != SBX_CLAIM_REJECTED)
                        keep(k, s->fork_snapshot);
                return;
        }
        if (s->aggregate != SBX_AGG_SANDBOX || !sbx_exec_mine(k->x, s) ||
            s->phase == SBX_SB_TERMINATED)
                return;
        keep(k, s->fork_snapshot);
        keep(k, s->last_snapshot);
        k->taking |= s->snapshot_pending != NULL;
}

json_t *sbx_exec_snapshots_to_keep(const exec_t *x,
                                   sbx_proc_t *p,
                                   int64_t now_us,
                                   int64_t retention_us)
{
        keep_t k = {x, json_object(), 0};
        const char *id;
        json_t *at, *out = json_array();

        sbx_proc_foreach_state(p, keep_cb, &k);
        if (k.taking) {
                json_decref(k.ids);
                json_decref(out);
                return NULL;
        }
        json_object_foreach(x->snapshots, id, at)
        {
                if (now_us - json_integer_value(json_object_get(at, "at")) <
                    retention_us)
                        keep(&k, id);
        }
        json_object_foreach(k.ids, id, at)
            json_array_append_new(out, json_string(id));
        json_decref(k.ids);
        return out;
}

void sbx_exec_collect(exec_t *x, sbx_proc_t *p, int64_t now_us)
{
        json_t *ids;
        const char **keep_ids;
        size_t i, n;
        char e[512];

        if (!x->ops->collect)
                return;
        ids =
            sbx_exec_snapshots_to_keep(x, p, now_us, x->snapshot_retention_us);
        if (!ids)
                return; /* the next round */
        n        = json_array_size(ids);
        keep_ids = sbx_calloc(n + 1, sizeof(*keep_ids));
        for (i = 0; i < n; i++)
                keep_ids[i] = json_string_value(json_array_get(ids, i));
        if (x->ops->collect(x->rt, keep_ids, n, e, sizeof(e)))
                fprintf(stderr, "sbxd: executor %s: snapshot collection: %s\n",
                        x->node, e);
        free(keep_ids);
        json_decref(ids);
}
