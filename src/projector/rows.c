/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Row emitters. Each emitter writes exactly the columns of its table's
 * `cols`, in that order; the two are kept side by side below so they
 * change together. Empty strings in the state mean "none" and become
 * NULL; times of 0 likewise, except where the column needs a value.
 */
#include "projector/rows.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "core/util.h"

const sbx_ptable_def_t sbx_ptables[SBX_PT__CNT] = {
    [SBX_PT_EVENT]       = {"sandbox_event", NULL, SBX_PMERGE_APPEND, NULL,
                            "event_id, aggregate, aggregate_id, seq, event_type, "
                                  "old_state, new_state, accepted, reason, request_id, "
                                  "correlation_id, causation_id, tenant_id, session_id, "
                                  "lease_version, producer, occurred_at, "
                                  "topic_partition, topic_offset, metadata",
                            0},
    [SBX_PT_UNDECODABLE] = {"projector_undecodable", NULL, SBX_PMERGE_APPEND,
                            NULL,
                            "topic, topic_partition, topic_offset, size, "
                            "reason",
                            0},
    [SBX_PT_CLAIM]   = {"claim", "stage_claim", SBX_PMERGE_REPLACE, "claim_id",
                        "claim_id, tenant_id, user_id, session_id, request_id, "
                          "correlation_id, phase, seq, resource_class, cpu, "
                          "memory_mb, template, runtime, network_profile, "
                          "workspace_id, node_id, sandbox_id, lease_version, "
                          "lease_expires_at, ttl_seconds, lease_seconds, "
                          "attempts, reason, created_at, updated_at",
                        0},
    [SBX_PT_SANDBOX] = {"sandbox_instance", "stage_sandbox", SBX_PMERGE_REPLACE,
                        "sandbox_id",
                        "sandbox_id, tenant_id, session_id, claim_id, "
                        "node_id, origin, pool, runtime_provider, "
                        "runtime_instance_id, resource_class, template_id, "
                        "template_digest, cpu, memory_mb, network_profile, "
                        "state, version, lease_owner, lease_version, "
                        "tainted, taint_reason, recycle_level, reason, "
                        "execs, leases, reuses, snapshots, ooms, startup_us, "
                        "created_at, last_active_at, expires_at, "
                        "updated_at",
                        0},
    [SBX_PT_LEASE]   = {"sandbox_lease", "stage_lease", SBX_PMERGE_REPLACE,
                        "sandbox_id, lease_version",
                        "sandbox_id, lease_version, lease_owner, tenant_id, "
                          "session_id, reuse, acquired_at, heartbeat_at, "
                          "expires_at, ended_at, ended_by, end_reason",
                        0},
    [SBX_PT_ENV]     = {"sandbox_environment", "stage_environment",
                        SBX_PMERGE_REPLACE, "sandbox_id",
                        "sandbox_id, base_image_digest, dependency_hash, "
                            "workspace_id, snapshot_id, environment_version, "
                            "dirty_level, fingerprint, manifest, updated_at",
                        0},
    [SBX_PT_PLAN]    = {"sandbox_allocation", "stage_plan", SBX_PMERGE_REPLACE,
                        "claim_id",
                        "claim_id, tenant_id, session_id, signature, "
                           "planner_input_hash, planner, fallback_reason, "
                           "recommended_class, recommended_cpu, "
                           "recommended_memory_mb, confidence, reason, decision, "
                           "actual_class, cpu, memory_mb, clamped, guard_reasons, "
                           "planned_at, decided_at",
                        0},
    [SBX_PT_USAGE]   = {"sandbox_allocation", "stage_usage", SBX_PMERGE_ADD,
                        "claim_id",
                        "claim_id, wall_us, cpu_us, peak_memory_bytes, oom", 0},
    [SBX_PT_NODE]    = {"node", "stage_node", SBX_PMERGE_REPLACE, "node_id",
                        "node_id, at, healthy, draining, cpu_capacity, "
                           "memory_mb_capacity, disk_gb_capacity, max_sandboxes, "
                           "cpu_committed, memory_mb_committed, sandboxes, "
                           "recent_ooms, heartbeat_seq, pools, templates, "
                           "snapshots, runtimes, topic_partition, topic_offset",
                        1},
};

void sbx_prows_reset(sbx_prows_t *r)
{
        int t;
        for (t = 0; t < SBX_PT__CNT; t++)
                sbx_copybuf_reset(&r->buf[t]);
        r->ord = 0;
}

void sbx_prows_free(sbx_prows_t *r)
{
        int t;
        for (t = 0; t < SBX_PT__CNT; t++)
                sbx_copybuf_free(&r->buf[t]);
}

/* A staged row of table @p t: its buffer, with ord written. */
static sbx_copybuf_t *staged(sbx_prows_t *r, sbx_ptable_t t)
{
        sbx_copybuf_t *b = &r->buf[t];
        sbx_copy_int(b, ++r->ord);
        return b;
}

/* An optional string: "" is none. */
static void opt(sbx_copybuf_t *b, const char *s)
{
        sbx_copy_str(b, s && *s ? s : NULL);
}

static void opt_time(sbx_copybuf_t *b, int64_t us)
{
        if (us)
                sbx_copy_time(b, us);
        else
                sbx_copy_str(b, NULL);
}

static int is_uuid(const char *s)
{
        int i;
        for (i = 0; i < 36; i++) {
                int dash = i == 8 || i == 13 || i == 18 || i == 23;
                if (dash ? s[i] != '-' : !isxdigit((unsigned char)s[i]))
                        return 0;
        }
        return s[36] == '\0';
}

/*
 * A stand-in UUID for an event_id that is not one (sandbox_event's key
 * column is a uuid): two FNV-1a 64 hashes of it, version 8 ("custom").
 */
static void derived_uuid(const char *id, char out[37])
{
        uint64_t h[2] = {sbx_fnv1a64(SBX_FNV1A64_INIT, id),
                         sbx_fnv1a64(0x84222325cbf29ce4ULL, id)};
        sbx_fmt(out, 37, "%08llx-%04llx-8%03llx-%04llx-%012llx",
                (unsigned long long)(h[0] >> 32),
                (unsigned long long)(h[0] >> 16 & 0xffff),
                (unsigned long long)(h[0] & 0xfff),
                (unsigned long long)(0x8000 | (h[1] >> 48 & 0x3fff)),
                (unsigned long long)(h[1] & 0xffffffffffffULL));
}

/* Replaces the bytes field @p f of @p o by "<f>_bytes": its length. */
static void bytes_to_length(json_t *o, const char *f)
{
        unsigned char *buf = NULL;
        size_t len         = 0;
        char name[64];
        if (sbx_codec_bytes_value(json_object_get(o, f), &buf, &len) == 0)
                free(buf);
        json_object_del(o, f);
        json_object_set_new(o, sbx_fmt(name, sizeof(name), "%s_bytes", f),
                            json_integer((json_int_t)len));
}

/*
 * The event's metadata: its payload, without the output an exec printed
 * (only its size: the output stays in the log), and with the original
 * event_id if it was not a UUID.
 */
static json_t *metadata(const sbx_event_t *ev, int uuid_ok)
{
        json_t *m = json_copy(ev->payload);
        if (ev->type == SBX_EV_EXEC_FINISHED) {
                bytes_to_length(m, "stdout");
                bytes_to_length(m, "stderr");
        }
        if (!uuid_ok)
                json_object_set_new(m, "event_id", json_string(ev->event_id));
        return m;
}

void sbx_prows_event(sbx_prows_t *r,
                     const sbx_event_t *ev,
                     sbx_verdict_t v,
                     sbx_aggregate_t kind,
                     int old_phase,
                     int new_phase,
                     int32_t partition,
                     int64_t offset)
{
        sbx_copybuf_t *b = &r->buf[SBX_PT_EVENT];
        int uuid_ok      = is_uuid(ev->event_id);
        char id[37];
        json_t *m;

        if (uuid_ok)
                sbx_fmt(id, sizeof(id), "%s", ev->event_id);
        else
                derived_uuid(ev->event_id, id);
        sbx_copy_str(b, id);
        sbx_copy_str(b, sbx_aggregate_name(ev->aggregate));
        sbx_copy_str(b, ev->aggregate_id);
        sbx_copy_int(b, ev->seq);
        sbx_copy_str(b, sbx_evtype_name(ev->type));
        sbx_copy_str(b, old_phase ? sbx_phase_name(kind, old_phase) : NULL);
        sbx_copy_str(b, new_phase ? sbx_phase_name(kind, new_phase) : NULL);
        sbx_copy_bool(b, v == SBX_FOLD_ACCEPTED);
        sbx_copy_str(b, sbx_verdict_name(v));
        opt(b, sbx_event_str(ev, "request_id"));
        opt(b, ev->correlation_id);
        opt(b, ev->causation_id);
        opt(b, ev->tenant_id);
        opt(b, ev->session_id);
        if (ev->lease_version == SBX_NO_LEASE)
                sbx_copy_str(b, NULL);
        else
                sbx_copy_int(b, ev->lease_version);
        sbx_copy_str(b, ev->producer);
        sbx_copy_time(b, ev->occurred_at);
        sbx_copy_int(b, partition);
        sbx_copy_int(b, offset);
        m = metadata(ev, uuid_ok);
        sbx_copy_json(b, m);
        json_decref(m);
        sbx_copy_end(b);
}

static void claim_row(sbx_prows_t *r, const sbx_state_t *s)
{
        sbx_copybuf_t *b = staged(r, SBX_PT_CLAIM);
        sbx_copy_str(b, s->id);
        opt(b, s->tenant_id);
        opt(b, s->user_id);
        opt(b, s->session_id);
        opt(b, s->request_id);
        opt(b, s->correlation_id);
        sbx_copy_str(b, sbx_phase_name(s->aggregate, s->phase));
        sbx_copy_int(b, s->seq);
        opt(b, s->resource_class);
        sbx_copy_num(b, s->cpu);
        sbx_copy_int(b, s->memory_mb);
        opt(b, s->template_name);
        opt(b, s->runtime);
        opt(b, s->network_profile);
        opt(b, s->workspace_id);
        opt(b, s->node_id);
        opt(b, s->sandbox_id);
        sbx_copy_int(b, s->lease_version);
        opt_time(b, s->lease_expires_at);
        sbx_copy_int(b, s->ttl_seconds);
        sbx_copy_int(b, s->lease_seconds);
        sbx_copy_int(b, s->attempts);
        opt(b, s->reason);
        sbx_copy_time(b, s->created_at);
        sbx_copy_time(b, s->updated_at);
        sbx_copy_end(b);
}

static void sandbox_row(sbx_prows_t *r,
                        const sbx_state_t *s,
                        const sbx_pext_t *x)
{
        sbx_copybuf_t *b = staged(r, SBX_PT_SANDBOX);
        sbx_copy_str(b, s->id);
        opt(b, s->tenant_id);
        opt(b, s->session_id);
        opt(b, x->claim_id);
        opt(b, s->node_id);
        opt(b, s->origin);
        opt(b, s->pool);
        opt(b, s->runtime);
        opt(b, x->runtime_instance);
        opt(b, s->resource_class);
        opt(b, s->template_name);
        opt(b, s->template_digest);
        sbx_copy_num(b, s->cpu);
        sbx_copy_int(b, s->memory_mb);
        opt(b, s->network_profile);
        sbx_copy_str(b, sbx_phase_name(s->aggregate, s->phase));
        sbx_copy_int(b, s->seq);
        opt(b, s->lease_owner);
        sbx_copy_int(b, s->lease_version);
        sbx_copy_bool(b, s->tainted);
        opt(b, s->taint_reason);
        opt(b, s->recycle_level);
        opt(b, s->reason);
        sbx_copy_int(b, s->n_execs);
        sbx_copy_int(b, s->n_leases);
        sbx_copy_int(b, s->n_reuses);
        sbx_copy_int(b, s->n_snapshots);
        sbx_copy_int(b, s->n_ooms);
        if (x->startup_us)
                sbx_copy_int(b, x->startup_us);
        else
                sbx_copy_str(b, NULL);
        sbx_copy_time(b, s->created_at);
        opt_time(b, s->last_active_at);
        opt_time(b, s->lease_expires_at);
        sbx_copy_time(b, s->updated_at);
        sbx_copy_end(b);
}

static void lease_row(sbx_prows_t *r, const sbx_state_t *s, const sbx_pext_t *x)
{
        sbx_copybuf_t *b = staged(r, SBX_PT_LEASE);
        sbx_copy_str(b, s->id);
        sbx_copy_int(b, x->lease_version);
        sbx_copy_str(b, x->lease_owner ? x->lease_owner : "");
        opt(b, x->lease_tenant);
        opt(b, x->lease_session);
        sbx_copy_bool(b, x->reuse);
        sbx_copy_time(b, x->acquired_at);
        sbx_copy_time(b, x->heartbeat_at);
        opt_time(b, x->lease_expires_at);
        opt_time(b, x->lease_open ? 0 : x->ended_at);
        sbx_copy_str(b, x->lease_open ? NULL : x->ended_by);
        opt(b, x->lease_open ? NULL : x->end_reason);
        sbx_copy_end(b);
}

static void environment_row(sbx_prows_t *r,
                            const sbx_state_t *s,
                            const sbx_pext_t *x)
{
        sbx_copybuf_t *b = staged(r, SBX_PT_ENV);
        sbx_copy_str(b, s->id);
        opt(b, x->base_digest);
        opt(b, x->dependency_hash);
        opt(b, x->env_workspace);
        opt(b, s->last_snapshot);
        sbx_copy_int(b, x->env_version);
        sbx_copy_int(b, s->dirty_level);
        opt(b, s->env_fingerprint);
        sbx_copy_json(b, x->manifest);
        sbx_copy_time(b, s->updated_at);
        sbx_copy_end(b);
}

static void plan_row(sbx_prows_t *r, const sbx_state_t *s, const sbx_pext_t *x)
{
        sbx_copybuf_t *b = staged(r, SBX_PT_PLAN);
        int decided      = x->decision != NULL;
        int approved     = decided && !strcmp(x->decision, "approved");
        sbx_copy_str(b, s->id);
        opt(b, s->tenant_id);
        opt(b, s->session_id);
        opt(b, x->signature);
        opt(b, x->input_hash);
        opt(b, x->planner);
        opt(b, x->fallback_reason);
        opt(b, x->recommended_class);
        sbx_copy_num(b, x->recommended_cpu);
        sbx_copy_int(b, x->recommended_memory_mb);
        sbx_copy_num(b, x->confidence);
        opt(b, x->plan_reason);
        sbx_copy_str(b, x->decision);
        opt(b, x->actual_class);
        if (approved) {
                sbx_copy_num(b, s->cpu);
                sbx_copy_int(b, s->memory_mb);
        } else {
                sbx_copy_str(b, NULL);
                sbx_copy_str(b, NULL);
        }
        if (decided)
                sbx_copy_bool(b, x->clamped);
        else
                sbx_copy_str(b, NULL);
        opt(b, x->guard_reasons);
        opt_time(b, x->planned_at);
        opt_time(b, x->decided_at);
        sbx_copy_end(b);
}

static void usage_row(sbx_prows_t *r, const sbx_pext_t *x)
{
        sbx_copybuf_t *b = staged(r, SBX_PT_USAGE);
        sbx_copy_str(b, x->lease_owner);
        sbx_copy_int(b, x->wall_us);
        sbx_copy_int(b, x->cpu_us);
        sbx_copy_int(b, x->peak_memory_bytes);
        sbx_copy_bool(b, x->oom);
        sbx_copy_end(b);
}

void sbx_prows_aggregate(sbx_prows_t *r,
                         const sbx_state_t *s,
                         const sbx_pext_t *x)
{
        if (s->aggregate == SBX_AGG_CLAIM) {
                claim_row(r, s);
                if (x->changed & SBX_PX_PLAN)
                        plan_row(r, s, x);
        } else if (s->aggregate == SBX_AGG_SANDBOX) {
                sandbox_row(r, s, x);
                if (x->changed & SBX_PX_LEASE)
                        lease_row(r, s, x);
                if (x->changed & SBX_PX_ENV)
                        environment_row(r, s, x);
                if ((x->changed & SBX_PX_USAGE) && x->lease_owner &&
                    *x->lease_owner)
                        usage_row(r, x);
        }
}

void sbx_prows_undecodable(sbx_prows_t *r,
                           const char *topic,
                           int32_t partition,
                           int64_t offset,
                           size_t size,
                           const char *reason)
{
        sbx_copybuf_t *b = &r->buf[SBX_PT_UNDECODABLE];
        sbx_copy_str(b, topic);
        sbx_copy_int(b, partition);
        sbx_copy_int(b, offset);
        sbx_copy_int(b, (int64_t)size);
        sbx_copy_str(b, reason);
        sbx_copy_end(b);
}

void sbx_prows_node(sbx_prows_t *r,
                    const json_t *status,
                    const char *node_id,
                    int32_t partition,
                    int64_t offset)
{
        static const char *const ints[]  = {"memory_mb_capacity",
                                            "disk_gb_capacity", "max_sandboxes"};
        static const char *const ints2[] = {"memory_mb_committed", "sandboxes",
                                            "recent_ooms", "seq"};
        static const char *const lists[] = {"pools", "templates", "snapshots",
                                            "runtimes"};
        sbx_copybuf_t *b                 = staged(r, SBX_PT_NODE);
        size_t i;

#define GET(f) json_object_get(status, f)
        sbx_copy_bool(b, status == NULL);
        sbx_copy_str(b, status ? json_string_value(GET("node_id")) : node_id);
        if (!status) {
                /* the other 18 columns */
                for (i = 0; i < 18; i++)
                        sbx_copy_str(b, NULL);
                sbx_copy_end(b);
                return;
        }
        sbx_copy_time(b, json_integer_value(GET("at")));
        sbx_copy_bool(b, json_is_true(GET("healthy")));
        sbx_copy_bool(b, json_is_true(GET("draining")));
        sbx_copy_num(b, json_number_value(GET("cpu_capacity")));
        for (i = 0; i < SBX_ARRAY_SIZE(ints); i++)
                sbx_copy_int(b, json_integer_value(GET(ints[i])));
        sbx_copy_num(b, json_number_value(GET("cpu_committed")));
        for (i = 0; i < SBX_ARRAY_SIZE(ints2); i++)
                sbx_copy_int(b, json_integer_value(GET(ints2[i])));
        for (i = 0; i < SBX_ARRAY_SIZE(lists); i++)
                if (GET(lists[i]))
                        sbx_copy_json(b, GET(lists[i]));
                else
                        sbx_copy_str(b, "[]");
#undef GET
        sbx_copy_int(b, partition);
        sbx_copy_int(b, offset);
        sbx_copy_end(b);
}
