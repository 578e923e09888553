/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The life of one exec in sbx-agent: fork; in the child setsid (its own
 * process group, which the deadline and CANCEL kill whole, with whatever
 * left the group while the exec ran: see reset.h), pipes for
 * stdin/stdout/stderr, umask, chdir, groups and ids, then execve with our
 * own PATH search (glibc's execvpe would run a file it cannot execute
 * through /bin/sh; a request never reaches a shell unless it names one).
 * A close-on-exec status pipe tells the parent whether execve happened:
 * at its EOF STARTED is sent and only then are stdout/stderr read, so
 * STARTED always comes first. An exec is over when its leader is reaped
 * and its pipes are closed; then EXIT carries wait4's status and rusage.
 */
#include "agent/agent.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/reset.h"
#include "core/util.h"

#define DEFAULT_PATH                                                           \
        "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* The step of the child that failed, as sent on the status pipe. */
enum {
        STAGE_SETUP = 1,
        STAGE_CHDIR,
        STAGE_GROUPS,
        STAGE_GID,
        STAGE_UID,
        STAGE_EXEC
};

static const char *const stage_names[] = {
    "?", "setup", "chdir", "setgroups", "setgid", "setuid", "execve"};

typedef struct child_status_s {
        int stage, err;
} child_status_t;

_Noreturn static void child_fail(int status_fd, int stage)
{
        child_status_t st = {stage, errno};
        ssize_t n         = write(status_fd, &st, sizeof(st));
        (void)n;
        _exit(127);
}

/*
 * execvp's search without its shell fallback: argv[0] with a '/' as is,
 * else each PATH entry (empty meaning "."), the request's PATH or the
 * default. Like execvp, an EACCES is reported if nothing better was found.
 */
static void exec_search(const char *const *argv, const char *const *envp)
{
        const char *file = argv[0], *path = DEFAULT_PATH, *p;
        char *const *av = (char *const *)argv;
        char *const *ev = (char *const *)envp;
        int seen_eacces = 0;

        if (strchr(file, '/')) {
                execve(file, av, ev);
                return;
        }
        for (size_t i = 0; envp[i]; i++)
                if (!strncmp(envp[i], "PATH=", 5))
                        path = envp[i] + 5;
        for (p = path;; p++) {
                const char *end = strchrnul(p, ':');
                size_t dlen     = (size_t)(end - p);
                size_t flen     = strlen(file);
                char *full      = sbx_malloc(dlen + flen + 3);
                if (dlen)
                        memcpy(full, p, dlen);
                else
                        full[dlen++] = '.';
                full[dlen] = '/';
                memcpy(full + dlen + 1, file, flen + 1);
                execve(full, av, ev);
                free(full);
                if (errno == EACCES)
                        seen_eacces = 1;
                else if (errno != ENOENT && errno != ENOTDIR &&
                         errno != ESTALE && errno != ELOOP &&
                         errno != ENAMETOOLONG && errno != ENODEV &&
                         errno != ETIMEDOUT)
                        return;
                if (!*end)
                        break;
                p = end;
        }
        if (seen_eacces)
                errno = EACCES;
}

/* The child between fork and execve; never returns. */
_Noreturn static void child_run(const sbx_agentd_t *a,
                                const sbx_agent_exec_req_t *x,
                                const int in[2],
                                const int out[2],
                                const int err[2],
                                int status_fd)
{
        struct sigaction sa = {.sa_handler = SIG_DFL};
        sigset_t none;

        for (int sig = 1; sig < NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        sigaction(sig, &sa, NULL);
        sigemptyset(&none);
        if (sigprocmask(SIG_SETMASK, &none, NULL) || setsid() < 0 ||
            dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
                child_fail(status_fd, STAGE_SETUP);
        /* Nothing of the agent's but stdio may reach the program. */
        if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC)) {
                long max = sysconf(_SC_OPEN_MAX);
                for (int fd = 3; fd < (max > 0 && max < 65536 ? max : 65536);
                     fd++)
                        fcntl(fd, F_SETFD, FD_CLOEXEC);
        }
        umask(a->child_umask);
        if (x->cwd && x->cwd[0] && chdir(x->cwd))
                child_fail(status_fd, STAGE_CHDIR);
        /* A new identity keeps none of root's supplementary groups; an
         * agent that is not root has none it could drop. */
        if ((x->flags & (SBX_AGENT_EXEC_UID | SBX_AGENT_EXEC_GID)) &&
            setgroups(0, NULL) && geteuid() == 0)
                child_fail(status_fd, STAGE_GROUPS);
        if ((x->flags & SBX_AGENT_EXEC_GID) && setgid(x->gid))
                child_fail(status_fd, STAGE_GID);
        if ((x->flags & SBX_AGENT_EXEC_UID) && setuid(x->uid))
                child_fail(status_fd, STAGE_UID);
        exec_search(x->argv, x->envp);
        child_fail(status_fd, STAGE_EXEC);
}

static void close_fd(int *fd)
{
        if (*fd >= 0)
                close(*fd);
        *fd = -1;
}

static void close_pair(int p[2])
{
        close_fd(&p[0]);
        close_fd(&p[1]);
}

static void exec_free(sbx_agentd_exec_t *e)
{
        if (!e)
                return;
        for (int i = 0; i < SBX_AGENTD_NFDS; i++)
                close_fd(&e->fds[i]);
        sbx_agent_frame_clear(&e->req);
        free(e->argv0);
        free(e->cwd);
        free(e);
}

static sbx_agentd_exec_t *exec_find(sbx_agentd_t *a, uint64_t id)
{
        for (int i = 0; i < SBX_AGENTD_MAX_EXECS; i++)
                if (a->execs[i] && a->execs[i]->id == id)
                        return a->execs[i];
        return NULL;
}

void sbx_agentd_exec_start(sbx_agentd_t *a,
                           sbx_agentd_conn_t *c,
                           sbx_agent_frame_t *req)
{
        int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1},
            st[2] = {-1, -1}, slot = -1, e_errno;
        uint64_t id          = req->exec.exec_id;
        sbx_agentd_exec_t *e = NULL;

        for (int i = 0; i < SBX_AGENTD_MAX_EXECS && slot < 0; i++)
                if (!a->execs[i])
                        slot = i;
        if (exec_find(a, id)) {
                sbx_agentd_send_error(c, id, SBX_AGENT_E_INVALID, 0,
                                      "exec id %llu is already running",
                                      (unsigned long long)id);
                goto fail;
        }
        if (slot < 0) {
                sbx_agentd_send_error(c, id, SBX_AGENT_E_BUSY, 0,
                                      "%d execs are running already",
                                      SBX_AGENTD_MAX_EXECS);
                goto fail;
        }
        if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) ||
            pipe2(err, O_CLOEXEC) || pipe2(st, O_CLOEXEC))
                goto fail_errno;
        e = sbx_calloc(1, sizeof(*e));
        for (int i = 0; i < SBX_AGENTD_NFDS; i++)
                e->fds[i] = e->pidx[i] = -1;
        e->id       = id;
        e->conn     = c;
        e->start_us = sbx_mono_us();
        if (req->exec.deadline_ms)
                e->deadline_us =
                    e->start_us + (int64_t)req->exec.deadline_ms * 1000;
        e->argv0 = sbx_strdup(req->exec.argv[0]);
        e->cwd   = sbx_strdup(req->exec.cwd ? req->exec.cwd : "");
        e->pid   = fork();
        if (e->pid < 0)
                goto fail_errno;
        if (e->pid == 0)
                child_run(a, &req->exec, in, out, err, st[1]);
        e->start_known = !sbx_reset_proc_start(e->pid, &e->start_ticks);
        e->fds[SBX_AGENTD_STATUS] = st[0];
        e->fds[SBX_AGENTD_STDIN]  = in[1];
        e->fds[SBX_AGENTD_STDOUT] = out[0];
        e->fds[SBX_AGENTD_STDERR] = err[0];
        st[0] = in[1] = out[0] = err[0] = -1;
        close_pair(in);
        close_pair(out);
        close_pair(err);
        close_pair(st);
        for (int i = 0; i < SBX_AGENTD_NFDS; i++)
                fcntl(e->fds[i], F_SETFL, O_NONBLOCK);
        e->req = *req;
        memset(req, 0, sizeof(*req));
        if (!e->req.exec.stdin_len)
                close_fd(&e->fds[SBX_AGENTD_STDIN]);
        a->execs[slot] = e;
        return;
fail_errno:
        e_errno = errno;
        sbx_agentd_send_error(c, id, SBX_AGENT_E_SPAWN, e_errno,
                              "cannot start the exec: %s", strerror(e_errno));
fail:
        close_pair(in);
        close_pair(out);
        close_pair(err);
        close_pair(st);
        exec_free(e);
        sbx_agent_frame_clear(req);
}

void sbx_agentd_exec_kill(sbx_agentd_exec_t *e)
{
        if (e->reaped)
                return;
        /* The child may not have called setsid yet: kill it by pid too. */
        killpg(e->pid, SIGKILL);
        kill(e->pid, SIGKILL);
}

static void reap_cb(void *opaque)
{
        sbx_agentd_reap(opaque);
}

void sbx_agentd_exec_kill_escaped(sbx_agentd_t *a, sbx_agentd_exec_t *e)
{
        pid_t spare[SBX_AGENTD_MAX_EXECS];
        sbx_reset_scope_t scope = {
            .since = e->start_ticks, .since_pid = e->pid, .spare = spare};
        unsigned killed = 0;
        char err[256];

        if (!e->start_known)
                return;
        /* A leader's session is its pid (setsid in child_run). */
        for (int i = 0; i < SBX_AGENTD_MAX_EXECS; i++)
                if (a->execs[i] && a->execs[i] != e && !a->execs[i]->reaped)
                        spare[scope.n_spare++] = a->execs[i]->pid;
        if (sbx_reset_kill_procs(a->self, a->pid1, &scope, reap_cb, a, &killed,
                                 err, sizeof(err)))
                fprintf(stderr, "sbx-agent: exec %llu: %s\n",
                        (unsigned long long)e->id, err);
}

/* 1 if the pipes of @p e are not read now: its connection is full. */
static int throttled(const sbx_agentd_exec_t *e)
{
        return e->conn && e->conn->out.len >= SBX_AGENTD_OUT_HIGH;
}

static void pollset_add(sbx_agentd_t *a,
                        sbx_agentd_exec_t *e,
                        int i,
                        short events)
{
        e->pidx[i] = -1;
        if (e->fds[i] < 0 || !events)
                return;
        e->pidx[i]          = (int)a->npfds;
        a->pfds[a->npfds++] = (struct pollfd){e->fds[i], events, 0};
}

void sbx_agentd_exec_pollset(sbx_agentd_t *a, int64_t now)
{
        for (int i = 0; i < SBX_AGENTD_MAX_EXECS; i++) {
                sbx_agentd_exec_t *e = a->execs[i];
                short out_ev;
                if (!e)
                        continue;
                /* Output is read once STARTED is out, and not when the
                 * connection is full: the pipe then blocks the program. */
                out_ev = e->started && !throttled(e) ? POLLIN : 0;
                if (e->linger_us && throttled(e))
                        e->linger_us = now + SBX_AGENTD_LINGER_US;
                pollset_add(a, e, SBX_AGENTD_STATUS, POLLIN);
                pollset_add(a, e, SBX_AGENTD_STDIN, POLLOUT);
                pollset_add(a, e, SBX_AGENTD_STDOUT, out_ev);
                pollset_add(a, e, SBX_AGENTD_STDERR, out_ev);
        }
}

static short revents(const sbx_agentd_t *a, const sbx_agentd_exec_t *e, int i)
{
        return e->pidx[i] < 0 ? 0 : a->pfds[e->pidx[i]].revents;
}

/* The status pipe: EOF means execve succeeded; a record means not. */
static void io_status(sbx_agentd_exec_t *e)
{
        child_status_t st;
        ssize_t n = read(e->fds[SBX_AGENTD_STATUS], &st, sizeof(st));

        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        close_fd(&e->fds[SBX_AGENTD_STATUS]);
        if (n == 0) {
                sbx_agent_frame_t f = {.type    = SBX_AGENT_F_STARTED,
                                       .exec_id = e->id,
                                       .pid     = e->pid};
                e->started          = 1;
                if (e->conn)
                        sbx_agentd_send(e->conn, &f);
                return;
        }
        e->spawn_stage = STAGE_SETUP;
        e->spawn_errno = EIO;
        if (n == (ssize_t)sizeof(st) && st.stage >= STAGE_SETUP &&
            st.stage <= STAGE_EXEC) {
                e->spawn_stage = st.stage;
                e->spawn_errno = st.err;
        }
        /* The program never ran: it has no output to wait for. */
        close_fd(&e->fds[SBX_AGENTD_STDIN]);
        close_fd(&e->fds[SBX_AGENTD_STDOUT]);
        close_fd(&e->fds[SBX_AGENTD_STDERR]);
}

static void io_stdin(sbx_agentd_exec_t *e)
{
        const sbx_agent_exec_req_t *x = &e->req.exec;
        ssize_t n =
            write(e->fds[SBX_AGENTD_STDIN], x->stdin_data + e->stdin_off,
                  x->stdin_len - e->stdin_off);

        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (n > 0)
                e->stdin_off += (size_t)n;
        /* Fed, or the program closed its stdin (EPIPE): EOF for it. */
        if (n < 0 || e->stdin_off == x->stdin_len) {
                close_fd(&e->fds[SBX_AGENTD_STDIN]);
                sbx_agent_frame_clear(&e->req);
        }
}

static void io_output(sbx_agentd_t *a, sbx_agentd_exec_t *e, int i, int64_t now)
{
        ssize_t n = read(e->fds[i], a->iobuf, SBX_AGENTD_CHUNK);

        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (n <= 0) {
                close_fd(&e->fds[i]);
                return;
        }
        if (e->linger_us)
                e->linger_us = now + SBX_AGENTD_LINGER_US;
        if (e->conn) {
                sbx_agent_frame_t f = {.type     = i == SBX_AGENTD_STDOUT
                                                       ? SBX_AGENT_F_STDOUT
                                                       : SBX_AGENT_F_STDERR,
                                       .exec_id  = e->id,
                                       .data     = a->iobuf,
                                       .data_len = (size_t)n};
                sbx_agentd_send(e->conn, &f);
        }
}

void sbx_agentd_exec_io(sbx_agentd_t *a, int64_t now)
{
        for (int i = 0; i < SBX_AGENTD_MAX_EXECS; i++) {
                sbx_agentd_exec_t *e = a->execs[i];
                if (!e)
                        continue;
                /* Status first: STARTED must precede any output. */
                if (revents(a, e, SBX_AGENTD_STATUS))
                        io_status(e);
                if (e->fds[SBX_AGENTD_STDIN] >= 0 &&
                    revents(a, e, SBX_AGENTD_STDIN))
                        io_stdin(e);
                if (e->fds[SBX_AGENTD_STDOUT] >= 0 &&
                    revents(a, e, SBX_AGENTD_STDOUT))
                        io_output(a, e, SBX_AGENTD_STDOUT, now);
                if (e->fds[SBX_AGENTD_STDERR] >= 0 &&
                    revents(a, e, SBX_AGENTD_STDERR))
                        io_output(a, e, SBX_AGENTD_STDERR, now);
        }
}

/* Folds @p due into the timeout @p ms (ms from @p now, -1: none). */
static int earliest(int ms, int64_t due, int64_t now)
{
        int64_t d = (due - now + 999) / 1000;
        if (d < 0)
                d = 0;
        if (d > 60000)
                d = 60000;
        return ms < 0 || d < ms ? (int)d : ms;
}

int sbx_agentd_exec_timers(sbx_agentd_t *a, int64_t now)
{
        int ms = -1;

        for (int i = 0; i < SBX_AGENTD_MAX_EXECS; i++) {
                sbx_agentd_exec_t *e = a->execs[i];
                if (!e)
                        continue;
                if (e->deadline_us && !e->reaped && now >= e->deadline_us) {
                        sbx_agentd_exec_kill(e);
                        sbx_agentd_exec_kill_escaped(a, e);
                        e->timed_out   = 1;
                        e->deadline_us = 0;
                }
                if (e->deadline_us && !e->reaped)
                        ms = earliest(ms, e->deadline_us, now);
                if (e->reaped && !e->linger_us &&
                    e->fds[SBX_AGENTD_STATUS] < 0 &&
                    (e->fds[SBX_AGENTD_STDOUT] >= 0 ||
                     e->fds[SBX_AGENTD_STDERR] >= 0))
                        e->linger_us = now + SBX_AGENTD_LINGER_US;
                if (e->linger_us && now >= e->linger_us) {
                        /* A background process holds the pipes: stop. */
                        close_fd(&e->fds[SBX_AGENTD_STDOUT]);
                        close_fd(&e->fds[SBX_AGENTD_STDERR]);
                }
                if (e->linger_us && (e->fds[SBX_AGENTD_STDOUT] >= 0 ||
                                     e->fds[SBX_AGENTD_STDERR] >= 0))
                        ms = earliest(ms, e->linger_us, now);
        }
        return ms;
}

void sbx_agentd_reap(sbx_agentd_t *a)
{
        struct rusage ru;
        int status;
        pid_t pid;

        while ((pid = wait4(-1, &status, WNOHANG, &ru)) > 0) {
                for (int i = 0; i < SBX_AGENTD_MAX_EXECS; i++) {
                        sbx_agentd_exec_t *e = a->execs[i];
                        if (!e || e->pid != pid || e->reaped)
                                continue;
                        e->reaped = 1;
                        e->status = status;
                        e->ru     = ru;
                        e->end_us = sbx_mono_us();
                        /* A background process may hold the other end. */
                        close_fd(&e->fds[SBX_AGENTD_STDIN]);
                        sbx_agent_frame_clear(&e->req);
                        break;
                }
                /* Else an orphan the agent inherited: reaped, nothing more. */
        }
}

static uint64_t tv_us(struct timeval tv)
{
        return (uint64_t)tv.tv_sec * 1000000 + (uint64_t)tv.tv_usec;
}

static void send_result(sbx_agentd_exec_t *e)
{
        sbx_agent_frame_t f = {.type = SBX_AGENT_F_EXIT, .exec_id = e->id};

        if (e->spawn_stage) {
                const char *what = e->spawn_stage == STAGE_EXEC    ? e->argv0
                                   : e->spawn_stage == STAGE_CHDIR ? e->cwd
                                                                   : NULL;
                sbx_agentd_send_error(
                    e->conn, e->id, SBX_AGENT_E_SPAWN, e->spawn_errno,
                    "%s%s%s: %s", stage_names[e->spawn_stage], what ? " " : "",
                    what ? what : "", strerror(e->spawn_errno));
                return;
        }
        if (WIFSIGNALED(e->status)) {
                f.exit.exit_code = -1;
                f.exit.signal    = WTERMSIG(e->status);
        } else {
                f.exit.exit_code = WEXITSTATUS(e->status);
        }
        f.exit.timed_out = e->timed_out;
        f.exit.cancelled = e->cancelled;
        f.exit.wall_us   = (uint64_t)(e->end_us - e->start_us);
        f.exit.user_us   = tv_us(e->ru.ru_utime);
        f.exit.sys_us    = tv_us(e->ru.ru_stime);
        f.exit.maxrss_kb =
            (uint64_t)(e->ru.ru_maxrss > 0 ? e->ru.ru_maxrss : 0);
        sbx_agentd_send(e->conn, &f);
}

void sbx_agentd_exec_finish(sbx_agentd_t *a)
{
        for (int i = 0; i < SBX_AGENTD_MAX_EXECS; i++) {
                sbx_agentd_exec_t *e = a->execs[i];
                if (!e || !e->reaped || e->fds[SBX_AGENTD_STATUS] >= 0 ||
                    e->fds[SBX_AGENTD_STDOUT] >= 0 ||
                    e->fds[SBX_AGENTD_STDERR] >= 0)
                        continue;
                if (e->conn)
                        send_result(e);
                exec_free(e);
                a->execs[i] = NULL;
        }
}

void sbx_agentd_exec_drop_all(sbx_agentd_t *a)
{
        for (int i = 0; i < SBX_AGENTD_MAX_EXECS; i++) {
                if (a->execs[i])
                        sbx_agentd_exec_kill(a->execs[i]);
                exec_free(a->execs[i]);
                a->execs[i] = NULL;
        }
}
