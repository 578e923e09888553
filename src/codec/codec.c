/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The codec object: every known schema (current and historical), found by
 * fingerprint, and the single-object framing around avro-c's binary
 * reader and writer. After sbx_codec_new() the object is read-only, so
 * threads share one codec.
 */
#include "codec/codec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/avro_canon.h"
#include "codec/codec_int.h"
#include "codec/schemas.h"
#include "core/util.h"

#define HEADER_LEN 10

struct sbx_codec_s {
        sbx_schema_t **schemas;
        size_t n;
        sbx_schema_t *current[SBX_SCHEMA__CNT];
};

static const char *const kind_names[SBX_SCHEMA__CNT] = {
    "Event", "Request", "NodeStatus", "ExecOutput"};

static void schema_destroy(sbx_schema_t *s)
{
        if (!s)
                return;
        if (s->iface)
                avro_value_iface_decref(s->iface);
        if (s->avro)
                avro_schema_decref(s->avro);
        json_decref(s->names);
        json_decref(s->ns_of);
        json_decref(s->json);
        free(s->text);
        free(s);
}

/* Records every named type of @p node under its full name. */
static void collect_names(sbx_schema_t *s,
                          json_t *node,
                          const char *ns,
                          int depth)
{
        const char *t;
        size_t i;

        if (depth > SBX_AVRO_MAX_DEPTH)
                return;
        if (json_is_array(node)) {
                for (i = 0; i < json_array_size(node); i++)
                        collect_names(s, json_array_get(node, i), ns,
                                      depth + 1);
                return;
        }
        if (!json_is_object(node))
                return;
        t = sbx_schema_type_of(node);
        if (!strcmp(t, "record") || !strcmp(t, "enum") || !strcmp(t, "fixed")) {
                char full[512];
                const char *dot;
                json_t *fields = json_object_get(node, "fields");
                sbx_schema_fullname(node, ns, full, sizeof(full));
                dot = strrchr(full, '.');
                json_object_set(s->names, full, node);
                json_object_set_new(
                    s->ns_of, full,
                    json_stringn(full, dot ? (size_t)(dot - full) : 0));
                ns = json_string_value(json_object_get(s->ns_of, full));
                for (i = 0; i < json_array_size(fields); i++)
                        collect_names(
                            s,
                            json_object_get(json_array_get(fields, i), "type"),
                            ns, depth + 1);
        } else if (!strcmp(t, "array"))
                collect_names(s, json_object_get(node, "items"), ns, depth + 1);
        else if (!strcmp(t, "map"))
                collect_names(s, json_object_get(node, "values"), ns,
                              depth + 1);
        else if (json_is_object(json_object_get(node, "type")) ||
                 json_is_array(json_object_get(node, "type")))
                collect_names(s, json_object_get(node, "type"), ns, depth + 1);
}

static sbx_err_t add_schema(sbx_codec_t *c,
                            const char *text,
                            int current,
                            uint64_t *ret_fp,
                            char *errstr,
                            size_t errstr_size)
{
        sbx_schema_t *s = sbx_calloc(1, sizeof(*s));
        json_error_t jerr;
        const char *name;
        sbx_err_t err;
        size_t i;
        int k;

        s->text    = sbx_strdup(text);
        s->current = current;
        s->json    = json_loads(text, 0, &jerr);
        if (!s->json) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                 "schema is not JSON: %s (line %d)", jerr.text,
                                 jerr.line);
                goto fail;
        }
        err = sbx_avro_fingerprint(text, &s->fp, errstr, errstr_size);
        if (err)
                goto fail;
        name = json_string_value(json_object_get(s->json, "name"));
        for (k = 0; k < SBX_SCHEMA__CNT; k++)
                if (name && !strcmp(name, kind_names[k]))
                        break;
        if (k == SBX_SCHEMA__CNT) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                 "schema's top record must be Event, Request, "
                                 "NodeStatus or ExecOutput, not %s",
                                 name ? name : "(none)");
                goto fail;
        }
        s->kind = (sbx_schema_kind_t)k;
        for (i = 0; i < c->n; i++)
                if (c->schemas[i]->fp == s->fp) {
                        /* Already known: same canonical form. */
                        if (ret_fp)
                                *ret_fp = s->fp;
                        schema_destroy(s);
                        return SBX_OK;
                }
        if (avro_schema_from_json_length(text, strlen(text), &s->avro)) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                 "avro-c rejects schema %s: %s", name,
                                 avro_strerror());
                goto fail;
        }
        s->iface = avro_generic_class_from_schema(s->avro);
        if (!s->iface) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                 "avro-c: no value class for %s: %s", name,
                                 avro_strerror());
                goto fail;
        }
        s->names = json_object();
        s->ns_of = json_object();
        collect_names(s, s->json, "", 0);
        c->schemas = sbx_realloc(c->schemas, (c->n + 1) * sizeof(*c->schemas));
        c->schemas[c->n++] = s;
        if (current)
                c->current[s->kind] = s;
        if (ret_fp)
                *ret_fp = s->fp;
        return SBX_OK;
fail:
        schema_destroy(s);
        return err;
}

sbx_codec_t *sbx_codec_new(char *errstr, size_t errstr_size)
{
        sbx_codec_t *c = sbx_calloc(1, sizeof(*c));
        size_t i;
        int k;

        for (i = 0; i < sbx_schema_srcs_cnt; i++)
                if (add_schema(c, sbx_schema_srcs[i].json,
                               sbx_schema_srcs[i].current, NULL, errstr,
                               errstr_size))
                        goto fail;
        for (k = 0; k < SBX_SCHEMA__CNT; k++)
                if (!c->current[k]) {
                        sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                   "no current %s schema", kind_names[k]);
                        goto fail;
                }
        return c;
fail:
        sbx_codec_destroy(c);
        return NULL;
}

void sbx_codec_destroy(sbx_codec_t *c)
{
        size_t i;
        if (!c)
                return;
        for (i = 0; i < c->n; i++)
                schema_destroy(c->schemas[i]);
        free(c->schemas);
        free(c);
}

sbx_err_t sbx_codec_add_schema(sbx_codec_t *c,
                               const char *schema_json,
                               uint64_t *ret_fp,
                               char *errstr,
                               size_t errstr_size)
{
        return add_schema(c, schema_json, 0, ret_fp, errstr, errstr_size);
}

uint64_t sbx_codec_fingerprint(const sbx_codec_t *c, sbx_schema_kind_t kind)
{
        return c->current[kind]->fp;
}

const char *sbx_codec_schema_json(const sbx_codec_t *c, sbx_schema_kind_t kind)
{
        return c->current[kind]->text;
}

static const sbx_schema_t *by_fp(const sbx_codec_t *c, uint64_t fp)
{
        size_t i;
        for (i = 0; i < c->n; i++)
                if (c->schemas[i]->fp == fp)
                        return c->schemas[i];
        return NULL;
}

static sbx_err_t encode(const sbx_schema_t *s,
                        const json_t *value,
                        unsigned char **ret_buf,
                        size_t *ret_len,
                        char *errstr,
                        size_t errstr_size)
{
        avro_value_t v;
        avro_writer_t w;
        unsigned char *buf;
        size_t size = 0;
        sbx_err_t err;
        int i;

        if (avro_generic_value_new(s->iface, &v))
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "avro-c: cannot create a value");
        err = sbx_to_avro(s, value, &v, errstr, errstr_size);
        if (err)
                goto done;
        if (avro_value_sizeof(&v, &size) || size > SBX_CODEC_MAX_MESSAGE) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_TOOBIG,
                                 "encoded message of %zu bytes is over %d",
                                 size, SBX_CODEC_MAX_MESSAGE);
                goto done;
        }
        buf    = sbx_malloc(HEADER_LEN + size);
        buf[0] = 0xC3;
        buf[1] = 0x01;
        for (i = 0; i < 8; i++)
                buf[2 + i] = (unsigned char)(s->fp >> (8 * i));
        w = avro_writer_memory((char *)buf + HEADER_LEN, (int64_t)size);
        if (avro_value_write(w, &v)) {
                avro_writer_free(w);
                free(buf);
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                 "avro-c: write failed");
                goto done;
        }
        avro_writer_free(w);
        *ret_buf = buf;
        *ret_len = HEADER_LEN + size;
done:
        avro_value_decref(&v);
        return err;
}

sbx_err_t sbx_codec_encode(const sbx_codec_t *c,
                           sbx_schema_kind_t kind,
                           const json_t *value,
                           unsigned char **ret_buf,
                           size_t *ret_len,
                           char *errstr,
                           size_t errstr_size)
{
        return encode(c->current[kind], value, ret_buf, ret_len, errstr,
                      errstr_size);
}

sbx_err_t sbx_codec_encode_with(const sbx_codec_t *c,
                                uint64_t fp,
                                const json_t *value,
                                unsigned char **ret_buf,
                                size_t *ret_len,
                                char *errstr,
                                size_t errstr_size)
{
        const sbx_schema_t *s = by_fp(c, fp);
        if (!s)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_NOENT,
                                  "no schema with fingerprint %016llx",
                                  (unsigned long long)fp);
        return encode(s, value, ret_buf, ret_len, errstr, errstr_size);
}

sbx_err_t sbx_codec_peek_fingerprint(const void *buf,
                                     size_t len,
                                     uint64_t *ret_fp)
{
        const unsigned char *b = buf;
        uint64_t fp            = 0;
        int i;
        if (len < HEADER_LEN || b[0] != 0xC3 || b[1] != 0x01)
                return SBX_ERR_INVALID;
        for (i = 0; i < 8; i++)
                fp |= (uint64_t)b[2 + i] << (8 * i);
        *ret_fp = fp;
        return SBX_OK;
}

sbx_err_t sbx_codec_decode(const sbx_codec_t *c,
                           sbx_schema_kind_t kind,
                           const void *buf,
                           size_t len,
                           json_t **ret_value,
                           char *errstr,
                           size_t errstr_size)
{
        const sbx_schema_t *w;
        avro_value_t v;
        avro_reader_t r;
        uint64_t fp;
        sbx_err_t err;

        if (sbx_codec_peek_fingerprint(buf, len, &fp))
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "not an Avro single-object message (%zu "
                                  "bytes, want C3 01 + fingerprint + body)",
                                  len);
        if (len - HEADER_LEN > SBX_CODEC_MAX_MESSAGE)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_TOOBIG,
                                  "message of %zu bytes is over %d", len,
                                  SBX_CODEC_MAX_MESSAGE);
        w = by_fp(c, fp);
        if (!w)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_NOENT,
                                  "unknown writer schema fingerprint "
                                  "%016llx",
                                  (unsigned long long)fp);
        if (w->kind != kind)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "message is a %s, expected a %s",
                                  kind_names[w->kind], kind_names[kind]);
        err = sbx_prescan(w, (const unsigned char *)buf + HEADER_LEN,
                          len - HEADER_LEN, errstr, errstr_size);
        if (err)
                return err;
        if (avro_generic_value_new(w->iface, &v))
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "avro-c: cannot create a value");
        r = avro_reader_memory((const char *)buf + HEADER_LEN,
                               (int64_t)(len - HEADER_LEN));
        if (avro_value_read(r, &v))
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                 "avro-c could not read the body");
        else
                err = sbx_resolve(c->current[kind], &v, ret_value, errstr,
                                  errstr_size);
        avro_reader_free(r);
        avro_value_decref(&v);
        return err;
}

json_t *sbx_codec_bytes(const void *buf, size_t len)
{
        return sbx_bytes_to_json(buf, len);
}

int sbx_codec_bytes_value(const json_t *v,
                          unsigned char **ret_buf,
                          size_t *ret_len)
{
        if (!json_is_string(v))
                return -1;
        return sbx_json_to_bytes(v, ret_buf, ret_len);
}
