/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Client side of the agent protocol. The socket is non-blocking and every
 * wait is a poll() bounded by an absolute monotonic deadline, so no call
 * can hang on a stuck agent beyond what it promises. Received bytes go
 * through the incremental decoder, at most up to the end of one frame at
 * a time, so a frame is handled as soon as it is complete and bytes after
 * it stay buffered for the next read. Any failure in the middle of an
 * exchange marks the connection broken (see client.h).
 */
#include "agent/client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"

#define READ_CHUNK 65536

struct sbx_agent_conn_s {
        int fd;
        int timeout_ms;
        int broken; /* out of step with the agent: every call fails */
        sbx_agent_dec_t *dec;
        uint8_t *rbuf; /* READ_CHUNK bytes; [roff, rlen) not yet decoded */
        size_t roff, rlen;
        sbx_agent_buf_t wbuf;
};

/* The monotonic time @p ms from now. */
static int64_t deadline_in(int64_t ms)
{
        return sbx_mono_us() + ms * 1000;
}

/* Milliseconds left until @p deadline for poll(); -1 without one. */
static int ms_left(int64_t deadline)
{
        int64_t left;
        if (!deadline)
                return -1;
        left = (deadline - sbx_mono_us() + 999) / 1000;
        return left < 0 ? 0 : left > 60000 ? 60000 : (int)left;
}

static sbx_err_t broken(sbx_agent_conn_t *conn, sbx_err_t err)
{
        conn->broken = 1;
        return err;
}

/*
 * connect() to the socket at @p path without following a symbolic link
 * at its end: the socket's directory is writable from the sandbox, which
 * could put a link to a host socket there for the executor to talk to.
 * The socket is opened as an O_PATH descriptor and connected to through
 * /proc/self/fd. -1 with errno set; ENOTSOCK if @p path is not a socket.
 */
static int connect_nofollow(int fd, const char *path)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        struct stat st;
        int pfd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC), rc, e;

        if (pfd < 0)
                return -1;
        if (fstat(pfd, &st) || !S_ISSOCK(st.st_mode)) {
                close(pfd);
                errno = ENOTSOCK;
                return -1;
        }
        sbx_fmt(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", pfd);
        rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
        e  = errno;
        close(pfd);
        errno = e;
        return rc;
}

sbx_agent_conn_t *sbx_agent_connect(const char *socket_path,
                                    int timeout_ms,
                                    char *errstr,
                                    size_t errstr_size)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        int64_t deadline      = deadline_in(timeout_ms);
        sbx_agent_conn_t *conn;
        int fd;

        if (strlen(socket_path) >= sizeof(sa.sun_path)) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                           "%s: longer than %zu bytes", socket_path,
                           sizeof(sa.sun_path) - 1);
                return NULL;
        }
        for (long wait_us = 5000;;
             wait_us      = wait_us < 100000 ? wait_us * 2 : wait_us) {
                int e;
                /* Non-blocking: a full backlog is EAGAIN, not a hang. */
                fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
                            0);
                if (fd < 0) {
                        sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                   "socket: %s", strerror(errno));
                        return NULL;
                }
                if (!connect_nofollow(fd, socket_path))
                        break;
                e = errno;
                close(fd);
                /* Not there yet, or not listening yet: the sandbox starts. */
                if ((e != ENOENT && e != ECONNREFUSED && e != EAGAIN &&
                     e != EINTR) ||
                    sbx_mono_us() >= deadline) {
                        sbx_seterr(errstr, errstr_size,
                                   e == ENOENT ? SBX_ERR_NOENT : SBX_ERR_IO,
                                   "connect %s: %s", socket_path, strerror(e));
                        return NULL;
                }
                nanosleep(&(struct timespec){0, wait_us * 1000}, NULL);
        }
        conn             = sbx_calloc(1, sizeof(*conn));
        conn->fd         = fd;
        conn->timeout_ms = timeout_ms;
        conn->dec        = sbx_agent_dec_new();
        conn->rbuf       = sbx_malloc(READ_CHUNK);
        return conn;
}

void sbx_agent_close(sbx_agent_conn_t *conn)
{
        if (!conn)
                return;
        close(conn->fd);
        sbx_agent_dec_destroy(conn->dec);
        sbx_agent_buf_free(&conn->wbuf);
        free(conn->rbuf);
        free(conn);
}

/* Encodes and sends @p f before @p deadline. */
static sbx_err_t send_frame(sbx_agent_conn_t *conn,
                            const sbx_agent_frame_t *f,
                            int64_t deadline,
                            char *errstr,
                            size_t errstr_size)
{
        size_t off = 0;
        sbx_err_t err;

        conn->wbuf.len = 0;
        if ((err = sbx_agent_frame_encode(f, &conn->wbuf, errstr, errstr_size)))
                return err; /* nothing was sent: still in step */
        while (off < conn->wbuf.len) {
                struct pollfd p = {conn->fd, POLLOUT, 0};
                ssize_t n       = send(conn->fd, conn->wbuf.data + off,
                                       conn->wbuf.len - off, MSG_NOSIGNAL);
                if (n >= 0) {
                        off += (size_t)n;
                        continue;
                }
                if (errno != EAGAIN && errno != EINTR)
                        return broken(
                            conn,
                            sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                       "send to agent: %s", strerror(errno)));
                if (poll(&p, 1, ms_left(deadline)) == 0)
                        return broken(conn, sbx_seterr(errstr, errstr_size,
                                                       SBX_ERR_TIMEOUT,
                                                       "agent does not read"));
        }
        return SBX_OK;
}

/* Receives the next frame before @p deadline (0: none); caller clears. */
static sbx_err_t recv_frame(sbx_agent_conn_t *conn,
                            int64_t deadline,
                            sbx_agent_frame_t *ret_frame,
                            char *errstr,
                            size_t errstr_size)
{
        char why[256];

        for (;;) {
                struct pollfd p = {conn->fd, POLLIN, 0};
                ssize_t n;
                while (conn->roff < conn->rlen) {
                        sbx_agent_frame_t f;
                        size_t used;
                        if (sbx_agent_dec_feed(conn->dec,
                                               conn->rbuf + conn->roff,
                                               conn->rlen - conn->roff, &used,
                                               &f, why, sizeof(why)))
                                return broken(
                                    conn, sbx_seterr(errstr, errstr_size,
                                                     SBX_ERR_INVALID,
                                                     "from agent: %s", why));
                        conn->roff += used;
                        if (f.type != SBX_AGENT_F_NONE) {
                                *ret_frame = f;
                                return SBX_OK;
                        }
                }
                if (deadline && sbx_mono_us() >= deadline)
                        return broken(conn, sbx_seterr(errstr, errstr_size,
                                                       SBX_ERR_TIMEOUT,
                                                       "no answer from the "
                                                       "agent in time"));
                if (poll(&p, 1, ms_left(deadline)) <= 0)
                        continue; /* timeout or EINTR: checked above */
                n = recv(conn->fd, conn->rbuf, READ_CHUNK, 0);
                if (n > 0) {
                        conn->roff = 0;
                        conn->rlen = (size_t)n;
                } else if (n == 0) {
                        if (sbx_agent_dec_eof(conn->dec, why, sizeof(why)))
                                return broken(
                                    conn,
                                    sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                               "agent hung up: %s", why));
                        return broken(
                            conn, sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                             "agent closed the "
                                             "connection"));
                } else if (errno != EAGAIN && errno != EINTR) {
                        return broken(
                            conn,
                            sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                       "recv from agent: %s", strerror(errno)));
                }
        }
}

/* The sbx error for an ERROR frame @p f, with its message in errstr. */
static sbx_err_t agent_error(sbx_agent_conn_t *conn,
                             const sbx_agent_frame_t *f,
                             char *errstr,
                             size_t errstr_size)
{
        sbx_err_t err = SBX_ERR_RUNTIME;

        switch (f->code) {
        case SBX_AGENT_E_PROTO:
                err = broken(conn, SBX_ERR_INVALID); /* the agent hangs up */
                break;
        case SBX_AGENT_E_INVALID:
                err = SBX_ERR_INVALID;
                break;
        case SBX_AGENT_E_BUSY:
                err = SBX_ERR_CONFLICT;
                break;
        case SBX_AGENT_E_SPAWN:
                if (f->sys_errno == ENOENT || f->sys_errno == ENOTDIR)
                        err = SBX_ERR_NOENT;
                break;
        default:
                break;
        }
        return sbx_seterr(errstr, errstr_size, err, "agent: %s", f->message);
}

/* Fails if @p conn is broken; else SBX_OK. */
static sbx_err_t check_usable(const sbx_agent_conn_t *conn,
                              char *errstr,
                              size_t errstr_size)
{
        if (!conn->broken)
                return SBX_OK;
        return sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                          "connection to the agent is broken by an earlier "
                          "error; reconnect");
}

static uint64_t random_id(void)
{
        uint64_t id = 0;
        while (!id) {
                if (getrandom(&id, sizeof(id), 0) != (ssize_t)sizeof(id))
                        id = (uint64_t)sbx_mono_us() ^
                             ((uint64_t)getpid() << 40);
        }
        return id;
}

/* Handles one frame of a running exec; 1 when it is over. */
static int exec_frame(sbx_agent_conn_t *conn,
                      uint64_t id,
                      const sbx_agent_frame_t *f,
                      const sbx_agent_exec_cb_t *cb,
                      int *cancel,
                      sbx_agent_exit_t *ret_exit,
                      sbx_err_t *ret_err,
                      char *errstr,
                      size_t errstr_size)
{
        if (f->type == SBX_AGENT_F_ERROR && (f->exec_id == id || !f->exec_id)) {
                *ret_err = agent_error(conn, f, errstr, errstr_size);
                return 1;
        }
        if (f->exec_id != id ||
            (f->type != SBX_AGENT_F_STARTED && f->type != SBX_AGENT_F_STDOUT &&
             f->type != SBX_AGENT_F_STDERR && f->type != SBX_AGENT_F_EXIT)) {
                *ret_err = broken(
                    conn, sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                     "unexpected %s frame from "
                                     "the agent during an exec",
                                     sbx_agent_ftype_name(f->type)));
                return 1;
        }
        switch (f->type) {
        case SBX_AGENT_F_STARTED:
                if (cb && cb->on_started &&
                    cb->on_started(cb->opaque, id, f->pid))
                        *cancel = 1;
                break;
        case SBX_AGENT_F_STDOUT:
                if (cb && cb->on_stdout &&
                    cb->on_stdout(cb->opaque, f->data, f->data_len))
                        *cancel = 1;
                break;
        case SBX_AGENT_F_STDERR:
                if (cb && cb->on_stderr &&
                    cb->on_stderr(cb->opaque, f->data, f->data_len))
                        *cancel = 1;
                break;
        default:
                *ret_exit = f->exit;
                *ret_err  = SBX_OK;
                return 1;
        }
        return 0;
}

sbx_err_t sbx_agent_exec(sbx_agent_conn_t *conn,
                         const sbx_agent_exec_req_t *req,
                         const sbx_agent_exec_cb_t *cb,
                         sbx_agent_exit_t *ret_exit,
                         char *errstr,
                         size_t errstr_size)
{
        sbx_agent_frame_t f = {.type = SBX_AGENT_F_EXEC, .exec = *req};
        int64_t deadline    = 0;
        sbx_agent_exit_t ex = {0};
        sbx_err_t err;
        int cancel = 0, cancel_sent = 0;

        if ((err = check_usable(conn, errstr, errstr_size)))
                return err;
        if (!f.exec.exec_id)
                f.exec.exec_id = random_id();
        if (req->deadline_ms)
                deadline = deadline_in((int64_t)req->deadline_ms +
                                       SBX_AGENT_CLIENT_SLACK_MS);
        if ((err = send_frame(conn, &f, deadline_in(conn->timeout_ms), errstr,
                              errstr_size)))
                return err;
        for (;;) {
                sbx_agent_frame_t in;
                int done;
                if ((err = recv_frame(conn, deadline, &in, errstr,
                                      errstr_size))) {
                        /* Best effort: do not leave it running. */
                        sbx_agent_frame_t c = {.type    = SBX_AGENT_F_CANCEL,
                                               .exec_id = f.exec.exec_id};
                        if (err == SBX_ERR_TIMEOUT)
                                send_frame(conn, &c, deadline_in(100), NULL, 0);
                        return err;
                }
                done = exec_frame(conn, f.exec.exec_id, &in, cb, &cancel, &ex,
                                  &err, errstr, errstr_size);
                sbx_agent_frame_clear(&in);
                if (done)
                        break;
                if (cancel && !cancel_sent) {
                        sbx_agent_frame_t c = {.type    = SBX_AGENT_F_CANCEL,
                                               .exec_id = f.exec.exec_id};
                        cancel_sent         = 1;
                        if ((err = send_frame(conn, &c,
                                              deadline_in(conn->timeout_ms),
                                              errstr, errstr_size)))
                                return err;
                }
        }
        if (!err)
                *ret_exit = ex;
        return err;
}

sbx_err_t sbx_agent_cancel(sbx_agent_conn_t *conn,
                           uint64_t exec_id,
                           char *errstr,
                           size_t errstr_size)
{
        sbx_agent_frame_t f = {.type = SBX_AGENT_F_CANCEL, .exec_id = exec_id};
        sbx_err_t err;

        if ((err = check_usable(conn, errstr, errstr_size)))
                return err;
        return send_frame(conn, &f, deadline_in(conn->timeout_ms), errstr,
                          errstr_size);
}

/* Sends @p req and receives the answer, which must be of type @p want
 * (or ERROR, turned into an error); caller clears *ret_frame. */
static sbx_err_t request(sbx_agent_conn_t *conn,
                         const sbx_agent_frame_t *req,
                         sbx_agent_ftype_t want,
                         sbx_agent_frame_t *ret_frame,
                         char *errstr,
                         size_t errstr_size)
{
        int64_t deadline = deadline_in(conn->timeout_ms);
        sbx_agent_frame_t f;
        sbx_err_t err;

        if ((err = check_usable(conn, errstr, errstr_size)) ||
            (err = send_frame(conn, req, deadline, errstr, errstr_size)) ||
            (err = recv_frame(conn, deadline, &f, errstr, errstr_size)))
                return err;
        if (f.type == SBX_AGENT_F_ERROR && !f.exec_id)
                err = agent_error(conn, &f, errstr, errstr_size);
        else if (f.type != want)
                err = broken(conn,
                             sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                        "agent answered %s with %s",
                                        sbx_agent_ftype_name(req->type),
                                        sbx_agent_ftype_name(f.type)));
        if (err) {
                sbx_agent_frame_clear(&f);
                return err;
        }
        *ret_frame = f;
        return SBX_OK;
}

sbx_err_t sbx_agent_reset(sbx_agent_conn_t *conn,
                          int *ret_killed,
                          char *errstr,
                          size_t errstr_size)
{
        sbx_agent_frame_t req = {.type = SBX_AGENT_F_RESET, .level = 1}, f;
        sbx_err_t err;

        if ((err = request(conn, &req, SBX_AGENT_F_RESET_DONE, &f, errstr,
                           errstr_size)))
                return err;
        if (f.tmp_failed)
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_RUNTIME,
                                 "reset: %u entries of the tmp directory "
                                 "could not be removed",
                                 f.tmp_failed);
        else
                *ret_killed = (int)f.killed;
        sbx_agent_frame_clear(&f);
        return err;
}

sbx_err_t sbx_agent_ping(sbx_agent_conn_t *conn,
                         char *errstr,
                         size_t errstr_size)
{
        sbx_agent_frame_t req = {.type  = SBX_AGENT_F_PING,
                                 .nonce = random_id()};
        sbx_agent_frame_t f;
        sbx_err_t err;

        if ((err = request(conn, &req, SBX_AGENT_F_PONG, &f, errstr,
                           errstr_size)))
                return err;
        if (f.nonce != req.nonce)
                err = broken(conn,
                             sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                        "agent answered another ping"));
        sbx_agent_frame_clear(&f);
        return err;
}
