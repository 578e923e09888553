/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Avro schema resolution in sbx's code: a value read with the writer's
 * schema becomes JSON of the reader's schema. Record fields match by name;
 * a reader field the writer lacks takes the reader's default (what
 * avro-c's resolver cannot do); writer fields the reader lacks are
 * dropped; numbers promote int -> long -> float -> double; string and
 * bytes convert; an unknown enum symbol takes the reader's enum default;
 * union branches match by type and name.
 */
#include <stdlib.h>
#include <string.h>

#include "codec/codec_int.h"
#include "core/util.h"

typedef struct res_s {
        const sbx_schema_t *r;
        sbx_path_t path;
        char *errstr;
        size_t errstr_size;
        sbx_err_t err;
} res_t;

static json_t *bad(res_t *x, const char *what)
{
        x->err = sbx_seterr(x->errstr, x->errstr_size, SBX_ERR_INVALID,
                            "%s at %s", what,
                            x->path.len ? x->path.buf : "(top)");
        return NULL;
}

static const char *short_name(const char *n)
{
        const char *dot = n ? strrchr(n, '.') : NULL;
        return dot ? dot + 1 : (n ? n : "");
}

static const char *writer_name(avro_value_t *wv)
{
        avro_schema_t ws = avro_value_get_schema(wv);
        return short_name(avro_schema_type_name(ws));
}

/* Can a writer value of type @p wt (named @p wname) be read as @p rnode?
 * With @p exact, only the same type (no promotion). */
static int matches(avro_type_t wt, const char *wname, const json_t *rnode,
                   int exact)
{
        const char *rt = sbx_schema_type_of(rnode);
        if (!strcmp(rt, "record") || !strcmp(rt, "enum") ||
            !strcmp(rt, "fixed")) {
                avro_type_t want = !strcmp(rt, "record") ? AVRO_RECORD
                                   : !strcmp(rt, "enum") ? AVRO_ENUM
                                                         : AVRO_FIXED;
                return wt == want &&
                       !strcmp(wname, short_name(json_string_value(
                                          json_object_get(rnode, "name"))));
        }
        switch (wt) {
        case AVRO_NULL:
                return !strcmp(rt, "null");
        case AVRO_BOOLEAN:
                return !strcmp(rt, "boolean");
        case AVRO_INT32:
                return !strcmp(rt, "int") ||
                       (!exact && (!strcmp(rt, "long") ||
                                   !strcmp(rt, "float") ||
                                   !strcmp(rt, "double")));
        case AVRO_INT64:
                return !strcmp(rt, "long") ||
                       (!exact &&
                        (!strcmp(rt, "float") || !strcmp(rt, "double")));
        case AVRO_FLOAT:
                return !strcmp(rt, "float") ||
                       (!exact && !strcmp(rt, "double"));
        case AVRO_DOUBLE:
                return !strcmp(rt, "double");
        case AVRO_STRING:
                return !strcmp(rt, "string") ||
                       (!exact && !strcmp(rt, "bytes"));
        case AVRO_BYTES:
                return !strcmp(rt, "bytes") ||
                       (!exact && !strcmp(rt, "string"));
        case AVRO_ARRAY:
                return !strcmp(rt, "array");
        case AVRO_MAP:
                return !strcmp(rt, "map");
        default:
                return 0;
        }
}

static json_t *res(res_t *x, const json_t *rtype, const char *ns,
                   avro_value_t *wv, int depth);

static json_t *res_union(res_t *x, const json_t *rnode, const char *ns,
                         avro_value_t *wv, int depth)
{
        avro_type_t wt = avro_value_get_type(wv);
        const char *wname = writer_name(wv);
        size_t other, i;
        int pass;

        if (sbx_schema_nullable(rnode, &other)) {
                if (wt == AVRO_NULL)
                        return json_null();
                return res(x, json_array_get(rnode, other), ns, wv, depth + 1);
        }
        for (pass = 0; pass < 2; pass++)
                for (i = 0; i < json_array_size(rnode); i++) {
                        const char *bns = ns;
                        const json_t *b = json_array_get(rnode, i);
                        const json_t *bn = sbx_schema_deref(x->r, b, &bns);
                        json_t *v, *o;
                        char full[512];
                        if (!bn || !matches(wt, wname, bn, pass == 0))
                                continue;
                        v = res(x, b, ns, wv, depth + 1);
                        if (!v)
                                return NULL;
                        if (!strcmp(sbx_schema_type_of(bn), "record") ||
                            !strcmp(sbx_schema_type_of(bn), "enum") ||
                            !strcmp(sbx_schema_type_of(bn), "fixed")) {
                                const char *nm = json_string_value(
                                    json_object_get(bn, "name"));
                                if (strchr(nm, '.'))
                                        snprintf(full, sizeof(full), "%s", nm);
                                else
                                        snprintf(full, sizeof(full), "%s%s%s",
                                                 bns, *bns ? "." : "", nm);
                        } else
                                snprintf(full, sizeof(full), "%s",
                                         sbx_schema_type_of(bn));
                        o = json_object();
                        json_object_set_new(o, full, v);
                        return o;
                }
        return bad(x, "the writer's union branch has no match in the "
                      "reader's union");
}

static json_t *res_record(res_t *x, const json_t *rnode, const char *ns,
                          avro_value_t *wv, int depth)
{
        const json_t *fields = json_object_get(rnode, "fields");
        json_t *o = json_object();
        size_t i, saved;

        for (i = 0; i < json_array_size(fields); i++) {
                const json_t *f = json_array_get(fields, i);
                const char *fn = json_string_value(json_object_get(f, "name"));
                const json_t *ft = json_object_get(f, "type");
                avro_value_t child;
                json_t *v;

                sbx_path_push(&x->path, fn, &saved);
                if (avro_value_get_by_name(wv, fn, &child, NULL) == 0)
                        v = res(x, ft, ns, &child, depth + 1);
                else {
                        v = sbx_default_value(x->r, ft, ns,
                                              json_object_get(f, "default"));
                        if (!v)
                                bad(x, "the writer lacks this field and the "
                                       "reader has no default");
                }
                if (!v) {
                        json_decref(o);
                        return NULL;
                }
                json_object_set_new(o, fn, v);
                sbx_path_pop(&x->path, saved);
        }
        return o;
}

static json_t *res(res_t *x, const json_t *rtype, const char *ns,
                   avro_value_t *wv, int depth)
{
        const json_t *rnode = sbx_schema_deref(x->r, rtype, &ns);
        avro_type_t wt = avro_value_get_type(wv);
        const char *rt;
        size_t i, n;

        if (!rnode)
                return bad(x, "unknown type in reader schema");
        if (depth > SBX_CODEC_MAX_DEPTH)
                return bad(x, "nesting too deep");
        if (wt == AVRO_UNION) {
                avro_value_t branch;
                if (avro_value_get_current_branch(wv, &branch))
                        return bad(x, "union without a branch");
                return res(x, rtype, ns, &branch, depth + 1);
        }
        rt = sbx_schema_type_of(rnode);
        if (!strcmp(rt, "union"))
                return res_union(x, rnode, ns, wv, depth);
        if (!matches(wt, writer_name(wv), rnode, 0))
                return bad(x, "the writer's type cannot be read as the "
                              "reader's");

        switch (wt) {
        case AVRO_NULL:
                return json_null();
        case AVRO_BOOLEAN: {
                int b = 0;
                avro_value_get_boolean(wv, &b);
                return json_boolean(b);
        }
        case AVRO_INT32: {
                int32_t v = 0;
                avro_value_get_int(wv, &v);
                return strcmp(rt, "float") && strcmp(rt, "double")
                           ? json_integer(v)
                           : json_real(v);
        }
        case AVRO_INT64: {
                int64_t v = 0;
                avro_value_get_long(wv, &v);
                return !strcmp(rt, "long") ? json_integer(v)
                                           : json_real((double)v);
        }
        case AVRO_FLOAT:
        case AVRO_DOUBLE: {
                float f = 0;
                double v = 0;
                json_t *r;
                if (wt == AVRO_FLOAT) {
                        avro_value_get_float(wv, &f);
                        v = f;
                } else
                        avro_value_get_double(wv, &v);
                /* JSON has no NaN or infinity: jansson refuses them. */
                r = json_real(v);
                return r ? r : bad(x, "number is NaN or infinite");
        }
        case AVRO_STRING:
        case AVRO_BYTES: {
                const void *p = NULL;
                size_t len = 0;
                json_t *s;
                if (wt == AVRO_STRING) {
                        const char *str = NULL;
                        avro_value_get_string(wv, &str, &len);
                        p = str;
                        len = len ? len - 1 : 0; /* avro-c counts the NUL */
                } else
                        avro_value_get_bytes(wv, &p, &len);
                if (!strcmp(rt, "bytes"))
                        return sbx_bytes_to_json(p, len);
                s = json_stringn(p ? p : "", len);
                return s ? s : bad(x, "string is not valid UTF-8");
        }
        case AVRO_FIXED: {
                const void *p = NULL;
                size_t len = 0;
                avro_value_get_fixed(wv, &p, &len);
                if ((json_int_t)len !=
                    json_integer_value(json_object_get(rnode, "size")))
                        return bad(x, "fixed sizes differ");
                return sbx_bytes_to_json(p, len);
        }
        case AVRO_ENUM: {
                int idx = 0;
                const char *sym;
                const json_t *syms = json_object_get(rnode, "symbols");
                const json_t *dflt = json_object_get(rnode, "default");
                avro_value_get_enum(wv, &idx);
                sym = avro_schema_enum_get(avro_value_get_schema(wv), idx);
                for (i = 0; sym && i < json_array_size(syms); i++)
                        if (!strcmp(sym,
                                    json_string_value(json_array_get(syms, i))))
                                return json_string(sym);
                if (json_is_string(dflt))
                        return json_copy((json_t *)dflt);
                return bad(x, "enum symbol unknown to the reader");
        }
        case AVRO_ARRAY: {
                json_t *a;
                if (avro_value_get_size(wv, &n))
                        return bad(x, "avro-c: no size for an array");
                a = json_array();
                for (i = 0; i < n; i++) {
                        avro_value_t child;
                        json_t *v;
                        avro_value_get_by_index(wv, i, &child, NULL);
                        v = res(x, json_object_get(rnode, "items"), ns, &child,
                                depth + 1);
                        if (!v) {
                                json_decref(a);
                                return NULL;
                        }
                        json_array_append_new(a, v);
                }
                return a;
        }
        case AVRO_MAP: {
                json_t *m;
                if (avro_value_get_size(wv, &n))
                        return bad(x, "avro-c: no size for a map");
                m = json_object();
                for (i = 0; i < n; i++) {
                        avro_value_t child;
                        const char *key = NULL;
                        json_t *v;
                        avro_value_get_by_index(wv, i, &child, &key);
                        v = res(x, json_object_get(rnode, "values"), ns, &child,
                                depth + 1);
                        if (!v || !key || json_object_set_new(m, key, v)) {
                                json_decref(m);
                                return v ? bad(x, "map key is not valid "
                                                  "UTF-8")
                                         : NULL;
                        }
                }
                return m;
        }
        case AVRO_RECORD:
                return res_record(x, rnode, ns, wv, depth);
        default:
                return bad(x, "unsupported writer type");
        }
}

sbx_err_t sbx_resolve(const sbx_schema_t *r, avro_value_t *wv,
                      json_t **ret_value, char *errstr, size_t errstr_size)
{
        res_t x;
        json_t *v;

        memset(&x, 0, sizeof(x));
        x.r = r;
        x.errstr = errstr;
        x.errstr_size = errstr_size;
        v = res(&x, r->json, "", wv, 0);
        if (!v)
                return x.err ? x.err
                             : sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                          "the value cannot be resolved");
        *ret_value = v;
        return SBX_OK;
}
