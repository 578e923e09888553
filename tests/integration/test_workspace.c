/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Late workspaces (warm pools) against the real runc and runsc of this
 * host, as root: a sandbox made with a workspace slot starts with an
 * empty, read-only /workspace; a host directory attached to the running
 * sandbox appears there (also for lookups that missed before), takes the
 * sandbox's writes, and goes away on detach; attach is idempotent, also
 * for a new runtime object on the same state (a restarted daemon), and
 * refuses another directory and symlinked paths; only the workspace
 * shares mounts with the host; delete leaves no mount and keeps the
 * directory. The fixture's close checks that nothing is left.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/util.h"
#include "runtime/fsutil.h"
#include "runtime/rootfs.h"
#include "runtime/runtime.h"
#include "runtime_fixture.h"

static rtfx_t F;
/* The agent's places as a warm sandbox has them: its binary (sleep
 * here) run as PID 1 from SBX_AGENT_PATH, its socket directory shared. */
static const char *const agent_argv[] = {SBX_AGENT_PATH, "3600", NULL};
static const char *const sleep_argv[] = {"/bin/sleep", "3600", NULL};
static const char server_py[] =
    "import os, socket\n"
    "s = socket.socket(socket.AF_UNIX)\n"
    "s.bind('/run/sbx/ws.sock'); s.listen(1)\n"
    "if os.fork(): os._exit(0)\n"
    "n = os.open('/dev/null', os.O_RDWR)\n"
    "for fd in (0, 1, 2): os.dup2(n, fd)\n"
    "c, _ = s.accept(); c.sendall(b'pong'); c.close()\n";

enum { OK = 0, FAILS = -1 };

/* Runs argv in @p id: its exit status, stdout in *ret_out (owned by the
 * caller) and the start of its stderr in @p err. */
static int vrun(const char *id,
                char **ret_out,
                char *err,
                size_t err_size,
                const char *arg0,
                va_list ap)
{
        const char *argv[32];
        sbx_runc_exec_result_t r;
        int n = 0, code;

        argv[n++] = arg0;
        while (n < 31 && (argv[n] = va_arg(ap, const char *)) != NULL)
                n++;
        argv[n] = NULL;
        if (sbx_runtime_exec(F.rt, id, argv, NULL, &r, err, err_size))
                fail_msg("exec %s in %s: %s", arg0, id, err);
        sbx_fmt(err, err_size, "%s", r.err ? r.err : "");
        code     = r.exit_code;
        *ret_out = r.out;
        r.out    = NULL;
        sbx_runc_exec_result_clear(&r);
        return code;
}

/* Runs argv in @p id; checks its exit status (OK, FAILS: nonzero) and,
 * unless @p has is NULL, that its stdout contains it. */
static void expect(const char *id,
                   int want,
                   const char *has,
                   const char *arg0,
                   ...)
{
        char err[1024], msg[3072] = "";
        va_list ap;
        char *out;
        int code;
        va_start(ap, arg0);
        code = vrun(id, &out, err, sizeof(err), arg0, ap);
        va_end(ap);
        if ((want == FAILS && code == 0) || (want != FAILS && code != want))
                sbx_fmt(msg, sizeof(msg), "%s in %s: exit %d, wanted %s (%s)",
                        arg0, id, code, want == FAILS ? "a failure" : "success",
                        err);
        else if (has && !strstr(out, has))
                sbx_fmt(msg, sizeof(msg), "%s in %s: '%s' not in '%s'", arg0,
                        id, has, out);
        free(out);
        if (msg[0])
                fail_msg("%s", msg);
}

static char *run(const char *id, const char *arg0, ...)
{
        char err[1024];
        va_list ap;
        char *out;
        int code;
        va_start(ap, arg0);
        code = vrun(id, &out, err, sizeof(err), arg0, ap);
        va_end(ap);
        if (code) {
                free(out);
                fail_msg("%s in %s: exit %d (%s)", arg0, id, code, err);
        }
        return out;
}

static void attach_ok(sbx_runtime_t *rt, const char *id, const char *dir)
{
        char err[1024];
        if (sbx_runtime_attach_workspace(rt, id, dir, err, sizeof(err)))
                fail_msg("attach %s to %s: %s", dir, id, err);
}

static void detach_ok(const char *id)
{
        char err[1024];
        if (sbx_runtime_detach_workspace(F.rt, id, err, sizeof(err)))
                fail_msg("detach %s: %s", id, err);
}

/* What @p rt says is attached to @p id ("" for nothing). */
static void expect_attached(sbx_runtime_t *rt, const char *id, const char *want)
{
        char err[1024], *dir = (char *)"unset";
        if (sbx_runtime_attached_workspace(rt, id, &dir, err, sizeof(err)))
                fail_msg("attached %s: %s", id, err);
        assert_string_equal(dir ? dir : "", want);
        free(dir);
}

static void write_file(const char *dir, const char *name, const char *text)
{
        char p[1200], err[512];
        if (sbx_fs_write(sbx_fmt(p, sizeof(p), "%s/%s", dir, name), text,
                         strlen(text), 0644, err, sizeof(err)))
                fail_msg("%s", err);
}

static uid_t owner(const char *path)
{
        struct stat st;
        assert_int_equal(lstat(path, &st), 0);
        return st.st_uid;
}

/* In the sandbox's mount table, only /workspace and /deps (the slots,
 * then what is attached) have a propagation master, and nothing is
 * shared; the attached directory is nosuid, nodev. runc only: gVisor's
 * mount table is the sentry's own. */
static void expect_only_workspace_propagates(const char *id)
{
        char *info = run(id, "/bin/cat", "/proc/self/mountinfo", NULL);
        char *save = NULL, *top = NULL;
        int masters = 0;
        for (char *ln = strtok_r(info, "\n", &save); ln;
             ln       = strtok_r(NULL, "\n", &save)) {
                int ws   = strstr(ln, " /workspace ") != NULL;
                int deps = strstr(ln, " /deps ") != NULL;
                if (strstr(ln, " shared:") ||
                    (!ws && !deps && strstr(ln, " master:")))
                        fail_msg("%s: shares mounts with the host: %s", id, ln);
                masters += ws && strstr(ln, " master:") != NULL;
                if (ws)
                        top = ln;
        }
        assert_int_equal(masters, 2);
        assert_non_null(top);
        assert_non_null(strstr(top, "rw,nosuid,nodev"));
        free(info);
}

/* A server started from the workspace answers on the socket directory:
 * the agent's channel works in a sandbox with a slot. */
static void expect_socket_answers(const char *id, const char *sockdir)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        char buf[8]           = "";
        int fd;
        expect(id, OK, NULL, "/usr/bin/python3", "/workspace/server.py", NULL);
        sbx_fmt(sa.sun_path, sizeof(sa.sun_path), "%s/ws.sock", sockdir);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(fd >= 0);
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
                fail_msg("%s: connect %s: %s", id, sa.sun_path,
                         strerror(errno));
        assert_int_equal(read(fd, buf, 4), 4);
        close(fd);
        assert_string_equal(buf, "pong");
}

static int64_t exec_median_us(const char *id)
{
        int64_t t[11];
        for (int i = 0; i < 11; i++) {
                int64_t t0 = sbx_mono_us();
                expect(id, OK, NULL, "/bin/true", NULL);
                t[i] = sbx_mono_us() - t0;
        }
        for (int i = 1; i < 11; i++) /* insertion sort */
                for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
                        int64_t x = t[j];
                        t[j]      = t[j - 1];
                        t[j - 1]  = x;
                }
        return t[5];
}

static void workspace_cycle(const char *runtime)
{
        char tag[32], a[1024], b[1024], p[1200], err[1024], dir[1024];
        char slot[1100], peer[1100], uid_s[16], sock[1024];
        const char *id =
            rtfx_new_id(&F, sbx_fmt(tag, sizeof(tag), "%s", runtime));
        /* runsc's gofer runs in a user namespace that maps root alone:
         * in gVisor a host file of uid 1000 is nobody's, so runsc
         * sandboxes run as root (the executor's do too) */
        uid_t uid            = strcmp(runtime, "runsc") ? 1000 : 0;
        sbx_sandbox_spec_t s = {.id             = id,
                                .runtime        = runtime,
                                .tmpl           = F.host,
                                .memory_mb      = 256,
                                .pids_max       = 256,
                                .disk_mb        = 256,
                                .argv           = agent_argv,
                                .agent_path     = "/usr/bin/sleep",
                                .socket_dir     = sock,
                                .uid            = uid,
                                .gid            = uid,
                                .workspace_late = 1};
        sbx_runtime_t *rt2;

        sbx_fmt(sock, sizeof(sock), "%s/sock-%s", F.root, runtime);
        sbx_fmt(a, sizeof(a), "%s/%s-A", F.ws, runtime);
        sbx_fmt(b, sizeof(b), "%s/%s-B", F.ws, runtime);
        sbx_fmt(uid_s, sizeof(uid_s), "%u\n", (unsigned)uid);
        if (sbx_fs_mkdirs(a, 0755, uid, uid, err, sizeof(err)))
                fail_msg("%s", err);
        write_file(a, "note", "from-host\n");
        write_file(a, "server.py", server_py);
        rtfx_create_ok(&F, &s, NULL);
        sbx_runtime_sandbox_dir(F.rt, id, dir, sizeof(dir));
        sbx_fmt(slot, sizeof(slot), "%s/workspace-slot", dir);
        sbx_fmt(peer, sizeof(peer), "%s/rootfs/workspace", dir);
        assert_int_equal(sbx_rootfs_mounts_at(slot), 1);
        assert_int_equal(sbx_rootfs_mounts_at(peer), 1);

        /* before: empty and read-only; a lookup that misses now must not
         * be remembered after the attach (gVisor's dentry cache) */
        expect(id, OK, "[/workspace/*]", "/bin/sh", "-c", "echo [/workspace/*]",
               NULL);
        expect(id, FAILS, NULL, "/bin/sh", "-c", "echo x > /workspace/x", NULL);
        expect(id, FAILS, NULL, "/bin/cat", "/workspace/note", NULL);
        expect_attached(F.rt, id, "");

        attach_ok(F.rt, id, a);
        attach_ok(F.rt, id, a); /* idempotent */
        assert_int_equal(
            sbx_runtime_attach_workspace(F.rt, id, b, err, sizeof(err)),
            SBX_ERR_CONFLICT);
        assert_non_null(strstr(err, a));
        assert_int_equal(access(b, F_OK), -1); /* not made for nothing */
        expect_attached(F.rt, id, a);
        assert_int_equal(sbx_rootfs_mounts_at(slot), 2);

        expect(id, OK, "from-host\n", "/bin/cat", "/workspace/note", NULL);
        expect(id, OK, uid_s, "/bin/sh", "-c",
               "echo from-sandbox > /workspace/out && id -u", NULL);
        assert_true(
            rtfx_file_has(sbx_fmt(p, sizeof(p), "%s/out", a), "from-sandbox"));
        assert_int_equal(owner(p), uid);
        if (!strcmp(runtime, "runc"))
                expect_only_workspace_propagates(id);
        expect_socket_answers(id, sock);
        printf(
            "  %s exec /bin/true with a workspace slot, median of 11: "
            "%.1f ms\n",
            runtime, exec_median_us(id) / 1000.0);
        /* planted by the sandbox: the host must never follow it */
        expect(id, OK, NULL, "/bin/ln", "-s", "/etc", "/workspace/evil", NULL);

        detach_ok(id);
        detach_ok(id); /* idempotent */
        assert_int_equal(sbx_rootfs_mounts_at(slot), 1);
        assert_int_equal(sbx_rootfs_mounts_at(peer), 1);
        expect(id, FAILS, NULL, "/bin/cat", "/workspace/note", NULL);
        expect(id, OK, "[/workspace/*]", "/bin/sh", "-c", "echo [/workspace/*]",
               NULL);
        expect_attached(F.rt, id, "");
        assert_true(rtfx_file_has(p, "from-sandbox")); /* kept on the host */

        /* symlinks: as the last component or on the way, refused */
        sbx_fmt(p, sizeof(p), "%s/evil", a);
        assert_int_equal(
            sbx_runtime_attach_workspace(F.rt, id, p, err, sizeof(err)),
            SBX_ERR_INVALID);
        sbx_fmt(p, sizeof(p), "%s/evil/sbx-ws-itest", a);
        assert_int_equal(
            sbx_runtime_attach_workspace(F.rt, id, p, err, sizeof(err)),
            SBX_ERR_INVALID);
        assert_int_equal(access("/etc/sbx-ws-itest", F_OK), -1);
        assert_int_equal(sbx_rootfs_mounts_at(slot), 1);

        /* another directory, made by the attach, owned by the sandbox's
         * user; a restarted daemon (a new runtime on the same state)
         * knows what is attached and attaches it again idempotently */
        attach_ok(F.rt, id, b);
        assert_int_equal(owner(b), uid);
        rt2 = sbx_runtime_new(F.state, err, sizeof(err));
        if (!rt2)
                fail_msg("second runtime: %s", err);
        expect_attached(rt2, id, b);
        attach_ok(rt2, id, b);
        assert_int_equal(
            sbx_runtime_attach_workspace(rt2, id, a, err, sizeof(err)),
            SBX_ERR_CONFLICT);
        sbx_runtime_destroy(rt2);
        write_file(b, "hello", "to-b\n");
        expect(id, OK, "to-b\n", "/bin/cat", "/workspace/hello", NULL);
        expect(id, FAILS, NULL, "/bin/cat", "/workspace/note", NULL);

        /* delete with B attached: no mount left, B kept */
        rtfx_delete_ok(&F, id);
        rtfx_expect_gone(&F, id);
        assert_true(
            rtfx_file_has(sbx_fmt(p, sizeof(p), "%s/hello", b), "to-b"));
        assert_true(
            rtfx_file_has(sbx_fmt(p, sizeof(p), "%s/note", a), "from-host"));
}

static void test_runc_workspace_slot(void **state)
{
        (void)state;
        workspace_cycle("runc");
}

static void test_runsc_workspace_slot(void **state)
{
        (void)state;
        assert_true(sbx_runtime_has(F.rt, "runsc"));
        workspace_cycle("runsc");
}

/* A sandbox with a fixed workspace (or none) has no slot to attach to;
 * asking for both is refused before anything is made. */
static void test_fixed_workspace_has_no_slot(void **state)
{
        const char *id = rtfx_new_id(&F, "fixed");
        char ws[1024], err[1024];
        sbx_sandbox_spec_t s = {.id        = id,
                                .tmpl      = F.host,
                                .memory_mb = 256,
                                .pids_max  = 256,
                                .disk_mb   = 256,
                                .argv      = sleep_argv};
        (void)state;
        sbx_fmt(ws, sizeof(ws), "%s/fixed", F.ws);
        s.workspace_dir  = ws;
        s.workspace_late = 1;
        assert_int_equal(sbx_runtime_create(F.rt, &s, err, sizeof(err)),
                         SBX_ERR_INVALID);
        s.workspace_late = 0;
        rtfx_create_ok(&F, &s, NULL);
        assert_int_equal(
            sbx_runtime_attach_workspace(F.rt, id, ws, err, sizeof(err)),
            SBX_ERR_INVALID);
        assert_int_equal(
            sbx_runtime_detach_workspace(F.rt, id, err, sizeof(err)),
            SBX_ERR_INVALID);
        assert_int_equal(sbx_runtime_attach_workspace(F.rt, "no-such-sandbox",
                                                      ws, err, sizeof(err)),
                         SBX_ERR_NOENT);
        assert_int_equal(sbx_runtime_detach_workspace(F.rt, "no-such-sandbox",
                                                      err, sizeof(err)),
                         SBX_OK);
        rtfx_delete_ok(&F, id);
        rtfx_expect_gone(&F, id);
}

static int group_setup(void **state)
{
        (void)state;
        return rtfx_open(&F, "ws");
}

static int group_teardown(void **state)
{
        (void)state;
        return rtfx_close(&F);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_runc_workspace_slot),
            cmocka_unit_test(test_runsc_workspace_slot),
            cmocka_unit_test(test_fixed_workspace_has_no_slot),
        };
        setvbuf(stdout, NULL, _IONBF, 0);
        return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
