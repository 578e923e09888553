/* SPDX-License-Identifier: Apache-2.0 */
#include "stages/pools.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/kv.h"
#include "core/util.h"

typedef struct parse_s {
        sbx_pools_t *p;
        const sbx_policy_t *policy;
        json_t *seen; /* "name.field" keys set */
} parse_t;

static sbx_pool_spec_t *spec_of(sbx_pools_t *p,
                                const char *name,
                                size_t len,
                                int line)
{
        size_t i;
        for (i = 0; i < p->n; i++)
                if (strlen(p->v[i].name) == len &&
                    !strncmp(p->v[i].name, name, len))
                        return &p->v[i];
        p->v = sbx_realloc(p->v, (p->n + 1) * sizeof(*p->v));
        memset(&p->v[p->n], 0, sizeof(p->v[0]));
        sbx_fmt(p->v[p->n].name, sizeof(p->v[0].name), "%.*s", (int)len, name);
        sbx_fmt(p->v[p->n].runtime, sizeof(p->v[0].runtime), "runc");
        sbx_fmt(p->v[p->n].tmpl, sizeof(p->v[0].tmpl), "host");
        p->v[p->n].buffer_min = 1;
        p->v[p->n].buffer_max = -1;
        p->v[p->n].pool_max   = 16;
        p->v[p->n].line       = line;
        return &p->v[p->n++];
}

static int name_ok(const char *s, size_t n)
{
        size_t i;
        if (n == 0 || n >= 64)
                return 0;
        for (i = 0; i < n; i++)
                if (!(s[i] == '-' || s[i] == '_' ||
                      (s[i] >= 'a' && s[i] <= 'z') ||
                      (s[i] >= 'A' && s[i] <= 'Z') ||
                      (s[i] >= '0' && s[i] <= '9')))
                        return 0;
        return 1;
}

static sbx_err_t on_kv(const char *key,
                       const char *value,
                       int line,
                       void *opaque,
                       char *e,
                       size_t es)
{
        parse_t *ps = opaque;
        const char *name, *dot, *field;
        sbx_pool_spec_t *s;
        long long n;
        int *dst;

        if (strncmp(key, "pool.", 5) || !(dot = strchr(key + 5, '.')))
                return sbx_seterr(e, es, SBX_ERR_INVALID,
                                  "unknown key '%s' (want pool.<name>.<field>)",
                                  key);
        name  = key + 5;
        field = dot + 1;
        if (!name_ok(name, (size_t)(dot - name)))
                return sbx_seterr(e, es, SBX_ERR_INVALID,
                                  "bad pool name in '%s'", key);
        if (json_object_get(ps->seen, key))
                return sbx_seterr(e, es, SBX_ERR_INVALID, "'%s' set twice",
                                  key);
        json_object_set_new(ps->seen, key, json_true());
        s = spec_of(ps->p, name, (size_t)(dot - name), line);
        if (!strcmp(field, "class")) {
                const sbx_policy_class_t *c =
                    sbx_policy_class(ps->policy, value);
                if (!c)
                        return sbx_seterr(e, es, SBX_ERR_INVALID,
                                          "unknown class '%s'", value);
                sbx_fmt(s->klass, sizeof(s->klass), "%s", value);
                s->cpu       = c->cpu;
                s->memory_mb = c->memory_mb;
                s->disk_gb   = c->disk_gb;
                s->pids      = c->pids;
                return SBX_OK;
        }
        if (!strcmp(field, "runtime")) {
                if (strcmp(value, "runc") && strcmp(value, "runsc"))
                        return sbx_seterr(e, es, SBX_ERR_INVALID,
                                          "runtime must be runc or runsc");
                sbx_fmt(s->runtime, sizeof(s->runtime), "%s", value);
                return SBX_OK;
        }
        if (!strcmp(field, "template")) {
                if (!name_ok(value, strlen(value)))
                        return sbx_seterr(e, es, SBX_ERR_INVALID,
                                          "bad template name '%s'", value);
                sbx_fmt(s->tmpl, sizeof(s->tmpl), "%s", value);
                return SBX_OK;
        }
        if (!strcmp(field, "buffer_min"))
                dst = &s->buffer_min;
        else if (!strcmp(field, "buffer_max"))
                dst = &s->buffer_max;
        else if (!strcmp(field, "pool_min"))
                dst = &s->pool_min;
        else if (!strcmp(field, "pool_max"))
                dst = &s->pool_max;
        else
                return sbx_seterr(e, es, SBX_ERR_INVALID, "unknown field '%s'",
                                  field);
        if (sbx_kv_int(value, 0, 100000, &n))
                return sbx_seterr(e, es, SBX_ERR_INVALID,
                                  "'%s' must be an integer 0..100000", key);
        *dst = (int)n;
        return SBX_OK;
}

static sbx_pools_t *finish(parse_t *ps, const char *name, char *e, size_t es)
{
        size_t i;
        for (i = 0; i < ps->p->n; i++) {
                sbx_pool_spec_t *s = &ps->p->v[i];
                if (s->buffer_max < 0)
                        s->buffer_max = s->buffer_min;
                if (!s->klass[0] || s->buffer_max < s->buffer_min ||
                    s->pool_max < s->pool_min || s->pool_max < s->buffer_min) {
                        sbx_seterr(e, es, SBX_ERR_INVALID, "%s:%d: pool %s: %s",
                                   name, s->line, s->name,
                                   !s->klass[0]
                                       ? "class is required"
                                       : "want buffer_min <= buffer_max, "
                                         "pool_min <= pool_max and "
                                         "buffer_min <= pool_max");
                        sbx_pools_destroy(ps->p);
                        return NULL;
                }
                sbx_fmt(s->key, sizeof(s->key), "%s/%s/%s", s->runtime,
                        s->klass, s->tmpl);
        }
        return ps->p;
}

/* Parses @p text, or the file @p name when @p text is NULL. */
static sbx_pools_t *parse(const char *name,
                          const char *text,
                          const sbx_policy_t *policy,
                          char *e,
                          size_t es)
{
        parse_t ps     = {sbx_calloc(1, sizeof(sbx_pools_t)), policy,
                          json_object()};
        sbx_pools_t *r = NULL;
        sbx_err_t err  = text ? sbx_kv_parse(name, text, on_kv, &ps, e, es)
                              : sbx_kv_parse_file(name, on_kv, &ps, e, es);
        if (err)
                sbx_pools_destroy(ps.p);
        else
                r = finish(&ps, name, e, es);
        json_decref(ps.seen);
        return r;
}

sbx_pools_t *sbx_pools_parse(const char *name,
                             const char *text,
                             const sbx_policy_t *policy,
                             char *e,
                             size_t es)
{
        return parse(name, text, policy, e, es);
}

sbx_pools_t *sbx_pools_load(const char *path,
                            const sbx_policy_t *policy,
                            char *e,
                            size_t es)
{
        return parse(path, NULL, policy, e, es);
}

void sbx_pools_destroy(sbx_pools_t *p)
{
        if (!p)
                return;
        free(p->v);
        free(p);
}

static int min_int(int a, int b)
{
        return a < b ? a : b;
}

int sbx_pool_delta(const sbx_pool_spec_t *s,
                   const sbx_pool_count_t *c,
                   int room)
{
        int buffer = c->ready + c->provisioning;
        if (buffer < s->buffer_min || c->total < s->pool_min) {
                int want = s->buffer_max - buffer;
                if (s->pool_min - c->total > want)
                        want = s->pool_min - c->total;
                want = min_int(want, s->pool_max - c->total);
                want = min_int(want, room);
                return want > 0 ? want : 0;
        }
        if (c->ready > s->buffer_max) {
                int retire =
                    min_int(c->ready - s->buffer_max, c->total - s->pool_min);
                return retire > 0 ? -retire : 0;
        }
        return 0;
}
