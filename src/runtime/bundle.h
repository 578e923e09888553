/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sandbox spec (what the executor asks for) and the OCI runtime config
 * (config.json, OCI 1.0.2 as runc 1.1.5 and runsc read it) made from it.
 * Building the config is pure: it touches no file, so every isolation
 * property the config promises is unit-tested on the JSON itself.
 *
 * What every sandbox gets, whatever the spec says: new pid, mount, ipc,
 * uts, network and cgroup namespaces (network "none": a namespace with
 * only lo); no capabilities unless the spec names some; noNewPrivileges;
 * the seccomp profile of runtime/seccomp.h; RLIMIT_NOFILE and RLIMIT_CORE
 * 0; a writable overlay root (its writes land in the sandbox's upper dir);
 * read-only sysfs and cgroupfs; a size-bounded tmpfs on /tmp and
 * /dev/shm; runc's default device set on a fresh /dev and no host device;
 * Docker's masked and read-only /proc paths; memory limit with swap equal
 * to it (no swap), CPU quota, pids limit, in cgroup <parent>/<id>.
 * What a sandbox writes to /tmp and /dev/shm (tmpfs) is charged to its
 * memory limit as well as bounded by their size.
 * Mount propagation: none ("rprivate"), except for a sandbox with a
 * workspace slot, whose mount namespace is "rslave" with every bind
 * mount "rprivate": then only the slot, which the runtime mounts inside
 * the root before start (not a bundle mount), receives host mounts.
 */
#ifndef SBX_RUNTIME_BUNDLE_H
#define SBX_RUNTIME_BUNDLE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "runtime/template.h"
#include "sbx/err.h"

#define SBX_SANDBOX_ID_MAX   64
#define SBX_AGENT_PATH       "/.sbx/sbx-agent" /* where the agent appears */
#define SBX_AGENT_SOCKET_DIR "/run/sbx"        /* its socket directory */
#define SBX_WORKSPACE_PATH   "/workspace"
#define SBX_DEPS_PATH        "/deps"

typedef struct sbx_sandbox_spec_s {
        const char *id;      /**< [A-Za-z0-9][A-Za-z0-9_.-]*, <= 64 bytes */
        const char *runtime; /**< "runc" (NULL means runc) or "runsc" */
        const sbx_template_t *tmpl; /**< borrowed; required */
        int64_t cpu_quota_us;       /**< per period; 0: no CPU limit */
        int64_t cpu_period_us;      /**< 0: 100000 */
        int64_t memory_mb;          /**< required, >= 8 */
        int64_t pids_max;           /**< required, >= 1 */
        int64_t disk_mb;            /**< size of the upper-dir image; 0: 1024 */
        int64_t tmp_mb;             /**< size of /tmp (tmpfs); 0: 64 */
        int64_t shm_mb;             /**< size of /dev/shm (tmpfs); 0: 64 */
        const char *network;        /**< "none" (NULL means none); nothing else
                                         is supported yet */
        const char *workspace_dir;  /**< host dir bound rw at /workspace;
                                         made (owned by uid/gid) if missing;
                                         NULL: none */
        int workspace_late;         /**< 1 (workspace_dir and deps_dir
                                         NULL): /workspace and /deps are
                                         empty read-only slots that
                                         sbx_runtime_attach_workspace and
                                         _deps fill later
                                         (runtime/workspace.h) */
        const char *deps_dir;       /**< host dir bound ro at /deps (the
                                         tenant's dependency cache); made
                                         (owned by root) if missing; NULL:
                                         none */
        const char *agent_path;     /**< host file bound ro at
                                         SBX_AGENT_PATH; NULL: none */
        const char *socket_dir;     /**< host dir bound rw at
                                         SBX_AGENT_SOCKET_DIR; NULL: none */
        const char *const *argv;    /**< init (PID 1) argv, NULL-terminated;
                                         required */
        const char *const *env;     /**< "K=V", NULL-terminated; NULL: a
                                         default PATH and HOME */
        const char *cwd;            /**< absolute; NULL: "/" */
        uint32_t uid, gid;          /**< of the init process */
        const char *const *caps;    /**< "CAP_…" names, NULL-terminated, given
                                         to init in all sets; NULL: none */
        int64_t nofile;             /**< RLIMIT_NOFILE; 0: 1024 */
} sbx_sandbox_spec_t;

/** Checks @p spec (ids, paths, limits, runtime, network); on error says
 *  which field is wrong. */
sbx_err_t sbx_sandbox_spec_check(const sbx_sandbox_spec_t *spec,
                                 char *errstr,
                                 size_t errstr_size);

/** 1 if @p id is a valid sandbox id. */
int sbx_sandbox_id_ok(const char *id);

/** A host path that the bundle bind-mounts (the template's sub-layers). */
typedef struct sbx_bundle_bind_s {
        const char *source;      /**< host path */
        const char *destination; /**< path in the sandbox */
        int readonly;
} sbx_bundle_bind_t;

typedef struct sbx_bundle_s {
        const sbx_sandbox_spec_t *spec;
        const char *root_path;          /**< the merged overlay (root.path) */
        const sbx_bundle_bind_t *binds; /**< mounted before /workspace */
        size_t n_binds;
        const char *cgroup_parent; /**< e.g. "/sbx": cgroupsPath is
                                        <parent>/<id> */
} sbx_bundle_t;

/**
 * The config.json object for @p b (new reference), or NULL with errstr
 * filled if the spec is invalid. All pointers are borrowed.
 */
json_t *sbx_bundle_config(const sbx_bundle_t *b,
                          char *errstr,
                          size_t errstr_size);

/** Writes @p config to @p dir/config.json (mode 0600, atomically). */
sbx_err_t sbx_bundle_write(const char *dir,
                           const json_t *config,
                           char *errstr,
                           size_t errstr_size);

#endif
