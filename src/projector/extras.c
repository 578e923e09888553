/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Extras, event by event. A lease stays "open" from LeaseGranted until the
 * event that ends it (release, expiry, recycling, failure, loss); after
 * that its row keeps how it ended until the next LeaseGranted starts a new
 * row. Nothing here reads a clock.
 */
#include "projector/extras.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

/* The string fields, freed together. */
static const size_t ext_strings[] = {
    offsetof(sbx_pext_t, claim_id),
    offsetof(sbx_pext_t, runtime_instance),
    offsetof(sbx_pext_t, lease_owner),
    offsetof(sbx_pext_t, lease_tenant),
    offsetof(sbx_pext_t, lease_session),
    offsetof(sbx_pext_t, ended_by),
    offsetof(sbx_pext_t, end_reason),
    offsetof(sbx_pext_t, base_digest),
    offsetof(sbx_pext_t, dependency_hash),
    offsetof(sbx_pext_t, env_workspace),
    offsetof(sbx_pext_t, planner),
    offsetof(sbx_pext_t, fallback_reason),
    offsetof(sbx_pext_t, input_hash),
    offsetof(sbx_pext_t, signature),
    offsetof(sbx_pext_t, recommended_class),
    offsetof(sbx_pext_t, plan_reason),
    offsetof(sbx_pext_t, decision),
    offsetof(sbx_pext_t, actual_class),
    offsetof(sbx_pext_t, guard_reasons),
};

sbx_pext_t *sbx_pext_new(void)
{
        return sbx_calloc(1, sizeof(sbx_pext_t));
}

void sbx_pext_destroy(sbx_pext_t *x)
{
        size_t i;
        if (!x)
                return;
        for (i = 0; i < SBX_ARRAY_SIZE(ext_strings); i++)
                free(*(char **)((char *)x + ext_strings[i]));
        json_decref(x->manifest);
        free(x);
}

static void set(char **dst, const char *v)
{
        if (v == *dst)
                return;
        free(*dst);
        *dst = v ? sbx_strdup(v) : NULL;
}

static const char *jstr(const json_t *o, const char *field)
{
        return json_string_value(json_object_get(o, field));
}

/* The strings of @p arr joined by "; ", or NULL if it holds none. */
static char *join(const json_t *arr)
{
        size_t i, len = 0;
        char *out = NULL;
        const json_t *v;

        json_array_foreach(arr, i, v)
        {
                const char *s = json_string_value(v);
                size_t n      = s ? strlen(s) : 0;
                if (!s)
                        continue;
                out = sbx_realloc(out, len + n + 3);
                if (len) {
                        memcpy(out + len, "; ", 2);
                        len += 2;
                }
                memcpy(out + len, s, n);
                len += n;
                out[len] = '\0';
        }
        return out;
}

/* FNV-1a 64 of the manifest's lock hashes, as 16 hex digits. */
static void dependency_hash(const json_t *m, char out[17])
{
        static const char *const locks[] = {"pip_lock_hash", "npm_lock_hash",
                                            "apt_state_hash"};
        uint64_t h                       = SBX_FNV1A64_INIT;
        size_t i;

        for (i = 0; i < SBX_ARRAY_SIZE(locks); i++)
                h = sbx_fnv1a64(sbx_fnv1a64(h, jstr(m, locks[i])), "\n");
        sbx_fmt(out, 17, "%016llx", (unsigned long long)h);
}

static void plan_proposed(sbx_pext_t *x, const sbx_event_t *ev)
{
        const json_t *intent = json_object_get(ev->payload, "intent");
        const json_t *v;

        set(&x->planner, sbx_event_str(ev, "planner"));
        set(&x->fallback_reason, sbx_event_str(ev, "fallback_reason"));
        set(&x->input_hash, sbx_event_str(ev, "input_hash"));
        set(&x->signature, sbx_event_str(ev, "signature"));
        set(&x->recommended_class, jstr(intent, "resource_class"));
        set(&x->plan_reason, jstr(intent, "reason"));
        v                  = json_object_get(intent, "cpu");
        x->recommended_cpu = json_is_number(v) ? json_number_value(v) : 0;
        x->recommended_memory_mb =
            json_integer_value(json_object_get(intent, "memory_mb"));
        v             = json_object_get(intent, "confidence");
        x->confidence = json_is_number(v) ? json_number_value(v) : 0;
        x->planned_at = ev->occurred_at;
}

static void plan_decided(sbx_pext_t *x, const sbx_event_t *ev, int approved)
{
        free(x->guard_reasons);
        x->guard_reasons = join(json_object_get(ev->payload, "reasons"));
        set(&x->decision, approved ? "approved" : "rejected");
        set(&x->actual_class,
            approved ? sbx_event_str(ev, "resource_class") : NULL);
        x->clamped    = approved && sbx_event_bool(ev, "clamped");
        x->decided_at = ev->occurred_at;
}

static void lease_granted(sbx_pext_t *x,
                          const sbx_state_t *s,
                          const sbx_event_t *ev)
{
        x->lease_open       = 1;
        x->lease_version    = s->lease_version;
        x->acquired_at      = ev->occurred_at;
        x->heartbeat_at     = ev->occurred_at;
        x->lease_expires_at = s->lease_expires_at;
        x->ended_at         = 0;
        x->reuse            = sbx_event_bool(ev, "reuse");
        set(&x->lease_owner, sbx_event_str(ev, "owner"));
        set(&x->lease_tenant, ev->tenant_id);
        set(&x->lease_session, ev->session_id);
        set(&x->ended_by, NULL);
        set(&x->end_reason, NULL);
        if (!x->claim_id || !*x->claim_id)
                set(&x->claim_id, x->lease_owner);
}

/* The open lease (if any) ends with @p ev. */
static void lease_ended(sbx_pext_t *x, const sbx_event_t *ev)
{
        if (!x->lease_open)
                return;
        x->lease_open = 0;
        x->ended_at   = ev->occurred_at;
        set(&x->ended_by, sbx_evtype_name(ev->type));
        set(&x->end_reason, sbx_event_str(ev, "reason"));
        x->changed |= SBX_PX_LEASE;
}

static void exec_finished(sbx_pext_t *x, const sbx_event_t *ev)
{
        const json_t *u = json_object_get(ev->payload, "usage");
#define U(f) json_integer_value(json_object_get(u, f))
        x->wall_us           = U("wall_us");
        x->cpu_us            = U("cpu_user_us") + U("cpu_sys_us");
        x->peak_memory_bytes = U("peak_memory_bytes");
#undef U
        x->oom = json_is_true(json_object_get(u, "oom_killed"));
        x->changed |= SBX_PX_USAGE;
}

static void environment_updated(sbx_pext_t *x, const sbx_event_t *ev)
{
        const json_t *m    = json_object_get(ev->payload, "manifest");
        const char *digest = jstr(m, "template_digest");
        char h[17];

        x->env_version++;
        json_decref(x->manifest);
        x->manifest = json_deep_copy(m);
        dependency_hash(m, h);
        set(&x->dependency_hash, h);
        set(&x->env_workspace, jstr(m, "workspace_id"));
        if (digest && *digest)
                set(&x->base_digest, digest);
}

static void apply_sandbox(sbx_pext_t *x,
                          const sbx_state_t *s,
                          const sbx_event_t *ev)
{
        switch (ev->type) {
        case SBX_EV_SANDBOX_CREATED:
                set(&x->claim_id, sbx_event_str(ev, "claim_id"));
                set(&x->base_digest, sbx_event_str(ev, "template_digest"));
                x->changed |= SBX_PX_ENV;
                break;
        case SBX_EV_PROVISIONED:
                set(&x->runtime_instance,
                    sbx_event_str(ev, "runtime_instance"));
                x->startup_us = sbx_event_int(ev, "startup_us", 0);
                break;
        case SBX_EV_LEASE_GRANTED:
                lease_granted(x, s, ev);
                x->changed |= SBX_PX_LEASE;
                break;
        case SBX_EV_LEASE_RENEWED:
                x->lease_expires_at = s->lease_expires_at;
                /* fall through */
        case SBX_EV_EXEC_REQUESTED:
        case SBX_EV_EXEC_STARTED:
                x->heartbeat_at = ev->occurred_at;
                x->changed |= SBX_PX_LEASE;
                break;
        case SBX_EV_EXEC_FINISHED:
                x->heartbeat_at = ev->occurred_at;
                x->changed |= SBX_PX_LEASE;
                exec_finished(x, ev);
                break;
        case SBX_EV_LEASE_RELEASED:
        case SBX_EV_LEASE_EXPIRED:
        case SBX_EV_RECYCLE_STARTED:
        case SBX_EV_SANDBOX_FAILED:
        case SBX_EV_SANDBOX_LOST:
                lease_ended(x, ev);
                break;
        case SBX_EV_ENVIRONMENT_UPDATED:
                environment_updated(x, ev);
                x->changed |= SBX_PX_ENV;
                break;
        case SBX_EV_SNAPSHOT_TAKEN:
                x->changed |= SBX_PX_ENV;
                break;
        default:
                break;
        }
}

void sbx_pext_apply(sbx_pext_t *x, const sbx_state_t *s, const sbx_event_t *ev)
{
        x->changed = 0;
        switch (ev->type) {
        case SBX_EV_PLAN_PROPOSED:
                plan_proposed(x, ev);
                x->changed |= SBX_PX_PLAN;
                break;
        case SBX_EV_PLAN_APPROVED:
        case SBX_EV_PLAN_REJECTED:
                plan_decided(x, ev, ev->type == SBX_EV_PLAN_APPROVED);
                x->changed |= SBX_PX_PLAN;
                break;
        default:
                if (s->aggregate == SBX_AGG_SANDBOX)
                        apply_sandbox(x, s, ev);
                break;
        }
}
