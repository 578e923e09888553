/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The projector (DESIGN.md §8): reads every partition of sbx.lifecycle.v1
 * and sbx.nodes.v1, folds each lifecycle event with the one fold, and
 * writes PostgreSQL rows: sandbox_event for every event, accepted or not,
 * and the claim, sandbox_instance, sandbox_lease, sandbox_environment,
 * sandbox_allocation and node projections for accepted ones.
 *
 * Exactly once: the rows of a batch and the offsets it consumed are
 * committed in one transaction, the offsets with compare-and-swap. On
 * start it reads the stored offsets; since the fold needs an aggregate's
 * earlier events, it replays each lifecycle partition from the beginning,
 * folding in memory, and writes only from the stored offset on. Node
 * statuses need no fold: they are read from the stored offsets.
 */
#ifndef SBX_PROJECTOR_H
#define SBX_PROJECTOR_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/codec.h"
#include "core/config.h"

typedef struct sbx_projector_s sbx_projector_t;

typedef struct sbx_projector_stats_s {
        int64_t written;     /**< lifecycle events written to sandbox_event */
        int64_t replayed;    /**< lifecycle events folded, stored before */
        int64_t nodes;       /**< node statuses written */
        int64_t undecodable; /**< messages that did not decode */
        int64_t batches;     /**< transactions committed */
        int64_t pg_us;       /**< time spent committing them */
        int64_t write_us;    /**< first written message to last commit */
        int64_t conflicts;   /**< batches refused: offsets moved under us */
        int64_t pg_errors;   /**< batches that failed and were retried */
        int caught_up;       /**< everything up to the high watermarks seen
                                  at start (or the stop points) is written */
} sbx_projector_stats_t;

typedef struct sbx_projector_opts_s {
        const char *lifecycle_topic; /**< NULL: sbx.lifecycle.v1 */
        const char *nodes_topic;     /**< NULL: sbx.nodes.v1 */
        int batch_max;               /**< messages a transaction; 0: 1000 */
        int batch_ms;                /**< longest wait to commit; 0: 100 */
        /** A line of news: caught up, throughput, retries. May be NULL. */
        void (*log)(void *opaque, const char *line);
        /** After every committed batch. May be NULL. */
        void (*progress)(void *opaque, const sbx_projector_stats_t *st);
        void *opaque;
} sbx_projector_opts_t;

/**
 * A projector writing to config->pg. @p config, @p codec and @p opts
 * (may be NULL; copied) are borrowed and must outlive it. Connects to
 * PostgreSQL and Kafka; NULL with errstr if either fails or a topic name
 * is not a legal one.
 */
sbx_projector_t *sbx_projector_new(const sbx_config_t *config,
                                   const sbx_codec_t *codec,
                                   const sbx_projector_opts_t *opts,
                                   char *errstr,
                                   size_t errstr_size);
void sbx_projector_destroy(sbx_projector_t *pj);

/**
 * Empties the projections, sandbox_event and the stored offsets (in one
 * transaction): the next run projects the whole log again.
 */
sbx_err_t sbx_projector_reset(sbx_projector_t *pj,
                              char *errstr,
                              size_t errstr_size);

/**
 * Makes run() project partition @p partition of @p topic only below
 * @p offset, and return once every partition given a stop point is done.
 */
void sbx_projector_stop_at(sbx_projector_t *pj,
                           const char *topic,
                           int32_t partition,
                           int64_t offset);

/**
 * Stop points at every partition's high watermark now. *ret_total (may be
 * NULL) is the number of messages from the low watermarks to there.
 */
sbx_err_t sbx_projector_stop_at_end(sbx_projector_t *pj,
                                    int64_t *ret_total,
                                    char *errstr,
                                    size_t errstr_size);

/**
 * Projects until *stop becomes non-zero (then 0) or every stop point is
 * reached (then 1). Failures (PostgreSQL down, a batch refused) are
 * logged and retried: a batch is never lost or written twice.
 */
int sbx_projector_run(sbx_projector_t *pj, volatile sig_atomic_t *stop);

/** A snapshot of the counters; safe from any thread. */
void sbx_projector_get_stats(sbx_projector_t *pj, sbx_projector_stats_t *ret);

/** Events written per second of write_us (0 before any). */
double sbx_projector_rate(const sbx_projector_stats_t *st);

#endif
