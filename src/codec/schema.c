/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Schema helpers for the codec walks: named-type lookup with Avro's
 * namespace rules, union shapes, error paths and the byte/code-point
 * mapping of Avro's JSON encoding. Everything here reads schemas that
 * sbx compiled in or a test registered; none of it reads message bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec_int.h"
#include "core/util.h"

static const char *const primitives[] = {"null",  "boolean", "int",
                                         "long",  "float",   "double",
                                         "bytes", "string"};

static int is_primitive(const char *t)
{
        size_t i;
        for (i = 0; i < SBX_ARRAY_SIZE(primitives); i++)
                if (!strcmp(t, primitives[i]))
                        return 1;
        return 0;
}

void sbx_path_push(sbx_path_t *p, const char *name, size_t *ret_saved)
{
        *ret_saved = p->len;
        if (p->len < sizeof(p->buf) - 1) {
                int n = snprintf(p->buf + p->len, sizeof(p->buf) - p->len,
                                 "%s%s", p->len ? "." : "", name);
                if (n > 0)
                        p->len += (size_t)n;
                if (p->len >= sizeof(p->buf))
                        p->len = sizeof(p->buf) - 1;
        }
}

void sbx_path_pop(sbx_path_t *p, size_t saved)
{
        p->len = saved;
        p->buf[saved] = '\0';
}

void sbx_schema_fullname(const json_t *node, const char *ns, char *out,
                         size_t out_size)
{
        const char *name = json_string_value(json_object_get(node, "name"));
        const char *nns = json_string_value(json_object_get(node, "namespace"));
        if (!name)
                name = "";
        if (strchr(name, '.'))
                snprintf(out, out_size, "%s", name);
        else if (nns && *nns)
                snprintf(out, out_size, "%s.%s", nns, name);
        else if (ns && *ns)
                snprintf(out, out_size, "%s.%s", ns, name);
        else
                snprintf(out, out_size, "%s", name);
}

const char *sbx_schema_type_of(const json_t *node)
{
        const json_t *t;
        if (json_is_string(node))
                return json_string_value(node);
        if (json_is_array(node))
                return "union";
        t = json_object_get(node, "type");
        if (json_is_string(t))
                return json_string_value(t);
        return "";
}

static int is_named_kind(const char *t)
{
        return !strcmp(t, "record") || !strcmp(t, "enum") ||
               !strcmp(t, "fixed");
}

const json_t *sbx_schema_deref(const sbx_schema_t *s, const json_t *type,
                               const char **ns)
{
        char full[512];
        int hops;

        for (hops = 0; hops < 64; hops++) {
                if (json_is_string(type)) {
                        const char *name = json_string_value(type);
                        const json_t *def;
                        if (is_primitive(name))
                                return type;
                        if (strchr(name, '.') || !*ns || !**ns)
                                snprintf(full, sizeof(full), "%s", name);
                        else
                                snprintf(full, sizeof(full), "%s.%s", *ns,
                                         name);
                        def = json_object_get(s->names, full);
                        if (!def)
                                def = json_object_get(s->names, name);
                        if (!def)
                                return NULL;
                        type = def;
                } else if (json_is_object(type)) {
                        const json_t *t = json_object_get(type, "type");
                        const char *tn = json_string_value(t);
                        if (tn && is_primitive(tn))
                                return t;
                        if (tn && is_named_kind(tn)) {
                                sbx_schema_fullname(type, *ns, full,
                                                    sizeof(full));
                                *ns = json_string_value(
                                    json_object_get(s->ns_of, full));
                                if (!*ns)
                                        *ns = "";
                                return type;
                        }
                        if (tn && (!strcmp(tn, "array") || !strcmp(tn, "map")))
                                return type;
                        if (!t)
                                return NULL;
                        type = t;
                } else
                        return type; /* union (array) */
        }
        return NULL;
}

int sbx_schema_nullable(const json_t *uni, size_t *ret_other)
{
        const json_t *a, *b;
        if (json_array_size(uni) != 2)
                return 0;
        a = json_array_get(uni, 0);
        b = json_array_get(uni, 1);
        if (json_is_string(a) && !strcmp(json_string_value(a), "null")) {
                *ret_other = 1;
                return !(json_is_string(b) &&
                         !strcmp(json_string_value(b), "null"));
        }
        if (json_is_string(b) && !strcmp(json_string_value(b), "null")) {
                *ret_other = 0;
                return 1;
        }
        return 0;
}

json_t *sbx_bytes_to_json(const void *buf, size_t len)
{
        const unsigned char *b = buf;
        char *u = sbx_malloc(len * 2 + 1);
        size_t i, n = 0;
        json_t *s;

        for (i = 0; i < len; i++) {
                if (b[i] < 0x80)
                        u[n++] = (char)b[i];
                else {
                        u[n++] = (char)(0xC0 | (b[i] >> 6));
                        u[n++] = (char)(0x80 | (b[i] & 0x3F));
                }
        }
        s = json_stringn(u, n);
        free(u);
        sbx_assert(s != NULL);
        return s;
}

int sbx_json_to_bytes(const json_t *s, unsigned char **ret_buf,
                      size_t *ret_len)
{
        const unsigned char *u = (const unsigned char *)json_string_value(s);
        size_t len = json_string_length(s), i, n = 0;
        unsigned char *out = sbx_malloc(len + 1);

        for (i = 0; i < len; i++) {
                if (u[i] < 0x80)
                        out[n++] = u[i];
                else if ((u[i] == 0xC2 || u[i] == 0xC3) && i + 1 < len &&
                         (u[i + 1] & 0xC0) == 0x80) {
                        out[n++] = (unsigned char)(((u[i] & 0x03) << 6) |
                                                   (u[i + 1] & 0x3F));
                        i++;
                } else {
                        free(out);
                        return -1;
                }
        }
        *ret_buf = out;
        *ret_len = n;
        return 0;
}
