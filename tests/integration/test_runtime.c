/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The runtime against the real runc and runsc (ptrace) of this host, as
 * root: sandboxes from the host template and from a directory template,
 * exec, state, limits in the cgroup, writes landing in the upper dir and
 * never on the host, /workspace surviving a re-create, pause/resume, CPU
 * and OOM accounting, exec deadlines, list and delete leaving nothing
 * behind. Prints (does not assert) cold-create and exec round-trip times.
 * Everything made lives under var/run/sbx-itest-<pid> and is removed by
 * the group teardown even when a test fails; the teardown then checks that
 * no container, mount or cgroup is left.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
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

static rtfx_t T;
static sbx_template_t *mini; /* a directory template made here */
static const char *const sleep_argv[] = {"/bin/sleep", "3600", NULL};

static sbx_sandbox_spec_t spec_for(const char *id,
                                   const char *runtime,
                                   const sbx_template_t *tmpl)
{
        return (sbx_sandbox_spec_t){.id            = id,
                                    .runtime       = runtime,
                                    .tmpl          = tmpl,
                                    .cpu_quota_us  = 100000,
                                    .cpu_period_us = 100000,
                                    .memory_mb     = 256,
                                    .pids_max      = 256,
                                    .disk_mb       = 256,
                                    .argv          = sleep_argv};
}

static char *vrun(const char *id, int *code, const char *arg0, va_list ap)
{
        const char *argv[32];
        sbx_runc_exec_result_t r;
        char err[1024], *out;
        int n = 0;

        argv[n++] = arg0;
        while (n < 31 && (argv[n] = va_arg(ap, const char *)) != NULL)
                n++;
        argv[n] = NULL;
        if (sbx_runtime_exec(T.rt, id, argv, NULL, &r, err, sizeof(err)))
                fail_msg("exec %s in %s: %s", arg0, id, err);
        *code = r.exit_code;
        out   = r.out;
        r.out = NULL;
        sbx_runc_exec_result_clear(&r);
        return out;
}

/* Runs argv in @p id; returns its stdout (caller frees), exit in *code. */
static char *run(const char *id, int *code, const char *arg0, ...)
{
        va_list ap;
        char *out;
        va_start(ap, arg0);
        out = vrun(id, code, arg0, ap);
        va_end(ap);
        return out;
}

enum { OK = 0, FAILS = -1 };

/* Runs argv in @p id and checks its exit status (OK, FAILS: nonzero, or
 * that code) and, unless @p has is NULL, that its stdout contains it. */
static void expect(const char *id,
                   int want,
                   const char *has,
                   const char *arg0,
                   ...)
{
        va_list ap;
        char *out;
        int code;
        va_start(ap, arg0);
        out = vrun(id, &code, arg0, ap);
        va_end(ap);
        if ((want == FAILS && code == 0) || (want != FAILS && code != want))
                fail_msg("%s in %s: exit %d, wanted %s", arg0, id, code,
                         want == FAILS ? "a failure" : "another");
        if (has && !strstr(out, has))
                fail_msg("%s in %s: '%s' not in its output '%s'", arg0, id, has,
                         out);
        free(out);
}

static void expect_status(const char *id, sbx_sandbox_status_t want)
{
        sbx_sandbox_status_t st;
        int pid = 0;
        char err[1024];
        if (sbx_runtime_state(T.rt, id, &st, &pid, err, sizeof(err)))
                fail_msg("state %s: %s", id, err);
        assert_string_equal(sbx_sandbox_status_str(st),
                            sbx_sandbox_status_str(want));
        if (want == SBX_SANDBOX_RUNNING)
                assert_true(pid > 1);
}

static uint64_t cg_value(const char *ctl, const char *id, const char *file)
{
        char cgp[256], err[512];
        uint64_t v = 0;
        if (sbx_cgroup_read_u64(sbx_runtime_cgroup(T.rt), ctl,
                                sbx_runtime_cgroup_path(id, cgp, sizeof(cgp)),
                                file, &v, err, sizeof(err)))
                fail_msg("%s", err);
        return v;
}

static int cmp_i64(const void *a, const void *b)
{
        int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
        return (x > y) - (x < y);
}

/* Median wall time of @p n `exec /bin/true` round trips, in µs. */
static int64_t exec_median_us(const char *id, int n)
{
        int64_t t[32];
        sbx_assert(n <= 32);
        for (int i = 0; i < n; i++) {
                int64_t t0 = sbx_mono_us();
                expect(id, OK, NULL, "/bin/true", NULL);
                t[i] = sbx_mono_us() - t0;
        }
        qsort(t, (size_t)n, sizeof(t[0]), cmp_i64);
        return t[n / 2];
}

static void test_host_template(void **state)
{
        char err[512], p[1024];
        sbx_template_t *again;
        const char *layer = sbx_template_layer(T.host, 0);
        struct stat st;
        (void)state;
        assert_string_equal(sbx_template_name(T.host), "host");
        assert_int_equal(strlen(sbx_template_digest(T.host)), 71);
        again = sbx_template_host_new(SBX_SOURCE_ROOT "/var/templates/host",
                                      err, sizeof(err));
        assert_non_null(again);
        assert_string_equal(sbx_template_digest(again),
                            sbx_template_digest(T.host));
        sbx_template_destroy(again);
        assert_true(rtfx_file_has(sbx_fmt(p, sizeof(p), "%s/etc/passwd", layer),
                                  "sandbox:x:1000:1000:"));
        assert_int_equal(
            stat(sbx_fmt(p, sizeof(p), "%s/etc/shadow", layer), &st), -1);
        /* Debian's merged /usr: /bin is a link into /usr, not a copy */
        assert_int_equal(lstat(sbx_fmt(p, sizeof(p), "%s/bin", layer), &st), 0);
        assert_true(S_ISLNK(st.st_mode));
}

/* The sub-layer upper dir of /usr in sandbox @p id. */
static char *usr_upper(const char *id, const char *rel, char *buf, size_t size)
{
        char dir[1024];
        for (size_t i = 0; i < sbx_template_sub_count(T.host); i++)
                if (!strcmp(sbx_template_sub_target(T.host, i), "/usr"))
                        return sbx_fmt(
                            buf, size, "%s/disk/sub%zu.upper/%s",
                            sbx_runtime_sandbox_dir(T.rt, id, dir, sizeof(dir)),
                            i, rel);
        fail_msg("no /usr sub-layer");
        return NULL;
}

static void test_runc_lifecycle(void **state)
{
        const char *id       = rtfx_new_id(&T, "life");
        sbx_sandbox_spec_t s = spec_for(id, "runc", T.host);
        char p[1024], dir[1024], file[256];
        char *out;
        int code, ifaces = 0;
        int64_t us;
        rtfx_listed_t l;
        (void)state;

        s.cpu_quota_us = 50000;
        rtfx_create_ok(&T, &s, &us);
        printf("  runc cold create -> running: %.1f ms\n", us / 1000.0);
        expect_status(id, SBX_SANDBOX_RUNNING);
        expect(id, OK, "hi\n", "/bin/echo", "hi", NULL);
        assert_int_equal(cg_value("memory", id, "memory.limit_in_bytes"),
                         256 << 20);
        assert_int_equal(cg_value("memory", id, "memory.memsw.limit_in_bytes"),
                         256 << 20);
        assert_int_equal(cg_value("cpu", id, "cpu.cfs_quota_us"), 50000);
        assert_int_equal(cg_value("pids", id, "pids.max"), 256);

        /* the host's /usr/local is hidden (opaque), yet writable */
        out = run(id, &code, "/bin/ls", "-A", "/usr/local", NULL);
        assert_int_equal(code, 0);
        assert_string_equal(out, "");
        free(out);
        /* writes land in the upper dirs, never on the host */
        sbx_fmt(file, sizeof(file), "/usr/local/sbx-itest-%ld", (long)getpid());
        expect(
            id, OK, NULL, "/bin/sh", "-c",
            sbx_fmt(p, sizeof(p), "echo usr > %s && echo etc > /etc/it", file),
            NULL);
        assert_int_equal(access(file, F_OK), -1);
        assert_true(
            rtfx_file_has(usr_upper(id, file + 5, p, sizeof(p)), "usr"));
        sbx_runtime_sandbox_dir(T.rt, id, dir, sizeof(dir));
        assert_true(rtfx_file_has(
            sbx_fmt(p, sizeof(p), "%s/disk/root.upper/etc/it", dir), "etc"));

        /* isolation as the sandbox sees it */
        out = run(id, &code, "/bin/cat", "/proc/self/status", NULL);
        assert_non_null(strstr(out, "NoNewPrivs:\t1"));
        assert_non_null(strstr(out, "Seccomp:\t2"));
        assert_non_null(strstr(out, "CapEff:\t0000000000000000"));
        free(out);
        out = run(id, &code, "/bin/cat", "/proc/net/dev", NULL);
        for (char *ln = strchr(out, '\n'); ln && ln[1];
             ln       = strchr(ln + 1, '\n'))
                ifaces++;
        assert_int_equal(ifaces, 2); /* the second header line and lo */
        assert_non_null(strstr(out, "lo:"));
        free(out);
        expect(id, FAILS, NULL, "/bin/mount", "-t", "tmpfs", "x", "/mnt", NULL);
        expect(id, FAILS, NULL, "/usr/bin/touch", "/sys/sbx-itest", NULL);
        expect(id, FAILS, NULL, "/bin/cat", "/etc/shadow", NULL);
        out = run(id, &code, "/bin/ls", "/dev", NULL);
        assert_non_null(strstr(out, "null"));
        assert_null(strstr(out, "vda"));
        assert_null(strstr(out, "kvm"));
        assert_null(strstr(out, "loop"));
        free(out);
        expect(id, OK, "tmpfs /tmp tmpfs rw,nosuid,nodev,relatime,size=65536k",
               "/bin/cat", "/proc/mounts", NULL);

        l = rtfx_list_find(&T, id);
        assert_int_equal(l.found, 1);
        assert_int_equal(l.status, SBX_SANDBOX_RUNNING);
        assert_string_equal(l.runtime, "runc");
        printf("  runc exec /bin/true round trip, median of 20: %.1f ms\n",
               exec_median_us(id, 20) / 1000.0);

        /* pause/resume: the freezer cgroup */
        assert_int_equal(sbx_runtime_pause(T.rt, id, p, sizeof(p)), SBX_OK);
        expect_status(id, SBX_SANDBOX_PAUSED);
        sbx_fmt(p, sizeof(p), "%s%s/freezer.state",
                sbx_cgroup_mount(sbx_runtime_cgroup(T.rt), "freezer"),
                sbx_runtime_cgroup_path(id, dir, sizeof(dir)));
        assert_true(rtfx_file_has(p, "FROZEN"));
        assert_int_equal(sbx_runtime_resume(T.rt, id, p, sizeof(p)), SBX_OK);
        expect_status(id, SBX_SANDBOX_RUNNING);
        rtfx_delete_ok(&T, id);
        rtfx_expect_gone(&T, id);
        rtfx_delete_ok(&T, id); /* idempotent */
}

/* An exec past its deadline returns by it, and its process is killed in
 * the sandbox too: then only init and the counting python are left. */
static void expect_deadline_kills(const char *id)
{
        const char *const argv[] = {"/bin/sleep", "30", NULL};
        sbx_runc_exec_opts_t o   = {.timeout_ms = 500};
        sbx_runc_exec_result_t r;
        char err[512], *out = NULL;
        int64_t t0 = sbx_mono_us();
        int code;
        assert_int_equal(
            sbx_runtime_exec(T.rt, id, argv, &o, &r, err, sizeof(err)),
            SBX_ERR_TIMEOUT);
        sbx_runc_exec_result_clear(&r);
        assert_true(sbx_mono_us() - t0 < 3000000);
        for (int i = 0; i < 60 && (!out || strcmp(out, "2\n")); i++) {
                free(out);
                usleep(50000);
                out = run(id, &code, "/usr/bin/python3", "-c",
                          "import os; print(sum(p.isdigit() for p in "
                          "os.listdir('/proc')))",
                          NULL);
        }
        assert_string_equal(out, "2\n");
        free(out);
}

static void test_runc_usage_and_deadline(void **state)
{
        const char *id       = rtfx_new_id(&T, "usage");
        sbx_sandbox_spec_t s = spec_for(id, NULL, T.host);
        sbx_usage_t before, after;
        char err[512];
        (void)state;
        s.memory_mb = 64;
        rtfx_create_ok(&T, &s, NULL);
        before = rtfx_usage(&T, id);
        assert_int_equal(before.oom_kills, 0);
        assert_int_equal(before.memory_limit, 64 << 20);
        expect(id, OK, NULL, "/bin/dd", "if=/dev/zero", "of=/dev/null", "bs=1M",
               "count=4000", NULL);
        after = rtfx_usage(&T, id);
        printf("  busy exec: %.1f ms CPU in the cgroup\n",
               (after.cpu_ns - before.cpu_ns) / 1e6);
        assert_true(after.cpu_ns > before.cpu_ns + 20 * 1000000ull);

        /* tail buffers an endless line: a memory hog past 64 MiB */
        expect(id, 128 + SIGKILL, NULL, "/usr/bin/tail", "/dev/zero", NULL);
        after = rtfx_usage(&T, id);
        printf("  memory hog: oom_kills=%llu peak=%.1f MiB failcnt=%llu\n",
               (unsigned long long)after.oom_kills,
               after.memory_peak / 1048576.0,
               (unsigned long long)after.memory_failcnt);
        assert_true(after.oom_kills >= 1);
        assert_true(after.memory_peak >= 48ull << 20);
        assert_true(after.memory_peak <= 64ull << 20);
        expect_status(id, SBX_SANDBOX_RUNNING); /* init survived */
        assert_int_equal(sbx_runtime_usage_reset(T.rt, id, err, sizeof(err)),
                         SBX_OK);
        assert_true(rtfx_usage(&T, id).memory_peak < 48ull << 20);

        expect_deadline_kills(id);
        rtfx_delete_ok(&T, id);
        rtfx_expect_gone(&T, id);
}

/* The upper dir is a disk image of disk_mb, /tmp a tmpfs of tmp_mb:
 * filling either ends in ENOSPC, not in the host's disk or memory. */
static void test_runc_disk_bounds(void **state)
{
        const char *id       = rtfx_new_id(&T, "disk");
        sbx_sandbox_spec_t s = spec_for(id, NULL, T.host);
        char dir[1024], p[1200];
        struct stat st;
        (void)state;
        s.disk_mb = 32;
        s.tmp_mb  = 8;
        rtfx_create_ok(&T, &s, NULL);
        expect(id, FAILS, NULL, "/bin/dd", "if=/dev/zero", "of=/big", "bs=1M",
               "count=100", NULL);
        sbx_runtime_sandbox_dir(T.rt, id, dir, sizeof(dir));
        assert_int_equal(
            stat(sbx_fmt(p, sizeof(p), "%s/disk/root.upper/big", dir), &st), 0);
        assert_true(st.st_size >= 16 << 20 && st.st_size <= 32 << 20);
        expect(id, FAILS, NULL, "/bin/dd", "if=/dev/zero", "of=/tmp/big",
               "bs=1M", "count=100", NULL);
        /* the sandbox still works once it has made room */
        expect(id, OK, NULL, "/bin/rm", "/big", "/tmp/big", NULL);
        expect(id, OK, NULL, "/bin/sh", "-c", "echo ok > /small", NULL);
        rtfx_delete_ok(&T, id);
        rtfx_expect_gone(&T, id);
}

static void test_runc_workspace_persists(void **state)
{
        const char *id1 = rtfx_new_id(&T, "ws1"), *id2 = rtfx_new_id(&T, "ws2");
        sbx_sandbox_spec_t s = spec_for(id1, NULL, T.host);
        char ws[1024], p[1100];
        struct stat st;
        (void)state;

        sbx_fmt(ws, sizeof(ws), "%s/session-1", T.ws);
        s.workspace_dir = ws;
        s.uid = s.gid = 1000;
        rtfx_create_ok(&T, &s, NULL);
        assert_int_equal(stat(ws, &st), 0);
        assert_int_equal(st.st_uid, 1000);
        expect(id1, OK, "1000", "/bin/sh", "-c",
               "echo kept > /workspace/note && "
               "echo scratch > /home/sandbox/scratch && id -u",
               NULL);
        rtfx_delete_ok(&T, id1);
        rtfx_expect_gone(&T, id1);
        assert_true(
            rtfx_file_has(sbx_fmt(p, sizeof(p), "%s/note", ws), "kept"));

        s.id = id2;
        rtfx_create_ok(&T, &s, NULL);
        expect(id2, OK, "kept\n", "/bin/cat", "/workspace/note", NULL);
        /* the old upper dir went with its sandbox */
        expect(id2, FAILS, NULL, "/bin/cat", "/home/sandbox/scratch", NULL);
        rtfx_delete_ok(&T, id2);
        rtfx_expect_gone(&T, id2);
}

static void test_runc_dir_template(void **state)
{
        const char *id       = rtfx_new_id(&T, "mini");
        sbx_sandbox_spec_t s = spec_for(id, NULL, mini);
        char p[1024];
        (void)state;
        assert_int_equal(sbx_template_sub_count(mini), 0);
        rtfx_create_ok(&T, &s, NULL);
        expect(id, OK, "from-mini\n", "/bin/echo", "from-mini", NULL);
        /* the layer has no /etc; what is written goes to the upper dir */
        expect(id, FAILS, NULL, "/bin/cat", "/etc/passwd", NULL);
        rtfx_delete_ok(&T, id);
        rtfx_expect_gone(&T, id);
        /* runc made its mount points in the upper dir, not in the layer */
        assert_int_equal(access(sbx_fmt(p, sizeof(p), "%s/proc",
                                        sbx_template_layer(mini, 0)),
                                F_OK),
                         -1);
}

/* A create that fails leaves nothing; one for an existing id fails
 * without touching the sandbox that has it; half-made ones are listed. */
static void test_create_failures(void **state)
{
        static const char *const rts[]  = {"runc", "runsc"};
        static const char *const nope[] = {"/nonexistent", NULL};
        const char *id = rtfx_new_id(&T, "dup"), *bad = rtfx_new_id(&T, "bad");
        sbx_sandbox_spec_t s = spec_for(id, NULL, T.host);
        char err[2048], dir[1024], p[1100];
        rtfx_listed_t l;
        (void)state;
        rtfx_create_ok(&T, &s, NULL);
        assert_int_equal(sbx_runtime_create(T.rt, &s, err, sizeof(err)),
                         SBX_ERR_CONFLICT);
        expect_status(id, SBX_SANDBOX_RUNNING);
        rtfx_delete_ok(&T, id);
        for (size_t k = 0; k < SBX_ARRAY_SIZE(rts); k++) {
                s      = spec_for(bad, rts[k], T.host);
                s.argv = nope;
                assert_int_equal(sbx_runtime_create(T.rt, &s, err, sizeof(err)),
                                 SBX_ERR_RUNTIME);
                assert_non_null(strstr(err, "/nonexistent")); /* its words */
                rtfx_expect_gone(&T, bad);
        }
        /* a sandbox dir no runtime knows (a crash mid-create) is listed
         * as absent, for the reconciler, and delete cleans it */
        sbx_runtime_sandbox_dir(T.rt, bad, dir, sizeof(dir));
        assert_int_equal(mkdir(dir, 0700), 0);
        assert_int_equal(sbx_fs_write(sbx_fmt(p, sizeof(p), "%s/runtime", dir),
                                      "runc", 4, 0600, err, sizeof(err)),
                         SBX_OK);
        l = rtfx_list_find(&T, bad);
        assert_int_equal(l.found, 1);
        assert_int_equal(l.status, SBX_SANDBOX_ABSENT);
        assert_string_equal(l.runtime, "runc");
        rtfx_delete_ok(&T, bad);
        rtfx_expect_gone(&T, bad);
}

static void test_runsc_basic(void **state)
{
        const char *id       = rtfx_new_id(&T, "gvisor");
        sbx_sandbox_spec_t s = spec_for(id, "runsc", T.host);
        char p[1024], dir[1024], err[512];
        int64_t us;
        (void)state;
        assert_true(sbx_runtime_has(T.rt, "runsc"));
        rtfx_create_ok(&T, &s, &us);
        printf("  runsc (ptrace) cold create -> running: %.1f ms\n",
               us / 1000.0);
        expect_status(id, SBX_SANDBOX_RUNNING);
        expect(id, OK, "hi\n", "/bin/echo", "hi", NULL);
        assert_int_equal(cg_value("memory", id, "memory.limit_in_bytes"),
                         256 << 20);
        expect(id, OK, NULL, "/bin/sh", "-c",
               "echo g > /usr/local/gvisor-itest && echo r > /rootfile", NULL);
        assert_int_equal(access("/usr/local/gvisor-itest", F_OK), -1);
        assert_true(rtfx_file_has(
            usr_upper(id, "local/gvisor-itest", p, sizeof(p)), "g"));
        sbx_runtime_sandbox_dir(T.rt, id, dir, sizeof(dir));
        assert_true(rtfx_file_has(
            sbx_fmt(p, sizeof(p), "%s/disk/root.upper/rootfile", dir), "r"));
        expect(id, OK, "lo:", "/bin/cat", "/proc/net/dev", NULL);
        /* --oci-seccomp: init (the agent's place) runs under the filter */
        expect(id, OK, "Seccomp:\t2", "/bin/cat", "/proc/1/status", NULL);
        expect(id, OK, "CapEff:\t0000000000000000", "/bin/cat",
               "/proc/1/status", NULL);
        assert_string_equal(rtfx_list_find(&T, id).runtime, "runsc");
        expect_deadline_kills(id);
        printf("  runsc exec /bin/true round trip, median of 20: %.1f ms\n",
               exec_median_us(id, 20) / 1000.0);
        assert_int_equal(sbx_runtime_pause(T.rt, id, err, sizeof(err)), SBX_OK);
        expect_status(id, SBX_SANDBOX_PAUSED);
        assert_int_equal(sbx_runtime_resume(T.rt, id, err, sizeof(err)),
                         SBX_OK);
        expect_status(id, SBX_SANDBOX_RUNNING);
        rtfx_delete_ok(&T, id);
        rtfx_expect_gone(&T, id);
}

/* The agent's places: its binary bound read-only at /.sbx/sbx-agent and
 * run as PID 1, its socket directory shared with the host. A server in
 * the sandbox listens on a unix socket; the host connects through it. */
static void test_agent_binds(void **state)
{
        static const char *const rts[]   = {"runc", "runsc"};
        static const char *const agent[] = {SBX_AGENT_PATH, "3600", NULL};
        static const char server[] =
            "import os, socket\n"
            "s = socket.socket(socket.AF_UNIX)\n"
            "s.bind('/run/sbx/agent.sock'); s.listen(1)\n"
            "if os.fork(): os._exit(0)\n"
            "n = os.open('/dev/null', os.O_RDWR)\n"
            "for fd in (0, 1, 2): os.dup2(n, fd)\n"
            "c, _ = s.accept(); c.sendall(b'pong'); c.close()\n";
        (void)state;
        for (size_t k = 0; k < SBX_ARRAY_SIZE(rts); k++) {
                char tag[32], ws[1024], sock[1024], p[1100], err[512];
                const char *id = rtfx_new_id(
                    &T, sbx_fmt(tag, sizeof(tag), "agent%s", rts[k]));
                sbx_sandbox_spec_t s  = spec_for(id, rts[k], T.host);
                struct sockaddr_un sa = {.sun_family = AF_UNIX};
                char buf[8]           = "";
                int fd;
                sbx_fmt(ws, sizeof(ws), "%s/agent-ws-%s", T.ws, rts[k]);
                sbx_fmt(sock, sizeof(sock), "%s/sock-%s", T.root, rts[k]);
                s.argv          = agent;
                s.agent_path    = "/usr/bin/sleep";
                s.socket_dir    = sock;
                s.workspace_dir = ws;
                rtfx_create_ok(&T, &s, NULL);
                expect(id, OK, SBX_AGENT_PATH, "/bin/cat", "/proc/1/cmdline",
                       NULL);
                expect(id, FAILS, NULL, "/usr/bin/touch", SBX_AGENT_PATH,
                       NULL); /* bound read-only */
                assert_int_equal(
                    sbx_fs_write(sbx_fmt(p, sizeof(p), "%s/server.py", ws),
                                 server, sizeof(server) - 1, 0644, err,
                                 sizeof(err)),
                    SBX_OK);
                expect(id, OK, NULL, "/usr/bin/python3", "/workspace/server.py",
                       NULL);
                sbx_fmt(sa.sun_path, sizeof(sa.sun_path), "%s/agent.sock",
                        sock);
                fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                assert_true(fd >= 0);
                if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
                        fail_msg("%s: connect %s: %s", rts[k], sa.sun_path,
                                 strerror(errno));
                assert_int_equal(read(fd, buf, 4), 4);
                close(fd);
                assert_string_equal(buf, "pong");
                rtfx_delete_ok(&T, id);
                rtfx_expect_gone(&T, id);
        }
}

/* A directory template of three binaries, libc and the loader: made
 * here, no download, no /proc or /dev mount points (runc makes them). */
static sbx_template_t *make_mini(const char *dir)
{
        static const char *const files[][2] = {
            {"/usr/bin/sleep", "bin/sleep"},
            {"/usr/bin/echo", "bin/echo"},
            {"/usr/bin/cat", "bin/cat"},
            {"/usr/lib/x86_64-linux-gnu/libc.so.6",
             "lib/x86_64-linux-gnu/libc.so.6"},
            {"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
             "lib64/ld-linux-x86-64.so.2"},
        };
        static const char *const dirs[] = {"rootfs", "rootfs/bin", "rootfs/lib",
                                           "rootfs/lib/x86_64-linux-gnu",
                                           "rootfs/lib64"};
        static const char digest[] =
            "sha256:"
            "00000000000000000000000000000000000000000000000000000000000000ff";
        char p[1024], err[512];
        sbx_template_t *t;

        if (sbx_fs_mkdir(dir, 0755, 0, 0, err, sizeof(err)))
                fail_msg("%s", err);
        for (size_t i = 0; i < SBX_ARRAY_SIZE(dirs); i++)
                if (sbx_fs_mkdir(sbx_fmt(p, sizeof(p), "%s/%s", dir, dirs[i]),
                                 0755, 0, 0, err, sizeof(err)))
                        fail_msg("%s", err);
        for (size_t i = 0; i < SBX_ARRAY_SIZE(files); i++) {
                char *data = NULL;
                size_t len = 0;
                if (sbx_read_file(files[i][0], 64 << 20, &data, &len, err,
                                  sizeof(err)) ||
                    sbx_fs_write(
                        sbx_fmt(p, sizeof(p), "%s/rootfs/%s", dir, files[i][1]),
                        data, len, 0755, err, sizeof(err)))
                        fail_msg("%s", err);
                free(data);
        }
        if (sbx_fs_write(sbx_fmt(p, sizeof(p), "%s/digest", dir), digest,
                         sizeof(digest) - 1, 0644, err, sizeof(err)))
                fail_msg("%s", err);
        t = sbx_template_dir_new(dir, err, sizeof(err));
        if (!t)
                fail_msg("mini template: %s", err);
        return t;
}

static int group_setup(void **state)
{
        char p[1024];
        (void)state;
        if (rtfx_open(&T, "itest"))
                return -1;
        mini = make_mini(sbx_fmt(p, sizeof(p), "%s/tpl-mini", T.root));
        return 0;
}

/* Deletes every sandbox the tests made, failed or not, then checks that
 * the runtimes list nothing and that no mount or cgroup of ours is left. */
static int group_teardown(void **state)
{
        (void)state;
        sbx_template_destroy(mini);
        return rtfx_close(&T);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_host_template),
            cmocka_unit_test(test_runc_lifecycle),
            cmocka_unit_test(test_runc_usage_and_deadline),
            cmocka_unit_test(test_runc_disk_bounds),
            cmocka_unit_test(test_runc_workspace_persists),
            cmocka_unit_test(test_runc_dir_template),
            cmocka_unit_test(test_create_failures),
            cmocka_unit_test(test_runsc_basic),
            cmocka_unit_test(test_agent_binds),
        };
        setvbuf(stdout, NULL, _IONBF, 0);
        return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
