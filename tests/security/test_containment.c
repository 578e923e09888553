/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The containment suite: what untrusted code can do to the host from
 * inside a real sandbox. Each test makes a sandbox the way the executor
 * does (runtime adapter, host template, sbx-agent as PID 1, limits), runs
 * an attack in it as root through the agent — read a host secret, write
 * outside, fork and memory bombs, fill the disk, reach the host's network,
 * mount, ptrace a host process, write /proc/sys and /sys, load a kernel
 * module, escape through symlinks, exceed the pids limit, outlive the exec
 * deadline — and asserts both that the attack failed or stayed inside the
 * sandbox's bounds and, from the host, that the host is as it was. The
 * root of a sandbox is writable by design (an overlay on the sandbox's own
 * disk image), so a write to /etc succeeds inside and must land there.
 * Under runsc a memory or pids bomb takes the whole sandbox down rather
 * than one process (see whole_sandbox_dies). The suite runs once per
 * runtime, `test_containment AGENT runc|runsc`, and prints what each
 * attack saw inside. Every sandbox, host process and file a test makes is
 * removed by its teardown even when it fails (tests fail through cmocka,
 * never abort); the group teardown then checks that no container, mount
 * or cgroup is left.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/client.h"
#include "agent_fixture.h"
#include "core/util.h"
#include "runtime/fsutil.h"
#include "runtime/runtime.h"
#include "runtime_fixture.h"

#define MAX_RESULTS    8
#define MAX_CLEANUPS   8
#define MAX_LISTENERS  8
#define PY_DEADLINE_MS 60000
/* Under runsc the pids cgroup counts gVisor's own host threads and stub
 * processes (about 45 for an idle sandbox), which runsc sandboxes get on
 * top of the limit the test asks for. */
#define RUNSC_PIDS 192

/* The run: which runtime, which agent binary, the runtime fixture. */
typedef struct suite_s {
        const char *runtime;
        const char *agent;
        rtfx_t fx;
} suite_t;

static suite_t S;

/* Limits of a test's sandbox. */
typedef struct limits_s {
        int64_t memory_mb, pids_max, disk_mb, tmp_mb;
} limits_t;

static const limits_t default_limits = {128, 64, 64, 16};

/* What the sampler saw while an attack ran. */
typedef struct watch_s {
        struct box_s *box;
        pthread_t thread;
        atomic_int stop;
        uint64_t max_pids, max_memory;
        int samples, spawn_ok, spawn_failed, ping_ok, ping_failed;
} watch_t;

/* A test's sandbox and what the test made on the host beside it. */
typedef struct box_s {
        const char *id;
        limits_t lim;
        char ws[600], sockdir[600], sock[700];
        sbx_agent_conn_t *conn;
        int may_die; /* the attack may take the whole sandbox down */
        result_t results[MAX_RESULTS];
        int n_results;
        char *code;     /* the last python script, freed at teardown */
        pid_t host_pid; /* killed at teardown */
        char cleanup[MAX_CLEANUPS][600]; /* host trees removed then */
        int n_cleanup;
        int listeners[MAX_LISTENERS], n_listeners; /* closed then */
        watch_t watch;                             /* stopped then if it runs */
        int watching;
} box_t;

/*
 * Python helpers every attack script starts with: attempt() runs one
 * step and prints "<label> OK <value>" or "<label> ERR <ERRNO>", which is
 * what the assertions read; sys_call() is a raw syscall by number.
 */
static const char py_prelude[] =
    "import ctypes, errno, os, signal, socket, sys, time\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "libc.syscall.restype = ctypes.c_long\n"
    "def ename(e):\n"
    "    return errno.errorcode.get(e, str(e))\n"
    "def attempt(label, fn):\n"
    "    try:\n"
    "        r = fn()\n"
    "        print(label, 'OK', '' if r is None else r, flush=True)\n"
    "    except OSError as e:\n"
    "        print(label, 'ERR', ename(e.errno), flush=True)\n"
    "def sys_call(nr, *args):\n"
    "    a = [ctypes.c_long(x) if isinstance(x, int) else x for x in args]\n"
    "    r = libc.syscall(ctypes.c_long(nr), *a)\n"
    "    if r == -1:\n"
    "        e = ctypes.get_errno()\n"
    "        raise OSError(e, os.strerror(e))\n"
    "    return r\n"
    "def write(path, data, mode='w'):\n"
    "    with open(path, mode) as f:\n"
    "        f.write(data)\n"
    "def read(path):\n"
    "    with open(path) as f:\n"
    "        return f.read()\n";

/* ---- the box: a sandbox with sbx-agent as PID 1 ---- */

static int box_setup(void **state)
{
        *state = sbx_calloc(1, sizeof(box_t));
        return 0;
}

static void box_remember(box_t *b, const char *dir)
{
        assert_true(b->n_cleanup < MAX_CLEANUPS);
        sbx_fmt(b->cleanup[b->n_cleanup++], sizeof(b->cleanup[0]), "%s", dir);
}

/* Creates the box's sandbox (named @p tag) and connects to its agent.
 * A box started again after box_stop() keeps its workspace. */
static void box_start(box_t *b, const char *tag, const limits_t *lim)
{
        static const char *const init[] = {SBX_AGENT_PATH, "--socket",
                                           SBX_AGENT_SOCKET_DIR "/agent.sock",
                                           NULL};
        sbx_sandbox_spec_t s;
        char err[512];

        b->id  = rtfx_new_id(&S.fx, tag);
        b->lim = lim ? *lim : default_limits;
        if (!b->ws[0]) { /* a box started again keeps its workspace */
                sbx_fmt(b->ws, sizeof(b->ws), "%s/%s", S.fx.ws, b->id);
                box_remember(b, b->ws);
        }
        sbx_fmt(b->sockdir, sizeof(b->sockdir), "%s/sock/%s", S.fx.root, b->id);
        sbx_fmt(b->sock, sizeof(b->sock), "%s/agent.sock", b->sockdir);
        box_remember(b, b->sockdir);
        if (!strcmp(S.runtime, "runsc"))
                b->lim.pids_max += RUNSC_PIDS;
        memset(&s, 0, sizeof(s));
        s.id            = b->id;
        s.runtime       = S.runtime;
        s.tmpl          = S.fx.host;
        s.cpu_quota_us  = 100000; /* one CPU: the host keeps the other */
        s.memory_mb     = b->lim.memory_mb;
        s.pids_max      = b->lim.pids_max;
        s.disk_mb       = b->lim.disk_mb;
        s.tmp_mb        = b->lim.tmp_mb;
        s.shm_mb        = b->lim.tmp_mb;
        s.workspace_dir = b->ws;
        s.agent_path    = S.agent;
        s.socket_dir    = b->sockdir;
        s.argv          = init;
        rtfx_create_ok(&S.fx, &s, NULL);
        b->conn = sbx_agent_connect(b->sock, 15000, err, sizeof(err));
        if (!b->conn || sbx_agent_ping(b->conn, err, sizeof(err)))
                fail_msg("agent of %s: %s", b->id, err);
}

/* Deletes the box's sandbox and checks that it left nothing. */
static void box_stop(box_t *b)
{
        sbx_agent_close(b->conn);
        b->conn = NULL;
        rtfx_delete_ok(&S.fx, b->id);
        rtfx_expect_gone(&S.fx, b->id);
}

static void watch_stop(box_t *b);

static int box_teardown(void **state)
{
        box_t *b = *state;
        char err[512];
        int rc = 0;

        if (b->watching)
                watch_stop(b);
        sbx_agent_close(b->conn);
        if (b->id && sbx_runtime_delete(S.fx.rt, b->id, err, sizeof(err)))
                rc = fprintf(stderr, "teardown %s: %s\n", b->id, err);
        if (b->host_pid > 0) {
                kill(b->host_pid, SIGKILL);
                waitpid(b->host_pid, NULL, 0);
        }
        for (int i = 0; i < b->n_listeners; i++)
                close(b->listeners[i]);
        for (int i = 0; i < b->n_cleanup; i++)
                if (sbx_fs_rmtree(b->cleanup[i], err, sizeof(err)))
                        rc = fprintf(stderr, "teardown: %s\n", err);
        for (int i = 0; i < b->n_results; i++)
                result_free(&b->results[i]);
        free(b->code);
        free(b);
        return rc ? -1 : 0;
}

/* ---- running attacks ---- */

/* Runs @p argv in the box as root, cwd /, into @p r. */
static sbx_err_t exec_into(box_t *b,
                           const char *const *argv,
                           uint32_t deadline_ms,
                           result_t *r)
{
        static const char *const envp[] = {"PATH=/usr/bin:/bin", "HOME=/root",
                                           "LANG=C.UTF-8", NULL};
        sbx_agent_exec_req_t req        = {
                   .argv = argv, .envp = envp, .cwd = "/", .deadline_ms = deadline_ms};
        return run_req(b->conn, &req, r);
}

/* Runs @p argv in the box; the result is the box's (freed at teardown).
 * If b->may_die, the agent going away mid-exec is a result too: errstr
 * then says so. */
static result_t *exec_in(box_t *b,
                         const char *const *argv,
                         uint32_t deadline_ms)
{
        result_t *r;
        sbx_err_t err;
        assert_true(b->n_results < MAX_RESULTS);
        r   = &b->results[b->n_results++];
        err = exec_into(b, argv, deadline_ms, r);
        if (err && !(b->may_die && err == SBX_ERR_IO))
                fail_msg("exec %s in %s: %s", argv[0], b->id, r->errstr);
        if (!err)
                r->errstr[0] = '\0';
        return r;
}

/* Runs py_prelude + @p script with python3 and the NULL-terminated
 * arguments that follow (sys.argv[1:]). */
static result_t *py(box_t *b, uint32_t deadline_ms, const char *script, ...)
{
        const char *argv[16] = {"/usr/bin/python3", "-c"};
        size_t n = 3, len = strlen(py_prelude) + strlen(script) + 1;
        va_list ap;

        free(b->code);
        b->code = sbx_malloc(len);
        argv[2] = sbx_fmt(b->code, len, "%s%s", py_prelude, script);
        va_start(ap, script);
        while ((argv[n] = va_arg(ap, const char *)) != NULL)
                assert_true(++n < SBX_ARRAY_SIZE(argv));
        va_end(ap);
        return exec_in(b, argv, deadline_ms);
}

static const char *out_of(const result_t *r)
{
        return r->out.data ? (const char *)r->out.data : "";
}

static const char *err_of(const result_t *r)
{
        return r->err.data ? (const char *)r->err.data : "";
}

/* Prints what an attack saw inside, line by line, for the record. */
static void show(const char *attack, const result_t *r)
{
        const char *p = out_of(r);
        while (*p) {
                const char *nl = strchrnul(p, '\n');
                printf("  %s %s: %.*s\n", S.runtime, attack, (int)(nl - p), p);
                p = *nl ? nl + 1 : nl;
        }
        if (r->err.len)
                printf("  %s %s: stderr: %.300s\n", S.runtime, attack,
                       err_of(r));
        printf("  %s %s: exit %d signal %d%s\n", S.runtime, attack,
               r->exit.exit_code, r->exit.signal,
               r->exit.timed_out ? " (timed out)" : "");
}

/* The rest of the output line whose first word is @p label, or NULL. */
static const char *line_of(const result_t *r, const char *label)
{
        size_t n = strlen(label);
        for (const char *p = out_of(r); p && *p;) {
                if (!strncmp(p, label, n) && (p[n] == ' ' || p[n] == '\n'))
                        return p + n + (p[n] == ' ');
                p = strchr(p, '\n');
                p = p ? p + 1 : NULL;
        }
        return NULL;
}

/* Asserts that step @p label of the script ran and failed. */
static void expect_failed(const result_t *r, const char *label)
{
        const char *v = line_of(r, label);
        if (!v)
                fail_msg("%s: no '%s' in the output:\n%s%s", S.runtime, label,
                         out_of(r), err_of(r));
        if (strncmp(v, "ERR ", 4))
                fail_msg("%s: '%s' succeeded inside the sandbox: %.200s",
                         S.runtime, label, v);
}

/* Asserts that the script ran to its end ("done"), exit 0. */
static void expect_completed(const result_t *r)
{
        if (r->exit.exit_code != 0 || !line_of(r, "done"))
                fail_msg(
                    "%s: the attack script did not complete: exit %d "
                    "signal %d\n%s%s",
                    S.runtime, r->exit.exit_code, r->exit.signal, out_of(r),
                    err_of(r));
}

static void expect_absent(const char *path)
{
        struct stat st;
        if (lstat(path, &st) == 0)
                fail_msg("%s: %s appeared on the host", S.runtime, path);
}

static char *host_read(const char *path)
{
        char *s = NULL, err[512];
        if (sbx_read_file(path, 64 << 20, &s, NULL, err, sizeof(err)))
                fail_msg("%s", err);
        return s;
}

/* A random hex marker: "SBX-SECRET-<32 hex>". */
static void make_marker(char *buf, size_t size)
{
        uint8_t r[16];
        size_t off;
        assert_int_equal(getrandom(r, sizeof(r), 0), sizeof(r));
        off = (size_t)snprintf(buf, size, "SBX-SECRET-");
        for (size_t i = 0; i < sizeof(r) && off + 2 < size; i++)
                off += (size_t)snprintf(buf + off, size - off, "%02x", r[i]);
}

/* Plants a fake private key holding @p marker at @p dir/id_rsa (0600). */
static void plant_secret(box_t *b,
                         const char *dir,
                         const char *marker,
                         char *ret_path,
                         size_t size)
{
        char err[512], key[256];
        if (sbx_fs_mkdir(dir, 0700, 0, 0, err, sizeof(err)))
                fail_msg("%s", err);
        box_remember(b, dir);
        sbx_fmt(key, sizeof(key),
                "-----BEGIN OPENSSH PRIVATE KEY-----\n%s\n"
                "-----END OPENSSH PRIVATE KEY-----\n",
                marker);
        sbx_fmt(ret_path, size, "%s/id_rsa", dir);
        if (sbx_fs_write(ret_path, key, strlen(key), 0600, err, sizeof(err)))
                fail_msg("%s", err);
}

/* Where a path of the sandbox lands on the host if written: the upper
 * dir of the overlay that holds it. */
static char *upper_of(const box_t *b, const char *path, char *buf, size_t size)
{
        char dir[1024];
        sbx_runtime_sandbox_dir(S.fx.rt, b->id, dir, sizeof(dir));
        for (size_t i = 0; i < sbx_template_sub_count(S.fx.host); i++) {
                const char *t = sbx_template_sub_target(S.fx.host, i);
                size_t n      = strlen(t);
                if (!strncmp(path, t, n) && path[n] == '/')
                        return sbx_fmt(buf, size, "%s/disk/sub%zu.upper%s", dir,
                                       i, path + n);
        }
        return sbx_fmt(buf, size, "%s/disk/root.upper%s", dir, path);
}

/* ---- the sampler: usage of the sandbox and the host's pulse ---- */

static int host_spawn_true(void)
{
        static char *const argv[] = {"/bin/true", NULL};
        extern char **environ;
        pid_t pid;
        int st;
        if (posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ))
                return -1;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
                return -1;
        return 0;
}

static void *watch_loop(void *opaque)
{
        watch_t *w            = opaque;
        sbx_agent_conn_t *ctl = sbx_agent_connect(w->box->sock, 5000, NULL, 0);

        for (int i = 0; !atomic_load(&w->stop); i++) {
                sbx_usage_t u;
                if (!sbx_runtime_usage(S.fx.rt, w->box->id, &u, NULL, 0)) {
                        w->samples++;
                        if (u.pids_current > w->max_pids)
                                w->max_pids = u.pids_current;
                        if (u.memory_current > w->max_memory)
                                w->max_memory = u.memory_current;
                }
                if (i % 10 == 0) {
                        if (host_spawn_true())
                                w->spawn_failed++;
                        else
                                w->spawn_ok++;
                        if (!ctl || sbx_agent_ping(ctl, NULL, 0))
                                w->ping_failed++;
                        else
                                w->ping_ok++;
                }
                sleep_ms(20);
        }
        sbx_agent_close(ctl);
        return NULL;
}

/* Starts sampling @p b; its teardown stops it if the test does not. */
static watch_t *watch_start(box_t *b)
{
        watch_t *w = &b->watch;
        memset(w, 0, sizeof(*w));
        w->box = b;
        assert_int_equal(pthread_create(&w->thread, NULL, watch_loop, w), 0);
        b->watching = 1;
        return w;
}

static void watch_stop(box_t *b)
{
        watch_t *w = &b->watch;
        if (!b->watching)
                return;
        atomic_store(&w->stop, 1);
        pthread_join(w->thread, NULL);
        b->watching = 0;
        printf(
            "  %s watch: %d samples, pids <= %llu, memory <= %llu KiB, "
            "host spawns %d ok %d failed, agent pings %d ok %d failed\n",
            S.runtime, w->samples, (unsigned long long)w->max_pids,
            (unsigned long long)(w->max_memory >> 10), w->spawn_ok,
            w->spawn_failed, w->ping_ok, w->ping_failed);
}

/* The host kept working while the attack ran: it could start programs. */
static void expect_host_responsive(const watch_t *w)
{
        assert_true(w->samples > 0);
        assert_true(w->spawn_ok > 0);
        assert_int_equal(w->spawn_failed, 0);
        assert_int_equal(host_spawn_true(), 0);
}

/* The sandbox is still running and its agent serves a new exec. */
static void expect_sandbox_usable(box_t *b)
{
        static const char *const echo[] = {"/bin/echo", "alive", NULL};
        sbx_sandbox_status_t st;
        char err[512];
        int pid;
        result_t *r;
        assert_int_equal(
            sbx_runtime_state(S.fx.rt, b->id, &st, &pid, err, sizeof(err)),
            SBX_OK);
        assert_int_equal(st, SBX_SANDBOX_RUNNING);
        r = exec_in(b, echo, 10000);
        assert_int_equal(r->exit.exit_code, 0);
        assert_string_equal(out_of(r), "alive\n");
}

/*
 * Under runsc one host process, gVisor's sentry, holds the memory and
 * makes the host threads of the whole sandbox. Where runc's kernel stops
 * the one process that hits the memory or pids limit, here the kernel
 * stops the sentry (OOM-killed, or dead for want of a thread) and the
 * whole sandbox with it: still contained, but the unit that dies is the
 * sandbox, not the process.
 */
static int whole_sandbox_dies(void)
{
        return !strcmp(S.runtime, "runsc");
}

/* After an attack that hit a limit: under runc the sandbox goes on and
 * serves a new exec; under runsc it is dead, the agent's connection
 * broke, and the runtime reports it stopped. */
static void expect_limit_outcome(box_t *b, const result_t *r)
{
        sbx_sandbox_status_t st;
        char err[512];
        int pid;
        if (!whole_sandbox_dies()) {
                assert_string_equal(r->errstr, "");
                expect_sandbox_usable(b);
                return;
        }
        if (!r->errstr[0])
                fail_msg("%s: the sandbox survived: update this test",
                         S.runtime);
        printf("  %s: the sandbox died: %s\n", S.runtime, r->errstr);
        for (int i = 0; i < 100; i++) {
                assert_int_equal(sbx_runtime_state(S.fx.rt, b->id, &st, &pid,
                                                   err, sizeof(err)),
                                 SBX_OK);
                if (st == SBX_SANDBOX_STOPPED)
                        break;
                sleep_ms(50);
        }
        assert_int_equal(st, SBX_SANDBOX_STOPPED);
}

/* The sandbox's cgroup counts @p base tasks again (the agent alone) within
 * 5 s. runc only: under runsc it counts gVisor's threads and stub
 * processes, which gVisor keeps for later. */
static void expect_pids_back_to(box_t *b, uint64_t base)
{
        if (whole_sandbox_dies())
                return;
        for (int i = 0; i < 100 && rtfx_usage(&S.fx, b->id).pids_current > base;
             i++)
                sleep_ms(50);
        assert_true(rtfx_usage(&S.fx, b->id).pids_current <= base);
}

/* ---- 1. read a secret planted on the host ---- */

static void test_read_host_secret(void **state)
{
        static const char script[] =
            "marker_paths = sys.argv[1:3]\n"
            "for i, p in enumerate(marker_paths):\n"
            "    attempt('read%d' % i, lambda: read(p))\n"
            "    attempt('proc1root%d' % i, lambda: read('/proc/1/root' + p))\n"
            "    attempt('procselfroot%d' % i,\n"
            "            lambda: read('/proc/self/root' + p))\n"
            "attempt('dotdot', lambda: read(sys.argv[3]))\n"
            "class FH(ctypes.Structure):\n"
            "    _fields_ = [('bytes', ctypes.c_uint), ('type', "
            "ctypes.c_int),\n"
            "                ('f', ctypes.c_ubyte * 8)]\n"
            "fh = FH(8, 1)\n"
            "fh.f[0] = 2\n" /* FILEID_INO32_GEN of inode 2: a root dir */
            "mfd = os.open('/', os.O_RDONLY)\n"
            "attempt('open_by_handle_at',\n"
            "        lambda: sys_call(304, mfd, ctypes.byref(fh), 0))\n"
            "found = []\n"
            "for top, dirs, files in os.walk('/'):\n"
            "    if top == '/':\n"
            "        dirs[:] = [d for d in dirs\n"
            "                   if d not in ('proc', 'sys', 'dev', 'usr')]\n"
            "    found += [os.path.join(top, f) for f in files\n"
            "              if f == 'id_rsa']\n"
            "print('found', found)\n"
            "for f in found:\n"
            "    attempt('found-read', lambda: read(f))\n"
            "print('done')\n";
        box_t *b = *state;
        char marker[64], dir[600], home_key[700], state_key[700], rel[700];
        result_t *r;

        box_start(b, "secret", NULL);
        make_marker(marker, sizeof(marker));
        sbx_fmt(dir, sizeof(dir), "/root/.ssh-sbx-test-%ld", (long)getpid());
        plant_secret(b, dir, marker, home_key, sizeof(home_key));
        sbx_fmt(dir, sizeof(dir), "%s/secret", S.fx.root);
        plant_secret(b, dir, marker, state_key, sizeof(state_key));
        /* from the workspace, up to the state root as the host lays it */
        sbx_fmt(rel, sizeof(rel), "/workspace/../../secret/id_rsa");
        r = py(b, PY_DEADLINE_MS, script, home_key, state_key, rel, NULL);
        show("read-secret", r);
        expect_completed(r);
        assert_null(strstr(out_of(r), marker));
        assert_null(strstr(err_of(r), marker));
        expect_failed(r, "read0");
        expect_failed(r, "read1");
        expect_failed(r, "proc1root0");
        expect_failed(r, "proc1root1");
        expect_failed(r, "procselfroot0");
        expect_failed(r, "procselfroot1");
        expect_failed(r, "dotdot");
        expect_failed(r, "open_by_handle_at");
        assert_true(rtfx_file_has(home_key, marker)); /* untouched */
        box_stop(b);
}

/* ---- 2. write outside the sandbox ---- */

static void test_write_outside(void **state)
{
        static const char script[] =
            "n, hostdir = sys.argv[1], sys.argv[2]\n"
            "for label, d in (('usr', '/usr'), ('etc', '/etc'), ('root', "
            "'/'),\n"
            "                 ('bin', '/bin'), ('lib', '/usr/lib'),\n"
            "                 ('agentdir', '/.sbx'), ('hostdir', hostdir)):\n"
            "    attempt('write-' + label,\n"
            "            lambda: write(os.path.join(d, n), 'owned'))\n"
            "attempt('agent-binary', lambda: write('/.sbx/sbx-agent', 'x', "
            "'a'))\n"
            "print('done')\n";
        /* sandbox path written -> host path that must not appear */
        static const char *const places[][2] = {
            {"usr", "/usr"},     {"etc", "/etc"},     {"root", ""},
            {"bin", "/usr/bin"}, {"lib", "/usr/lib"}, {"agentdir", "/.sbx"}};
        box_t *b = *state;
        char name[64], hostdir[600], p[1200], label[64];
        char *agent_before, *agent_after;
        result_t *r;

        box_start(b, "write", NULL);
        sbx_fmt(name, sizeof(name), "sbx-evil-%ld", (long)getpid());
        sbx_fmt(hostdir, sizeof(hostdir), "%s/hostdir", S.fx.root);
        assert_int_equal(mkdir(hostdir, 0755), 0);
        box_remember(b, hostdir);
        agent_before = host_read(S.agent);
        r            = py(b, PY_DEADLINE_MS, script, name, hostdir, NULL);
        show("write-outside", r);
        expect_completed(r);
        expect_failed(r, "write-hostdir");
        expect_failed(r, "agent-binary");
        for (size_t i = 0; i < SBX_ARRAY_SIZE(places); i++) {
                const char *v;
                expect_absent(
                    sbx_fmt(p, sizeof(p), "%s/%s", places[i][1], name));
                /* The root is writable by design: what a write did
                 * land in is the sandbox's own upper dir. */
                v = line_of(
                    r, sbx_fmt(label, sizeof(label), "write-%s", places[i][0]));
                assert_non_null(v);
                if (!strncmp(v, "OK", 2)) {
                        char in[256];
                        sbx_fmt(in, sizeof(in), "%s/%s", places[i][1], name);
                        assert_true(rtfx_file_has(upper_of(b, in, p, sizeof(p)),
                                                  "owned"));
                }
        }
        expect_absent(sbx_fmt(p, sizeof(p), "%s/%s", hostdir, name));
        agent_after = host_read(S.agent);
        assert_string_equal(agent_before, agent_after);
        free(agent_before);
        free(agent_after);
        box_stop(b);
}

/* ---- 3. fork bomb ---- */

/* Reads "max N" from the pids cgroup of @p id: forks it refused. */
static long pids_refused(const box_t *b)
{
        char p[1024], cgp[256], *s;
        long n = -1;
        sbx_fmt(p, sizeof(p), "%s%s/pids.events",
                sbx_cgroup_mount(sbx_runtime_cgroup(S.fx.rt), "pids"),
                sbx_runtime_cgroup_path(b->id, cgp, sizeof(cgp)));
        s = host_read(p);
        if (sscanf(s, "max %ld", &n) != 1)
                n = -1;
        free(s);
        return n;
}


static void test_fork_bomb(void **state)
{
        static const char *const bomb[] = {
            "/bin/sh", "-c", "f() { f | f & }; f; while :; do :; done", NULL};
        box_t *b = *state;
        uint64_t base;
        char err[512];
        int killed = -1;
        int64_t t0;
        watch_t *w;
        result_t *r;

        box_start(b, "forkbomb", NULL);
        base       = rtfx_usage(&S.fx, b->id).pids_current;
        b->may_die = whole_sandbox_dies();
        w          = watch_start(b);
        t0         = sbx_mono_us();
        r          = exec_in(b, bomb, 3000);
        watch_stop(b);
        show("fork-bomb", r);
        printf("  %s fork-bomb: pids.events max %ld\n", S.runtime,
               pids_refused(b));
        assert_true(sbx_mono_us() - t0 < 15 * 1000000);
        assert_true(pids_refused(b) > 0); /* it did hit the limit */
        assert_true(w->max_pids <= (uint64_t)b->lim.pids_max);
        expect_host_responsive(w);
        if (!whole_sandbox_dies()) {
                assert_true(r->exit.timed_out);
                assert_int_equal(r->exit.signal, SIGKILL);
                assert_int_equal(w->ping_failed, 0); /* the agent kept up */
                assert_int_equal(
                    sbx_agent_reset(b->conn, &killed, err, sizeof(err)),
                    SBX_OK);
                printf("  %s fork-bomb: reset killed %d\n", S.runtime, killed);
        }
        expect_limit_outcome(b, r);
        expect_pids_back_to(b, base);
        box_stop(b);
}

/* ---- 4. memory bomb ---- */

static void test_memory_bomb(void **state)
{
        static const char script[] =
            "chunks = []\n"
            "for i in range(128):\n"
            "    chunks.append(b'x' * (16 << 20))\n"
            "    print('allocated', (i + 1) * 16, flush=True)\n"
            "print('survived', flush=True)\n";
        limits_t lim = default_limits;
        box_t *b     = *state;
        char err[512];
        sbx_usage_t u;
        watch_t *w;
        result_t *r;

        lim.memory_mb = 96;
        box_start(b, "membomb", &lim);
        b->may_die = whole_sandbox_dies();
        assert_int_equal(
            sbx_runtime_usage_reset(S.fx.rt, b->id, err, sizeof(err)), SBX_OK);
        w = watch_start(b);
        r = py(b, PY_DEADLINE_MS, script, NULL);
        watch_stop(b);
        u = rtfx_usage(&S.fx, b->id);
        show("memory-bomb", r);
        printf("  %s memory-bomb: peak %llu KiB of %lld MiB, oom_kills %llu\n",
               S.runtime, (unsigned long long)(u.memory_peak >> 10),
               (long long)lim.memory_mb, (unsigned long long)u.oom_kills);
        assert_null(line_of(r, "survived"));
        assert_true(u.oom_kills > 0);
        assert_true(u.memory_peak <=
                    ((uint64_t)lim.memory_mb << 20) + (4u << 20));
        expect_host_responsive(w);
        if (!whole_sandbox_dies()) {
                assert_false(r->exit.timed_out);
                assert_int_equal(r->exit.signal, SIGKILL);
        }
        expect_limit_outcome(b, r);
        box_stop(b);
}

/* ---- 5. fill /tmp, /dev/shm and the root's upper dir ---- */

static uint64_t host_free_bytes(const char *path)
{
        struct statvfs v;
        assert_int_equal(statvfs(path, &v), 0);
        return (uint64_t)v.f_bavail * v.f_frsize;
}

/* MiB the fill of @p path got to inside, asserting it stopped at ENOSPC. */
static long filled_mb(const result_t *r, const char *path)
{
        const char *v = line_of(r, path);
        char ename[32];
        long mb = -1;
        if (!v || sscanf(v, "ERR %31s %ld", ename, &mb) != 2)
                fail_msg("%s: fill of %s did not stop with an error: %s",
                         S.runtime, path, v ? v : "(no line)");
        if (strcmp(ename, "ENOSPC") && strcmp(ename, "EDQUOT"))
                fail_msg("%s: fill of %s ended with %s", S.runtime, path,
                         ename);
        return mb;
}

static void test_disk_fill(void **state)
{
        static const char script[] =
            "def fill(path):\n"
            "    n, chunk = 0, b'\\xa5' * (1 << 20)\n"
            "    try:\n"
            "        with open(path, 'wb') as f:\n"
            "            while n < (1 << 30):\n"
            "                f.write(chunk)\n"
            "                f.flush()\n"
            "                n += len(chunk)\n"
            "            os.fsync(f.fileno())\n"
            "        print(path, 'OK', n >> 20, flush=True)\n"
            "    except OSError as e:\n"
            "        print(path, 'ERR', ename(e.errno), n >> 20, flush=True)\n"
            "for p in sys.argv[1:]:\n"
            "    fill(p)\n"
            "print('done')\n";
        static const char *const cleanup[] = {
            "/bin/sh", "-c",
            "rm /tmp/fill /dev/shm/fill /fill && echo ok > /small && cat "
            "/small",
            NULL};
        box_t *b = *state;
        uint64_t before, after;
        char p[1200];
        struct stat st;
        long tmp, shm, root;
        result_t *r;

        box_start(b, "disk", NULL);
        before = host_free_bytes(S.fx.root);
        r = py(b, PY_DEADLINE_MS, script, "/tmp/fill", "/dev/shm/fill", "/fill",
               NULL);
        after = host_free_bytes(S.fx.root);
        show("disk-fill", r);
        printf("  %s disk-fill: host free space %+lld KiB\n", S.runtime,
               ((long long)after - (long long)before) / 1024);
        expect_completed(r);
        tmp  = filled_mb(r, "/tmp/fill");
        shm  = filled_mb(r, "/dev/shm/fill");
        root = filled_mb(r, "/fill");
        assert_true(tmp <= b->lim.tmp_mb && tmp >= b->lim.tmp_mb / 2);
        assert_true(shm <= b->lim.tmp_mb && shm >= b->lim.tmp_mb / 2);
        assert_true(root <= b->lim.disk_mb && root >= b->lim.disk_mb / 2);
        /* the host lost at most the sandbox's disk, not its free space */
        assert_true(before < after ||
                    before - after <= (uint64_t)(b->lim.disk_mb + 16) << 20);
        assert_int_equal(stat(upper_of(b, "/fill", p, sizeof(p)), &st), 0);
        assert_true(st.st_size <= b->lim.disk_mb << 20);
        r = exec_in(b, cleanup, 30000);
        assert_int_equal(r->exit.exit_code, 0);
        assert_string_equal(out_of(r), "ok\n");
        box_stop(b);
}

/* ---- 6. reach the host over the network ---- */

/* Listens on @p addr, port 0 for IP; "host port" of it in @p host. */
static void listen_on(box_t *b,
                      const struct sockaddr *addr,
                      socklen_t len,
                      char *host,
                      size_t size)
{
        struct sockaddr_storage ss;
        socklen_t sl              = sizeof(ss);
        char ip[INET6_ADDRSTRLEN] = "";
        int fd   = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int port = 0;

        assert_true(fd >= 0);
        assert_true(b->n_listeners < MAX_LISTENERS);
        b->listeners[b->n_listeners++] = fd;
        if (bind(fd, addr, len) || listen(fd, 16) ||
            getsockname(fd, (struct sockaddr *)&ss, &sl))
                fail_msg("listen: %s", strerror(errno));
        if (ss.ss_family == AF_INET) {
                const struct sockaddr_in *s4 = (const void *)&ss;
                inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip));
                port = ntohs(s4->sin_port);
        } else if (ss.ss_family == AF_INET6) {
                const struct sockaddr_in6 *s6 = (const void *)&ss;
                inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
                port = ntohs(s6->sin6_port);
        }
        if (host)
                sbx_fmt(host, size, "%s %d", ip, port);
}

/* 1 if a connection waits on listener @p fd within @p ms. */
static int has_connection(int fd, int ms)
{
        struct pollfd p = {fd, POLLIN, 0};
        int c;
        if (poll(&p, 1, ms) <= 0)
                return 0;
        c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c >= 0)
                close(c);
        return c >= 0;
}

static void test_network(void **state)
{
        static const char script[] =
            "print('interfaces', ' '.join(n for _, n in "
            "socket.if_nameindex()))\n"
            "def tcp(host, port):\n"
            "    fam = socket.AF_INET6 if ':' in host else socket.AF_INET\n"
            "    s = socket.socket(fam, socket.SOCK_STREAM)\n"
            "    s.settimeout(3)\n"
            "    try:\n"
            "        s.connect((host, port))\n"
            "    finally:\n"
            "        s.close()\n"
            "def abstract(name):\n"
            "    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
            "    try:\n"
            "        s.connect(b'\\0' + name.encode())\n"
            "    finally:\n"
            "        s.close()\n"
            "attempt('abstract', lambda: abstract(sys.argv[1]))\n"
            "for a in sys.argv[2:]:\n"
            "    host, port = a.split()\n"
            "    attempt('tcp-' + host, lambda: tcp(host, int(port)))\n"
            "print('done')\n";
        box_t *b = *state;
        char targets[MAX_LISTENERS][80], abstract[64], label[128];
        struct sockaddr_in lo = {.sin_family = AF_INET,
                                 .sin_addr   = {htonl(INADDR_LOOPBACK)}};
        struct sockaddr_un un = {.sun_family = AF_UNIX};
        struct ifaddrs *ifs, *i;
        int n = 0;
        result_t *r;

        box_start(b, "net", NULL);
        /* an abstract unix socket: it is per network namespace */
        sbx_fmt(abstract, sizeof(abstract), "sbx-sec-%ld", (long)getpid());
        memcpy(un.sun_path + 1, abstract, strlen(abstract));
        listen_on(b, (struct sockaddr *)&un,
                  (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
                              strlen(abstract)),
                  NULL, 0);
        listen_on(b, (struct sockaddr *)&lo, sizeof(lo), targets[n++],
                  sizeof(targets[0]));
        assert_int_equal(getifaddrs(&ifs), 0);
        for (i = ifs; i && n < MAX_LISTENERS - 2; i = i->ifa_next) {
                const struct sockaddr *a = i->ifa_addr;
                if (!a || (a->sa_family != AF_INET && a->sa_family != AF_INET6))
                        continue;
                if (a->sa_family == AF_INET6 &&
                    IN6_IS_ADDR_LINKLOCAL(
                        &((const struct sockaddr_in6 *)(const void *)a)
                             ->sin6_addr))
                        continue; /* needs a scope id: not by address alone */
                if (a->sa_family == AF_INET &&
                    ((const struct sockaddr_in *)(const void *)a)
                            ->sin_addr.s_addr == htonl(INADDR_LOOPBACK))
                        continue; /* listened on already */
                listen_on(b, a,
                          a->sa_family == AF_INET ? sizeof(struct sockaddr_in)
                                                  : sizeof(struct sockaddr_in6),
                          targets[n++], sizeof(targets[0]));
        }
        freeifaddrs(ifs);
        assert_true(n <= 6);
        r = py(b, PY_DEADLINE_MS, script, abstract, n > 0 ? targets[0] : NULL,
               n > 1 ? targets[1] : NULL, n > 2 ? targets[2] : NULL,
               n > 3 ? targets[3] : NULL, n > 4 ? targets[4] : NULL,
               n > 5 ? targets[5] : NULL, NULL);
        show("network", r);
        expect_completed(r);
        expect_failed(r, "abstract");
        for (int k = 0; k < n; k++) {
                *strchr(targets[k], ' ') = '\0';
                expect_failed(
                    r, sbx_fmt(label, sizeof(label), "tcp-%s", targets[k]));
        }
        /* and no listener of the host saw a connection */
        for (int k = 0; k < b->n_listeners; k++)
                assert_false(has_connection(b->listeners[k], 200));
        box_stop(b);
}

/* ---- 7. mount ---- */

static char *host_mounts(void)
{
        return host_read("/proc/self/mountinfo");
}

/* Fails if a mount line in @p after and not in @p before names @p what. */
static void expect_no_new_mount(const char *before,
                                const char *after,
                                const char *what)
{
        for (const char *p = after; *p;) {
                const char *nl = strchrnul(p, '\n');
                char line[2048];
                sbx_fmt(line, sizeof(line), "%.*s", (int)(nl - p), p);
                if (!strstr(before, line) && strstr(line, what))
                        fail_msg("%s: new host mount: %s", S.runtime, line);
                p = *nl ? nl + 1 : nl;
        }
}

static void test_mount(void **state)
{
        static const char script[] =
            "os.makedirs('/tmp/m', exist_ok=True)\n"
            "libc.mount.argtypes = [ctypes.c_char_p] * 3 + "
            "[ctypes.c_ulong, ctypes.c_void_p]\n"
            "def mount(src, dst, fs, flags):\n"
            "    if libc.mount(src, dst, fs, flags, None):\n"
            "        e = ctypes.get_errno()\n"
            "        raise OSError(e, os.strerror(e))\n"
            "attempt('mount-tmpfs', lambda: mount(b'none', b'/tmp/m', "
            "b'tmpfs', 0))\n"
            "attempt('mount-bind', lambda: mount(b'/', b'/tmp/m', None, "
            "4096))\n"
            "attempt('mount-proc', lambda: mount(b'proc', b'/tmp/m', "
            "b'proc', 0))\n"
            "attempt('remount-root-rw', lambda: mount(None, b'/usr', None, "
            "32 | 4096))\n" /* MS_REMOUNT|MS_BIND */
            "attempt('unshare-user-ns', lambda: sys_call(272, 0x10000000 | "
            "0x20000))\n"
            "attempt('unshare-mount-ns', lambda: sys_call(272, 0x20000))\n"
            "attempt('fsopen', lambda: sys_call(430, b'tmpfs', 0))\n"
            "attempt('open_tree', lambda: sys_call(428, -100, b'/', 1))\n"
            "r = os.system('mount -t tmpfs x /tmp/m 2>/dev/null')\n"
            "print('mount(8)-tmpfs', 'OK' if r == 0 else 'ERR %d' % r)\n"
            "r = os.system('mount --bind / /tmp/m 2>/dev/null')\n"
            "print('mount(8)-bind', 'OK' if r == 0 else 'ERR %d' % r)\n"
            "print('mounted', any(' /tmp/m ' in l for l in "
            "open('/proc/self/mounts')))\n"
            "print('done')\n";
        static const char *const labels[] = {
            "mount-tmpfs",     "mount-bind",      "mount-proc",
            "remount-root-rw", "unshare-user-ns", "unshare-mount-ns",
            "fsopen",          "open_tree",       "mount(8)-tmpfs",
            "mount(8)-bind"};
        box_t *b = *state;
        char dir[1024], *before, *after;
        result_t *r;

        box_start(b, "mount", NULL);
        before = host_mounts();
        r      = py(b, PY_DEADLINE_MS, script, NULL);
        after  = host_mounts();
        show("mount", r);
        expect_completed(r);
        for (size_t i = 0; i < SBX_ARRAY_SIZE(labels); i++)
                expect_failed(r, labels[i]);
        assert_non_null(line_of(r, "mounted"));
        assert_int_equal(strncmp(line_of(r, "mounted"), "False", 5), 0);
        expect_no_new_mount(before, after, "tmpfs none");
        expect_no_new_mount(
            before, after,
            sbx_runtime_sandbox_dir(S.fx.rt, b->id, dir, sizeof(dir)));
        free(before);
        free(after);
        box_stop(b);
}

/* ---- 8. ptrace a host process ---- */

static pid_t host_sleeper(box_t *b)
{
        pid_t pid     = fork();
        char comm[64] = "";
        assert_true(pid >= 0);
        if (pid == 0) {
                execl("/bin/sleep", "sleep", "600", (char *)NULL);
                _exit(127);
        }
        b->host_pid = pid;
        /* wait until it is sleep, not our fork */
        for (int i = 0; i < 200 && strcmp(comm, "sleep\n"); i++) {
                char p[64], *s = NULL;
                sleep_ms(5);
                if (!sbx_read_file(sbx_fmt(p, sizeof(p), "/proc/%d/comm", pid),
                                   64, &s, NULL, NULL, 0))
                        sbx_fmt(comm, sizeof(comm), "%s", s);
                free(s);
        }
        assert_string_equal(comm, "sleep\n");
        return pid;
}

static void test_ptrace_host(void **state)
{
        static const char script[] =
            "pid = int(sys.argv[1])\n"
            "print('visible', os.path.exists('/proc/%d' % pid))\n"
            "print('processes', sum(p.isdigit() for p in "
            "os.listdir('/proc')))\n"
            "libc.ptrace.restype = ctypes.c_long\n"
            "def pt(req):\n"
            "    if libc.ptrace(ctypes.c_long(req), ctypes.c_long(pid), None, "
            "None) == -1:\n"
            "        e = ctypes.get_errno()\n"
            "        raise OSError(e, os.strerror(e))\n"
            "attempt('ptrace-attach', lambda: pt(16))\n"
            "attempt('ptrace-seize', lambda: pt(0x4206))\n"
            "attempt('kill-0', lambda: os.kill(pid, 0))\n"
            "attempt('kill-stop', lambda: os.kill(pid, signal.SIGSTOP))\n"
            "attempt('pidfd_open', lambda: sys_call(434, pid, 0))\n"
            "attempt('proc-mem', lambda: open('/proc/%d/mem' % pid, "
            "'rb').close())\n"
            "class IOV(ctypes.Structure):\n"
            "    _fields_ = [('base', ctypes.c_void_p), ('len', "
            "ctypes.c_size_t)]\n"
            "buf = ctypes.create_string_buffer(8)\n"
            "mine = IOV(ctypes.cast(buf, ctypes.c_void_p), 8)\n"
            "theirs = IOV(0x400000, 8)\n"
            "attempt('process_vm_readv', lambda: sys_call(310, pid, "
            "ctypes.byref(mine), 1, ctypes.byref(theirs), 1, 0))\n"
            "print('done')\n";
        static const char *const labels[] = {
            "ptrace-attach", "ptrace-seize", "kill-0",          "kill-stop",
            "pidfd_open",    "proc-mem",     "process_vm_readv"};
        box_t *b = *state;
        char pidtext[32], p[64], *status;
        pid_t pid;
        int st;
        result_t *r;

        box_start(b, "ptrace", NULL);
        pid = host_sleeper(b);
        r   = py(b, PY_DEADLINE_MS, script,
                 sbx_fmt(pidtext, sizeof(pidtext), "%d", (int)pid), NULL);
        show("ptrace", r);
        expect_completed(r);
        assert_non_null(line_of(r, "visible"));
        assert_int_equal(strncmp(line_of(r, "visible"), "False", 5), 0);
        for (size_t i = 0; i < SBX_ARRAY_SIZE(labels); i++)
                expect_failed(r, labels[i]);
        /* the host process: alive, not stopped, not traced */
        assert_int_equal(waitpid(pid, &st, WNOHANG), 0);
        status = host_read(sbx_fmt(p, sizeof(p), "/proc/%d/status", (int)pid));
        assert_non_null(strstr(status, "State:\tS (sleeping)"));
        assert_non_null(strstr(status, "TracerPid:\t0\n"));
        free(status);
        box_stop(b);
}

/* ---- 9. write /proc/sys and /sys ---- */

/* The host's view of a file, "" if it has none. */
static char *host_value(const char *path)
{
        char *s = NULL;
        if (sbx_read_file(path, 1 << 16, &s, NULL, NULL, 0))
                return sbx_strdup("");
        return s;
}

static void test_proc_sys(void **state)
{
        static const char script[] =
            "for label, path, value in (\n"
            "        ('hostname', '/proc/sys/kernel/hostname', 'sbx-evil'),\n"
            "        ('core_pattern', '/proc/sys/kernel/core_pattern', "
            "'|/tmp/evil'),\n"
            "        ('drop_caches', '/proc/sys/vm/drop_caches', '3'),\n"
            "        ('sysrq', '/proc/sysrq-trigger', 'h'),\n"
            "        ('thp', '/sys/kernel/mm/transparent_hugepage/enabled', "
            "'never'),\n"
            "        ('uevent_helper', '/sys/kernel/uevent_helper', "
            "'/tmp/evil'),\n"
            "        ('cgroup-memory', "
            "'/sys/fs/cgroup/memory/memory.limit_in_bytes', '-1'),\n"
            "        ('cgroup-pids', '/sys/fs/cgroup/pids/pids.max', "
            "'max')):\n"
            "    attempt(label, lambda: write(path, value))\n"
            "print('nodename', os.uname().nodename)\n"
            "print('done')\n";
        static const char *const watched[] = {
            "/proc/sys/kernel/hostname", "/proc/sys/kernel/core_pattern",
            "/sys/kernel/mm/transparent_hugepage/enabled",
            "/sys/kernel/uevent_helper"};
        static const char *const labels[] = {
            "hostname", "core_pattern",  "drop_caches",   "sysrq",
            "thp",      "uevent_helper", "cgroup-memory", "cgroup-pids"};
        box_t *b = *state;
        char *before[SBX_ARRAY_SIZE(watched)], cgp[256], err[512];
        uint64_t mem = 0, pids = 0;
        result_t *r;

        box_start(b, "procsys", NULL);
        for (size_t i = 0; i < SBX_ARRAY_SIZE(watched); i++)
                before[i] = host_value(watched[i]);
        r = py(b, PY_DEADLINE_MS, script, NULL);
        show("proc-sys", r);
        for (size_t i = 0; i < SBX_ARRAY_SIZE(watched); i++) {
                char *now = host_value(watched[i]);
                assert_string_equal(now, before[i]);
                free(now);
                free(before[i]);
        }
        sbx_runtime_cgroup_path(b->id, cgp, sizeof(cgp));
        assert_int_equal(sbx_cgroup_read_u64(
                             sbx_runtime_cgroup(S.fx.rt), "memory", cgp,
                             "memory.limit_in_bytes", &mem, err, sizeof(err)),
                         SBX_OK);
        assert_int_equal(mem, (uint64_t)b->lim.memory_mb << 20);
        assert_int_equal(
            sbx_cgroup_read_u64(sbx_runtime_cgroup(S.fx.rt), "pids", cgp,
                                "pids.max", &pids, err, sizeof(err)),
            SBX_OK);
        assert_int_equal(pids, (uint64_t)b->lim.pids_max);
        expect_completed(r);
        for (size_t i = 0; i < SBX_ARRAY_SIZE(labels); i++)
                expect_failed(r, labels[i]);
        box_stop(b);
}

/* ---- 10. load a kernel module ---- */

static void test_kernel_module(void **state)
{
        static const char script[] =
            "import glob, shutil\n"
            "img = ctypes.create_string_buffer(b'\\x7fELF' + b'\\0' * 60)\n"
            "attempt('init_module', lambda: sys_call(175, img, 64, b''))\n"
            "kos = glob.glob('/usr/lib/modules/*/kernel/**/*.ko*', "
            "recursive=True)\n"
            "print('module-file', kos[0] if kos else None)\n"
            "fd = os.open(kos[0] if kos else '/usr/bin/true', os.O_RDONLY)\n"
            "attempt('finit_module', lambda: sys_call(313, fd, b'', 0))\n"
            "attempt('delete_module', lambda: sys_call(176, "
            "b'sbx_no_such_module', 0))\n"
            "attempt('kexec_load', lambda: sys_call(246, 0, 0, None, 0))\n"
            "mp = shutil.which('modprobe', path='/usr/sbin:/sbin:/usr/bin')\n"
            "print('modprobe', mp)\n"
            "if mp:\n"
            "    r = os.system(mp + ' dummy 2>/dev/null')\n"
            "    print('modprobe-run', 'OK' if r == 0 else 'ERR %d' % r)\n"
            "print('done')\n";
        box_t *b = *state;
        char *before, *after;
        result_t *r;

        box_start(b, "module", NULL);
        before = host_value("/proc/modules"); /* none: no module support */
        r      = py(b, PY_DEADLINE_MS, script, NULL);
        after  = host_value("/proc/modules");
        show("kernel-module", r);
        assert_string_equal(before, after);
        free(before);
        free(after);
        expect_completed(r);
        expect_failed(r, "init_module");
        expect_failed(r, "finit_module");
        expect_failed(r, "delete_module");
        expect_failed(r, "kexec_load");
        if (strncmp(line_of(r, "modprobe"), "None", 4))
                expect_failed(r, "modprobe-run");
        box_stop(b);
}

/* ---- 11. escape through symlinks in /workspace ---- */

/*
 * The agent's socket directory is the other host directory a sandbox
 * writes. Its agent.sock replaced by a link to a host socket, the host's
 * next connection must not follow the link there.
 */
static void expect_socket_link_refused(box_t *b)
{
        static const char script[] =
            "attempt('unlink', lambda: os.unlink('/run/sbx/agent.sock'))\n"
            "attempt('link', lambda: os.symlink(sys.argv[1], "
            "'/run/sbx/agent.sock'))\n"
            "print('done')\n";
        struct sockaddr_un un = {.sun_family = AF_UNIX};
        sbx_agent_conn_t *c;
        char err[512];
        result_t *r;

        sbx_fmt(un.sun_path, sizeof(un.sun_path), "%s/decoy.sock", S.fx.root);
        listen_on(b, (struct sockaddr *)&un, sizeof(un), NULL, 0);
        r = py(b, PY_DEADLINE_MS, script, un.sun_path, NULL);
        show("socket-link", r);
        expect_completed(r);
        c = sbx_agent_connect(b->sock, 500, err, sizeof(err));
        printf("  %s socket-link: host connect: %s\n", S.runtime,
               c ? "connected" : err);
        /* the decoy saw nothing; where no link could be made (runsc), the
         * host still reaches the agent itself */
        assert_false(has_connection(b->listeners[b->n_listeners - 1], 200));
        if (!strncmp(line_of(r, "link"), "OK", 2))
                assert_null(c);
        else {
                assert_non_null(c);
                assert_int_equal(sbx_agent_ping(c, err, sizeof(err)), SBX_OK);
        }
        sbx_agent_close(c);
}

static void test_workspace_symlink(void **state)
{
        static const char script[] =
            "n, secret, ws = sys.argv[1:4]\n"
            "os.symlink('/etc', '/workspace/evil')\n"
            "attempt('write-via-etc-link', lambda: "
            "write('/workspace/evil/' + n, 'owned'))\n"
            "os.symlink('/', '/workspace/rootlink')\n"
            "attempt('write-via-root-link', lambda: "
            "write('/workspace/rootlink/' + n, 'owned'))\n"
            "os.symlink(secret, '/workspace/hostsecret')\n"
            "attempt('read-via-host-link', lambda: "
            "read('/workspace/hostsecret'))\n"
            "os.symlink(ws + '/../../../../../../..' + secret, "
            "'/workspace/dotdot')\n"
            "attempt('read-via-dotdot-link', lambda: "
            "read('/workspace/dotdot'))\n"
            "print('done')\n";
        static const char again[] =
            "n, secret = sys.argv[1:3]\n"
            "attempt('read-old-write', lambda: read('/workspace/evil/' + n))\n"
            "attempt('read-via-host-link', lambda: "
            "read('/workspace/hostsecret'))\n"
            "print('done')\n";
        box_t *b = *state;
        char name[64], marker[64], dir[600], secret[700], p[1200], link[64];
        struct stat st;
        ssize_t n;
        result_t *r;

        box_start(b, "symlink", NULL);
        make_marker(marker, sizeof(marker));
        sbx_fmt(dir, sizeof(dir), "/root/.ssh-sbx-test-%ld", (long)getpid());
        plant_secret(b, dir, marker, secret, sizeof(secret));
        sbx_fmt(name, sizeof(name), "sbx-evil-%ld", (long)getpid());
        r = py(b, PY_DEADLINE_MS, script, name, secret, b->ws, NULL);
        show("workspace-symlink", r);
        expect_completed(r);
        assert_null(strstr(out_of(r), marker));
        expect_failed(r, "read-via-host-link");
        expect_failed(r, "read-via-dotdot-link");
        /* writes through the links stayed in the sandbox's view */
        expect_absent(sbx_fmt(p, sizeof(p), "/etc/%s", name));
        expect_absent(sbx_fmt(p, sizeof(p), "/%s", name));
        assert_true(rtfx_file_has(
            upper_of(b, sbx_fmt(link, sizeof(link), "/etc/%s", name), p,
                     sizeof(p)),
            "owned"));
        /* on the host the workspace holds the links themselves */
        sbx_fmt(p, sizeof(p), "%s/evil", b->ws);
        assert_int_equal(lstat(p, &st), 0);
        assert_true(S_ISLNK(st.st_mode));
        n = readlink(p, link, sizeof(link) - 1);
        assert_int_equal(n, 4);
        link[n] = '\0';
        assert_string_equal(link, "/etc");

        /* the host handles the workspace again: a new sandbox on it */
        box_stop(b);
        box_start(b, "symlink2", NULL);
        r = py(b, PY_DEADLINE_MS, again, name, secret, NULL);
        show("workspace-symlink-again", r);
        expect_completed(r);
        assert_null(strstr(out_of(r), marker));
        expect_failed(r, "read-old-write");
        expect_failed(r, "read-via-host-link");
        expect_absent(sbx_fmt(p, sizeof(p), "/etc/%s", name));
        assert_true(rtfx_file_has(secret, marker));
        expect_socket_link_refused(b);
        box_stop(b);
}

/* ---- 12. exceed the pids limit ---- */

static void test_pids_limit(void **state)
{
        static const char script[] =
            "import threading\n"
            "pids, err = [], 'none'\n"
            "for i in range(500):\n"
            "    try:\n"
            "        pid = os.fork()\n"
            "    except OSError as e:\n"
            "        err = ename(e.errno)\n"
            "        break\n"
            "    if pid == 0:\n"
            "        time.sleep(60)\n"
            "        os._exit(0)\n"
            "    pids.append(pid)\n"
            "print('forked', len(pids), err, flush=True)\n"
            "for p in pids:\n"
            "    os.kill(p, signal.SIGKILL)\n"
            "    os.waitpid(p, 0)\n"
            "stop, threads, terr = threading.Event(), [], 'none'\n"
            "for i in range(500):\n"
            "    t = threading.Thread(target=stop.wait)\n"
            "    try:\n"
            "        t.start()\n"
            "    except RuntimeError as e:\n"
            "        terr = str(e).replace(' ', '-')\n"
            "        break\n"
            "    threads.append(t)\n"
            "print('threads', len(threads), terr, flush=True)\n"
            "stop.set()\n"
            "for t in threads:\n"
            "    t.join()\n"
            "print('done')\n";
        limits_t lim = default_limits;
        box_t *b     = *state;
        char err[32];
        int forked = -1, threads = -1;
        watch_t *w;
        result_t *r;

        lim.pids_max  = 32;
        lim.memory_mb = 512; /* the pids limit, not memory, must stop it */
        box_start(b, "pids", &lim);
        b->may_die = whole_sandbox_dies();
        w          = watch_start(b);
        r          = py(b, PY_DEADLINE_MS, script, NULL);
        watch_stop(b);
        show("pids-limit", r);
        printf("  %s pids-limit: pids.events max %ld\n", S.runtime,
               pids_refused(b));
        assert_true(w->max_pids <= (uint64_t)b->lim.pids_max);
        assert_true(pids_refused(b) > 0);
        expect_host_responsive(w);
        if (!whole_sandbox_dies()) {
                expect_completed(r);
                assert_non_null(line_of(r, "forked"));
                assert_int_equal(
                    sscanf(line_of(r, "forked"), "%d %31s", &forked, err), 2);
                assert_string_equal(err, "EAGAIN");
                assert_true(forked > 0 && forked < lim.pids_max);
                assert_int_equal(sscanf(line_of(r, "threads"), "%d", &threads),
                                 1);
                assert_true(threads < lim.pids_max);
        }
        expect_limit_outcome(b, r);
        box_stop(b);
}

/* ---- 13. keep running past the exec deadline ---- */

/* Processes in the box other than the agent and the counting python;
 * -1 if the count failed. */
static int others_in(box_t *b)
{
        static const char *const count[] = {
            "/usr/bin/python3", "-c",
            "import os\n"
            "me = os.getpid()\n"
            "print(sum(1 for p in os.listdir('/proc') if p.isdigit() and "
            "int(p) not in (1, me)))\n",
            NULL};
        result_t r = {0};
        int n      = -1;
        if (!exec_into(b, count, 30000, &r) && r.exit.exit_code == 0 &&
            r.out.data)
                n = atoi((const char *)r.out.data);
        result_free(&r);
        return n;
}

static void test_past_deadline(void **state)
{
        static const char *const sleeper[] = {"/bin/sleep", "60", NULL};
        static const char escaper[] =
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    if os.fork() == 0:\n"
            "        signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "        signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
            "        fd = os.open('/dev/null', os.O_RDWR)\n"
            "        for i in (0, 1, 2):\n"
            "            os.dup2(fd, i)\n"
            "        while True:\n"
            "            time.sleep(0.05)\n"
            "    os._exit(0)\n"
            "os.wait()\n"
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "print('escaped', flush=True)\n"
            "time.sleep(60)\n";
        box_t *b = *state;
        uint64_t base;
        int64_t t0;
        int left = -1;
        result_t *r;

        box_start(b, "deadline", NULL);
        base = rtfx_usage(&S.fx, b->id).pids_current;
        t0   = sbx_mono_us();
        r    = exec_in(b, sleeper, 1000);
        show("deadline-sleep", r);
        assert_true(r->exit.timed_out);
        assert_true(sbx_mono_us() - t0 < 10 * 1000000);
        assert_int_equal(others_in(b), 0);

        t0 = sbx_mono_us();
        r  = py(b, 3000, escaper, NULL);
        show("deadline-escape", r);
        assert_non_null(line_of(r, "escaped")); /* it got that far */
        assert_true(r->exit.timed_out);
        assert_true(sbx_mono_us() - t0 < 15 * 1000000);
        for (int i = 0; i < 20 && (left = others_in(b)) != 0; i++)
                sleep_ms(100);
        printf("  %s deadline-escape: %d processes left after the exec\n",
               S.runtime, left);
        assert_int_equal(left, 0);
        expect_pids_back_to(b, base);
        box_stop(b);
}

/* ---- the run ---- */

static int group_setup(void **state)
{
        char name[32];
        (void)state;
        return rtfx_open(&S.fx,
                         sbx_fmt(name, sizeof(name), "sec-%s", S.runtime));
}

static int group_teardown(void **state)
{
        (void)state;
        return rtfx_close(&S.fx);
}

int main(int argc, char **argv)
{
#define T(f) cmocka_unit_test_setup_teardown(f, box_setup, box_teardown)
        const struct CMUnitTest tests[] = {
            T(test_read_host_secret),
            T(test_write_outside),
            T(test_fork_bomb),
            T(test_memory_bomb),
            T(test_disk_fill),
            T(test_network),
            T(test_mount),
            T(test_ptrace_host),
            T(test_proc_sys),
            T(test_kernel_module),
            T(test_workspace_symlink),
            T(test_pids_limit),
            T(test_past_deadline),
        };
#undef T
        int rc;
        if (argc != 3 ||
            (strcmp(argv[2], "runc") && strcmp(argv[2], "runsc"))) {
                fprintf(stderr, "usage: %s PATH-OF-sbx-agent runc|runsc\n",
                        argv[0]);
                return 2;
        }
        /* the sandbox binds it: an absolute path */
        S.agent = realpath(argv[1], NULL);
        if (!S.agent) {
                fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
                return 2;
        }
        S.runtime = argv[2];
        setvbuf(stdout, NULL, _IONBF, 0);
        rc = cmocka_run_group_tests_name(argv[2], tests, group_setup,
                                         group_teardown);
        free((char *)S.agent);
        return rc;
}
