/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The executor's client of sbx-agent: one connection to one sandbox's
 * agent socket, used by one thread at a time, with blocking calls bounded
 * in time. Exec ids are global in an agent, so an exec running on one
 * connection can be cancelled from another. A call that fails halfway
 * through an exchange (I/O error, timeout, malformed frame) leaves the
 * connection out of step with the agent; it is then marked broken and
 * every later call fails until the caller reconnects. An ERROR frame from
 * the agent is an answer, not a break: the connection stays usable.
 */
#ifndef SBX_AGENT_CLIENT_H
#define SBX_AGENT_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "agent/proto.h"

/* Added to an exec's deadline to bound the wait for its EXIT: the agent
 * still has to kill, reap and send the rest of the output. */
#define SBX_AGENT_CLIENT_SLACK_MS 10000

typedef struct sbx_agent_conn_s sbx_agent_conn_t;

/*
 * What sbx_agent_exec() reports as it happens. Any pointer may be NULL.
 * A callback returning non-zero cancels the exec (once); the call still
 * waits for and returns its EXIT, with cancelled set. Data is borrowed
 * for the duration of the call.
 */
typedef struct sbx_agent_exec_cb_s {
        int (*on_started)(void *opaque, uint64_t exec_id, int pid);
        int (*on_stdout)(void *opaque, const uint8_t *data, size_t len);
        int (*on_stderr)(void *opaque, const uint8_t *data, size_t len);
        void *opaque;
} sbx_agent_exec_cb_t;

/**
 * Connects to the agent listening at @p socket_path (borrowed), which
 * must be the socket itself: a symbolic link there is refused, not
 * followed (its directory is writable from the sandbox). Retries
 * while the socket does not exist yet or refuses (the sandbox is still
 * starting) for up to @p timeout_ms, which also bounds every later call
 * that has no deadline of its own (ping, cancel, reset). NULL on failure,
 * with the reason in @p errstr.
 */
sbx_agent_conn_t *sbx_agent_connect(const char *socket_path,
                                    int timeout_ms,
                                    char *errstr,
                                    size_t errstr_size);

/** Closes @p conn and frees it; NULL is fine. */
void sbx_agent_close(sbx_agent_conn_t *conn);

/**
 * Runs @p req (borrowed; exec_id 0 picks a random id, reported to
 * on_started) and blocks until it is over, calling @p cb (borrowed, may be
 * NULL) as STARTED and output arrive. Waits at most the request's deadline
 * plus SBX_AGENT_CLIENT_SLACK_MS (no bound when the deadline is 0).
 * SBX_OK with *ret_exit filled however the program ended (exit code,
 * signal, timed out, cancelled). Failures to start it: SBX_ERR_NOENT (no
 * such program or cwd), SBX_ERR_RUNTIME (other spawn errors),
 * SBX_ERR_INVALID (rejected request), SBX_ERR_CONFLICT (agent busy);
 * SBX_ERR_TIMEOUT and SBX_ERR_IO break the connection.
 */
sbx_err_t sbx_agent_exec(sbx_agent_conn_t *conn,
                         const sbx_agent_exec_req_t *req,
                         const sbx_agent_exec_cb_t *cb,
                         sbx_agent_exit_t *ret_exit,
                         char *errstr,
                         size_t errstr_size);

/**
 * Asks the agent to kill the process group of exec @p exec_id, which may
 * run on another connection. There is no answer: the exec's own call
 * returns its EXIT with cancelled set (unless it ended first).
 */
sbx_err_t sbx_agent_cancel(sbx_agent_conn_t *conn,
                           uint64_t exec_id,
                           char *errstr,
                           size_t errstr_size);

/**
 * Level 1 reset: the agent kills every other process of the sandbox (its
 * descendants with --no-pid1), empties its tmp directory and waits until
 * the killed are reaped. *ret_killed is how many it killed. An entry of
 * the tmp directory that could not be removed makes it SBX_ERR_RUNTIME: a
 * sandbox that cannot be cleaned must go to a harder reset.
 */
sbx_err_t sbx_agent_reset(sbx_agent_conn_t *conn,
                          int *ret_killed,
                          char *errstr,
                          size_t errstr_size);

/** Round trip to the agent: SBX_OK if it answered in time. */
sbx_err_t sbx_agent_ping(sbx_agent_conn_t *conn,
                         char *errstr,
                         size_t errstr_size);

#endif
