/* SPDX-License-Identifier: Apache-2.0 */
/*
 * executor's decisions. Everything is level-triggered from the folded
 * state, so a restarted executor finishes what its predecessor began:
 * a claim PLACING here without a sandbox gets a warm one of its pool, a
 * new one, or a refusal when the node is full; a PROVISIONING sandbox is
 * provisioned; a READY or reused IDLE one is leased to its claim; a
 * leased one binds its claim (once its workspace is there); a RUNNING one
 * runs its exec; HIBERNATING is frozen and thawed when it leaves;
 * SANITIZING is reset; RECYCLING destroyed. The runtime work runs as jobs
 * on worker threads (stages/jobs.h); a finished job is reported from the
 * processor's thread against the sandbox's state at that moment, so work
 * that the log has overtaken (a sandbox recycled while it was being made)
 * is reported by nothing but its successor.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "core/event.h"
#include "core/util.h"
#include "kafka/processor.h"
#include "runtime/manifest.h"
#include "stages/environment.h"
#include "stages/executor_int.h"

static void run_job(void *ctx, sbx_job_t *j);

static void exec_destroy(void *self);

static void *exec_init_ops(const sbx_runtime_ops_t *ops,
                           const sbx_config_t *c,
                           sbx_proc_t *p,
                           char *e,
                           size_t es)
{
        exec_t *x                = sbx_calloc(1, sizeof(*x));
        x->ops                   = ops;
        x->reqs                  = json_object();
        x->holder                = json_object();
        x->made                  = json_object();
        x->dead                  = json_object();
        x->placed                = json_object();
        x->waiting               = json_object();
        x->frozen                = json_object();
        x->attached              = json_object();
        x->manifests             = json_object();
        x->venv                  = json_object();
        x->envs                  = json_object();
        x->snapshots             = json_object();
        x->snapshot_retention_us = c->snapshot_retention_s * 1000000LL;
        sbx_fmt(x->node, sizeof(x->node), "%s", c->node_id);
        x->rt = ops->open(c, &x->cap, e, es);
        if (!x->rt)
                goto fail;
        if (ops->threads &&
            !(x->pub = sbx_outpub_new(c, sbx_proc_codec(p), e, es)))
                goto fail;
        if (c->pools) {
                if (!(x->policy = sbx_policy_load(c->policy, e, es)) ||
                    !(x->pools = sbx_pools_load(c->pools, x->policy, e, es)))
                        goto fail;
        }
        x->jobs =
            sbx_jobs_new(ops->threads ? c->executor_workers : 0, run_job, x);
        return x;
fail:
        exec_destroy(x);
        return NULL;
}

static void *hollow_init(const sbx_config_t *c,
                         sbx_proc_t *p,
                         char *e,
                         size_t es)
{
        return exec_init_ops(&sbx_runtime_hollow, c, p, e, es);
}

static void *runc_init(const sbx_config_t *c, sbx_proc_t *p, char *e, size_t es)
{
        return exec_init_ops(&sbx_runtime_runc, c, p, e, es);
}

/* Also frees a half-made executor (exec_init_ops' failure path). */
static void exec_destroy(void *self)
{
        exec_t *x = self;
        sbx_job_t *j;
        sbx_jobs_destroy(x->jobs); /* waits for the running work */
        while ((j = x->later)) {
                x->later = j->next;
                sbx_job_free(j);
        }
        if (x->rt)
                x->ops->close(x->rt);
        sbx_outpub_destroy(x->pub);
        sbx_pools_destroy(x->pools);
        sbx_policy_destroy(x->policy);
        json_decref(x->reqs);
        json_decref(x->holder);
        json_decref(x->dead);
        json_decref(x->made);
        json_decref(x->placed);
        json_decref(x->waiting);
        json_decref(x->frozen);
        json_decref(x->attached);
        json_decref(x->manifests);
        json_decref(x->venv);
        json_decref(x->envs);
        json_decref(x->snapshots);
        free(x);
}

int sbx_exec_mine(const exec_t *x, const sbx_state_t *s)
{
        return s->node_id && !strcmp(s->node_id, x->node);
}

void sbx_exec_append(sbx_proc_t *p, sbx_event_t *ev)
{
        char err[512];
        if (sbx_proc_append(p, ev, err, sizeof(err)))
                fprintf(stderr, "sbxd: executor: %s\n", err);
}

sbx_event_t *sbx_exec_next(const sbx_state_t *s,
                           sbx_evtype_t t,
                           json_t *payload)
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
        if (s->aggregate != SBX_AGG_SANDBOX || !sbx_exec_mine(c->x, s) ||
            s->phase == SBX_SB_TERMINATED || s->phase == SBX_SB_NONE)
                return;
        c->cpu += s->cpu;
        c->mem += s->memory_mb;
        c->n++;
}

void sbx_exec_recount(exec_t *x, sbx_proc_t *p)
{
        count_t c = {x, 0, 0, 0};
        sbx_proc_foreach_state(p, count_cb, &c);
        x->cpu = c.cpu;
        x->mem = c.mem;
        x->n   = c.n;
}

/* ---- jobs: the work (worker threads) and its report (processor thread) */

static void run_exec(exec_t *x, sbx_job_t *j)
{
        sbx_output_result_t o;
        sbx_output_t *out = sbx_output_new(x->pub, j->s->id, j->s->exec_id,
                                           j->s->lease_version);
        x->ops->exec(x->rt, j->s, j->req, out, &j->r);
        sbx_output_close(out, &o);
        if (!j->r.sandbox_died && x->ops->manifest &&
            x->ops->manifest(x->rt, j->s, &j->r.manifest, j->err,
                             sizeof(j->err)))
                fprintf(stderr, "sbxd: executor %s: manifest of %s: %s\n",
                        x->node, j->s->id, j->err);
        j->r.stdout_bytes  = o.inline_bytes[0];
        j->r.stderr_bytes  = o.inline_bytes[1];
        j->r.output_chunks = o.chunks;
        if (!j->r.error[0] && o.error[0])
                sbx_fmt(j->r.error, sizeof(j->r.error), "%s", o.error);
}

static void run_job(void *ctx, sbx_job_t *j)
{
        exec_t *x  = ctx;
        int64_t t0 = sbx_mono_us();
        switch (j->kind) {
        case SBX_JOB_PROVISION:
                j->rc = x->ops->provision(x->rt, j->s, j->inst, sizeof(j->inst),
                                          j->err, sizeof(j->err));
                break;
        case SBX_JOB_EXEC:
                run_exec(x, j);
                break;
        case SBX_JOB_SANITIZE:
                j->rc = x->ops->sanitize(x->rt, j->s, &j->killed, j->err,
                                         sizeof(j->err));
                break;
        case SBX_JOB_DESTROY:
                j->rc = x->ops->destroy(x->rt, j->s);
                break;
        case SBX_JOB_FREEZE:
                j->rc = x->ops->freeze(x->rt, j->s, j->err, sizeof(j->err));
                break;
        case SBX_JOB_THAW:
                j->rc = x->ops->thaw(x->rt, j->s, j->err, sizeof(j->err));
                break;
        case SBX_JOB_ATTACH:
                j->rc = x->ops->attach(x->rt, j->s, j->err, sizeof(j->err));
                break;
        case SBX_JOB_SNAPSHOT:
                if (!x->ops->snapshot) {
                        j->rc = -1;
                        sbx_fmt(j->err, sizeof(j->err),
                                "the %s runtime takes no snapshots",
                                x->ops->name);
                } else
                        j->rc = x->ops->snapshot(x->rt, j->s, &j->snapshot,
                                                 j->err, sizeof(j->err));
                break;
        }
        j->us = sbx_mono_us() - t0;
}

static void on_claim(exec_t *x,
                     sbx_proc_t *p,
                     const sbx_state_t *c,
                     int64_t now);

static void report_exec(sbx_proc_t *p, const sbx_state_t *st, sbx_job_t *j)
{
        sbx_exec_result_t *r = &j->r;
        sbx_event_t *ev      = sbx_exec_next(
                 st, SBX_EV_EXEC_FINISHED,
                 json_pack("{s:s, s:i, s:i, s:b, s:O, s:O, s:i, s:o, s:s?}",
                           "exec_id", st->exec_id, "exit_code", r->exit_code,
                           "signal", r->signal, "timed_out", r->timed_out, "stdout",
                           r->stdout_bytes, "stderr", r->stderr_bytes,
                           "output_chunks", r->output_chunks, "usage",
                      r->usage ? json_incref(r->usage) : json_object(), "error",
                      r->error[0] ? r->error : NULL));
        ev->lease_version = st->lease_version;
        sbx_exec_append(p, ev);
}

/* SnapshotTaken: the snapshot (its id names its content), or why there
 * is none. */
static void report_snapshot(sbx_proc_t *p, const sbx_state_t *st, sbx_job_t *j)
{
        json_t *pl;
        if (!j->rc && j->snapshot)
                pl = json_incref(j->snapshot);
        else
                pl = json_pack("{s:s, s:s, s:s}", "snapshot_id", "",
                               "layer_digest", "", "error",
                               j->err[0] ? j->err : "failed");
        sbx_exec_append(p, sbx_exec_next(st, SBX_EV_SNAPSHOT_TAKEN, pl));
}

/* The claim a sandbox is working for now, if any: its lease holder, or
 * the claim placed on it (by the scheduler, or reusing it). */
static const sbx_state_t *claim_of(exec_t *x,
                                   sbx_proc_t *p,
                                   const sbx_state_t *s)
{
        const char *id;
        const sbx_state_t *c;
        if ((s->phase == SBX_SB_LEASED || s->phase == SBX_SB_RUNNING) &&
            s->lease_owner)
                id = s->lease_owner;
        else
                id = json_string_value(json_object_get(x->waiting, s->id));
        c = id ? sbx_proc_state(p, id) : NULL;
        return c && c->aggregate == SBX_AGG_CLAIM && !sbx_proc_pending(p, id)
                   ? c
                   : NULL;
}

/* Reports job @p j; 0 if it must wait for an append in flight. */
/*
 * The manifest of sandbox @p s from @p scan of its writable layers (NULL:
 * none yet). A sandbox made from a snapshot of this node also has what
 * the snapshot's layers hold: the manifest its sandbox last reported
 * before the snapshot, below the scan. A new reference.
 */
static json_t *forked_manifest(const exec_t *x,
                               const sbx_state_t *s,
                               const json_t *scan)
{
        const json_t *below = sbx_exec_snapshot_manifest(x, s->fork_snapshot);
        json_t *merged      = below ? sbx_manifest_merge(below, scan)
                                    : json_incref((json_t *)scan);
        json_t *m           = sbx_env_manifest(s, merged, x->cap.python);
        json_decref(merged);
        return m;
}

static int report(exec_t *x, sbx_proc_t *p, sbx_job_t *j)
{
        const sbx_state_t *st = sbx_proc_state(p, j->s->id);
        const sbx_state_t *c;
        int phase = st ? st->phase : SBX_SB_NONE;

        if (st && sbx_proc_pending(p, st->id))
                return 0;
        if (j->rc && j->kind != SBX_JOB_PROVISION)
                fprintf(stderr, "sbxd: executor %s: job %d on %s: %s\n",
                        x->node, (int)j->kind, j->s->id,
                        j->err[0] ? j->err : "failed");
        switch (j->kind) {
        case SBX_JOB_PROVISION:
                if (phase != SBX_SB_PROVISIONING)
                        break; /* overtaken; the destroy job cleans up */
                if (j->rc)
                        sbx_exec_append(
                            p, sbx_exec_next(
                                   st, SBX_EV_SANDBOX_FAILED,
                                   json_pack("{s:s}", "reason", j->err)));
                else {
                        sbx_exec_append(
                            p, sbx_exec_next(
                                   st, SBX_EV_PROVISIONED,
                                   json_pack("{s:s, s:I}", "runtime_instance",
                                             j->inst, "startup_us",
                                             (json_int_t)j->us)));
                        /* a fork has its snapshot's packages from the
                         * start: say so before its first exec */
                        if (sbx_exec_snapshot_manifest(x, st->fork_snapshot))
                                json_object_set_new(
                                    x->manifests, st->id,
                                    forked_manifest(x, st, NULL));
                }
                break;
        case SBX_JOB_EXEC:
                if (j->r.sandbox_died)
                        json_object_set_new(x->dead, j->s->id,
                                            json_string(j->r.error));
                if (phase == SBX_SB_RUNNING &&
                    sbx_streq(st->exec_id, j->s->exec_id))
                        report_exec(p, st, j);
                if (j->r.manifest)
                        json_object_set_new(
                            x->manifests, j->s->id,
                            forked_manifest(x, st ? st : j->s, j->r.manifest));
                break;
        case SBX_JOB_SANITIZE:
                if (phase != SBX_SB_SANITIZING)
                        break;
                if (j->rc)
                        sbx_exec_append(
                            p,
                            sbx_exec_next(
                                st, SBX_EV_RECYCLE_STARTED,
                                json_pack("{s:s, s:s+}", "level", "destroy",
                                          "reason", "reset failed: ", j->err)));
                else
                        sbx_exec_append(
                            p, sbx_exec_next(
                                   st, SBX_EV_SANITIZED,
                                   json_pack("{s:i, s:I}", "killed_processes",
                                             j->killed, "duration_us",
                                             (json_int_t)j->us)));
                break;
        case SBX_JOB_DESTROY:
                json_object_del(x->frozen, j->s->id);
                json_object_del(x->attached, j->s->id);
                if (phase == SBX_SB_RECYCLING)
                        sbx_exec_append(
                            p,
                            sbx_exec_next(st, SBX_EV_TERMINATED,
                                          json_pack("{s:s}", "reason",
                                                    st->reason ? st->reason
                                                               : "recycled")));
                break;
        case SBX_JOB_FREEZE:
                if (!j->rc)
                        json_object_set_new(x->frozen, j->s->id, json_true());
                break;
        case SBX_JOB_THAW:
                if (!j->rc)
                        json_object_del(x->frozen, j->s->id);
                break;
        case SBX_JOB_ATTACH:
                if (j->rc) {
                        /* Its claim goes on without it (a new sandbox). */
                        if (st && st->phase != SBX_SB_RECYCLING &&
                            st->phase != SBX_SB_TERMINATED)
                                sbx_exec_append(
                                    p, sbx_exec_next(
                                           st, SBX_EV_RECYCLE_STARTED,
                                           json_pack("{s:s, s:s+}", "level",
                                                     "destroy", "reason",
                                                     "workspace attach "
                                                     "failed: ",
                                                     j->err)));
                        break;
                }
                json_object_set_new(x->attached, j->s->id, json_true());
                sbx_jobs_forget(x->jobs, j->s->id);
                if (st && (c = claim_of(x, p, st)))
                        on_claim(x, p, c, sbx_now_us());
                return 1;
        case SBX_JOB_SNAPSHOT:
                if (st &&
                    sbx_streq(st->snapshot_pending, j->s->snapshot_pending) &&
                    (phase == SBX_SB_LEASED || phase == SBX_SB_IDLE))
                        report_snapshot(p, st, j);
                break;
        }
        sbx_jobs_forget(x->jobs, j->s->id);
        return 1;
}

/* Reports every finished job that can be. */
static void drain(exec_t *x, sbx_proc_t *p)
{
        sbx_job_t *j, *wait = NULL, *later = x->later;
        x->later = NULL;
        while ((j = later) || (j = sbx_jobs_take(x->jobs))) {
                if (j == later)
                        later = j->next;
                j->next = NULL;
                if (report(x, p, j)) {
                        sbx_job_free(j);
                } else {
                        j->next = wait;
                        wait    = j;
                }
        }
        x->later = wait;
}

void sbx_exec_submit(exec_t *x,
                     sbx_proc_t *p,
                     sbx_job_kind_t kind,
                     const sbx_state_t *s,
                     const json_t *req)
{
        sbx_jobs_submit(x->jobs, sbx_job_new(kind, s, req));
        if (!x->ops->threads)
                drain(x, p);
}

/* ---- claims ---------------------------------------------------------------
 */

static void grant(sbx_proc_t *p,
                  const sbx_state_t *sb,
                  const sbx_state_t *c,
                  int64_t now)
{
        sbx_event_t *ev = sbx_exec_next(
            sb, SBX_EV_LEASE_GRANTED,
            json_pack("{s:s, s:I, s:I, s:b}", "owner", c->id, "lease_version",
                      (json_int_t)sb->lease_version + 1, "expires_at",
                      (json_int_t)(now + c->lease_seconds * 1000000LL), "reuse",
                      sb->phase == SBX_SB_IDLE));
        ev->lease_version = sb->lease_version + 1;
        sbx_event_set(&ev->correlation_id, c->id);
        sbx_event_set(&ev->tenant_id, c->tenant_id);
        sbx_event_set(&ev->session_id, c->session_id);
        sbx_exec_append(p, ev);
}

static int needs_attach(exec_t *x, const sbx_state_t *s)
{
        return x->ops->attach && s->origin && !strcmp(s->origin, "pool") &&
               !json_object_get(x->attached, s->id);
}

/* Admits a new sandbox for claim @p c, or refuses the placement. */
static void create_for(exec_t *x, sbx_proc_t *p, const sbx_state_t *c)
{
        sbx_event_t *ev;
        sbx_exec_recount(x, p);
        if (x->n + 1 > x->cap.max_sandboxes ||
            x->cpu + c->cpu > x->cap.cpu + 1e-9 ||
            x->mem + c->memory_mb > x->cap.memory_mb) {
                char why[256];
                sbx_fmt(why, sizeof(why),
                        "node %s full: %d/%d sandboxes, %.1f/%.1f CPU, "
                        "%lld/%lld MB committed",
                        x->node, x->n, x->cap.max_sandboxes, x->cpu, x->cap.cpu,
                        (long long)x->mem, (long long)x->cap.memory_mb);
                sbx_exec_append(
                    p, sbx_exec_next(
                           c, SBX_EV_PLACEMENT_FAILED,
                           json_pack("{s:s, s:s, s:s, s:i, s:b}", "node_id",
                                     x->node, "sandbox_id", c->sandbox_id,
                                     "reason", why, "attempt", c->attempts,
                                     "final", c->attempts >= 3)));
                return;
        }
        ev = sbx_event_new(
            SBX_EV_SANDBOX_CREATED, c->sandbox_id, 1,
            json_pack("{s:s, s:s, s:s, s:s, s:s, s:f, s:I, s:s, s:s, s:s?}",
                      "origin", c->fork_snapshot ? "fork" : "claim", "node_id",
                      x->node, "resource_class",
                      c->resource_class ? c->resource_class : "", "template",
                      c->template_name ? c->template_name : "host", "runtime",
                      c->runtime ? c->runtime : "runc", "cpu", c->cpu,
                      "memory_mb", (json_int_t)c->memory_mb, "network_profile",
                      c->network_profile ? c->network_profile : "none",
                      "claim_id", c->id, "snapshot_id", c->fork_snapshot));
        if (x->cap.template_digest[0])
                json_object_set_new(ev->payload, "template_digest",
                                    json_string(x->cap.template_digest));
        sbx_event_set(&ev->tenant_id, c->tenant_id);
        sbx_event_set(&ev->session_id, c->session_id);
        sbx_event_set(&ev->correlation_id, c->id);
        sbx_exec_append(p, ev);
}

/* A claim placed (or reused) here. */
static void on_claim(exec_t *x,
                     sbx_proc_t *p,
                     const sbx_state_t *c,
                     int64_t now)
{
        const sbx_state_t *sb;
        const char *held;
        char key[192];

        if (c->phase != SBX_CLAIM_PLACING || !c->sandbox_id)
                return;
        /* A warm sandbox may hold the lease, under another id than the
         * one the scheduler named. */
        held = json_string_value(json_object_get(x->holder, c->id));
        sb   = sbx_proc_state(p, held ? held : c->sandbox_id);
        if (sb && (sb->phase == SBX_SB_LEASED || sb->phase == SBX_SB_RUNNING) &&
            sb->lease_owner && !strcmp(sb->lease_owner, c->id)) {
                if (sbx_proc_pending(p, sb->id) ||
                    sbx_jobs_busy(x->jobs, sb->id))
                        return;
                if (needs_attach(x, sb)) {
                        sbx_exec_submit(x, p, SBX_JOB_ATTACH, sb, NULL);
                        return;
                }
                sbx_exec_append(
                    p,
                    sbx_exec_next(
                        c, SBX_EV_CLAIM_BOUND,
                        json_pack("{s:s, s:s, s:I, s:I}", "sandbox_id", sb->id,
                                  "node_id", x->node, "lease_version",
                                  (json_int_t)sb->lease_version,
                                  "lease_expires_at",
                                  (json_int_t)sb->lease_expires_at)));
                return;
        }
        sb = sbx_proc_state(p, c->sandbox_id);
        if (sbx_proc_pending(p, c->sandbox_id))
                return;
        if (!sb || sb->seq == 0) {
                const sbx_state_t *warm;
                sbx_fmt(key, sizeof(key), "%s/%s/%s",
                        c->runtime ? c->runtime : "runc",
                        c->resource_class ? c->resource_class : "",
                        c->template_name ? c->template_name : "host");
                /* Pool sandboxes have no network, and start clean. */
                if (!c->fork_snapshot &&
                    (!c->network_profile ||
                     !strcmp(c->network_profile, "none")) &&
                    (warm = sbx_exec_pool_take(x, p, key)))
                        grant(p, warm, c, now);
                else
                        create_for(x, p, c);
                return;
        }
        if (sb->phase == SBX_SB_HIBERNATING && !sb->lease_owner)
                sbx_exec_append(
                    p, sbx_exec_next(sb, SBX_EV_RESUMED,
                                     json_pack("{s:s}", "reason", c->id)));
        else if (sb->phase == SBX_SB_READY ||
                 (sb->phase == SBX_SB_IDLE && !sb->lease_owner))
                grant(p, sb, c, now);
}

/* ---- sandboxes --------------------------------------------------------------
 */

/* Appends the manifest an exec left, once its fingerprint is new and
 * the sandbox may take it; 1 if it did. */
static int env_update(exec_t *x, sbx_proc_t *p, const sbx_state_t *s)
{
        json_t *m      = json_object_get(x->manifests, s->id);
        const char *fp = json_string_value(json_object_get(m, "fingerprint"));
        int clean =
            m && !json_integer_value(json_object_get(m, "dirty_level")) &&
            !json_array_size(json_object_get(m, "installed_capabilities"));
        if (!m)
                return 0;
        /* a sandbox with no manifest yet is as clean as its template */
        if (sbx_streq(fp, s->env_fingerprint) ||
            (clean && !s->env_fingerprint) ||
            (s->phase != SBX_SB_LEASED && s->phase != SBX_SB_RUNNING &&
             s->phase != SBX_SB_IDLE && s->phase != SBX_SB_SANITIZING)) {
                json_object_del(x->manifests, s->id);
                return 0;
        }
        sbx_exec_append(p, sbx_exec_next(s, SBX_EV_ENVIRONMENT_UPDATED,
                                         json_pack("{s:O}", "manifest", m)));
        return 1;
}

static void on_sandbox(exec_t *x, sbx_proc_t *p, const sbx_state_t *s)
{
        const json_t *req = json_object_get(x->reqs, s->id);
        int frozen        = json_object_get(x->frozen, s->id) != NULL;

        if (sbx_jobs_busy(x->jobs, s->id))
                return;
        if (json_object_get(x->dead, s->id)) {
                const char *why =
                    json_string_value(json_object_get(x->dead, s->id));
                if (s->phase == SBX_SB_RECYCLING ||
                    s->phase == SBX_SB_TERMINATED)
                        json_object_del(x->dead, s->id);
                else if (s->phase != SBX_SB_FAILED && s->phase != SBX_SB_LOST) {
                        sbx_exec_append(
                            p,
                            sbx_exec_next(s, SBX_EV_SANDBOX_FAILED,
                                          json_pack("{s:s}", "reason", why)));
                        return;
                }
        }
        if (env_update(x, p, s))
                return;
        if (s->snapshot_pending &&
            (s->phase == SBX_SB_LEASED || s->phase == SBX_SB_IDLE)) {
                sbx_exec_submit(x, p, SBX_JOB_SNAPSHOT, s, NULL);
                return;
        }
        if (frozen && s->phase != SBX_SB_HIBERNATING) {
                sbx_exec_submit(x, p, SBX_JOB_THAW, s, NULL);
                return;
        }
        switch (s->phase) {
        case SBX_SB_PROVISIONING:
                sbx_exec_submit(x, p, SBX_JOB_PROVISION, s, NULL);
                break;
        case SBX_SB_RUNNING:
                if (req && s->exec_id &&
                    sbx_streq(s->exec_id, json_string_value(
                                              json_object_get(req, "exec_id"))))
                        sbx_exec_submit(x, p, SBX_JOB_EXEC, s, req);
                break;
        case SBX_SB_SANITIZING:
                sbx_exec_submit(x, p, SBX_JOB_SANITIZE, s, NULL);
                break;
        case SBX_SB_RECYCLING:
                sbx_exec_submit(x, p, SBX_JOB_DESTROY, s, NULL);
                break;
        case SBX_SB_HIBERNATING:
                if (!frozen && x->ops->freeze)
                        sbx_exec_submit(x, p, SBX_JOB_FREEZE, s, NULL);
                break;
        default:
                break;
        }
}

static void exec_observe(void *self,
                         const sbx_event_t *ev,
                         sbx_verdict_t v,
                         const sbx_state_t *s)
{
        exec_t *x = self;
        if (v != SBX_FOLD_ACCEPTED || !sbx_exec_mine(x, s))
                return;
        switch (ev->type) {
        case SBX_EV_EXEC_REQUESTED:
                if (s->lease_owner &&
                    sbx_streq(s->lease_owner, json_string_value(json_object_get(
                                                  x->venv, s->id)))) {
                        json_t *req = json_copy(ev->payload);
                        json_object_set_new(req, "venv", json_true());
                        json_object_set_new(x->reqs, ev->aggregate_id, req);
                } else
                        json_object_set(x->reqs, ev->aggregate_id, ev->payload);
                break;
        case SBX_EV_SNAPSHOT_TAKEN:
                sbx_exec_snapshot_taken(x, ev);
                break;
        case SBX_EV_ENVIRONMENT_UPDATED:
                json_object_set(x->envs, s->id,
                                json_object_get(ev->payload, "manifest"));
                break;
        case SBX_EV_LEASE_GRANTED:
                /* claim id -> the sandbox that holds its lease */
                if (s->lease_owner)
                        json_object_set_new(x->holder, s->lease_owner,
                                            json_string(s->id));
                break;
        case SBX_EV_LEASE_RELEASED:
        case SBX_EV_LEASE_EXPIRED:
        case SBX_EV_TERMINATED:
                json_object_del(x->venv, ev->aggregate_id);
                if (ev->type == SBX_EV_TERMINATED)
                        json_object_del(x->envs, ev->aggregate_id);
                /* fall through */
        case SBX_EV_EXEC_FINISHED:
                json_object_del(x->reqs, ev->aggregate_id);
                break;
        case SBX_EV_REUSE_CHOSEN:
                /* a small conflicting change: this claim's execs run in
                 * a venv above the sandbox's packages, gone at release */
                if (sbx_streq(sbx_event_str(ev, "mode"), "venv"))
                        json_object_set_new(x->venv, s->sandbox_id,
                                            json_string(s->id));
                /* fall through */
        case SBX_EV_PLACED:
                /* the sandbox named -> the claim waiting for it */
                json_object_set_new(x->placed, s->id,
                                    json_string(s->sandbox_id));
                json_object_set_new(x->waiting, s->sandbox_id,
                                    json_string(s->id));
                break;
        case SBX_EV_CLAIM_BOUND:
        case SBX_EV_CLAIM_FAILED:
        case SBX_EV_CLAIM_CANCELLED:
        case SBX_EV_PLACEMENT_FAILED: {
                const char *named = json_string_value(
                    json_object_get(x->placed, ev->aggregate_id));
                if (named)
                        json_object_del(x->waiting, named);
                json_object_del(x->placed, ev->aggregate_id);
                json_object_del(x->holder, ev->aggregate_id);
                break;
        }
        default:
                break;
        }
}

static void exec_decide(void *self,
                        sbx_proc_t *p,
                        const sbx_state_t *s,
                        int64_t now)
{
        exec_t *x = self;
        const sbx_state_t *c;
        if (!sbx_exec_mine(x, s))
                return;
        if (s->aggregate == SBX_AGG_CLAIM) {
                on_claim(x, p, s, now);
                return;
        }
        if (s->aggregate != SBX_AGG_SANDBOX)
                return;
        on_sandbox(x, p, s);
        /* A sandbox that became READY, IDLE (resumed) or LEASED moves its
         * claim on. */
        if ((s->phase == SBX_SB_READY || s->phase == SBX_SB_LEASED ||
             s->phase == SBX_SB_IDLE) &&
            (c = claim_of(x, p, s)))
                on_claim(x, p, c, now);
}

static void exec_idle(void *self, sbx_proc_t *p, int64_t now)
{
        exec_t *x = self;
        sbx_proc_stats_t st;

        drain(x, p);
        if (now - x->last_status < 1000000)
                return;
        sbx_proc_get_stats(p, &st);
        if (st.caught_up && x->ops->list &&
            (!x->reconciled || now - x->last_reconcile > 30000000)) {
                sbx_exec_reconcile(x, p);
                sbx_exec_collect(x, p, now);
                x->reconciled     = 1;
                x->last_reconcile = now;
        }
        sbx_exec_node_tick(x, p, now, st.caught_up, 0);
}

/* A stopping node says so, so the scheduler stops placing on it at once. */
static void exec_shutdown(void *self, sbx_proc_t *p)
{
        sbx_exec_node_tick(self, p, sbx_now_us(), 0, 1);
}

static const char *const exec_topics[] = {NULL};

const sbx_stage_t sbx_stage_hollow = {
    .name         = "hollow",
    .group_topics = exec_topics,
    .decides      = 1,
    .own_all      = 1,
    .tick_ms      = 2000,
    .init         = hollow_init,
    .destroy      = exec_destroy,
    .observe      = exec_observe,
    .decide       = exec_decide,
    .idle         = exec_idle,
    .shutdown     = exec_shutdown,
};

const sbx_stage_t sbx_stage_executor = {
    .name         = "executor",
    .group_topics = exec_topics,
    .decides      = 1,
    .own_all      = 1,
    .tick_ms      = 2000,
    .init         = runc_init,
    .destroy      = exec_destroy,
    .observe      = exec_observe,
    .decide       = exec_decide,
    .idle         = exec_idle,
    .shutdown     = exec_shutdown,
};
