/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Warm pools of a node (DESIGN.md §6): per pool spec (runtime tier +
 * resource class + template) the executor keeps between buffer_min and
 * buffer_max sandboxes READY, with the pool's sandboxes (ready, starting
 * and leased out) between pool_min and pool_max. The specs are the node's
 * "pools" file:
 *
 *   pool.<name>.class = python-small     required; a class of the policy
 *   pool.<name>.runtime = runc           runc (default) or runsc
 *   pool.<name>.template = host          default: host
 *   pool.<name>.buffer_min = N           ready sandboxes to keep (default 1)
 *   pool.<name>.buffer_max = N           at most this many ready
 *                                        (default buffer_min)
 *   pool.<name>.pool_min = N             default 0
 *   pool.<name>.pool_max = N             default 16
 *
 * Any error refuses the whole file with file:line and the reason.
 */
#ifndef SBX_POOLS_H
#define SBX_POOLS_H

#include <stddef.h>
#include <stdint.h>

#include "core/policy.h"
#include "sbx/err.h"

typedef struct sbx_pool_spec_s {
        char name[64];
        char key[192]; /* runtime/class/template, as sbx_pool_key() */
        char runtime[16], klass[64], tmpl[64];
        double cpu;
        int64_t memory_mb, disk_gb, pids;
        int pool_min, pool_max, buffer_min, buffer_max;
        int line;
} sbx_pool_spec_t;

typedef struct sbx_pools_s {
        sbx_pool_spec_t *v;
        size_t n;
} sbx_pools_t;

/** Parses pool specs; classes are looked up in @p policy (borrowed). */
sbx_pools_t *sbx_pools_parse(const char *name,
                             const char *text,
                             const sbx_policy_t *policy,
                             char *errstr,
                             size_t errstr_size);
sbx_pools_t *sbx_pools_load(const char *path,
                            const sbx_policy_t *policy,
                            char *errstr,
                            size_t errstr_size);
void sbx_pools_destroy(sbx_pools_t *pools);

typedef struct sbx_pool_count_s {
        int ready;        /* READY, not leased */
        int provisioning; /* being made */
        int total;        /* every live sandbox of the pool, leased too */
} sbx_pool_count_t;

/**
 * What the pool needs now: n > 0 sandboxes to make, n < 0 ready ones to
 * retire, 0 nothing. @p room is how many more sandboxes the node admits.
 */
int sbx_pool_delta(const sbx_pool_spec_t *spec,
                   const sbx_pool_count_t *c,
                   int room);

#endif
