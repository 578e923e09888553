/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sbx client library: ask the control plane for a sandbox, run
 * commands in it and give it back, over Kafka, as any client does. A
 * call publishes one Request to sbx.requests.v1 (keyed by its claim or
 * sandbox id, partitioned like the Java client) and then reads what
 * happened from sbx.lifecycle.v1 (and an exec's output from
 * sbx.exec-output.v1), starting from the end of each partition as it was
 * just before publishing: a call sees every event its request caused, and
 * ends with the outcome, a rejection's reasons, a failure's reason, or a
 * timeout.
 *
 *     char err[512];
 *     sbx_client_t *c = sbx_client_new("acme", NULL, err, sizeof(err));
 *     sbx_acquire_t *a = sbx_acquire_new("total the sales in sales.csv");
 *     sbx_lease_t *lease;
 *     const char *argv[] = {"python3", "-c", "print(1+1)", NULL};
 *     sbx_run_t *run = sbx_run_new(argv);
 *     sbx_result_t *res;
 *     size_t n;
 *
 *     if (sbx_client_acquire(c, a, 0, &lease, err, sizeof(err)) ||
 *         sbx_client_exec(c, lease, run, &res, err, sizeof(err)))
 *             fprintf(stderr, "%s\n", err);
 *     else
 *             fwrite(sbx_result_stdout(res, &n), 1, n, stdout);
 *     sbx_client_release(c, lease, 0, err, sizeof(err));
 *
 * Every object is owned by its caller and freed with its _destroy()
 * function, which accepts NULL. A client is used by one thread at a time.
 * Errors are sbx_err_t (sbx/err.h) with the detail in errstr:
 * SBX_ERR_REJECTED (intake refused the request: its reasons),
 * SBX_ERR_FAILED (the claim was refused or failed, the sandbox failed or
 * was lost: the reason), SBX_ERR_TIMEOUT, SBX_ERR_KAFKA, SBX_ERR_INVALID
 * (a bad argument: nothing was sent).
 */
#ifndef SBX_CLIENT_H
#define SBX_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "sbx/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sbx_client_s sbx_client_t;
typedef struct sbx_acquire_s sbx_acquire_t;
typedef struct sbx_lease_s sbx_lease_t;
typedef struct sbx_run_s sbx_run_t;
typedef struct sbx_result_s sbx_result_t;

/* ---- the client ---------------------------------------------------------- */

/**
 * A client of tenant @p tenant (NULL: $SBX_TENANT). @p config_path names
 * an sbx config file (NULL: $SBX_CONFIG if set, else the defaults; SBX_*
 * environment variables such as SBX_BROKERS override either). Connects to
 * the broker; NULL with errstr on failure.
 */
sbx_client_t *sbx_client_new(const char *tenant,
                             const char *config_path,
                             char *errstr,
                             size_t errstr_size);
void sbx_client_destroy(sbx_client_t *c);

/**
 * Sets an option of every later request: "session" (the agent session,
 * default none), "user" (user id), "client" (client name and version).
 * @p value is copied; NULL unsets. SBX_ERR_INVALID for an unknown name.
 */
sbx_err_t sbx_client_set(sbx_client_t *c,
                         const char *name,
                         const char *value,
                         char *errstr,
                         size_t errstr_size);

/**
 * Called for every lifecycle event of the claim or sandbox a call waits
 * on, as it is read: the aggregate's id, the event type
 * ("ClaimRequested", ...), the claim's phase after it ("REQUESTED", ...;
 * NULL for sandbox events), the stage that wrote it, a detail (a reason,
 * a node; may be NULL) and the time since the request was published.
 * Every string is borrowed for the call.
 */
typedef void (*sbx_progress_cb_t)(void *opaque,
                                  const char *aggregate_id,
                                  const char *event_type,
                                  const char *phase,
                                  const char *producer,
                                  const char *detail,
                                  int64_t elapsed_us);
/** Installs @p cb (NULL: none); @p opaque is passed to it. */
void sbx_client_set_progress(sbx_client_t *c,
                             sbx_progress_cb_t cb,
                             void *opaque);

/* ---- acquiring a sandbox ------------------------------------------------- */

/**
 * A request for a sandbox for a task described by @p task_text (copied;
 * NULL: to be given by sbx_acquire_set() or sbx_acquire_set_json()), with
 * a new claim id.
 */
sbx_acquire_t *sbx_acquire_new(const char *task_text);
void sbx_acquire_destroy(sbx_acquire_t *a);

/**
 * Sets a field of the request; @p value is copied. Claim fields:
 * "claim_id", "class" (a requested resource class: a hint),
 * "lease_seconds" (5..3600, default 300), "ttl_seconds" (default 1800),
 * "network_profile", "secret_scope", "workspace_id", "project_id". Task
 * fields (what the planner sizes the sandbox by): "text", "risk"
 * (low|medium|high), "network", "repo_size_mb", "data_size_mb",
 * "workspace_size_mb", "expected_duration_s", "needs_browser",
 * "needs_gpu", "needs_compile" (true|false); and, each call adding one
 * item: "plan" (a plan step), "tool_call", "language", "package"
 * (NAME[CONSTRAINT], e.g. "pandas>=2", or ECOSYSTEM:NAME[CONSTRAINT] with
 * ecosystem pip, npm or apt). SBX_ERR_INVALID with errstr for an unknown
 * name or a bad value.
 */
sbx_err_t sbx_acquire_set(sbx_acquire_t *a,
                          const char *name,
                          const char *value,
                          char *errstr,
                          size_t errstr_size);

/**
 * Merges a JSON object (copied) into the request: either a Task ({"text":
 * ..., "plan": [...], ...}) or an AcquireSandbox ({"task": {...},
 * "requested_class": ..., ...}) as `sbx schema request` describes them.
 * Fields are checked against the schema when the request is sent.
 */
sbx_err_t sbx_acquire_set_json(sbx_acquire_t *a,
                               const char *json,
                               char *errstr,
                               size_t errstr_size);

/** The request's claim id (borrowed from @p a). */
const char *sbx_acquire_claim_id(const sbx_acquire_t *a);

/**
 * Publishes @p a and waits until its claim is bound to a leased sandbox,
 * reporting progress. @p timeout_ms 0: 120 s. On success *ret_lease is a
 * new lease (caller destroys). Sending the same request again (same claim
 * id) is a no-op for the control plane.
 */
sbx_err_t sbx_client_acquire(sbx_client_t *c,
                             const sbx_acquire_t *a,
                             int timeout_ms,
                             sbx_lease_t **ret_lease,
                             char *errstr,
                             size_t errstr_size);

/** Publishes @p a and returns at once; follow it by its claim id. */
sbx_err_t sbx_client_acquire_async(sbx_client_t *c,
                                   const sbx_acquire_t *a,
                                   char *errstr,
                                   size_t errstr_size);

/* ---- leases -------------------------------------------------------------- */

/**
 * A lease known from elsewhere (another process, the command line):
 * sandbox @p sandbox_id (copied) at lease version @p version; @p claim_id
 * may be NULL.
 */
sbx_lease_t *sbx_lease_new(const char *sandbox_id,
                           int64_t version,
                           const char *claim_id);
void sbx_lease_destroy(sbx_lease_t *l);
const char *sbx_lease_sandbox_id(const sbx_lease_t *l);
/** The claim that holds the lease; NULL if unknown. */
const char *sbx_lease_claim_id(const sbx_lease_t *l);
/** The fencing token every command under the lease carries. */
int64_t sbx_lease_version(const sbx_lease_t *l);
/** The node the sandbox runs on; NULL if unknown. */
const char *sbx_lease_node_id(const sbx_lease_t *l);
/** When the lease ends unless renewed, µs since the epoch; 0 if unknown. */
int64_t sbx_lease_expires_at(const sbx_lease_t *l);

/**
 * Extends lease @p l by @p extend_seconds (5..3600) from now and waits
 * for LeaseRenewed; updates the lease's expiry. @p timeout_ms 0: 30 s.
 */
sbx_err_t sbx_client_renew(sbx_client_t *c,
                           sbx_lease_t *l,
                           int extend_seconds,
                           int timeout_ms,
                           char *errstr,
                           size_t errstr_size);

/**
 * Gives the sandbox back and waits for LeaseReleased; the sandbox is then
 * sanitized and may serve the session again. @p timeout_ms 0: 30 s.
 */
sbx_err_t sbx_client_release(sbx_client_t *c,
                             const sbx_lease_t *l,
                             int timeout_ms,
                             char *errstr,
                             size_t errstr_size);

/* ---- commands on a sandbox ----------------------------------------------- */

/**
 * Freezes idle sandbox @p sandbox_id, whose last lease was @p
 * lease_version, and waits for Hibernated. A leased sandbox is refused
 * (release it first). @p timeout_ms 0: 30 s.
 */
sbx_err_t sbx_client_pause(sbx_client_t *c,
                           const char *sandbox_id,
                           int64_t lease_version,
                           int timeout_ms,
                           char *errstr,
                           size_t errstr_size);
/** Thaws a paused sandbox and waits for Resumed; as sbx_client_pause(). */
sbx_err_t sbx_client_resume(sbx_client_t *c,
                            const char *sandbox_id,
                            int64_t lease_version,
                            int timeout_ms,
                            char *errstr,
                            size_t errstr_size);
/**
 * Asks for a snapshot of the sandbox's filesystem under @p lease_version
 * (the holder's lease, or an idle sandbox's last one) and waits until it
 * is taken: @p ret_id gets the snapshot's id. A snapshot the executor
 * could not take is SBX_ERR_IO with its reason.
 */
sbx_err_t sbx_client_snapshot(sbx_client_t *c,
                              const char *sandbox_id,
                              int64_t lease_version,
                              char *ret_id,
                              size_t ret_id_size,
                              int timeout_ms,
                              char *errstr,
                              size_t errstr_size);
/**
 * Destroys sandbox @p sandbox_id (level 3: its container, upper layer and
 * lease go) for @p reason (NULL: "requested") and waits until it is
 * Terminated. @p timeout_ms 0: 60 s.
 */
sbx_err_t sbx_client_destroy_sandbox(sbx_client_t *c,
                                     const char *sandbox_id,
                                     const char *reason,
                                     int timeout_ms,
                                     char *errstr,
                                     size_t errstr_size);

/* ---- running commands ---------------------------------------------------- */

#define SBX_STDOUT 1
#define SBX_STDERR 2

/** A command to run: @p argv is NULL-terminated and copied. */
sbx_run_t *sbx_run_new(const char *const *argv);
void sbx_run_destroy(sbx_run_t *r);
/** Sets environment variable @p name to @p value (both copied). */
void sbx_run_set_env(sbx_run_t *r, const char *name, const char *value);
/** The working directory (copied); default: the sandbox's /workspace. */
void sbx_run_set_cwd(sbx_run_t *r, const char *cwd);
/** Bytes for the command's stdin (copied). */
void sbx_run_set_stdin(sbx_run_t *r, const void *data, size_t len);
/** The command's deadline (1..3600000 ms, default 60000). */
void sbx_run_set_timeout_ms(sbx_run_t *r, int64_t timeout_ms);

/** Receives output as it is produced: @p stream is SBX_STDOUT or
 * SBX_STDERR, @p data is borrowed for the call. */
typedef void (*sbx_output_cb_t)(void *opaque,
                                int stream,
                                const void *data,
                                size_t len);
/**
 * Streams the output to @p cb instead of keeping it in the result. Each
 * stream comes in order and complete, however long.
 */
void sbx_run_set_output(sbx_run_t *r, sbx_output_cb_t cb, void *opaque);

/**
 * Runs @p r in the sandbox of lease @p l and waits until it has ended
 * and all its output has come (the command's deadline plus 30 s). Returns
 * SBX_OK once it ended, whatever its exit status; *ret_result then says
 * how (caller destroys).
 */
sbx_err_t sbx_client_exec(sbx_client_t *c,
                          const sbx_lease_t *l,
                          const sbx_run_t *r,
                          sbx_result_t **ret_result,
                          char *errstr,
                          size_t errstr_size);

void sbx_result_destroy(sbx_result_t *r);
const char *sbx_result_exec_id(const sbx_result_t *r);
int sbx_result_exit_code(const sbx_result_t *r);
/** The signal that killed the command, or 0. */
int sbx_result_signal(const sbx_result_t *r);
/** Did the command's deadline stop it? */
int sbx_result_timed_out(const sbx_result_t *r);
/** What the executor reports went wrong (e.g. "hollow node: nothing was
 * run"), or NULL. */
const char *sbx_result_error(const sbx_result_t *r);
/** The whole output of a stream (borrowed; empty when streamed to an
 * output callback); NUL-terminated, its length in *ret_len. */
const char *sbx_result_stdout(const sbx_result_t *r, size_t *ret_len);
const char *sbx_result_stderr(const sbx_result_t *r, size_t *ret_len);
/** The ExecFinished payload as JSON text, with usage (borrowed). */
const char *sbx_result_json(const sbx_result_t *r);

#ifdef __cplusplus
}
#endif
#endif
