/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The guard's decisions (rules in guard.h). It keeps one small record per
 * live claim (tenant, seq, phase, task risk, what it commits) in a hash
 * table, and per tenant the sum of what its live claims commit, CPUs in
 * millicores so sums never drift. Invariant: a tenant's usage is exactly
 * the sum of its counted claims; a claim leaves the table when it reaches
 * a terminal phase. Decisions depend only on the policy, the events
 * observed and the arguments, never on a clock.
 */
#include "stages/guard/guard.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

#define RISK_UNSEEN   (-1) /* no ClaimRequested observed */
#define RISK_INVALID  (-2) /* the task's risk is not a level */
#define MAX_MEMORY_MB (INT64_C(1) << 40)

typedef struct gclaim_s {
        struct gclaim_s *next;
        char *id;
        const sbx_policy_tenant_t *tenant; /* NULL: not in the policy */
        int64_t seq;
        int phase;
        int risk;
        int counted;
        int64_t cpu_m, memory_mb;
} gclaim_t;

typedef struct usage_s {
        int64_t cpu_m, memory_mb, n;
} usage_t;

struct sbx_guard_s {
        const sbx_policy_t *policy;
        gclaim_t **buckets;
        size_t nbuckets, nclaims;
        usage_t *usage; /* by tenant index */
};

/* What a plan asks for, read defensively from the untrusted intent. */
typedef struct ask_s {
        double cpu;
        int64_t memory_mb, disk_gb, ttl;
        int browser, gpu;
        const char *workload, *hint, *template_name, *runtime, *network;
} ask_t;

static uint64_t hash(const char *s)
{
        return sbx_fnv1a64(SBX_FNV1A64_INIT, s);
}

static int64_t millis(double cpu)
{
        return (int64_t)llround(cpu * 1000.0);
}

sbx_guard_t *sbx_guard_new(const sbx_policy_t *policy)
{
        sbx_guard_t *g = sbx_calloc(1, sizeof(*g));
        g->policy      = policy;
        g->nbuckets    = 64;
        g->buckets     = sbx_calloc(g->nbuckets, sizeof(*g->buckets));
        g->usage =
            sbx_calloc(sbx_policy_tenant_count(policy) + 1, sizeof(*g->usage));
        return g;
}

void sbx_guard_destroy(sbx_guard_t *g)
{
        size_t i;
        if (!g)
                return;
        for (i = 0; g->buckets && i < g->nbuckets; i++)
                while (g->buckets[i]) {
                        gclaim_t *c   = g->buckets[i];
                        g->buckets[i] = c->next;
                        free(c->id);
                        free(c);
                }
        free(g->buckets);
        free(g->usage);
        free(g);
}

static gclaim_t **slot(const sbx_guard_t *g, const char *id)
{
        gclaim_t **p = &g->buckets[hash(id) & (g->nbuckets - 1)];
        while (*p && strcmp((*p)->id, id))
                p = &(*p)->next;
        return p;
}

static gclaim_t *claim_add(sbx_guard_t *g,
                           const char *id,
                           const sbx_policy_tenant_t *tenant)
{
        gclaim_t *c = sbx_calloc(1, sizeof(*c)), **p;
        size_t i;

        if (g->nclaims >= g->nbuckets) {
                gclaim_t **old = g->buckets;
                size_t nold    = g->nbuckets;
                g->nbuckets *= 2;
                g->buckets = sbx_calloc(g->nbuckets, sizeof(*g->buckets));
                for (i = 0; i < nold; i++)
                        while (old[i]) {
                                gclaim_t *m = old[i];
                                old[i]      = m->next;
                                p           = &g->buckets[hash(m->id) &
                                                (g->nbuckets - 1)];
                                m->next     = *p;
                                *p          = m;
                        }
                free(old);
        }
        c->id     = sbx_strdup(id);
        c->tenant = tenant;
        c->risk   = RISK_UNSEEN;
        p         = &g->buckets[hash(id) & (g->nbuckets - 1)];
        c->next   = *p;
        *p        = c;
        g->nclaims++;
        return c;
}

static void uncommit(sbx_guard_t *g, gclaim_t *c)
{
        usage_t *u;
        if (!c->counted || !c->tenant)
                return;
        u = &g->usage[c->tenant->index];
        u->cpu_m -= c->cpu_m;
        u->memory_mb -= c->memory_mb;
        u->n--;
        c->counted = 0;
}

static void commit(sbx_guard_t *g,
                   gclaim_t *c,
                   int64_t cpu_m,
                   int64_t memory_mb)
{
        usage_t *u;
        uncommit(g, c);
        if (!c->tenant)
                return;
        u            = &g->usage[c->tenant->index];
        c->cpu_m     = cpu_m;
        c->memory_mb = memory_mb;
        u->cpu_m += cpu_m;
        u->memory_mb += memory_mb;
        u->n++;
        c->counted = 1;
}

static void claim_remove(sbx_guard_t *g, gclaim_t **p)
{
        gclaim_t *c = *p;
        uncommit(g, c);
        *p = c->next;
        free(c->id);
        free(c);
        g->nclaims--;
}

void sbx_guard_forget(sbx_guard_t *g, const char *claim_id)
{
        gclaim_t **p = slot(g, claim_id);
        if (*p)
                claim_remove(g, p);
}

void sbx_guard_observe(sbx_guard_t *g, const sbx_event_t *ev)
{
        gclaim_t **p, *c;
        const char *risk;
        int next;

        if (ev->aggregate != SBX_AGG_CLAIM)
                return;
        p = slot(g, ev->aggregate_id);
        if (!*p) {
                if (ev->type != SBX_EV_CLAIM_REQUESTED || ev->seq != 1)
                        return;
                claim_add(g, ev->aggregate_id,
                          sbx_policy_tenant(g->policy, ev->tenant_id));
                p = slot(g, ev->aggregate_id);
        }
        c = *p;
        if (ev->seq != c->seq + 1)
                return;
        next = sbx_fsm_next(
            SBX_AGG_CLAIM, c->phase, ev->type,
            ev->type == SBX_EV_PLACEMENT_FAILED && sbx_event_bool(ev, "final"));
        if (next < 0)
                return;
        c->seq   = ev->seq;
        c->phase = next;
        if (ev->type == SBX_EV_CLAIM_REQUESTED) {
                risk    = json_string_value(json_object_get(
                       json_object_get(ev->payload, "task"), "risk"));
                c->risk = sbx_risk_by_name(risk ? risk : "medium");
                if (c->risk < 0)
                        c->risk = RISK_INVALID;
        } else if (ev->type == SBX_EV_PLAN_APPROVED) {
                double cpu  = sbx_event_num(ev, "cpu", 0);
                int64_t mem = sbx_event_int(ev, "memory_mb", 0);
                /* Bounded, so no event in the log can overflow a sum. */
                commit(
                    g, c, isfinite(cpu) && cpu > 0 ? millis(fmin(cpu, 1e6)) : 0,
                    mem > 0 ? (mem < MAX_MEMORY_MB ? mem : MAX_MEMORY_MB) : 0);
        }
        if (sbx_phase_terminal(SBX_AGG_CLAIM, next))
                claim_remove(g, p);
}

sbx_err_t sbx_guard_usage(const sbx_guard_t *g,
                          const char *tenant,
                          sbx_guard_usage_t *ret_usage)
{
        const sbx_policy_tenant_t *t = sbx_policy_tenant(g->policy, tenant);
        const usage_t *u;

        if (!t)
                return SBX_ERR_NOENT;
        u                    = &g->usage[t->index];
        ret_usage->cpu       = (double)u->cpu_m / 1000.0;
        ret_usage->memory_mb = u->memory_mb;
        ret_usage->sandboxes = u->n;
        return SBX_OK;
}

static void reason(json_t *reasons, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Appends one human-readable sentence to @reasons, bounded, and with
 * anything but printable ASCII (say, a UTF-8 sequence cut by "%.64s")
 * replaced by '?': a reason is never lost, since a plan is rejected
 * exactly when its rejections are not empty.
 */
static void reason(json_t *reasons, const char *fmt, ...)
{
        char buf[512], *s;
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        for (s = buf; *s; s++)
                if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
                        *s = '?';
        sbx_assert(json_array_append_new(reasons, json_string(buf)) == 0);
}

static const char *intent_str(const json_t *intent,
                              const char *field,
                              const char *fallback)
{
        const char *s = json_string_value(json_object_get(intent, field));
        return s ? s : fallback;
}

/* Reads the intent; a negative or non-finite size counts as no need. */
static void read_ask(const json_t *intent, ask_t *a, json_t *notes)
{
        const json_t *v;

        v      = json_object_get(intent, "cpu");
        a->cpu = json_is_number(v) ? json_number_value(v) : 0;
        if (!isfinite(a->cpu) || a->cpu < 0) {
                reason(notes, "intent cpu %g is not a size; ignored.", a->cpu);
                a->cpu = 0;
        }
        a->memory_mb = json_integer_value(json_object_get(intent, "memory_mb"));
        a->disk_gb   = json_integer_value(json_object_get(intent, "disk_gb"));
        if (a->memory_mb < 0 || a->disk_gb < 0) {
                reason(notes,
                       "intent memory %lld MB / disk %lld GB is not a "
                       "size; ignored.",
                       (long long)a->memory_mb, (long long)a->disk_gb);
                a->memory_mb = a->memory_mb < 0 ? 0 : a->memory_mb;
                a->disk_gb   = a->disk_gb < 0 ? 0 : a->disk_gb;
        }
        a->ttl     = json_integer_value(json_object_get(intent, "ttl_seconds"));
        a->browser = json_is_true(json_object_get(intent, "requires_browser"));
        a->gpu     = json_is_true(json_object_get(intent, "requires_gpu"));
        a->workload      = intent_str(intent, "workload", "");
        a->hint          = intent_str(intent, "resource_class", NULL);
        a->template_name = intent_str(intent, "template", "host");
        a->runtime       = intent_str(intent, "runtime", "runc");
        a->network       = intent_str(intent, "network_profile", "none");
}

static int same_size(const sbx_policy_class_t *a, const sbx_policy_class_t *b)
{
        return a->cpu == b->cpu && a->memory_mb == b->memory_mb &&
               a->disk_gb == b->disk_gb;
}

static int covers(const sbx_policy_class_t *k, const ask_t *a)
{
        return k->cpu >= a->cpu && k->memory_mb >= a->memory_mb &&
               k->disk_gb >= a->disk_gb;
}

static int eligible(const sbx_policy_class_t *k, const ask_t *a)
{
        return (a->gpu ? k->gpus > 0 : k->gpus == 0) &&
               (!a->browser || k->browser);
}

/*
 * The smallest eligible class of @t covering the ask, else the largest
 * eligible one (*ret_clamped). Among classes of that same size, the one
 * the planner named wins, then one listing the workload, then size order
 * (non-browser first). NULL if no class of @t is eligible.
 */
static const sbx_policy_class_t *pick_class(const sbx_policy_tenant_t *t,
                                            const ask_t *a,
                                            int *ret_clamped)
{
        const sbx_policy_class_t *target = NULL, *best = NULL;
        size_t i;
        int score, best_score = -1;

        *ret_clamped = 0;
        for (i = 0; i < t->nclasses; i++) {
                if (!eligible(t->classes[i], a))
                        continue;
                target = t->classes[i];
                if (covers(target, a))
                        break;
        }
        if (!target)
                return NULL;
        *ret_clamped = i == t->nclasses;
        for (i = 0; i < t->nclasses; i++) {
                const sbx_policy_class_t *k = t->classes[i];
                if (!eligible(k, a) || !same_size(k, target))
                        continue;
                score = (a->hint && !strcmp(a->hint, k->name)) * 2 +
                        sbx_policy_list_has(&k->workloads, a->workload);
                if (score > best_score)
                        best = k, best_score = score;
        }
        return best;
}

static void no_class(const sbx_policy_tenant_t *t,
                     const ask_t *a,
                     json_t *rejects)
{
        if (a->gpu)
                reason(rejects,
                       "a GPU is required, but tenant %s may use no "
                       "class with GPUs.",
                       t->id);
        else if (a->browser)
                reason(rejects,
                       "a browser is required, but tenant %s may "
                       "use no browser class.",
                       t->id);
        else
                reason(rejects,
                       "tenant %s may use only GPU classes, and the "
                       "plan needs no GPU.",
                       t->id);
}

static void check_network(const sbx_policy_t *policy,
                          const sbx_policy_tenant_t *t,
                          sbx_risk_t risk,
                          const char *profile,
                          json_t *rejects)
{
        const sbx_policy_risk_t *rk = sbx_policy_risk(policy, risk);

        if (!sbx_policy_network_known(policy, profile))
                reason(rejects, "network profile '%.64s' is unknown.", profile);
        else if (!sbx_policy_tenant_allows_network(t, profile))
                reason(rejects,
                       "network profile %s is not allowed for "
                       "tenant %s.",
                       profile, t->id);
        else if (rk->network_profiles.n &&
                 !sbx_policy_list_has(&rk->network_profiles, profile))
                reason(rejects,
                       "network profile %s is not allowed at risk "
                       "%s.",
                       profile, sbx_risk_name(risk));
}

/*
 * Quota: would this approval take tenant @t past what it may commit? A
 * real platform might queue the claim until commitment frees up; sbx
 * rejects, so the client learns why at once and decides whether to retry.
 */
static void check_quota(const sbx_guard_t *g,
                        const sbx_policy_tenant_t *t,
                        const gclaim_t *c,
                        const sbx_policy_class_t *k,
                        json_t *rejects)
{
        usage_t u      = g->usage[t->index];
        int64_t need_m = millis(k->cpu), max_m = millis(t->max_cpu);

        if (c && c->counted) {
                u.cpu_m -= c->cpu_m;
                u.memory_mb -= c->memory_mb;
                u.n--;
        }
        if (u.n + 1 > t->max_sandboxes)
                reason(rejects,
                       "quota: tenant %s already has %lld of %lld "
                       "sandboxes.",
                       t->id, (long long)u.n, (long long)t->max_sandboxes);
        if (u.cpu_m + need_m > max_m)
                reason(rejects,
                       "quota: tenant %s has %g of %g CPUs "
                       "committed; %s needs %g more.",
                       t->id, (double)u.cpu_m / 1000.0, t->max_cpu, k->name,
                       k->cpu);
        if (u.memory_mb + k->memory_mb > t->max_memory_mb)
                reason(rejects,
                       "quota: tenant %s has %lld of %lld MB "
                       "committed; %s needs %lld more.",
                       t->id, (long long)u.memory_mb,
                       (long long)t->max_memory_mb, k->name,
                       (long long)k->memory_mb);
}

static void explain_class(const sbx_policy_tenant_t *t,
                          const sbx_policy_class_t *k,
                          const ask_t *a,
                          int clamped,
                          json_t *notes)
{
        if (clamped)
                reason(notes,
                       "asked %g CPU / %lld MB / %lld GB; clamped to "
                       "%s %g CPU / %lld MB / %lld GB, the largest "
                       "class tenant %s may use.",
                       a->cpu, (long long)a->memory_mb, (long long)a->disk_gb,
                       k->name, k->cpu, (long long)k->memory_mb,
                       (long long)k->disk_gb, t->id);
        else
                reason(notes,
                       "%s (%g CPU / %lld MB / %lld GB) is the "
                       "smallest class of tenant %s covering %g CPU / "
                       "%lld MB / %lld GB%s.",
                       k->name, k->cpu, (long long)k->memory_mb,
                       (long long)k->disk_gb, t->id, a->cpu,
                       (long long)a->memory_mb, (long long)a->disk_gb,
                       a->browser ? " with a browser" : "");
        if (a->hint && strcmp(a->hint, k->name))
                reason(notes,
                       "the planner suggested %.64s%s; the guard sizes "
                       "by the intent's numbers.",
                       a->hint,
                       sbx_policy_tenant_allows_class(t, a->hint)
                           ? ""
                           : ", which the tenant may not use");
}

/* The tenant, risk and class checks; fills *ret_class and *ret_risk. */
static void check_plan(const sbx_policy_tenant_t *t,
                       const gclaim_t *c,
                       const ask_t *a,
                       const sbx_policy_class_t **ret_class,
                       int *ret_clamped,
                       sbx_risk_t *ret_risk,
                       json_t *notes,
                       json_t *rejects)
{
        int risk = c ? c->risk : RISK_UNSEEN;

        if (risk < 0) {
                reason(notes, "%s; it is taken as high.",
                       risk == RISK_UNSEEN
                           ? "the guard has not seen this claim's task risk"
                           : "the task's risk is not low, medium or high");
                risk = SBX_RISK_HIGH;
        }
        *ret_risk = (sbx_risk_t)risk;
        if (risk > (int)t->max_risk)
                reason(rejects, "risk %s exceeds tenant %s's max_risk %s.",
                       sbx_risk_name((sbx_risk_t)risk), t->id,
                       sbx_risk_name(t->max_risk));
        *ret_class = pick_class(t, a, ret_clamped);
        if (!*ret_class)
                no_class(t, a, rejects);
        else
                explain_class(t, *ret_class, a, *ret_clamped, notes);
}

static sbx_event_t *envelope(sbx_evtype_t type,
                             json_t *payload,
                             const sbx_event_t *plan,
                             const sbx_state_t *claim,
                             int64_t next_seq,
                             const char *producer)
{
        sbx_event_t *ev = sbx_event_new(type, claim->id, next_seq, payload);

        sbx_event_set(&ev->producer, producer ? producer : "guard");
        sbx_event_set(&ev->tenant_id,
                      claim->tenant_id ? claim->tenant_id : plan->tenant_id);
        sbx_event_set(&ev->session_id,
                      claim->session_id ? claim->session_id : plan->session_id);
        sbx_event_set(&ev->correlation_id, claim->correlation_id
                                               ? claim->correlation_id
                                               : plan->correlation_id);
        sbx_event_set(&ev->causation_id, plan->event_id);
        return ev;
}

sbx_event_t *sbx_guard_decide(sbx_guard_t *g,
                              const sbx_event_t *plan_proposed,
                              const sbx_state_t *claim,
                              int64_t next_seq,
                              const char *producer)
{
        const json_t *intent =
            json_object_get(plan_proposed->payload, "intent");
        json_t *notes = json_array(), *rejects = json_array(), *payload;
        const sbx_policy_tenant_t *t;
        const sbx_policy_class_t *k = NULL;
        const char *network, *tmpl, *runtime;
        const sbx_policy_risk_t *rk;
        gclaim_t **p, *c;
        sbx_risk_t risk = SBX_RISK_HIGH;
        int clamped     = 0;
        int64_t ttl;
        ask_t a;

        if (plan_proposed->type != SBX_EV_PLAN_PROPOSED ||
            claim->aggregate != SBX_AGG_CLAIM ||
            strcmp(plan_proposed->aggregate_id, claim->id) ||
            claim->phase != SBX_CLAIM_PLANNED)
                goto nothing;
        p = slot(g, claim->id);
        c = *p;
        if (c && c->seq > claim->seq)
                goto nothing; /* the guard has read a later event already */
        if (c) {
                c->seq   = claim->seq; /* the fold's state is authoritative */
                c->phase = claim->phase;
        }
        t = sbx_policy_tenant(g->policy, claim->tenant_id);
        if (!t) {
                reason(rejects, "tenant '%.64s' is not in the policy.",
                       claim->tenant_id ? claim->tenant_id : "");
                goto reject;
        }
        if (!json_is_object(intent)) {
                reason(rejects, "the plan holds no resource intent.");
                goto reject;
        }
        read_ask(intent, &a, notes);
        check_plan(t, c, &a, &k, &clamped, &risk, notes, rejects);

        /* The client's explicit profile binds the planner: it may not
         * widen (or change) what the client asked for. */
        network = a.network;
        if (claim->network_profile && *claim->network_profile) {
                if (strcmp(network, claim->network_profile))
                        reason(notes,
                               "the client asked for network %.64s; "
                               "the planner's %.64s is not used.",
                               claim->network_profile, network);
                network = claim->network_profile;
        }
        check_network(g->policy, t, risk, network, rejects);
        if (k)
                check_quota(g, t, c, k, rejects);
        if (json_array_size(rejects))
                goto reject;

        tmpl = a.template_name;
        if (!sbx_policy_list_has(&k->templates, tmpl)) {
                reason(notes, "template %.64s is not offered by %s; using %s.",
                       tmpl, k->name, k->templates.v[0]);
                tmpl = k->templates.v[0];
        }
        rk      = sbx_policy_risk(g->policy, risk);
        runtime = a.runtime;
        if (!sbx_policy_list_has(&rk->runtimes, runtime)) {
                reason(notes,
                       "risk %s does not allow runtime %.64s; using "
                       "%s.",
                       sbx_risk_name(risk), runtime, rk->runtimes.v[0]);
                runtime = rk->runtimes.v[0];
        }
        ttl = a.ttl > 0                ? a.ttl
              : claim->ttl_seconds > 0 ? claim->ttl_seconds
                                       : sbx_policy_default_ttl(g->policy);
        if (ttl > t->max_ttl_seconds) {
                reason(notes,
                       "ttl %lld s exceeds tenant %s's limit; clamped "
                       "to %lld s.",
                       (long long)ttl, t->id, (long long)t->max_ttl_seconds);
                ttl = t->max_ttl_seconds;
        }
        if (!c) {
                c        = claim_add(g, claim->id, t);
                c->seq   = claim->seq;
                c->phase = claim->phase;
        }
        commit(g, c, millis(k->cpu), k->memory_mb);

        payload = json_pack(
            "{s:s, s:f, s:I, s:I, s:s, s:s, s:s, s:I, s:b, "
            "s:O}",
            "resource_class", k->name, "cpu", k->cpu, "memory_mb",
            (json_int_t)k->memory_mb, "disk_gb", (json_int_t)k->disk_gb,
            "network_profile", network, "template", tmpl, "runtime", runtime,
            "ttl_seconds", (json_int_t)ttl, "clamped", clamped, "reasons",
            notes);
        sbx_assert(payload != NULL);
        json_decref(notes);
        json_decref(rejects);
        return envelope(SBX_EV_PLAN_APPROVED, payload, plan_proposed, claim,
                        next_seq, producer);
reject:
        payload = json_pack("{s:O}", "reasons", rejects);
        sbx_assert(payload != NULL);
        json_decref(notes);
        json_decref(rejects);
        return envelope(SBX_EV_PLAN_REJECTED, payload, plan_proposed, claim,
                        next_seq, producer);
nothing:
        json_decref(notes);
        json_decref(rejects);
        return NULL;
}
