/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An exec's output as it happens: stdout and stderr go to
 * sbx.exec-output.v1 keyed by the sandbox id, one chunk (at most
 * SBX_OUTPUT_CHUNK bytes) per read the agent reports. The agent's reads
 * already coalesce fast output (a pipe's worth at a time), so a slow
 * trickle is live and a flood comes in large chunks. The first
 * SBX_OUTPUT_INLINE bytes of each stream are also kept for
 * ExecFinished. Closing publishes the rest with eof and waits until every
 * chunk is acknowledged, so a client that sees ExecFinished can read all
 * of them. Used from the executor's worker threads: the publisher is
 * shared and thread-safe, a stream belongs to one thread.
 */
#ifndef SBX_EXEC_OUTPUT_H
#define SBX_EXEC_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "codec/codec.h"
#include "core/config.h"

#define SBX_OUTPUT_CHUNK  (64 * 1024)
#define SBX_OUTPUT_INLINE (64 * 1024)

typedef struct sbx_outpub_s sbx_outpub_t;
typedef struct sbx_output_s sbx_output_t;

/** A publisher with its own producer; NULL with errstr on failure. */
sbx_outpub_t *sbx_outpub_new(const sbx_config_t *config,
                             const sbx_codec_t *codec,
                             char *errstr,
                             size_t errstr_size);
void sbx_outpub_destroy(sbx_outpub_t *pub);

/** The output of exec @p exec_id of sandbox @p sandbox (both copied).
 * @p pub may be NULL: then only the inline part is kept. */
sbx_output_t *sbx_output_new(sbx_outpub_t *pub,
                             const char *sandbox,
                             const char *exec_id,
                             int64_t lease_version);
/** @p stream 0 stdout, 1 stderr. Never fails: a chunk the broker refuses
 * is counted and reported by close. */
void sbx_output_write(sbx_output_t *o,
                      int stream,
                      const uint8_t *data,
                      size_t len);

typedef struct sbx_output_result_s {
        json_t *inline_bytes[2]; /* codec bytes strings (owned) */
        int64_t total[2];        /* bytes per stream */
        int chunks;              /* chunks published, both streams */
        int truncated;           /* a stream was longer than the inline cap */
        char error[256];         /* "" or why chunks are missing */
} sbx_output_result_t;

/** Publishes what is left, waits for delivery, frees @p o. */
void sbx_output_close(sbx_output_t *o, sbx_output_result_t *ret);

#endif
