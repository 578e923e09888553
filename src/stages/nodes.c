/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Node registry. A node's newer status replaces the older one and resets
 * the optimistic commitments the scheduler added since; a status older
 * than the one held (a replayed, compacted message) is ignored.
 */
#include "stages/nodes.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

sbx_nodes_t *sbx_nodes_new(void)
{
        return sbx_calloc(1, sizeof(sbx_nodes_t));
}

void sbx_nodes_destroy(sbx_nodes_t *n)
{
        size_t i;
        if (!n)
                return;
        for (i = 0; i < n->n; i++) {
                free(n->v[i].id);
                json_decref(n->v[i].status);
        }
        free(n->v);
        free(n);
}

sbx_node_t *sbx_nodes_get(sbx_nodes_t *n, const char *id)
{
        size_t i;
        for (i = 0; i < n->n; i++)
                if (!strcmp(n->v[i].id, id))
                        return &n->v[i];
        return NULL;
}

int sbx_nodes_update(sbx_nodes_t *n, const sbx_codec_t *codec,
                     const void *value, size_t size)
{
        json_t *st = NULL;
        const char *id;
        sbx_node_t *node;
        int64_t at;

        if (!value || sbx_codec_decode(codec, SBX_SCHEMA_NODE_STATUS, value,
                                       size, &st, NULL, 0))
                return -1;
        id = json_string_value(json_object_get(st, "node_id"));
        at = json_integer_value(json_object_get(st, "at"));
        node = sbx_nodes_get(n, id);
        if (!node) {
                n->v = sbx_realloc(n->v, (n->n + 1) * sizeof(*n->v));
                node = &n->v[n->n++];
                memset(node, 0, sizeof(*node));
                node->id = sbx_strdup(id);
        } else if (at < node->at) {
                json_decref(st);
                return 0;
        }
        json_decref(node->status);
        node->status = st;
        node->at = at;
        node->extra_cpu = 0;
        node->extra_mem = 0;
        node->extra_n = 0;
        return 0;
}

int sbx_node_alive(const sbx_node_t *node, int64_t now_us, int64_t grace_us)
{
        return node && now_us - node->at <= grace_us &&
               json_is_true(json_object_get(node->status, "healthy"));
}
