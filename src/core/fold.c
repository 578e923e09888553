/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fold's implementation. sbx_fold() first decides (seq, transition,
 * fence) without touching the state, then applies the accepted event's
 * effects in one place per type. The lease version only ever grows: a
 * release clears the owner but keeps the version, so a token handed out
 * once is never valid again.
 */
#include "core/fold.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

static const char *const verdict_names[SBX_FOLD__CNT] = {
    "accepted",           "duplicate",   "stale_seq",      "seq_gap",
    "illegal_transition", "stale_lease", "wrong_aggregate"};

const char *sbx_verdict_name(sbx_verdict_t v)
{
        return (unsigned)v < SBX_FOLD__CNT ? verdict_names[v] : "?";
}

static uint64_t id_hash(const char *s)
{
        uint64_t h = sbx_fnv1a64(SBX_FNV1A64_INIT, s);
        return h ? h : 1;
}

sbx_state_t *sbx_state_new(sbx_aggregate_t aggregate, const char *id)
{
        sbx_state_t *s = sbx_calloc(1, sizeof(*s));
        s->aggregate   = aggregate;
        s->id          = sbx_strdup(id);
        return s;
}

#define STATE_STRINGS(X)                                                       \
        X(tenant_id)                                                           \
        X(session_id)                                                          \
        X(correlation_id)                                                      \
        X(lease_owner)                                                         \
        X(request_id)                                                          \
        X(user_id)                                                             \
        X(sandbox_id)                                                          \
        X(node_id)                                                             \
        X(resource_class) X(workspace_id) X(network_profile) X(origin) X(pool) \
            X(template_name) X(template_digest) X(runtime) X(env_fingerprint)  \
                X(last_snapshot) X(exec_id) X(recycle_level) X(taint_reason)   \
                    X(reason) X(fail_reason) X(env_packages)                   \
                        X(snapshot_pending) X(fork_snapshot) X(lost_reason)   \
                            X(clean_snapshot)

#define STATE_INTS(X)                                                          \
        X(created_at)                                                          \
        X(updated_at)                                                          \
        X(last_active_at)                                                      \
        X(lease_version)                                                       \
        X(lease_expires_at)                                                    \
        X(ttl_seconds)                                                         \
        X(lease_seconds)                                                       \
        X(memory_mb) X(n_execs) X(n_leases) X(n_reuses) X(n_snapshots) X(n_ooms)

void sbx_state_destroy(sbx_state_t *s)
{
        if (!s)
                return;
#define FREE_STR(f) free(s->f);
        STATE_STRINGS(FREE_STR)
#undef FREE_STR
        free(s->id);
        free(s);
}

static void set(char **dst, const char *v)
{
        if (v == *dst)
                return;
        free(*dst);
        *dst = v ? sbx_strdup(v) : NULL;
}

/* "name==version,..." of a manifest's packages (the reuse check's
 * "existing"); names and versions are plain tokens by the manifest's
 * making, and the whole is bounded. */
static void set_packages(sbx_state_t *s, const json_t *caps)
{
        char buf[4096];
        size_t i, n = 0;
        const json_t *c;

        buf[0] = '\0';
        json_array_foreach(caps, i, c)
        {
                const char *nm = json_string_value(json_object_get(c, "name"));
                const char *v =
                    json_string_value(json_object_get(c, "version"));
                int w = snprintf(buf + n, sizeof(buf) - n, "%s%s==%s",
                                 n ? "," : "", nm ? nm : "", v ? v : "");
                if (w < 0 || (size_t)w >= sizeof(buf) - n) {
                        buf[n] = '\0';
                        break;
                }
                n += (size_t)w;
        }
        set(&s->env_packages, n ? buf : NULL);
}

static int seen(const sbx_state_t *s, uint64_t h)
{
        int i;
        for (i = 0; i < SBX_FOLD_RECENT; i++)
                if (s->recent[i] == h)
                        return 1;
        return 0;
}

static sbx_verdict_t decide(const sbx_state_t *s,
                            const sbx_event_t *ev,
                            int *ret_next)
{
        int next;

        if (ev->aggregate != s->aggregate ||
            sbx_evtype_aggregate(ev->type) != s->aggregate)
                return SBX_FOLD_WRONG_AGGREGATE;
        if (ev->seq <= s->seq)
                return seen(s, id_hash(ev->event_id)) ? SBX_FOLD_DUPLICATE
                                                      : SBX_FOLD_STALE_SEQ;
        if (ev->seq > s->seq + 1)
                return SBX_FOLD_SEQ_GAP;
        next = sbx_fsm_next(
            s->aggregate, s->phase, ev->type,
            ev->type == SBX_EV_PLACEMENT_FAILED && sbx_event_bool(ev, "final"));
        if (next < 0)
                return SBX_FOLD_ILLEGAL_TRANSITION;
        if (sbx_evtype_fenced(ev->type) &&
            (s->lease_version == 0 || ev->lease_version != s->lease_version))
                return SBX_FOLD_STALE_LEASE;
        if (ev->type == SBX_EV_LEASE_GRANTED) {
                int64_t v = sbx_event_int(ev, "lease_version", -1);
                if (v != s->lease_version + 1 ||
                    (ev->lease_version != SBX_NO_LEASE &&
                     ev->lease_version != v))
                        return SBX_FOLD_STALE_LEASE;
        }
        *ret_next = next;
        return SBX_FOLD_ACCEPTED;
}

static void apply_claim(sbx_state_t *s, const sbx_event_t *ev)
{
        switch (ev->type) {
        case SBX_EV_CLAIM_REQUESTED:
                set(&s->request_id, sbx_event_str(ev, "request_id"));
                set(&s->user_id, sbx_event_str(ev, "user_id"));
                set(&s->workspace_id, sbx_event_str(ev, "workspace_id"));
                set(&s->network_profile, sbx_event_str(ev, "network_profile"));
                set(&s->fork_snapshot, sbx_event_str(ev, "snapshot_id"));
                s->ttl_seconds   = sbx_event_int(ev, "ttl_seconds", 0);
                s->lease_seconds = sbx_event_int(ev, "lease_seconds", 0);
                break;
        case SBX_EV_PLAN_APPROVED:
                s->ttl_seconds =
                    sbx_event_int(ev, "ttl_seconds", s->ttl_seconds);
                set(&s->resource_class, sbx_event_str(ev, "resource_class"));
                set(&s->network_profile, sbx_event_str(ev, "network_profile"));
                set(&s->template_name, sbx_event_str(ev, "template"));
                set(&s->runtime, sbx_event_str(ev, "runtime"));
                s->cpu       = sbx_event_num(ev, "cpu", 0);
                s->memory_mb = sbx_event_int(ev, "memory_mb", 0);
                break;
        case SBX_EV_PLACED:
        case SBX_EV_REUSE_CHOSEN:
                set(&s->node_id, sbx_event_str(ev, "node_id"));
                set(&s->sandbox_id, sbx_event_str(ev, "sandbox_id"));
                if (sbx_event_str(ev, "snapshot_id")) /* a fork */
                        set(&s->fork_snapshot,
                            sbx_event_str(ev, "snapshot_id"));
                s->attempts++;
                break;
        case SBX_EV_CLAIM_BOUND:
                set(&s->node_id, sbx_event_str(ev, "node_id"));
                set(&s->sandbox_id, sbx_event_str(ev, "sandbox_id"));
                s->lease_version    = sbx_event_int(ev, "lease_version", 0);
                s->lease_expires_at = sbx_event_int(ev, "lease_expires_at", 0);
                break;
        case SBX_EV_PLAN_REJECTED:
                set(&s->reason,
                    json_string_value(json_array_get(
                        json_object_get(ev->payload, "reasons"), 0)));
                break;
        case SBX_EV_PLACEMENT_FAILED:
                set(&s->reason, sbx_event_str(ev, "reason"));
                if (sbx_event_str(ev, "snapshot_id")) /* restore from it */
                        set(&s->fork_snapshot,
                            sbx_event_str(ev, "snapshot_id"));
                break;
        case SBX_EV_CLAIM_CANCELLED:
        case SBX_EV_CLAIM_FAILED:
        case SBX_EV_CLAIM_RELEASED:
                set(&s->reason, sbx_event_str(ev, "reason"));
                break;
        default:
                break;
        }
}

int sbx_state_clean(const sbx_state_t *s)
{
        return !s->tainted && s->dirty_level < 3;
}

static void apply_sandbox(sbx_state_t *s, const sbx_event_t *ev)
{
        const json_t *j;
        switch (ev->type) {
        case SBX_EV_SANDBOX_CREATED:
                set(&s->origin, sbx_event_str(ev, "origin"));
                set(&s->node_id, sbx_event_str(ev, "node_id"));
                set(&s->pool, sbx_event_str(ev, "pool"));
                set(&s->resource_class, sbx_event_str(ev, "resource_class"));
                set(&s->template_name, sbx_event_str(ev, "template"));
                set(&s->template_digest, sbx_event_str(ev, "template_digest"));
                set(&s->runtime, sbx_event_str(ev, "runtime"));
                set(&s->network_profile, sbx_event_str(ev, "network_profile"));
                set(&s->last_snapshot, sbx_event_str(ev, "snapshot_id"));
                set(&s->fork_snapshot, sbx_event_str(ev, "snapshot_id"));
                set(&s->clean_snapshot, sbx_event_str(ev, "snapshot_id"));
                s->cpu       = sbx_event_num(ev, "cpu", 0);
                s->memory_mb = sbx_event_int(ev, "memory_mb", 0);
                break;
        case SBX_EV_LEASE_GRANTED:
                /* A warm pool sandbox is made for no one; its first lease
                 * gives it a tenant and a session for the rest of its
                 * life. */
                if (!s->tenant_id || !*s->tenant_id)
                        set(&s->tenant_id, ev->tenant_id);
                if (!s->session_id || !*s->session_id)
                        set(&s->session_id, ev->session_id);
                set(&s->lease_owner, sbx_event_str(ev, "owner"));
                s->lease_version    = sbx_event_int(ev, "lease_version", 0);
                s->lease_expires_at = sbx_event_int(ev, "expires_at", 0);
                s->n_leases++;
                if (sbx_event_bool(ev, "reuse"))
                        s->n_reuses++;
                s->last_active_at = ev->occurred_at;
                break;
        case SBX_EV_LEASE_RENEWED:
                s->lease_expires_at = sbx_event_int(ev, "expires_at", 0);
                break;
        case SBX_EV_EXEC_REQUESTED:
                set(&s->exec_id, sbx_event_str(ev, "exec_id"));
                s->n_execs++;
                s->last_active_at = ev->occurred_at;
                break;
        case SBX_EV_EXEC_FINISHED:
                set(&s->exec_id, NULL);
                j = json_object_get(ev->payload, "usage");
                if (json_is_true(json_object_get(j, "oom_killed")))
                        s->n_ooms++;
                s->last_active_at = ev->occurred_at;
                break;
        case SBX_EV_ENVIRONMENT_UPDATED:
                j = json_object_get(ev->payload, "manifest");
                set(&s->env_fingerprint,
                    json_string_value(json_object_get(j, "fingerprint")));
                s->dirty_level =
                    (int)json_integer_value(json_object_get(j, "dirty_level"));
                set_packages(s, json_object_get(j, "installed_capabilities"));
                break;
        case SBX_EV_LEASE_RELEASED:
        case SBX_EV_LEASE_EXPIRED:
                set(&s->lease_owner, NULL);
                set(&s->exec_id, NULL);
                s->lease_expires_at = 0;
                s->last_active_at   = ev->occurred_at;
                break;
        case SBX_EV_SNAPSHOT_REQUESTED:
                set(&s->snapshot_pending, sbx_event_str(ev, "request_id"));
                break;
        case SBX_EV_SNAPSHOT_TAKEN:
                set(&s->snapshot_pending, NULL);
                if (sbx_event_str(ev, "error"))
                        break; /* asked for, and failed */
                set(&s->last_snapshot, sbx_event_str(ev, "snapshot_id"));
                if (sbx_state_clean(s))
                        set(&s->clean_snapshot,
                            sbx_event_str(ev, "snapshot_id"));
                s->n_snapshots++;
                break;
        case SBX_EV_RECYCLE_STARTED:
                set(&s->recycle_level, sbx_event_str(ev, "level"));
                set(&s->reason, sbx_event_str(ev, "reason"));
                set(&s->lease_owner, NULL);
                break;
        case SBX_EV_SANDBOX_FAILED:
        case SBX_EV_SANDBOX_LOST:
                set(&s->reason, sbx_event_str(ev, "reason"));
                set(&s->fail_reason, sbx_event_str(ev, "reason"));
                if (ev->type == SBX_EV_SANDBOX_LOST)
                        set(&s->lost_reason, sbx_event_str(ev, "reason"));
                set(&s->lease_owner, NULL);
                break;
        case SBX_EV_TAINTED:
                /* what was taken before the violation was seen is suspect */
                set(&s->clean_snapshot, NULL);
                s->tainted = 1;
                set(&s->taint_reason, sbx_event_str(ev, "reason"));
                break;
        default:
                break;
        }
}

sbx_verdict_t sbx_fold(sbx_state_t *s, const sbx_event_t *ev)
{
        int next        = 0;
        sbx_verdict_t v = decide(s, ev, &next);

        if (v != SBX_FOLD_ACCEPTED)
                return v;
        if (s->seq == 0) {
                set(&s->tenant_id, ev->tenant_id);
                set(&s->session_id, ev->session_id);
                set(&s->correlation_id, ev->correlation_id);
                s->created_at = ev->occurred_at;
        }
        s->phase = next;
        s->seq   = ev->seq;
        memmove(&s->recent[1], &s->recent[0],
                (SBX_FOLD_RECENT - 1) * sizeof(s->recent[0]));
        s->recent[0]  = id_hash(ev->event_id);
        s->updated_at = ev->occurred_at;
        if (s->aggregate == SBX_AGG_CLAIM)
                apply_claim(s, ev);
        else if (s->aggregate == SBX_AGG_SANDBOX)
                apply_sandbox(s, ev);
        else
                set(&s->reason, "rejected");
        return SBX_FOLD_ACCEPTED;
}

json_t *sbx_state_to_json(const sbx_state_t *s)
{
        json_t *j = json_object(), *recent = json_array();
        int i;

        json_object_set_new(j, "aggregate",
                            json_string(sbx_aggregate_name(s->aggregate)));
        json_object_set_new(j, "id", json_string(s->id));
        json_object_set_new(
            j, "phase", json_string(sbx_phase_name(s->aggregate, s->phase)));
        json_object_set_new(j, "phase_no", json_integer(s->phase));
        json_object_set_new(j, "seq", json_integer(s->seq));
        for (i = 0; i < SBX_FOLD_RECENT; i++) {
                char h[17];
                sbx_fmt(h, sizeof(h), "%016llx",
                        (unsigned long long)s->recent[i]);
                json_array_append_new(recent, json_string(h));
        }
        json_object_set_new(j, "recent", recent);
#define PUT_STR(f)                                                             \
        json_object_set_new(j, #f, s->f ? json_string(s->f) : json_null());
        STATE_STRINGS(PUT_STR)
#undef PUT_STR
#define PUT_INT(f) json_object_set_new(j, #f, json_integer(s->f));
        STATE_INTS(PUT_INT)
#undef PUT_INT
        json_object_set_new(j, "attempts", json_integer(s->attempts));
        json_object_set_new(j, "tainted", json_boolean(s->tainted));
        json_object_set_new(j, "dirty_level", json_integer(s->dirty_level));
        json_object_set_new(j, "cpu", json_real(s->cpu));
        return j;
}

sbx_state_t *sbx_state_from_json(const json_t *j)
{
        const char *agg = json_string_value(json_object_get(j, "aggregate"));
        const char *id  = json_string_value(json_object_get(j, "id"));
        const json_t *recent = json_object_get(j, "recent");
        sbx_state_t *s;
        int a, i;

        a = agg ? sbx_aggregate_by_name(agg) : -1;
        if (a < 0 || !id || json_array_size(recent) != SBX_FOLD_RECENT)
                return NULL;
        s        = sbx_state_new((sbx_aggregate_t)a, id);
        s->phase = (int)json_integer_value(json_object_get(j, "phase_no"));
        if (s->phase < 0 || s->phase >= sbx_phase_count(s->aggregate)) {
                sbx_state_destroy(s);
                return NULL;
        }
        s->seq = json_integer_value(json_object_get(j, "seq"));
        for (i = 0; i < SBX_FOLD_RECENT; i++) {
                const char *h =
                    json_string_value(json_array_get(recent, (size_t)i));
                s->recent[i] = h ? strtoull(h, NULL, 16) : 0;
        }
#define GET_STR(f) set(&s->f, json_string_value(json_object_get(j, #f)));
        STATE_STRINGS(GET_STR)
#undef GET_STR
#define GET_INT(f) s->f = json_integer_value(json_object_get(j, #f));
        STATE_INTS(GET_INT)
#undef GET_INT
        s->attempts = (int)json_integer_value(json_object_get(j, "attempts"));
        s->tainted  = json_is_true(json_object_get(j, "tainted"));
        s->dirty_level =
            (int)json_integer_value(json_object_get(j, "dirty_level"));
        s->cpu = json_number_value(json_object_get(j, "cpu"));
        return s;
}
