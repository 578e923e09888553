/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sbx codec: Avro single-object encoding (C3 01, the writer schema's
 * CRC-64-AVRO fingerprint little-endian, the binary body) of the four
 * message kinds, with avro-c behind it.
 *
 * Values cross this interface as jansson JSON in Avro's JSON conventions:
 * records are objects, enums strings, bytes strings of code points
 * U+0000..U+00FF, a ["null", T] union is null or the T value itself, and
 * any other union is {"<type name>": value} (full name for named types).
 *
 * Decoding finds the writer schema by fingerprint, checks every length and
 * count in the body against the bytes that are really there (so no input
 * makes sbx allocate more than it received or loop without end), reads it
 * with avro-c, then resolves it to the current reader schema by field
 * name, taking defaults for fields the writer did not have. avro-c's own
 * resolver cannot add a reader field with a default; this one can.
 */
#ifndef SBX_CODEC_H
#define SBX_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "sbx/err.h"

typedef enum sbx_schema_kind_e {
        SBX_SCHEMA_EVENT,       /**< sbx.lifecycle.v1 */
        SBX_SCHEMA_REQUEST,     /**< sbx.requests.v1 */
        SBX_SCHEMA_NODE_STATUS, /**< sbx.nodes.v1 */
        SBX_SCHEMA_EXEC_OUTPUT, /**< sbx.exec-output.v1 */
        SBX_SCHEMA__CNT
} sbx_schema_kind_t;

/* Bounds on what the codec reads or writes. */
#define SBX_CODEC_MAX_MESSAGE (8 * 1024 * 1024)
#define SBX_CODEC_MAX_STRING  (4 * 1024 * 1024)
#define SBX_CODEC_MAX_ITEMS   65536
#define SBX_CODEC_MAX_DEPTH   32

typedef struct sbx_codec_s sbx_codec_t;

/** Loads every compiled-in schema; NULL with errstr on a broken schema. */
sbx_codec_t *sbx_codec_new(char *errstr, size_t errstr_size);
void sbx_codec_destroy(sbx_codec_t *codec);

/**
 * Registers one more writer schema (e.g. an older version) from
 * @p schema_json (borrowed, self-contained); its top-level record name
 * decides its kind. *ret_fp (may be NULL) gets its fingerprint.
 */
sbx_err_t sbx_codec_add_schema(sbx_codec_t *codec,
                               const char *schema_json,
                               uint64_t *ret_fp,
                               char *errstr,
                               size_t errstr_size);

/** Fingerprint of the current schema of @p kind. */
uint64_t sbx_codec_fingerprint(const sbx_codec_t *codec,
                               sbx_schema_kind_t kind);
/** Bundled JSON text of the current schema of @p kind (borrowed). */
const char *sbx_codec_schema_json(const sbx_codec_t *codec,
                                  sbx_schema_kind_t kind);

/**
 * Encodes @p value (borrowed) with the current schema of @p kind into a
 * new buffer *ret_buf (caller frees) of *ret_len bytes. A value that does
 * not fit the schema (missing field without default, unknown field, wrong
 * type, over a bound) is SBX_ERR_INVALID with the field path in errstr.
 */
sbx_err_t sbx_codec_encode(const sbx_codec_t *codec,
                           sbx_schema_kind_t kind,
                           const json_t *value,
                           unsigned char **ret_buf,
                           size_t *ret_len,
                           char *errstr,
                           size_t errstr_size);

/** Like sbx_codec_encode() but with the registered schema @p fp. */
sbx_err_t sbx_codec_encode_with(const sbx_codec_t *codec,
                                uint64_t fp,
                                const json_t *value,
                                unsigned char **ret_buf,
                                size_t *ret_len,
                                char *errstr,
                                size_t errstr_size);

/**
 * Decodes a single-object message of @p kind into *ret_value (a new
 * reference), resolved to the current schema. Errors (SBX_ERR_INVALID,
 * SBX_ERR_TOOBIG, SBX_ERR_NOENT for an unknown fingerprint) carry a
 * reason in errstr and never leave anything allocated.
 */
sbx_err_t sbx_codec_decode(const sbx_codec_t *codec,
                           sbx_schema_kind_t kind,
                           const void *buf,
                           size_t len,
                           json_t **ret_value,
                           char *errstr,
                           size_t errstr_size);

/** Bytes as codec JSON: a string of code points U+0000..U+00FF. */
json_t *sbx_codec_bytes(const void *buf, size_t len);
/** The bytes of a codec JSON bytes value; -1 if it is not one. The caller
 *  frees *ret_buf. */
int sbx_codec_bytes_value(const json_t *v,
                          unsigned char **ret_buf,
                          size_t *ret_len);

/** Reads the fingerprint of a framed message without decoding it. */
sbx_err_t sbx_codec_peek_fingerprint(const void *buf,
                                     size_t len,
                                     uint64_t *ret_fp);

#endif
