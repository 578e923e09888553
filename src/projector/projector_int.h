/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The projector's insides, shared by its files: projector.c (the object
 * and its run loop), consume.c (what a message does) and batch.c (the
 * batch and its commit). Topic 0 is the lifecycle, topic 1 the nodes.
 */
#ifndef SBX_PROJECTOR_INT_H
#define SBX_PROJECTOR_INT_H

#include <stdatomic.h>

#include "core/aggstore.h"
#include "kafka/preader.h"
#include "pg/pgconn.h"
#include "projector/flush.h"
#include "projector/projector.h"
#include "projector/rows.h"

#define PJ_LIFECYCLE 0
#define PJ_NODES     1
#define PJ_TOPICS    2

/* Per partition of a topic. */
typedef struct pj_part_s {
        int64_t stored; /* next_offset in PostgreSQL, as last committed */
        int64_t next;   /* after the last message in a batch (or stored) */
        int64_t seen;   /* after the last message read at all */
        int64_t low;    /* the low watermark at start */
        int64_t target; /* caught up once here: the start's high watermark */
        int64_t stop;   /* stop point; -1: none */
} pj_part_t;

struct sbx_projector_s {
        const sbx_config_t *config;
        const sbx_codec_t *codec;
        sbx_projector_opts_t opts;
        const char *topics[PJ_TOPICS];

        sbx_preader_t *reader;
        sbx_pg_t *pg;
        sbx_pflush_t *flush;
        sbx_aggstore_t *store;

        pj_part_t *part[PJ_TOPICS];
        int npart[PJ_TOPICS];
        int has_stops, started;

        /* the open batch */
        sbx_prows_t rows;
        int64_t batch_msgs, batch_since; /* messages; mono µs of the first */
        int64_t retry_at; /* a failed commit is retried then (mono µs) */

        int64_t t_start, t_first_write, t_last_report, reported;

        struct {
                _Atomic int64_t written, replayed, nodes, undecodable, batches,
                    pg_us, write_us, conflicts, pg_errors;
                _Atomic int caught_up;
        } st;
};

/** Logs one formatted line through opts.log. */
void pj_log(sbx_projector_t *pj, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** Handles one message (borrowed) of either topic. */
void pj_consume(sbx_projector_t *pj, const sbx_pmsg_t *m);

/** Commits the open batch: SBX_OK (or nothing to commit), or its error. */
sbx_err_t pj_commit(sbx_projector_t *pj, char *errstr, size_t errstr_size);

/** Drops the folded states and their extras. */
void pj_store_clear(sbx_projector_t *pj);

#endif
