/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON value to avro-c generic value, guided by the schema's JSON. A
 * record's missing field takes the schema default; a field the schema does
 * not have, a value of the wrong type and anything over the codec's bounds
 * is an error that names the field path. This is the only way sbx builds
 * an Avro value, so nothing malformed reaches the log from sbx itself.
 */
#include <stdlib.h>
#include <string.h>

#include "codec/codec_int.h"
#include "core/util.h"

typedef struct enc_s {
        const sbx_schema_t *s;
        sbx_path_t path;
        char *errstr;
        size_t errstr_size;
} enc_t;

static sbx_err_t bad(enc_t *e, const char *what)
{
        return sbx_seterr(e->errstr, e->errstr_size, SBX_ERR_INVALID,
                          "%s at %s", what, e->path.len ? e->path.buf : "(top)");
}

/* The name a union branch is known by in JSON. */
static void branch_name(const sbx_schema_t *s, const json_t *branch,
                        const char *ns, char *out, size_t out_size)
{
        const json_t *node = sbx_schema_deref(s, branch, &ns);
        const char *t = node ? sbx_schema_type_of(node) : "";
        if (!strcmp(t, "record") || !strcmp(t, "enum") || !strcmp(t, "fixed")) {
                /* deref moved ns inside the type; rebuild from the node */
                const char *nm = json_string_value(json_object_get(node, "name"));
                if (nm && strchr(nm, '.'))
                        snprintf(out, out_size, "%s", nm);
                else
                        snprintf(out, out_size, "%s%s%s", ns, *ns ? "." : "",
                                 nm ? nm : "");
        } else
                snprintf(out, out_size, "%s", t);
}

/* Index of the branch of @p uni named @p name (full or short), or -1. */
static int find_branch(const sbx_schema_t *s, const json_t *uni,
                       const char *ns, const char *name)
{
        size_t i;
        char bn[512];
        for (i = 0; i < json_array_size(uni); i++) {
                const char *dot;
                branch_name(s, json_array_get(uni, i), ns, bn, sizeof(bn));
                dot = strrchr(bn, '.');
                if (!strcmp(bn, name) || (dot && !strcmp(dot + 1, name)))
                        return (int)i;
        }
        return -1;
}

json_t *sbx_default_value(const sbx_schema_t *s, const json_t *type,
                          const char *ns, const json_t *dflt)
{
        const json_t *node = sbx_schema_deref(s, type, &ns);
        const char *t;
        size_t i, other;

        if (!node || !dflt)
                return NULL;
        t = sbx_schema_type_of(node);
        if (!strcmp(t, "union")) {
                /* A union's default is a value of its first branch. */
                const json_t *first = json_array_get(node, 0);
                json_t *v, *o;
                char bn[512];
                if (sbx_schema_nullable(node, &other)) {
                        if (json_is_null(dflt))
                                return json_null();
                        return sbx_default_value(s, json_array_get(node, other),
                                                 ns, dflt);
                }
                v = sbx_default_value(s, first, ns, dflt);
                if (!v)
                        return NULL;
                branch_name(s, first, ns, bn, sizeof(bn));
                o = json_object();
                json_object_set_new(o, bn, v);
                return o;
        }
        if (!strcmp(t, "record")) {
                const json_t *fields = json_object_get(node, "fields");
                json_t *o = json_object();
                if (!json_is_object(dflt)) {
                        json_decref(o);
                        return NULL;
                }
                for (i = 0; i < json_array_size(fields); i++) {
                        const json_t *f = json_array_get(fields, i);
                        const char *fn =
                            json_string_value(json_object_get(f, "name"));
                        const json_t *fv = json_object_get(dflt, fn);
                        json_t *v = sbx_default_value(
                            s, json_object_get(f, "type"), ns,
                            fv ? fv : json_object_get(f, "default"));
                        if (!v) {
                                json_decref(o);
                                return NULL;
                        }
                        json_object_set_new(o, fn, v);
                }
                return o;
        }
        if (!strcmp(t, "array")) {
                json_t *a = json_array();
                if (!json_is_array(dflt)) {
                        json_decref(a);
                        return NULL;
                }
                for (i = 0; i < json_array_size(dflt); i++) {
                        json_t *v = sbx_default_value(
                            s, json_object_get(node, "items"), ns,
                            json_array_get(dflt, i));
                        if (!v) {
                                json_decref(a);
                                return NULL;
                        }
                        json_array_append_new(a, v);
                }
                return a;
        }
        if (!strcmp(t, "map")) {
                json_t *m = json_object();
                const char *k;
                json_t *dv;
                if (!json_is_object(dflt)) {
                        json_decref(m);
                        return NULL;
                }
                json_object_foreach((json_t *)dflt, k, dv)
                {
                        json_t *v = sbx_default_value(
                            s, json_object_get(node, "values"), ns, dv);
                        if (!v) {
                                json_decref(m);
                                return NULL;
                        }
                        json_object_set_new(m, k, v);
                }
                return m;
        }
        return json_deep_copy(dflt);
}

static sbx_err_t enc(enc_t *e, const json_t *type, const char *ns,
                     const json_t *v, avro_value_t *out, int depth)
{
        const json_t *node = sbx_schema_deref(e->s, type, &ns);
        const char *t;
        size_t i, saved, other;
        sbx_err_t err;

        if (!node)
                return bad(e, "unknown type in schema");
        if (depth > SBX_CODEC_MAX_DEPTH)
                return bad(e, "nesting too deep");
        t = sbx_schema_type_of(node);

        if (!strcmp(t, "null")) {
                if (!json_is_null(v))
                        return bad(e, "expected null");
                return avro_value_set_null(out) ? bad(e, "avro") : SBX_OK;
        }
        if (!strcmp(t, "boolean")) {
                if (!json_is_boolean(v))
                        return bad(e, "expected a boolean");
                avro_value_set_boolean(out, json_is_true(v));
                return SBX_OK;
        }
        if (!strcmp(t, "int")) {
                json_int_t x = json_integer_value(v);
                if (!json_is_integer(v) || x < INT32_MIN || x > INT32_MAX)
                        return bad(e, "expected a 32-bit integer");
                avro_value_set_int(out, (int32_t)x);
                return SBX_OK;
        }
        if (!strcmp(t, "long")) {
                if (!json_is_integer(v))
                        return bad(e, "expected an integer");
                avro_value_set_long(out, (int64_t)json_integer_value(v));
                return SBX_OK;
        }
        if (!strcmp(t, "float") || !strcmp(t, "double")) {
                if (!json_is_number(v))
                        return bad(e, "expected a number");
                if (!strcmp(t, "float"))
                        avro_value_set_float(out, (float)json_number_value(v));
                else
                        avro_value_set_double(out, json_number_value(v));
                return SBX_OK;
        }
        if (!strcmp(t, "string")) {
                if (!json_is_string(v))
                        return bad(e, "expected a string");
                if (json_string_length(v) > SBX_CODEC_MAX_STRING)
                        return bad(e, "string too long");
                avro_value_set_string_len(out, json_string_value(v),
                                          json_string_length(v) + 1);
                return SBX_OK;
        }
        if (!strcmp(t, "bytes") || !strcmp(t, "fixed")) {
                unsigned char *b;
                size_t n;
                if (!json_is_string(v) || sbx_json_to_bytes(v, &b, &n))
                        return bad(e, "expected bytes (a string of code "
                                      "points U+0000..U+00FF)");
                if (n > SBX_CODEC_MAX_STRING) {
                        free(b);
                        return bad(e, "bytes too long");
                }
                if (!strcmp(t, "fixed")) {
                        if ((json_int_t)n !=
                            json_integer_value(json_object_get(node, "size"))) {
                                free(b);
                                return bad(e, "fixed of the wrong size");
                        }
                        avro_value_set_fixed(out, b, n);
                } else
                        avro_value_set_bytes(out, b, n);
                free(b);
                return SBX_OK;
        }
        if (!strcmp(t, "enum")) {
                const json_t *syms = json_object_get(node, "symbols");
                if (!json_is_string(v))
                        return bad(e, "expected an enum symbol");
                for (i = 0; i < json_array_size(syms); i++)
                        if (!strcmp(json_string_value(json_array_get(syms, i)),
                                    json_string_value(v))) {
                                avro_value_set_enum(out, (int)i);
                                return SBX_OK;
                        }
                return bad(e, "unknown enum symbol");
        }
        if (!strcmp(t, "union")) {
                avro_value_t branch;
                const char *key;
                json_t *bv;
                int idx;
                if (sbx_schema_nullable(node, &other)) {
                        int null_idx = other == 0 ? 1 : 0;
                        if (json_is_null(v)) {
                                avro_value_set_branch(out, null_idx, &branch);
                                avro_value_set_null(&branch);
                                return SBX_OK;
                        }
                        avro_value_set_branch(out, (int)other, &branch);
                        return enc(e, json_array_get(node, other), ns, v,
                                   &branch, depth + 1);
                }
                if (!json_is_object(v) || json_object_size(v) != 1)
                        return bad(e, "expected {\"<type>\": value} for a "
                                      "union");
                json_object_foreach((json_t *)v, key, bv)
                {
                        idx = find_branch(e->s, node, ns, key);
                        if (idx < 0)
                                return bad(e, "no such union branch");
                        avro_value_set_branch(out, idx, &branch);
                        return enc(e, json_array_get(node, (size_t)idx), ns,
                                   bv, &branch, depth + 1);
                }
        }
        if (!strcmp(t, "array")) {
                if (!json_is_array(v))
                        return bad(e, "expected an array");
                if (json_array_size(v) > SBX_CODEC_MAX_ITEMS)
                        return bad(e, "too many items");
                for (i = 0; i < json_array_size(v); i++) {
                        avro_value_t child;
                        avro_value_append(out, &child, NULL);
                        err = enc(e, json_object_get(node, "items"), ns,
                                  json_array_get(v, i), &child, depth + 1);
                        if (err)
                                return err;
                }
                return SBX_OK;
        }
        if (!strcmp(t, "map")) {
                const char *key;
                json_t *mv;
                if (!json_is_object(v))
                        return bad(e, "expected an object (map)");
                if (json_object_size(v) > SBX_CODEC_MAX_ITEMS)
                        return bad(e, "too many items");
                json_object_foreach((json_t *)v, key, mv)
                {
                        avro_value_t child;
                        avro_value_add(out, key, &child, NULL, NULL);
                        err = enc(e, json_object_get(node, "values"), ns, mv,
                                  &child, depth + 1);
                        if (err)
                                return err;
                }
                return SBX_OK;
        }
        if (!strcmp(t, "record")) {
                const json_t *fields = json_object_get(node, "fields");
                const char *key;
                json_t *fv;
                if (!json_is_object(v))
                        return bad(e, "expected an object (record)");
                json_object_foreach((json_t *)v, key, fv)
                {
                        int known = 0;
                        for (i = 0; i < json_array_size(fields); i++)
                                if (!strcmp(key,
                                            json_string_value(json_object_get(
                                                json_array_get(fields, i),
                                                "name"))))
                                        known = 1;
                        if (!known) {
                                sbx_path_push(&e->path, key, &saved);
                                return bad(e, "unknown field");
                        }
                }
                for (i = 0; i < json_array_size(fields); i++) {
                        const json_t *f = json_array_get(fields, i);
                        const char *fn =
                            json_string_value(json_object_get(f, "name"));
                        const json_t *ft = json_object_get(f, "type");
                        json_t *val = json_object_get(v, fn), *dv = NULL;
                        avro_value_t child;

                        sbx_path_push(&e->path, fn, &saved);
                        if (!val) {
                                dv = sbx_default_value(
                                    e->s, ft, ns, json_object_get(f, "default"));
                                if (!dv)
                                        return bad(e, "missing field (no "
                                                      "default)");
                                val = dv;
                        }
                        avro_value_get_by_index(out, i, &child, NULL);
                        err = enc(e, ft, ns, val, &child, depth + 1);
                        json_decref(dv);
                        if (err)
                                return err;
                        sbx_path_pop(&e->path, saved);
                }
                return SBX_OK;
        }
        return bad(e, "unsupported type in schema");
}

sbx_err_t sbx_to_avro(const sbx_schema_t *s, const json_t *v,
                      avro_value_t *out, char *errstr, size_t errstr_size)
{
        enc_t e;
        memset(&e, 0, sizeof(e));
        e.s = s;
        e.errstr = errstr;
        e.errstr_size = errstr_size;
        return enc(&e, s->json, "", v, out, 0);
}
