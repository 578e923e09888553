/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The hollow runtime: an executor that binds claims without starting
 * containers, for testing and benchmarking the control plane. Every
 * ExecFinished it writes says that nothing was run. Its capacity is
 * unbounded: a hollow node has nothing to run out of.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "stages/exec_output.h"
#include "stages/executor.h"

static void *hollow_open(const sbx_config_t *c,
                         sbx_capacity_t *cap,
                         char *e,
                         size_t es)
{
        (void)c;
        (void)e;
        (void)es;
        cap->cpu           = 100000;
        cap->memory_mb     = 1000000000;
        cap->max_sandboxes = 1000000;
        return sbx_strdup("hollow");
}

static void hollow_close(void *rt)
{
        free(rt);
}

static int hollow_provision(void *rt,
                            const sbx_state_t *s,
                            char *inst,
                            size_t is,
                            char *e,
                            size_t es)
{
        (void)rt;
        (void)e;
        (void)es;
        sbx_fmt(inst, is, "hollow:%s", s->id);
        return 0;
}

static int hollow_exec(void *rt,
                       const sbx_state_t *s,
                       const json_t *req,
                       sbx_output_t *out,
                       sbx_exec_result_t *r)
{
        (void)rt;
        (void)s;
        (void)req;
        (void)out;
        r->exit_code = 0;
        sbx_fmt(r->error, sizeof(r->error), "hollow node: nothing was run");
        return 0;
}

static int hollow_sanitize(void *rt,
                           const sbx_state_t *s,
                           int *killed,
                           char *e,
                           size_t es)
{
        (void)rt;
        (void)s;
        (void)e;
        (void)es;
        *killed = 0;
        return 0;
}

static int hollow_destroy(void *rt, const sbx_state_t *s)
{
        (void)rt;
        (void)s;
        return 0;
}

const sbx_runtime_ops_t sbx_runtime_hollow = {
    .name      = "hollow",
    .threads   = 0,
    .open      = hollow_open,
    .close     = hollow_close,
    .provision = hollow_provision,
    .exec      = hollow_exec,
    .sanitize  = hollow_sanitize,
    .destroy   = hollow_destroy,
};
