/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Snapshots and forks through the control plane, on real sandboxes: a
 * client asks for a snapshot of its leased sandbox (sbx.Snapshot), the
 * executor pauses it, captures its writable layers into the node's store
 * and resumes it (SnapshotRequested, then SnapshotTaken with the
 * snapshot's content id, size and time); a claim with that snapshot_id is
 * a fork: placed on the node that holds the layers, never a reuse, a new
 * sandbox that sees the files as they were at the snapshot, while what
 * the parent and the fork write afterwards stays each their own. A
 * snapshot of the fork is a child of the first (a chain). A fork of a
 * snapshot nobody took fails with the reason; a snapshot of a running
 * sandbox is refused. Prints the snapshot and fork times.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "itest_exec.h"

static void test_snapshot_then_fork(void **state)
{
        itest_proc_t ex, cp;
        itest_log_t *l;
        itest_claim_t parent, fork, child;
        const sbx_event_t *taken, *made;
        char s1[64], s2[64], snap[64], rid[64];
        const char *why;
        int64_t t0;
        (void)state;

        ex = itest_executor("exec", NULL);
        cp = itest_control_plane("cp");
        l  = itest_exec_log_open();
        itest_session(s1, sizeof(s1));
        itest_session(s2, sizeof(s2));
        itest_claim(l, &parent, s1, NULL);
        itest_sh(l, &parent,
                 "mkdir -p /opt/proj && echo A > /opt/proj/state && "
                 "head -c 1048576 /dev/urandom > /opt/proj/blob");

        /* A snapshot of the leased sandbox: taken, and it still runs. */
        taken = itest_snapshot(l, &parent);
        snprintf(snap, sizeof(snap), "%s", sbx_event_str(taken, "snapshot_id"));
        assert_int_equal(strncmp(snap, "snap-", 5), 0);
        assert_true(sbx_event_int(taken, "size_bytes", 0) >= 1048576);
        assert_null(sbx_event_str(taken, "parent_snapshot"));
        assert_string_equal(itest_state(l, parent.sandbox)->last_snapshot,
                            snap);
        print_message("snapshot %s of %s: %lld bytes in %.1f ms\n", snap,
                      parent.sandbox,
                      (long long)sbx_event_int(taken, "size_bytes", 0),
                      (double)sbx_event_int(taken, "duration_us", 0) / 1000);
        assert_string_equal(itest_sh(l, &parent, "cat /opt/proj/state"), "A\n");
        itest_sh(l, &parent, "echo B > /opt/proj/state");

        /* A fork in another session: a new sandbox with the snapshot's
         * files, not what the parent wrote since. */
        t0 = sbx_mono_us();
        itest_claim_with(l, &fork, s2, NULL,
                         json_pack("{s:s}", "snapshot_id", snap));
        print_message("fork of %s bound in %.1f ms\n", snap,
                      (double)(sbx_mono_us() - t0) / 1000);
        assert_string_not_equal(fork.sandbox, parent.sandbox);
        assert_null(itest_find(l, fork.id, SBX_EV_REUSE_CHOSEN));
        made = itest_find(l, fork.sandbox, SBX_EV_SANDBOX_CREATED);
        assert_non_null(made);
        assert_string_equal(sbx_event_str(made, "origin"), "fork");
        assert_string_equal(sbx_event_str(made, "snapshot_id"), snap);
        assert_string_equal(itest_sh(l, &fork, "cat /opt/proj/state"), "A\n");
        assert_string_equal(itest_sh(l, &fork, "wc -c < /opt/proj/blob"),
                            "1048576\n");
        /* Each writes its own from here on. */
        itest_sh(l, &fork,
                 "echo F > /opt/proj/fork && echo C > /opt/proj/state");
        assert_string_equal(
            itest_sh(l, &parent, "cat /opt/proj/state; ls /opt/proj"),
            "B\nblob\nstate\n");
        assert_string_equal(itest_sh(l, &fork, "cat /opt/proj/state"), "C\n");

        /* A snapshot of the fork is a child of the first; its fork sees
         * both. */
        taken = itest_snapshot(l, &fork);
        assert_string_equal(sbx_event_str(taken, "parent_snapshot"), snap);
        itest_claim_with(l, &child, s2, NULL,
                         json_pack("{s:s}", "snapshot_id",
                                   sbx_event_str(taken, "snapshot_id")));
        assert_string_equal(
            itest_sh(l, &child, "cat /opt/proj/state /opt/proj/fork"),
            "C\nF\n");

        /* No snapshot of that id: the fork fails, saying so. */
        {
                itest_claim_t bad;
                const sbx_state_t *st;
                char uuid[37];
                json_t *req;
                memset(&bad, 0, sizeof(bad));
                sbx_uuid(uuid);
                snprintf(bad.id, sizeof(bad.id), "claim-%s", uuid);
                req = itest_acquire(bad.id, ITEST_TENANT, s2, ITEST_TASK);
                json_object_set_new(
                    json_object_get(json_object_get(req, "command"),
                                    "sbx.AcquireSandbox"),
                    "snapshot_id", json_string("snap-000000000000"));
                itest_request(prod, codec, req, bad.id);
                json_decref(req);
                st = itest_wait_phase(l, bad.id, SBX_CLAIM_FAILED, 60);
                assert_non_null(strstr(st->reason, "no snapshot"));
        }

        /* Not while an exec runs. */
        {
                itest_exec_t x;
                memset(&x, 0, sizeof(x));
                x.sandbox = parent.sandbox;
                x.lease   = parent.lease;
                x.session = s1;
                x.exec_id = "x-long";
                x.argv    = json_pack("[s,s]", "sleep", "5");
                itest_exec_send(&x);
                itest_wait_phase(l, parent.sandbox, SBX_SB_RUNNING, 30);
                itest_send(s1, parent.sandbox, "sbx.Snapshot",
                           json_pack("{s:s, s:I}", "sandbox_id", parent.sandbox,
                                     "lease_version", (json_int_t)parent.lease),
                           rid);
                why = itest_wait_rejected(l, rid, 30);
                assert_non_null(strstr(why, "running exec"));
                itest_exec_wait(l, &x, 60);
        }

        itest_destroy(l, s2, child.sandbox);
        itest_destroy(l, s2, fork.sandbox);
        itest_destroy(l, s1, parent.sandbox);
        itest_kill(&cp, SIGTERM);
        itest_kill(&ex, SIGTERM);
}

/* ITEST_TASK with packages @p pkgs ([{name, constraint}], stolen). */
static json_t *task_with(json_t *pkgs)
{
        return json_pack("{s:s, s:o}", "text", ITEST_TASK, "packages", pkgs);
}

/*
 * The design origin's conflict: the session's sandbox has pandas 3.1.1
 * (and numpy 2.4.6); a project pinned to pandas==1.5.3 and numpy<1.24
 * must not get it uninstalled in place: the scheduler forks the session's
 * clean snapshot, taken before the install, instead. A task happy with
 * what is installed reuses the sandbox as is. (The packages are the
 * dist-info directories pip would leave: the manifest reads names; the
 * project's files are in /root, which a reuse tolerates.)
 */
static void test_conflict_forks_the_clean_snapshot(void **state)
{
        itest_proc_t ex, cp;
        itest_log_t *l;
        itest_claim_t c, pinned, same;
        const sbx_event_t *taken, *rc;
        char s1[64], clean[64];
        (void)state;

        ex = itest_executor("exec", NULL);
        cp = itest_control_plane("cp");
        l  = itest_exec_log_open();
        itest_session(s1, sizeof(s1));
        itest_claim(l, &c, s1,
                    task_with(json_pack("[{s:s}]", "name", "pandas")));
        itest_sh(l, &c,
                 "mkdir -p /root/proj && echo data > /root/proj/sales.csv");
        taken = itest_snapshot(l, &c);
        snprintf(clean, sizeof(clean), "%s",
                 sbx_event_str(taken, "snapshot_id"));
        itest_sh(l, &c,
                 "d=/usr/local/lib/python3.11/dist-packages && mkdir -p "
                 "$d/pandas-3.1.1.dist-info $d/numpy-2.4.6.dist-info");
        {
                int64_t deadline = sbx_mono_us() + 30 * 1000000LL;
                while (sbx_mono_us() < deadline &&
                       !sbx_streq(itest_state(l, c.sandbox)->env_packages,
                                  "numpy==2.4.6,pandas==3.1.1"))
                        itest_log_pump(l, 100);
                assert_string_equal(itest_state(l, c.sandbox)->env_packages,
                                    "numpy==2.4.6,pandas==3.1.1");
        }
        itest_release(l, &c);

        /* pinned to what the sandbox does not have: a fork of the clean
         * snapshot, not the sandbox */
        itest_claim(
            l, &pinned, s1,
            task_with(json_pack("[{s:s, s:s}, {s:s, s:s}]", "name", "pandas",
                                "constraint", "==1.5.3", "name", "numpy",
                                "constraint", "<1.24")));
        rc = itest_find(l, pinned.id, SBX_EV_REUSE_CHOSEN);
        if (!rc)
                fail_msg("the pinned claim was not forked: %s",
                         sbx_event_str(itest_find(l, pinned.id, SBX_EV_PLACED),
                                       "reason"));
        print_message("pinned: %s\n", sbx_event_str(rc, "reason"));
        assert_string_equal(sbx_event_str(rc, "mode"), "fork");
        assert_string_equal(sbx_event_str(rc, "snapshot_id"), clean);
        assert_non_null(strstr(sbx_event_str(rc, "reason"),
                               "the task needs pandas==1.5.3, 3.1.1 is "
                               "installed"));
        assert_string_not_equal(pinned.sandbox, c.sandbox);
        assert_string_equal(
            itest_sh(
                l, &pinned,
                "cat /root/proj/sales.csv; test -e /usr/local/lib/python3.11/"
                "dist-packages/pandas-3.1.1.dist-info && echo pandas-3 || "
                "echo clean"),
            "data\nclean\n");
        itest_release(l, &pinned);

        /* content with pandas 3: the sandbox itself, as is */
        itest_claim(l, &same, s1,
                    task_with(json_pack("[{s:s, s:s}]", "name", "pandas",
                                        "constraint", ">=3")));
        assert_string_equal(same.sandbox, c.sandbox);
        rc = itest_find(l, same.id, SBX_EV_REUSE_CHOSEN);
        assert_non_null(rc);
        assert_string_equal(sbx_event_str(rc, "mode"), "as_is");
        itest_release(l, &same);

        itest_destroy(l, s1, pinned.sandbox);
        itest_destroy(l, s1, c.sandbox);
        itest_kill(&cp, SIGTERM);
        itest_kill(&ex, SIGTERM);
}

int main(int argc, char **argv)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_teardown(test_snapshot_then_fork,
                                      itest_exec_teardown),
            cmocka_unit_test_teardown(test_conflict_forks_the_clean_snapshot,
                                      itest_exec_teardown),
        };
        return itest_exec_main(argc, argv, "itest-snap", tests,
                               sizeof(tests) / sizeof(tests[0]));
}
