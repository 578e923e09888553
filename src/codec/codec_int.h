/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Codec internals shared by its modules: a parsed schema (avro-c's and
 * jansson's view of the same text, plus a table of its named types) and
 * the three walks over it: the bounds check of a binary body (prescan.c),
 * JSON to avro-c value (to_avro.c) and avro-c value to resolved JSON
 * (resolve.c).
 */
#ifndef SBX_CODEC_INT_H
#define SBX_CODEC_INT_H

#include <avro.h>
#include <jansson.h>

#include "codec/codec.h"

typedef struct sbx_schema_s {
        sbx_schema_kind_t kind;
        uint64_t fp;
        int current;
        char *text;
        json_t *json;  /* the schema as JSON */
        json_t *names; /* full name -> definition (borrowed from json) */
        json_t *ns_of; /* full name -> namespace in force inside it */
        avro_schema_t avro;
        avro_value_iface_t *iface;
} sbx_schema_t;

/* Error path while walking: "payload.sbx.ExecFinished.usage.wall_us". */
typedef struct sbx_path_s {
        char buf[512];
        size_t len;
} sbx_path_t;

void sbx_path_push(sbx_path_t *p, const char *name, size_t *ret_saved);
void sbx_path_pop(sbx_path_t *p, size_t saved);

/* Resolves a type reference to its definition; *ns is updated to the
 * namespace in force inside it. Returns NULL for an unknown name. */
const json_t *sbx_schema_deref(const sbx_schema_t *s, const json_t *type,
                               const char **ns);
/* "record", "string", ... for a (dereferenced) type node. */
const char *sbx_schema_type_of(const json_t *node);
/* Full name of a named type node within namespace @p ns. */
void sbx_schema_fullname(const json_t *node, const char *ns, char *out,
                         size_t out_size);
/* Is this union exactly ["null", T]? Writes T's index. */
int sbx_schema_nullable(const json_t *uni, size_t *ret_other);

/* Checks that @p len bytes hold exactly one value of @p s, within bounds. */
sbx_err_t sbx_prescan(const sbx_schema_t *s, const unsigned char *buf,
                      size_t len, char *errstr, size_t errstr_size);

/* Fills @p out (a fresh generic value of s) from @p v. */
sbx_err_t sbx_to_avro(const sbx_schema_t *s, const json_t *v,
                      avro_value_t *out, char *errstr, size_t errstr_size);

/* Converts writer value @p wv into JSON of reader schema @p r. */
sbx_err_t sbx_resolve(const sbx_schema_t *r, avro_value_t *wv,
                      json_t **ret_value, char *errstr, size_t errstr_size);

/* The sbx JSON of a schema default @p dflt for @p type (a new
 * reference), or NULL if the default does not fit the type. */
json_t *sbx_default_value(const sbx_schema_t *s, const json_t *type,
                          const char *ns, const json_t *dflt);

/* Bytes <-> JSON string of code points U+0000..U+00FF. */
json_t *sbx_bytes_to_json(const void *buf, size_t len);
/* Returns 0 and a malloc'd buffer, or -1 if a code point is > 0xFF. */
int sbx_json_to_bytes(const json_t *s, unsigned char **ret_buf,
                      size_t *ret_len);

#endif
