/* SPDX-License-Identifier: Apache-2.0 */
/*
 * executor: one per node. It acts on the claims placed on its node and on
 * its sandboxes: admits or refuses a placement (capacity), leases a warm
 * pool sandbox or creates one, grants the lease, binds the claim, runs
 * execs, freezes hibernating sandboxes, sanitizes and terminates; it keeps
 * the node's warm pools filled, reconciles what the runtime really runs
 * with the log, and publishes the node's status to sbx.nodes.v1 every
 * second. What "create" and "exec" do is a runtime's job
 * (sbx_runtime_ops_t); the hollow runtime does nothing and answers at
 * once — it is how the control plane is tested and benchmarked without
 * containers, and it says so in every event it writes.
 */
#ifndef SBX_EXECUTOR_H
#define SBX_EXECUTOR_H

#include <jansson.h>

#include "core/fold.h"
#include "stages/stage.h"

extern const sbx_stage_t sbx_stage_hollow;   /* the hollow runtime */
extern const sbx_stage_t sbx_stage_executor; /* real sandboxes */

typedef struct sbx_output_s sbx_output_t; /* stages/exec_output.h */

typedef struct sbx_exec_result_s {
        int exit_code, signal, timed_out;
        json_t *stdout_bytes, *stderr_bytes; /* codec bytes strings, owned */
        json_t *usage;                       /* sbx.Usage JSON, owned */
        int output_chunks;
        int sandbox_died; /* the sandbox is gone: it must be failed */
        json_t *manifest; /* what it changed (runtime/manifest.h), owned;
                             NULL: not known */
        char error[256];
} sbx_exec_result_t;

/* What a node commits to sandboxes. */
typedef struct sbx_capacity_s {
        double cpu;
        int64_t memory_mb;
        int max_sandboxes;
        char template_digest[96]; /* of the host template; "": none */
        char python[16];          /* its python3's version; "": none */
} sbx_capacity_t;

/* A sandbox as the runtime sees it (reconcile). */
typedef enum sbx_seen_e {
        SBX_SEEN_RUNNING,
        SBX_SEEN_PAUSED,
        SBX_SEEN_STOPPED, /* exists, init is gone */
        SBX_SEEN_ABSENT,  /* a directory no runtime knows: half made */
} sbx_seen_t;

typedef void(sbx_seen_cb_t)(const char *id, sbx_seen_t seen, void *opaque);

typedef struct sbx_runtime_ops_s {
        const char *name;
        int threads; /* worker threads for its work; 0: it is instant */
        void *(*open)(const sbx_config_t *config,
                      sbx_capacity_t *ret_cap,
                      char *errstr,
                      size_t errstr_size);
        void (*close)(void *rt);
        /* create and start sandbox @p s; writes the instance name */
        int (*provision)(void *rt,
                         const sbx_state_t *s,
                         char *instance,
                         size_t instance_size,
                         char *errstr,
                         size_t errstr_size);
        /* make the lease holder's session workspace appear at /workspace
         * (a pool sandbox gets its tenant and session at its first lease) */
        int (*attach)(void *rt,
                      const sbx_state_t *s,
                      char *errstr,
                      size_t errstr_size);
        /* run ExecRequested payload @p req in sandbox @p s; output goes to
         * @p out as it comes */
        int (*exec)(void *rt,
                    const sbx_state_t *s,
                    const json_t *req,
                    sbx_output_t *out,
                    sbx_exec_result_t *res);
        /* what sandbox @p s changed in its environment (runtime/
         * manifest.h); NULL op: the runtime cannot tell */
        int (*manifest)(void *rt,
                        const sbx_state_t *s,
                        json_t **ret,
                        char *errstr,
                        size_t errstr_size);
        /* captures the writable layers of sandbox @p s as a snapshot
         * (pausing it meanwhile): *ret is SnapshotTaken's payload; NULL
         * op: this runtime takes no snapshots */
        int (*snapshot)(void *rt,
                        const sbx_state_t *s,
                        json_t **ret,
                        char *errstr,
                        size_t errstr_size);
        /* deletes every snapshot but @p keep (and their ancestors), and
         * the layers no kept snapshot uses; NULL op: no store */
        int (*collect)(void *rt,
                       const char *const *keep,
                       size_t n,
                       char *errstr,
                       size_t errstr_size);
        /* level-1 reset after a lease */
        int (*sanitize)(void *rt,
                        const sbx_state_t *s,
                        int *ret_killed,
                        char *errstr,
                        size_t errstr_size);
        /* level-3 destroy */
        int (*destroy)(void *rt, const sbx_state_t *s);
        /* cgroup freezer */
        int (*freeze)(void *rt,
                      const sbx_state_t *s,
                      char *errstr,
                      size_t errstr_size);
        int (*thaw)(void *rt,
                    const sbx_state_t *s,
                    char *errstr,
                    size_t errstr_size);
        /* every sandbox the runtime has (NULL: nothing to reconcile) */
        int (*list)(void *rt,
                    sbx_seen_cb_t *cb,
                    void *opaque,
                    char *errstr,
                    size_t errstr_size);
} sbx_runtime_ops_t;

extern const sbx_runtime_ops_t sbx_runtime_hollow;
extern const sbx_runtime_ops_t sbx_runtime_runc; /* runc/runsc + sbx-agent */

/** The node's capacity from @p config, or from this machine where the
 * config says 0: CPUs × 8 (quotas are ceilings, idle sandboxes use
 * nothing), memory less 1 GiB for the host, 256 sandboxes. */
void sbx_capacity_of_machine(const sbx_config_t *config, sbx_capacity_t *ret);

#endif
