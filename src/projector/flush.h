/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Writing a batch to PostgreSQL, exactly once. One transaction holds it
 * all: first the compare-and-swap of the offsets the batch moves (each
 * must still be where this projector last wrote it, or nothing is
 * written and the caller gets SBX_ERR_CONFLICT), then one COPY per table
 * (straight into sandbox_event, into temporary staging tables for the
 * others), then one set-based merge per staged table, then COMMIT.
 */
#ifndef SBX_PROJECTOR_FLUSH_H
#define SBX_PROJECTOR_FLUSH_H

#include <stddef.h>
#include <stdint.h>

#include "pg/pgconn.h"
#include "projector/rows.h"

/** One partition's stored offset, moved from @p from to @p to. */
typedef struct sbx_pmove_s {
        const char *topic;
        int32_t partition;
        int64_t from, to;
} sbx_pmove_t;

typedef struct sbx_pflush_s sbx_pflush_t;

/** The statements of every batch, made once. */
sbx_pflush_t *sbx_pflush_new(void);
void sbx_pflush_destroy(sbx_pflush_t *f);

/** Creates the session's staging tables on @p pg (once per connection). */
sbx_err_t sbx_pflush_prepare(const sbx_pflush_t *f,
                             sbx_pg_t *pg,
                             char *errstr,
                             size_t errstr_size);

/**
 * Commits @p rows and the @p nmoves offset moves (all borrowed) in one
 * transaction. SBX_ERR_CONFLICT: an offset was not at its "from" (another
 * projector or a rebuild moved it), nothing written. Any other error:
 * nothing written either, unless the connection broke during COMMIT; the
 * offsets' compare-and-swap makes a retry safe in both cases.
 */
sbx_err_t sbx_pflush_commit(const sbx_pflush_t *f,
                            sbx_pg_t *pg,
                            const sbx_prows_t *rows,
                            const sbx_pmove_t *moves,
                            size_t nmoves,
                            char *errstr,
                            size_t errstr_size);

#endif
