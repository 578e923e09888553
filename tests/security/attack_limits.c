/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Attacks of the containment suite on the sandbox's limits: a fork bomb,
 * a memory bomb, forks and threads past the pids limit, and processes
 * that try to outlive the exec deadline. Each asserts that the limit held
 * (the sampler saw no more than it allows), that the host kept working,
 * and what became of the sandbox: under runc it serves the next exec,
 * under runsc a memory or pids bomb takes it down whole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <signal.h>

#include "agent/client.h"
#include "containment.h"
#include "core/util.h"
#include "runtime/runtime.h"

/* ---- what a limit leaves behind ---- */

/* The sandbox is still running and its agent serves a new exec. */
static void expect_sandbox_usable(box_t *b)
{
        static const char *const echo[] = {"/bin/echo", "alive", NULL};
        sbx_sandbox_status_t st;
        char err[512];
        int pid;
        result_t *r;
        assert_int_equal(
            sbx_runtime_state(S.fx.rt, b->id, &st, &pid, err, sizeof(err)),
            SBX_OK);
        assert_int_equal(st, SBX_SANDBOX_RUNNING);
        r = exec_in(b, echo, 10000);
        assert_int_equal(r->exit.exit_code, 0);
        assert_string_equal(out_of(r), "alive\n");
}

/*
 * Under runsc one host process, gVisor's sentry, holds the memory and
 * makes the host threads of the whole sandbox. Where runc's kernel stops
 * the one process that hits the memory or pids limit, here the kernel
 * stops the sentry (OOM-killed, or dead for want of a thread) and the
 * whole sandbox with it: still contained, but the unit that dies is the
 * sandbox, not the process.
 */
static int whole_sandbox_dies(void)
{
        return !strcmp(S.runtime, "runsc");
}

/* After an attack that hit a limit: under runc the sandbox goes on and
 * serves a new exec; under runsc it is dead, the agent's connection
 * broke, and the runtime reports it stopped. */
static void expect_limit_outcome(box_t *b, const result_t *r)
{
        sbx_sandbox_status_t st;
        char err[512];
        int pid;
        if (!whole_sandbox_dies()) {
                assert_string_equal(r->errstr, "");
                expect_sandbox_usable(b);
                return;
        }
        if (!r->errstr[0])
                fail_msg("%s: the sandbox survived: update this test",
                         S.runtime);
        printf("  %s: the sandbox died: %s\n", S.runtime, r->errstr);
        for (int i = 0; i < 100; i++) {
                assert_int_equal(sbx_runtime_state(S.fx.rt, b->id, &st, &pid,
                                                   err, sizeof(err)),
                                 SBX_OK);
                if (st == SBX_SANDBOX_STOPPED)
                        break;
                sleep_ms(50);
        }
        assert_int_equal(st, SBX_SANDBOX_STOPPED);
}

/* The sandbox's cgroup counts @p base tasks again (the agent alone) within
 * 5 s. runc only: under runsc it counts gVisor's threads and stub
 * processes, which gVisor keeps for later. */
static void expect_pids_back_to(box_t *b, uint64_t base)
{
        if (whole_sandbox_dies())
                return;
        for (int i = 0; i < 100 && rtfx_usage(&S.fx, b->id).pids_current > base;
             i++)
                sleep_ms(50);
        assert_true(rtfx_usage(&S.fx, b->id).pids_current <= base);
}

/* ---- fork bomb ---- */

/* Reads "max N" from the pids cgroup of @p id: forks it refused. */
static long pids_refused(const box_t *b)
{
        char p[1024], cgp[256], *s;
        long n = -1;
        sbx_fmt(p, sizeof(p), "%s%s/pids.events",
                sbx_cgroup_mount(sbx_runtime_cgroup(S.fx.rt), "pids"),
                sbx_runtime_cgroup_path(b->id, cgp, sizeof(cgp)));
        s = host_read(p);
        if (sscanf(s, "max %ld", &n) != 1)
                n = -1;
        free(s);
        return n;
}

void test_fork_bomb(void **state)
{
        static const char *const bomb[] = {
            "/bin/sh", "-c", "f() { f | f & }; f; while :; do :; done", NULL};
        box_t *b = *state;
        uint64_t base;
        char err[512];
        int killed = -1;
        int64_t t0;
        watch_t *w;
        result_t *r;

        box_start(b, "forkbomb", NULL);
        base       = rtfx_usage(&S.fx, b->id).pids_current;
        b->may_die = whole_sandbox_dies();
        w          = watch_start(b);
        t0         = sbx_mono_us();
        r          = exec_in(b, bomb, 3000);
        watch_stop(b);
        show("fork-bomb", r);
        printf("  %s fork-bomb: pids.events max %ld\n", S.runtime,
               pids_refused(b));
        assert_true(sbx_mono_us() - t0 < 15 * 1000000);
        assert_true(pids_refused(b) > 0); /* it did hit the limit */
        assert_true(w->max_pids <= (uint64_t)b->lim.pids_max);
        expect_host_responsive(w);
        if (!whole_sandbox_dies()) {
                assert_true(r->exit.timed_out);
                assert_int_equal(r->exit.signal, SIGKILL);
                assert_int_equal(w->ping_failed, 0); /* the agent kept up */
                assert_int_equal(
                    sbx_agent_reset(b->conn, &killed, err, sizeof(err)),
                    SBX_OK);
                printf("  %s fork-bomb: reset killed %d\n", S.runtime, killed);
        }
        expect_limit_outcome(b, r);
        expect_pids_back_to(b, base);
        box_stop(b);
}

/* ---- memory bomb ---- */

void test_memory_bomb(void **state)
{
        static const char script[] =
            "chunks = []\n"
            "for i in range(128):\n"
            "    chunks.append(b'x' * (16 << 20))\n"
            "    print('allocated', (i + 1) * 16, flush=True)\n"
            "print('survived', flush=True)\n";
        limits_t lim = default_limits;
        box_t *b     = *state;
        char err[512];
        sbx_usage_t u;
        watch_t *w;
        result_t *r;

        lim.memory_mb = 96;
        box_start(b, "membomb", &lim);
        b->may_die = whole_sandbox_dies();
        assert_int_equal(
            sbx_runtime_usage_reset(S.fx.rt, b->id, err, sizeof(err)), SBX_OK);
        w = watch_start(b);
        r = py(b, PY_DEADLINE_MS, script, NULL);
        watch_stop(b);
        u = rtfx_usage(&S.fx, b->id);
        show("memory-bomb", r);
        printf("  %s memory-bomb: peak %llu KiB of %lld MiB, oom_kills %llu\n",
               S.runtime, (unsigned long long)(u.memory_peak >> 10),
               (long long)lim.memory_mb, (unsigned long long)u.oom_kills);
        assert_null(line_of(r, "survived"));
        assert_true(u.oom_kills > 0);
        assert_true(u.memory_peak <=
                    ((uint64_t)lim.memory_mb << 20) + (4u << 20));
        expect_host_responsive(w);
        if (!whole_sandbox_dies()) {
                assert_false(r->exit.timed_out);
                assert_int_equal(r->exit.signal, SIGKILL);
        }
        expect_limit_outcome(b, r);
        box_stop(b);
}

/* ---- exceed the pids limit ---- */

void test_pids_limit(void **state)
{
        static const char script[] =
            "import threading\n"
            "pids, err = [], 'none'\n"
            "for i in range(500):\n"
            "    try:\n"
            "        pid = os.fork()\n"
            "    except OSError as e:\n"
            "        err = ename(e.errno)\n"
            "        break\n"
            "    if pid == 0:\n"
            "        time.sleep(60)\n"
            "        os._exit(0)\n"
            "    pids.append(pid)\n"
            "print('forked', len(pids), err, flush=True)\n"
            "for p in pids:\n"
            "    os.kill(p, signal.SIGKILL)\n"
            "    os.waitpid(p, 0)\n"
            "stop, threads, terr = threading.Event(), [], 'none'\n"
            "for i in range(500):\n"
            "    t = threading.Thread(target=stop.wait)\n"
            "    try:\n"
            "        t.start()\n"
            "    except RuntimeError as e:\n"
            "        terr = str(e).replace(' ', '-')\n"
            "        break\n"
            "    threads.append(t)\n"
            "print('threads', len(threads), terr, flush=True)\n"
            "stop.set()\n"
            "for t in threads:\n"
            "    t.join()\n"
            "print('done')\n";
        limits_t lim = default_limits;
        box_t *b     = *state;
        char err[32];
        int forked = -1, threads = -1;
        watch_t *w;
        result_t *r;

        lim.pids_max  = 32;
        lim.memory_mb = 512; /* the pids limit, not memory, must stop it */
        box_start(b, "pids", &lim);
        b->may_die = whole_sandbox_dies();
        w          = watch_start(b);
        r          = py(b, PY_DEADLINE_MS, script, NULL);
        watch_stop(b);
        show("pids-limit", r);
        printf("  %s pids-limit: pids.events max %ld\n", S.runtime,
               pids_refused(b));
        assert_true(w->max_pids <= (uint64_t)b->lim.pids_max);
        assert_true(pids_refused(b) > 0);
        expect_host_responsive(w);
        if (!whole_sandbox_dies()) {
                expect_completed(r);
                assert_non_null(line_of(r, "forked"));
                assert_int_equal(
                    sscanf(line_of(r, "forked"), "%d %31s", &forked, err), 2);
                assert_string_equal(err, "EAGAIN");
                assert_true(forked > 0 && forked < lim.pids_max);
                assert_int_equal(sscanf(line_of(r, "threads"), "%d", &threads),
                                 1);
                assert_true(threads < lim.pids_max);
        }
        expect_limit_outcome(b, r);
        box_stop(b);
}

/* ---- keep running past the exec deadline ---- */

/* Processes in the box other than the agent and the counting python;
 * -1 if the count failed. */
static int others_in(box_t *b)
{
        static const char *const count[] = {
            "/usr/bin/python3", "-c",
            "import os\n"
            "me = os.getpid()\n"
            "print(sum(1 for p in os.listdir('/proc') if p.isdigit() and "
            "int(p) not in (1, me)))\n",
            NULL};
        result_t r = {0};
        int n      = -1;
        if (!exec_into(b, count, 30000, &r) && r.exit.exit_code == 0 &&
            r.out.data)
                n = atoi((const char *)r.out.data);
        result_free(&r);
        return n;
}

void test_past_deadline(void **state)
{
        static const char *const sleeper[] = {"/bin/sleep", "60", NULL};
        static const char escaper[] =
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    if os.fork() == 0:\n"
            "        signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "        signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
            "        fd = os.open('/dev/null', os.O_RDWR)\n"
            "        for i in (0, 1, 2):\n"
            "            os.dup2(fd, i)\n"
            "        while True:\n"
            "            time.sleep(0.05)\n"
            "    os._exit(0)\n"
            "os.wait()\n"
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "print('escaped', flush=True)\n"
            "time.sleep(60)\n";
        box_t *b = *state;
        uint64_t base;
        int64_t t0;
        int left = -1;
        result_t *r;

        box_start(b, "deadline", NULL);
        base = rtfx_usage(&S.fx, b->id).pids_current;
        t0   = sbx_mono_us();
        r    = exec_in(b, sleeper, 1000);
        show("deadline-sleep", r);
        assert_true(r->exit.timed_out);
        assert_true(sbx_mono_us() - t0 < 10 * 1000000);
        assert_int_equal(others_in(b), 0);

        t0 = sbx_mono_us();
        r  = py(b, 3000, escaper, NULL);
        show("deadline-escape", r);
        assert_non_null(line_of(r, "escaped")); /* it got that far */
        assert_true(r->exit.timed_out);
        assert_true(sbx_mono_us() - t0 < 15 * 1000000);
        for (int i = 0; i < 20 && (left = others_in(b)) != 0; i++)
                sleep_ms(100);
        printf("  %s deadline-escape: %d processes left after the exec\n",
               S.runtime, left);
        assert_int_equal(left, 0);
        expect_pids_back_to(b, base);
        box_stop(b);
}
