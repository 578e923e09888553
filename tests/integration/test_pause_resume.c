/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pause and resume of a real sandbox: an idle sandbox paused by its
 * client is HIBERNATING and its container frozen (runc's state and the
 * cgroup freezer say so); resumed, it is IDLE and thawed; a leased
 * sandbox cannot be paused (the request is rejected with the reason and
 * nothing changes); and a claim of the same session that reuses a
 * hibernating sandbox gets it resumed first, thawed and working.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "itest_exec.h"

/* The cgroup freezer's word for sandbox @p id ("FROZEN", "THAWED"). */
static const char *freezer(const char *id, char *buf, size_t n)
{
        char path[512];
        FILE *f;
        size_t got;
        snprintf(path, sizeof(path),
                 "/sys/fs/cgroup/freezer" SBX_RUNTIME_CGROUP_PARENT
                 "/%s/freezer.state",
                 id);
        buf[0] = '\0';
        if (!(f = fopen(path, "r")))
                return buf;
        got = fread(buf, 1, n - 1, f);
        fclose(f);
        while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == ' '))
                got--;
        buf[got] = '\0';
        return buf;
}

/* Waits until the runtime reports @p want for @p id and the freezer
 * @p word. */
static void wait_container(const char *id,
                           sbx_sandbox_status_t want,
                           const char *word)
{
        int64_t deadline        = sbx_mono_us() + 30 * 1000000LL;
        sbx_sandbox_status_t st = SBX_SANDBOX_ABSENT;
        char fz[32]             = "";
        int pid;
        while (sbx_mono_us() < deadline) {
                if (!sbx_runtime_state(itest_node.rt, id, &st, &pid, NULL, 0) &&
                    st == want && !strcmp(freezer(id, fz, sizeof(fz)), word))
                        return;
                usleep(50000);
        }
        fail_msg("container %s is %s (freezer %s), not %s (%s)", id,
                 sbx_sandbox_status_str(st), freezer(id, fz, sizeof(fz)),
                 sbx_sandbox_status_str(want), word);
}

static void pause_or_resume(const char *session,
                            const char *name,
                            const char *sbid,
                            int64_t lease,
                            char *rid)
{
        itest_send(session, sbid, name,
                   json_pack("{s:s, s:I}", "sandbox_id", sbid, "lease_version",
                             (json_int_t)lease),
                   rid);
}

/* Index of the last accepted event of type @p t of @p id, or -1. */
static long last_index(itest_log_t *l, const char *id, sbx_evtype_t t)
{
        size_t i;
        long at = -1;
        for (i = 0; i < l->n; i++)
                if (l->ev[i]->type == t && l->verdict[i] == SBX_FOLD_ACCEPTED &&
                    !strcmp(l->ev[i]->aggregate_id, id))
                        at = (long)i;
        return at;
}

static void test_pause_freezes_and_resume_thaws(void **state)
{
        itest_proc_t ex, cp;
        itest_log_t *l;
        itest_claim_t c1, c2, c3;
        const sbx_event_t *fin;
        const char *why;
        char session[64], sbid[128], rid[64];
        int n;
        (void)state;

        ex = itest_executor("exec", NULL);
        cp = itest_control_plane("cp");
        l  = itest_exec_log_open();
        itest_session(session, sizeof(session));
        itest_claim(l, &c1, session, NULL);
        snprintf(sbid, sizeof(sbid), "%s", c1.sandbox);
        itest_release(l, &c1);

        /* Paused while idle: hibernating, frozen. */
        pause_or_resume(session, "sbx.Pause", sbid, c1.lease, rid);
        itest_wait_phase(l, sbid, SBX_SB_HIBERNATING, 30);
        itest_not_rejected(l, rid);
        wait_container(sbid, SBX_SANDBOX_PAUSED, "FROZEN");

        /* Resumed: idle, thawed. */
        pause_or_resume(session, "sbx.Resume", sbid, c1.lease, rid);
        itest_wait_phase(l, sbid, SBX_SB_IDLE, 30);
        itest_not_rejected(l, rid);
        wait_container(sbid, SBX_SANDBOX_RUNNING, "THAWED");

        /* The session's next claim reuses it; leased, it cannot be
         * paused. */
        itest_claim(l, &c2, session, NULL);
        assert_string_equal(c2.sandbox, sbid);
        assert_int_equal(c2.lease, c1.lease + 1);
        assert_non_null(itest_find(l, c2.id, SBX_EV_REUSE_CHOSEN));
        n = itest_count(l, sbid, SBX_EV_HIBERNATED, 1);
        pause_or_resume(session, "sbx.Pause", sbid, c2.lease, rid);
        why = itest_wait_rejected(l, rid, 30);
        print_message("pause of a leased sandbox: %s\n", why);
        assert_non_null(strstr(why, "leased"));
        assert_int_equal(itest_count(l, sbid, SBX_EV_HIBERNATED, 1), n);
        assert_int_equal(itest_state(l, sbid)->phase, SBX_SB_LEASED);
        fin = itest_run(l, &c2, "p-leased",
                        json_pack("[s,s,s]", "python3", "-c", "print('on')"));
        assert_int_equal(sbx_event_int(fin, "exit_code", -1), 0);
        assert_string_equal(itest_bytes(fin, "stdout"), "on\n");
        itest_release(l, &c2);

        /* Hibernating, then claimed by its session: resumed first. */
        pause_or_resume(session, "sbx.Pause", sbid, c2.lease, rid);
        itest_wait_phase(l, sbid, SBX_SB_HIBERNATING, 30);
        wait_container(sbid, SBX_SANDBOX_PAUSED, "FROZEN");
        itest_claim(l, &c3, session, NULL);
        assert_string_equal(c3.sandbox, sbid);
        assert_true(last_index(l, sbid, SBX_EV_HIBERNATED) <
                    last_index(l, sbid, SBX_EV_RESUMED));
        assert_true(last_index(l, sbid, SBX_EV_RESUMED) <
                    last_index(l, sbid, SBX_EV_LEASE_GRANTED));
        wait_container(sbid, SBX_SANDBOX_RUNNING, "THAWED");
        fin = itest_run(l, &c3, "p-resumed",
                        json_pack("[s,s,s]", "python3", "-c", "print('back')"));
        assert_int_equal(sbx_event_int(fin, "exit_code", -1), 0);
        assert_string_equal(itest_bytes(fin, "stdout"), "back\n");

        itest_release(l, &c3);
        itest_destroy(l, session, sbid);
        assert_int_equal(itest_node_list().n, 0);
        itest_kill(&cp, SIGTERM);
        itest_kill(&ex, SIGTERM);
}

int main(int argc, char **argv)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_teardown(test_pause_freezes_and_resume_thaws,
                                      itest_exec_teardown),
        };
        return itest_exec_main(argc, argv, "itest-pause", tests,
                               sizeof(tests) / sizeof(tests[0]));
}
