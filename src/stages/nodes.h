/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node registry, folded from sbx.nodes.v1: each executor's latest
 * status (capacity, commitments, warm pools, templates, health). Shared by
 * the scheduler (where to place) and the keeper (which nodes went silent).
 */
#ifndef SBX_NODES_H
#define SBX_NODES_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "codec/codec.h"

typedef struct sbx_node_s {
        char *id;
        json_t *status; /* codec JSON of sbx.NodeStatus */
        int64_t at;     /* status.at, µs */
        /* placements made since this status, not yet in its commitments */
        double extra_cpu;
        int64_t extra_mem;
        int extra_n;
} sbx_node_t;

typedef struct sbx_nodes_s {
        sbx_node_t *v;
        size_t n;
} sbx_nodes_t;

sbx_nodes_t *sbx_nodes_new(void);
void sbx_nodes_destroy(sbx_nodes_t *n);
/** Folds one message of sbx.nodes.v1; returns -1 if it did not decode. */
int sbx_nodes_update(sbx_nodes_t *n, const sbx_codec_t *codec,
                     const void *value, size_t size);
sbx_node_t *sbx_nodes_get(sbx_nodes_t *n, const char *id);
/** Is the node's last status younger than @p grace_us at @p now_us? */
int sbx_node_alive(const sbx_node_t *node, int64_t now_us, int64_t grace_us);

#endif
