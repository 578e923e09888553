/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Density, in two parts.
 *
 * State: the control plane's memory for live aggregates. Whole claim and
 * sandbox lifecycles as bench_projector and tests/unit build them (claim
 * requested ... bound; sandbox created, provisioned, leased, one exec,
 * environment updated), each event Avro-encoded and decoded as a stage
 * receives it and folded by sbx_aggstore_fold into one store, as a
 * processor keeps it. Reported at each count: VmRSS (after malloc_trim)
 * and heap in use (mallinfo2) above the empty store, per aggregate.
 *
 * Sandboxes: warm pool sandboxes made through the runtime API with the
 * executor's pool spec, created in batches up to each count and kept; a
 * sandbox counts once its agent answers. Reported at each count, summed
 * over the sandboxes: their memory cgroups (usage_in_bytes, kmem, stat
 * rss/cache/shmem), the RSS and PSS of the processes in them, host-side
 * processes (outside those cgroups, a sandbox id on the command line:
 * runsc's; none for runc); this process's own memory cgroup (where the
 * runtime's mkfs, mounts and runc are charged) and the host's
 * MemAvailable and SUnreclaim, since before the first sandbox. Every
 * sandbox is deleted at the end or on SIGINT/SIGTERM; nothing is left
 * under <var>/run/bench-density-<pid>. Usage: usage[] below.
 */
#include <dirent.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/client.h"
#include "benchlib.h"
#include "codec/codec.h"
#include "core/aggstore.h"
#include "core/config.h"
#include "core/util.h"
#include "runtime/rootfs.h"
#include "runtime/runtime.h"
#include "stages/registry.h"

#define MAX_LEVELS 8

static const char usage[] =
    "usage: bench_density [--counts 10,100,300] [--aggs 1000,10000,100000]\n"
    "  [--smoke (= --counts 5 --aggs 1000,10000)] [--jobs N (2: sandboxes\n"
    "  made / deleted at once)] [--runtime runc|runsc] [--no-sandboxes]\n"
    "  [--no-state] [--no-codec (fold without the Avro round trip)]\n"
    "  [--settle S (2: wait before measuring)] [--budget S (300: no new\n"
    "  sandbox after it)] [--json FILE] [--var DIR] [--agent PATH]\n";

static _Noreturn void die(const char *what, const char *why)
{
        fprintf(stderr, "bench_density: %s: %s\n", what, why);
        exit(1);
}

static long self_rss_kb(void)
{
        malloc_trim(0);
        return bl_file_num("/proc/self/status", "VmRSS:");
}

typedef struct state_bench_s {
        sbx_codec_t *codec; /* NULL: no round trip */
        sbx_aggstore_t *store;
        int64_t fold_us, events;
        long units;
        char claim[64], session[64], tenant[32]; /* of the unit being fed */
} state_bench_t;

/* Folds @p ev (owned), sent by @p stage, as a stage would receive it. */
static void feed(state_bench_t *b, sbx_event_t *ev, const char *stage)
{
        sbx_event_t *in = ev;
        unsigned char *buf;
        size_t len;
        char err[512];
        int64_t t0;

        sbx_event_set(&ev->producer, stage);
        sbx_event_set(&ev->tenant_id, b->tenant);
        sbx_event_set(&ev->session_id, b->session);
        sbx_event_set(&ev->correlation_id, b->claim);
        if (b->codec) {
                if (sbx_event_encode(b->codec, ev, &buf, &len, err,
                                     sizeof(err)) ||
                    sbx_event_decode(b->codec, buf, len, &in, err, sizeof(err)))
                        die(sbx_evtype_name(ev->type), err);
                free(buf);
        }
        t0 = sbx_mono_us();
        if (sbx_aggstore_fold(b->store, in, (int32_t)(b->units % 12), NULL) !=
            SBX_FOLD_ACCEPTED)
                die(sbx_evtype_name(in->type), "not accepted by the fold");
        b->fold_us += sbx_mono_us() - t0;
        b->events++;
        if (in != ev)
                sbx_event_destroy(in);
        sbx_event_destroy(ev);
}

/* One live claim (bound) and its sandbox (leased, one exec done). */
static void unit(state_bench_t *b)
{
        char u[37], sb[64], req[64], node[32], user[32];
        const char *claim = b->claim;
        int64_t now = sbx_now_us(), s = 0;
        long n = b->units++;
        sbx_event_t *ev;

        sbx_uuid(u);
        sbx_fmt(b->claim, sizeof(b->claim), "c-%s", u);
        sbx_fmt(sb, sizeof(sb), "sb-%.8s-%05lx", u + 24, n);
        sbx_fmt(req, sizeof(req), "req-%s", u);
        sbx_fmt(b->session, sizeof(b->session), "s-%.13s", u);
        sbx_fmt(b->tenant, sizeof(b->tenant), "tenant-%03ld", n % 200);
        sbx_fmt(user, sizeof(user), "user-%05ld", n % 5000);
        sbx_fmt(node, sizeof(node), "node-%02ld", n % 16);
#define C(t, p, stage) feed(b, sbx_event_new(t, claim, ++s, p), stage)
        C(SBX_EV_CLAIM_REQUESTED,
          json_pack("{s:s, s:s, s:{s:s}}", "request_id", req, "user_id", user,
                    "task", "text", "load sales.xlsx and total by region"),
          "intake/sbxd-1");
        C(SBX_EV_PLAN_PROPOSED,
          json_pack("{s:s, s:s, s:s, s:{s:s, s:f, s:I, s:I, s:f, s:s}}",
                    "planner", "rules", "input_hash", "0123abcd", "signature",
                    "python-data", "intent", "workload", "python-data-analysis",
                    "cpu", 1.0, "memory_mb", (json_int_t)2048, "disk_gb",
                    (json_int_t)10, "confidence", 0.9, "reason",
                    "signals: python, xlsx"),
          "planner/sbxd-1");
        C(SBX_EV_PLAN_APPROVED,
          json_pack("{s:s, s:f, s:I, s:I, s:s, s:s, s:s, s:I, s:[s]}",
                    "resource_class", "python-small", "cpu", 1.0, "memory_mb",
                    (json_int_t)2048, "disk_gb", (json_int_t)10,
                    "network_profile", "none", "template", "host", "runtime",
                    "runc", "ttl_seconds", (json_int_t)1800, "reasons",
                    "fits python-small"),
          "guard/sbxd-1");
        C(SBX_EV_PLACED,
          json_pack("{s:s, s:s}", "node_id", node, "sandbox_id", sb),
          "scheduler/sbxd-1");
        C(SBX_EV_CLAIM_BOUND,
          json_pack("{s:s, s:s, s:I, s:I}", "sandbox_id", sb, "node_id", node,
                    "lease_version", (json_int_t)1, "lease_expires_at",
                    (json_int_t)(now + 300000000)),
          "scheduler/sbxd-1");
#undef C
        s = 0;
#define S(t, p, f)                                                             \
        (ev = sbx_event_new(t, sb, ++s, p), ev->lease_version = f ? 1 : -1,    \
         feed(b, ev, "executor/node"))
        S(SBX_EV_SANDBOX_CREATED,
          json_pack(
              "{s:s, s:s, s:s, s:s, s:s, s:s, s:f, s:I, s:s}", "origin",
              "claim", "node_id", node, "resource_class", "python-small",
              "template", "host", "template_digest",
              "sha256:5f2b8c1e9a7d4b3c6e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d"
              "7e8f9a0b1c2d",
              "runtime", "runc", "cpu", 1.0, "memory_mb", (json_int_t)2048,
              "claim_id", claim),
          0);
        S(SBX_EV_PROVISIONED,
          json_pack("{s:s, s:I}", "runtime_instance", sb, "startup_us",
                    (json_int_t)180000),
          0);
        S(SBX_EV_LEASE_GRANTED,
          json_pack("{s:s, s:I, s:I}", "owner", claim, "lease_version",
                    (json_int_t)1, "expires_at", (json_int_t)(now + 300000000)),
          1);
        S(SBX_EV_EXEC_REQUESTED,
          json_pack("{s:s, s:[s,s,s]}", "exec_id", "e-1", "argv", "python3",
                    "-c", "print(1+1)"),
          1);
        S(SBX_EV_EXEC_STARTED, json_pack("{s:s}", "exec_id", "e-1"), 1);
        S(SBX_EV_EXEC_FINISHED,
          json_pack("{s:s, s:i, s:s, s:{s:I, s:I, s:I, s:I}}", "exec_id", "e-1",
                    "exit_code", 0, "stdout", "2\n", "usage", "wall_us",
                    (json_int_t)20000, "cpu_user_us", (json_int_t)15000,
                    "cpu_sys_us", (json_int_t)2000, "peak_memory_bytes",
                    (json_int_t)(40 << 20)),
          1);
        S(SBX_EV_ENVIRONMENT_UPDATED,
          json_pack("{s:{s:s, s:s, s:i, s:[{s:s,s:s},{s:s,s:s},{s:s,s:s}]}}",
                    "manifest", "template_digest", "sha256:host", "fingerprint",
                    "env-3f9a1c", "dirty_level", 1, "installed_capabilities",
                    "name", "pandas", "version", "2.2.2", "name", "openpyxl",
                    "version", "3.1.2", "name", "numpy", "version", "1.26.4"),
          0);
#undef S
}

static json_t *bench_state(const long *aggs, size_t n, int codec)
{
        state_bench_t b = {0};
        json_t *rows    = json_array();
        char err[512];
        long rss0;
        size_t heap0;
        int64_t t0 = sbx_mono_us();
        int procs  = 0;

        if (codec && !(b.codec = sbx_codec_new(err, sizeof(err))))
                die("codec", err);
        b.store = sbx_aggstore_new();
        rss0    = self_rss_kb();
        heap0   = mallinfo2().uordblks;
        printf(
            "\n### control-plane state: one aggregate store, live "
            "aggregates (half claims bound, half sandboxes leased)\n\n"
            "events: %s; VmRSS after malloc_trim(0) and heap in use "
            "(mallinfo2 uordblks), as deltas from the empty store "
            "(VmRSS %ld KiB, heap %zu KiB)\n\n",
            codec ? "Avro encode + decode, then sbx_aggstore_fold"
                  : "built in memory, then sbx_aggstore_fold",
            rss0, heap0 >> 10);
        printf(
            "| aggregates | events | VmRSS delta MiB | B/agg (RSS) | "
            "heap delta MiB | B/agg (heap) | fold us/event | build s |\n"
            "|---|---|---|---|---|---|---|---|\n");
        for (size_t i = 0; i < n && !bl_stop; i++) {
                while (sbx_aggstore_count(b.store) < (size_t)aggs[i] &&
                       !bl_stop)
                        unit(&b);
                double cnt  = (double)sbx_aggstore_count(b.store);
                double rss  = (double)(self_rss_kb() - rss0) * 1024.0;
                double heap = (double)mallinfo2().uordblks - (double)heap0;
                double fold = (double)b.fold_us / (double)b.events;
                printf(
                    "| %.0f | %ld | %.1f | %.0f | %.1f | %.0f | %.2f | %.1f "
                    "|\n",
                    cnt, (long)b.events, rss / 1048576.0, rss / cnt,
                    heap / 1048576.0, heap / cnt, fold,
                    (double)(sbx_mono_us() - t0) / 1e6);
                json_array_append_new(
                    rows,
                    json_pack("{s:f, s:I, s:f, s:f, s:f, s:f, s:f}",
                              "aggregates", cnt, "events", (json_int_t)b.events,
                              "vmrss_delta_bytes", rss, "heap_delta_bytes",
                              heap, "bytes_per_agg_rss", rss / cnt,
                              "bytes_per_agg_heap", heap / cnt,
                              "fold_us_per_event", fold));
        }
        printf(
            "\nsbxd's default stages that run a processor, each holding "
            "such a store of every aggregate it reads:");
        for (int i = 0; sbx_default_stages[i]; i++)
                if (!sbx_default_stages[i]->loop) {
                        printf(" %s", sbx_default_stages[i]->name);
                        procs++;
                }
        printf(" (%d)\n", procs);
        sbx_aggstore_destroy(b.store);
        sbx_codec_destroy(b.codec);
        malloc_trim(0); /* before the sandboxes measure this process */
        return json_pack("{s:b, s:i, s:o}", "codec", codec, "processor_stages",
                         procs, "levels", rows);
}

typedef struct dens_s {
        sbx_runtime_t *rt;
        sbx_template_t *tmpl;
        const char *agent, *runtime, *memcg;
        char work[1024], prefix[48], selfcg[1200];
        int64_t *us;      /* by sandbox index: create (or delete) time */
        atomic_long next; /* next index to take */
        long upto;        /* the batch ends before it */
        long made;        /* creates begun: cleanup deletes [0, made) */
        int deleting, jobs;
        int64_t deadline;  /* no new create after it (monotonic µs) */
        atomic_int failed; /* the first failure writes err */
        char err[1024];
} dens_t;

/* Host-wide memory: MemAvailable and SUnreclaim (kB), and the usage of
 * this process's own memory cgroup, where the runtime's host-side work
 * (mkfs, loop devices, mounts, runc) is charged (bytes). */
typedef struct host_s {
        long long avail_kb, sunr_kb, cg_bytes;
} host_t;

/* Now minus @p since (NULL: zero). */
static host_t host_rise(const dens_t *d, const host_t *since)
{
        host_t z = {0}, *o = since ? (host_t *)since : &z;
        return (host_t){
            bl_file_num("/proc/meminfo", "MemAvailable:") - o->avail_kb,
            bl_file_num("/proc/meminfo", "SUnreclaim:") - o->sunr_kb,
            bl_file_num(d->selfcg, "") - o->cg_bytes};
}

/* Sums over the sandboxes: their memory cgroups, the processes in them
 * and their host-side processes (names as in the JSON). */
enum {
        CG_USAGE,
        CG_KMEM,
        CG_RSS,
        CG_CACHE,
        CG_SHMEM,
        PROCS,
        PROCS_RSS,
        PROCS_PSS,
        HOST_PROCS,
        HOST_RSS,
        HOST_PSS,
        N_SUMS
};
static const char *const sum_names[N_SUMS] = {
    "cg_usage_bytes", "cg_kmem_bytes", "cg_rss_bytes",  "cg_cache_bytes",
    "cg_shmem_bytes", "procs",         "procs_rss_kib", "procs_pss_kib",
    "host_procs",     "host_rss_kib",  "host_pss_kib"};

/* Where the CG_ sums come from, in the sandbox's memory cgroup. */
static const char *const cg_files[CG_SHMEM + 1][2] = {
    {"memory.usage_in_bytes", ""},
    {"memory.kmem.usage_in_bytes", ""},
    {"memory.stat", "rss "},
    {"memory.stat", "cache "},
    {"memory.stat", "shmem "}};

typedef struct level_s {
        long count;
        double wall_s;
        long long sum[N_SUMS];
        host_t rise; /* host-wide, since before the first sandbox */
} level_t;

static char *sb_id(const dens_t *d, long i, char *buf, size_t n)
{
        return sbx_fmt(buf, n, "%s%ld", d->prefix, i);
}

static int create_one(dens_t *d, long i, char *err, size_t es)
{
        static const char *const init[] = {SBX_AGENT_PATH, "--socket",
                                           SBX_AGENT_SOCKET_DIR "/agent.sock",
                                           NULL};
        char id[64], sockdir[1200], sock[1300];
        sbx_sandbox_spec_t s = {.id             = sb_id(d, i, id, sizeof(id)),
                                .runtime        = d->runtime,
                                .tmpl           = d->tmpl,
                                .cpu_quota_us   = 100000,
                                .memory_mb      = 512,
                                .pids_max       = 512,
                                .disk_mb        = 2048,
                                .workspace_late = 1,
                                .agent_path     = d->agent,
                                .socket_dir     = sockdir,
                                .argv           = init};
        sbx_agent_conn_t *conn;
        int64_t t0 = sbx_mono_us();

        sbx_fmt(sockdir, sizeof(sockdir), "%s/sock/%s", d->work, id);
        if (sbx_runtime_create(d->rt, &s, err, es))
                return -1;
        conn = sbx_agent_connect(
            sbx_fmt(sock, sizeof(sock), "%s/agent.sock", sockdir), 30000, err,
            es);
        if (!conn || sbx_agent_ping(conn, err, es)) {
                sbx_agent_close(conn);
                return -1;
        }
        sbx_agent_close(conn);
        d->us[i] = sbx_mono_us() - t0;
        return 0;
}

static void *worker(void *opaque)
{
        dens_t *d = opaque;
        char err[1024], id[64];

        while (d->deleting || !atomic_load(&d->failed)) {
                long i = atomic_fetch_add(&d->next, 1);
                int rc;
                if (i >= d->upto ||
                    (!d->deleting && (bl_stop || sbx_mono_us() > d->deadline)))
                        break;
                if (d->deleting) {
                        int64_t t0 = sbx_mono_us();
                        sb_id(d, i, id, sizeof(id));
                        rc = sbx_runtime_delete(d->rt, id, err, sizeof(err));
                        d->us[i] = sbx_mono_us() - t0;
                } else
                        rc = create_one(d, i, err, sizeof(err));
                if (rc && !atomic_exchange(&d->failed, 1))
                        sbx_fmt(d->err, sizeof(d->err), "%s", err);
        }
        return NULL;
}

/* Creates (or deletes) sandboxes [from, to) with d->jobs threads; returns
 * the end of what was taken: [from, that) were all tried. */
static long batch(dens_t *d, long from, long to, int deleting)
{
        pthread_t th[64];
        int n = d->jobs < 64 ? d->jobs : 64;

        atomic_store(&d->next, from);
        d->upto     = to;
        d->deleting = deleting;
        for (int i = 0; i < n; i++)
                pthread_create(&th[i], NULL, worker, d);
        for (int i = 0; i < n; i++)
                pthread_join(th[i], NULL);
        return atomic_load(&d->next) < to ? atomic_load(&d->next) : to;
}

static int pid_cmp(const void *a, const void *b)
{
        return (*(const int *)a > *(const int *)b) -
               (*(const int *)a < *(const int *)b);
}

/* Adds the number after @p key in file @p file of sandbox @p id's memory
 * cgroup to *sum. */
static void cg_add(const dens_t *d,
                   const char *id,
                   const char *file,
                   const char *key,
                   long long *sum)
{
        char path[1400];
        long long v = bl_file_num(
            sbx_fmt(path, sizeof(path), "%s/sbx/%s/%s", d->memcg, id, file),
            key);
        *sum += v > 0 ? v : 0;
}

static void proc_mem(int pid, long long *rss, long long *pss)
{
        char path[64];
        long long v = bl_file_num(
            sbx_fmt(path, sizeof(path), "/proc/%d/status", pid), "VmRSS:");
        *rss += v > 0 ? v : 0;
        v = bl_file_num(
            sbx_fmt(path, sizeof(path), "/proc/%d/smaps_rollup", pid), "Pss:");
        *pss += v > 0 ? v : 0;
}

/* Sums the cgroups and processes of sandboxes [0, lv->count). */
static void measure(const dens_t *d, level_t *lv)
{
        int *pids = NULL;
        size_t np = 0, cap = 0;
        char path[1400], id[64], *s;
        DIR *dir;
        struct dirent *de;

        for (long i = 0; i < lv->count; i++) {
                sb_id(d, i, id, sizeof(id));
                for (int k = CG_USAGE; k <= CG_SHMEM; k++)
                        cg_add(d, id, cg_files[k][0], cg_files[k][1],
                               &lv->sum[k]);
                sbx_fmt(path, sizeof(path), "%s/sbx/%s/cgroup.procs", d->memcg,
                        id);
                if (!sbx_read_file(path, 1 << 20, &s, NULL, NULL, 0)) {
                        for (char *p = s, *e; *p; p = e) {
                                long pid = strtol(p, &e, 10);
                                if (e == p)
                                        break;
                                if (np == cap)
                                        pids = sbx_realloc(
                                            pids, (cap = cap ? cap * 2 : 256) *
                                                      sizeof(*pids));
                                pids[np++] = (int)pid;
                                lv->sum[PROCS]++;
                                proc_mem((int)pid, &lv->sum[PROCS_RSS],
                                         &lv->sum[PROCS_PSS]);
                        }
                        free(s);
                }
        }
        qsort(pids, np, sizeof(*pids), pid_cmp);
        /* host-side helpers: a sandbox id on the command line, outside
         * every sandbox cgroup */
        dir = opendir("/proc");
        while (dir && (de = readdir(dir))) {
                int pid = atoi(de->d_name);
                size_t len;
                if (pid <= 0 || pid == getpid() ||
                    (np && bsearch(&pid, pids, np, sizeof(*pids), pid_cmp)))
                        continue;
                sbx_fmt(path, sizeof(path), "/proc/%d/cmdline", pid);
                if (sbx_read_file(path, 1 << 16, &s, &len, NULL, 0))
                        continue;
                for (size_t k = 0; k + 1 < len; k++)
                        if (!s[k])
                                s[k] = ' ';
                if (strstr(s, d->prefix)) {
                        lv->sum[HOST_PROCS]++;
                        proc_mem(pid, &lv->sum[HOST_RSS], &lv->sum[HOST_PSS]);
                }
                free(s);
        }
        if (dir)
                closedir(dir);
        free(pids);
}

/* The run's state root is its own: whatever is listed is left over. */
static void count_cb(const char *id,
                     const char *runtime,
                     sbx_sandbox_status_t status,
                     int pid,
                     void *opaque)
{
        (void)id, (void)runtime, (void)status, (void)pid;
        ++*(int *)opaque;
}

/* Deletes sandboxes [0, d->made) and checks that none is left. */
static int teardown(dens_t *d, json_t *out)
{
        char err[1024];
        int bad = 0, left = 0;
        int64_t t0      = sbx_mono_us();
        bl_series_t del = {"delete (sbx_runtime_delete)", "delete", d->us, 0};

        atomic_store(&d->failed, 0);
        memset(d->us, 0, sizeof(*d->us) * (size_t)(d->made ? d->made : 1));
        batch(d, 0, d->made, 1);
        if (atomic_load(&d->failed))
                bad = fprintf(stderr, "teardown: %s\n", d->err);
        del.n = (size_t)d->made;
        printf("\nteardown: %ld sandboxes deleted in %.1f s (%d jobs)\n",
               d->made, (double)(sbx_mono_us() - t0) / 1e6, d->jobs);
        if (d->made) {
                bl_table("delete warm sandbox", &del, 1, NULL, 0);
                json_object_set_new(
                    out, "teardown",
                    bl_table_json("delete warm sandbox", &del, 1, NULL, 0));
        }
        if (sbx_runtime_list(d->rt, count_cb, &left, err, sizeof(err)) || left)
                bad =
                    fprintf(stderr, "teardown: %d sandboxes still listed %s\n",
                            left, err);
        sbx_runtime_destroy(d->rt);
        d->rt = NULL;
        if (sbx_rootfs_wipe(d->work, err, sizeof(err)))
                bad = fprintf(stderr, "teardown: %s\n", err);
        if (!bad)
                printf("cleanup: nothing listed, %s removed\n", d->work);
        return bad ? -1 : 0;
}

static json_t *level_json(const level_t *lv)
{
        json_t *j =
            json_pack("{s:I, s:f, s:I, s:I, s:I}", "sandboxes",
                      (json_int_t)lv->count, "batch_wall_s", lv->wall_s,
                      "memavailable_drop_kib", (json_int_t)-lv->rise.avail_kb,
                      "sunreclaim_rise_kib", (json_int_t)lv->rise.sunr_kb,
                      "self_cgroup_rise_bytes", (json_int_t)lv->rise.cg_bytes);
        for (int k = 0; k < N_SUMS; k++)
                json_object_set_new(j, sum_names[k], json_integer(lv->sum[k]));
        return j;
}

static void print_levels(const level_t *lv, size_t n)
{
#define PER(x) ((double)(x) / (double)lv[i].count)
        printf(
            "\n### memory per warm sandbox: cgroups (KiB per sandbox, "
            "summed over the sandboxes' memory cgroups)\n\n"
            "| sandboxes | usage_in_bytes | of it kmem | stat rss | stat "
            "cache | stat shmem | total usage MiB |\n"
            "|---|---|---|---|---|---|---|\n");
        for (size_t i = 0; i < n; i++) {
                printf("| %ld |", lv[i].count);
                for (int k = CG_USAGE; k <= CG_SHMEM; k++)
                        printf(" %.0f |", PER(lv[i].sum[k]) / 1024);
                printf(" %.1f |\n", (double)lv[i].sum[CG_USAGE] / 1048576.0);
        }
        printf(
            "\n### memory per warm sandbox: processes and host (KiB per "
            "sandbox; host-wide columns move with anything else running on "
            "the host, a negative drop means it grew)\n\n"
            "| sandboxes | procs in cgroups | their RSS | their PSS | "
            "host-side procs | their RSS | this process's cgroup rise | "
            "SUnreclaim rise | MemAvailable drop | MemAvailable drop MiB "
            "|\n|---|---|---|---|---|---|---|---|---|---|\n");
        for (size_t i = 0; i < n; i++)
                printf(
                    "| %ld | %lld | %.0f | %.0f | %lld | %.0f | %.0f | %.0f | "
                    "%.0f | %.1f |\n",
                    lv[i].count, lv[i].sum[PROCS], PER(lv[i].sum[PROCS_RSS]),
                    PER(lv[i].sum[PROCS_PSS]), lv[i].sum[HOST_PROCS],
                    PER(lv[i].sum[HOST_RSS]), PER(lv[i].rise.cg_bytes) / 1024,
                    PER(lv[i].rise.sunr_kb), PER(-lv[i].rise.avail_kb),
                    (double)-lv[i].rise.avail_kb / 1024.0);
#undef PER
}

typedef struct opts_s {
        long counts[MAX_LEVELS], aggs[MAX_LEVELS];
        size_t nc, na;
        int jobs, settle, budget, no_sb, no_state, codec;
        const char *json, *var, *agent, *runtime;
} opts_t;

static json_t *bench_sandboxes(const opts_t *o)
{
        dens_t d = {.agent = o->agent, .runtime = o->runtime, .jobs = o->jobs};
        const long *counts = o->counts;
        size_t n           = o->nc;
        level_t lv[MAX_LEVELS];
        bl_series_t rows[MAX_LEVELS];
        char err[1024], path[1100], names[MAX_LEVELS][96], tags[MAX_LEVELS][8];
        json_t *out = json_object(), *levels = json_array();
        host_t h0, h1;
        long from                  = 0;
        char *cgl                  = NULL, *m;
        size_t nl                  = 0;
        int64_t t00                = sbx_mono_us();
        static const size_t base[] = {0};

        memset(lv, 0, sizeof(lv));
        sbx_fmt(d.work, sizeof(d.work), "%s/run/bench-density-%ld", o->var,
                (long)getpid());
        sbx_fmt(d.prefix, sizeof(d.prefix), "rtbd-%ld-", (long)getpid());
        d.rt = sbx_runtime_new(sbx_fmt(path, sizeof(path), "%s/state", d.work),
                               err, sizeof(err));
        if (!d.rt ||
            !(d.tmpl = sbx_template_host_new(
                  sbx_fmt(path, sizeof(path), "%s/templates/host", o->var), err,
                  sizeof(err)))) {
                fprintf(stderr, "bench_density: %s\n", err);
                exit(1);
        }
        d.memcg    = sbx_cgroup_mount(sbx_runtime_cgroup(d.rt), "memory");
        d.us       = sbx_calloc((size_t)counts[n - 1] + 1, sizeof(*d.us));
        d.deadline = t00 + (int64_t)o->budget * 1000000;
        if (!sbx_read_file("/proc/self/cgroup", 1 << 16, &cgl, NULL, NULL, 0) &&
            (m = strstr(cgl, ":memory:")))
                sbx_fmt(d.selfcg, sizeof(d.selfcg),
                        "%s%.*s/memory.usage_in_bytes", d.memcg,
                        (int)strcspn(m + 8, "\n"), m + 8);
        free(cgl);
        h0 = host_rise(&d, NULL);
        printf(
            "\n### warm sandboxes (%s, %d jobs): create -> agent answers, "
            "by batch\n\nbefore: MemAvailable %ld MiB; creating until "
            "%ld, budget %d s for creation\n",
            o->runtime, o->jobs, (long)(h0.avail_kb >> 10), counts[n - 1],
            o->budget);
        for (size_t k = 0; k < n && !bl_stop && !atomic_load(&d.failed); k++) {
                int64_t t0 = sbx_mono_us();
                long end = batch(&d, from, counts[k], 0), got = from;
                d.made = end > d.made ? end : d.made;
                while (got < end && d.us[got])
                        got++;
                if (got == from)
                        break;
                lv[nl].count  = got;
                lv[nl].wall_s = (double)(sbx_mono_us() - t0) / 1e6;
                sbx_fmt(names[nl], sizeof(names[nl]),
                        "batch %ld..%ld (%ld new), %.1f s", from + 1, got,
                        got - from, lv[nl].wall_s);
                sbx_fmt(tags[nl], sizeof(tags[nl]), "b%zu", nl + 1);
                rows[nl] = (bl_series_t){names[nl], tags[nl], d.us + from,
                                         (size_t)(got - from)};
                printf("%ld sandboxes in %.1f s\n", got, lv[nl].wall_s);
                if (o->settle)
                        sleep((unsigned)o->settle);
                measure(&d, &lv[nl]);
                lv[nl].rise = host_rise(&d, &h0);
                json_array_append_new(levels, level_json(&lv[nl]));
                from = got;
                nl++;
                if (got < counts[k])
                        break; /* out of time */
        }
        if (atomic_load(&d.failed))
                fprintf(stderr, "bench_density: create: %s\n", d.err);
        if (bl_stop)
                fprintf(stderr, "bench_density: interrupted\n");
        if (nl) {
                bl_table("create warm sandbox -> agent answers", rows, nl, base,
                         1);
                print_levels(lv, nl);
                json_object_set_new(out, "create",
                                    bl_table_json("create warm sandbox -> "
                                                  "agent answers",
                                                  rows, nl, base, 1));
        }
        printf("\ncreation: %ld sandboxes in %.1f s\n",
               nl ? lv[nl - 1].count : 0, (double)(sbx_mono_us() - t00) / 1e6);
        json_object_set_new(out, "runtime", json_string(o->runtime));
        json_object_set_new(out, "jobs", json_integer(o->jobs));
        json_object_set_new(out, "levels", levels);
        h1 = host_rise(&d, NULL);
        if (teardown(&d, out) || atomic_load(&d.failed) || bl_stop)
                json_object_set_new(out, "failed", json_true());
        if (nl) { /* what the teardown gave back */
                host_t back = host_rise(&d, &h1);
                double c    = (double)lv[nl - 1].count;
                printf(
                    "teardown gave back, per sandbox: MemAvailable %.0f "
                    "KiB, SUnreclaim %.0f KiB, this process's cgroup %.0f "
                    "KiB\n",
                    (double)back.avail_kb / c, (double)-back.sunr_kb / c,
                    (double)-back.cg_bytes / 1024.0 / c);
                json_object_set_new(
                    out, "teardown_gave_back",
                    json_pack("{s:I, s:I, s:I}", "memavailable_kib",
                              (json_int_t)back.avail_kb, "sunreclaim_kib",
                              (json_int_t)-back.sunr_kb, "self_cgroup_bytes",
                              (json_int_t)-back.cg_bytes));
        }
        json_object_set_new(out, "total_s",
                            json_real((double)(sbx_mono_us() - t00) / 1e6));
        free(d.us);
        sbx_template_destroy(d.tmpl);
        return out;
}

int main(int argc, char **argv)
{
        opts_t o = {{10, 100, 300},
                    {1000, 10000, 100000},
                    3,
                    3,
                    2,
                    2,
                    300,
                    0,
                    0,
                    1,
                    NULL,
                    NULL,
                    NULL,
                    "runc"};
        sbx_config_t *cfg;
        char err[1024];
        json_t *json;
        int i, rc = 0;
        int64_t t0 = sbx_mono_us();

        for (i = 1; i < argc; i++) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                if (!strcmp(a, "--smoke")) {
                        o.counts[0] = 5, o.nc = 1;
                        o.aggs[0] = 1000, o.aggs[1] = 10000, o.na = 2;
                } else if (!strcmp(a, "--no-sandboxes"))
                        o.no_sb = 1;
                else if (!strcmp(a, "--no-state"))
                        o.no_state = 1;
                else if (!strcmp(a, "--no-codec"))
                        o.codec = 0;
                else if (!v)
                        o.nc = 0;
                else if (++i && !strcmp(a, "--counts"))
                        o.nc = bl_parse_list(v, o.counts, MAX_LEVELS);
                else if (!strcmp(a, "--aggs"))
                        o.na = bl_parse_list(v, o.aggs, MAX_LEVELS);
                else if (!strcmp(a, "--jobs"))
                        o.jobs = atoi(v);
                else if (!strcmp(a, "--settle"))
                        o.settle = atoi(v);
                else if (!strcmp(a, "--budget"))
                        o.budget = atoi(v);
                else if (!strcmp(a, "--runtime"))
                        o.runtime = v;
                else if (!strcmp(a, "--json"))
                        o.json = v;
                else if (!strcmp(a, "--var"))
                        o.var = v;
                else if (!strcmp(a, "--agent"))
                        o.agent = v;
                else
                        o.nc = 0;
        }
        for (size_t k = 1; k < o.nc; k++)
                if (o.counts[k] <= o.counts[k - 1])
                        o.nc = 0;
        if (!o.nc || !o.na || o.jobs < 1 || o.settle < 0 || o.budget < 1 ||
            (strcmp(o.runtime, "runc") && strcmp(o.runtime, "runsc"))) {
                fputs(usage, stderr);
                return 2;
        }
        if (sbx_config_load(NULL, &cfg, err, sizeof(err))) {
                fprintf(stderr, "bench_density: %s\n", err);
                return 1;
        }
        o.var   = o.var ? o.var : cfg->var_dir;
        o.agent = o.agent ? o.agent : cfg->agent_path;
        bl_catch_stop();
        json = json_pack("{s:s}", "bench", "density");
        if (!o.no_state)
                json_object_set_new(json, "state",
                                    bench_state(o.aggs, o.na, o.codec));
        if (!o.no_sb && !bl_stop) {
                json_t *sb = bench_sandboxes(&o);
                rc = json_is_true(json_object_get(sb, "failed")) ? 1 : 0;
                json_object_set_new(json, "sandboxes", sb);
        }
        printf("\nbench_density: %.1f s in all\n",
               (double)(sbx_mono_us() - t0) / 1e6);
        if (o.json && bl_json_write(json, o.json))
                rc = 1;
        json_decref(json);
        sbx_config_destroy(cfg);
        return bl_stop ? 1 : rc;
}
