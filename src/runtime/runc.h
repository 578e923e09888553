/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CLI driver of an OCI runtime: runc, or runsc (gVisor) on the ptrace
 * platform. Every call builds an argv array and runs the binary through
 * runtime/spawn.h with a deadline; no shell, and nothing a sandbox
 * controls is ever parsed as an option (ids are checked, exec argv comes
 * after the container id, where the runtimes stop parsing flags). Errors
 * carry the runtime's own message.
 */
#ifndef SBX_RUNTIME_RUNC_H
#define SBX_RUNTIME_RUNC_H

#include <stddef.h>
#include <stdint.h>

#include "sbx/err.h"

typedef enum sbx_runc_kind_e {
        SBX_RUNC_KIND_RUNC  = 0,
        SBX_RUNC_KIND_RUNSC = 1,
} sbx_runc_kind_t;

typedef enum sbx_sandbox_status_e {
        SBX_SANDBOX_ABSENT = 0, /**< the runtime does not know it */
        SBX_SANDBOX_CREATING,
        SBX_SANDBOX_CREATED,
        SBX_SANDBOX_RUNNING,
        SBX_SANDBOX_PAUSED,
        SBX_SANDBOX_STOPPED,
        SBX_SANDBOX_UNKNOWN, /**< a status this code does not know */
} sbx_sandbox_status_t;

/** "absent", "creating", "created", "running", "paused", "stopped",
 *  "unknown". */
const char *sbx_sandbox_status_str(sbx_sandbox_status_t s);
/** Inverse of sbx_sandbox_status_str for the runtimes' words. */
sbx_sandbox_status_t sbx_sandbox_status_parse(const char *s);

typedef struct sbx_runc_s sbx_runc_t;

/**
 * A driver for @p bin (absolute path) keeping its state in @p root (made
 * 0700 if missing). runsc is run with --platform=ptrace --network=none
 * --oci-seccomp (the sandbox's seccomp profile applies inside gVisor too).
 */
sbx_runc_t *sbx_runc_new(sbx_runc_kind_t kind,
                         const char *bin,
                         const char *root,
                         char *errstr,
                         size_t errstr_size);
void sbx_runc_destroy(sbx_runc_t *r);

/** "runc" or "runsc". */
const char *sbx_runc_name(const sbx_runc_t *r);

/** Deadlines: for create/run (@p create_ms) and every other call. */
void sbx_runc_set_timeouts(sbx_runc_t *r, int64_t create_ms, int64_t op_ms);

/** What sbx_runc_run may ask of runsc; runc ignores both. */
enum {
        /** let runsc create host unix sockets in bind mounts (the agent's
         *  socket directory): --host-uds=create */
        SBX_RUNC_RUN_HOST_UDS = 1 << 0,
        /** serve the root with --file-access=shared: the sentry revalidates
         *  it, so host mounts that reach the gofer inside the root (a
         *  workspace slot) become visible; slower file access */
        SBX_RUNC_RUN_SHARED_ROOT = 1 << 1,
};

/**
 * Creates and starts container @p id from @p bundle (run --detach). The
 * container's stdio is /dev/null; the runtime's errors are read back from
 * @p log_path (truncated first). @p flags: SBX_RUNC_RUN_*.
 */
sbx_err_t sbx_runc_run(const sbx_runc_t *r,
                       const char *id,
                       const char *bundle,
                       const char *log_path,
                       unsigned flags,
                       char *errstr,
                       size_t errstr_size);

/** Status and host pid of @p id (ret_pid 0 if none); SBX_ERR_NOENT if the
 *  runtime does not know it. */
sbx_err_t sbx_runc_state(const sbx_runc_t *r,
                         const char *id,
                         sbx_sandbox_status_t *ret_status,
                         int *ret_pid,
                         char *errstr,
                         size_t errstr_size);

/** Sends @p sig to init (@p all: to every process of the container). */
sbx_err_t sbx_runc_kill(const sbx_runc_t *r,
                        const char *id,
                        int sig,
                        int all,
                        char *errstr,
                        size_t errstr_size);

sbx_err_t sbx_runc_pause(const sbx_runc_t *r,
                         const char *id,
                         char *errstr,
                         size_t errstr_size);
sbx_err_t sbx_runc_resume(const sbx_runc_t *r,
                          const char *id,
                          char *errstr,
                          size_t errstr_size);

/** delete --force: kills what still runs; an unknown id is success. */
sbx_err_t sbx_runc_delete(const sbx_runc_t *r,
                          const char *id,
                          char *errstr,
                          size_t errstr_size);

typedef void(sbx_runc_list_cb_t)(const char *id,
                                 sbx_sandbox_status_t status,
                                 int pid,
                                 void *opaque);

/** Calls @p cb for every container the runtime knows (list --format json). */
sbx_err_t sbx_runc_list(const sbx_runc_t *r,
                        sbx_runc_list_cb_t *cb,
                        void *opaque,
                        char *errstr,
                        size_t errstr_size);

typedef struct sbx_runc_exec_opts_s {
        const char *const *env; /**< "K=V", NULL-terminated; added to the
                                     container's env; may be NULL */
        const char *cwd;        /**< NULL: the container's */
        int set_user;           /**< 1: run as uid:gid below */
        uint32_t uid, gid;
        int64_t timeout_ms; /**< 0: the driver's op deadline */
        size_t max_output;  /**< per stream; 0: 1 MiB */
} sbx_runc_exec_opts_t;

typedef struct sbx_runc_exec_result_s {
        int exit_code;   /**< the process's status (128+N: signal N) */
        char *out, *err; /**< captured stdout/stderr (owned, NUL-terminated) */
        size_t out_len, err_len;
        int truncated;
} sbx_runc_exec_result_t;

/**
 * Runs @p argv in container @p id (runc/runsc exec, no tty) and waits for
 * it. On timeout the process is SIGKILLed in the sandbox too (runc:
 * --pid-file; runsc: --internal-pid-file and kill --pid). Under runsc the
 * exec'd process is not under the seccomp filter (gVisor applies it to
 * init and init's descendants only); under runc it is filtered like init. @p
 * ret is filled whenever the process ran (SBX_OK, whatever its exit status) and
 * on SBX_ERR_TIMEOUT (the process was killed); release it with
 * sbx_runc_exec_result_clear().
 */
sbx_err_t sbx_runc_exec(const sbx_runc_t *r,
                        const char *id,
                        const char *const *argv,
                        const sbx_runc_exec_opts_t *opts,
                        sbx_runc_exec_result_t *ret,
                        char *errstr,
                        size_t errstr_size);

void sbx_runc_exec_result_clear(sbx_runc_exec_result_t *r);

#endif
