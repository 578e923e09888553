/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Exec round trip, side by side in one run: the same command through
 * sbx-agent in a running runc sandbox (the executor's hot path), through
 * `runc exec` into the same sandbox, through bubblewrap with every
 * namespace (`bwrap --unshare-all --die-with-parent --ro-bind / / --dev
 * /dev --proc /proc CMD`, a fresh light sandbox per exec) and as a bare
 * posix_spawn + wait on the host. The variants are interleaved, in an
 * order that rotates every round, so a noisy machine hurts them alike.
 * For each command it prints count, p50, p90, p99, max and the ratio of
 * each p50 to the bare spawn's, bwrap's and runc exec's. Needs root (it
 * starts a real sandbox under <var>/run/bench).
 *
 * usage: bench_exec [--runs N] [--smoke] [--json FILE] [--var DIR]
 *                   [--agent PATH] [--cmd "CMD ARG..."]... [CMD ARG...]
 * Without a command it runs /bin/true and /usr/bin/python3 -c pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/client.h"
#include "benchlib.h"
#include "core/config.h"
#include "core/util.h"
#include "runtime/runtime.h"
#include "runtime/template.h"

#define MAX_CMDS 8
#define MAX_ARGS 32

enum { V_BARE, V_BWRAP, V_AGENT, V_RUNC, N_VARIANTS };

static const char *const variant_names[N_VARIANTS] = {
    "bare posix_spawn + wait",
    "bwrap --unshare-all",
    "sbx-agent in runc sandbox",
    "runc exec, same sandbox",
};
static const char *const variant_tags[N_VARIANTS] = {"bare", "bwrap", "agent",
                                                     "runc"};

typedef struct cmd_s {
        char *text;                 /* as given, for titles */
        const char *argv[MAX_ARGS]; /* split on spaces (points into words) */
        const char *bwrap[MAX_ARGS + 12];
        char *words;
        bl_series_t s[N_VARIANTS];
} cmd_t;

static const char usage[] =
    "usage: bench_exec [--runs N] [--smoke] [--json FILE] [--var DIR]\n"
    "                  [--agent PATH] [--cmd \"CMD ARG...\"]... [CMD ARG...]\n"
    "  --runs N     rounds (default 50); each runs every variant once\n"
    "  --smoke      5 rounds\n"
    "  --json FILE  also write the tables as JSON\n"
    "  --var DIR    state directory (default: the config's var_dir)\n"
    "  --agent PATH the sbx-agent binary (default: the config's)\n"
    "  --cmd TEXT   a command, split on spaces (repeatable)\n"
    "Without a command: /bin/true and /usr/bin/python3 -c pass.\n";

static const char *bwrap_path(void)
{
        static const char *const c[] = {"/usr/bin/bwrap", "/bin/bwrap",
                                        "/usr/local/bin/bwrap"};
        for (size_t i = 0; i < SBX_ARRAY_SIZE(c); i++)
                if (!access(c[i], X_OK))
                        return c[i];
        return NULL;
}

/* Fills @p c from @p text ("CMD ARG..."); -1 if it is empty or too long. */
static int cmd_parse(cmd_t *c, const char *text, const char *bwrap, int runs)
{
        size_t n   = 0;
        char *save = NULL, *w;

        memset(c, 0, sizeof(*c));
        c->text  = sbx_strdup(text);
        c->words = sbx_strdup(text);
        for (w = strtok_r(c->words, " ", &save); w && n + 1 < MAX_ARGS;
             w = strtok_r(NULL, " ", &save))
                c->argv[n++] = w;
        if (!n || w || c->argv[0][0] != '/') {
                fprintf(stderr,
                        "bench_exec: '%s': need an absolute path "
                        "and at most %d words\n",
                        text, MAX_ARGS - 1);
                return -1;
        }
        if (bwrap)
                bl_bwrap_argv(bwrap, c->argv, c->bwrap,
                              SBX_ARRAY_SIZE(c->bwrap));
        for (int v = 0; v < N_VARIANTS; v++) {
                c->s[v].name = variant_names[v];
                c->s[v].tag  = variant_tags[v];
                c->s[v].v    = sbx_calloc((size_t)runs, sizeof(int64_t));
        }
        return 0;
}

static void cmd_free(cmd_t *c)
{
        free(c->text);
        free(c->words);
        for (int v = 0; v < N_VARIANTS; v++)
                free(c->s[v].v);
}

typedef struct bench_s {
        sbx_runtime_t *rt;
        sbx_agent_conn_t *conn;
        const char *id;
        int has_bwrap;
} bench_t;

/* One exec of @p c by variant @p v; its time goes to c->s[v]. */
static int one(bench_t *b, cmd_t *c, int v)
{
        static const char *const envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin",
                                           NULL};
        char err[1024];
        int64_t t0 = sbx_mono_us();
        int rc     = 0;

        switch (v) {
        case V_BARE:
                rc = bl_run(c->argv, envp, 0);
                break;
        case V_BWRAP:
                if (!b->has_bwrap)
                        return 0;
                rc = bl_run(c->bwrap, envp, 0);
                break;
        case V_AGENT: {
                sbx_agent_exec_req_t req;
                sbx_agent_exit_t ex;
                memset(&req, 0, sizeof(req));
                req.argv        = c->argv;
                req.envp        = envp;
                req.deadline_ms = 10000;
                if (sbx_agent_exec(b->conn, &req, NULL, &ex, err,
                                   sizeof(err))) {
                        fprintf(stderr, "bench_exec: agent exec: %s\n", err);
                        return -1;
                }
                rc = ex.exit_code;
                break;
        }
        case V_RUNC: {
                sbx_runc_exec_result_t rr;
                memset(&rr, 0, sizeof(rr));
                if (sbx_runtime_exec(b->rt, b->id, c->argv, NULL, &rr, err,
                                     sizeof(err))) {
                        fprintf(stderr, "bench_exec: runc exec: %s\n", err);
                        return -1;
                }
                rc = rr.exit_code;
                sbx_runc_exec_result_clear(&rr);
                break;
        }
        }
        c->s[v].v[c->s[v].n++] = sbx_mono_us() - t0;
        if (rc) {
                fprintf(stderr, "bench_exec: %s: '%s' exited %d\n",
                        variant_names[v], c->text, rc);
                return -1;
        }
        return 0;
}

int main(int argc, char **argv)
{
        const char *json_path = NULL, *var = NULL, *agent_bin = NULL;
        const char *texts[MAX_CMDS];
        const char *init[]         = {SBX_AGENT_PATH, "--socket",
                                      SBX_AGENT_SOCKET_DIR "/agent.sock", NULL};
        static const size_t base[] = {V_BARE, V_BWRAP, V_RUNC};
        int runs = 50, i, ntexts = 0, ncmds = 0, rc = 1;
        char err[1024], path[2048], sockdir[2048], sock[2100], id[64];
        char *tail_text      = NULL;
        sbx_config_t *cfg    = NULL;
        sbx_template_t *tmpl = NULL;
        sbx_sandbox_spec_t spec;
        cmd_t cmds[MAX_CMDS];
        json_t *json   = NULL;
        bench_t b      = {0};
        const char *bw = bwrap_path();

        for (i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--runs") && i + 1 < argc)
                        runs = atoi(argv[++i]);
                else if (!strcmp(argv[i], "--smoke"))
                        runs = 5;
                else if (!strcmp(argv[i], "--json") && i + 1 < argc)
                        json_path = argv[++i];
                else if (!strcmp(argv[i], "--var") && i + 1 < argc)
                        var = argv[++i];
                else if (!strcmp(argv[i], "--agent") && i + 1 < argc)
                        agent_bin = argv[++i];
                else if (!strcmp(argv[i], "--cmd") && i + 1 < argc &&
                         ntexts < MAX_CMDS)
                        texts[ntexts++] = argv[++i];
                else if (argv[i][0] == '-') {
                        fputs(usage, stderr);
                        return 2;
                } else { /* CMD ARG...: the rest is one command */
                        size_t len = 0;
                        for (int j = i; j < argc; j++)
                                len += strlen(argv[j]) + 1;
                        tail_text = sbx_calloc(1, len);
                        for (int j = i; j < argc; j++) {
                                strcat(tail_text, argv[j]);
                                if (j + 1 < argc)
                                        strcat(tail_text, " ");
                        }
                        if (ntexts < MAX_CMDS)
                                texts[ntexts++] = tail_text;
                        break;
                }
        }
        if (!ntexts) {
                texts[ntexts++] = "/bin/true";
                texts[ntexts++] = "/usr/bin/python3 -c pass";
        }
        if (runs < 2)
                runs = 2;
        if (sbx_config_load(NULL, &cfg, err, sizeof(err))) {
                fprintf(stderr, "bench_exec: %s\n", err);
                free(tail_text);
                return 1;
        }
        if (!var)
                var = cfg->var_dir;
        if (!agent_bin)
                agent_bin = cfg->agent_path;
        for (i = 0; i < ntexts; i++, ncmds++)
                if (cmd_parse(&cmds[i], texts[i], bw, runs)) {
                        ncmds++;
                        goto done;
                }
        b.has_bwrap = bw != NULL;
        if (!bw)
                fprintf(stderr,
                        "bench_exec: bwrap not found; its rows stay "
                        "empty\n");

        b.rt = sbx_runtime_new(sbx_fmt(path, sizeof(path), "%s/run/bench", var),
                               err, sizeof(err));
        if (b.rt)
                tmpl = sbx_template_host_new(
                    sbx_fmt(path, sizeof(path), "%s/templates/host", var), err,
                    sizeof(err));
        if (!b.rt || !tmpl) {
                fprintf(stderr, "bench_exec: %s\n", err);
                goto done;
        }
        b.id = sbx_fmt(id, sizeof(id), "bench-exec-%ld", (long)getpid());
        sbx_fmt(sockdir, sizeof(sockdir), "%s/run/bench/sock-%s", var, id);
        memset(&spec, 0, sizeof(spec));
        spec.id         = id;
        spec.tmpl       = tmpl;
        spec.memory_mb  = 512;
        spec.pids_max   = 256;
        spec.agent_path = agent_bin;
        spec.socket_dir = sockdir;
        spec.argv       = init;
        if (sbx_runtime_create(b.rt, &spec, err, sizeof(err))) {
                fprintf(stderr, "bench_exec: create: %s\n", err);
                goto done;
        }
        sbx_fmt(sock, sizeof(sock), "%s/agent.sock", sockdir);
        b.conn = sbx_agent_connect(sock, 10000, err, sizeof(err));
        if (!b.conn) {
                fprintf(stderr, "bench_exec: agent: %s\n", err);
                goto cleanup;
        }
        bl_catch_stop(); /* ^C still deletes the sandbox */
        for (i = 0; i < runs && !bl_stop; i++)
                for (int c = 0; c < ncmds; c++)
                        for (int k = 0; k < N_VARIANTS; k++)
                                if (one(&b, &cmds[c], (i + k) % N_VARIANTS))
                                        goto cleanup;
        if (bl_stop)
                goto cleanup;
        printf("\nbench_exec: %d rounds, variants interleaved; bwrap: %s\n",
               runs, bw ? bw : "not found");
        if (json_path)
                json = json_pack("{s:s, s:i, s:[]}", "bench", "exec", "runs",
                                 runs, "tables");
        for (int c = 0; c < ncmds; c++) {
                char title[512];
                sbx_fmt(title, sizeof(title), "exec round trip of %s",
                        cmds[c].text);
                bl_table(title, cmds[c].s, N_VARIANTS, base,
                         SBX_ARRAY_SIZE(base));
                if (json)
                        json_array_append_new(
                            json_object_get(json, "tables"),
                            bl_table_json(title, cmds[c].s, N_VARIANTS, base,
                                          SBX_ARRAY_SIZE(base)));
        }
        rc = json && bl_json_write(json, json_path) ? 1 : 0;
cleanup:
        sbx_agent_close(b.conn);
        if (sbx_runtime_delete(b.rt, id, err, sizeof(err))) {
                fprintf(stderr, "bench_exec: delete %s: %s\n", id, err);
                rc = 1;
        }
        unlink(sock);
        rmdir(sockdir);
done:
        json_decref(json);
        for (i = 0; i < ncmds; i++)
                cmd_free(&cmds[i]);
        sbx_template_destroy(tmpl);
        sbx_runtime_destroy(b.rt);
        sbx_config_destroy(cfg);
        free(tail_text);
        return rc;
}
