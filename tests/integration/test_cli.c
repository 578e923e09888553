/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sbx command as a user meets it, run as a program against the local
 * stack with a control plane and a real executor node of this test's own
 * (itest_exec.h): every command answers --help; a bad argument is one
 * line and a non-zero exit; acquire --wait shows the claim's progress and
 * prints the lease; exec streams the command's output live and completely
 * (300 KiB of stdout, 100 KiB of stderr) and exits with its status; pause
 * of a leased sandbox prints the control plane's reason; snapshot prints
 * the snapshot's id; ls
 * and show fold the log; renew, release, pause, resume and destroy do
 * what they say. Needs root (real sandboxes).
 */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "itest_exec.h"

#define OUT_LEN (300 * 1024)
#define ERR_LEN (100 * 1024)

static const char *sbx_path;

typedef struct run_s {
        int status; /* exit status, or 128 + the signal that killed it */
        char *out, *err;
        size_t outlen, errlen;
        int64_t first_out_us; /* from start to the first stdout byte */
        int64_t end_us;       /* from start to the end of both streams */
} run_t;

static void append(char **buf, size_t *len, const char *d, size_t n)
{
        *buf = sbx_realloc(*buf, *len + n + 1);
        memcpy(*buf + *len, d, n);
        *len += n;
        (*buf)[*len] = '\0';
}

/* Runs `sbx ARGS...` (NULL-terminated) as tenant ITEST_TENANT. */
static run_t sbx(const char *arg, ...)
{
        const char *argv[64];
        int out[2], err[2], n = 1, open = 2, status;
        int64_t t0 = sbx_mono_us();
        run_t r;
        va_list ap;
        pid_t pid;

        memset(&r, 0, sizeof(r));
        argv[0] = "sbx";
        va_start(ap, arg);
        for (; arg && n < 63; arg = va_arg(ap, const char *))
                argv[n++] = arg;
        va_end(ap);
        argv[n] = NULL;
        if (pipe(out) || pipe(err))
                fail_msg("pipe");
        pid = fork();
        if (pid == 0) {
                dup2(out[1], 1);
                dup2(err[1], 2);
                close(out[0]);
                close(err[0]);
                setenv("SBX_TENANT", ITEST_TENANT, 1);
                execv(sbx_path, (char *const *)argv);
                _exit(127);
        }
        close(out[1]);
        close(err[1]);
        while (open) {
                struct pollfd p[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
                char buf[65536];
                int k;
                if (poll(p, 2, -1) < 0)
                        continue;
                for (k = 0; k < 2; k++) {
                        ssize_t got;
                        if (!p[k].revents || p[k].fd < 0)
                                continue;
                        got = read(p[k].fd, buf, sizeof(buf));
                        if (got <= 0) {
                                close(k ? err[0] : out[0]);
                                *(k ? &err[0] : &out[0]) = -1;
                                open--;
                                continue;
                        }
                        if (!k && !r.outlen)
                                r.first_out_us = sbx_mono_us() - t0;
                        if (k)
                                append(&r.err, &r.errlen, buf, (size_t)got);
                        else
                                append(&r.out, &r.outlen, buf, (size_t)got);
                }
        }
        r.end_us = sbx_mono_us() - t0;
        waitpid(pid, &status, 0);
        r.status =
            WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (!r.out)
                append(&r.out, &r.outlen, "", 0);
        if (!r.err)
                append(&r.err, &r.errlen, "", 0);
        return r;
}

static void run_free(run_t *r)
{
        free(r->out);
        free(r->err);
}

static int lines(const char *s)
{
        int n = 0;
        for (; *s; s++)
                n += *s == '\n';
        return n;
}

/* Fails, saying what sbx printed, unless @p r ended with @p status. */
static void expect_status(const run_t *r, int status)
{
        if (r->status != status)
                fail_msg(
                    "want status %d, got %d; stdout '%.200s', stderr "
                    "'%.400s'",
                    status, r->status, r->out, r->err);
}

/* Fails unless @p r failed with exactly one line "sbx: ..." holding
 * @p want. */
static void expect_one_line(run_t *r, int status, const char *want)
{
        if (r->status != status || lines(r->err) != 1 ||
            strncmp(r->err, "sbx: ", 5) || !strstr(r->err, want))
                fail_msg("want status %d and one line with '%s'; got %d: %s",
                         status, want, r->status, r->err);
        run_free(r);
}

/* The JSON object on @p r's stdout, or a failed test. */
static json_t *json_of(run_t *r)
{
        json_t *j = json_loads(r->out, 0, NULL);
        if (r->status || !json_is_object(j))
                fail_msg("status %d, stdout '%s', stderr '%s'", r->status,
                         r->out, r->err);
        run_free(r);
        return j;
}

static char *phase_of(const char *id)
{
        run_t r   = sbx("--json", "show", id, NULL);
        json_t *j = json_of(&r);
        char *p   = sbx_strdup(json_string_value(json_object_get(j, "phase")));
        json_decref(j);
        return p;
}

static void test_help_and_bad_arguments(void **state)
{
        static const char *const cmds[] = {
            "acquire", "exec",     "renew",     "release",    "pause",
            "resume",  "snapshot", "destroy",   "ls",         "show",
            "events",  "topics",   "db",        "fsm",        "schema",
            "codec",   "audit",    "telemetry", "projections"};
        char want[64];
        size_t i;
        run_t r;
        (void)state;

        for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
                r = sbx(cmds[i], "--help", NULL);
                snprintf(want, sizeof(want), "usage: sbx %s", cmds[i]);
                if (r.status || strncmp(r.out, want, strlen(want)) || r.errlen)
                        fail_msg(
                            "sbx %s --help: status %d, stdout '%.60s', "
                            "stderr '%s'",
                            cmds[i], r.status, r.out, r.err);
                run_free(&r);
        }
        r = sbx("--help", NULL);
        expect_status(&r, 0);
        assert_non_null(strstr(r.out, "exec SANDBOX --lease N"));
        run_free(&r);

        r = sbx("exec", "sb-1", "--lease", "x", "--", "true", NULL);
        expect_one_line(&r, 2, "--lease: 'x' is not a whole number");
        r = sbx("exec", "sb-1", "--", "true", NULL);
        expect_one_line(&r, 2, "give the lease version with --lease N");
        r = sbx("exec", "sb-1", "--lease", "1", NULL);
        expect_one_line(&r, 2, "no command");
        r = sbx("acquire", "--task", "x", "--frobnicate", NULL);
        expect_one_line(&r, 2, "unknown option --frobnicate");
        r = sbx("acquire", "--task", "x", "--lease", NULL);
        expect_one_line(&r, 2, "--lease needs a value");
        r = sbx("acquire", "--package", "rpm:foo", NULL);
        expect_one_line(&r, 2, "package: bad value 'rpm:foo'");
        r = sbx("renew", "sb-1", NULL);
        expect_one_line(&r, 2, "give the lease version");
        r = sbx("show", NULL);
        expect_one_line(&r, 2, "missing argument");
        r = sbx("show", "a", "b", NULL);
        expect_one_line(&r, 2, "unexpected argument 'b'");
        r = sbx("frobnicate", NULL);
        expect_one_line(&r, 1, "unknown command 'frobnicate'");
}

static void test_refusals_show_the_reason(void **state)
{
        itest_proc_t cp;
        run_t r;
        (void)state;

        cp = itest_control_plane("cli-cp");
        r  = sbx("acquire", "--tenant", "no-such-tenant", "--task", "x",
                 "--wait", "--timeout", "30", NULL);
        expect_one_line(&r, 1, "rejected: unknown tenant 'no-such-tenant'");
        r = sbx("exec", "sb-no-such-sandbox", "--lease", "1", "--", "true",
                NULL);
        expect_one_line(&r, 1, "rejected: ");
        r = sbx("show", "sb-no-such-sandbox", NULL);
        expect_one_line(&r, 1, "no claim or sandbox 'sb-no-such-sandbox'");
        itest_kill(&cp, SIGTERM);
}

/* Where @p s (@p n bytes) first differs from the alphabet cycling from
 * @p first, which the command below writes; @p n if nowhere. */
static size_t differs(const char *s, size_t n, char first)
{
        size_t i;
        for (i = 0; i < n && s[i] == (char)(first + i % 26); i++)
                ;
        return i;
}

static void expect_exec_streams(const char *sb, const char *lease)
{
        run_t r;
        json_t *j;

        /* Complete: 300 KiB and 100 KiB, byte for byte, and the status. */
        r = sbx("exec", sb, "--lease", lease, "--", "python3", "-c",
                "import sys\n"
                "sys.stdout.write(''.join(chr(97 + i % 26) for i in "
                "range(300 * 1024)))\n"
                "sys.stderr.write(''.join(chr(65 + i % 26) for i in "
                "range(100 * 1024)))\n"
                "sys.exit(3)\n",
                NULL);
        expect_status(&r, 3);
        assert_int_equal(r.outlen, OUT_LEN);
        assert_int_equal(r.errlen, ERR_LEN);
        assert_int_equal(differs(r.out, r.outlen, 'a'), OUT_LEN);
        assert_int_equal(differs(r.err, r.errlen, 'A'), ERR_LEN);
        run_free(&r);

        /* Live: the first line is out long before the command ends. */
        r = sbx("exec", sb, "--lease", lease, "--", "python3", "-c",
                "import time\n"
                "print('first', flush=True)\n"
                "time.sleep(0.3)\n"
                "print('tick', flush=True)\n"
                "time.sleep(3)\n"
                "print('last')\n",
                NULL);
        expect_status(&r, 0);
        assert_string_equal(r.out, "first\ntick\nlast\n");
        printf("exec: first output after %.0f ms, end after %.0f ms\n",
               (double)r.first_out_us / 1000, (double)r.end_us / 1000);
        if (r.end_us - r.first_out_us < 1500000)
                fail_msg("output came %.0f ms before the end: not streamed",
                         (double)(r.end_us - r.first_out_us) / 1000);
        run_free(&r);

        /* What follows -- is the command's, options too. */
        r = sbx("exec", sb, "--lease", lease, "--", "sh", "-c", "echo \"$@\"",
                "sh", "--json", "-f", "--help", NULL);
        expect_status(&r, 0);
        assert_string_equal(r.out, "--json -f --help\n");
        run_free(&r);

        /* A signal, a deadline, --json. */
        r = sbx("exec", sb, "--lease", lease, "--", "sh", "-c", "kill -TERM $$",
                NULL);
        expect_one_line(&r, 128 + SIGTERM, "killed by signal 15");
        r = sbx("exec", sb, "--lease", lease, "--timeout-ms", "500", "--",
                "sleep", "10", NULL);
        expect_one_line(&r, 124, "stopped at its deadline");
        r = sbx("--json", "exec", sb, "--lease", lease, "--", "python3", "-c",
                "print(1+1)", NULL);
        j = json_of(&r);
        assert_int_equal(json_integer_value(json_object_get(j, "exit_code")),
                         0);
        assert_string_equal(json_string_value(json_object_get(j, "stdout")),
                            "2\n");
        json_decref(j);
}

static void test_sandbox_through_the_cli(void **state)
{
        itest_proc_t ex, cp;
        char session[64], sb[128], lease[32], want[200], *claim, *phase;
        run_t r;
        json_t *j;
        (void)state;

        ex = itest_executor("cli", NULL);
        cp = itest_control_plane("cli-cp");
        itest_session(session, sizeof(session));

        /* acquire --wait: progress on stderr, "SANDBOX LEASE" on stdout. */
        r = sbx("acquire", "--session", session, "--task", ITEST_TASK, "--wait",
                NULL);
        if (r.status || sscanf(r.out, "%127s %31s", sb, lease) != 2)
                fail_msg("acquire: %d %s %s", r.status, r.out, r.err);
        assert_non_null(strstr(r.err, "REQUESTED  ClaimRequested"));
        assert_non_null(strstr(r.err, "BOUND      ClaimBound"));
        run_free(&r);
        r = sbx("--json", "show", sb, NULL);
        j = json_of(&r);
        if (!sbx_streq(json_string_value(json_object_get(j, "node_id")),
                       itest_node.id))
                fail_msg("sandbox %s is on node %s, not this test's %s", sb,
                         json_string_value(json_object_get(j, "node_id")),
                         itest_node.id);
        assert_string_equal(json_string_value(json_object_get(j, "phase")),
                            "LEASED");
        claim =
            sbx_strdup(json_string_value(json_object_get(j, "lease_owner")));
        json_decref(j);

        expect_exec_streams(sb, lease);

        /* ls and show fold the log. */
        r = sbx("ls", NULL);
        expect_status(&r, 0);
        assert_non_null(strstr(r.out, sb));
        assert_non_null(strstr(r.out, claim));
        run_free(&r);
        phase = phase_of(claim);
        assert_string_equal(phase, "BOUND");
        free(phase);

        /* The control plane's refusals, in one line each. */
        r = sbx("pause", sb, "--lease", lease, NULL);
        expect_one_line(&r, 1, "is leased: release it, then pause it");
        r = sbx("snapshot", sb, NULL);
        expect_one_line(&r, 2, "--lease");

        /* A snapshot: its id, content-addressed. */
        r = sbx("snapshot", sb, "--lease", lease, NULL);
        expect_status(&r, 0);
        snprintf(want, sizeof(want), "snapshot taken of %s: snap-", sb);
        if (strncmp(r.out, want, strlen(want)))
                fail_msg("sbx snapshot printed '%s'", r.out);
        run_free(&r);

        r = sbx("renew", sb, "--lease", lease, "--extend", "600", NULL);
        expect_status(&r, 0);
        assert_non_null(strstr(r.out, "renewed the lease of"));
        run_free(&r);
        r = sbx("release", sb, "--lease", lease, "--claim", claim, NULL);
        expect_status(&r, 0);
        assert_non_null(strstr(r.out, "released"));
        run_free(&r);
        r = sbx("exec", sb, "--lease", lease, "--", "true", NULL);
        expect_one_line(&r, 1, "rejected: ");
        itest_wait_phase(itest_exec_log_open(), sb, SBX_SB_IDLE, 60);

        r = sbx("pause", sb, "--lease", lease, NULL);
        expect_status(&r, 0);
        run_free(&r);
        phase = phase_of(sb);
        assert_string_equal(phase, "HIBERNATING");
        free(phase);
        r = sbx("resume", sb, "--lease", lease, NULL);
        expect_status(&r, 0);
        run_free(&r);

        r = sbx("destroy", sb, NULL);
        expect_status(&r, 0);
        assert_non_null(strstr(r.out, "destroyed"));
        assert_non_null(strstr(r.err, "Terminated"));
        run_free(&r);
        phase = phase_of(sb);
        assert_string_equal(phase, "TERMINATED");
        free(phase);
        free(claim);
        itest_kill(&cp, SIGTERM);
        itest_kill(&ex, SIGTERM);
}

int main(int argc, char **argv)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_help_and_bad_arguments),
            cmocka_unit_test_teardown(test_refusals_show_the_reason,
                                      itest_exec_teardown),
            cmocka_unit_test_teardown(test_sandbox_through_the_cli,
                                      itest_exec_teardown),
        };
        if (argc < 3) {
                fprintf(stderr, "usage: %s PATH/TO/sbxd PATH/TO/sbx\n",
                        argv[0]);
                return 2;
        }
        sbx_path = argv[2];
        return itest_exec_main(2, argv, "itest-cli", tests,
                               sizeof(tests) / sizeof(tests[0]));
}
