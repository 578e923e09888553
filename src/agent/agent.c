/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sbx-agent: PID 1 of every sandbox. It reaps every process that ends up
 * its child, and serves the executor over a unix socket in a private
 * directory (mode 0700): exec (exec.c), cancel, soft reset (reset.c) and
 * ping, in the protocol of proto.h. One thread and one poll loop; signals
 * are blocked and read from a signalfd, so no handler runs and nothing is
 * global (a blocked signal is queued even for a PID 1 that has no handler
 * for it). As PID 1 it obeys SIGTERM/SIGINT/SIGHUP only from outside the
 * sandbox (the runtime), not from the untrusted code it runs. With
 * --no-pid1 it runs on a host for tests: it becomes a child subreaper, and
 * RESET and exit kill only its own descendants; without it, it refuses to
 * run unless it is PID 1.
 */
#include "agent/agent.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent/reset.h"
#include "core/util.h"

#define DEFAULT_SOCKET "/run/sbx/agent.sock"

static void agent_log(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static void agent_log(const char *fmt, ...)
{
        va_list ap;
        fputs("sbx-agent: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}

void sbx_agentd_send(sbx_agentd_conn_t *c, const sbx_agent_frame_t *frame)
{
        char err[256];
        if (sbx_agent_frame_encode(frame, &c->out, err, sizeof(err))) {
                agent_log("cannot encode a %s frame: %s",
                          sbx_agent_ftype_name(frame->type), err);
                abort();
        }
}

void sbx_agentd_send_error(sbx_agentd_conn_t *c,
                           uint64_t exec_id,
                           sbx_agent_ecode_t code,
                           int sys_errno,
                           const char *fmt,
                           ...)
{
        sbx_agent_frame_t f = {.type      = SBX_AGENT_F_ERROR,
                               .exec_id   = exec_id,
                               .code      = code,
                               .sys_errno = sys_errno};
        char msg[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        f.message = msg;
        sbx_agentd_send(c, &f);
}

/* Blocks the signals the loop reads from a signalfd; -1 on failure. */
static int signals_setup(void)
{
        struct sigaction ign = {.sa_handler = SIG_IGN};
        int sigs[]           = {SIGCHLD, SIGTERM, SIGINT, SIGHUP};
        sigset_t set;

        sigemptyset(&set);
        for (size_t i = 0; i < SBX_ARRAY_SIZE(sigs); i++)
                sigaddset(&set, sigs[i]);
        /* A peer that hangs up is an EPIPE, not a death. */
        sigaction(SIGPIPE, &ign, NULL);
        if (sigprocmask(SIG_BLOCK, &set, NULL))
                return -1;
        return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/*
 * Creates the socket's directory (and missing parents) and checks that it
 * is ours and private: an existing directory is never chmod'ed, because
 * --socket /tmp/x.sock must not make /tmp private; it is refused instead.
 */
static int socket_dir_setup(const char *socket_path)
{
        char *dir = sbx_strdup(socket_path), *slash = strrchr(dir, '/'), *p;
        struct stat st;
        int rc = -1;

        if (!slash || slash == dir) {
                agent_log("%s: the socket needs its own directory",
                          socket_path);
                goto done;
        }
        *slash = '\0';
        for (p = dir + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(dir, 0755) && errno != EEXIST) {
                        agent_log("mkdir %s: %s", dir, strerror(errno));
                        goto done;
                }
                *p = '/';
        }
        if (mkdir(dir, 0700) && errno != EEXIST) {
                agent_log("mkdir %s: %s", dir, strerror(errno));
                goto done;
        }
        if (lstat(dir, &st) || !S_ISDIR(st.st_mode)) {
                agent_log("%s: not a directory", dir);
                goto done;
        }
        if (st.st_uid != geteuid() || (st.st_mode & 077)) {
                agent_log(
                    "%s: mode 0%o, owner %u: the socket directory must "
                    "be private to uid %u (mode 0700)",
                    dir, (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid,
                    (unsigned)geteuid());
                goto done;
        }
        rc = 0;
done:
        free(dir);
        return rc;
}

static int listen_setup(const char *path)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        struct stat st;
        mode_t old_umask;
        int fd;

        if (strlen(path) >= sizeof(sa.sun_path)) {
                agent_log("%s: longer than %zu bytes", path,
                          sizeof(sa.sun_path) - 1);
                return -1;
        }
        if (socket_dir_setup(path))
                return -1;
        memcpy(sa.sun_path, path, strlen(path) + 1);
        /* A socket left by an earlier agent; anything else stays. */
        if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
                unlink(path);
        /* The umask makes the socket 0700 as bind creates it: no chmod
         * after, which gVisor refuses (EPERM) on a socket it made on the
         * host (runsc --host-uds=create). */
        old_umask = umask(077);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
            listen(fd, SBX_AGENTD_MAX_CONNS)) {
                umask(old_umask);
                agent_log("%s: %s", path, strerror(errno));
                if (fd >= 0)
                        close(fd);
                return -1;
        }
        umask(old_umask);
        return fd;
}

static void conn_close(sbx_agentd_t *a, int slot)
{
        sbx_agentd_conn_t *c = a->conns[slot];

        for (int i = 0; i < SBX_AGENTD_MAX_EXECS; i++) {
                sbx_agentd_exec_t *e = a->execs[i];
                if (e && e->conn == c) {
                        /* Nobody to report to: the exec goes. */
                        sbx_agentd_exec_kill(e);
                        e->conn = NULL;
                }
        }
        close(c->fd);
        sbx_agent_dec_destroy(c->dec);
        sbx_agent_buf_free(&c->out);
        free(c);
        a->conns[slot] = NULL;
}

/* Sends what @p c has queued, as far as the socket takes it; -1 if the
 * peer is gone. */
static int conn_flush(sbx_agentd_conn_t *c)
{
        while (c->out.len) {
                ssize_t n = send(c->fd, c->out.data, c->out.len,
                                 MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n < 0)
                        return errno == EAGAIN || errno == EINTR ? 0 : -1;
                sbx_agent_buf_consume(&c->out, (size_t)n);
        }
        return 0;
}

static void reap_cb(void *opaque)
{
        sbx_agentd_reap(opaque);
}

static void do_reset(sbx_agentd_t *a, sbx_agentd_conn_t *c)
{
        sbx_agent_frame_t f = {.type = SBX_AGENT_F_RESET_DONE};
        char err[256];
        unsigned killed;

        if (sbx_reset_kill_procs(a->self, a->pid1, NULL, reap_cb, a, &killed,
                                 err, sizeof(err))) {
                sbx_agentd_send_error(c, 0, SBX_AGENT_E_RESET, 0, "reset: %s",
                                      err);
                return;
        }
        f.killed = killed;
        if (a->tmp_dir && sbx_reset_wipe_dir(a->tmp_dir, &f.tmp_removed,
                                             &f.tmp_failed, err, sizeof(err))) {
                sbx_agentd_send_error(c, 0, SBX_AGENT_E_RESET, 0, "reset: %s",
                                      err);
                return;
        }
        /* Execs get their own cwd; the agent's is the one it started in. */
        if (chdir(a->start_cwd))
                agent_log("chdir %s: %s", a->start_cwd, strerror(errno));
        sbx_agentd_send(c, &f);
}

/* Acts on one frame from @p c; the frame is taken over. */
static void dispatch(sbx_agentd_t *a,
                     sbx_agentd_conn_t *c,
                     sbx_agent_frame_t *f)
{
        switch (f->type) {
        case SBX_AGENT_F_PING: {
                sbx_agent_frame_t pong = {.type  = SBX_AGENT_F_PONG,
                                          .nonce = f->nonce};
                sbx_agentd_send(c, &pong);
                break;
        }
        case SBX_AGENT_F_EXEC:
                sbx_agentd_exec_start(a, c, f);
                break;
        case SBX_AGENT_F_CANCEL:
                /* Unknown or finished: it raced with the end; nothing to do. */
                for (int i = 0; i < SBX_AGENTD_MAX_EXECS; i++) {
                        sbx_agentd_exec_t *e = a->execs[i];
                        if (e && e->id == f->exec_id && !e->reaped) {
                                sbx_agentd_exec_kill(e);
                                sbx_agentd_exec_kill_escaped(a, e);
                                e->cancelled = 1;
                        }
                }
                break;
        case SBX_AGENT_F_RESET:
                do_reset(a, c);
                break;
        default:
                sbx_agentd_send_error(c, f->exec_id, SBX_AGENT_E_INVALID, 0,
                                      "a %s frame is not a request",
                                      sbx_agent_ftype_name(f->type));
                break;
        }
        sbx_agent_frame_clear(f);
}

/* Reads from connection @p slot and acts on the frames; closes it at EOF,
 * on error, and after a malformed frame (a stream cannot resync). */
static void conn_read(sbx_agentd_t *a, int slot)
{
        sbx_agentd_conn_t *c = a->conns[slot];
        ssize_t n  = recv(c->fd, a->iobuf, SBX_AGENTD_CHUNK, MSG_DONTWAIT);
        size_t off = 0;
        char err[256];

        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (n <= 0) {
                if (n == 0 && sbx_agent_dec_eof(c->dec, err, sizeof(err)))
                        agent_log("connection: %s", err);
                conn_close(a, slot);
                return;
        }
        while (off < (size_t)n) {
                sbx_agent_frame_t f;
                size_t used;
                if (sbx_agent_dec_feed(c->dec, a->iobuf + off, (size_t)n - off,
                                       &used, &f, err, sizeof(err))) {
                        sbx_agentd_send_error(c, 0, SBX_AGENT_E_PROTO, 0, "%s",
                                              err);
                        conn_flush(c);
                        conn_close(a, slot);
                        return;
                }
                off += used;
                if (f.type != SBX_AGENT_F_NONE)
                        dispatch(a, c, &f);
        }
}

static void accept_conn(sbx_agentd_t *a)
{
        int fd =
            accept4(a->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        sbx_agentd_conn_t *c;

        if (fd < 0)
                return;
        c      = sbx_calloc(1, sizeof(*c));
        c->fd  = fd;
        c->dec = sbx_agent_dec_new();
        for (int i = 0; i < SBX_AGENTD_MAX_CONNS; i++) {
                if (!a->conns[i]) {
                        a->conns[i] = c;
                        return;
                }
        }
        sbx_agentd_send_error(c, 0, SBX_AGENT_E_BUSY, 0,
                              "%d connections are open already",
                              SBX_AGENTD_MAX_CONNS);
        conn_flush(c);
        close(fd);
        sbx_agent_dec_destroy(c->dec);
        sbx_agent_buf_free(&c->out);
        free(c);
}

static void read_signals(sbx_agentd_t *a)
{
        struct signalfd_siginfo si;

        while (read(a->sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
                if (si.ssi_signo == SIGCHLD)
                        continue;
                /* A sender inside our PID namespace has a pid here; the
                 * runtime, outside it, has none (0). */
                if (a->pid1 && si.ssi_pid) {
                        agent_log(
                            "signal %u from pid %u in the sandbox: "
                            "ignored",
                            si.ssi_signo, si.ssi_pid);
                        continue;
                }
                agent_log("signal %u: exiting", si.ssi_signo);
                a->stop = 1;
        }
        sbx_agentd_reap(a);
}

static void loop_once(sbx_agentd_t *a)
{
        int64_t now = sbx_mono_us();
        int timeout = sbx_agentd_exec_timers(a, now);

        a->npfds            = 0;
        a->pfds[a->npfds++] = (struct pollfd){a->sig_fd, POLLIN, 0};
        a->pfds[a->npfds++] = (struct pollfd){a->listen_fd, POLLIN, 0};
        for (int i = 0; i < SBX_AGENTD_MAX_CONNS; i++) {
                sbx_agentd_conn_t *c = a->conns[i];
                if (!c)
                        continue;
                c->pidx             = (int)a->npfds;
                a->pfds[a->npfds++] = (struct pollfd){
                    c->fd, (short)(POLLIN | (c->out.len ? POLLOUT : 0)), 0};
        }
        sbx_agentd_exec_pollset(a, now);
        if (poll(a->pfds, a->npfds, timeout) < 0) {
                if (errno != EINTR)
                        agent_log("poll: %s", strerror(errno));
                return;
        }
        now = sbx_mono_us();
        if (a->pfds[0].revents)
                read_signals(a);
        for (int i = 0; i < SBX_AGENTD_MAX_CONNS; i++) {
                sbx_agentd_conn_t *c = a->conns[i];
                short ev             = c ? a->pfds[c->pidx].revents : 0;
                if ((ev & POLLOUT) && conn_flush(c) < 0) {
                        conn_close(a, i);
                        continue;
                }
                if (ev & (POLLIN | POLLERR | POLLHUP))
                        conn_read(a, i);
        }
        if (a->pfds[1].revents)
                accept_conn(a);
        sbx_agentd_exec_io(a, now);
        sbx_agentd_exec_timers(a, now);
        sbx_agentd_exec_finish(a);
        for (int i = 0; i < SBX_AGENTD_MAX_CONNS; i++)
                if (a->conns[i] && conn_flush(a->conns[i]) < 0)
                        conn_close(a, i);
}

/* Kills what is left, closes everything; the agent's last act. */
static void shutdown_agent(sbx_agentd_t *a)
{
        char err[256];
        unsigned killed = 0;

        for (int i = 0; i < SBX_AGENTD_MAX_CONNS; i++)
                if (a->conns[i])
                        conn_close(a, i);
        if (sbx_reset_kill_procs(a->self, a->pid1, NULL, reap_cb, a, &killed,
                                 err, sizeof(err)))
                agent_log("at exit: %s", err);
        sbx_agentd_exec_drop_all(a);
}

static void usage(FILE *f)
{
        fprintf(f,
                "usage: sbx-agent [--socket PATH] [--tmp DIR] [--no-pid1]\n"
                "  --socket PATH  where to listen (default " DEFAULT_SOCKET
                ")\n"
                "  --tmp DIR      what RESET empties (default /tmp as PID 1,\n"
                "                 nothing with --no-pid1)\n"
                "  --no-pid1      run outside a sandbox: RESET and exit kill\n"
                "                 only the agent's own descendants\n");
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
            {"socket", required_argument, NULL, 's'},
            {"tmp", required_argument, NULL, 't'},
            {"no-pid1", no_argument, NULL, 'n'},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0}};
        sbx_agentd_t a = {.socket_path = DEFAULT_SOCKET,
                          .pid1        = 1,
                          .listen_fd   = -1,
                          .sig_fd      = -1};
        int opt, rc = 1;

        while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (opt) {
                case 's':
                        a.socket_path = optarg;
                        break;
                case 't':
                        a.tmp_dir = optarg;
                        break;
                case 'n':
                        a.pid1 = 0;
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return 2;
                }
        }
        if (optind != argc) {
                usage(stderr);
                return 2;
        }
        a.self = getpid();
        if (a.pid1 && a.self != 1) {
                agent_log(
                    "not PID 1 (pid %d): a RESET would kill every "
                    "process it can; pass --no-pid1 outside a sandbox",
                    (int)a.self);
                return 2;
        }
        if (a.pid1) {
                /* RESET counts and waits for processes in /proc: it must be
                 * this PID namespace's (kill() never reaches past it). */
                char self[16] = "";
                if (readlink("/proc/self", self, sizeof(self) - 1) < 0 ||
                    strcmp(self, "1")) {
                        agent_log(
                            "/proc is not this PID namespace's (/proc/self"
                            " is '%s'): mount it",
                            self);
                        return 2;
                }
                if (!a.tmp_dir)
                        a.tmp_dir = "/tmp";
        }
        /* Pipes must not land on 0-2, which the children's stdio take. */
        for (;;) {
                int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (fd > 2)
                        close(fd);
                else if (fd >= 0)
                        fcntl(fd, F_SETFD, 0);
                if (fd < 0 || fd > 2)
                        break;
        }
        a.sig_fd = signals_setup();
        if (a.sig_fd < 0) {
                agent_log("signalfd: %s", strerror(errno));
                goto done;
        }
        if (!a.pid1 && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) {
                agent_log("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
                goto done;
        }
        a.child_umask = umask(077);
        a.start_cwd   = getcwd(NULL, 0);
        if (!a.start_cwd)
                a.start_cwd = sbx_strdup("/");
        a.iobuf     = sbx_malloc(SBX_AGENTD_CHUNK);
        a.listen_fd = listen_setup(a.socket_path);
        if (a.listen_fd < 0)
                goto done;
        agent_log("listening on %s (pid %d%s)", a.socket_path, (int)a.self,
                  a.pid1 ? ", PID 1" : "");
        while (!a.stop)
                loop_once(&a);
        shutdown_agent(&a);
        unlink(a.socket_path);
        rc = 0;
done:
        if (a.listen_fd >= 0)
                close(a.listen_fd);
        if (a.sig_fd >= 0)
                close(a.sig_fd);
        free(a.iobuf);
        free(a.start_cwd);
        return rc;
}
