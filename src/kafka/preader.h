/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A reader of every partition of a few topics, each from an offset the
 * caller chooses (explicit assignment: no group, nothing committed to
 * Kafka). For readers that keep their position elsewhere, like the
 * projector, whose offsets live in PostgreSQL with its rows.
 */
#ifndef SBX_PREADER_H
#define SBX_PREADER_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"

#define SBX_PREADER_MAX_TOPICS 4
#define SBX_PREADER_BEGINNING  (-2) /**< an assign offset: the first kept */

typedef struct sbx_preader_s sbx_preader_t;

/** One message; its pointers are valid until sbx_preader_release(). */
typedef struct sbx_pmsg_s {
        int topic; /**< index into the topics given to sbx_preader_new() */
        int32_t partition;
        int64_t offset;
        const void *key; /**< NULL if none */
        size_t key_size;
        const void *value; /**< NULL for a tombstone */
        size_t value_size;
        void *handle; /* the library's message */
} sbx_pmsg_t;

/**
 * A reader of the @p ntopics topics named in @p topics (borrowed; they
 * must outlive the reader); learns their partition counts. Nothing is
 * read before sbx_preader_assign().
 */
sbx_preader_t *sbx_preader_new(const sbx_config_t *config,
                               const char *const *topics,
                               int ntopics,
                               char *errstr,
                               size_t errstr_size);
void sbx_preader_destroy(sbx_preader_t *r);

int sbx_preader_partitions(const sbx_preader_t *r, int topic);
const char *sbx_preader_topic(const sbx_preader_t *r, int topic);

/** The first kept and the next offset to be written of a partition. */
sbx_err_t sbx_preader_watermarks(sbx_preader_t *r,
                                 int topic,
                                 int32_t partition,
                                 int64_t *ret_low,
                                 int64_t *ret_high,
                                 char *errstr,
                                 size_t errstr_size);

/**
 * (Re)starts reading: partition p of topic t from @p from[t][p] (an
 * offset or SBX_PREADER_BEGINNING). Drops whatever was fetched before.
 */
sbx_err_t sbx_preader_assign(sbx_preader_t *r,
                             int64_t *const *from,
                             char *errstr,
                             size_t errstr_size);

/**
 * The next message into *ret_msg (release it with sbx_preader_release()),
 * SBX_ERR_TIMEOUT after @p timeout_ms, or SBX_ERR_KAFKA with errstr for a
 * consumer error (the reader goes on).
 */
sbx_err_t sbx_preader_next(sbx_preader_t *r,
                           int timeout_ms,
                           sbx_pmsg_t *ret_msg,
                           char *errstr,
                           size_t errstr_size);
void sbx_preader_release(sbx_pmsg_t *m);

#endif
