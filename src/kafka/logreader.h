/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A reader of the whole log: every partition of sbx.lifecycle.v1 from the
 * beginning (or from the end, to follow only what comes), decoded into
 * events. For clients, the CLI and tests: no group, nothing committed.
 */
#ifndef SBX_LOGREADER_H
#define SBX_LOGREADER_H

#include "codec/codec.h"
#include "core/config.h"
#include "core/event.h"

typedef struct sbx_logreader_s sbx_logreader_t;

sbx_logreader_t *sbx_logreader_new(const sbx_config_t *config,
                                   const sbx_codec_t *codec, int from_end,
                                   char *errstr, size_t errstr_size);
/**
 * The next event (caller destroys), or NULL after @p timeout_ms. A message
 * that does not decode is skipped and counted.
 */
sbx_event_t *sbx_logreader_next(sbx_logreader_t *r, int timeout_ms);
/** Have all partitions been read up to the high watermark seen at start? */
int sbx_logreader_caught_up(sbx_logreader_t *r);
/** The partition and offset of the event last returned. */
void sbx_logreader_position(const sbx_logreader_t *r, int32_t *ret_partition,
                            int64_t *ret_offset);
long sbx_logreader_undecodable(const sbx_logreader_t *r);
void sbx_logreader_destroy(sbx_logreader_t *r);

#endif
