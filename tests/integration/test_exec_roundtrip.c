/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Exec round trips through the whole stack into one leased runc sandbox
 * (class browser-medium, 8 GiB: see itest_exec.h for why): stdout and stderr
 * come back apart, exit codes and a killing signal as the command ended, stdin
 * reaches the command byte for byte, output beyond the inline 64 KiB is
 * all on sbx.exec-output.v1 in order, a deadline stops a command and says
 * so, and a command that outgrows the class's memory is OOM-killed,
 * reported as such, and the sandbox goes on working. Then two sandboxes
 * of one node: a long exec in one does not hold up an exec in the other.
 * Times are printed, not asserted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "itest_exec.h"

#define LARGE_OUT (300 * 1024)
#define LARGE_ERR (100 * 1024)

/* Python that writes 1 GiB more than @p limit_mb MiB, 256 MiB at a time. */
static json_t *memory_bomb(int64_t limit_mb)
{
        char code[256];
        snprintf(code, sizeof(code),
                 "l = []\n"
                 "for i in range(%lld):\n"
                 "    l.append(b'x' * (256 << 20))\n",
                 (long long)(limit_mb + 1024) / 256);
        return json_pack("[s,s,s]", "python3", "-c", code);
}

static const sbx_event_t *py(itest_log_t *l,
                             const itest_claim_t *c,
                             const char *exec_id,
                             const char *code)
{
        return itest_run(l, c, exec_id,
                         json_pack("[s,s,s]", "python3", "-c", code));
}

static void expect_exit(const sbx_event_t *fin, int code, int sig)
{
        assert_int_equal(sbx_event_int(fin, "exit_code", -1), code);
        assert_int_equal(sbx_event_int(fin, "signal", -1), sig);
        assert_false(sbx_event_bool(fin, "timed_out"));
        assert_null(sbx_event_str(fin, "error"));
}

/* @p n bytes of the alphabet from @p first, cycling: what the large-output
 * command writes. */
static char *pattern(char first, size_t n)
{
        char *p = sbx_malloc(n + 1);
        size_t i;
        for (i = 0; i < n; i++)
                p[i] = (char)(first + i % 26);
        p[n] = '\0';
        return p;
}

static void test_exec_round_trips(void **state)
{
        itest_proc_t ex, cp;
        itest_log_t *l;
        itest_claim_t c;
        itest_exec_t x;
        itest_output_t out;
        const sbx_event_t *fin;
        const sbx_state_t *sb;
        char session[64], *want;
        static const unsigned char in[] = "hello\0\xff world\n";
        int64_t t0, limit_mb;
        (void)state;

        ex = itest_executor("exec", NULL);
        cp = itest_control_plane("cp");
        l  = itest_exec_log_open();
        itest_claim(l, &c, itest_session(session, sizeof(session)), NULL);
        sb = itest_state(l, c.sandbox);
        assert_string_equal(sb->node_id, itest_node.id);
        assert_string_equal(sb->resource_class, ITEST_CLASS);
        assert_string_equal(sb->runtime, "runc");
        limit_mb = sb->memory_mb;
        /* The first claim of a fresh control plane: request -> bound
         * includes its warm-up; placed -> bound is the executor's part. */
        print_message(
            "cold %s claim: request -> bound %.1f ms, placed -> "
            "bound %.1f ms\n",
            ITEST_CLASS, (double)(c.bound_us - c.sent_us) / 1000.0,
            (double)c.place_us / 1000.0);

        /* stdout and stderr apart, and the exit code. */
        fin = py(l, &c, "e-streams",
                 "import sys; print('out'); print('err', file=sys.stderr); "
                 "sys.exit(3)");
        expect_exit(fin, 3, 0);
        assert_string_equal(itest_bytes(fin, "stdout"), "out\n");
        assert_string_equal(itest_bytes(fin, "stderr"), "err\n");
        /* each stream: its data, then an empty chunk that says eof */
        assert_int_equal(sbx_event_int(fin, "output_chunks", -1), 4);

        fin = py(l, &c, "e-zero", "pass");
        expect_exit(fin, 0, 0);
        assert_string_equal(itest_bytes(fin, "stdout"), "");
        assert_string_equal(itest_bytes(fin, "stderr"), "");
        assert_int_equal(sbx_event_int(fin, "output_chunks", -1), 0);

        fin = py(l, &c, "e-255", "import sys; sys.exit(255)");
        expect_exit(fin, 255, 0);

        /* Killed by a signal: the signal, and 128 + it as the exit code. */
        fin = py(l, &c, "e-kill",
                 "import os; print('before', flush=True); "
                 "os.kill(os.getpid(), 9); print('after')");
        assert_int_equal(sbx_event_int(fin, "signal", -1), 9);
        assert_int_equal(sbx_event_int(fin, "exit_code", -1), 128 + 9);
        assert_false(sbx_event_bool(fin, "timed_out"));
        assert_string_equal(itest_bytes(fin, "stdout"), "before\n");
        assert_false(itest_usage_bool(fin, "oom_killed"));

        /* stdin, with a NUL and a byte above 0x7f, reaches the command. */
        memset(&x, 0, sizeof(x));
        x.sandbox = c.sandbox;
        x.lease   = c.lease;
        x.session = c.session;
        x.exec_id = "e-stdin";
        x.argv    = json_pack("[s,s,s]", "python3", "-c",
                              "import sys; "
                                 "sys.stdout.write(sys.stdin.buffer.read().hex())");
        x.in      = in;
        x.inlen   = sizeof(in) - 1;
        itest_exec_send(&x);
        fin = itest_exec_wait(l, &x, 60);
        expect_exit(fin, 0, 0);
        assert_string_equal(itest_bytes(fin, "stdout"),
                            "68656c6c6f00ff20776f726c640a");

        /* Large output: 64 KiB of each stream inline, all of it in the
         * chunks, in order, the last of each stream marked eof. */
        fin = py(l, &c, "e-large",
                 "import sys\n"
                 "sys.stdout.write(''.join(chr(97 + i % 26) "
                 "for i in range(300 * 1024)))\n"
                 "sys.stderr.write(''.join(chr(65 + i % 26) "
                 "for i in range(100 * 1024)))\n");
        expect_exit(fin, 0, 0);
        want = pattern('a', LARGE_OUT);
        assert_int_equal(strlen(itest_bytes(fin, "stdout")), 64 * 1024);
        assert_memory_equal(itest_bytes(fin, "stdout"), want, 64 * 1024);
        assert_true(sbx_event_int(fin, "output_chunks", 0) > 0);
        itest_read_output(c.sandbox, "e-large",
                          (int)sbx_event_int(fin, "output_chunks", 0), &out);
        print_message("300 KiB stdout + 100 KiB stderr: %d + %d chunks\n",
                      out.chunks[0], out.chunks[1]);
        assert_int_equal(out.extra, 0);
        assert_int_equal(out.chunks[0] + out.chunks[1],
                         sbx_event_int(fin, "output_chunks", 0));
        assert_int_equal(out.len[0], LARGE_OUT);
        assert_memory_equal(out.data[0], want, LARGE_OUT);
        assert_true(out.eof[0]);
        free(want);
        want = pattern('A', LARGE_ERR);
        assert_int_equal(strlen(itest_bytes(fin, "stderr")), 64 * 1024);
        assert_memory_equal(itest_bytes(fin, "stderr"), want, 64 * 1024);
        assert_int_equal(out.len[1], LARGE_ERR);
        assert_memory_equal(out.data[1], want, LARGE_ERR);
        assert_true(out.eof[1]);
        free(want);
        itest_output_free(&out);

        /* A deadline: stopped, and said so. */
        memset(&x, 0, sizeof(x));
        x.sandbox    = c.sandbox;
        x.lease      = c.lease;
        x.session    = c.session;
        x.exec_id    = "e-deadline";
        x.argv       = json_pack("[s,s]", "sleep", "60");
        x.timeout_ms = 1000;
        t0           = sbx_mono_us();
        itest_exec_send(&x);
        fin = itest_exec_wait(l, &x, 30);
        assert_true(sbx_event_bool(fin, "timed_out"));
        assert_int_not_equal(sbx_event_int(fin, "exit_code", 0), 0);
        print_message(
            "sleep 60 with a 1 s deadline: ExecFinished after "
            "%.1f ms (wall %.1f ms)\n",
            (double)(sbx_mono_us() - t0) / 1000.0,
            (double)itest_usage(fin, "wall_us") / 1000.0);

        /* Beyond the class's memory: OOM-killed and reported so. */
        fin = itest_run(l, &c, "e-oom", memory_bomb(limit_mb));
        assert_true(itest_usage_bool(fin, "oom_killed"));
        assert_int_equal(sbx_event_int(fin, "signal", -1), 9);
        assert_int_not_equal(sbx_event_int(fin, "exit_code", 0), 0);
        print_message("memory bomb in %lld MiB: peak %.0f MiB, exit %lld\n",
                      (long long)limit_mb,
                      (double)itest_usage(fin, "peak_memory_bytes") / 1048576.0,
                      (long long)sbx_event_int(fin, "exit_code", 0));

        /* ... and the sandbox still works. */
        fin = py(l, &c, "e-after-oom", "print('alive')");
        expect_exit(fin, 0, 0);
        assert_string_equal(itest_bytes(fin, "stdout"), "alive\n");
        assert_false(itest_usage_bool(fin, "oom_killed"));
        sb = itest_state(l, c.sandbox);
        assert_int_equal(sb->lease_version, c.lease);

        itest_release(l, &c);
        itest_destroy(l, session, c.sandbox);
        itest_kill(&cp, SIGTERM);
        itest_kill(&ex, SIGTERM);
}

/* A command killed with SIGKILL by itself after an earlier command of the
 * same sandbox was OOM-killed is not an OOM kill. */
static void test_sigkill_after_oom_is_not_oom(void **state)
{
        itest_proc_t ex, cp;
        itest_log_t *l;
        itest_claim_t c;
        const sbx_event_t *fin;
        char session[64];
        (void)state;

        ex = itest_executor("exec", NULL);
        cp = itest_control_plane("cp");
        l  = itest_exec_log_open();
        itest_claim(l, &c, itest_session(session, sizeof(session)), NULL);
        fin = itest_run(l, &c, "k-oom",
                        memory_bomb(itest_state(l, c.sandbox)->memory_mb));
        assert_true(itest_usage_bool(fin, "oom_killed"));
        fin = py(l, &c, "k-kill", "import os; os.kill(os.getpid(), 9)");
        assert_int_equal(sbx_event_int(fin, "signal", -1), 9);
        assert_false(itest_usage_bool(fin, "oom_killed"));

        itest_release(l, &c);
        itest_destroy(l, session, c.sandbox);
        itest_kill(&cp, SIGTERM);
        itest_kill(&ex, SIGTERM);
}

/* A long exec in sandbox A does not hold up an exec in sandbox B of the
 * same node: B's ExecFinished comes while A is still running. */
static void test_long_exec_does_not_block_another_sandbox(void **state)
{
        itest_proc_t ex, cp;
        itest_log_t *l;
        itest_claim_t a, b;
        itest_exec_t xa, xb;
        const sbx_event_t *fin;
        size_t ia = 0, ib = 0;
        char sa[64], sbs[64], ws[1400], marker[1500];
        struct stat st;
        int64_t deadline, t0;
        (void)state;

        ex = itest_executor("exec", NULL);
        cp = itest_control_plane("cp");
        l  = itest_exec_log_open();
        itest_claim(l, &a, itest_session(sa, sizeof(sa)), NULL);
        itest_claim(l, &b, itest_session(sbs, sizeof(sbs)), NULL);
        assert_string_not_equal(a.sandbox, b.sandbox);

        /* A: says it started (a file in its workspace), then sleeps. */
        memset(&xa, 0, sizeof(xa));
        xa.sandbox = a.sandbox;
        xa.lease   = a.lease;
        xa.session = a.session;
        xa.exec_id = "a-sleep";
        xa.argv    = json_pack("[s,s,s]", "sh", "-c",
                               "echo started > /workspace/a-started; sleep 8");
        itest_exec_send(&xa);
        snprintf(marker, sizeof(marker), "%s/a-started",
                 itest_workspace(sa, ws, sizeof(ws)));
        deadline = sbx_mono_us() + 60 * 1000000LL;
        while (stat(marker, &st) && sbx_mono_us() < deadline) {
                itest_log_pump(l, 50);
                itest_not_rejected(l, xa.rid);
        }
        assert_int_equal(stat(marker, &st), 0);

        /* B, while A sleeps. */
        memset(&xb, 0, sizeof(xb));
        xb.sandbox = b.sandbox;
        xb.lease   = b.lease;
        xb.session = b.session;
        xb.exec_id = "b-quick";
        xb.argv    = json_pack("[s,s,s]", "python3", "-c", "print('b')");
        t0         = sbx_mono_us();
        itest_exec_send(&xb);
        fin = itest_exec_wait(l, &xb, 60);
        expect_exit(fin, 0, 0);
        assert_string_equal(itest_bytes(fin, "stdout"), "b\n");
        print_message("exec in B while A runs sleep 8: %.1f ms\n",
                      (double)(sbx_mono_us() - t0) / 1000.0);
        assert_null(itest_exec_finished(l, a.sandbox, "a-sleep", NULL));
        assert_int_equal(itest_state(l, a.sandbox)->phase, SBX_SB_RUNNING);

        fin = itest_exec_wait(l, &xa, 60);
        expect_exit(fin, 0, 0);
        assert_non_null(itest_exec_finished(l, a.sandbox, "a-sleep", &ia));
        assert_non_null(itest_exec_finished(l, b.sandbox, "b-quick", &ib));
        assert_true(ib < ia);

        itest_release(l, &a);
        itest_release(l, &b);
        itest_destroy(l, sa, a.sandbox);
        itest_destroy(l, sbs, b.sandbox);
        itest_kill(&cp, SIGTERM);
        itest_kill(&ex, SIGTERM);
}

int main(int argc, char **argv)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_teardown(test_exec_round_trips,
                                      itest_exec_teardown),
            cmocka_unit_test_teardown(test_sigkill_after_oom_is_not_oom,
                                      itest_exec_teardown),
            cmocka_unit_test_teardown(
                test_long_exec_does_not_block_another_sandbox,
                itest_exec_teardown),
        };
        return itest_exec_main(argc, argv, "itest-exec", tests,
                               sizeof(tests) / sizeof(tests[0]));
}
