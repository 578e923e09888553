/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The projector's rows: which tables it writes, the columns of each, and
 * what fills them from an event, an aggregate's state and extras, or a
 * node status. Rows are COPY text in one buffer per table; each staged
 * row starts with its order in the batch ("ord"), so that of several rows
 * of one key the last one wins (batch.c merges them).
 */
#ifndef SBX_PROJECTOR_ROWS_H
#define SBX_PROJECTOR_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/fold.h"
#include "pg/copybuf.h"
#include "projector/extras.h"

typedef enum sbx_ptable_e {
        SBX_PT_EVENT,       /**< sandbox_event, every event */
        SBX_PT_UNDECODABLE, /**< projector_undecodable */
        SBX_PT_CLAIM,       /**< claim */
        SBX_PT_SANDBOX,     /**< sandbox_instance */
        SBX_PT_LEASE,       /**< sandbox_lease */
        SBX_PT_ENV,         /**< sandbox_environment */
        SBX_PT_PLAN,        /**< sandbox_allocation: the decision */
        SBX_PT_USAGE,       /**< sandbox_allocation: usage, added up */
        SBX_PT_NODE,        /**< node */
        SBX_PT__CNT
} sbx_ptable_t;

typedef enum sbx_pmerge_e {
        SBX_PMERGE_APPEND,  /**< COPY straight into the table */
        SBX_PMERGE_REPLACE, /**< staged; the last row of each key replaces */
        SBX_PMERGE_ADD,     /**< staged; summed into sandbox_allocation */
} sbx_pmerge_t;

typedef struct sbx_ptable_def_s {
        const char *table; /**< the projection table */
        const char *stage; /**< its staging table; NULL for APPEND */
        sbx_pmerge_t merge;
        const char *key;  /**< REPLACE: the conflict key columns */
        const char *cols; /**< the columns a row carries (after ord) */
        int tombstones;   /**< staged rows carry "gone" after ord: the last
                               row of a key deletes it */
} sbx_ptable_def_t;

extern const sbx_ptable_def_t sbx_ptables[SBX_PT__CNT];

/** A batch's rows: one COPY buffer per table. */
typedef struct sbx_prows_s {
        sbx_copybuf_t buf[SBX_PT__CNT];
        int64_t ord; /* staged rows so far */
} sbx_prows_t;

void sbx_prows_reset(sbx_prows_t *r);
void sbx_prows_free(sbx_prows_t *r);

/**
 * The sandbox_event row of @p ev (borrowed), found at @p offset of
 * lifecycle partition @p partition: its verdict, and the phases of the
 * aggregate (of kind @p kind) before and after it.
 */
void sbx_prows_event(sbx_prows_t *r,
                     const sbx_event_t *ev,
                     sbx_verdict_t v,
                     sbx_aggregate_t kind,
                     int old_phase,
                     int new_phase,
                     int32_t partition,
                     int64_t offset);

/**
 * The rows an accepted event changed: the claim's or the sandbox's row,
 * and those that @p x->changed names. @p s and @p x are borrowed.
 */
void sbx_prows_aggregate(sbx_prows_t *r,
                         const sbx_state_t *s,
                         const sbx_pext_t *x);

/** A message of @p topic that did not decode, and why. */
void sbx_prows_undecodable(sbx_prows_t *r,
                           const char *topic,
                           int32_t partition,
                           int64_t offset,
                           size_t size,
                           const char *reason);

/**
 * A node's row from @p status (borrowed codec JSON of a NodeStatus), or
 * with @p status NULL, the tombstone that deletes node @p node_id.
 */
void sbx_prows_node(sbx_prows_t *r,
                    const json_t *status,
                    const char *node_id,
                    int32_t partition,
                    int64_t offset);

#endif
