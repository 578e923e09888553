/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The harness of the containment suite: a box is one test's sandbox, made
 * the way the executor makes one, with sbx-agent as PID 1; attacks run in
 * it as root through the agent (python3 with a prelude of helpers, or any
 * argv), their output is printed for the record and read by the
 * assertions, and a sampler watches the sandbox's usage and the host's
 * pulse while an attack runs. Whatever a test makes on the host — the
 * sandbox, its directories, a process, listeners, the sampler — the box
 * remembers, and box_teardown() removes it even when the test failed.
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
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/client.h"
#include "containment.h"
#include "core/util.h"
#include "runtime/fsutil.h"
#include "runtime/runtime.h"

/* Under runsc the pids cgroup counts gVisor's own host threads and stub
 * processes (about 45 for an idle sandbox), which runsc sandboxes get on
 * top of the limit the test asks for. */
#define RUNSC_PIDS 192

suite_t S;

const limits_t default_limits = {128, 64, 64, 16};

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

int box_setup(void **state)
{
        *state = sbx_calloc(1, sizeof(box_t));
        return 0;
}

void box_remember(box_t *b, const char *dir)
{
        assert_true(b->n_cleanup < MAX_CLEANUPS);
        sbx_fmt(b->cleanup[b->n_cleanup++], sizeof(b->cleanup[0]), "%s", dir);
}

/* Creates the box's sandbox (named @p tag) and connects to its agent.
 * A box started again after box_stop() keeps its workspace. */
void box_start(box_t *b, const char *tag, const limits_t *lim)
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
void box_stop(box_t *b)
{
        sbx_agent_close(b->conn);
        b->conn = NULL;
        rtfx_delete_ok(&S.fx, b->id);
        rtfx_expect_gone(&S.fx, b->id);
}

int box_teardown(void **state)
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
sbx_err_t exec_into(box_t *b,
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
result_t *exec_in(box_t *b, const char *const *argv, uint32_t deadline_ms)
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
result_t *py(box_t *b, uint32_t deadline_ms, const char *script, ...)
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

const char *out_of(const result_t *r)
{
        return r->out.data ? (const char *)r->out.data : "";
}

const char *err_of(const result_t *r)
{
        return r->err.data ? (const char *)r->err.data : "";
}

/* Prints what an attack saw inside, line by line, for the record. */
void show(const char *attack, const result_t *r)
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
const char *line_of(const result_t *r, const char *label)
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
void expect_failed(const result_t *r, const char *label)
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
void expect_completed(const result_t *r)
{
        if (r->exit.exit_code != 0 || !line_of(r, "done"))
                fail_msg(
                    "%s: the attack script did not complete: exit %d "
                    "signal %d\n%s%s",
                    S.runtime, r->exit.exit_code, r->exit.signal, out_of(r),
                    err_of(r));
}

void expect_absent(const char *path)
{
        struct stat st;
        if (lstat(path, &st) == 0)
                fail_msg("%s: %s appeared on the host", S.runtime, path);
}

char *host_read(const char *path)
{
        char *s = NULL, err[512];
        if (sbx_read_file(path, 64 << 20, &s, NULL, err, sizeof(err)))
                fail_msg("%s", err);
        return s;
}

/* ---- host listeners ---- */

/* Listens on @p addr, port 0 for IP; "host port" of it in @p host. */
void listen_on(box_t *b,
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
int has_connection(int fd, int ms)
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
watch_t *watch_start(box_t *b)
{
        watch_t *w = &b->watch;
        memset(w, 0, sizeof(*w));
        w->box = b;
        assert_int_equal(pthread_create(&w->thread, NULL, watch_loop, w), 0);
        b->watching = 1;
        return w;
}

void watch_stop(box_t *b)
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
void expect_host_responsive(const watch_t *w)
{
        assert_true(w->samples > 0);
        assert_true(w->spawn_ok > 0);
        assert_int_equal(w->spawn_failed, 0);
        assert_int_equal(host_spawn_true(), 0);
}
