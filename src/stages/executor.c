/* SPDX-License-Identifier: Apache-2.0 */
/*
 * executor's decisions. Everything is level-triggered from the folded
 * state, so a restarted executor finishes what its predecessor began:
 * a claim PLACING here without a sandbox gets one (or a refusal when the
 * node is full); a PROVISIONING sandbox is provisioned; a READY or reused
 * IDLE one is leased to its claim; a leased one binds its claim; a
 * RUNNING one runs its exec; SANITIZING is reset; RECYCLING destroyed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "core/event.h"
#include "core/util.h"
#include "kafka/processor.h"
#include "stages/executor.h"

typedef struct exec_s {
        const sbx_runtime_ops_t *ops;
        void *rt;
        json_t *reqs; /* sandbox id -> its latest ExecRequested payload */
        char node[128];
        int64_t last_status, beat;
        /* commitments, recounted from the store each status */
        double cpu;
        int64_t mem;
        int n;
} exec_t;

static void *exec_init_ops(const sbx_runtime_ops_t *ops,
                           const sbx_config_t *c, char *e, size_t es)
{
        exec_t *x = sbx_calloc(1, sizeof(*x));
        x->ops = ops;
        x->reqs = json_object();
        sbx_fmt(x->node, sizeof(x->node), "%s", c->node_id);
        x->rt = ops->open(c, e, es);
        if (!x->rt) {
                free(x);
                return NULL;
        }
        return x;
}

static void *hollow_init(const sbx_config_t *c, sbx_proc_t *p, char *e,
                         size_t es)
{
        (void)p;
        return exec_init_ops(&sbx_runtime_hollow, c, e, es);
}

static void *runc_init(const sbx_config_t *c, sbx_proc_t *p, char *e,
                       size_t es)
{
        (void)p;
        return exec_init_ops(&sbx_runtime_runc, c, e, es);
}

static void exec_destroy(void *self)
{
        exec_t *x = self;
        x->ops->close(x->rt);
        json_decref(x->reqs);
        free(x);
}

static int mine(const exec_t *x, const sbx_state_t *s)
{
        return s->node_id && !strcmp(s->node_id, x->node);
}

static void append(sbx_proc_t *p, sbx_event_t *ev)
{
        char err[512];
        if (sbx_proc_append(p, ev, err, sizeof(err)))
                fprintf(stderr, "sbxd: executor: %s\n", err);
}

static sbx_event_t *on(const sbx_state_t *s, sbx_evtype_t t, json_t *payload)
{
        sbx_event_t *ev = sbx_event_new(t, s->id, s->seq + 1, payload);
        sbx_event_set(&ev->tenant_id, s->tenant_id);
        sbx_event_set(&ev->session_id, s->session_id);
        sbx_event_set(&ev->correlation_id, s->correlation_id);
        return ev;
}

typedef struct count_s {
        const exec_t *x;
        double cpu;
        int64_t mem;
        int n;
} count_t;

static void count_cb(const sbx_state_t *s, void *opaque)
{
        count_t *c = opaque;
        if (s->aggregate != SBX_AGG_SANDBOX || !mine(c->x, s) ||
            s->phase == SBX_SB_TERMINATED || s->phase == SBX_SB_NONE)
                return;
        c->cpu += s->cpu;
        c->mem += s->memory_mb;
        c->n++;
}

static void recount(exec_t *x, sbx_proc_t *p)
{
        count_t c = {x, 0, 0, 0};
        sbx_proc_foreach_state(p, count_cb, &c);
        x->cpu = c.cpu;
        x->mem = c.mem;
        x->n = c.n;
}

/* A claim placed (or reused) here. */
static void on_claim(exec_t *x, sbx_proc_t *p, const sbx_state_t *c,
                     int64_t now)
{
        const sbx_state_t *sb = c->sandbox_id ? sbx_proc_state(p, c->sandbox_id)
                                              : NULL;
        if (c->phase != SBX_CLAIM_PLACING || !c->sandbox_id ||
            sbx_proc_pending(p, c->sandbox_id))
                return;
        if (!sb || sb->seq == 0) {
                json_t *payload;
                sbx_event_t *ev;
                recount(x, p);
                if (x->n + 1 > x->ops->max_sandboxes ||
                    x->cpu + c->cpu > x->ops->cpu + 1e-9 ||
                    x->mem + c->memory_mb > x->ops->memory_mb) {
                        char why[256];
                        sbx_fmt(why, sizeof(why),
                                "node %s full: %d/%d sandboxes, %.1f/%.1f "
                                "CPU, %lld/%lld MB committed",
                                x->node, x->n, x->ops->max_sandboxes, x->cpu,
                                x->ops->cpu, (long long)x->mem,
                                (long long)x->ops->memory_mb);
                        append(p, on(c, SBX_EV_PLACEMENT_FAILED,
                                     json_pack("{s:s, s:s, s:s, s:i, s:b}",
                                               "node_id", x->node, "sandbox_id",
                                               c->sandbox_id, "reason", why,
                                               "attempt", c->attempts, "final",
                                               c->attempts >= 3)));
                        return;
                }
                payload = json_pack(
                    "{s:s, s:s, s:s, s:s, s:s, s:f, s:I, s:s, s:s}", "origin",
                    "claim", "node_id", x->node, "resource_class",
                    c->resource_class ? c->resource_class : "",
                    "template", c->template_name ? c->template_name : "host",
                    "runtime", c->runtime ? c->runtime : "runc", "cpu", c->cpu,
                    "memory_mb", (json_int_t)c->memory_mb, "network_profile",
                    c->network_profile ? c->network_profile : "none",
                    "claim_id", c->id);
                ev = sbx_event_new(SBX_EV_SANDBOX_CREATED, c->sandbox_id, 1,
                                   payload);
                sbx_event_set(&ev->tenant_id, c->tenant_id);
                sbx_event_set(&ev->session_id, c->session_id);
                sbx_event_set(&ev->correlation_id, c->id);
                append(p, ev);
                return;
        }
        if (sb->phase == SBX_SB_READY ||
            (sb->phase == SBX_SB_IDLE && !sb->lease_owner)) {
                sbx_event_t *ev = on(sb, SBX_EV_LEASE_GRANTED,
                                     json_pack("{s:s, s:I, s:I, s:b}", "owner",
                                               c->id, "lease_version",
                                               (json_int_t)sb->lease_version + 1,
                                               "expires_at",
                                               (json_int_t)(now + c->lease_seconds *
                                                                      1000000LL),
                                               "reuse", sb->phase == SBX_SB_IDLE));
                ev->lease_version = sb->lease_version + 1;
                sbx_event_set(&ev->correlation_id, c->id);
                sbx_event_set(&ev->session_id, c->session_id);
                append(p, ev);
                return;
        }
        if ((sb->phase == SBX_SB_LEASED || sb->phase == SBX_SB_RUNNING) &&
            sb->lease_owner && !strcmp(sb->lease_owner, c->id))
                append(p, on(c, SBX_EV_CLAIM_BOUND,
                             json_pack("{s:s, s:s, s:I, s:I}", "sandbox_id",
                                       sb->id, "node_id", x->node,
                                       "lease_version",
                                       (json_int_t)sb->lease_version,
                                       "lease_expires_at",
                                       (json_int_t)sb->lease_expires_at)));
}

static void on_sandbox(exec_t *x, sbx_proc_t *p, const sbx_state_t *s,
                       const json_t *req, int64_t now)
{
        char inst[256], err[512];
        int killed = 0;

        switch (s->phase) {
        case SBX_SB_PROVISIONING: {
                int64_t t0 = sbx_mono_us();
                if (x->ops->provision(x->rt, s, inst, sizeof(inst), err,
                                      sizeof(err)))
                        append(p, on(s, SBX_EV_SANDBOX_FAILED,
                                     json_pack("{s:s}", "reason", err)));
                else
                        append(p, on(s, SBX_EV_PROVISIONED,
                                     json_pack("{s:s, s:I}", "runtime_instance",
                                               inst, "startup_us",
                                               (json_int_t)(sbx_mono_us() - t0))));
                return;
        }
        case SBX_SB_RUNNING: {
                sbx_exec_result_t r;
                sbx_event_t *ev;
                if (!req || !s->exec_id)
                        return;
                memset(&r, 0, sizeof(r));
                x->ops->exec(x->rt, s, req, &r);
                ev = on(s, SBX_EV_EXEC_FINISHED,
                        json_pack("{s:s, s:i, s:i, s:b, s:o, s:o, s:o, s:s?}",
                                  "exec_id", s->exec_id, "exit_code",
                                  r.exit_code, "signal", r.signal, "timed_out",
                                  r.timed_out,
                                  "stdout", r.stdout_bytes ? r.stdout_bytes
                                                           : json_string(""),
                                  "stderr", r.stderr_bytes ? r.stderr_bytes
                                                           : json_string(""),
                                  "usage", r.usage ? r.usage : json_object(),
                                  "error", r.error[0] ? r.error : NULL));
                ev->lease_version = s->lease_version;
                append(p, ev);
                return;
        }
        case SBX_SB_SANITIZING: {
                int64_t t0 = sbx_mono_us();
                x->ops->sanitize(x->rt, s, &killed);
                append(p, on(s, SBX_EV_SANITIZED,
                             json_pack("{s:i, s:I}", "killed_processes", killed,
                                       "duration_us",
                                       (json_int_t)(sbx_mono_us() - t0))));
                return;
        }
        case SBX_SB_RECYCLING:
                x->ops->destroy(x->rt, s);
                append(p, on(s, SBX_EV_TERMINATED,
                             json_pack("{s:s}", "reason",
                                       s->reason ? s->reason : "recycled")));
                return;
        default:
                break;
        }
        (void)now;
}

static void exec_observe(void *self, const sbx_event_t *ev, sbx_verdict_t v,
                         const sbx_state_t *s)
{
        exec_t *x = self;
        if (v != SBX_FOLD_ACCEPTED || !mine(x, s))
                return;
        if (ev->type == SBX_EV_EXEC_REQUESTED)
                json_object_set(x->reqs, ev->aggregate_id, ev->payload);
        else if (ev->type == SBX_EV_EXEC_FINISHED ||
                 ev->type == SBX_EV_LEASE_RELEASED ||
                 ev->type == SBX_EV_LEASE_EXPIRED ||
                 ev->type == SBX_EV_TERMINATED)
                json_object_del(x->reqs, ev->aggregate_id);
}

static void exec_decide(void *self, sbx_proc_t *p, const sbx_state_t *s,
                        int64_t now)
{
        exec_t *x = self;
        if (s->aggregate == SBX_AGG_CLAIM) {
                if (mine(x, s))
                        on_claim(x, p, s, now);
                return;
        }
        if (s->aggregate != SBX_AGG_SANDBOX || !mine(x, s))
                return;
        on_sandbox(x, p, s, json_object_get(x->reqs, s->id), now);
        /* A sandbox that became READY or LEASED moves its claim on. */
        if (s->correlation_id && (s->phase == SBX_SB_READY ||
                                  s->phase == SBX_SB_LEASED)) {
                const char *claim = s->phase == SBX_SB_LEASED && s->lease_owner
                                        ? s->lease_owner
                                        : s->correlation_id;
                const sbx_state_t *c = sbx_proc_state(p, claim);
                if (c && c->aggregate == SBX_AGG_CLAIM && !sbx_proc_pending(p, claim))
                        on_claim(x, p, c, now);
        }
}

static void publish_status(exec_t *x, sbx_proc_t *p, int64_t now, int draining)
{
        json_t *st;
        unsigned char *buf = NULL;
        size_t len = 0;
        char err[512];

        x->last_status = now;
        recount(x, p);
        st = json_pack("{s:s, s:I, s:b, s:b, s:f, s:I, s:i, s:f, s:I, s:i, "
                       "s:[s,s], s:I}",
                       "node_id", x->node, "at", (json_int_t)now, "healthy",
                       !draining, "draining", draining,
                       "cpu_capacity", x->ops->cpu, "memory_mb_capacity",
                       (json_int_t)x->ops->memory_mb, "max_sandboxes",
                       x->ops->max_sandboxes, "cpu_committed", x->cpu,
                       "memory_mb_committed", (json_int_t)x->mem, "sandboxes",
                       x->n, "runtimes", "runc", "runsc", "seq",
                       (json_int_t)++x->beat);
        if (sbx_codec_encode(sbx_proc_codec(p), SBX_SCHEMA_NODE_STATUS, st,
                             &buf, &len, err, sizeof(err)) ||
            sbx_proc_produce(p, SBX_TOPIC_NODES, x->node, strlen(x->node), buf,
                             len, err, sizeof(err)))
                fprintf(stderr, "sbxd: executor %s: node status: %s\n", x->node,
                        err);
        free(buf);
        json_decref(st);
}

static void exec_idle(void *self, sbx_proc_t *p, int64_t now)
{
        exec_t *x = self;
        if (now - x->last_status >= 1000000)
                publish_status(x, p, now, 0);
}

/* A stopping node says so, so the scheduler stops placing on it at once. */
static void exec_shutdown(void *self, sbx_proc_t *p)
{
        publish_status(self, p, sbx_now_us(), 1);
}

/* ---- the hollow runtime --------------------------------------------------- */

static void *hollow_open(const sbx_config_t *c, char *e, size_t es)
{
        (void)c;
        (void)e;
        (void)es;
        return sbx_strdup("hollow");
}

static void hollow_close(void *rt)
{
        free(rt);
}

static int hollow_provision(void *rt, const sbx_state_t *s, char *inst,
                            size_t is, char *e, size_t es)
{
        (void)rt;
        (void)e;
        (void)es;
        sbx_fmt(inst, is, "hollow:%s", s->id);
        return 0;
}

static int hollow_exec(void *rt, const sbx_state_t *s, const json_t *req,
                       sbx_exec_result_t *r)
{
        (void)rt;
        (void)s;
        (void)req;
        r->exit_code = 0;
        sbx_fmt(r->error, sizeof(r->error),
                "hollow node: nothing was run");
        return 0;
}

static int hollow_sanitize(void *rt, const sbx_state_t *s, int *killed)
{
        (void)rt;
        (void)s;
        *killed = 0;
        return 0;
}

static int hollow_destroy(void *rt, const sbx_state_t *s)
{
        (void)rt;
        (void)s;
        return 0;
}

const sbx_runtime_ops_t sbx_runtime_hollow = {
    .name = "hollow",
    /* A hollow node has no containers to run out of room for. */
    .cpu = 100000,
    .memory_mb = 1000000000,
    .max_sandboxes = 1000000,
    .open = hollow_open,
    .close = hollow_close,
    .provision = hollow_provision,
    .exec = hollow_exec,
    .sanitize = hollow_sanitize,
    .destroy = hollow_destroy,
};

static const char *const exec_topics[] = {NULL};

const sbx_stage_t sbx_stage_hollow = {
    .name = "hollow",
    .group_topics = exec_topics,
    .decides = 1,
    .own_all = 1,
    .tick_ms = 2000,
    .init = hollow_init,
    .destroy = exec_destroy,
    .observe = exec_observe,
    .decide = exec_decide,
    .idle = exec_idle,
    .shutdown = exec_shutdown,
};

const sbx_stage_t sbx_stage_executor = {
    .name = "executor",
    .group_topics = exec_topics,
    .decides = 1,
    .own_all = 1,
    .tick_ms = 2000,
    .init = runc_init,
    .destroy = exec_destroy,
    .observe = exec_observe,
    .decide = exec_decide,
    .idle = exec_idle,
    .shutdown = exec_shutdown,
};
