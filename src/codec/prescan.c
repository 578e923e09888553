/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Bounds check of an Avro binary body against its writer schema, before
 * avro-c reads it. avro-c allocates a string's declared length before it
 * checks that the bytes are there, and loops over a block's declared count
 * whatever the input; this walk rejects any length beyond the bytes left,
 * any count beyond SBX_CODEC_MAX_ITEMS, any nesting beyond
 * SBX_CODEC_MAX_DEPTH, any bad union or enum index, and trailing bytes, so
 * that what avro-c then reads is known to be well-formed and bounded.
 */
#include <string.h>

#include "codec/codec_int.h"
#include "core/util.h"

#define MAX_VALUES (4 * 1024 * 1024) /* values visited in one message */

typedef struct scan_s {
        const sbx_schema_t *s;
        const unsigned char *p, *end;
        long values;
        sbx_path_t path;
        char *errstr;
        size_t errstr_size;
} scan_t;

static sbx_err_t fail(scan_t *sc, sbx_err_t err, const char *what)
{
        return sbx_seterr(sc->errstr, sc->errstr_size, err, "%s at %s",
                          what, sc->path.len ? sc->path.buf : "(top)");
}

static sbx_err_t read_long(scan_t *sc, int64_t *ret, int max_bytes)
{
        uint64_t v = 0;
        int shift = 0, i;
        for (i = 0; i < max_bytes; i++) {
                unsigned char b;
                if (sc->p >= sc->end)
                        return fail(sc, SBX_ERR_INVALID, "truncated number");
                b = *sc->p++;
                v |= (uint64_t)(b & 0x7F) << shift;
                if (!(b & 0x80)) {
                        *ret = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
                        return SBX_OK;
                }
                shift += 7;
        }
        return fail(sc, SBX_ERR_INVALID, "varint too long");
}

static sbx_err_t skip(scan_t *sc, int64_t n, int64_t max, const char *what)
{
        if (n < 0)
                return fail(sc, SBX_ERR_INVALID, what);
        if (n > max)
                return fail(sc, SBX_ERR_TOOBIG, what);
        if (n > sc->end - sc->p)
                return fail(sc, SBX_ERR_INVALID, "truncated body");
        sc->p += n;
        return SBX_OK;
}

static sbx_err_t walk(scan_t *sc, const json_t *type, const char *ns,
                      int depth);

static sbx_err_t walk_blocks(scan_t *sc, const json_t *items, const char *ns,
                             int depth, int is_map)
{
        int64_t total = 0;
        for (;;) {
                int64_t count = 0, size = 0;
                sbx_err_t err = read_long(sc, &count, 10);
                if (err)
                        return err;
                if (count == 0)
                        return SBX_OK;
                if (count < 0) {
                        if (count == INT64_MIN)
                                return fail(sc, SBX_ERR_INVALID,
                                            "bad block count");
                        count = -count;
                        if ((err = read_long(sc, &size, 10)))
                                return err;
                        if (size < 0 || size > sc->end - sc->p)
                                return fail(sc, SBX_ERR_INVALID,
                                            "bad block size");
                }
                /* total <= SBX_CODEC_MAX_ITEMS: compare before adding,
                 * a count near INT64_MAX must not wrap the sum. */
                if (count > SBX_CODEC_MAX_ITEMS - total)
                        return fail(sc, SBX_ERR_TOOBIG, "too many items");
                total += count;
                while (count-- > 0) {
                        if (is_map) {
                                int64_t klen = 0;
                                if ((err = read_long(sc, &klen, 10)) ||
                                    (err = skip(sc, klen, SBX_CODEC_MAX_STRING,
                                                "bad map key length")))
                                        return err;
                        }
                        if ((err = walk(sc, items, ns, depth + 1)))
                                return err;
                }
        }
}

static sbx_err_t walk(scan_t *sc, const json_t *type, const char *ns,
                      int depth)
{
        const json_t *node;
        const char *t;
        int64_t v = 0;
        sbx_err_t err;
        size_t i, saved;

        if (depth > SBX_CODEC_MAX_DEPTH)
                return fail(sc, SBX_ERR_TOOBIG, "nesting too deep");
        if (++sc->values > MAX_VALUES)
                return fail(sc, SBX_ERR_TOOBIG, "too many values");
        node = sbx_schema_deref(sc->s, type, &ns);
        if (!node)
                return fail(sc, SBX_ERR_INVALID, "unknown type in schema");
        t = sbx_schema_type_of(node);

        if (!strcmp(t, "null"))
                return SBX_OK;
        if (!strcmp(t, "boolean")) {
                if (sc->p >= sc->end)
                        return fail(sc, SBX_ERR_INVALID, "truncated boolean");
                if (*sc->p > 1)
                        return fail(sc, SBX_ERR_INVALID, "bad boolean");
                sc->p++;
                return SBX_OK;
        }
        if (!strcmp(t, "int")) {
                if ((err = read_long(sc, &v, 5)))
                        return err;
                if (v < INT32_MIN || v > INT32_MAX)
                        return fail(sc, SBX_ERR_INVALID, "int out of range");
                return SBX_OK;
        }
        if (!strcmp(t, "long"))
                return read_long(sc, &v, 10);
        if (!strcmp(t, "float"))
                return skip(sc, 4, 4, "float");
        if (!strcmp(t, "double"))
                return skip(sc, 8, 8, "double");
        if (!strcmp(t, "string") || !strcmp(t, "bytes")) {
                if ((err = read_long(sc, &v, 10)))
                        return err;
                return skip(sc, v, SBX_CODEC_MAX_STRING,
                            v < 0 ? "negative length" : "string too long");
        }
        if (!strcmp(t, "fixed"))
                return skip(sc, json_integer_value(json_object_get(node, "size")),
                            SBX_CODEC_MAX_STRING, "fixed");
        if (!strcmp(t, "enum")) {
                if ((err = read_long(sc, &v, 5)))
                        return err;
                if (v < 0 ||
                    (size_t)v >= json_array_size(json_object_get(node, "symbols")))
                        return fail(sc, SBX_ERR_INVALID, "bad enum index");
                return SBX_OK;
        }
        if (!strcmp(t, "union")) {
                if ((err = read_long(sc, &v, 10)))
                        return err;
                if (v < 0 || (size_t)v >= json_array_size(node))
                        return fail(sc, SBX_ERR_INVALID, "bad union branch");
                return walk(sc, json_array_get(node, (size_t)v), ns, depth + 1);
        }
        if (!strcmp(t, "array"))
                return walk_blocks(sc, json_object_get(node, "items"), ns,
                                   depth, 0);
        if (!strcmp(t, "map"))
                return walk_blocks(sc, json_object_get(node, "values"), ns,
                                   depth, 1);
        if (!strcmp(t, "record")) {
                const json_t *fields = json_object_get(node, "fields");
                for (i = 0; i < json_array_size(fields); i++) {
                        const json_t *f = json_array_get(fields, i);
                        sbx_path_push(&sc->path,
                                      json_string_value(
                                          json_object_get(f, "name")),
                                      &saved);
                        err = walk(sc, json_object_get(f, "type"), ns,
                                   depth + 1);
                        if (err)
                                return err;
                        sbx_path_pop(&sc->path, saved);
                }
                return SBX_OK;
        }
        return fail(sc, SBX_ERR_INVALID, "unsupported type in schema");
}

sbx_err_t sbx_prescan(const sbx_schema_t *s, const unsigned char *buf,
                      size_t len, char *errstr, size_t errstr_size)
{
        scan_t sc;
        sbx_err_t err;

        memset(&sc, 0, sizeof(sc));
        sc.s = s;
        sc.p = buf;
        sc.end = buf + len;
        sc.errstr = errstr;
        sc.errstr_size = errstr_size;
        err = walk(&sc, s->json, "", 0);
        if (err)
                return err;
        if (sc.p != sc.end)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "%zu trailing bytes after the value",
                                  (size_t)(sc.end - sc.p));
        return SBX_OK;
}
