/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The executor as a reconciler (DESIGN.md §7, §9). An executor killed
 * with SIGKILL and started again on the same node loses no sandbox and
 * leaks none: a sandbox that kept its container goes on serving its lease,
 * one whose container was deleted while the executor was down is reported
 * lost, recycled and its claim failed, and a container the log does not
 * know is destroyed. And a sandbox whose init dies under it fails its
 * exec with the reason, is failed and recycled, while the node goes on
 * serving its other sandboxes. At the end the node's runtime has nothing.
 * The claim of a lost or failed sandbox must end FAILED with the reason
 * (checked last, after the clean-up).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "itest_exec.h"

static const sbx_event_t *py(itest_log_t *l,
                             const itest_claim_t *c,
                             const char *exec_id,
                             const char *code)
{
        return itest_run(l, c, exec_id,
                         json_pack("[s,s,s]", "python3", "-c", code));
}

/* Makes container @p id under the node's state root that no log knows:
 * what a crash between create and SandboxCreated would leave. */
static void make_orphan(const char *id)
{
        static const char *const argv[] = {"/bin/sleep", "3600", NULL};
        sbx_template_t *host;
        sbx_sandbox_spec_t spec;
        char dir[1200], err[1024];
        sbx_err_t e;

        snprintf(dir, sizeof(dir), "%s/templates/host", cfg->var_dir);
        host = sbx_template_host_new(dir, err, sizeof(err));
        if (!host)
                fail_msg("host template: %s", err);
        memset(&spec, 0, sizeof(spec));
        spec.id           = id;
        spec.runtime      = "runc";
        spec.tmpl         = host;
        spec.cpu_quota_us = 100000;
        spec.memory_mb    = 256;
        spec.pids_max     = 64;
        spec.disk_mb      = 256;
        spec.argv         = argv;
        e = sbx_runtime_create(itest_node.rt, &spec, err, sizeof(err));
        sbx_template_destroy(host);
        if (e)
                fail_msg("create orphan %s: %s", id, err);
}

/* Waits for claim @p id to end; it must have FAILED, not been released:
 * its sandbox was lost under it. */
static void expect_claim_failed(itest_log_t *l, const char *id)
{
        int64_t deadline     = sbx_mono_us() + 60 * 1000000LL;
        const sbx_state_t *c = NULL;
        while (sbx_mono_us() < deadline) {
                itest_log_pump(l, 100);
                c = itest_state(l, id);
                if (c->phase == SBX_CLAIM_FAILED ||
                    c->phase == SBX_CLAIM_RELEASED ||
                    c->phase == SBX_CLAIM_CANCELLED)
                        break;
        }
        print_message("claim of the lost sandbox: %s (%s)\n",
                      sbx_phase_name(SBX_AGG_CLAIM, c->phase),
                      c->reason ? c->reason : "");
        assert_int_equal(c->phase, SBX_CLAIM_FAILED);
}

static void wait_unlisted(const char *id, int secs)
{
        int64_t deadline = sbx_mono_us() + secs * 1000000LL;
        while (sbx_mono_us() < deadline) {
                itest_listed_t ls = itest_node_list();
                if (!itest_listed(&ls, id))
                        return;
                usleep(200000);
        }
        fail_msg("container %s still on node %s after %d s", id, itest_node.id,
                 secs);
}

static void test_killed_executor_restarts_and_reconciles(void **state)
{
        itest_proc_t ex, cp;
        itest_log_t *l;
        itest_claim_t c1, c2;
        itest_listed_t ls;
        const sbx_event_t *fin, *lost;
        const sbx_state_t *s;
        char s1[64], s2[64], orphan[64], err[512];
        int64_t down;
        (void)state;

        ex = itest_executor("exec", NULL);
        cp = itest_control_plane("cp");
        l  = itest_exec_log_open();
        itest_claim(l, &c1, itest_session(s1, sizeof(s1)), NULL);
        itest_claim(l, &c2, itest_session(s2, sizeof(s2)), NULL);
        fin = py(l, &c1, "r-before", "open('/tmp/mark', 'w').write('kept')");
        assert_int_equal(sbx_event_int(fin, "exit_code", -1), 0);

        /* The executor dies; behind its back S2's container goes and a
         * stranger's appears. */
        itest_kill(&ex, SIGKILL);
        down = sbx_mono_us();
        if (sbx_runtime_delete(itest_node.rt, c2.sandbox, err, sizeof(err)))
                fail_msg("delete %s: %s", c2.sandbox, err);
        snprintf(orphan, sizeof(orphan), "orphan-%ld", (long)getpid());
        make_orphan(orphan);
        ls = itest_node_list();
        assert_true(itest_listed(&ls, orphan));
        assert_true(itest_listed(&ls, c1.sandbox));
        assert_false(itest_listed(&ls, c2.sandbox));

        /* Back on the same node. The node was silent for less than the
         * keeper's grace (30 s), so nothing is lost for that. */
        ex = itest_executor("exec2", NULL);
        print_message("executor down for %.1f s\n",
                      (double)(sbx_mono_us() - down) / 1e6);

        itest_wait_phase(l, c2.sandbox, SBX_SB_TERMINATED, 90);
        lost = itest_find(l, c2.sandbox, SBX_EV_SANDBOX_LOST);
        assert_non_null(lost);
        print_message("S2: %s\n", sbx_event_str(lost, "reason"));
        assert_non_null(strstr(sbx_event_str(lost, "reason"), "reconcile"));
        assert_non_null(itest_find(l, c2.sandbox, SBX_EV_RECYCLE_STARTED));
        wait_unlisted(orphan, 60);

        /* S1 is as it was: same lease, its files, it runs commands. */
        s = itest_state(l, c1.sandbox);
        assert_int_equal(s->phase, SBX_SB_LEASED);
        assert_int_equal(s->lease_version, c1.lease);
        assert_int_equal(itest_count(l, c1.sandbox, SBX_EV_SANDBOX_LOST, 1), 0);
        fin = py(l, &c1, "r-after", "print(open('/tmp/mark').read())");
        assert_int_equal(sbx_event_int(fin, "exit_code", -1), 0);
        assert_string_equal(itest_bytes(fin, "stdout"), "kept\n");
        assert_int_equal(itest_state(l, c1.id)->phase, SBX_CLAIM_BOUND);

        itest_release(l, &c1);
        itest_destroy(l, s1, c1.sandbox);
        assert_int_equal(itest_node_list().n, 0);

        /* S2's client learns that its claim failed, and why. */
        expect_claim_failed(l, c2.id);
        itest_kill(&cp, SIGTERM);
        itest_kill(&ex, SIGTERM);
}

/* The init of a leased sandbox dies (as when the memory or pids limit
 * takes a whole gVisor sandbox down): its next exec says so, the sandbox
 * is failed and recycled, its claim failed; the other sandbox of the node
 * still runs commands. */
static void test_sandbox_dying_under_an_exec_is_failed(void **state)
{
        itest_proc_t ex, cp;
        itest_log_t *l;
        itest_claim_t a, b;
        const sbx_event_t *fin;
        char sa[64], sbs[64], err[512];
        int status;
        (void)state;

        ex = itest_executor("exec", NULL);
        cp = itest_control_plane("cp");
        l  = itest_exec_log_open();
        itest_claim(l, &a, itest_session(sa, sizeof(sa)), NULL);
        itest_claim(l, &b, itest_session(sbs, sizeof(sbs)), NULL);

        if (sbx_runtime_kill(itest_node.rt, a.sandbox, SIGKILL, err,
                             sizeof(err)))
                fail_msg("kill %s: %s", a.sandbox, err);
        fin = py(l, &a, "d-dead", "print('never')");
        print_message("exec in a dead sandbox: exit %lld, %s\n",
                      (long long)sbx_event_int(fin, "exit_code", 0),
                      sbx_event_str(fin, "error") ? sbx_event_str(fin, "error")
                                                  : "(no error)");
        assert_int_not_equal(sbx_event_int(fin, "exit_code", 0), 0);
        assert_non_null(sbx_event_str(fin, "error"));
        itest_wait_phase(l, a.sandbox, SBX_SB_TERMINATED, 90);
        assert_true(itest_find(l, a.sandbox, SBX_EV_SANDBOX_FAILED) ||
                    itest_find(l, a.sandbox, SBX_EV_SANDBOX_LOST));

        assert_int_equal(waitpid(ex.pid, &status, WNOHANG), 0);
        fin = py(l, &b, "d-alive", "print('alive')");
        assert_int_equal(sbx_event_int(fin, "exit_code", -1), 0);
        assert_string_equal(itest_bytes(fin, "stdout"), "alive\n");

        itest_release(l, &b);
        itest_destroy(l, sbs, b.sandbox);
        assert_int_equal(itest_node_list().n, 0);
        expect_claim_failed(l, a.id);
        itest_kill(&cp, SIGTERM);
        itest_kill(&ex, SIGTERM);
}

int main(int argc, char **argv)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_teardown(
                test_killed_executor_restarts_and_reconciles,
                itest_exec_teardown),
            cmocka_unit_test_teardown(
                test_sandbox_dying_under_an_exec_is_failed,
                itest_exec_teardown),
        };
        return itest_exec_main(argc, argv, "itest-rec", tests,
                               sizeof(tests) / sizeof(tests[0]));
}
