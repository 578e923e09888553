/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The projector's stored position (projector_offsets) and the reset that
 * a rebuild starts with.
 */
#ifndef SBX_PROJECTOR_OFFSETS_H
#define SBX_PROJECTOR_OFFSETS_H

#include <stddef.h>
#include <stdint.h>

#include "pg/pgconn.h"

/**
 * Gives every one of the @p npart partitions of @p topic a row (next
 * offset 0: from the beginning) unless it has one, and reads them into
 * @p ret_next[0..npart-1].
 */
sbx_err_t sbx_poffsets_load(sbx_pg_t *pg,
                            const char *topic,
                            int npart,
                            int64_t *ret_next,
                            char *errstr,
                            size_t errstr_size);

/**
 * Empties every projection table, sandbox_event, the undecodable list and
 * the stored offsets, in one transaction.
 */
sbx_err_t sbx_poffsets_reset(sbx_pg_t *pg, char *errstr, size_t errstr_size);

#endif
