/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Runs a helper program (runc, runsc, mkfs.ext4, sha256sum) from an argv
 * array — never through a shell — with a deadline, a fixed environment,
 * stdin from /dev/null, no inherited descriptors beyond 0-2, and stdout and
 * stderr either captured (bounded) or sent to /dev/null. The invariant: a
 * call returns by its deadline (plus the grace given after on_timeout),
 * and the child is reaped before it returns.
 */
#ifndef SBX_RUNTIME_SPAWN_H
#define SBX_RUNTIME_SPAWN_H

#include <stddef.h>
#include <stdint.h>

#include "sbx/err.h"

typedef struct sbx_spawn_opts_s {
        int64_t timeout_ms; /**< > 0: SIGKILL and SBX_ERR_TIMEOUT after it */
        size_t max_output;  /**< bytes kept of stdout and of stderr each */
        int discard_output; /**< 1: stdout/stderr go to /dev/null */
        /** At the deadline, called first (e.g. to kill what the child
         *  started); the child then gets SPAWN_GRACE_MS to exit by itself
         *  before it is SIGKILLed. May be NULL. */
        void (*on_timeout)(void *opaque);
        void *opaque;
} sbx_spawn_opts_t;

typedef struct sbx_spawn_result_s {
        int exit_code;   /**< exit status, or 128 + signal if signaled */
        int signaled;    /**< 1 if the child died from a signal */
        char *out, *err; /**< NUL-terminated captures (owned); never NULL */
        size_t out_len, err_len;
        int truncated; /**< 1 if output beyond max_output was dropped */
} sbx_spawn_result_t;

/**
 * Runs argv[0] (an absolute path) with @p argv (NULL-terminated, borrowed).
 * Returns SBX_OK when the child ran to completion (whatever its exit
 * status), SBX_ERR_TIMEOUT when the deadline passed (the child exited in
 * the grace period or was killed), SBX_ERR_IO when it could not be
 * started. @p ret is filled in all three cases and must be
 * released with sbx_spawn_result_clear().
 */
sbx_err_t sbx_spawn_run(const char *const *argv,
                        const sbx_spawn_opts_t *opts,
                        sbx_spawn_result_t *ret,
                        char *errstr,
                        size_t errstr_size);

/** Frees the captures of @p r; accepts a zeroed result. */
void sbx_spawn_result_clear(sbx_spawn_result_t *r);

#endif
