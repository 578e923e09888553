/* SPDX-License-Identifier: Apache-2.0 */
/*
 * posix_spawn with a deadline. The child gets a fixed environment, stdin
 * from /dev/null and no descriptor above 2 (closefrom), so nothing of the
 * daemon leaks into runc or, through it, into a sandbox. The parent polls
 * the output pipes and a pidfd; a child that outlives its deadline is
 * killed and reaped before the call returns. Output held open by a
 * grandchild (a process left running in the container) is drained for a
 * short grace period after the child exits, not waited for.
 */
#include "runtime/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"

#define SPAWN_DRAIN_MS 100  /* output read after the child exited */
#define SPAWN_GRACE_MS 2000 /* after on_timeout, before SIGKILL */

static char *const spawn_env[] = {
    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LC_ALL=C", NULL};

typedef struct capture_s {
        int fd;
        char *buf;
        size_t len, cap, max;
        int *truncated;
} capture_t;

/* Reads what is available; returns 0 at EOF or error (fd closed). */
static int capture_read(capture_t *c)
{
        char tmp[16384];
        ssize_t n = read(c->fd, tmp, sizeof(tmp));
        size_t keep;
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                return 1;
        if (n <= 0) {
                close(c->fd);
                c->fd = -1;
                return 0;
        }
        keep = (size_t)n;
        if (c->len + keep > c->max) {
                keep          = c->max - c->len;
                *c->truncated = 1;
        }
        if (c->len + keep + 1 > c->cap) {
                c->cap = (c->len + keep + 1) * 2;
                c->buf = sbx_realloc(c->buf, c->cap);
        }
        memcpy(c->buf + c->len, tmp, keep);
        c->len += keep;
        c->buf[c->len] = '\0';
        return 1;
}

static void result_finish(sbx_spawn_result_t *r, int status)
{
        if (WIFSIGNALED(status)) {
                r->signaled  = 1;
                r->exit_code = 128 + WTERMSIG(status);
        } else {
                r->exit_code = WEXITSTATUS(status);
        }
}

static sbx_err_t spawn_start(const char *const *argv,
                             const sbx_spawn_opts_t *o,
                             int outw,
                             int errw,
                             pid_t *ret_pid,
                             char *errstr,
                             size_t errstr_size)
{
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t at;
        sigset_t none, all;
        int rc;

        posix_spawn_file_actions_init(&fa);
        posix_spawnattr_init(&at);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        if (o->discard_output) {
                posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY,
                                                 0);
                posix_spawn_file_actions_adddup2(&fa, 1, 2);
        } else {
                posix_spawn_file_actions_adddup2(&fa, outw, 1);
                posix_spawn_file_actions_adddup2(&fa, errw, 2);
        }
        posix_spawn_file_actions_addclosefrom_np(&fa, 3);
        sigemptyset(&none);
        sigfillset(&all);
        posix_spawnattr_setsigmask(&at, &none);
        posix_spawnattr_setsigdefault(&at, &all);
        posix_spawnattr_setpgroup(&at, 0);
        posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
                                          POSIX_SPAWN_SETSIGDEF |
                                          POSIX_SPAWN_SETPGROUP);
        rc = posix_spawn(ret_pid, argv[0], &fa, &at, (char *const *)argv,
                         spawn_env);
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&at);
        if (rc)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                  "cannot run %s: %s", argv[0], strerror(rc));
        return SBX_OK;
}

sbx_err_t sbx_spawn_run(const char *const *argv,
                        const sbx_spawn_opts_t *opts,
                        sbx_spawn_result_t *ret,
                        char *errstr,
                        size_t errstr_size)
{
        sbx_spawn_opts_t o = *opts;
        int outp[2] = {-1, -1}, errp[2] = {-1, -1};
        capture_t cap[2];
        pid_t pid = -1;
        int pidfd = -1, status = 0, exited = 0, timed_out = 0;
        int64_t start = sbx_mono_us(), drain_until = 0, grace_until = 0;
        sbx_err_t err = SBX_OK;

        memset(ret, 0, sizeof(*ret));
        memset(cap, 0, sizeof(cap));
        cap[0].fd = cap[1].fd = -1;
        if (!o.max_output)
                o.max_output = 1 << 20;
        if (!o.discard_output &&
            (pipe2(outp, O_CLOEXEC) || pipe2(errp, O_CLOEXEC))) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_IO, "pipe: %s",
                                 strerror(errno));
                goto done;
        }
        err =
            spawn_start(argv, &o, outp[1], errp[1], &pid, errstr, errstr_size);
        if (err)
                goto done;
        if (outp[1] >= 0) {
                close(outp[1]);
                close(errp[1]);
                outp[1] = errp[1] = -1;
        }
        cap[0] =
            (capture_t){outp[0], NULL, 0, 0, o.max_output, &ret->truncated};
        cap[1] =
            (capture_t){errp[0], NULL, 0, 0, o.max_output, &ret->truncated};
        outp[0] = errp[0] = -1;
        pidfd             = (int)syscall(SYS_pidfd_open, pid, 0);

        for (;;) {
                struct pollfd pf[3];
                int n = 0, wait_ms = 10;
                int64_t now = sbx_mono_us();
                if (!exited && o.timeout_ms > 0 && !timed_out &&
                    now - start > o.timeout_ms * 1000) {
                        timed_out = 1;
                        err = sbx_seterr(errstr, errstr_size, SBX_ERR_TIMEOUT,
                                         "%s timed out after %lld ms", argv[0],
                                         (long long)o.timeout_ms);
                        if (o.on_timeout)
                                o.on_timeout(o.opaque);
                        grace_until =
                            now + (o.on_timeout ? SPAWN_GRACE_MS : 0) * 1000;
                }
                if (!exited && timed_out && now >= grace_until) {
                        kill(pid, SIGKILL);
                        waitpid(pid, &status, 0);
                        result_finish(ret, status);
                        break;
                }
                if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
                        exited      = 1;
                        drain_until = now + SPAWN_DRAIN_MS * 1000;
                        result_finish(ret, status);
                }
                if (exited &&
                    (now > drain_until || (cap[0].fd < 0 && cap[1].fd < 0)))
                        break;
                for (int i = 0; i < 2; i++)
                        if (cap[i].fd >= 0)
                                pf[n++] = (struct pollfd){cap[i].fd, POLLIN, 0};
                if (!exited && pidfd >= 0) {
                        pf[n++] = (struct pollfd){pidfd, POLLIN, 0};
                        wait_ms = 1000;
                }
                if (!exited && o.timeout_ms > 0) {
                        int64_t until = timed_out ? grace_until
                                                  : start + o.timeout_ms * 1000;
                        int64_t left  = (until - now) / 1000 + 1;
                        if (left < wait_ms)
                                wait_ms = (int)left;
                }
                if (poll(pf, (nfds_t)n, wait_ms) < 0 && errno != EINTR) {
                        err = sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                         "poll: %s", strerror(errno));
                        kill(pid, SIGKILL);
                        waitpid(pid, &status, 0);
                        break;
                }
                for (int i = 0; i < n; i++) {
                        if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
                                continue;
                        for (int c = 0; c < 2; c++)
                                if (cap[c].fd == pf[i].fd)
                                        capture_read(&cap[c]);
                }
        }

done:
        for (int i = 0; i < 2; i++)
                if (cap[i].fd >= 0)
                        close(cap[i].fd);
        if (pidfd >= 0)
                close(pidfd);
        for (int i = 0; i < 2; i++) {
                if (outp[i] >= 0)
                        close(outp[i]);
                if (errp[i] >= 0)
                        close(errp[i]);
        }
        ret->out     = cap[0].buf ? cap[0].buf : sbx_strdup("");
        ret->out_len = cap[0].len;
        ret->err     = cap[1].buf ? cap[1].buf : sbx_strdup("");
        ret->err_len = cap[1].len;
        return err;
}

void sbx_spawn_result_clear(sbx_spawn_result_t *r)
{
        if (!r)
                return;
        free(r->out);
        free(r->err);
        r->out = r->err = NULL;
        r->out_len = r->err_len = 0;
}
