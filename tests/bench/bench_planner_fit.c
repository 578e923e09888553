/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Planner fit (issue #8, item 7): how well do allocations fit real
 * workloads? Each claim is one workload of tests/bench/workloads/ run in a
 * real runc sandbox, sized by the `rules` planner as it learns from the
 * telemetry of the claims before it (the events the real system would log:
 * PlanProposed, SandboxCreated, LeaseGranted, ClaimBound, ExecFinished
 * with the executor's usage), so its OOMs are real cgroup OOM kills. The
 * same claims are sized by the guard's class for the rules plan, by a
 * fixed 2 CPU / 4 GiB and by a seeded random class of the policy, and
 * those are judged against the run's measured peak. Rounds repeat the
 * corpus in a seeded shuffled order. Prints per-workload, per-round and
 * per-signature tables and the summary (count, OOM rate, mean
 * over-allocation of memory and CPU, and ratios to the baselines); writes
 * the claims and the learning curve as JSON and CSV. Needs root.
 *
 * usage: bench_planner_fit [--rounds N] [--smoke] [--seed S] [--every K]
 *        [--out DIR] [--json FILE] [--csv FILE] [--corpus DIR]
 *        [--var DIR] [--agent PATH]
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_fit.h"
#include "benchlib.h"
#include "core/config.h"
#include "core/event.h"
#include "core/fold.h"
#include "core/policy.h"
#include "core/util.h"
#include "stages/guard/guard.h"
#include "stages/planner/planner.h"

#define TENANT    "bench"
#define FIXED_MB  4096
#define FIXED_CPU 2.0
#define REF_MB    16384 /* the re-run that measures an OOMed workload */
#define REF_CPU   8.0
#define CPU_FLOOR 0.05 /* cores: below this, CPU "used" counts as this */
#define MAX_SIGS  64

enum { A_RULES, A_GUARD, A_FIXED, A_RANDOM, A__CNT };
static const char *const anames[A__CNT] = {"rules", "rules+guard", "fixed-2c4g",
                                           "random-class"};

/* SIGINT / SIGTERM: finish the running workload, report, exit. A signal
 * handler can only reach a flag like this one. */
static volatile sig_atomic_t stop_requested;

typedef struct alloc_s {
        int64_t mem_mb;
        double cpu;
        int oom;
        char cls[32];
} alloc_t;

typedef struct claim_s {
        int round;
        const fit_workload_t *w;
        char sig[64];
        char *reason;     /* the rules plan's */
        fit_result_t run; /* under the rules allocation */
        int rerun;        /* run OOMed: peak and cpu are from a re-run */
        double peak_mb, cpu;
        int failed; /* nothing trustworthy measured: out of the metrics */
        alloc_t a[A__CNT];
} claim_t;

typedef struct acc_s {
        long n, ooms, fits;
        double mem, cpu; /* sums of over-allocation over the fits */
        double mem_alloc, mem_used, cpu_alloc, cpu_used; /* their sums */
} acc_t;

typedef struct fit_s {
        int rounds, every, smoke;
        uint64_t seed, rng;
        const char *json_path, *csv_path;
        sbx_config_t *cfg;
        sbx_policy_t *policy;
        const sbx_policy_class_t *const *classes;
        size_t nclasses;
        sbx_planner_t *planner;
        sbx_guard_t *guard;
        fit_box_t *box;
        fit_corpus_t corpus;
        size_t *pick, npick; /* the workloads of a round */
        claim_t *claims;
        size_t nclaims;
        json_t *curve;
} fit_t;

static void on_signal(int sig)
{
        (void)sig;
        stop_requested = 1;
}

static uint64_t splitmix(uint64_t *s)
{
        uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
        z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z          = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

static sbx_event_t *ev_new(sbx_evtype_t type,
                           const char *agg,
                           int64_t seq,
                           const char *claim_id,
                           json_t *payload)
{
        sbx_event_t *ev = sbx_event_new(type, agg, seq, payload);
        sbx_event_set(&ev->producer, "bench/fit");
        sbx_event_set(&ev->tenant_id, TENANT);
        sbx_event_set(&ev->session_id, "fit");
        sbx_event_set(&ev->correlation_id, claim_id);
        return ev;
}

static void observe(fit_t *f, sbx_event_t *ev)
{
        sbx_planner_observe(f->planner, ev);
        sbx_event_destroy(ev);
}

/* What the guard approves for @p plan: the rules plan's class. */
static void guard_alloc(fit_t *f,
                        const sbx_event_t *req,
                        const sbx_event_t *plan,
                        alloc_t *ret)
{
        sbx_state_t *st = sbx_state_new(SBX_AGG_CLAIM, req->aggregate_id);
        sbx_event_t *ans;

        sbx_assert(sbx_fold(st, req) == SBX_FOLD_ACCEPTED);
        sbx_guard_observe(f->guard, req);
        sbx_assert(sbx_fold(st, plan) == SBX_FOLD_ACCEPTED);
        sbx_guard_observe(f->guard, plan);
        ans = sbx_guard_decide(f->guard, plan, st, st->seq + 1, "guard/fit");
        if (ans && ans->type == SBX_EV_PLAN_APPROVED) {
                ret->mem_mb = sbx_event_int(ans, "memory_mb", 0);
                ret->cpu    = sbx_event_num(ans, "cpu", 0);
                sbx_fmt(ret->cls, sizeof(ret->cls), "%s",
                        sbx_event_str(ans, "resource_class"));
                sbx_fold(st, ans);
                sbx_guard_observe(f->guard, ans);
        } else {
                char *why = ans ? json_dumps(ans->payload, JSON_COMPACT) : NULL;
                fprintf(stderr,
                        "fit: guard: no approval for %s (%s); "
                        "rules+guard keeps the plan's size\n",
                        req->aggregate_id, why ? why : "no answer");
                free(why);
        }
        sbx_event_destroy(ans);
        sbx_state_destroy(st);
}

/* The telemetry the real system logs for a claim that ran @p r. */
static void feed_run(fit_t *f,
                     const char *claim_id,
                     const char *sb,
                     const alloc_t *a,
                     const fit_result_t *r)
{
        sbx_event_t *ev;

        observe(f, ev_new(SBX_EV_SANDBOX_CREATED, sb, 1, claim_id,
                          json_pack("{s:s, s:s, s:s, s:s, s:f, s:I}", "origin",
                                    "claim", "node_id", "n1", "resource_class",
                                    a->cls, "template", "host", "cpu", a->cpu,
                                    "memory_mb", (json_int_t)a->mem_mb)));
        ev = ev_new(
            SBX_EV_LEASE_GRANTED, sb, 3, claim_id,
            json_pack("{s:s, s:I, s:I}", "owner", claim_id, "lease_version",
                      (json_int_t)1, "expires_at", (json_int_t)1));
        ev->lease_version = 1;
        observe(f, ev);
        observe(
            f, ev_new(SBX_EV_CLAIM_BOUND, claim_id, 5, claim_id,
                      json_pack("{s:s, s:s, s:I, s:I}", "sandbox_id", sb,
                                "node_id", "n1", "lease_version", (json_int_t)1,
                                "lease_expires_at", (json_int_t)1)));
        ev = ev_new(
            SBX_EV_EXEC_FINISHED, sb, 5, claim_id,
            json_pack("{s:s, s:i, s:{s:I, s:I, s:I, s:I, s:I, s:b}}", "exec_id",
                      "e1", "exit_code", r->exit_code, "usage", "wall_us",
                      (json_int_t)r->wall_us, "cpu_user_us",
                      (json_int_t)r->user_us, "cpu_sys_us",
                      (json_int_t)r->sys_us, "peak_memory_bytes",
                      (json_int_t)r->peak_bytes, "max_rss_kb",
                      (json_int_t)r->maxrss_kb, "oom_killed", r->oom));
        ev->lease_version = 1;
        observe(f, ev);
}

/* One claim of workload @p c->w, end to end; -1 if it could not run. */
static int claim_one(fit_t *f, claim_t *c, size_t idx)
{
        char claim_id[64], sb[64], err[1024];
        const json_t *in;
        const sbx_policy_class_t *k;
        sbx_event_t *req, *plan;
        fit_result_t ref;
        int i;

        sbx_fmt(claim_id, sizeof(claim_id), "claim-%zu", idx);
        sbx_fmt(sb, sizeof(sb), "sb-%zu", idx);
        req  = ev_new(SBX_EV_CLAIM_REQUESTED, claim_id, 1, claim_id,
                      json_pack("{s:s, s:O}", "request_id", claim_id, "task",
                                c->w->task));
        plan = sbx_planner_decide(f->planner, req, 2, "planner/fit");
        sbx_planner_observe(f->planner, req);
        sbx_planner_observe(f->planner, plan);
        in = json_object_get(plan->payload, "intent");
        sbx_fmt(c->sig, sizeof(c->sig), "%s", sbx_event_str(plan, "signature"));
        c->reason =
            sbx_strdup(json_string_value(json_object_get(in, "reason")));
        c->a[A_RULES].mem_mb =
            json_integer_value(json_object_get(in, "memory_mb"));
        c->a[A_RULES].cpu = json_number_value(json_object_get(in, "cpu"));
        sbx_fmt(c->a[A_RULES].cls, sizeof(c->a[0].cls), "%s",
                json_string_value(json_object_get(in, "resource_class")));
        c->a[A_GUARD] = c->a[A_RULES];
        guard_alloc(f, req, plan, &c->a[A_GUARD]);
        c->a[A_FIXED]  = (alloc_t){FIXED_MB, FIXED_CPU, 0, "fixed"};
        k              = f->classes[splitmix(&f->rng) % f->nclasses];
        c->a[A_RANDOM] = (alloc_t){k->memory_mb, k->cpu, 0, ""};
        sbx_fmt(c->a[A_RANDOM].cls, sizeof(c->a[0].cls), "%s", k->name);
        sbx_event_destroy(req);
        sbx_event_destroy(plan);

        if (fit_box_run(f->box, c->w, c->a[A_RULES].mem_mb, c->a[A_RULES].cpu,
                        &c->run, err, sizeof(err))) {
                fprintf(stderr, "fit: %s: %s\n", c->w->name, err);
                c->failed = 1;
                return -1;
        }
        feed_run(f, claim_id, sb, &c->a[A_RULES], &c->run);
        c->peak_mb = c->run.peak_mb;
        c->cpu     = c->run.cpu;
        c->failed  = c->run.exit_code != 0 && !c->run.oom;
        if (c->run.oom) {
                int bad  = fit_box_run(f->box, c->w, REF_MB, REF_CPU, &ref, err,
                                       sizeof(err)) != SBX_OK;
                c->rerun = 1;
                if (bad || ref.exit_code != 0) {
                        fprintf(stderr, "fit: %s: re-run failed: %s\n",
                                c->w->name, bad ? err : ref.tail);
                        c->failed = 1;
                } else {
                        c->peak_mb = ref.peak_mb;
                        c->cpu     = ref.cpu;
                }
        }
        for (i = 0; i < A__CNT; i++)
                c->a[i].oom = i == A_RULES
                                  ? c->run.oom
                                  : (double)c->a[i].mem_mb < c->peak_mb;
        return 0;
}

static void acc_add(acc_t *s, const claim_t *c, int a)
{
        if (c->failed)
                return;
        s->n++;
        if (c->a[a].oom) {
                s->ooms++;
                return;
        }
        s->fits++;
        s->mem += (double)c->a[a].mem_mb / fmax(c->peak_mb, 1.0);
        s->cpu += c->a[a].cpu / fmax(c->cpu, CPU_FLOOR);
        s->mem_alloc += (double)c->a[a].mem_mb;
        s->mem_used += fmax(c->peak_mb, 1.0);
        s->cpu_alloc += c->a[a].cpu;
        s->cpu_used += fmax(c->cpu, CPU_FLOOR);
}

static double rate(const acc_t *s)
{
        return s->n ? (double)s->ooms / (double)s->n : 0;
}
static double mmem(const acc_t *s)
{
        return s->fits ? s->mem / (double)s->fits : 0;
}
static double mcpu(const acc_t *s)
{
        return s->fits ? s->cpu / (double)s->fits : 0;
}
/* Aggregate over-allocation: all allocated over all used. */
static double amem(const acc_t *s)
{
        return s->mem_used > 0 ? s->mem_alloc / s->mem_used : 0;
}
static double acpu(const acc_t *s)
{
        return s->cpu_used > 0 ? s->cpu_alloc / s->cpu_used : 0;
}

/* Learning-curve rows after @p seen claims: cumulative and last window. */
static void curve_point(fit_t *f, size_t seen, size_t window)
{
        int a;
        size_t i;
        for (a = 0; a < A__CNT; a++) {
                acc_t all = {0}, win = {0};
                for (i = 0; i < seen; i++) {
                        acc_add(&all, &f->claims[i], a);
                        if (i + window >= seen)
                                acc_add(&win, &f->claims[i], a);
                }
                json_array_append_new(
                    f->curve,
                    json_pack(
                        "{s:I, s:i, s:s, s:f, s:f, s:f, s:f, s:f, s:f, "
                        "s:f}",
                        "claims_seen", (json_int_t)seen, "round",
                        f->claims[seen - 1].round + 1, "allocator", anames[a],
                        "oom_rate", rate(&all), "mean_overalloc_mem",
                        mmem(&all), "mean_overalloc_cpu", mcpu(&all),
                        "agg_overalloc_mem", amem(&all), "agg_overalloc_cpu",
                        acpu(&all), "window_oom_rate", rate(&win),
                        "window_overalloc_mem", mmem(&win)));
        }
}

static void progress(const fit_t *f, const claim_t *c, size_t n)
{
        const alloc_t *r = &c->a[A_RULES];
        fprintf(stderr,
                "[r%d %3zu/%zu] %-22s %-20s rules %5lld MB %3.1f CPU | peak "
                "%6.0f MB %4.2f cores %5.1f s%s%s\n",
                c->round + 1, n, f->npick * (size_t)f->rounds, c->w->name,
                c->sig, (long long)r->mem_mb, r->cpu, c->peak_mb, c->cpu,
                (double)c->run.wall_us / 1e6, c->run.oom ? " OOM (re-run)" : "",
                c->failed ? " FAILED" : "");
        if (c->failed)
                fprintf(stderr, "    exit %d: %s\n", c->run.exit_code,
                        c->run.tail);
}

static void run_rounds(fit_t *f)
{
        size_t i, j, n = 0, total = f->npick * (size_t)f->rounds;
        int r;

        f->claims = sbx_calloc(total, sizeof(*f->claims));
        for (r = 0; r < f->rounds && !stop_requested; r++) {
                uint64_t s    = f->seed * 1000003 + (uint64_t)r;
                size_t *order = sbx_calloc(f->npick, sizeof(*order));
                memcpy(order, f->pick, f->npick * sizeof(*order));
                for (i = f->npick; i > 1; i--) {
                        size_t t;
                        j            = splitmix(&s) % i;
                        t            = order[i - 1];
                        order[i - 1] = order[j];
                        order[j]     = t;
                }
                for (i = 0; i < f->npick && !stop_requested; i++) {
                        claim_t *c = &f->claims[n];
                        c->round   = r;
                        c->w       = &f->corpus.v[order[i]];
                        claim_one(f, c, n);
                        f->nclaims = ++n;
                        progress(f, c, n);
                        if (n % (size_t)f->every == 0 || n == total)
                                curve_point(f, n, (size_t)f->every);
                }
                free(order);
        }
        if (f->nclaims && f->nclaims % (size_t)f->every && stop_requested)
                curve_point(f, f->nclaims, (size_t)f->every);
}

static void print_workloads(const fit_t *f)
{
        size_t i, k;
        char cell[512];

        printf(
            "\n### per workload (peak, cores and wall time of its last run; "
            "rules allocation in MB per round, * = OOM)\n\n| workload | "
            "signature | peak MB | cores | wall s | "
            "rules MB by round |\n|---|---|---|---|---|---|\n");
        for (i = 0; i < f->npick; i++) {
                const fit_workload_t *w = &f->corpus.v[f->pick[i]];
                const claim_t *last     = NULL;
                size_t len              = 0;
                cell[0]                 = '\0';
                for (k = 0; k < f->nclaims; k++) {
                        const claim_t *c = &f->claims[k];
                        if (c->w != w)
                                continue;
                        len += (size_t)snprintf(
                            cell + len,
                            len < sizeof(cell) ? sizeof(cell) - len : 0,
                            "%s%lld%s", last ? " → " : "",
                            (long long)c->a[A_RULES].mem_mb,
                            c->a[A_RULES].oom ? "*" : "");
                        if (len >= sizeof(cell))
                                len = sizeof(cell) - 1;
                        last = c;
                }
                if (!last)
                        continue;
                printf("| %s | %s | %.0f | %.2f | %.1f | %s |\n", w->name,
                       last->sig, last->peak_mb, last->cpu,
                       (double)last->run.wall_us / 1e6, cell);
        }
}

static void print_rounds(const fit_t *f)
{
        int r, a;
        size_t i;

        printf(
            "\n### per round (each round on its own)\n\n| round | "
            "allocator | count | OOMs | OOM rate | over-alloc mem | "
            "over-alloc cpu | agg mem | agg cpu |\n|---|---|---|---|---|---"
            "|---|---|---|\n");
        for (r = 0; r < f->rounds; r++) {
                acc_t s[A__CNT] = {{0}};
                for (i = 0; i < f->nclaims; i++)
                        for (a = 0; a < A__CNT; a++)
                                if (f->claims[i].round == r)
                                        acc_add(&s[a], &f->claims[i], a);
                for (a = 0; a < A__CNT && s[0].n; a++)
                        printf(
                            "| %d | %s | %ld | %ld | %.1f%% | %.2fx | %.2fx "
                            "| %.2fx | %.2fx |\n",
                            r + 1, anames[a], s[a].n, s[a].ooms,
                            rate(&s[a]) * 100, mmem(&s[a]), mcpu(&s[a]),
                            amem(&s[a]), acpu(&s[a]));
        }
}

static json_t *print_signatures(const fit_t *f)
{
        sbx_planner_stats_t st[MAX_SIGS];
        size_t i, n = sbx_planner_stats(f->planner, st, MAX_SIGS);
        json_t *out = json_array();

        printf(
            "\n### what the rules planner learned (per signature)\n\n| "
            "signature | samples | P50 MB | P95 MB | OOM rate | "
            "recommended MB | recommended CPU |\n|---|---|---|---|---|---"
            "|---|\n");
        for (i = 0; i < n; i++) {
                printf("| %s | %ld | %.0f | %.0f | %.0f%% | %ld | %.1f |\n",
                       st[i].signature, st[i].samples, st[i].p50_mem_mb,
                       st[i].p95_mem_mb, st[i].oom_rate * 100,
                       st[i].recommended_mem_mb, st[i].recommended_cpu);
                json_array_append_new(
                    out,
                    json_pack("{s:s, s:I, s:f, s:f, s:f, s:I, s:f}",
                              "signature", st[i].signature, "samples",
                              (json_int_t)st[i].samples, "p50_mem_mb",
                              st[i].p50_mem_mb, "p95_mem_mb", st[i].p95_mem_mb,
                              "oom_rate", st[i].oom_rate, "recommended_mem_mb",
                              (json_int_t)st[i].recommended_mem_mb,
                              "recommended_cpu", st[i].recommended_cpu));
        }
        printf(
            "\nrecommended 0: fewer than 5 samples. The planner sizes CPU "
            "only from execs of 10 s or more; shorter ones keep the "
            "class's CPU.\n");
        return out;
}

static double ratio(double x, double base)
{
        return base > 0 ? x / base : 0;
}

static json_t *print_summary(const fit_t *f, long failed)
{
        acc_t s[A__CNT] = {{0}};
        json_t *out     = json_array();
        size_t i;
        int a;

        for (i = 0; i < f->nclaims; i++)
                for (a = 0; a < A__CNT; a++)
                        acc_add(&s[a], &f->claims[i], a);
        printf(
            "\n### summary: %ld claims (%ld left out: the workload "
            "failed)\n\nover-alloc: mean of allocated/used over the claims "
            "that fit; agg: sum allocated / sum used; vs: ratio of the "
            "means to a baseline's\n\n| allocator | count | OOMs | OOM "
            "rate | over-alloc mem | over-alloc cpu | agg mem | agg cpu | "
            "mem vs fixed | mem vs random | cpu vs fixed | cpu vs random "
            "|\n|---|---|---|---|---|---|---|---|---|---|---|---|\n",
            s[0].n, failed);
        for (a = 0; a < A__CNT; a++) {
                double v[4] = {ratio(mmem(&s[a]), mmem(&s[A_FIXED])),
                               ratio(mmem(&s[a]), mmem(&s[A_RANDOM])),
                               ratio(mcpu(&s[a]), mcpu(&s[A_FIXED])),
                               ratio(mcpu(&s[a]), mcpu(&s[A_RANDOM]))};
                printf(
                    "| %s | %ld | %ld | %.1f%% | %.2fx | %.2fx | %.2fx | "
                    "%.2fx | %.2f | %.2f | %.2f | %.2f |\n",
                    anames[a], s[a].n, s[a].ooms, rate(&s[a]) * 100,
                    mmem(&s[a]), mcpu(&s[a]), amem(&s[a]), acpu(&s[a]), v[0],
                    v[1], v[2], v[3]);
                json_array_append_new(
                    out,
                    json_pack("{s:s, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, "
                              "s:f, s:f, s:f}",
                              "allocator", anames[a], "count",
                              (json_int_t)s[a].n, "ooms", (json_int_t)s[a].ooms,
                              "oom_rate", rate(&s[a]), "mean_overalloc_mem",
                              mmem(&s[a]), "mean_overalloc_cpu", mcpu(&s[a]),
                              "agg_overalloc_mem", amem(&s[a]),
                              "agg_overalloc_cpu", acpu(&s[a]), "mem_vs_fixed",
                              v[0], "mem_vs_random", v[1], "cpu_vs_fixed", v[2],
                              "cpu_vs_random", v[3]));
        }
        return out;
}

static json_t *claims_json(const fit_t *f)
{
        json_t *out = json_array();
        size_t i;
        int a;

        for (i = 0; i < f->nclaims; i++) {
                const claim_t *c = &f->claims[i];
                json_t *al       = json_object();
                for (a = 0; a < A__CNT; a++)
                        json_object_set_new(
                            al, anames[a],
                            json_pack("{s:I, s:f, s:s, s:b}", "memory_mb",
                                      (json_int_t)c->a[a].mem_mb, "cpu",
                                      c->a[a].cpu, "class", c->a[a].cls, "oom",
                                      c->a[a].oom));
                json_array_append_new(
                    out,
                    json_pack(
                        "{s:i, s:s, s:s, s:f, s:f, s:f, s:b, s:b, s:i, "
                        "s:s, s:s, s:o}",
                        "round", c->round + 1, "workload", c->w->name,
                        "signature", c->sig, "peak_mb", c->peak_mb, "cpu_cores",
                        c->cpu, "wall_s", (double)c->run.wall_us / 1e6, "rerun",
                        c->rerun, "failed", c->failed, "exit_code",
                        c->run.exit_code, "output", c->run.tail, "rules_reason",
                        c->reason ? c->reason : "", "allocations", al));
        }
        return out;
}

static const char method[] =
    "Each claim runs its workload once, in a real runc sandbox (sbx-agent "
    "exec; peak memory from the cgroup, CPU from rusage, as the executor "
    "measures) sized by the rules planner's intent: the rules planner's "
    "OOMs are real cgroup OOM kills, and it learns from every run before "
    "the claim. rules+guard (the class the guard approves for that plan), "
    "fixed-2c4g and random-class are evaluated against that run's measured "
    "peak and CPU, not run: an allocation below the peak counts as an OOM. "
    "When the rules run OOMed, the workload ran once more under 16384 MB / "
    "8 CPU to measure its peak for the others (not fed to the planner). "
    "Over-allocation = allocated / used, averaged over the claims that did "
    "not OOM; CPU used is (user+sys)/wall, at least 0.05 cores.";

static int write_csv(const fit_t *f, const char *path)
{
        static const char *const cols[] = {"oom_rate",
                                           "mean_overalloc_mem",
                                           "mean_overalloc_cpu",
                                           "agg_overalloc_mem",
                                           "agg_overalloc_cpu",
                                           "window_oom_rate",
                                           "window_overalloc_mem"};
        FILE *fp                        = fopen(path, "w");
        size_t i, k;

        if (!fp) {
                fprintf(stderr, "fit: cannot write %s\n", path);
                return -1;
        }
        fprintf(fp, "claims_seen,round,allocator");
        for (k = 0; k < SBX_ARRAY_SIZE(cols); k++)
                fprintf(fp, ",%s", cols[k]);
        for (i = 0; i < json_array_size(f->curve); i++) {
                const json_t *r = json_array_get(f->curve, i);
                fprintf(
                    fp, "\n%lld,%lld,%s",
                    (long long)json_integer_value(
                        json_object_get(r, "claims_seen")),
                    (long long)json_integer_value(json_object_get(r, "round")),
                    json_string_value(json_object_get(r, "allocator")));
                for (k = 0; k < SBX_ARRAY_SIZE(cols); k++)
                        fprintf(fp, ",%.4f",
                                json_number_value(json_object_get(r, cols[k])));
        }
        fprintf(fp, "\n");
        return fclose(fp) ? -1 : 0;
}

static int report(fit_t *f, double wall_s)
{
        json_t *doc, *sigs, *sum;
        long failed = 0;
        size_t i;
        int rc = 0;

        for (i = 0; i < f->nclaims; i++)
                failed += f->claims[i].failed;
        print_workloads(f);
        print_rounds(f);
        sigs = print_signatures(f);
        sum  = print_summary(f, failed);
        printf("\nwall time %.1f s%s\n", wall_s,
               stop_requested ? " (interrupted)" : "");
        doc = json_pack(
            "{s:s, s:s, s:I, s:i, s:i, s:b, s:I, s:f, s:b, s:o, "
            "s:o, s:o, s:O}",
            "bench", "planner_fit", "method", method, "seed",
            (json_int_t)f->seed, "rounds", f->rounds, "every", f->every,
            "smoke", f->smoke, "workloads", (json_int_t)f->npick, "wall_s",
            wall_s, "interrupted", (int)stop_requested, "summary", sum,
            "signatures", sigs, "claims", claims_json(f), "curve", f->curve);
        if (f->json_path && bl_json_write(doc, f->json_path))
                rc = -1;
        if (f->csv_path && write_csv(f, f->csv_path))
                rc = -1;
        json_decref(doc);
        return rc;
}

static int usage(void)
{
        fprintf(stderr,
                "usage: bench_planner_fit [--rounds N] [--smoke] [--seed S] "
                "[--every K]\n       [--out DIR] [--json FILE] [--csv FILE] "
                "[--corpus DIR] [--var DIR] [--agent PATH]\n");
        return 2;
}

int main(int argc, char **argv)
{
        fit_t f            = {.rounds = 3, .every = 6, .seed = 1};
        const char *out    = NULL,
                   *corpus = SBX_SOURCE_ROOT "/tests/bench/workloads";
        char err[1024], jp[4096], cp[4096];
        int i, rounds = 0, rc = 1;
        int64_t t0;
        struct sigaction sa;

        for (i = 1; i < argc; i++) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                if (!strcmp(a, "--smoke")) {
                        f.smoke = 1;
                        continue;
                }
                if (!v)
                        return usage();
                i++;
                if (!strcmp(a, "--rounds"))
                        rounds = atoi(v);
                else if (!strcmp(a, "--seed"))
                        f.seed = strtoull(v, NULL, 10);
                else if (!strcmp(a, "--every"))
                        f.every = atoi(v);
                else if (!strcmp(a, "--out"))
                        out = v;
                else if (!strcmp(a, "--json"))
                        f.json_path = v;
                else if (!strcmp(a, "--csv"))
                        f.csv_path = v;
                else if (!strcmp(a, "--corpus"))
                        corpus = v;
                else if (!strcmp(a, "--var"))
                        setenv("SBX_VAR", v, 1);
                else if (!strcmp(a, "--agent"))
                        setenv("SBX_AGENT", v, 1);
                else
                        return usage();
        }
        f.rounds = rounds > 0 ? rounds : f.smoke ? 1 : f.rounds;
        if (f.every < 1)
                f.every = 1;
        if (out) {
                mkdir(out, 0755);
                if (!f.json_path)
                        f.json_path =
                            sbx_fmt(jp, sizeof(jp), "%s/planner_fit.json", out);
                if (!f.csv_path)
                        f.csv_path = sbx_fmt(cp, sizeof(cp),
                                             "%s/planner_fit_curve.csv", out);
        }
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_signal;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        f.rng   = f.seed;
        f.curve = json_array();
        if (sbx_config_load(NULL, &f.cfg, err, sizeof(err)) ||
            !(f.policy = sbx_policy_load(f.cfg->policy, err, sizeof(err))) ||
            fit_corpus_load(corpus, &f.corpus, err, sizeof(err)) ||
            !(f.box = fit_box_new(f.cfg->var_dir, f.cfg->agent_path, err,
                                  sizeof(err)))) {
                fprintf(stderr, "bench_planner_fit: %s\n", err);
                goto done;
        }
        {
                sbx_planner_conf_t pc = {.mode = "rules"};
                f.planner             = sbx_planner_new(&pc, err, sizeof(err));
                f.guard               = sbx_guard_new(f.policy);
                f.classes =
                    sbx_policy_tenant_classes(f.policy, TENANT, &f.nclasses);
                sbx_assert(f.planner && f.guard && f.nclasses);
        }
        /* --smoke: 6 workloads spread over the corpus (its kinds). */
        f.npick = f.smoke && f.corpus.n > 6 ? 6 : f.corpus.n;
        f.pick  = sbx_calloc(f.npick, sizeof(*f.pick));
        for (size_t k = 0; k < f.npick; k++)
                f.pick[k] = k * f.corpus.n / f.npick;

        printf(
            "## planner fit: %zu workloads x %d round%s, seed %llu, "
            "tenant %s, var %s\n\n%s\n\npandas/numpy: %s\n",
            f.npick, f.rounds, f.rounds == 1 ? "" : "s",
            (unsigned long long)f.seed, TENANT, f.cfg->var_dir, method,
            access("/usr/lib/python3/dist-packages/pandas", F_OK)
                ? "not on the host template; the data workloads use "
                  "python's csv module on CSVs they generate in /tmp, "
                  "their task text still names pandas as an agent's would"
                : "on the host template (the workloads use csv anyway)");
        fflush(stdout);
        t0 = sbx_mono_us();
        run_rounds(&f);
        rc = report(&f, (double)(sbx_mono_us() - t0) / 1e6) || stop_requested;
done:
        for (size_t k = 0; k < f.nclaims; k++)
                free(f.claims[k].reason);
        free(f.claims);
        free(f.pick);
        json_decref(f.curve);
        sbx_guard_destroy(f.guard);
        sbx_planner_destroy(f.planner);
        fit_box_destroy(f.box);
        fit_corpus_clear(&f.corpus);
        sbx_policy_destroy(f.policy);
        sbx_config_destroy(f.cfg);
        return rc;
}
