/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The schemas compiled into sbx: the bundled current versions of Event,
 * Request and NodeStatus, and older self-contained versions from
 * schemas/history/ (current = 0) kept so that their messages still decode.
 * The table is generated at build time by schemas/bundle.py.
 */
#ifndef SBX_SCHEMAS_H
#define SBX_SCHEMAS_H

#include <stddef.h>

typedef struct sbx_schema_src_s {
        const char *name; /**< top-level record: Event, Request, NodeStatus */
        int current;
        const char *json;
} sbx_schema_src_t;

extern const sbx_schema_src_t sbx_schema_srcs[];
extern const size_t sbx_schema_srcs_cnt;

#endif
