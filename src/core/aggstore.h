/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The folded states of many aggregates, by id: what a stage holds in
 * memory. Each entry remembers the partition its events came from and the
 * seq of this process's own pending append, if any.
 */
#ifndef SBX_AGGSTORE_H
#define SBX_AGGSTORE_H

#include <stddef.h>
#include <stdint.h>

#include "core/fold.h"

typedef struct sbx_aggentry_s {
        sbx_state_t *state;
        int32_t partition;
        int64_t pending_seq; /* 0: none; else our append awaits this seq */
        int64_t pending_at;  /* monotonic µs when it was appended */
        void *ext; /* what a reader keeps beside the state (the projector's
                      row extras); the store never touches it */
} sbx_aggentry_t;

typedef struct sbx_aggstore_s sbx_aggstore_t;

sbx_aggstore_t *sbx_aggstore_new(void);
void sbx_aggstore_destroy(sbx_aggstore_t *s);

/** The entry of @p id, or NULL. */
sbx_aggentry_t *sbx_aggstore_get(sbx_aggstore_t *s, const char *id);
/** The entry of @p id, created empty (seq 0) if missing. */
sbx_aggentry_t *sbx_aggstore_upsert(sbx_aggstore_t *s, sbx_aggregate_t kind,
                                    const char *id, int32_t partition);
size_t sbx_aggstore_count(const sbx_aggstore_t *s);

/** Calls @p cb for every entry, in no particular order. */
void sbx_aggstore_foreach(sbx_aggstore_t *s,
                          void (*cb)(sbx_aggentry_t *e, void *opaque),
                          void *opaque);

/**
 * Folds @p ev into its aggregate's entry (created if needed) and returns
 * the verdict; a seq at or past the entry's pending_seq clears it.
 */
sbx_verdict_t sbx_aggstore_fold(sbx_aggstore_t *s, const sbx_event_t *ev,
                                int32_t partition, sbx_aggentry_t **ret_entry);

#endif
