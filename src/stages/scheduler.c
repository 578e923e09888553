/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scheduler's Kafka side: it remembers each claim's approved plan and the
 * nodes that refused it, folds node status, and decides for approved
 * claims of its partitions: ReuseChosen, Placed, or after the bounded
 * attempts (or 30 s without any feasible node) ClaimFailed. A claim left
 * PLACING for 60 s without a binding is handed back with PlacementFailed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/event.h"
#include "core/util.h"
#include "kafka/processor.h"
#include "stages/deps.h"
#include "stages/scheduler.h"

#define S(v) ((v) ? (v) : "")

static const char *jstr(const json_t *o, const char *k)
{
        const char *v = json_string_value(json_object_get(o, k));
        return v ? v : "";
}

#define NO_NODE_US    (30 * 1000000LL)
#define BIND_DEADLINE (60 * 1000000LL)
#define FORK_WAIT_US  (10 * 1000000LL) /* for a snapshot not heard of */

typedef struct memo_s {
        char *claim;
        json_t *plan;     /* PlanApproved payload, and the task's packages */
        json_t *packages; /* the task's packages (ClaimRequested) */
        json_t *refused;  /* node ids that refused */
        char *project, *user;
} memo_t;

typedef struct sched_s {
        sbx_nodes_t *nodes;
        /* snapshot id -> {node, tenant, session, user, project, class,
         * packages, from, at, clean} */
        json_t *snapshots;
        json_t *owner;  /* sandbox id -> {project, user} of its lease */
        json_t *resume; /* tenant/session -> {snapshot, sandbox}: level 2 */
        json_t *index;  /* claim id -> position in m */
        memo_t *m;
        size_t n, cap;
} sched_t;

static memo_t *memo(sched_t *s, const char *claim, int create)
{
        const json_t *at = json_object_get(s->index, claim);
        memo_t *m;
        if (at)
                return &s->m[json_integer_value(at)];
        if (!create)
                return NULL;
        if (s->n == s->cap) {
                s->cap = s->cap ? 2 * s->cap : 64;
                s->m   = sbx_realloc(s->m, s->cap * sizeof(*s->m));
        }
        m = &s->m[s->n];
        memset(m, 0, sizeof(*m));
        m->claim   = sbx_strdup(claim);
        m->refused = json_array();
        json_object_set_new(s->index, claim, json_integer((json_int_t)s->n++));
        return m;
}

static void memo_clear(memo_t *m)
{
        free(m->claim);
        free(m->project);
        free(m->user);
        json_decref(m->plan);
        json_decref(m->packages);
        json_decref(m->refused);
}

/* A claim that ended needs no memo: the last one takes its place. */
static void memo_drop(sched_t *s, const char *claim)
{
        const json_t *at = json_object_get(s->index, claim);
        size_t i;
        if (!at)
                return;
        i = (size_t)json_integer_value(at);
        json_object_del(s->index, claim);
        memo_clear(&s->m[i]);
        if (i != --s->n) {
                s->m[i] = s->m[s->n];
                json_object_set_new(s->index, s->m[i].claim,
                                    json_integer((json_int_t)i));
        }
}

static void *sched_init(const sbx_config_t *c,
                        sbx_proc_t *p,
                        char *e,
                        size_t es)
{
        sched_t *s = sbx_calloc(1, sizeof(*s));
        (void)c;
        (void)p;
        (void)e;
        (void)es;
        s->nodes     = sbx_nodes_new();
        s->snapshots = json_object();
        s->owner     = json_object();
        s->resume    = json_object();
        s->index     = json_object();
        return s;
}

static void sched_destroy(void *self)
{
        sched_t *s = self;
        size_t i;
        for (i = 0; i < s->n; i++)
                memo_clear(&s->m[i]);
        free(s->m);
        json_decref(s->snapshots);
        json_decref(s->owner);
        json_decref(s->resume);
        json_decref(s->index);
        sbx_nodes_destroy(s->nodes);
        free(s);
}

/* The key of claim or sandbox @p st's session in sched_t.resume. */
static const char *session_key(const sbx_state_t *st, char *buf, size_t n)
{
        return sbx_fmt(buf, n, "%s/%s", S(st->tenant_id), S(st->session_id));
}

/* Who a snapshot of sandbox @p st is for: its tenant, session, class and
 * packages, and the project and user of the lease that made it. */
static json_t *snapshot_entry(const sched_t *s,
                              const sbx_state_t *st,
                              int64_t at)
{
        const json_t *o = json_object_get(s->owner, st->id);
        return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:b}",
                         "node", S(st->node_id), "tenant", S(st->tenant_id),
                         "session", S(st->session_id), "user", jstr(o, "user"),
                         "project", jstr(o, "project"), "class",
                         S(st->resource_class), "packages", S(st->env_packages),
                         "from", st->id, "at", (json_int_t)at, "clean",
                         sbx_state_clean(st));
}

static void sched_observe(void *self,
                          const sbx_event_t *ev,
                          sbx_verdict_t v,
                          const sbx_state_t *st)
{
        sched_t *s = self;
        memo_t *m;
        const char *k;
        char key[300];
        json_t *e;
        if (v != SBX_FOLD_ACCEPTED || !st)
                return;
        switch (ev->type) {
        case SBX_EV_SNAPSHOT_TAKEN:
                /* a fork of it can only start where its layers are */
                if (!sbx_event_str(ev, "error") &&
                    sbx_event_str(ev, "snapshot_id"))
                        json_object_set_new(
                            s->snapshots, sbx_event_str(ev, "snapshot_id"),
                            snapshot_entry(s, st, ev->occurred_at));
                break;
        case SBX_EV_TAINTED:
                /* what it wrote before the violation was seen is suspect */
                json_object_foreach(s->snapshots, k, e)
                {
                        if (!strcmp(jstr(e, "from"), st->id))
                                json_object_set_new(e, "clean", json_false());
                }
                break;
        case SBX_EV_LEASE_GRANTED:
                m = st->lease_owner ? memo(s, st->lease_owner, 0) : NULL;
                if (m)
                        json_object_set_new(
                            s->owner, st->id,
                            json_pack("{s:s, s:s}", "project", S(m->project),
                                      "user", S(m->user)));
                break;
        case SBX_EV_RECYCLE_STARTED:
                if (sbx_streq(sbx_event_str(ev, "level"), "fork") &&
                    st->clean_snapshot)
                        json_object_set_new(
                            s->resume, session_key(st, key, sizeof(key)),
                            json_pack("{s:s, s:s}", "snapshot",
                                      st->clean_snapshot, "sandbox", st->id));
                break;
        case SBX_EV_TERMINATED:
                json_object_del(s->owner, st->id);
                break;
        case SBX_EV_CLAIM_REQUESTED:
                m = memo(s, ev->aggregate_id, 1);
                json_decref(m->packages);
                m->packages = json_deep_copy(json_object_get(
                    json_object_get(ev->payload, "task"), "packages"));
                free(m->project);
                free(m->user);
                m->project = sbx_strdup(S(sbx_event_str(ev, "project_id")));
                m->user    = sbx_strdup(S(sbx_event_str(ev, "user_id")));
                break;
        case SBX_EV_PLAN_APPROVED:
                m = memo(s, ev->aggregate_id, 1);
                json_decref(m->plan);
                m->plan = json_deep_copy(ev->payload);
                if (m->packages)
                        json_object_set(m->plan, "packages", m->packages);
                break;
        case SBX_EV_PLACEMENT_FAILED:
                if (!sbx_event_str(ev, "node_id"))
                        break;
                m = memo(s, ev->aggregate_id, 1);
                json_array_append_new(
                    m->refused, json_string(sbx_event_str(ev, "node_id")));
                break;
        default:
                break;
        }
        if (st->aggregate == SBX_AGG_CLAIM &&
            sbx_phase_terminal(SBX_AGG_CLAIM, st->phase))
                memo_drop(s, st->id);
}

static void sched_message(void *self,
                          sbx_proc_t *p,
                          const char *topic,
                          const void *k,
                          size_t kl,
                          const void *v,
                          size_t vl)
{
        sched_t *s = self;
        (void)k;
        (void)kl;
        if (!strcmp(topic, SBX_TOPIC_NODES))
                sbx_nodes_update(s->nodes, sbx_proc_codec(p), v, vl);
}

static sbx_event_t *claim_event(const sbx_state_t *c,
                                sbx_evtype_t t,
                                json_t *payload)
{
        sbx_event_t *ev = sbx_event_new(t, c->id, c->seq + 1, payload);
        sbx_event_set(&ev->tenant_id, c->tenant_id);
        sbx_event_set(&ev->session_id, c->session_id);
        sbx_event_set(&ev->correlation_id, c->id);
        return ev;
}

typedef struct reuse_s {
        sbx_nodes_t *nodes;
        const sbx_state_t *claim;
        const sbx_state_t *conflict; /* refused for its packages */
        const json_t *plan;
        const sbx_state_t *best;
        double score;
        char reason[1024], why_not[1200];
} reuse_t;

static void reuse_cb(const sbx_state_t *sb, void *opaque)
{
        reuse_t *r = opaque;
        char reason[1024];
        double sc;
        if (sb->aggregate != SBX_AGG_SANDBOX ||
            (sb->phase != SBX_SB_IDLE && sb->phase != SBX_SB_HIBERNATING) ||
            !r->claim->session_id || !sb->session_id ||
            strcmp(sb->session_id, r->claim->session_id))
                return;
        sc = sbx_reuse_check(
            sb, r->claim, r->plan,
            sbx_node_template_digest(
                sb->node_id ? sbx_nodes_get(r->nodes, sb->node_id) : NULL,
                sb->template_name ? sb->template_name : "host"),
            reason, sizeof(reason));
        if (sc < 0) {
                sbx_fmt(r->why_not, sizeof(r->why_not),
                        "reuse=false "
                        "sandbox=%s reason=%s",
                        sb->id, reason);
                if (!strncmp(reason, "dependency_conflict", 19))
                        r->conflict = sb;
                return;
        }
        if (!r->best || sc > r->score) {
                r->best  = sb;
                r->score = sc;
                sbx_fmt(r->reason, sizeof(r->reason), "%s", reason);
        }
}

static void append(sbx_proc_t *p, sbx_event_t *ev)
{
        char err[512];
        if (sbx_proc_append(p, ev, err, sizeof(err)))
                fprintf(stderr, "sbxd: scheduler: %s\n", err);
}

static void place(sched_t *s,
                  sbx_proc_t *p,
                  const sbx_state_t *c,
                  memo_t *m,
                  const json_t *plan,
                  const char *why_not,
                  int64_t now);

/*
 * A fork starts from a snapshot, on the node that holds its layers, for
 * the tenant that took it: never a reuse, never elsewhere. A snapshot
 * not heard of within FORK_WAIT_US fails the claim.
 */
static void place_fork(sched_t *s,
                       sbx_proc_t *p,
                       memo_t *m,
                       const sbx_state_t *c,
                       int64_t now)
{
        const json_t *snap = json_object_get(s->snapshots, c->fork_snapshot);
        const char *tenant = json_string_value(json_object_get(snap, "tenant"));
        char reason[300];
        json_t *plan;

        if (!snap || strcmp(tenant, c->tenant_id ? c->tenant_id : "")) {
                if (!snap && now - c->updated_at <= FORK_WAIT_US)
                        return; /* its SnapshotTaken may be on its way */
                sbx_fmt(reason, sizeof(reason),
                        "no snapshot %s of tenant %s to fork", c->fork_snapshot,
                        c->tenant_id ? c->tenant_id : "?");
                append(p, claim_event(c, SBX_EV_CLAIM_FAILED,
                                      json_pack("{s:s}", "reason", reason)));
                return;
        }
        plan = json_deep_copy(m->plan);
        json_object_set(plan, "node", json_object_get(snap, "node"));
        sbx_fmt(reason, sizeof(reason), "fork of %s, whose layers are on %s",
                c->fork_snapshot,
                json_string_value(json_object_get(snap, "node")));
        place(s, p, c, m, plan, reason, now);
        json_decref(plan);
}

/*
 * May claim @p c be restored from snapshot entry @p v? Of its tenant and
 * the plan's class, clean (taken from a sandbox neither tainted nor of
 * unknown pollution), on a node that still answers, and its packages
 * conflict with nothing the task needs.
 */
static int usable(const sched_t *s,
                  const sbx_state_t *c,
                  const memo_t *m,
                  const json_t *v)
{
        const sbx_node_t *n = sbx_nodes_get(s->nodes, jstr(v, "node"));
        char why[300];
        return v && !strcmp(S(c->tenant_id), jstr(v, "tenant")) &&
               !strcmp(jstr(m->plan, "resource_class"), jstr(v, "class")) &&
               json_is_true(json_object_get(v, "clean")) && n &&
               sbx_node_alive(n, sbx_now_us(), SBX_NODE_GRACE_US) &&
               !sbx_deps_conflict(jstr(v, "packages"),
                                  json_object_get(m->plan, "packages"), why,
                                  sizeof(why));
}

/* The newest usable snapshot of claim @p c's session (@p by_project 0),
 * or of its user and project (1). NULL: none. */
static const char *newest_snapshot(const sched_t *s,
                                   const sbx_state_t *c,
                                   const memo_t *m,
                                   int by_project)
{
        const json_t *best = NULL, *v;
        const char *id, *best_id = NULL;

        json_object_foreach(s->snapshots, id, v)
        {
                if ((by_project
                         ? strcmp(S(m->project), jstr(v, "project")) ||
                               strcmp(S(m->user), jstr(v, "user"))
                         : strcmp(S(c->session_id), jstr(v, "session"))) ||
                    !usable(s, c, m, v))
                        continue;
                if (!best ||
                    json_integer_value(json_object_get(v, "at")) >
                        json_integer_value(json_object_get(best, "at"))) {
                        best    = v;
                        best_id = id;
                }
        }
        return best_id;
}

/* ReuseChosen mode "fork": a new sandbox from snapshot @p snap. */
static void choose_fork(sched_t *s,
                        sbx_proc_t *p,
                        const sbx_state_t *c,
                        const char *snap,
                        double score,
                        const char *why)
{
        const json_t *v = json_object_get(s->snapshots, snap);
        char reason[1024], sb_id[64], uuid[37];
        sbx_fmt(reason, sizeof(reason),
                "%s; fork of %s, the snapshot of %s taken in session %s "
                "(packages: %s)",
                why, snap, jstr(v, "from"), jstr(v, "session"),
                *jstr(v, "packages") ? jstr(v, "packages") : "none");
        sbx_uuid(uuid);
        sbx_fmt(sb_id, sizeof(sb_id), "sb-%.12s", uuid);
        append(p, claim_event(
                      c, SBX_EV_REUSE_CHOSEN,
                      json_pack("{s:s, s:s, s:s, s:f, s:s, s:s}", "sandbox_id",
                                sb_id, "node_id", jstr(v, "node"), "mode",
                                "fork", "score", score, "reason", reason,
                                "snapshot_id", snap)));
}

/*
 * The session's sandbox has more of the task's packages in versions it
 * excludes than a venv should hide: never uninstall in place. Fork the
 * session's newest clean snapshot that conflicts with nothing the task
 * needs (a base taken before the install). 0: none.
 */
static int fork_clean(sched_t *s,
                      sbx_proc_t *p,
                      const sbx_state_t *c,
                      const memo_t *m,
                      const reuse_t *r)
{
        const char *snap = newest_snapshot(s, c, m, 0);
        char why[300], msg[400];
        if (!snap)
                return 0;
        sbx_deps_conflict(r->conflict->env_packages,
                          json_object_get(m->plan, "packages"), why,
                          sizeof(why));
        sbx_fmt(msg, sizeof(msg),
                "dependency_conflict in %s (%s): never uninstalled in place",
                r->conflict->id, why);
        choose_fork(s, p, c, snap, 0.5, msg);
        return 1;
}

/*
 * Same project re-entered, in a session with nothing to reuse: restore
 * the newest clean snapshot of the project, taken for the same user in
 * any session of theirs. Processes, /tmp and credentials are never
 * carried over; the dependencies and files the snapshot holds are.
 */
static int restore_project(sched_t *s,
                           sbx_proc_t *p,
                           const sbx_state_t *c,
                           const memo_t *m)
{
        const char *snap;
        char msg[300];
        if (!m->project || !*m->project ||
            !(snap = newest_snapshot(s, c, m, 1)))
                return 0;
        sbx_fmt(msg, sizeof(msg),
                "project_reentered: project %s of the same user, restored "
                "from its clean snapshot",
                m->project);
        choose_fork(s, p, c, snap, 0.6, msg);
        return 1;
}

/*
 * The session's sandbox was recycled at level 2 (fork): its next claim
 * with nothing to reuse is made from the clean snapshot it left.
 */
static int resume_session(sched_t *s,
                          sbx_proc_t *p,
                          const sbx_state_t *c,
                          const memo_t *m)
{
        char key[300], msg[300];
        const json_t *r =
            json_object_get(s->resume, session_key(c, key, sizeof(key)));
        const char *snap = jstr(r, "snapshot");
        if (!r || !usable(s, c, m, json_object_get(s->snapshots, snap)))
                return 0;
        sbx_fmt(msg, sizeof(msg),
                "the session's %s was recycled at level 2 (fork)",
                jstr(r, "sandbox"));
        choose_fork(s, p, c, snap, 0.7, msg);
        return 1;
}

static void sched_decide(void *self,
                         sbx_proc_t *p,
                         const sbx_state_t *c,
                         int64_t now)
{
        sched_t *s = self;
        memo_t *m;
        reuse_t r;
        char reason[600];

        if (c->aggregate != SBX_AGG_CLAIM)
                return;
        if (c->phase == SBX_CLAIM_PLACING) {
                if (now - c->updated_at > BIND_DEADLINE)
                        append(p,
                               claim_event(
                                   c, SBX_EV_PLACEMENT_FAILED,
                                   json_pack(
                                       "{s:s?, s:s?, s:s, s:i, s:b}", "node_id",
                                       c->node_id, "sandbox_id", c->sandbox_id,
                                       "reason", "no binding within 60 s",
                                       "attempt", c->attempts, "final",
                                       c->attempts >= SBX_SCHED_MAX_ATTEMPTS)));
                return;
        }
        if (c->phase != SBX_CLAIM_APPROVED || !(m = memo(s, c->id, 0)) ||
            !m->plan)
                return;
        if (c->attempts >= SBX_SCHED_MAX_ATTEMPTS) {
                sbx_fmt(reason, sizeof(reason),
                        "placement failed %d times; last: %s", c->attempts,
                        c->reason ? c->reason : "?");
                append(p, claim_event(c, SBX_EV_CLAIM_FAILED,
                                      json_pack("{s:s}", "reason", reason)));
                return;
        }
        if (c->fork_snapshot) {
                place_fork(s, p, m, c, now);
                return;
        }
        memset(&r, 0, sizeof(r));
        r.nodes = s->nodes;
        r.claim = c;
        r.plan  = m->plan;
        sbx_proc_foreach_state(p, reuse_cb, &r);
        if (!r.best && r.conflict && fork_clean(s, p, c, m, &r))
                return;
        if (r.best) {
                char why[300];
                /* a conflict the check let through is a venv's to hide */
                int venv =
                    sbx_deps_conflict(r.best->env_packages,
                                      json_object_get(m->plan, "packages"), why,
                                      sizeof(why)) > 0;
                append(p, claim_event(
                              c, SBX_EV_REUSE_CHOSEN,
                              json_pack("{s:s, s:s, s:s, s:f, s:s}",
                                        "sandbox_id", r.best->id, "node_id",
                                        r.best->node_id ? r.best->node_id : "",
                                        "mode", venv ? "venv" : "as_is",
                                        "score", r.score, "reason", r.reason)));
                return;
        }
        if (resume_session(s, p, c, m) || restore_project(s, p, c, m))
                return;
        place(s, p, c, m, m->plan, r.why_not, now);
}

/* Places claim @p c by @p plan on the best feasible node, saying
 * @p note (why not a reuse, or whose fork) along with the node's score. */
static void place(sched_t *s,
                  sbx_proc_t *p,
                  const sbx_state_t *c,
                  memo_t *m,
                  const json_t *plan,
                  const char *note,
                  int64_t now)
{
        sbx_placement_t pl;
        const char **refused;
        size_t i, nref = json_array_size(m->refused);
        char sb_id[64], uuid[37], reason[1600];

        refused = sbx_calloc(nref + 1, sizeof(*refused));
        for (i = 0; i < nref; i++)
                refused[i] = json_string_value(json_array_get(m->refused, i));
        if (sbx_place(s->nodes, plan,
                      (uint64_t)c->seq * 0x9e3779b97f4a7c15ULL ^
                          (uint64_t)c->created_at,
                      refused, nref, now, &pl)) {
                free(refused);
                if (now - c->updated_at > NO_NODE_US)
                        append(p, claim_event(
                                      c, SBX_EV_CLAIM_FAILED,
                                      json_pack("{s:s}", "reason", pl.reason)));
                return; /* wait for a node; the tick decides again */
        }
        free(refused);
        sbx_uuid(uuid);
        sbx_fmt(sb_id, sizeof(sb_id), "sb-%.12s", uuid);
        sbx_fmt(reason, sizeof(reason), "%s%s%s", pl.reason,
                note[0] ? "; " : "", note);
        ((sbx_node_t *)pl.node)->extra_cpu +=
            json_number_value(json_object_get(plan, "cpu"));
        ((sbx_node_t *)pl.node)->extra_mem +=
            json_integer_value(json_object_get(plan, "memory_mb"));
        ((sbx_node_t *)pl.node)->extra_n++;
        append(p, claim_event(c, SBX_EV_PLACED,
                              json_pack("{s:s, s:s, s:s, s:b, s:f, s:i, s:s}",
                                        "node_id", pl.node->id, "sandbox_id",
                                        sb_id, "pool", pl.pool, "warm", pl.warm,
                                        "score", pl.score, "candidates",
                                        pl.candidates, "reason", reason)));
}

static const char *const sched_topics[] = {NULL};

const sbx_stage_t sbx_stage_scheduler = {
    .name         = "scheduler",
    .group_topics = sched_topics,
    .wants_nodes  = 1,
    .decides      = 1,
    .tick_ms      = 1000,
    .init         = sched_init,
    .destroy      = sched_destroy,
    .observe      = sched_observe,
    .on_message   = sched_message,
    .decide       = sched_decide,
};
