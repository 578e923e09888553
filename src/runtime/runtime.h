/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sandbox runtime: everything the executor needs to make a sandbox
 * real, run it under runc or runsc, and take it apart again. One
 * sbx_runtime_t per node owns a state directory:
 *
 *   <state_root>/runc/           runc --root
 *   <state_root>/runsc/          runsc --root
 *   <state_root>/sandboxes/<id>/ the sandbox directory (runtime/rootfs.h):
 *                                bundle (config.json), disk image, overlays,
 *                                "runtime" (which of the two runs it),
 *                                runtime.log, template.json (what
 *                                sbx_template_describe says of its
 *                                template, for snapshots) and, for a warm
 *                                sandbox, its workspace slot
 *                                (runtime/workspace.h)
 *
 * and puts sandbox <id> in cgroup /sbx/<id> of every v1 controller. State
 * lives in those directories and in the runtimes, never only in memory,
 * so a restarted daemon sees the same sandboxes (sbx_runtime_list). Calls
 * on different ids may run concurrently from several threads; calls on
 * one id must not. Every call that runs a runtime binary has a deadline.
 */
#ifndef SBX_RUNTIME_RUNTIME_H
#define SBX_RUNTIME_RUNTIME_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/bundle.h"
#include "runtime/cgroup.h"
#include "runtime/runc.h"
#include "runtime/template.h"
#include "sbx/err.h"

#define SBX_RUNTIME_CGROUP_PARENT "/sbx"
/* Files in the sandbox dir: which runtime runs it (runc|runsc), and
 * what sbx_template_describe said of its template. */
#define SBX_RUNTIME_NAME_FILE     "runtime"
#define SBX_RUNTIME_TEMPLATE_FILE "template.json"

typedef struct sbx_runtime_s sbx_runtime_t;

/** The path of program @p name in the system's bin directories (never
 *  $PATH), in @p buf; NULL if none is executable. */
const char *sbx_find_bin(const char *name, char *buf, size_t size);

/**
 * Opens (creating its directories) the runtime state under @p state_root,
 * an absolute path of [A-Za-z0-9/_.+-] (e.g. <repo>/var/run/sbx). runc
 * must be installed; runsc is optional (sandboxes asking for it then fail
 * with SBX_ERR_UNSUPPORTED). Needs root and cgroup v1 memory, cpuacct and
 * pids controllers.
 */
sbx_runtime_t *sbx_runtime_new(const char *state_root,
                               char *errstr,
                               size_t errstr_size);
void sbx_runtime_destroy(sbx_runtime_t *rt);

/** 1 if @p name ("runc", "runsc") is installed and usable. */
int sbx_runtime_has(const sbx_runtime_t *rt, const char *name);

/** Deadlines of runtime calls (create, everything else); <= 0 keeps. */
void sbx_runtime_set_timeouts(sbx_runtime_t *rt,
                              int64_t create_ms,
                              int64_t op_ms);

/**
 * Creates and starts sandbox spec->id: checks the spec, makes its disk and
 * overlays, its workspace and socket directories if missing, writes the
 * bundle and runs it. On failure nothing is left behind (container,
 * cgroup, mounts, directory). SBX_ERR_CONFLICT if the id exists.
 * @p spec and everything it points to are borrowed.
 */
sbx_err_t sbx_runtime_create(sbx_runtime_t *rt,
                             const sbx_sandbox_spec_t *spec,
                             char *errstr,
                             size_t errstr_size);

/**
 * Makes host directory @p dir (absolute, [A-Za-z0-9/_.+-], no symlink in
 * it; made 0755 and owned by the sandbox's user if missing) appear at
 * /workspace in sandbox @p id, which must have been created with
 * spec.workspace_late (else SBX_ERR_INVALID), running or not. Not
 * recursive: what is mounted below @p dir on the host stays out; nosuid,
 * nodev. Idempotent for the same directory, also across a daemon
 * restart; SBX_ERR_CONFLICT if another one is attached. Works under runc
 * and runsc. A process whose cwd is /workspace when it is attached stays
 * in the empty slot until it changes directory. @p dir is borrowed.
 */
sbx_err_t sbx_runtime_attach_workspace(sbx_runtime_t *rt,
                                       const char *id,
                                       const char *dir,
                                       char *errstr,
                                       size_t errstr_size);

/**
 * As sbx_runtime_attach_workspace for the dependency cache: host
 * directory @p dir (made 0755 and owned by root if missing) appears
 * read-only at /deps in sandbox @p id.
 */
sbx_err_t sbx_runtime_attach_deps(sbx_runtime_t *rt,
                                  const char *id,
                                  const char *dir,
                                  char *errstr,
                                  size_t errstr_size);

/**
 * What sandbox @p id changed in its environment (runtime/manifest.h):
 * *ret (owned by the caller) lists the packages it installed and the
 * paths it changed.
 */
sbx_err_t sbx_runtime_manifest(sbx_runtime_t *rt,
                               const char *id,
                               json_t **ret,
                               char *errstr,
                               size_t errstr_size);

/**
 * Undoes sbx_runtime_attach_workspace: /workspace is the empty read-only
 * slot again. Lazy: a sandbox process holding a file or its cwd in the
 * workspace keeps it until it lets go. Nothing attached, or no such
 * sandbox, is success; SBX_ERR_INVALID for a sandbox without a slot.
 * sbx_runtime_delete detaches by itself.
 */
sbx_err_t sbx_runtime_detach_workspace(sbx_runtime_t *rt,
                                       const char *id,
                                       char *errstr,
                                       size_t errstr_size);

/**
 * What is attached to the slot of @p id: *ret_dir is the host directory
 * (owned by the caller) or NULL. Read from the host's mounts and the
 * sandbox directory, so a restarted daemon gets the same answer.
 */
sbx_err_t sbx_runtime_attached_workspace(sbx_runtime_t *rt,
                                         const char *id,
                                         char **ret_dir,
                                         char *errstr,
                                         size_t errstr_size);

/** Status and host pid of init; SBX_ERR_NOENT for an unknown id. */
sbx_err_t sbx_runtime_state(sbx_runtime_t *rt,
                            const char *id,
                            sbx_sandbox_status_t *ret_status,
                            int *ret_pid,
                            char *errstr,
                            size_t errstr_size);

/** Sends @p sig to the sandbox's init. */
sbx_err_t sbx_runtime_kill(sbx_runtime_t *rt,
                           const char *id,
                           int sig,
                           char *errstr,
                           size_t errstr_size);

/** Freezes / thaws every process of the sandbox (cgroup freezer). */
sbx_err_t sbx_runtime_pause(sbx_runtime_t *rt,
                            const char *id,
                            char *errstr,
                            size_t errstr_size);
sbx_err_t sbx_runtime_resume(sbx_runtime_t *rt,
                             const char *id,
                             char *errstr,
                             size_t errstr_size);

/**
 * Destroys the sandbox: kills and deletes the container, removes its
 * cgroup, unmounts its overlays and disk and deletes its directory (the
 * upper dir with it). The workspace and socket directories are kept.
 * Idempotent: an unknown id is success.
 */
sbx_err_t sbx_runtime_delete(sbx_runtime_t *rt,
                             const char *id,
                             char *errstr,
                             size_t errstr_size);

typedef void(sbx_runtime_list_cb_t)(const char *id,
                                    const char *runtime,
                                    sbx_sandbox_status_t status,
                                    int pid,
                                    void *opaque);

/**
 * Calls @p cb for every container runc and runsc know under this state
 * root, then for every sandbox directory no runtime knows (status
 * SBX_SANDBOX_ABSENT: a half-made or half-deleted sandbox for the
 * reconciler to delete). Strings passed to @p cb are borrowed for the
 * call.
 */
sbx_err_t sbx_runtime_list(sbx_runtime_t *rt,
                           sbx_runtime_list_cb_t *cb,
                           void *opaque,
                           char *errstr,
                           size_t errstr_size);

/** Usage of the sandbox's cgroup (peak memory, CPU time, OOM kills…). */
sbx_err_t sbx_runtime_usage(sbx_runtime_t *rt,
                            const char *id,
                            sbx_usage_t *ret,
                            char *errstr,
                            size_t errstr_size);

/** Restarts the peak-memory measurement, e.g. before an exec. */
sbx_err_t sbx_runtime_usage_reset(sbx_runtime_t *rt,
                                  const char *id,
                                  char *errstr,
                                  size_t errstr_size);

/**
 * Runs @p argv in the sandbox with `runc exec` / `runsc exec` (the
 * baseline and fallback; the hot path is sbx-agent). See sbx_runc_exec.
 * Note: a runtime failure (e.g. the sandbox is gone) also shows as a
 * nonzero exit code with the runtime's message on stderr.
 */
sbx_err_t sbx_runtime_exec(sbx_runtime_t *rt,
                           const char *id,
                           const char *const *argv,
                           const sbx_runc_exec_opts_t *opts,
                           sbx_runc_exec_result_t *ret,
                           char *errstr,
                           size_t errstr_size);

/** The runtime sandbox @p id was created under ("runc" or "runsc"), as
 *  its directory records it, into @p buf; SBX_ERR_NOENT if none. */
sbx_err_t sbx_runtime_name(const sbx_runtime_t *rt,
                           const char *id,
                           char *buf,
                           size_t size,
                           char *errstr,
                           size_t errstr_size);

/** The sandbox directory of @p id, written to @p buf; returns @p buf. */
char *sbx_runtime_sandbox_dir(const sbx_runtime_t *rt,
                              const char *id,
                              char *buf,
                              size_t size);

/** The cgroup v1 controllers (borrowed) and the path of @p id in them. */
const sbx_cgroup_t *sbx_runtime_cgroup(const sbx_runtime_t *rt);
char *sbx_runtime_cgroup_path(const char *id, char *buf, size_t size);

#endif
