/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The executor with real sandboxes: a claim on the local stack ends in a
 * leased runc sandbox (sbx-agent as PID 1) that runs python3 and reports
 * its output and usage; stdout, stderr and the exit code come back apart;
 * a host secret is not visible inside; release sanitizes the sandbox back
 * to IDLE and destroy terminates it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "itest_stack.h"

static char node[96];

static json_t *command(const char *session, const char *name, json_t *body)
{
        char rid[64], uuid[37];
        sbx_uuid(uuid);
        snprintf(rid, sizeof(rid), "req-%s", uuid);
        return json_pack("{s:s, s:s, s:s, s:I, s:{s:o}}", "request_id", rid,
                         "tenant_id", "acme", "session_id", session,
                         "occurred_at", (json_int_t)sbx_now_us(), "command",
                         name, body);
}

/* Runs argv in the sandbox; returns the accepted ExecFinished. */
static const sbx_event_t *run(itest_log_t *l, const sbx_state_t *c,
                              const char *session, const char *exec_id,
                              json_t *argv)
{
        json_t *req = command(session, "sbx.Exec",
                              json_pack("{s:s, s:I, s:s, s:o, s:I}",
                                        "sandbox_id", c->sandbox_id,
                                        "lease_version",
                                        (json_int_t)c->lease_version, "exec_id",
                                        exec_id, "argv", argv, "timeout_ms",
                                        (json_int_t)30000));
        int64_t deadline = sbx_mono_us() + 60 * 1000000LL;
        itest_request(prod, codec, req, c->sandbox_id);
        json_decref(req);
        while (sbx_mono_us() < deadline) {
                size_t i;
                itest_log_pump(l, 100);
                for (i = 0; i < l->n; i++)
                        if (l->ev[i]->type == SBX_EV_EXEC_FINISHED &&
                            l->verdict[i] == SBX_FOLD_ACCEPTED &&
                            !strcmp(sbx_event_str(l->ev[i], "exec_id"), exec_id))
                                return l->ev[i];
        }
        fail_msg("no ExecFinished for %s", exec_id);
        return NULL;
}

static const char *bytes(const sbx_event_t *ev, const char *field)
{
        return json_string_value(json_object_get(ev->payload, field));
}

static void test_real_sandbox_runs_python_and_reports_usage(void **state)
{
        itest_proc_t cp, ex;
        itest_log_t l;
        char claim[64], uuid[37], sbid[128], session[64];
        const sbx_state_t *c, *sb;
        const sbx_event_t *fin;
        const json_t *usage;
        json_t *req;
        (void)state;

        ex = itest_sbxd("exec", "executor", node);
        cp = itest_sbxd("cp", "intake,planner,guard,scheduler,keeper", NULL);
        itest_log_open(&l, cfg, codec);
        sbx_uuid(uuid);
        snprintf(claim, sizeof(claim), "claim-%s", uuid);
        snprintf(session, sizeof(session), "s-%.8s", uuid);
        req = itest_acquire(claim, "acme", session, "print(1+1) in python");
        itest_request(prod, codec, req, claim);
        json_decref(req);

        c = itest_wait_phase(&l, claim, SBX_CLAIM_BOUND, 90);
        snprintf(sbid, sizeof(sbid), "%s", c->sandbox_id);
        sb = itest_state(&l, sbid);
        assert_non_null(sb);
        assert_string_equal(sb->node_id, node);
        {
                const sbx_event_t *prov = itest_find(&l, sbid, SBX_EV_PROVISIONED);
                assert_non_null(prov);
                assert_non_null(strstr(sbx_event_str(prov, "runtime_instance"),
                                       "runc:"));
                print_message("cold provision: %.1f ms\n",
                              (double)sbx_event_int(prov, "startup_us", 0) /
                                  1000.0);
        }

        fin = run(&l, c, session, "e-py",
                  json_pack("[s,s,s]", "python3", "-c", "print(1+1)"));
        assert_int_equal(sbx_event_int(fin, "exit_code", -1), 0);
        assert_string_equal(bytes(fin, "stdout"), "2\n");
        usage = json_object_get(fin->payload, "usage");
        assert_true(json_integer_value(json_object_get(usage, "wall_us")) > 0);
        assert_true(json_integer_value(json_object_get(usage, "peak_memory_bytes")) >
                    0);
        assert_false(json_is_true(json_object_get(usage, "oom_killed")));

        fin = run(&l, c, session, "e-err",
                  json_pack("[s,s,s]", "python3", "-c",
                            "import sys; print('out'); "
                            "print('err', file=sys.stderr); sys.exit(3)"));
        assert_int_equal(sbx_event_int(fin, "exit_code", -1), 3);
        assert_string_equal(bytes(fin, "stdout"), "out\n");
        assert_string_equal(bytes(fin, "stderr"), "err\n");

        /* The host's root home is not there; the workspace is. */
        fin = run(&l, c, session, "e-host",
                  json_pack("[s,s,s]", "python3", "-c",
                            "import os; print(os.path.exists('/root/.ssh'), "
                            "os.path.isdir('/workspace'))"));
        assert_string_equal(bytes(fin, "stdout"), "False True\n");

        /* Release: sanitized back to IDLE; the claim is released. */
        req = command(session, "sbx.Release",
                      json_pack("{s:s, s:I, s:s}", "sandbox_id", sbid,
                                "lease_version", (json_int_t)c->lease_version,
                                "claim_id", claim));
        itest_request(prod, codec, req, sbid);
        json_decref(req);
        itest_wait_phase(&l, sbid, SBX_SB_IDLE, 60);
        itest_wait_phase(&l, claim, SBX_CLAIM_RELEASED, 60);

        /* Destroy: recycled and terminated by the executor. */
        req = command(session, "sbx.Destroy",
                      json_pack("{s:s, s:s}", "sandbox_id", sbid, "reason",
                                "test over"));
        itest_request(prod, codec, req, sbid);
        json_decref(req);
        itest_wait_phase(&l, sbid, SBX_SB_TERMINATED, 60);
        assert_non_null(itest_find(&l, sbid, SBX_EV_TERMINATED));

        itest_kill(&cp, SIGTERM);
        itest_kill(&ex, SIGTERM);
        itest_log_close(&l);
}


int main(int argc, char **argv)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_teardown(
                test_real_sandbox_runs_python_and_reports_usage, itest_stop_children),
        };
        if (argc < 2) {
                fprintf(stderr, "usage: %s PATH/TO/sbxd\n", argv[0]);
                return 2;
        }
        if (geteuid() != 0) {
                fprintf(stderr, "test_executor: runs real sandboxes and "
                                "needs root\n");
                return 1;
        }
        itest_stack_init(argv[1]);
        snprintf(node, sizeof(node), "itest-real-%ld", (long)getpid());
        return cmocka_run_group_tests(tests, itest_group_setup,
                                      itest_group_teardown);
}
