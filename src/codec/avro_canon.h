/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Avro schema identity: the Parsing Canonical Form of a schema and its
 * CRC-64-AVRO (64-bit Rabin) fingerprint, as the Avro specification defines
 * them. Two schemas with the same canonical form read the same bytes, so the
 * fingerprint names a writer schema on the wire: Avro single-object encoding
 * frames a datum as the two bytes C3 01, then the 8-byte fingerprint of the
 * writer schema in little-endian order, then the datum's binary encoding.
 * A schema that is not valid gets no canonical form, only a reason.
 */
#ifndef SBX_AVRO_CANON_H
#define SBX_AVRO_CANON_H

#include <stddef.h>
#include <stdint.h>

#include "sbx/err.h"

/** Fingerprint of the empty byte string; the seed of every fingerprint. */
#define SBX_AVRO_CRC64_EMPTY UINT64_C(0xc15d213aa4d7a795)

/**
 * Deepest schema nesting accepted. The whole schema is level 1; a schema in
 * a record field, array items, map values or a union branch is one level
 * below its parent.
 */
#define SBX_AVRO_MAX_DEPTH 64

/**
 * CRC-64-AVRO fingerprint of @p len bytes at @p buf (borrowed; may be NULL
 * when @p len is 0). Returns SBX_AVRO_CRC64_EMPTY for no bytes.
 */
uint64_t sbx_avro_crc64(const void *buf, size_t len);

/**
 * Parses @p schema_json (borrowed, NUL-terminated JSON text of one Avro
 * schema) and writes its Parsing Canonical Form to *ret_pcf, a
 * NUL-terminated string that the caller frees with free().
 *
 * Named types are resolved as the specification says: a name without a dot
 * takes the namespace of the most tightly enclosing named type; a reference
 * that is not found there is looked up in the null namespace, as the Java
 * implementation does.
 *
 * Returns SBX_ERR_INVALID for text that is not JSON or not a valid schema
 * (unknown type, missing or malformed attribute, bad or duplicate name),
 * SBX_ERR_TOOBIG for a schema nested deeper than SBX_AVRO_MAX_DEPTH (or
 * JSON nested too deep to parse) or a canonical form over 16 MiB. The
 * reason goes to @p errstr (may be NULL), with the JSON pointer of the
 * offending part below the top level; *ret_pcf is then left untouched.
 */
sbx_err_t sbx_avro_canonical_form(const char *schema_json,
                                  char **ret_pcf,
                                  char *errstr,
                                  size_t errstr_size);

/**
 * CRC-64-AVRO fingerprint of the Parsing Canonical Form of @p schema_json
 * (borrowed), written to *ret_fp on success as a number; single-object
 * encoding sends it least significant byte first. Errors as for
 * sbx_avro_canonical_form().
 */
sbx_err_t sbx_avro_fingerprint(const char *schema_json,
                               uint64_t *ret_fp,
                               char *errstr,
                               size_t errstr_size);

#endif
