/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Cold start, side by side in one run: a sandbox made from nothing by the
 * project's runtime (sbx_runtime_create with the spec the executor uses
 * for a claim's sandbox: ext4 disk image, overlays of the host template,
 * workspace and deps binds, cgroup limits, sbx-agent as init) until its
 * agent answers a ping, under runc and under runsc; against a bare `runc
 * run -d` and `runsc run --detach` (the project's runsc flags: ptrace
 * platform, no network, OCI seccomp, host UDS) of an equivalent minimal
 * bundle, timed until `state` says running and, separately, until the
 * same agent answers. The minimal bundle is the config.json sbx writes for
 * the same spec, but its root is one shared directory (a copy of the host
 * template's root layer) with the host's /usr bound read-only: no disk
 * image, no overlay, no workspace. Every container is deleted right
 * after its trial (the deletes are timed too) and again at the end or on
 * SIGINT/SIGTERM; nothing is left under <var>/run/bench-cold-<pid>.
 * Trials are interleaved, their order rotating every round. Needs root.
 *
 * usage: bench_cold [--runs N] [--warmup N] [--smoke] [--no-runsc]
 *                   [--json FILE] [--var DIR] [--agent PATH]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/client.h"
#include "benchlib.h"
#include "core/config.h"
#include "core/util.h"
#include "runtime/bundle.h"
#include "runtime/fsutil.h"
#include "runtime/rootfs.h"
#include "runtime/runtime.h"
#include "runtime/spawn.h"
#include "runtime/template.h"

/* Rows of the start table, then of the teardown table. */
enum {
        R_SBX_RUNC,
        R_SBX_RUNC_CREATE,
        R_RUNC,
        R_RUNC_AGENT,
        R_SBX_RUNSC,
        R_SBX_RUNSC_CREATE,
        R_RUNSC,
        R_RUNSC_AGENT,
        N_ROWS
};
enum { D_SBX_RUNC, D_RUNC, D_SBX_RUNSC, D_RUNSC, N_DROWS };
/* What one trial does: the kinds rotate within a round. */
enum { T_SBX_RUNC, T_RUNC, T_SBX_RUNSC, T_RUNSC, N_TRIALS };

static const char *const row_names[N_ROWS] = {
    "sbx create (runc) -> agent answers",  "  of which sbx_runtime_create",
    "runc run -d -> state running",        "runc run -d -> agent answers",
    "sbx create (runsc) -> agent answers", "  of which sbx_runtime_create",
    "runsc run -d -> state running",       "runsc run -d -> agent answers",
};
static const char *const row_tags[N_ROWS]   = {"sbx",     "sbx-cr",  "runc",
                                               "runc+ag", "sbx-sc",  "sbxsc-cr",
                                               "runsc",   "runsc+ag"};
static const char *const del_names[N_DROWS] = {
    "sbx_runtime_delete (runc)", "runc delete --force",
    "sbx_runtime_delete (runsc)", "runsc delete --force"};
static const char *const del_tags[N_DROWS] = {"sbx", "runc", "sbx-sc", "runsc"};

typedef struct made_s {
        char id[64];
        int trial;
} made_t;

typedef struct cold_s {
        const char *agent;
        char work[1024], rootfs[1100], runc_root[1100], runsc_root[1100];
        char runc_bin[256], runsc_bin[256];
        sbx_runtime_t *rt;
        sbx_template_t *tmpl;
        int runsc;
        bl_series_t rows[N_ROWS], dels[N_DROWS];
        int record; /* 0 during warm-up */
        made_t *made;
        size_t n_made;
} cold_t;

static const char usage[] =
    "usage: bench_cold [--runs N] [--warmup N] [--smoke] [--no-runsc]\n"
    "                  [--json FILE] [--var DIR] [--agent PATH]\n"
    "  --runs N     timed rounds (default 20); each starts one sandbox of\n"
    "               every kind\n"
    "  --warmup N   untimed rounds first (default 1)\n"
    "  --smoke      3 rounds, no warm-up\n"
    "  --no-runsc   runc only\n"
    "  --json FILE  also write the tables as JSON\n"
    "  --var DIR    state directory (default: the config's var_dir)\n"
    "  --agent PATH the sbx-agent binary (default: the config's)\n";


static void add(bl_series_t *s, int64_t us, int record)
{
        if (record)
                s->v[s->n++] = us;
}

/* Runs a runtime CLI; its output (if @p ret) is kept. 0 if it exited 0. */
static int cli(const char *const *argv,
               int discard,
               sbx_spawn_result_t *ret,
               char *err,
               size_t es)
{
        sbx_spawn_opts_t o = {.timeout_ms     = 60000,
                              .max_output     = 1 << 20,
                              .discard_output = discard};
        sbx_spawn_result_t r;
        if (sbx_spawn_run(argv, &o, &r, err, es))
                return -1;
        if (r.exit_code) {
                size_t last = 0;
                while (argv[last + 1])
                        last++;
                sbx_fmt(err, es, "%s ... %s: exit %d: %s", argv[0], argv[last],
                        r.exit_code, sbx_strtrim(r.err));
                sbx_spawn_result_clear(&r);
                return -1;
        }
        if (ret)
                *ret = r;
        else
                sbx_spawn_result_clear(&r);
        return 0;
}

/* The global flags the project gives the runtime (runtime/runc.c). */
static size_t base_argv(const cold_t *c, int runsc, const char **a)
{
        size_t n = 0;
        a[n++]   = runsc ? c->runsc_bin : c->runc_bin;
        a[n++]   = "--root";
        a[n++]   = runsc ? c->runsc_root : c->runc_root;
        if (runsc) {
                a[n++] = "--platform=ptrace";
                a[n++] = "--network=none";
                a[n++] = "--oci-seccomp";
                a[n++] = "--host-uds=create";
        }
        return n;
}

/* Polls `state` until the container runs (10 s at most). */
static int wait_running(const cold_t *c,
                        int runsc,
                        const char *id,
                        char *err,
                        size_t es)
{
        int64_t until = sbx_mono_us() + 10000000;
        do {
                const char *a[16];
                size_t n = base_argv(c, runsc, a);
                sbx_spawn_result_t r;
                json_t *j;
                int ok;
                a[n++] = "state";
                a[n++] = id;
                a[n]   = NULL;
                if (cli(a, 0, &r, err, es))
                        return -1;
                j  = json_loads(r.out, 0, NULL);
                ok = sbx_streq(json_string_value(json_object_get(j, "status")),
                               "running");
                json_decref(j);
                sbx_spawn_result_clear(&r);
                if (ok)
                        return 0;
        } while (sbx_mono_us() < until);
        sbx_fmt(err, es, "%s: not running after 10 s", id);
        return -1;
}

static int agent_ping(const char *sockdir, char *err, size_t es)
{
        char sock[1200];
        sbx_agent_conn_t *conn;
        int rc;
        sbx_fmt(sock, sizeof(sock), "%s/agent.sock", sockdir);
        conn = sbx_agent_connect(sock, 30000, err, es);
        rc   = conn && !sbx_agent_ping(conn, err, es) ? 0 : -1;
        sbx_agent_close(conn);
        return rc;
}

static const char *new_id(cold_t *c, int trial, int round)
{
        static const char kinds[N_TRIALS] = {'s', 'r', 'S', 'R'};
        made_t *m                         = &c->made[c->n_made++];
        sbx_fmt(m->id, sizeof(m->id), "rtbc-%ld-%c%d", (long)getpid(),
                kinds[trial], round);
        m->trial = trial;
        return m->id;
}

static void spec_init(const cold_t *c,
                      sbx_sandbox_spec_t *s,
                      const char *id,
                      int runsc,
                      const char *sockdir)
{
        static const char *const init[] = {SBX_AGENT_PATH, "--socket",
                                           SBX_AGENT_SOCKET_DIR "/agent.sock",
                                           NULL};
        memset(s, 0, sizeof(*s));
        s->id           = id;
        s->runtime      = runsc ? "runsc" : "runc";
        s->tmpl         = c->tmpl;
        s->cpu_quota_us = 100000;
        s->memory_mb    = 512;
        s->pids_max     = 512;
        s->disk_mb      = 2048;
        s->agent_path   = c->agent;
        s->socket_dir   = sockdir;
        s->argv         = init;
}

/* The project's cold path, as the executor provisions a claim's sandbox. */
static int trial_sbx(cold_t *c, int runsc, int round, char *err, size_t es)
{
        const char *id = new_id(c, runsc ? T_SBX_RUNSC : T_SBX_RUNC, round);
        char sockdir[1200], ws[1200], deps[1200];
        sbx_sandbox_spec_t s;
        int64_t t0, t1, t2;

        spec_init(c, &s, id, runsc,
                  sbx_fmt(sockdir, sizeof(sockdir), "%s/sock/%s", c->work, id));
        s.workspace_dir = sbx_fmt(ws, sizeof(ws), "%s/ws/%s", c->work, id);
        s.deps_dir      = sbx_fmt(deps, sizeof(deps), "%s/deps", c->work);
        t0              = sbx_mono_us();
        if (sbx_runtime_create(c->rt, &s, err, es))
                return -1;
        t1 = sbx_mono_us();
        if (agent_ping(sockdir, err, es))
                return -1;
        t2 = sbx_mono_us();
        add(&c->rows[runsc ? R_SBX_RUNSC : R_SBX_RUNC], t2 - t0, c->record);
        add(&c->rows[runsc ? R_SBX_RUNSC_CREATE : R_SBX_RUNC_CREATE], t1 - t0,
            c->record);
        t0 = sbx_mono_us();
        if (sbx_runtime_delete(c->rt, id, err, es))
                return -1;
        add(&c->dels[runsc ? D_SBX_RUNSC : D_SBX_RUNC], sbx_mono_us() - t0,
            c->record);
        return 0;
}

/* The bare runtime on the minimal bundle (made before the clock starts). */
static int trial_bare(cold_t *c, int runsc, int round, char *err, size_t es)
{
        const char *id = new_id(c, runsc ? T_RUNSC : T_RUNC, round);
        char sockdir[1200], bdir[1200];
        sbx_sandbox_spec_t s;
        sbx_bundle_bind_t binds[8];
        size_t nb = 0, n;
        const char *a[24];
        json_t *cfg;
        int64_t t0, t1, t2;

        sbx_fmt(sockdir, sizeof(sockdir), "%s/sock/%s", c->work, id);
        sbx_fmt(bdir, sizeof(bdir), "%s/bundles/%s", c->work, id);
        if (sbx_fs_mkdirs(sockdir, 0700, 0, 0, err, es) ||
            sbx_fs_mkdirs(bdir, 0700, 0, 0, err, es))
                return -1;
        spec_init(c, &s, id, runsc, sockdir);
        for (size_t i = 0; i < sbx_template_sub_count(c->tmpl) && nb < 8; i++)
                binds[nb++] =
                    (sbx_bundle_bind_t){sbx_template_sub_target(c->tmpl, i),
                                        sbx_template_sub_target(c->tmpl, i), 1};
        cfg = sbx_bundle_config(&(sbx_bundle_t){&s, c->rootfs, binds, nb,
                                                SBX_RUNTIME_CGROUP_PARENT},
                                err, es);
        if (!cfg || sbx_bundle_write(bdir, cfg, err, es)) {
                json_decref(cfg);
                return -1;
        }
        json_decref(cfg);
        n      = base_argv(c, runsc, a);
        a[n++] = "run";
        a[n++] = "--detach";
        a[n++] = "--bundle";
        a[n++] = bdir;
        a[n++] = id;
        a[n]   = NULL;
        t0     = sbx_mono_us();
        if (cli(a, 1, NULL, err, es) || wait_running(c, runsc, id, err, es))
                return -1;
        t1 = sbx_mono_us();
        if (agent_ping(sockdir, err, es))
                return -1;
        t2 = sbx_mono_us();
        add(&c->rows[runsc ? R_RUNSC : R_RUNC], t1 - t0, c->record);
        add(&c->rows[runsc ? R_RUNSC_AGENT : R_RUNC_AGENT], t2 - t0, c->record);
        n      = base_argv(c, runsc, a);
        a[n++] = "delete";
        a[n++] = "--force";
        a[n++] = id;
        a[n]   = NULL;
        t0     = sbx_mono_us();
        if (cli(a, 0, NULL, err, es))
                return -1;
        add(&c->dels[runsc ? D_RUNSC : D_RUNC], sbx_mono_us() - t0, c->record);
        return 0;
}

static int trial(cold_t *c, int t, int round, char *err, size_t es)
{
        switch (t) {
        case T_SBX_RUNC:
                return trial_sbx(c, 0, round, err, es);
        case T_RUNC:
                return trial_bare(c, 0, round, err, es);
        case T_SBX_RUNSC:
                return c->runsc ? trial_sbx(c, 1, round, err, es) : 0;
        default:
                return c->runsc ? trial_bare(c, 1, round, err, es) : 0;
        }
}

static void count_cb(const char *id,
                     const char *runtime,
                     sbx_sandbox_status_t status,
                     int pid,
                     void *opaque)
{
        (void)id;
        (void)runtime;
        (void)status;
        (void)pid;
        ++*(int *)opaque;
}

/* Deletes everything the run made, checks that nothing is listed or left
 * in a cgroup, and removes the work directory. 0 if all is gone. */
static int cleanup(cold_t *c)
{
        char err[1024], cgp[256];
        int bad = 0, left = 0;

        for (size_t i = 0; i < c->n_made; i++) {
                made_t *m = &c->made[i];
                int runsc = m->trial == T_SBX_RUNSC || m->trial == T_RUNSC;
                if (m->trial == T_SBX_RUNC || m->trial == T_SBX_RUNSC) {
                        if (sbx_runtime_delete(c->rt, m->id, err, sizeof(err)))
                                bad = fprintf(stderr, "cleanup: %s\n", err);
                } else {
                        const char *a[16];
                        size_t n = base_argv(c, runsc, a);
                        a[n++]   = "delete";
                        a[n++]   = "--force";
                        a[n++]   = m->id;
                        a[n]     = NULL;
                        cli(a, 0, NULL, err, sizeof(err)); /* may be gone */
                }
                sbx_runtime_cgroup_path(m->id, cgp, sizeof(cgp));
                if (sbx_cgroup_exists(sbx_runtime_cgroup(c->rt), cgp) &&
                    sbx_cgroup_remove(sbx_runtime_cgroup(c->rt), cgp, err,
                                      sizeof(err)))
                        bad = fprintf(stderr, "cleanup: cgroup %s: %s\n", cgp,
                                      err);
        }
        for (int runsc = 0; runsc <= c->runsc; runsc++) {
                const char *a[16];
                size_t n = base_argv(c, runsc, a);
                sbx_spawn_result_t r;
                a[n++] = "list";
                a[n++] = "--quiet";
                a[n]   = NULL;
                if (cli(a, 0, &r, err, sizeof(err)))
                        bad = fprintf(stderr, "cleanup: %s\n", err);
                else {
                        if (*sbx_strtrim(r.out))
                                bad = fprintf(stderr, "cleanup: %s lists: %s\n",
                                              runsc ? "runsc" : "runc", r.out);
                        sbx_spawn_result_clear(&r);
                }
        }
        if (sbx_runtime_list(c->rt, count_cb, &left, err, sizeof(err)) || left)
                bad = fprintf(stderr, "cleanup: runtime lists %d %s\n", left,
                              err);
        sbx_runtime_destroy(c->rt);
        c->rt = NULL;
        if (sbx_rootfs_wipe(c->work, err, sizeof(err)))
                bad = fprintf(stderr, "cleanup: %s\n", err);
        return bad ? -1 : 0;
}

/* The minimal bundle's shared root: a copy of the template's root layer
 * with the agent's bind target made (runsc does not make it). */
static int make_rootfs(cold_t *c, char *err, size_t es)
{
        char bare[1100], target[1200];
        const char *cp[] = {"/bin/cp", "-a", sbx_template_layer(c->tmpl, 0),
                            c->rootfs, NULL};
        sbx_fmt(bare, sizeof(bare), "%s/bare", c->work);
        sbx_fmt(c->rootfs, sizeof(c->rootfs), "%s/rootfs", bare);
        if (sbx_fs_mkdirs(bare, 0700, 0, 0, err, es))
                return -1;
        if (bl_run(cp, NULL, 1)) {
                sbx_fmt(err, es, "cp -a %s %s failed", cp[2], c->rootfs);
                return -1;
        }
        sbx_fmt(target, sizeof(target), "%s%s", c->rootfs, SBX_AGENT_PATH);
        return sbx_fs_write(target, "", 0, 0755, err, es) ? -1 : 0;
}

int main(int argc, char **argv)
{
        static const size_t base[]  = {R_RUNC, R_RUNC_AGENT, R_RUNSC,
                                       R_RUNSC_AGENT};
        static const size_t dbase[] = {D_RUNC, D_RUNSC};
        const char *json_path = NULL, *var = NULL;
        int runs = 20, warmup = 1, no_runsc = 0, i, rc = 1;
        char err[2048], path[1100];
        sbx_config_t *cfg = NULL;
        cold_t c          = {0};
        json_t *json      = NULL;
        int64_t t_start;

        for (i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--runs") && i + 1 < argc)
                        runs = atoi(argv[++i]);
                else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
                        warmup = atoi(argv[++i]);
                else if (!strcmp(argv[i], "--smoke"))
                        runs = 3, warmup = 0;
                else if (!strcmp(argv[i], "--no-runsc"))
                        no_runsc = 1;
                else if (!strcmp(argv[i], "--json") && i + 1 < argc)
                        json_path = argv[++i];
                else if (!strcmp(argv[i], "--var") && i + 1 < argc)
                        var = argv[++i];
                else if (!strcmp(argv[i], "--agent") && i + 1 < argc)
                        c.agent = argv[++i];
                else {
                        fputs(usage, stderr);
                        return 2;
                }
        }
        if (runs < 1 || warmup < 0) {
                fputs(usage, stderr);
                return 2;
        }
        if (sbx_config_load(NULL, &cfg, err, sizeof(err))) {
                fprintf(stderr, "bench_cold: %s\n", err);
                return 1;
        }
        if (!var)
                var = cfg->var_dir;
        if (!c.agent)
                c.agent = cfg->agent_path;
        bl_catch_stop();

        sbx_fmt(c.work, sizeof(c.work), "%s/run/bench-cold-%ld", var,
                (long)getpid());
        sbx_fmt(c.runc_root, sizeof(c.runc_root), "%s/bare-runc", c.work);
        sbx_fmt(c.runsc_root, sizeof(c.runsc_root), "%s/bare-runsc", c.work);
        c.rt = sbx_runtime_new(sbx_fmt(path, sizeof(path), "%s/state", c.work),
                               err, sizeof(err));
        if (!c.rt) {
                fprintf(stderr, "bench_cold: %s\n", err);
                goto done;
        }
        c.tmpl = sbx_template_host_new(
            sbx_fmt(path, sizeof(path), "%s/templates/host", var), err,
            sizeof(err));
        c.runsc = !no_runsc && sbx_runtime_has(c.rt, "runsc") &&
                  sbx_find_bin("runsc", c.runsc_bin, sizeof(c.runsc_bin));
        if (!c.tmpl || !sbx_find_bin("runc", c.runc_bin, sizeof(c.runc_bin)) ||
            sbx_fs_mkdirs(c.runc_root, 0700, 0, 0, err, sizeof(err)) ||
            sbx_fs_mkdirs(c.runsc_root, 0700, 0, 0, err, sizeof(err)) ||
            make_rootfs(&c, err, sizeof(err))) {
                fprintf(stderr, "bench_cold: %s\n", err);
                goto clean;
        }
        for (i = 0; i < N_ROWS; i++)
                c.rows[i] =
                    (bl_series_t){row_names[i], row_tags[i],
                                  sbx_calloc((size_t)runs, sizeof(int64_t)), 0};
        for (i = 0; i < N_DROWS; i++)
                c.dels[i] =
                    (bl_series_t){del_names[i], del_tags[i],
                                  sbx_calloc((size_t)runs, sizeof(int64_t)), 0};
        c.made =
            sbx_calloc((size_t)(runs + warmup) * N_TRIALS, sizeof(*c.made));
        t_start = sbx_mono_us();
        for (i = 0; i < warmup + runs && !bl_stop; i++) {
                c.record = i >= warmup;
                for (int k = 0; k < N_TRIALS && !bl_stop; k++)
                        if (trial(&c, (i + k) % N_TRIALS, i, err,
                                  sizeof(err))) {
                                fprintf(stderr, "bench_cold: %s\n", err);
                                goto clean;
                        }
        }
        if (bl_stop) {
                fprintf(stderr, "bench_cold: interrupted\n");
                goto clean;
        }
        printf(
            "\nbench_cold: %d rounds (+%d warm-up), trials interleaved, "
            "%.1f s; runsc: %s\n",
            runs, warmup, (double)(sbx_mono_us() - t_start) / 1e6,
            c.runsc ? c.runsc_bin : "skipped");
        printf(
            "sbx: sbx_runtime_create as for a claim (2 GiB ext4 image, "
            "overlays of host template %s, workspace + deps binds, 512 MiB, "
            "512 pids, 1 CPU), then agent connect + ping.\n"
            "bare: same config.json, shared root dir (copy of the template's "
            "root layer) + host /usr ro; no disk image, overlay or "
            "workspace.\n",
            sbx_template_digest(c.tmpl));
        bl_table("cold start", c.rows, N_ROWS, base, SBX_ARRAY_SIZE(base));
        bl_table("teardown", c.dels, N_DROWS, dbase, SBX_ARRAY_SIZE(dbase));
        rc = 0;
        if (json_path) {
                json = json_pack("{s:s, s:i, s:i, s:b, s:s, s:[o,o]}", "bench",
                                 "cold", "runs", runs, "warmup", warmup,
                                 "runsc", c.runsc, "template",
                                 sbx_template_digest(c.tmpl), "tables",
                                 bl_table_json("cold start", c.rows, N_ROWS,
                                               base, SBX_ARRAY_SIZE(base)),
                                 bl_table_json("teardown", c.dels, N_DROWS,
                                               dbase, SBX_ARRAY_SIZE(dbase)));
                rc   = bl_json_write(json, json_path) ? 1 : 0;
        }
clean:
        if (cleanup(&c))
                rc = 1;
        else
                printf(
                    "\ncleanup: every container deleted, nothing listed "
                    "under %s\n",
                    c.work);
done:
        json_decref(json);
        for (i = 0; i < N_ROWS; i++)
                free(c.rows[i].v);
        for (i = 0; i < N_DROWS; i++)
                free(c.dels[i].v);
        free(c.made);
        sbx_template_destroy(c.tmpl);
        sbx_runtime_destroy(c.rt);
        sbx_config_destroy(cfg);
        return rc;
}
