/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The executor with real sandboxes: a claim on the local stack ends in a
 * leased runc sandbox (sbx-agent as PID 1) that runs python3 and reports
 * its output and usage; stdout, stderr and the exit code come back apart;
 * a host secret is not visible inside; release sanitizes the sandbox back
 * to IDLE and destroy terminates it. The helpers, and why the claim's
 * task needs a browser, are in itest_exec.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "itest_exec.h"

static void test_real_sandbox_runs_python_and_reports_usage(void **state)
{
        itest_proc_t cp, ex;
        itest_log_t *l;
        itest_claim_t c;
        char session[64];
        const sbx_state_t *sb;
        const sbx_event_t *fin, *prov;
        (void)state;

        ex = itest_executor("exec", NULL);
        cp = itest_control_plane("cp");
        l  = itest_exec_log_open();
        itest_claim(l, &c, itest_session(session, sizeof(session)), NULL);
        sb = itest_state(l, c.sandbox);
        assert_non_null(sb);
        assert_string_equal(sb->node_id, itest_node.id);
        prov = itest_find(l, c.sandbox, SBX_EV_PROVISIONED);
        assert_non_null(prov);
        assert_non_null(
            strstr(sbx_event_str(prov, "runtime_instance"), "runc:"));
        print_message("cold provision: %.1f ms\n",
                      (double)sbx_event_int(prov, "startup_us", 0) / 1000.0);

        fin = itest_run(l, &c, "e-py",
                        json_pack("[s,s,s]", "python3", "-c", "print(1+1)"));
        assert_int_equal(sbx_event_int(fin, "exit_code", -1), 0);
        assert_string_equal(itest_bytes(fin, "stdout"), "2\n");
        assert_true(itest_usage(fin, "wall_us") > 0);
        assert_true(itest_usage(fin, "peak_memory_bytes") > 0);
        assert_false(itest_usage_bool(fin, "oom_killed"));

        fin =
            itest_run(l, &c, "e-err",
                      json_pack("[s,s,s]", "python3", "-c",
                                "import sys; print('out'); "
                                "print('err', file=sys.stderr); sys.exit(3)"));
        assert_int_equal(sbx_event_int(fin, "exit_code", -1), 3);
        assert_string_equal(itest_bytes(fin, "stdout"), "out\n");
        assert_string_equal(itest_bytes(fin, "stderr"), "err\n");

        /* The host's root home is not there; the workspace is. */
        fin = itest_run(l, &c, "e-host",
                        json_pack("[s,s,s]", "python3", "-c",
                                  "import os; print(os.path.exists('/root/"
                                  ".ssh'), os.path.isdir('/workspace'))"));
        assert_string_equal(itest_bytes(fin, "stdout"), "False True\n");

        /* Release: sanitized back to IDLE; the claim is released. Destroy:
         * recycled and terminated by the executor. */
        itest_release(l, &c);
        itest_destroy(l, session, c.sandbox);
        assert_non_null(itest_find(l, c.sandbox, SBX_EV_TERMINATED));

        itest_kill(&cp, SIGTERM);
        itest_kill(&ex, SIGTERM);
}

int main(int argc, char **argv)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_teardown(
                test_real_sandbox_runs_python_and_reports_usage,
                itest_exec_teardown),
        };
        return itest_exec_main(argc, argv, "itest-real", tests,
                               sizeof(tests) / sizeof(tests[0]));
}
