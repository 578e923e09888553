/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The reuse boundaries of the design's origin, each decided by the real
 * control plane over real sandboxes:
 * - a small dependency change (one package in a version the sandbox
 *   excludes) reuses the sandbox with an isolated venv: the task's pip
 *   installs there, and at release the venv is gone and the sandbox's
 *   packages are as they were;
 * - the same user in a new session: no runtime reuse, a sandbox of its own;
 * - the same project re-entered in a new session: its clean snapshot is
 *   restored (a fork), with the project's files and packages;
 * - unknown pollution: the sandbox is never reused; at release it is
 *   recycled at level 2 (fork), and the session goes on from its clean
 *   snapshot, without the pollution.
 * (Tenant, taint and runtime version boundaries are in the unit tests of
 * the reuse check; the conflict fork in test_snapshot_fork.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "itest_exec.h"

#define SITE "/usr/local/lib/python3.11/dist-packages"

/* Waits until sandbox @p sb's manifest lists packages @p pkgs (NULL: any)
 * at dirty level @p dirty (-1: any). */
static void wait_manifest(itest_log_t *l,
                          const char *sb,
                          const char *pkgs,
                          int dirty)
{
        int64_t deadline = sbx_mono_us() + 30 * 1000000LL;
        const sbx_state_t *st;
        while (sbx_mono_us() < deadline) {
                st = itest_state(l, sb);
                if ((!pkgs || sbx_streq(st->env_packages, pkgs)) &&
                    (dirty < 0 || st->dirty_level == dirty))
                        return;
                itest_log_pump(l, 100);
        }
        st = itest_state(l, sb);
        fail_msg("%s: manifest %s dirty %d, want %s dirty %d", sb,
                 st->env_packages ? st->env_packages : "-", st->dirty_level,
                 pkgs ? pkgs : "-", dirty);
}

static json_t *needs(const char *name, const char *constraint)
{
        return json_pack("{s:s, s:[{s:s, s:s}]}", "text", ITEST_TASK,
                         "packages", "name", name, "constraint", constraint);
}

static const sbx_event_t *reuse_of(itest_log_t *l, const itest_claim_t *c)
{
        const sbx_event_t *rc = itest_find(l, c->id, SBX_EV_REUSE_CHOSEN);
        if (!rc)
                fail_msg("%s was not a reuse: %s", c->id,
                         sbx_event_str(itest_find(l, c->id, SBX_EV_PLACED),
                                       "reason"));
        print_message("%s: %s %s\n", c->id, sbx_event_str(rc, "mode"),
                      sbx_event_str(rc, "reason"));
        return rc;
}

/* The test tenant's dependency cache holds cycler 0.12.1, the wheel the
 * install took into acme's (deploy/deps/acme.txt). */
static void seed_cache(void)
{
        char cmd[2048];
        snprintf(cmd, sizeof(cmd),
                 "mkdir -p '%s/deps/" ITEST_TENANT
                 "/pip' && cp "
                 "'%s/deps/acme/pip/cycler-0.12.1-py3-none-any.whl' "
                 "'%s/deps/" ITEST_TENANT "/pip/'",
                 cfg->var_dir, cfg->var_dir, cfg->var_dir);
        if (system(cmd))
                fail_msg("no cycler wheel in acme's cache: %s", cmd);
}

static void test_small_change_reuses_with_a_venv(void **state)
{
        itest_proc_t ex, cp;
        itest_log_t *l;
        itest_claim_t c, v, after;
        const sbx_event_t *rc;
        char s1[64];
        (void)state;

        ex = itest_executor("exec", NULL);
        cp = itest_control_plane("cp");
        l  = itest_exec_log_open();
        itest_session(s1, sizeof(s1));
        seed_cache();
        itest_claim(l, &c, s1, NULL);
        /* the sandbox has cycler 0.10.0 (a dist-info, as pip leaves it) */
        itest_sh(
            l, &c,
            "d=" SITE
            "/cycler-0.10.0.dist-info && mkdir -p $d && printf "
            "'Metadata-Version: 2.1\\nName: cycler\\nVersion: 0.10.0\\n' > "
            "$d/METADATA && echo cycler > $d/top_level.txt");
        wait_manifest(l, c.sandbox, "cycler==0.10.0", 2);
        itest_release(l, &c);

        /* cycler>=0.12: one conflict, a venv above the sandbox's own */
        itest_claim(l, &v, s1, needs("cycler", ">=0.12"));
        rc = reuse_of(l, &v);
        assert_string_equal(v.sandbox, c.sandbox);
        assert_string_equal(sbx_event_str(rc, "mode"), "venv");
        assert_non_null(strstr(sbx_event_str(rc, "reason"),
                               "the task needs cycler>=0.12, 0.10.0 is "
                               "installed"));
        assert_string_equal(itest_sh(l, &v,
                                     "echo $VIRTUAL_ENV; python3 -c 'import "
                                     "sys; print(sys.prefix)'"),
                            "/tmp/sbx-venv\n/tmp/sbx-venv\n");
        /* a real install, from the tenant's cache, into the venv */
        itest_sh(l, &v, "pip install -q cycler==0.12.1");
        assert_string_equal(
            itest_sh(l, &v,
                     "python3 -c 'import cycler, importlib.metadata as m; "
                     "print(cycler.__file__, m.version(\"cycler\"))'"),
            "/tmp/sbx-venv/lib/python3.11/site-packages/cycler/__init__.py "
            "0.12.1\n");
        wait_manifest(l, v.sandbox, "cycler==0.10.0", -1);
        itest_release(l, &v);

        /* released: the venv is gone, the sandbox's packages unchanged */
        itest_claim(l, &after, s1, NULL);
        rc = reuse_of(l, &after);
        assert_string_equal(sbx_event_str(rc, "mode"), "as_is");
        assert_string_equal(after.sandbox, c.sandbox);
        assert_string_equal(itest_sh(l, &after,
                                     "test -e /tmp/sbx-venv && echo venv; echo "
                                     "${VIRTUAL_ENV:-none}; "
                                     "ls " SITE),
                            "none\ncycler-0.10.0.dist-info\n");
        assert_string_equal(itest_state(l, c.sandbox)->env_packages,
                            "cycler==0.10.0");
        itest_release(l, &after);

        itest_destroy(l, s1, c.sandbox);
        itest_kill(&cp, SIGTERM);
        itest_kill(&ex, SIGTERM);
}

static void test_new_session_and_reentered_project(void **state)
{
        itest_proc_t ex, cp;
        itest_log_t *l;
        itest_claim_t c, fresh, back;
        const sbx_event_t *taken, *rc;
        char s1[64], s2[64], s3[64], snap[64], project[64], uuid[37];
        (void)state;

        ex = itest_executor("exec", NULL);
        cp = itest_control_plane("cp");
        l  = itest_exec_log_open();
        itest_session(s1, sizeof(s1));
        itest_session(s2, sizeof(s2));
        itest_session(s3, sizeof(s3));
        sbx_uuid(uuid);
        snprintf(project, sizeof(project), "proj-%.8s", uuid);

        itest_claim_with(l, &c, s1, NULL,
                         json_pack("{s:s}", "project_id", project));
        itest_sh(l, &c,
                 "mkdir -p /root/proj " SITE
                 "/tzdata-2026.6.dist-info && echo "
                 "model > /root/proj/state");
        wait_manifest(l, c.sandbox, "tzdata==2026.6", 2);
        taken = itest_snapshot(l, &c);
        snprintf(snap, sizeof(snap), "%s", sbx_event_str(taken, "snapshot_id"));
        itest_release(l, &c);

        /* the same user, a new session, no project: a sandbox of its own,
         * though the other session's sandbox is idle */
        itest_claim(l, &fresh, s2, NULL);
        assert_null(itest_find(l, fresh.id, SBX_EV_REUSE_CHOSEN));
        assert_string_not_equal(fresh.sandbox, c.sandbox);
        assert_string_equal(itest_sh(l, &fresh,
                                     "test -e /root/proj && echo seen || "
                                     "echo fresh"),
                            "fresh\n");
        itest_release(l, &fresh);

        /* the project re-entered in another session: its clean snapshot,
         * restored as a new sandbox */
        itest_claim_with(l, &back, s3, NULL,
                         json_pack("{s:s}", "project_id", project));
        rc = reuse_of(l, &back);
        assert_string_equal(sbx_event_str(rc, "mode"), "fork");
        assert_string_equal(sbx_event_str(rc, "snapshot_id"), snap);
        assert_non_null(
            strstr(sbx_event_str(rc, "reason"), "project_reentered: "));
        assert_string_not_equal(back.sandbox, c.sandbox);
        assert_string_equal(
            itest_sh(l, &back, "cat /root/proj/state; ls " SITE),
            "model\ntzdata-2026.6.dist-info\n");
        /* its manifest has what the snapshot's layers hold */
        wait_manifest(l, back.sandbox, "tzdata==2026.6", 2);
        itest_release(l, &back);

        itest_destroy(l, s3, back.sandbox);
        itest_destroy(l, s2, fresh.sandbox);
        itest_destroy(l, s1, c.sandbox);
        itest_kill(&cp, SIGTERM);
        itest_kill(&ex, SIGTERM);
}

static void test_pollution_recycles_at_level_two(void **state)
{
        itest_proc_t ex, cp;
        itest_log_t *l;
        itest_claim_t c, next;
        const sbx_event_t *taken, *rc, *rs = NULL;
        char s1[64], snap[64], rid[64];
        int64_t deadline;
        (void)state;

        ex = itest_executor("exec", NULL);
        cp = itest_control_plane("cp");
        l  = itest_exec_log_open();
        itest_session(s1, sizeof(s1));
        itest_claim(l, &c, s1, NULL);
        itest_sh(l, &c, "mkdir -p /root/data && echo rows > /root/data/t");
        taken = itest_snapshot(l, &c);
        snprintf(snap, sizeof(snap), "%s", sbx_event_str(taken, "snapshot_id"));
        /* outside anything the manifest knows: unknown pollution */
        itest_sh(l, &c, "echo x > /etc/polluted");
        wait_manifest(l, c.sandbox, NULL, 3);
        itest_send(
            s1, c.sandbox, "sbx.Release",
            json_pack("{s:s, s:I, s:s}", "sandbox_id", c.sandbox,
                      "lease_version", (json_int_t)c.lease, "claim_id", c.id),
            rid);
        itest_wait_phase(l, c.id, SBX_CLAIM_RELEASED, 60);
        deadline = sbx_mono_us() + 30 * 1000000LL;
        while (sbx_mono_us() < deadline &&
               !(rs = itest_find(l, c.sandbox, SBX_EV_RECYCLE_STARTED)))
                itest_log_pump(l, 100);
        assert_non_null(rs);
        print_message("recycled: level %s: %s\n", sbx_event_str(rs, "level"),
                      sbx_event_str(rs, "reason"));
        assert_string_equal(sbx_event_str(rs, "level"), "fork");
        assert_non_null(strstr(sbx_event_str(rs, "reason"), snap));
        itest_wait_phase(l, c.sandbox, SBX_SB_TERMINATED, 60);

        /* the session goes on from the clean snapshot */
        itest_claim(l, &next, s1, NULL);
        rc = reuse_of(l, &next);
        assert_string_equal(sbx_event_str(rc, "mode"), "fork");
        assert_string_equal(sbx_event_str(rc, "snapshot_id"), snap);
        assert_non_null(
            strstr(sbx_event_str(rc, "reason"), "recycled at level 2"));
        assert_string_equal(
            itest_sh(
                l, &next,
                "cat /root/data/t; test -e /etc/polluted && echo polluted || "
                "echo clean"),
            "rows\nclean\n");
        itest_release(l, &next);
        itest_destroy(l, s1, next.sandbox);
        itest_kill(&cp, SIGTERM);
        itest_kill(&ex, SIGTERM);
}

int main(int argc, char **argv)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_teardown(test_small_change_reuses_with_a_venv,
                                      itest_exec_teardown),
            cmocka_unit_test_teardown(test_new_session_and_reentered_project,
                                      itest_exec_teardown),
            cmocka_unit_test_teardown(test_pollution_recycles_at_level_two,
                                      itest_exec_teardown),
        };
        return itest_exec_main(argc, argv, "itest-reuse", tests,
                               sizeof(tests) / sizeof(tests[0]));
}
