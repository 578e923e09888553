/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The executor as a reconciler (DESIGN.md §7, §9). An executor killed
 * with SIGKILL and started again on the same node loses no sandbox and
 * leaks none: a sandbox that kept its container goes on serving its lease,
 * one whose container was deleted while the executor was down is reported
 * lost and recycled, and its claim is restored from the sandbox's latest
 * snapshot into a new sandbox that has its files; a container the log
 * does not know is destroyed. And a sandbox whose init dies under it
 * fails its exec with the reason, is failed and recycled, while the node
 * goes on serving its other sandboxes; the claim of a failed sandbox ends
 * FAILED with the reason (checked last, after the clean-up). At the end
 * the node's runtime has nothing.
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
 * its sandbox failed under it. */
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

/* Waits up to 90 s for claim @p id to be bound to a sandbox other than
 * @p old. */
static const sbx_state_t *rebound(itest_log_t *l,
                                  const char *id,
                                  const char *old)
{
        int64_t deadline     = sbx_mono_us() + 90 * 1000000LL;
        const sbx_state_t *c = NULL;
        while (sbx_mono_us() < deadline) {
                itest_log_pump(l, 100);
                c = itest_state(l, id);
                if (c->phase == SBX_CLAIM_BOUND && strcmp(c->sandbox_id, old))
                        return c;
                if (c->phase == SBX_CLAIM_FAILED)
                        fail_msg("claim %s failed: %s", id,
                                 c->reason ? c->reason : "");
        }
        fail_msg("claim %s not bound again within 90 s (it is %s)", id,
                 c ? sbx_phase_name(SBX_AGG_CLAIM, c->phase) : "unknown");
        return NULL;
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
        const sbx_event_t *fin, *lost, *snap, *again;
        const sbx_state_t *s;
        itest_claim_t r2;
        char s1[64], s2[64], orphan[64], err[512], sid[64];
        int64_t down;
        (void)state;

        ex = itest_executor("exec", NULL);
        cp = itest_control_plane("cp");
        l  = itest_exec_log_open();
        itest_claim(l, &c1, itest_session(s1, sizeof(s1)), NULL);
        itest_claim(l, &c2, itest_session(s2, sizeof(s2)), NULL);
        fin = py(l, &c1, "r-before", "open('/tmp/mark', 'w').write('kept')");
        assert_int_equal(sbx_event_int(fin, "exit_code", -1), 0);
        fin = py(l, &c2, "r-s2",
                 "import os; os.makedirs('/opt/s2', exist_ok=True); "
                 "open('/opt/s2/mark', 'w').write('snapshotted')");
        assert_int_equal(sbx_event_int(fin, "exit_code", -1), 0);
        snap = itest_snapshot(l, &c2);
        snprintf(sid, sizeof(sid), "%s", sbx_event_str(snap, "snapshot_id"));

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

        /* S2's claim is placed again, restored from S2's snapshot into a
         * new sandbox of this node: its client finds it bound anew, and
         * why. */
        s     = rebound(l, c2.id, c2.sandbox);
        again = itest_find(l, c2.id, SBX_EV_PLACEMENT_FAILED);
        assert_non_null(again);
        print_message("S2's claim: %s\n", sbx_event_str(again, "reason"));
        assert_non_null(strstr(sbx_event_str(again, "reason"),
                               "restored from its latest snapshot"));
        assert_string_equal(sbx_event_str(again, "snapshot_id"), sid);
        assert_string_not_equal(s->sandbox_id, c2.sandbox);
        assert_string_equal(s->node_id, itest_node.id);
        r2 = c2;
        snprintf(r2.sandbox, sizeof(r2.sandbox), "%s", s->sandbox_id);
        r2.lease = s->lease_version;
        fin = py(l, &r2, "r-restored", "print(open('/opt/s2/mark').read())");
        assert_int_equal(sbx_event_int(fin, "exit_code", -1), 0);
        assert_string_equal(itest_bytes(fin, "stdout"), "snapshotted\n");

        itest_release(l, &c1);
        itest_destroy(l, s1, c1.sandbox);
        itest_release(l, &r2);
        itest_destroy(l, s2, r2.sandbox);
        assert_int_equal(itest_node_list().n, 0);
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

/* The node itself goes (its executor dies and stays dead): past the
 * keeper's grace its sandbox is lost and its claim placed anew on
 * another node, saying why. */
static void test_node_gone_claim_placed_anew(void **state)
{
        itest_proc_t ex, cp, other;
        itest_log_t *l;
        itest_claim_t c, moved;
        const sbx_state_t *s;
        const sbx_event_t *again, *fin;
        char s1[64], node_b[128], path[1400];
        int64_t t0;
        (void)state;

        ex = itest_executor("exec", NULL);
        cp = itest_control_plane("cp");
        l  = itest_exec_log_open();
        itest_claim(l, &c, itest_session(s1, sizeof(s1)), NULL);
        itest_kill(&ex, SIGKILL);
        t0 = sbx_mono_us();
        snprintf(node_b, sizeof(node_b), "%s-b", itest_node.id);
        other = itest_executor_on("exec-b", NULL, node_b);

        s = rebound(l, c.id, c.sandbox);
        print_message("claim moved from %s to %s on %s after %.1f s\n",
                      c.sandbox, s->sandbox_id, s->node_id,
                      (double)(sbx_mono_us() - t0) / 1e6);
        assert_string_equal(s->node_id, node_b);
        assert_int_equal(
            itest_state(l, c.sandbox)->phase == SBX_SB_LOST ||
                itest_state(l, c.sandbox)->phase == SBX_SB_RECYCLING ||
                itest_state(l, c.sandbox)->phase == SBX_SB_TERMINATED,
            1);
        again = itest_find(l, c.id, SBX_EV_PLACEMENT_FAILED);
        assert_non_null(again);
        print_message("why: %s\n", sbx_event_str(again, "reason"));
        assert_non_null(strstr(sbx_event_str(again, "reason"), "silent"));
        assert_non_null(strstr(sbx_event_str(again, "reason"), "placed anew"));
        assert_string_equal(sbx_event_str(again, "node_id"), itest_node.id);

        moved = c;
        snprintf(moved.sandbox, sizeof(moved.sandbox), "%s", s->sandbox_id);
        moved.lease = s->lease_version;
        fin         = py(l, &moved, "g-moved", "print('here')");
        assert_int_equal(sbx_event_int(fin, "exit_code", -1), 0);
        assert_string_equal(itest_bytes(fin, "stdout"), "here\n");
        itest_release(l, &moved);
        itest_destroy(l, s1, moved.sandbox);
        itest_kill(&other, SIGTERM);
        snprintf(path, sizeof(path), "%s/run/%s", cfg->var_dir, node_b);
        sbx_fs_rmtree(path, NULL, 0);
        snprintf(path, sizeof(path), "%s/layers/%s", cfg->var_dir, node_b);
        sbx_fs_rmtree(path, NULL, 0);
        /* The dead node's container: the teardown deletes it. */
        itest_kill(&cp, SIGTERM);
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
            cmocka_unit_test_teardown(test_node_gone_claim_placed_anew,
                                      itest_exec_teardown),
        };
        return itest_exec_main(argc, argv, "itest-rec", tests,
                               sizeof(tests) / sizeof(tests[0]));
}
