/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a client of a running stack sees, through the public client
 * library (include/sbx/client.h) and every Kafka hop:
 *
 *   --exec ROUNDS    one sandbox is acquired, then each round runs
 *                    /bin/true and `python3 -c pass` in it (ExecRequested
 *                    published .. ExecFinished and all output read), side
 *                    by side with the same command as a bare posix_spawn
 *                    and under bwrap with every namespace on the host;
 *   --claims N       N claims one after the other, each timed from publish
 *                    to ClaimBound as the client reads it, the sandbox
 *                    destroyed after; --gap-ms lets a warm pool refill
 *                    between claims (not timed). Whether the claims hit a
 *                    warm pool is the stack's configuration: --label says
 *                    which it is.
 *
 * Prints the tables (benchlib) and writes them as JSON with --json.
 *
 * usage: bench_client (--exec ROUNDS | --claims N [--gap-ms MS])
 *                     [--label TEXT] [--json FILE] [--tenant T]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "benchlib.h"
#include "core/event.h"
#include "core/util.h"
#include "sbx/client.h"

#define BWRAP "/usr/bin/bwrap"

static sbx_lease_t *acquire(sbx_client_t *c, int64_t *us)
{
        char err[1024];
        sbx_lease_t *l   = NULL;
        sbx_acquire_t *a = sbx_acquire_new("benchmark: run short commands");
        int64_t t0;
        sbx_acquire_set(a, "network_profile", "none", NULL, 0);
        sbx_acquire_set(a, "lease_seconds", "600", NULL, 0);
        t0 = sbx_mono_us();
        if (sbx_client_acquire(c, a, 120000, &l, err, sizeof(err)))
                fprintf(stderr, "bench_client: acquire: %s\n", err);
        if (us)
                *us = sbx_mono_us() - t0;
        sbx_acquire_destroy(a);
        return l;
}

static void drop(sbx_client_t *c, sbx_lease_t *l)
{
        char err[1024];
        if (sbx_client_destroy_sandbox(c, sbx_lease_sandbox_id(l), "benchmark",
                                       60000, err, sizeof(err)))
                fprintf(stderr, "bench_client: destroy %s: %s\n",
                        sbx_lease_sandbox_id(l), err);
        sbx_lease_destroy(l);
}

/* One exec through Kafka; its time in µs, or -1. */
static int64_t kafka_exec(sbx_client_t *c,
                          const sbx_lease_t *l,
                          const char *const *argv)
{
        char err[1024];
        sbx_run_t *r     = sbx_run_new(argv);
        sbx_result_t *rs = NULL;
        int64_t t0       = sbx_mono_us(), us;
        sbx_run_set_timeout_ms(r, 30000);
        if (sbx_client_exec(c, l, r, &rs, err, sizeof(err))) {
                fprintf(stderr, "bench_client: exec: %s\n", err);
                sbx_run_destroy(r);
                return -1;
        }
        us = sbx_mono_us() - t0;
        if (sbx_result_exit_code(rs) != 0) {
                fprintf(stderr, "bench_client: %s exited %d: %s\n", argv[0],
                        sbx_result_exit_code(rs),
                        sbx_result_error(rs) ? sbx_result_error(rs) : "");
                us = -1;
        }
        sbx_result_destroy(rs);
        sbx_run_destroy(r);
        return us;
}

static int64_t host_run(const char *const *argv)
{
        static const char *const envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin",
                                           NULL};
        int64_t t0                      = sbx_mono_us();
        if (bl_run(argv, envp, 1))
                return -1;
        return sbx_mono_us() - t0;
}

enum { K_KAFKA, K_BARE, K_BWRAP, K_N };

static int bench_exec(sbx_client_t *c, int rounds, json_t *out)
{
        static const char *const cmds[2][4] = {
            {"/bin/true", NULL},
            {"/usr/bin/python3", "-c", "pass", NULL},
        };
        static const char *const titles[2] = {
            "exec round trip through Kafka: /bin/true",
            "exec round trip through Kafka: python3 -c pass"};
        static const size_t base[] = {K_BARE, K_BWRAP};
        bl_series_t s[2][K_N];
        int64_t us;
        int i, k, v, rc = 0;
        sbx_lease_t *l = acquire(c, NULL);

        if (!l)
                return -1;
        for (k = 0; k < 2; k++) {
                s[k][K_KAFKA] = (bl_series_t){"sbx client exec (Kafka path)",
                                              "kafka", NULL, 0};
                s[k][K_BARE] =
                    (bl_series_t){"bare posix_spawn (host)", "bare", NULL, 0};
                s[k][K_BWRAP] = (bl_series_t){"bwrap --unshare-all (host)",
                                              "bwrap", NULL, 0};
                for (v = 0; v < K_N; v++)
                        s[k][v].v = sbx_calloc((size_t)rounds, sizeof(int64_t));
        }
        for (i = 0; i < rounds && !bl_stop && !rc; i++)
                for (k = 0; k < 2 && !rc; k++)
                        for (v = 0; v < K_N && !rc; v++) {
                                const char *bw[24];
                                bl_bwrap_argv(BWRAP, cmds[k], bw,
                                              SBX_ARRAY_SIZE(bw));
                                us = v == K_KAFKA  ? kafka_exec(c, l, cmds[k])
                                     : v == K_BARE ? host_run(cmds[k])
                                                   : host_run(bw);
                                if (us < 0)
                                        rc = -1;
                                else
                                        s[k][v].v[s[k][v].n++] = us;
                        }
        for (k = 0; k < 2; k++) {
                bl_table(titles[k], s[k], K_N, base, 2);
                json_array_append_new(
                    out, bl_table_json(titles[k], s[k], K_N, base, 2));
                for (v = 0; v < K_N; v++)
                        free(s[k][v].v);
        }
        drop(c, l);
        return rc;
}

static int bench_claims(sbx_client_t *c,
                        int n,
                        int gap_ms,
                        const char *label,
                        json_t *out)
{
        char title[256];
        bl_series_t s = {"claim -> bound (client)", "claim", NULL, 0};
        int i, rc = 0;
        s.v = sbx_calloc((size_t)n, sizeof(int64_t));
        for (i = 0; i < n && !bl_stop; i++) {
                int64_t us;
                sbx_lease_t *l      = acquire(c, &us);
                struct timespec gap = {gap_ms / 1000,
                                       (long)(gap_ms % 1000) * 1000000L};
                if (!l) {
                        rc = -1;
                        break;
                }
                s.v[s.n++] = us;
                drop(c, l);
                nanosleep(&gap, NULL);
        }
        snprintf(title, sizeof(title), "claim -> bound through Kafka, %s",
                 label);
        bl_table(title, &s, 1, NULL, 0);
        json_array_append_new(out, bl_table_json(title, &s, 1, NULL, 0));
        free(s.v);
        return rc;
}

int main(int argc, char **argv)
{
        const char *json_path = NULL, *label = "unlabelled";
        const char *tenant = "bench";
        int rounds = 0, claims = 0, gap_ms = 0, i, rc;
        char err[1024], session[64], uuid[37];
        sbx_client_t *c;
        json_t *out = json_array();

        for (i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--exec") && i + 1 < argc)
                        rounds = atoi(argv[++i]);
                else if (!strcmp(argv[i], "--claims") && i + 1 < argc)
                        claims = atoi(argv[++i]);
                else if (!strcmp(argv[i], "--gap-ms") && i + 1 < argc)
                        gap_ms = atoi(argv[++i]);
                else if (!strcmp(argv[i], "--label") && i + 1 < argc)
                        label = argv[++i];
                else if (!strcmp(argv[i], "--json") && i + 1 < argc)
                        json_path = argv[++i];
                else if (!strcmp(argv[i], "--tenant") && i + 1 < argc)
                        tenant = argv[++i];
                else {
                        fprintf(stderr,
                                "usage: bench_client (--exec ROUNDS | --claims "
                                "N [--gap-ms MS]) [--label TEXT] [--json "
                                "FILE] [--tenant T]\n");
                        return 2;
                }
        }
        if ((rounds > 0) == (claims > 0)) {
                fprintf(stderr, "bench_client: one of --exec or --claims\n");
                return 2;
        }
        bl_catch_stop();
        c = sbx_client_new(tenant, NULL, err, sizeof(err));
        if (!c) {
                fprintf(stderr, "bench_client: %s\n", err);
                return 1;
        }
        sbx_uuid(uuid);
        snprintf(session, sizeof(session), "bench-%.8s", uuid);
        sbx_client_set(c, "session", session, NULL, 0);
        sbx_client_set(c, "client", "bench_client", NULL, 0);
        rc = rounds ? bench_exec(c, rounds, out)
                    : bench_claims(c, claims, gap_ms, label, out);
        if (json_path && bl_json_write(out, json_path))
                rc = -1;
        json_decref(out);
        sbx_client_destroy(c);
        return rc ? 1 : 0;
}
