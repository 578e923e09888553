/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A reader of whole topics: every partition of sbx.lifecycle.v1 (and, for
 * a client that follows an exec, sbx.exec-output.v1) from the beginning,
 * or from the end to follow only what comes. Lifecycle messages are
 * decoded into events. For clients, the CLI and tests: no group, nothing
 * committed.
 */
#ifndef SBX_LOGREADER_H
#define SBX_LOGREADER_H

#include "codec/codec.h"
#include "core/config.h"
#include "core/event.h"

typedef struct sbx_logreader_s sbx_logreader_t;

sbx_logreader_t *sbx_logreader_new(const sbx_config_t *config,
                                   const sbx_codec_t *codec,
                                   int from_end,
                                   char *errstr,
                                   size_t errstr_size);
/**
 * A reader of every partition of each of @p topics (NULL-terminated, at
 * most 4; the strings must outlive the reader), for
 * sbx_logreader_next_msg(). @p from_end: start at each partition's high
 * watermark as it is when this returns, so nothing appended later is
 * missed.
 */
sbx_logreader_t *sbx_logreader_new_topics(const sbx_config_t *config,
                                          const char *const *topics,
                                          int from_end,
                                          char *errstr,
                                          size_t errstr_size);
/**
 * The next event (caller destroys), or NULL after @p timeout_ms. A message
 * that does not decode is skipped and counted.
 */
sbx_event_t *sbx_logreader_next(sbx_logreader_t *r, int timeout_ms);
/**
 * The next message of any topic, undecoded: its topic (one of the
 * reader's strings) and a copy of its value (caller frees). SBX_ERR_TIMEOUT
 * after @p timeout_ms without one.
 */
sbx_err_t sbx_logreader_next_msg(sbx_logreader_t *r,
                                 int timeout_ms,
                                 const char **ret_topic,
                                 void **ret_value,
                                 size_t *ret_len);
/** Have all partitions been read up to the high watermark seen at start
 * (or at the last sbx_logreader_mark_end())? */
int sbx_logreader_caught_up(sbx_logreader_t *r);
/**
 * Moves what sbx_logreader_caught_up() waits for to each partition's high
 * watermark now: once caught up, everything appended before this call has
 * been read.
 */
sbx_err_t sbx_logreader_mark_end(sbx_logreader_t *r,
                                 char *errstr,
                                 size_t errstr_size);
/** The partition and offset of the event last returned. */
void sbx_logreader_position(const sbx_logreader_t *r,
                            int32_t *ret_partition,
                            int64_t *ret_offset);
long sbx_logreader_undecodable(const sbx_logreader_t *r);
void sbx_logreader_destroy(sbx_logreader_t *r);

#endif
