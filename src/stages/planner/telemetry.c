/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Allocation telemetry: a fold of the lifecycle log into usage samples per
 * workload signature. PlanProposed / PlanApproved tell a claim's signature
 * and allocation, SandboxCreated a sandbox's real size, LeaseGranted /
 * ClaimBound which claim holds a sandbox,
 * and each ExecFinished becomes a sample (peak memory, CPU cores = CPU
 * time over wall time, OOM) of the signature of the claim holding the
 * sandbox's lease. Samples that arrive before their claim's plan (another
 * partition may lag) wait on the claim. Everything is bounded: the last
 * SBX_PLANNER_WINDOW samples per signature, MAX_SIGS signatures, MAX_IDS
 * claims and sandboxes (least recently used ones are forgotten). The state
 * depends only on the events and their order, never on a clock.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "stages/planner/planner_int.h"

#define MAX_SIGS    512
#define MAX_SIG_LEN 128
#define MAX_IDS     65536
#define N_BUCKETS   16384
#define MAX_PENDING 16
#define MB          1048576.0
#define HEADROOM    1.3
#define OOM_STEP    1.5
/* An exec this long says how many cores the work needs. */
#define SUSTAINED_S 10.0

typedef struct sample_s {
        double mem_mb, cpu; /* peak memory, cores */
        double alloc_cpu;   /* what the claim had; 0 if unknown */
        double wall_s;      /* how long the exec ran */
        int64_t alloc_mem_mb;
        int oom;
} sample_t;

typedef struct sig_s {
        char *name;
        sample_t ring[SBX_PLANNER_WINDOW];
        int n, head; /* head: the next slot to write */
} sig_t;

/* A claim or a sandbox, in a hash map with a recency list. */
typedef struct ent_s {
        struct ent_s *hnext, *newer, *older;
        uint64_t h;
        char *id;
        int64_t seq;          /* of the last event of this aggregate used */
        int64_t alloc_mem_mb; /* claim: its plan; sandbox: its size */
        double alloc_cpu;
        /* claim */
        sig_t *sig;
        sample_t *pending;
        int npending;
        /* sandbox */
        char *owner;
        int64_t lease_version;
} ent_t;

typedef struct map_s {
        ent_t *buckets[N_BUCKETS];
        ent_t *newest, *oldest;
        size_t count;
} map_t;

struct sbx_tel_s {
        map_t claims, sandboxes;
        sig_t *sigs[MAX_SIGS]; /* sorted by name */
        size_t nsigs;
};

static uint64_t hash(const char *s)
{
        return sbx_fnv1a64(SBX_FNV1A64_INIT, s);
}

static void ent_free(ent_t *e)
{
        free(e->id);
        free(e->pending);
        free(e->owner);
        free(e);
}

static void list_unlink(map_t *m, ent_t *e)
{
        if (e->newer)
                e->newer->older = e->older;
        else
                m->newest = e->older;
        if (e->older)
                e->older->newer = e->newer;
        else
                m->oldest = e->newer;
        e->newer = e->older = NULL;
}

static void list_push(map_t *m, ent_t *e)
{
        e->older = m->newest;
        if (m->newest)
                m->newest->newer = e;
        m->newest = e;
        if (!m->oldest)
                m->oldest = e;
}

static void map_evict_oldest(map_t *m)
{
        ent_t *e = m->oldest, **pp = &m->buckets[e->h % N_BUCKETS];
        while (*pp != e)
                pp = &(*pp)->hnext;
        *pp = e->hnext;
        list_unlink(m, e);
        m->count--;
        ent_free(e);
}

/* The entry for @p id, made most recent; created when @p add. */
static ent_t *map_get(map_t *m, const char *id, int add)
{
        uint64_t h = hash(id);
        ent_t *e;

        for (e = m->buckets[h % N_BUCKETS]; e; e = e->hnext)
                if (e->h == h && !strcmp(e->id, id))
                        break;
        if (e) {
                list_unlink(m, e);
                list_push(m, e);
                return e;
        }
        if (!add)
                return NULL;
        if (m->count >= MAX_IDS)
                map_evict_oldest(m);
        e                         = sbx_calloc(1, sizeof(*e));
        e->h                      = h;
        e->id                     = sbx_strdup(id);
        e->hnext                  = m->buckets[h % N_BUCKETS];
        m->buckets[h % N_BUCKETS] = e;
        list_push(m, e);
        m->count++;
        return e;
}

static void map_clear(map_t *m)
{
        while (m->oldest)
                map_evict_oldest(m);
}

sbx_tel_t *sbx_planner_tel_new(void)
{
        return sbx_calloc(1, sizeof(sbx_tel_t));
}

void sbx_planner_tel_destroy(sbx_tel_t *t)
{
        size_t i;
        if (!t)
                return;
        map_clear(&t->claims);
        map_clear(&t->sandboxes);
        for (i = 0; i < t->nsigs; i++) {
                free(t->sigs[i]->name);
                free(t->sigs[i]);
        }
        free(t);
}

/* Index of the first signature not below @p name. */
static size_t sig_pos(const sbx_tel_t *t, const char *name)
{
        size_t lo = 0, hi = t->nsigs;
        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (strcmp(t->sigs[mid]->name, name) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

static sig_t *sig_find(const sbx_tel_t *t, const char *name)
{
        size_t i = sig_pos(t, name);
        return i < t->nsigs && !strcmp(t->sigs[i]->name, name) ? t->sigs[i]
                                                               : NULL;
}

/* The signature @p name (from the log: checked), added if there is room. */
static sig_t *sig_get(sbx_tel_t *t, const char *name)
{
        size_t i, len = name ? strlen(name) : 0;
        sig_t *s;

        if (!len || len > MAX_SIG_LEN)
                return NULL;
        for (i = 0; i < len; i++)
                if ((unsigned char)name[i] <= 0x20 ||
                    (unsigned char)name[i] >= 0x7f)
                        return NULL;
        if ((s = sig_find(t, name)) || t->nsigs == MAX_SIGS)
                return s;
        i       = sig_pos(t, name);
        s       = sbx_calloc(1, sizeof(*s));
        s->name = sbx_strdup(name);
        memmove(&t->sigs[i + 1], &t->sigs[i], (t->nsigs - i) * sizeof(s));
        t->sigs[i] = s;
        t->nsigs++;
        return s;
}

static void sig_push(sig_t *s, const sample_t *smp)
{
        s->ring[s->head] = *smp;
        s->head          = (s->head + 1) % SBX_PLANNER_WINDOW;
        if (s->n < SBX_PLANNER_WINDOW)
                s->n++;
}

/* Accepts an event of @p e's aggregate once: seq must move forward. */
static int fresh(ent_t *e, const sbx_event_t *ev)
{
        if (ev->seq <= e->seq)
                return 0;
        e->seq = ev->seq;
        return 1;
}

static void set_owner(ent_t *sb, const char *claim, int64_t lease_version)
{
        if (!claim || !*claim || lease_version < sb->lease_version)
                return;
        free(sb->owner);
        sb->owner         = sbx_strdup(claim);
        sb->lease_version = lease_version;
}

/* Allocation from an object with memory_mb and cpu (the log is input). */
static void set_alloc(ent_t *e, const json_t *o)
{
        json_int_t mem = json_integer_value(json_object_get(o, "memory_mb"));
        double cpu     = json_number_value(json_object_get(o, "cpu"));
        if (mem > 0)
                e->alloc_mem_mb =
                    mem < SBX_PLANNER_MEM_MAX ? mem : SBX_PLANNER_MEM_MAX;
        if (cpu > 0)
                e->alloc_cpu = fmin(cpu, SBX_PLANNER_CPU_MAX);
}

static void on_plan(sbx_tel_t *t, const sbx_event_t *ev)
{
        ent_t *c         = map_get(&t->claims, ev->aggregate_id, 1);
        const json_t *in = json_object_get(ev->payload, "intent");
        int i;

        if (!fresh(c, ev))
                return;
        if (ev->type == SBX_EV_PLAN_APPROVED)
                in = ev->payload;
        else
                c->sig = sig_get(t, sbx_event_str(ev, "signature"));
        set_alloc(c, in);
        if (!c->sig)
                return;
        for (i = 0; i < c->npending; i++) {
                if (!c->pending[i].alloc_mem_mb) {
                        c->pending[i].alloc_mem_mb = c->alloc_mem_mb;
                        c->pending[i].alloc_cpu    = c->alloc_cpu;
                }
                sig_push(c->sig, &c->pending[i]);
        }
        free(c->pending);
        c->pending  = NULL;
        c->npending = 0;
}

static double nonneg(const json_t *usage, const char *field)
{
        json_int_t v = json_integer_value(json_object_get(usage, field));
        return v > 0 ? (double)v : 0;
}

static void on_exec_finished(sbx_tel_t *t, const sbx_event_t *ev)
{
        ent_t *sb       = map_get(&t->sandboxes, ev->aggregate_id, 0), *c;
        const json_t *u = json_object_get(ev->payload, "usage");
        double peak     = nonneg(u, "peak_memory_bytes"),
               wall     = nonneg(u, "wall_us");
        double cpu_us   = nonneg(u, "cpu_user_us") + nonneg(u, "cpu_sys_us");
        sample_t smp    = {0};

        if (!sb || !sb->owner || !fresh(sb, ev))
                return;
        if (ev->lease_version != SBX_NO_LEASE &&
            ev->lease_version != sb->lease_version)
                return; /* a fenced-out writer's report */
        if (peak <= 0)
                peak = nonneg(u, "max_rss_kb") * 1024;
        smp.oom = json_is_true(json_object_get(u, "oom_killed"));
        if (!smp.oom && peak <= 0 && wall <= 0)
                return; /* no usage measured */
        smp.mem_mb = fmin(peak / MB, SBX_PLANNER_MEM_MAX);
        smp.cpu    = wall > 0 ? fmin(cpu_us / wall, SBX_PLANNER_CPU_MAX) : 0;
        smp.wall_s = wall / 1e6;
        c          = map_get(&t->claims, sb->owner, 1);
        /* The sandbox's own size if we saw it (a warm sandbox of a larger
         * class may serve a small plan), else what the claim was given. */
        smp.alloc_mem_mb =
            sb->alloc_mem_mb ? sb->alloc_mem_mb : c->alloc_mem_mb;
        smp.alloc_cpu = sb->alloc_cpu > 0 ? sb->alloc_cpu : c->alloc_cpu;
        if (c->sig) {
                sig_push(c->sig, &smp);
        } else if (c->npending < MAX_PENDING) {
                if (!c->pending)
                        c->pending = sbx_calloc(MAX_PENDING, sizeof(sample_t));
                c->pending[c->npending++] = smp;
        }
}

void sbx_planner_tel_observe(sbx_tel_t *t, const sbx_event_t *ev)
{
        ent_t *e;

        switch (ev->type) {
        case SBX_EV_PLAN_PROPOSED:
        case SBX_EV_PLAN_APPROVED:
                on_plan(t, ev);
                break;
        case SBX_EV_CLAIM_BOUND:
                e = map_get(&t->claims, ev->aggregate_id, 1);
                if (fresh(e, ev) && sbx_event_str(ev, "sandbox_id"))
                        set_owner(map_get(&t->sandboxes,
                                          sbx_event_str(ev, "sandbox_id"), 1),
                                  ev->aggregate_id,
                                  sbx_event_int(ev, "lease_version", 0));
                break;
        case SBX_EV_SANDBOX_CREATED:
                e = map_get(&t->sandboxes, ev->aggregate_id, 1);
                if (fresh(e, ev))
                        set_alloc(e, ev->payload);
                break;
        case SBX_EV_LEASE_GRANTED:
                e = map_get(&t->sandboxes, ev->aggregate_id, 1);
                if (fresh(e, ev))
                        set_owner(e, sbx_event_str(ev, "owner"),
                                  sbx_event_int(ev, "lease_version", 0));
                break;
        case SBX_EV_EXEC_FINISHED:
                on_exec_finished(t, ev);
                break;
        default:
                break;
        }
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

/* Nearest-rank quantile @p pct of @p n sorted values. */
static double quantile(const double *v, int n, int pct)
{
        int i = (pct * n + 99) / 100 - 1;
        return v[i < 0 ? 0 : i];
}

static int64_t mem_step(double mb)
{
        if (!(mb < SBX_PLANNER_MEM_MAX))
                return SBX_PLANNER_MEM_MAX;
        if (mb < SBX_PLANNER_MEM_STEP)
                return SBX_PLANNER_MEM_STEP;
        return (int64_t)ceil(mb / SBX_PLANNER_MEM_STEP) * SBX_PLANNER_MEM_STEP;
}

static double cpu_step(double cpu)
{
        double v = ceil(cpu * 2) / 2;
        return v < 0.5                   ? 0.5
               : v > SBX_PLANNER_CPU_MAX ? SBX_PLANNER_CPU_MAX
                                         : v;
}

/*
 * The sizing rule. Memory: P95 peak x 1.3, at least 256 MB, in 256 MB
 * steps; any OOM in the window: at least 1.5x the largest allocation that
 * OOMed. CPU, from the execs that ran at least 10 s (an install or a
 * short script that saturates its core only runs a moment longer: that
 * says nothing of how many cores the work needs), once there are enough
 * of them: P95 x 1.3 in half cores, at least 0.5; if more than 5% of them
 * ran at >= 90% of their allocation (throttled), at least 1.5x that
 * allocation; else 0 (keep the rules' CPU). Confidence grows with the
 * sample count and falls with the OOM rate.
 */
static void size_sig(const sig_t *s, sbx_sizing_t *z)
{
        double mem[SBX_PLANNER_WINDOW], cpu[SBX_PLANNER_WINDOW];
        double sat_alloc = 0;
        int i, ooms = 0, sat = 0, ncpu = 0;

        memset(z, 0, sizeof(*z));
        for (i = 0; i < s->n; i++) {
                const sample_t *p = &s->ring[i];
                mem[i]            = p->mem_mb;
                if (p->oom) {
                        int64_t a = p->alloc_mem_mb ? p->alloc_mem_mb
                                                    : (int64_t)ceil(p->mem_mb);
                        ooms++;
                        if (a > z->oom_alloc_mb)
                                z->oom_alloc_mb = a;
                }
                if (p->wall_s < SUSTAINED_S)
                        continue;
                cpu[ncpu++] = p->cpu;
                if (p->alloc_cpu > 0 && p->cpu >= 0.9 * p->alloc_cpu) {
                        sat++;
                        sat_alloc = fmax(sat_alloc, p->alloc_cpu);
                }
        }
        qsort(mem, (size_t)s->n, sizeof(double), cmp_double);
        qsort(cpu, (size_t)ncpu, sizeof(double), cmp_double);
        z->samples    = s->n;
        z->p50_mem_mb = quantile(mem, s->n, 50);
        z->p95_mem_mb = quantile(mem, s->n, 95);
        z->p95_cpu    = ncpu ? quantile(cpu, ncpu, 95) : 0;
        z->oom_rate   = (double)ooms / s->n;
        if (s->n < SBX_PLANNER_MIN_SAMPLES) {
                if (ooms)
                        z->memory_mb = mem_step(z->oom_alloc_mb * OOM_STEP);
                return;
        }
        z->memory_mb = mem_step(fmax(z->p95_mem_mb * HEADROOM, 256));
        if (ooms && z->memory_mb < mem_step(z->oom_alloc_mb * OOM_STEP))
                z->memory_mb = mem_step(z->oom_alloc_mb * OOM_STEP);
        if (ncpu < SBX_PLANNER_MIN_SAMPLES)
                goto confidence;
        z->cpu = cpu_step(z->p95_cpu * HEADROOM);
        if (sat * 20 > ncpu && z->cpu < cpu_step(sat_alloc * OOM_STEP))
                z->cpu = cpu_step(sat_alloc * OOM_STEP);
confidence:
        z->confidence =
            (0.6 + 0.35 * s->n / (s->n + 20.0)) * (1 - fmin(z->oom_rate, 0.5));
}

int sbx_planner_tel_sizing(const sbx_tel_t *t,
                           const char *signature,
                           sbx_sizing_t *ret)
{
        const sig_t *s = sig_find(t, signature);
        if (!s || !s->n)
                return 0;
        size_sig(s, ret);
        return 1;
}

size_t sbx_planner_tel_stats(const sbx_tel_t *t,
                             sbx_planner_stats_t *out,
                             size_t max)
{
        size_t i;
        if (!out)
                return t->nsigs;
        for (i = 0; i < t->nsigs && i < max; i++) {
                sbx_sizing_t z = {0};
                if (t->sigs[i]->n)
                        size_sig(t->sigs[i], &z);
                out[i].signature          = t->sigs[i]->name;
                out[i].samples            = z.samples;
                out[i].p50_mem_mb         = z.p50_mem_mb;
                out[i].p95_mem_mb         = z.p95_mem_mb;
                out[i].p95_cpu            = z.p95_cpu;
                out[i].oom_rate           = z.oom_rate;
                out[i].recommended_mem_mb = z.samples >= SBX_PLANNER_MIN_SAMPLES
                                                ? (long)z.memory_mb
                                                : 0;
                out[i].recommended_cpu =
                    z.samples >= SBX_PLANNER_MIN_SAMPLES ? z.cpu : 0;
        }
        return i;
}
