/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `sbx exec`: runs a command under a lease through the client library,
 * printing its stdout and stderr as the sandbox produces them (every
 * byte, in order, however long: the library reads sbx.exec-output.v1 from
 * before the Exec is published until every chunk has come), and exits
 * with the command's status. With --json nothing is streamed: one object
 * at the end holds the outcome and the whole output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "codec/codec.h"
#include "core/util.h"

#define EXIT_DEADLINE 124 /* as GNU timeout(1) */

static const char usage[] =
    "usage: sbx exec SANDBOX --lease N [--tenant T] [--session S] "
    "[--timeout-ms MS]\n"
    "                [--env NAME=VALUE]... [--cwd DIR] [--stdin FILE] -- "
    "CMD [ARG...]\n"
    "Runs CMD in the sandbox under lease N (the version `sbx acquire` "
    "printed).\n"
    "Its stdout and stderr are printed as they are produced, complete "
    "however\n"
    "long; sbx exits with the command's status (128+N if signal N killed "
    "it,\n"
    "124 if its deadline passed). --json: nothing is streamed; one object "
    "at\n"
    "the end holds exit_code, signal, timed_out, usage, stdout and stderr.\n"
    "\n"
    "  --lease N            the lease version (required)\n"
    "  --tenant T           the tenant (default: $SBX_TENANT)\n"
    "  --session S          the agent session\n"
    "  --timeout-ms MS      the command's deadline, 1..3600000 (default "
    "60000)\n"
    "  --env NAME=VALUE     an environment variable (repeat)\n"
    "  --cwd DIR            the working directory (default /workspace)\n"
    "  --stdin FILE         bytes for the command's stdin ('-': sbx's "
    "stdin)\n";

static void stream(void *opaque, int s, const void *data, size_t len)
{
        FILE *f = s == SBX_STDERR ? stderr : stdout;
        (void)opaque;
        fwrite(data, 1, len, f);
        fflush(f);
}

static int add_env(void *dst, const char *opt, const char *value)
{
        const char *eq = strchr(value, '=');
        if (!eq || eq == value) {
                sbx_cli_fail("exec %s: want NAME=VALUE, not '%s'", opt, value);
                return -1;
        }
        json_object_setn_new(dst, value, (size_t)(eq - value),
                             json_string(eq + 1));
        return 0;
}

/* Output as a JSON string: UTF-8 text as is, other bytes one code point
 * each (the codec's convention for Avro bytes). */
static json_t *text(const char *s, size_t n)
{
        json_t *j = json_stringn(s, n);
        return j ? j : sbx_codec_bytes(s, n);
}

/* Says on stderr how the command ended if not by exiting; its status. */
static int status_of(const sbx_result_t *r)
{
        const char *id = sbx_result_exec_id(r);
        json_t *fin    = json_loads(sbx_result_json(r), 0, NULL);
        int oom        = json_is_true(
                   json_object_get(json_object_get(fin, "usage"), "oom_killed"));
        int code = sbx_result_exit_code(r);

        json_decref(fin);
        if (sbx_result_error(r))
                fprintf(stderr, "sbx: exec %s: %s\n", id, sbx_result_error(r));
        if (sbx_result_timed_out(r)) {
                fprintf(stderr, "sbx: exec %s: stopped at its deadline\n", id);
                return EXIT_DEADLINE;
        }
        if (sbx_result_signal(r)) {
                fprintf(stderr, "sbx: exec %s: killed by signal %d%s\n", id,
                        sbx_result_signal(r), oom ? " (out of memory)" : "");
                return 128 + (sbx_result_signal(r) & 0x7f);
        }
        return code < 0 || code > 255 ? 1 : code;
}

static void print_result(const char *sandbox, const sbx_result_t *r)
{
        json_t *j = json_loads(sbx_result_json(r), 0, NULL);
        const char *s;
        size_t n;
        if (!j)
                j = json_object();
        json_object_set_new(j, "sandbox_id", json_string(sandbox));
        s = sbx_result_stdout(r, &n);
        json_object_set_new(j, "stdout", text(s, n));
        s = sbx_result_stderr(r, &n);
        json_object_set_new(j, "stderr", text(s, n));
        sbx_cli_print_json(j);
}

int sbx_cmd_exec(sbx_cli_t *cli, int argc, char **argv)
{
        const char *tenant = NULL, *session = NULL, *cwd = NULL, *in = NULL;
        const char *sandbox = NULL;
        long long lease = -1, timeout_ms = 60000;
        json_t *env = json_object();
        char **cmd = NULL, *data = NULL, err[1024];
        const char **args = NULL;
        int ncmd          = 0, rc, i;
        size_t len        = 0;
        sbx_client_t *c   = NULL;
        sbx_lease_t *l    = NULL;
        sbx_run_t *run    = NULL;
        sbx_result_t *res = NULL;
        const char *key;
        json_t *v;
        const sbx_opt_t opts[] = {
            {"--lease", SBX_OPT_INT, &lease, NULL},
            {"--tenant", SBX_OPT_STR, &tenant, NULL},
            {"--session", SBX_OPT_STR, &session, NULL},
            {"--timeout-ms", SBX_OPT_INT, &timeout_ms, NULL},
            {"--env", SBX_OPT_FN, env, add_env},
            {"--cwd", SBX_OPT_STR, &cwd, NULL},
            {"--stdin", SBX_OPT_STR, &in, NULL},
            {NULL, SBX_OPT_FLAG, NULL, NULL},
        };

        if ((rc = sbx_cli_parse("exec", usage, opts, argc, argv, &sandbox, 1, 1,
                                &cmd, &ncmd)) >= 0)
                goto done;
        rc = 2;
        if (lease < 1) {
                sbx_cli_fail(
                    "exec: give the lease version with --lease N "
                    "(see sbx exec --help)");
                goto done;
        }
        if (timeout_ms < 1 || timeout_ms > 3600000) {
                sbx_cli_fail("exec --timeout-ms: want 1..3600000");
                goto done;
        }
        if (in && sbx_read_file(strcmp(in, "-") ? in : "/dev/stdin", 1 << 20,
                                &data, &len, err, sizeof(err))) {
                sbx_cli_fail("exec --stdin %s: %s", in, err);
                goto done;
        }
        rc = 1;
        if (!(c = sbx_cli_client(cli, tenant, session)))
                goto done;
        args = sbx_calloc((size_t)ncmd + 1, sizeof(*args));
        for (i = 0; i < ncmd; i++)
                args[i] = cmd[i];
        run = sbx_run_new(args);
        sbx_run_set_timeout_ms(run, timeout_ms);
        sbx_run_set_cwd(run, cwd);
        if (data)
                sbx_run_set_stdin(run, data, len);
        json_object_foreach(env, key, v)
        {
                sbx_run_set_env(run, key, json_string_value(v));
        }
        if (!cli->json)
                sbx_run_set_output(run, stream, NULL);
        l = sbx_lease_new(sandbox, lease, NULL);
        if (sbx_client_exec(c, l, run, &res, err, sizeof(err))) {
                rc = sbx_cli_fail("exec: %s", err);
                goto done;
        }
        if (cli->json)
                print_result(sandbox, res);
        rc = status_of(res);
done:
        sbx_result_destroy(res);
        sbx_lease_destroy(l);
        sbx_run_destroy(run);
        sbx_client_destroy(c);
        json_decref(env);
        free(args);
        free(data);
        return rc;
}
