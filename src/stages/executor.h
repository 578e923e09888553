/* SPDX-License-Identifier: Apache-2.0 */
/*
 * executor: one per node. It acts on the claims placed on its node and on
 * its sandboxes: admits or refuses a placement (capacity), creates and
 * provisions the sandbox, grants the lease, binds the claim, runs execs,
 * sanitizes and terminates; and it publishes the node's status to
 * sbx.nodes.v1 every second. What "create" and "exec" do is a runtime's
 * job (sbx_runtime_ops_t); the hollow runtime does nothing and answers at
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

typedef struct sbx_exec_result_s {
        int exit_code, signal, timed_out;
        json_t *stdout_bytes, *stderr_bytes; /* codec bytes strings, owned */
        json_t *usage;                       /* sbx.Usage JSON, owned */
        char error[256];
} sbx_exec_result_t;

typedef struct sbx_runtime_ops_s {
        const char *name;
        /* capacity of the node */
        double cpu;
        int64_t memory_mb;
        int max_sandboxes;
        void *(*open)(const sbx_config_t *config, char *errstr,
                      size_t errstr_size);
        void (*close)(void *rt);
        /* create and start sandbox @p s; writes the instance name */
        int (*provision)(void *rt, const sbx_state_t *s, char *instance,
                         size_t instance_size, char *errstr,
                         size_t errstr_size);
        /* run ExecRequested payload @p req in sandbox @p s */
        int (*exec)(void *rt, const sbx_state_t *s, const json_t *req,
                    sbx_exec_result_t *res);
        /* level-1 reset after a lease */
        int (*sanitize)(void *rt, const sbx_state_t *s, int *ret_killed);
        /* level-3 destroy */
        int (*destroy)(void *rt, const sbx_state_t *s);
} sbx_runtime_ops_t;

extern const sbx_runtime_ops_t sbx_runtime_hollow;
extern const sbx_runtime_ops_t sbx_runtime_runc; /* runc/runsc + sbx-agent */

#endif
