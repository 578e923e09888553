/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Exec round trip, side by side in one run: the same command through
 * sbx-agent in a running runc sandbox (the executor's hot path), through
 * `runc exec` into the same sandbox, and as a bare posix_spawn + wait on
 * the host. Prints count, p50, p90, p99, max and the ratio of each to the
 * bare spawn. Needs root (it starts a real sandbox under var/).
 *
 * usage: bench_exec [--runs N] [--var DIR] [--agent PATH] [CMD ARG...]
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/client.h"
#include "core/config.h"
#include "core/util.h"
#include "runtime/runtime.h"
#include "runtime/template.h"

extern char **environ;

static int cmp64(const void *a, const void *b)
{
        int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
        return (x > y) - (x < y);
}

static double at(const int64_t *v, int n, double p)
{
        int i = (int)(p * (n - 1) + 0.5);
        return (double)v[i] / 1000.0;
}

static void row(const char *name, int64_t *v, int n, double base_p50)
{
        qsort(v, (size_t)n, sizeof(*v), cmp64);
        printf("| %-26s | %4d | %8.2f | %8.2f | %8.2f | %8.2f | %6.1fx |\n",
               name, n, at(v, n, .5), at(v, n, .9), at(v, n, .99),
               (double)v[n - 1] / 1000.0,
               base_p50 > 0 ? at(v, n, .5) / base_p50 : 1.0);
}

int main(int argc, char **argv)
{
        const char *def[] = {"/bin/true", NULL};
        const char *const *cmd = def;
        const char *envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", NULL};
        int runs = 50, i, rc = 1;
        sbx_config_t *cfg = NULL;
        char err[1024], path[2048], sockdir[2048], sock[2100];
        sbx_runtime_t *rt = NULL;
        sbx_template_t *tmpl = NULL;
        sbx_agent_conn_t *conn = NULL;
        int64_t *bare, *agent, *runc;
        const char *init[] = {SBX_AGENT_PATH, "--socket",
                              SBX_AGENT_SOCKET_DIR "/agent.sock", NULL};
        sbx_sandbox_spec_t spec;
        char id[64];

        if (sbx_config_load(NULL, &cfg, err, sizeof(err))) {
                fprintf(stderr, "bench_exec: %s\n", err);
                return 1;
        }
        for (i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--runs") && i + 1 < argc)
                        runs = atoi(argv[++i]);
                else {
                        cmd = (const char *const *)&argv[i];
                        break;
                }
        }
        if (runs < 2)
                runs = 2;
        bare = sbx_calloc((size_t)runs, sizeof(*bare));
        agent = sbx_calloc((size_t)runs, sizeof(*agent));
        runc = sbx_calloc((size_t)runs, sizeof(*runc));

        rt = sbx_runtime_new(sbx_fmt(path, sizeof(path), "%s/run/bench",
                                     cfg->var_dir),
                             err, sizeof(err));
        if (rt)
                tmpl = sbx_template_host_new(
                    sbx_fmt(path, sizeof(path), "%s/templates/host",
                            cfg->var_dir),
                    err, sizeof(err));
        if (!rt || !tmpl) {
                fprintf(stderr, "bench_exec: %s\n", err);
                goto done;
        }
        sbx_fmt(id, sizeof(id), "bench-exec-%ld", (long)getpid());
        sbx_fmt(sockdir, sizeof(sockdir), "%s/run/bench/sock-%s",
                cfg->var_dir, id);
        mkdir(sockdir, 0700);
        memset(&spec, 0, sizeof(spec));
        spec.id = id;
        spec.tmpl = tmpl;
        spec.memory_mb = 512;
        spec.pids_max = 256;
        spec.agent_path = cfg->agent_path;
        spec.socket_dir = sockdir;
        spec.argv = init;
        if (sbx_runtime_create(rt, &spec, err, sizeof(err))) {
                fprintf(stderr, "bench_exec: create: %s\n", err);
                goto done;
        }
        sbx_fmt(sock, sizeof(sock), "%s/agent.sock", sockdir);
        conn = sbx_agent_connect(sock, 10000, err, sizeof(err));
        if (!conn) {
                fprintf(stderr, "bench_exec: agent: %s\n", err);
                goto cleanup;
        }
        for (i = 0; i < runs; i++) {
                pid_t pid;
                int st;
                sbx_agent_exec_req_t req;
                sbx_agent_exit_t ex;
                sbx_runc_exec_result_t rr;
                int64_t t0 = sbx_mono_us();

                if (posix_spawn(&pid, cmd[0], NULL, NULL, (char **)cmd,
                                (char **)envp) == 0)
                        waitpid(pid, &st, 0);
                bare[i] = sbx_mono_us() - t0;

                memset(&req, 0, sizeof(req));
                req.argv = cmd;
                req.envp = envp;
                req.deadline_ms = 10000;
                t0 = sbx_mono_us();
                if (sbx_agent_exec(conn, &req, NULL, &ex, err, sizeof(err))) {
                        fprintf(stderr, "bench_exec: agent exec: %s\n", err);
                        goto cleanup;
                }
                agent[i] = sbx_mono_us() - t0;

                memset(&rr, 0, sizeof(rr));
                t0 = sbx_mono_us();
                if (sbx_runtime_exec(rt, id, cmd, NULL, &rr, err,
                                     sizeof(err))) {
                        fprintf(stderr, "bench_exec: runc exec: %s\n", err);
                        goto cleanup;
                }
                runc[i] = sbx_mono_us() - t0;
                sbx_runc_exec_result_clear(&rr);
        }
        printf("\n### exec round trip of %s (ms)\n\n", cmd[0]);
        printf("| path                       |    n |   p50    |   p90    "
               "|   p99    |   max    | vs bare |\n|---|---|---|---|---|---|"
               "---|\n");
        row("bare posix_spawn + wait", bare, runs, 0);
        row("sbx-agent in runc sandbox", agent, runs, at(bare, runs, .5));
        row("runc exec, same sandbox", runc, runs, at(bare, runs, .5));
        rc = 0;
cleanup:
        sbx_agent_close(conn);
        sbx_runtime_delete(rt, id, NULL, 0);
        rmdir(sockdir);
done:
        sbx_template_destroy(tmpl);
        sbx_runtime_destroy(rt);
        sbx_config_destroy(cfg);
        free(bare);
        free(agent);
        free(runc);
        return rc;
}
