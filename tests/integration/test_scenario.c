/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The design origin's three-turn conversation end to end, as the README's
 * main job plays it (deploy/local/scenario.sh, the sbx command against a
 * running stack), here on a control plane, a projector and an executor
 * node of the test's own with a warm python-small pool:
 *
 *   turn 1 python-small from the pool; pip installs pandas and openpyxl
 *          offline from tenant acme's cache; the spreadsheet totals
 *          48230.50;
 *   turn 2 the same sandbox, reused with a score and a reason naming the
 *          missing matplotlib; the chart is drawn;
 *   turn 3 browser-medium, reuse refused with runtime_capability_mismatch,
 *          another sandbox; Playwright drives Chromium over the page turn
 *          2 left in the session's workspace;
 *
 * and `sbx audit` then tells, from PostgreSQL, who created each sandbox,
 * for which task, how the planner sized it, who reused it, what it
 * installed, and why the browser task got a sandbox of its own. The
 * script checks each turn itself; this test checks what a user reads in
 * its output, and that the node that served it is this test's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "itest_exec.h"

#define TENANT "acme" /* the tenant with a dependency cache */

static const char *sbx_path, *scenario_path;
static char pools[128];

static void write_pools(int buffer)
{
        FILE *f = fopen(pools, "w");
        assert_non_null(f);
        fprintf(f,
                "pool.py.class = python-small\n"
                "pool.py.runtime = runc\n"
                "pool.py.template = host\n"
                "pool.py.buffer_min = %d\n"
                "pool.py.buffer_max = %d\n"
                "pool.py.pool_max = 2\n",
                buffer, buffer);
        fclose(f);
}

/* Runs @p cmd with sh, stdout and stderr together; its output (owned by
 * the caller) and exit status. */
static char *capture(const char *cmd, int *status)
{
        FILE *p    = popen(cmd, "r");
        char *out  = NULL, buf[8192];
        size_t len = 0, n;
        assert_non_null(p);
        while ((n = fread(buf, 1, sizeof(buf), p)) > 0) {
                out = sbx_realloc(out, len + n + 1);
                memcpy(out + len, buf, n);
                len += n;
                out[len] = '\0';
        }
        *status = pclose(p);
        *status = WIFEXITED(*status) ? WEXITSTATUS(*status) : 128;
        return out ? out : sbx_strdup("");
}

/* Fails, showing the output's end, unless @p out holds @p want. */
static void expect(const char *out, const char *want)
{
        size_t n = strlen(out);
        if (!strstr(out, want))
                fail_msg("the scenario's output lacks '%s'; it ends: %s", want,
                         out + (n > 3000 ? n - 3000 : 0));
}

/* The sandbox id of the @p nth "bound: sandbox ID," line (from 0). */
static void bound(const char *out, int nth, char *id, size_t n)
{
        const char *p = out;
        for (int i = 0; i <= nth; i++) {
                p = strstr(p, "bound: sandbox ");
                if (!p)
                        fail_msg("turn %d was not bound", nth + 1);
                p += strlen("bound: sandbox ");
        }
        snprintf(id, n, "%.*s", (int)strcspn(p, ", "), p);
}

/* Waits until this node's pool has a READY sandbox, as turn 1 expects. */
static void wait_for_the_pool(void)
{
        itest_log_t *l   = itest_exec_log_open();
        int64_t deadline = sbx_mono_us() + 120 * 1000000LL;
        while (sbx_mono_us() < deadline) {
                itest_log_pump(l, 200);
                for (size_t i = 0; i < l->n; i++) {
                        const sbx_event_t *ev = l->ev[i];
                        const sbx_state_t *s;
                        if (ev->type != SBX_EV_SANDBOX_CREATED ||
                            !sbx_streq(sbx_event_str(ev, "node_id"),
                                       itest_node.id))
                                continue;
                        s = itest_state(l, ev->aggregate_id);
                        if (s && s->phase == SBX_SB_READY)
                                return;
                }
        }
        fail_msg("no pool sandbox READY on %s within 120 s", itest_node.id);
}

static void test_three_turns(void **state)
{
        itest_proc_t cp, proj, ex;
        char session[64], cmd[2048], first[64], second[64], third[64];
        char want[256], ws[1200];
        char *out;
        int status;
        (void)state;

        write_pools(1);
        /* Other tests may have left the database bare: the projector's
         * sbxd starts --no-setup, so migrate as an operator would. */
        snprintf(cmd, sizeof(cmd), "'%s' db migrate 2>&1", sbx_path);
        free(capture(cmd, &status));
        assert_int_equal(status, 0);
        cp   = itest_control_plane("cp");
        proj = itest_sbxd("proj", "projector", NULL);
        ex   = itest_executor("exec", pools);
        itest_session(session, sizeof(session));
        wait_for_the_pool();

        snprintf(cmd, sizeof(cmd),
                 "SBX_CLI='%s' SBX_TENANT=" TENANT
                 " SBX_SESSION='%s' '%s' 2>&1",
                 sbx_path, session, scenario_path);
        out = capture(cmd, &status);
        printf("%s", out);
        if (status)
                fail_msg("the scenario stopped with status %d", status);

        bound(out, 0, first, sizeof(first));
        bound(out, 1, second, sizeof(second));
        bound(out, 2, third, sizeof(third));
        assert_string_equal(first, second);
        assert_string_not_equal(first, third);
        /* turn 1: a warm pool sandbox of this node, offline installs */
        expect(out, "Looking in links: /deps/pip");
        expect(out, "total sales: 48230.50");
        /* turn 2: reused, and the check said why */
        snprintf(want, sizeof(want), "reused %s, score 0.", first);
        expect(out, want);
        expect(out, "required=pandas,matplotlib");
        expect(out, "missing=matplotlib dependency_conflict=false");
        /* turn 3: refused, a browser sandbox of its own */
        snprintf(want, sizeof(want),
                 "reuse=false sandbox=%s reason=runtime_capability_mismatch",
                 first);
        expect(out, want);
        expect(out, "heading: Total sales: 48230.50");
        expect(out, "chart: loaded");
        /* the audit, from PostgreSQL */
        snprintf(want, sizeof(want), "on node %s", itest_node.id);
        expect(out, want);
        expect(out, "origin        warm pool runc/python-small/host");
        expect(out, "task          read the Excel file and total the sales");
        expect(out, "recommended   python-small");
        expect(out, "+openpyxl==3.1.5");
        expect(out, "+matplotlib==3.11.2");
        expect(out, "+playwright==1.65.2");
        expect(out, "task          start Playwright and check a web page");
        expect(out, "recommended   browser-medium");
        free(out);

        for (int i = 0; i < 2; i++) {
                snprintf(cmd, sizeof(cmd),
                         "'%s' destroy '%s' --tenant " TENANT " 2>&1", sbx_path,
                         i ? third : first);
                free(capture(cmd, &status));
                assert_int_equal(status, 0);
        }
        /* The spare pool sandbox: retired by an executor keeping none. */
        itest_kill(&ex, SIGTERM);
        write_pools(0);
        ex = itest_executor("exec2", pools);
        for (int i = 0; i < 600 && itest_node_list().n; i++)
                usleep(100000);
        assert_int_equal(itest_node_list().n, 0);
        snprintf(ws, sizeof(ws), "%s/workspaces/" TENANT "/%s", cfg->var_dir,
                 session);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", ws);
        assert_int_equal(system(cmd), 0);
        itest_kill(&ex, SIGTERM);
        itest_kill(&proj, SIGTERM);
        itest_kill(&cp, SIGTERM);
}

int main(int argc, char **argv)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_teardown(test_three_turns, itest_exec_teardown),
        };
        int rc;
        if (argc < 4) {
                fprintf(stderr, "usage: %s SBXD SBX SCENARIO.sh\n", argv[0]);
                return 2;
        }
        sbx_path      = argv[2];
        scenario_path = argv[3];
        snprintf(pools, sizeof(pools), "/tmp/sbx-itest-pools-%ld.conf",
                 (long)getpid());
        rc = itest_exec_main(argc, argv, "itest-scenario", tests,
                             sizeof(tests) / sizeof(tests[0]));
        unlink(pools);
        return rc;
}
