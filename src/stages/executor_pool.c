/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The executor's warm pools and node status. Once a second (after the
 * replay) it counts each pool's sandboxes in the folded state, makes what
 * the pool lacks (SandboxCreated with origin "pool" and no tenant: the
 * first lease gives it one) within what the node admits, retires ready
 * sandboxes above buffer_max, and publishes the node's capacity,
 * commitments and pools to sbx.nodes.v1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "core/event.h"
#include "core/util.h"
#include "kafka/processor.h"
#include "stages/executor_int.h"

typedef struct scan_s {
        exec_t *x;
        sbx_proc_t *p;
        sbx_pool_count_t *count; /* per pool spec */
        const char *key;         /* pool_take: the pool wanted */
        const sbx_state_t *best; /* pool_take: oldest ready */
} scan_t;

static int live(const sbx_state_t *s)
{
        return s->phase != SBX_SB_NONE && s->phase != SBX_SB_TERMINATED &&
               s->phase != SBX_SB_FAILED && s->phase != SBX_SB_LOST &&
               s->phase != SBX_SB_RECYCLING;
}

static int takeable(scan_t *sc, const sbx_state_t *s)
{
        return s->phase == SBX_SB_READY && !s->lease_owner &&
               sbx_streq(s->origin, "pool") &&
               !sbx_proc_pending(sc->p, s->id) &&
               !sbx_jobs_busy(sc->x->jobs, s->id);
}

static void count_cb(const sbx_state_t *s, void *opaque)
{
        scan_t *sc = opaque;
        size_t i;
        if (s->aggregate != SBX_AGG_SANDBOX || !s->pool ||
            !sbx_exec_mine(sc->x, s) || !live(s))
                return;
        for (i = 0; i < sc->x->pools->n; i++) {
                sbx_pool_count_t *c = &sc->count[i];
                if (strcmp(s->pool, sc->x->pools->v[i].key))
                        continue;
                c->total++;
                if (s->phase == SBX_SB_PROVISIONING)
                        c->provisioning++;
                else if (s->phase == SBX_SB_READY && !s->lease_owner)
                        c->ready++;
        }
}

static void take_cb(const sbx_state_t *s, void *opaque)
{
        scan_t *sc = opaque;
        if (s->aggregate != SBX_AGG_SANDBOX || !sbx_exec_mine(sc->x, s) ||
            !sbx_streq(s->pool, sc->key) || !takeable(sc, s))
                return;
        if (!sc->best || s->created_at < sc->best->created_at ||
            (s->created_at == sc->best->created_at &&
             strcmp(s->id, sc->best->id) < 0))
                sc->best = s;
}

const sbx_state_t *sbx_exec_pool_take(exec_t *x, sbx_proc_t *p, const char *key)
{
        scan_t sc = {x, p, NULL, key, NULL};
        if (!x->pools)
                return NULL;
        sbx_proc_foreach_state(p, take_cb, &sc);
        return sc.best;
}

static int room_for(const exec_t *x, const sbx_pool_spec_t *s)
{
        int room = x->cap.max_sandboxes - x->n;
        if (s->cpu > 0 && (x->cap.cpu - x->cpu) / s->cpu < room)
                room = (int)((x->cap.cpu - x->cpu) / s->cpu + 1e-9);
        if (s->memory_mb > 0 &&
            (x->cap.memory_mb - x->mem) / s->memory_mb < room)
                room = (int)((x->cap.memory_mb - x->mem) / s->memory_mb);
        return room > 0 ? room : 0;
}

static void make(exec_t *x,
                 sbx_proc_t *p,
                 const sbx_pool_spec_t *s,
                 sbx_pool_count_t *c)
{
        char id[64], uuid[37];
        sbx_event_t *ev;
        sbx_uuid(uuid);
        sbx_fmt(id, sizeof(id), "sb-%.12s", uuid);
        ev = sbx_event_new(
            SBX_EV_SANDBOX_CREATED, id, 1,
            json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:f, s:I, s:I, s:i, "
                      "s:s}",
                      "origin", "pool", "node_id", x->node, "pool", s->key,
                      "resource_class", s->klass, "template", s->tmpl,
                      "runtime", s->runtime, "cpu", s->cpu, "memory_mb",
                      (json_int_t)s->memory_mb, "disk_gb",
                      (json_int_t)s->disk_gb, "pids_limit", (int)s->pids,
                      "network_profile", "none"));
        if (x->cap.template_digest[0])
                json_object_set_new(ev->payload, "template_digest",
                                    json_string(x->cap.template_digest));
        sbx_event_set(&ev->correlation_id, id);
        json_object_set_new(x->made, id, json_string(s->key));
        sbx_exec_append(p, ev);
        x->cpu += s->cpu;
        x->mem += s->memory_mb;
        x->n++;
        c->provisioning++;
        c->total++;
}

typedef struct retire_s {
        scan_t sc;
        int left;
} retire_t;

static void retire_cb(const sbx_state_t *s, void *opaque)
{
        retire_t *r = opaque;
        if (r->left <= 0 || s->aggregate != SBX_AGG_SANDBOX ||
            !sbx_exec_mine(r->sc.x, s) || !sbx_streq(s->pool, r->sc.key) ||
            !takeable(&r->sc, s))
                return;
        sbx_exec_append(r->sc.p, sbx_exec_next(s, SBX_EV_RECYCLE_STARTED,
                                               json_pack("{s:s, s:s}", "level",
                                                         "destroy", "reason",
                                                         "pool buffer above "
                                                         "buffer_max")));
        r->left--;
}

/* Made but not read back yet: counted as starting, or the next tick
 * would make them again. */
static void count_unseen(exec_t *x, sbx_proc_t *p, sbx_pool_count_t *count)
{
        const char *id;
        json_t *key;
        void *tmp;
        size_t i;
        json_object_foreach_safe(x->made, tmp, id, key)
        {
                const sbx_state_t *s = sbx_proc_state(p, id);
                if (s && s->seq > 0) {
                        json_object_del(x->made, id);
                        continue;
                }
                for (i = 0; i < x->pools->n; i++)
                        if (!strcmp(json_string_value(key),
                                    x->pools->v[i].key)) {
                                count[i].provisioning++;
                                count[i].total++;
                        }
        }
}

static sbx_pool_count_t *count_pools(exec_t *x, sbx_proc_t *p)
{
        scan_t sc = {x, p, NULL, NULL, NULL};
        sc.count = sbx_calloc(x->pools->n ? x->pools->n : 1, sizeof(*sc.count));
        sbx_proc_foreach_state(p, count_cb, &sc);
        count_unseen(x, p, sc.count);
        return sc.count;
}

/* Makes what each pool lacks and retires what it has too many of,
 * keeping @p count (one per pool) up to date. */
static void fill_pools(exec_t *x, sbx_proc_t *p, sbx_pool_count_t *count)
{
        size_t i;
        for (i = 0; i < x->pools->n; i++) {
                const sbx_pool_spec_t *s = &x->pools->v[i];
                int d = sbx_pool_delta(s, &count[i], room_for(x, s));
                if (d > 0)
                        while (d-- > 0)
                                make(x, p, s, &count[i]);
                else if (d < 0) {
                        retire_t r = {{x, p, NULL, s->key, NULL}, -d};
                        sbx_proc_foreach_state(p, retire_cb, &r);
                        count[i].ready += d + r.left;
                        count[i].total += d + r.left;
                }
        }
}

static json_t *pools_json(const exec_t *x, const sbx_pool_count_t *count)
{
        json_t *arr = json_array();
        size_t i;
        for (i = 0; count && i < x->pools->n; i++) {
                const sbx_pool_spec_t *s = &x->pools->v[i];
                json_array_append_new(
                    arr,
                    json_pack(
                        "{s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:i, "
                        "s:i, s:i}",
                        "pool", s->key, "runtime", s->runtime, "resource_class",
                        s->klass, "template", s->tmpl, "ready", count[i].ready,
                        "provisioning", count[i].provisioning, "leased",
                        count[i].total - count[i].ready - count[i].provisioning,
                        "pool_min", s->pool_min, "pool_max", s->pool_max,
                        "buffer_min", s->buffer_min, "buffer_max",
                        s->buffer_max));
        }
        return arr;
}

static void publish_status(exec_t *x,
                           sbx_proc_t *p,
                           int64_t now,
                           int draining,
                           const sbx_pool_count_t *count)
{
        json_t *st;
        unsigned char *buf = NULL;
        size_t len         = 0;
        char err[512];

        x->last_status = now;
        st             = json_pack(
                        "{s:s, s:I, s:b, s:b, s:f, s:I, s:i, s:f, s:I, s:i, "
                                    "s:o, s:[s,s], s:I}",
                        "node_id", x->node, "at", (json_int_t)now, "healthy", !draining,
                        "draining", draining, "cpu_capacity", x->cap.cpu,
                        "memory_mb_capacity", (json_int_t)x->cap.memory_mb, "max_sandboxes",
                        x->cap.max_sandboxes, "cpu_committed", x->cpu,
                        "memory_mb_committed", (json_int_t)x->mem, "sandboxes", x->n,
                        "pools", pools_json(x, count), "runtimes", "runc", "runsc", "seq",
                        (json_int_t)++x->beat);
        /* the templates it makes sandboxes from, as name@digest: a
         * sandbox of another digest is of an older runtime version */
        if (x->cap.template_digest[0]) {
                char t[160];
                sbx_fmt(t, sizeof(t), "host@%s", x->cap.template_digest);
                json_object_set_new(st, "templates", json_pack("[s]", t));
        }
        if (sbx_codec_encode(sbx_proc_codec(p), SBX_SCHEMA_NODE_STATUS, st,
                             &buf, &len, err, sizeof(err)) ||
            sbx_proc_produce(p, SBX_TOPIC_NODES, x->node, strlen(x->node), buf,
                             len, err, sizeof(err)))
                fprintf(stderr, "sbxd: executor %s: node status: %s\n", x->node,
                        err);
        free(buf);
        json_decref(st);
}

void sbx_exec_node_tick(exec_t *x,
                        sbx_proc_t *p,
                        int64_t now,
                        int fill,
                        int draining)
{
        sbx_pool_count_t *count = x->pools ? count_pools(x, p) : NULL;
        sbx_exec_recount(x, p);
        if (fill && count)
                fill_pools(x, p, count);
        publish_status(x, p, now, draining, count);
        free(count);
}
