/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Parser and validator of policy files (keys in policy.h). Each line is
 * checked as it is read (known key, set once, well-formed value) against
 * one table of fields per section; what refers to something else (a
 * tenant's classes, a class's templates, a profile or runtime in a list)
 * is resolved once the whole file is read, so declaration order does not
 * matter, and reported at the line of the key that made the reference. A
 * policy is either entirely valid or not returned at all.
 */
#include "core/policy.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kv.h"
#include "core/util.h"

#define MAX_TTL        (365.0 * 86400)
#define MAX_LIST_ITEMS 256

struct sbx_policy_s {
        sbx_policy_class_t **classes;
        size_t nclasses;
        sbx_policy_tenant_t **tenants;
        size_t ntenants;
        sbx_policy_risk_t risks[SBX_RISK__CNT];
        sbx_policy_list_t templates, network_profiles, runtimes;
        int64_t default_ttl_seconds, max_ttl_seconds;
};

typedef struct seen_s {
        char *key;
        int line;
} seen_t;

typedef struct pctx_s {
        sbx_policy_t *p;
        const char *name;
        seen_t *seen;
        size_t nseen;
} pctx_t;

/* A settable field: its kind, whether it must be set, where it lives in
 * its section's struct, and its bounds (a decimal is in (0, max]). */
typedef enum kind_e { F_DEC, F_INT, F_BOOL, F_LIST, F_RISK } kind_t;

typedef struct field_s {
        const char *name;
        kind_t kind;
        int required;
        size_t off;
        double min, max;
} field_t;

/* clang-format off */
#define FIELD(type, f, kind, req, min, max) \
        {#f, kind, req, offsetof(type, f), min, max}
#define G(f, kind, min, max)    FIELD(sbx_policy_t, f, kind, 0, min, max)
#define C(f, kind, req, mn, mx) FIELD(sbx_policy_class_t, f, kind, req, mn, mx)
#define T(f, kind, req, mn, mx) FIELD(sbx_policy_tenant_t, f, kind, req, mn, mx)
#define R(f)                    FIELD(sbx_policy_risk_t, f, F_LIST, 0, 0, 0)
#define END                     {NULL, F_INT, 0, 0, 0, 0}

static const field_t global_fields[] = {
        G(templates,           F_LIST, 0, 0),
        G(network_profiles,    F_LIST, 0, 0),
        G(runtimes,            F_LIST, 0, 0),
        G(default_ttl_seconds, F_INT,  1, MAX_TTL),
        G(max_ttl_seconds,     F_INT,  1, MAX_TTL),
        END};
static const field_t class_fields[] = {
        C(cpu,       F_DEC,  1, 0,  4096),
        C(memory_mb, F_INT,  1, 1,  4294967296.0),
        C(disk_gb,   F_INT,  1, 1,  1048576),
        C(pids,      F_INT,  0, 16, 4194304),
        C(gpus,      F_INT,  0, 0,  64),
        C(browser,   F_BOOL, 0, 0,  0),
        C(templates, F_LIST, 0, 0,  0),
        C(workloads, F_LIST, 0, 0,  0),
        END};
static const field_t tenant_fields[] = {
        {"classes", F_LIST, 1, offsetof(sbx_policy_tenant_t, class_names), 0, 0},
        T(max_cpu,          F_DEC,  1, 0, 1e6),
        T(max_memory_mb,    F_INT,  1, 1, 1099511627776.0),
        T(max_sandboxes,    F_INT,  1, 0, 1e6),
        T(network_profiles, F_LIST, 0, 0, 0),
        T(max_risk,         F_RISK, 0, 0, 0),
        T(max_ttl_seconds,  F_INT,  0, 1, MAX_TTL),
        END};
static const field_t risk_fields[] = {
        R(runtimes),
        R(network_profiles),
        END};
/* clang-format on */

static const char *const risk_names[SBX_RISK__CNT] = {"low", "medium", "high"};

int sbx_risk_by_name(const char *name)
{
        int i;
        for (i = 0; name && i < SBX_RISK__CNT; i++)
                if (!strcmp(risk_names[i], name))
                        return i;
        return -1;
}

const char *sbx_risk_name(sbx_risk_t r)
{
        return (unsigned)r < SBX_RISK__CNT ? risk_names[r] : "?";
}

static void list_free(sbx_policy_list_t *l)
{
        size_t i;
        for (i = 0; i < l->n; i++)
                free(l->v[i]);
        free(l->v);
        l->v = NULL;
        l->n = 0;
}

static void list_add(sbx_policy_list_t *l, const char *item)
{
        l->v         = sbx_realloc(l->v, (l->n + 1) * sizeof(*l->v));
        l->v[l->n++] = sbx_strdup(item);
}

int sbx_policy_list_has(const sbx_policy_list_t *list, const char *item)
{
        size_t i;
        for (i = 0; i < list->n; i++)
                if (!strcmp(list->v[i], item))
                        return 1;
        return 0;
}

static int token_ok(const char *s, const char *extra)
{
        if (!*s)
                return 0;
        for (; *s; s++)
                if (!isalnum((unsigned char)*s) && !strchr(extra, *s))
                        return 0;
        return 1;
}

/* A comma-separated list of distinct, non-empty tokens into an empty @l. */
static sbx_err_t parse_list(const char *value,
                            sbx_policy_list_t *l,
                            char *errstr,
                            size_t errstr_size)
{
        char *copy    = sbx_strdup(value), *item, *next;
        sbx_err_t err = SBX_OK;

        for (item = copy; item && !err; item = next) {
                next = strchr(item, ',');
                if (next)
                        *next++ = '\0';
                item = sbx_strtrim(item);
                if (!token_ok(item, "._:@/+-"))
                        err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                         "list item '%s' is empty or holds "
                                         "a character other than letters, "
                                         "digits and ._:@/+-",
                                         item);
                else if (sbx_policy_list_has(l, item))
                        err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                         "'%s' listed twice", item);
                else if (l->n == MAX_LIST_ITEMS)
                        err = sbx_seterr(errstr, errstr_size, SBX_ERR_TOOBIG,
                                         "more than %d items", MAX_LIST_ITEMS);
                else
                        list_add(l, item);
        }
        free(copy);
        if (err)
                list_free(l);
        return err;
}

/* A decimal like "4" or "0.5" in (0, max]: no sign, exponent, hex, inf. */
static int parse_decimal(const char *value, double max, double *ret)
{
        const char *s = value;
        double v;

        if (!isdigit((unsigned char)*s))
                return -1;
        while (isdigit((unsigned char)*s))
                s++;
        if (*s == '.' && isdigit((unsigned char)s[1]))
                for (s++; isdigit((unsigned char)*s);)
                        s++;
        v = strtod(value, NULL);
        if (*s || !(v > 0) || v > max)
                return -1;
        *ret = v;
        return 0;
}

static sbx_err_t set_field(const field_t *f,
                           void *obj,
                           const char *value,
                           char *errstr,
                           size_t errstr_size)
{
        void *dst = (char *)obj + f->off;
        long long v;
        int r;

        switch (f->kind) {
        case F_DEC:
                if (!parse_decimal(value, f->max, dst))
                        return SBX_OK;
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "%s must be a number in (0, %g], not '%s'",
                                  f->name, f->max, value);
        case F_INT:
                if (sbx_kv_int(value, (long long)f->min, (long long)f->max, &v))
                        return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                          "%s must be an integer in "
                                          "%lld..%lld, not '%s'",
                                          f->name, (long long)f->min,
                                          (long long)f->max, value);
                *(int64_t *)dst = v;
                return SBX_OK;
        case F_BOOL:
                if (strcmp(value, "true") && strcmp(value, "false"))
                        return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                          "%s must be true or false, not "
                                          "'%s'",
                                          f->name, value);
                *(int *)dst = !strcmp(value, "true");
                return SBX_OK;
        case F_LIST:
                return parse_list(value, dst, errstr, errstr_size);
        case F_RISK:
                if ((r = sbx_risk_by_name(value)) < 0)
                        return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                          "%s must be low, medium or high, "
                                          "not '%s'",
                                          f->name, value);
                *(sbx_risk_t *)dst = (sbx_risk_t)r;
                return SBX_OK;
        }
        return SBX_ERR_INVALID;
}

static sbx_policy_class_t *class_get(sbx_policy_t *p,
                                     const char *name,
                                     int line)
{
        sbx_policy_class_t *c = (sbx_policy_class_t *)sbx_policy_class(p, name);
        if (c)
                return c;
        c       = sbx_calloc(1, sizeof(*c));
        c->name = sbx_strdup(name);
        c->line = line;
        c->pids = 1024;
        p->classes =
            sbx_realloc(p->classes, (p->nclasses + 1) * sizeof(*p->classes));
        p->classes[p->nclasses++] = c;
        return c;
}

static sbx_policy_tenant_t *tenant_get(sbx_policy_t *p,
                                       const char *id,
                                       int line)
{
        sbx_policy_tenant_t *t =
            (sbx_policy_tenant_t *)sbx_policy_tenant(p, id);
        if (t)
                return t;
        t           = sbx_calloc(1, sizeof(*t));
        t->id       = sbx_strdup(id);
        t->index    = p->ntenants;
        t->line     = line;
        t->max_risk = SBX_RISK_HIGH;
        p->tenants =
            sbx_realloc(p->tenants, (p->ntenants + 1) * sizeof(*p->tenants));
        p->tenants[p->ntenants++] = t;
        return t;
}

/* The object a "<prefix><name>.<field>" key sets, or NULL with a reason. */
static void *key_object(pctx_t *c,
                        const field_t *fields,
                        const char *name,
                        int line,
                        char *errstr,
                        size_t errstr_size)
{
        int r;

        if (fields == global_fields)
                return c->p;
        if (fields == risk_fields) {
                if ((r = sbx_risk_by_name(name)) >= 0)
                        return &c->p->risks[r];
                sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                           "unknown risk level '%s' (low, medium, high)", name);
                return NULL;
        }
        if (!token_ok(name, "_-")) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                           "bad name '%s' (letters, digits, '-', '_')", name);
                return NULL;
        }
        if (fields == class_fields)
                return class_get(c->p, name, line);
        return tenant_get(c->p, name, line);
}

static sbx_err_t policy_kv(const char *key,
                           const char *value,
                           int line,
                           void *opaque,
                           char *errstr,
                           size_t errstr_size)
{
        static const struct {
                const char *prefix;
                const field_t *fields;
        } sections[] = {{"class.", class_fields},
                        {"tenant.", tenant_fields},
                        {"risk.", risk_fields},
                        {"", global_fields}};
        pctx_t *c    = opaque;
        const field_t *fields, *f;
        const char *field = key, *dot;
        char *name        = NULL;
        size_t i          = 0, n;
        void *obj;
        sbx_err_t err;

        while (strncmp(key, sections[i].prefix, strlen(sections[i].prefix)))
                i++;
        fields = sections[i].fields;
        if ((n = strlen(sections[i].prefix))) {
                dot = strrchr(key + n, '.');
                if (!dot || dot == key + n)
                        goto unknown;
                name  = sbx_strndup(key + n, (size_t)(dot - key - n));
                field = dot + 1;
        }
        for (f = fields; f->name && strcmp(f->name, field);)
                f++;
        if (!f->name)
                goto unknown;
        for (i = 0; i < c->nseen; i++)
                if (!strcmp(c->seen[i].key, key)) {
                        err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                         "'%s' set twice (first at line %d)",
                                         key, c->seen[i].line);
                        goto done;
                }
        c->seen = sbx_realloc(c->seen, (c->nseen + 1) * sizeof(*c->seen));
        c->seen[c->nseen].key    = sbx_strdup(key);
        c->seen[c->nseen++].line = line;
        obj = key_object(c, fields, name, line, errstr, errstr_size);
        err = obj ? set_field(f, obj, value, errstr, errstr_size)
                  : SBX_ERR_INVALID;
        goto done;
unknown:
        err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                         "unknown key '%s' (see the key reference in "
                         "deploy/policy/default.conf)",
                         key);
done:
        free(name);
        return err;
}

/* The line of key <prefix><name>.<field> (or <prefix><field>), or 0. */
static int key_line(const pctx_t *c,
                    const char *prefix,
                    const char *name,
                    const char *field)
{
        size_t i, lp = strlen(prefix), ln = name ? strlen(name) : 0;
        for (i = 0; i < c->nseen; i++) {
                const char *k = c->seen[i].key;
                if (strncmp(k, prefix, lp))
                        continue;
                k += lp;
                if (name && (strncmp(k, name, ln) || k[ln] != '.'))
                        continue;
                if (!strcmp(name ? k + ln + 1 : k, field))
                        return c->seen[i].line;
        }
        return 0;
}

static sbx_err_t __attribute__((format(printf, 5, 6)))
fail_at(const pctx_t *c,
        int line,
        char *errstr,
        size_t errstr_size,
        const char *fmt,
        ...)
{
        char msg[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (line > 0)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "%s:%d: %s", c->name, line, msg);
        return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID, "%s: %s",
                          c->name, msg);
}

/* The first required field of <prefix><name> that is not set, or NULL. */
static const char *missing(const pctx_t *c,
                           const field_t *f,
                           const char *prefix,
                           const char *name)
{
        for (; f->name; f++)
                if (f->required && !key_line(c, prefix, name, f->name))
                        return f->name;
        return NULL;
}

/*
 * Every item of list <prefix><name>.<field> (@l) must be in @known, the
 * list of top-level key @catalogue.
 */
static sbx_err_t check_refs(const pctx_t *c,
                            const sbx_policy_list_t *l,
                            const char *prefix,
                            const char *name,
                            const char *field,
                            const sbx_policy_list_t *known,
                            const char *catalogue,
                            char *errstr,
                            size_t errstr_size)
{
        size_t i;
        for (i = 0; i < l->n; i++)
                if (!sbx_policy_list_has(known, l->v[i]))
                        return fail_at(c, key_line(c, prefix, name, field),
                                       errstr, errstr_size,
                                       "%.*s %s: %s: '%s' is not declared in "
                                       "%s",
                                       (int)strlen(prefix) - 1, prefix, name,
                                       field, l->v[i], catalogue);
        return SBX_OK;
}

static int class_ptr_cmp(const void *a, const void *b)
{
        return sbx_policy_class_cmp(*(const sbx_policy_class_t *const *)a,
                                    *(const sbx_policy_class_t *const *)b);
}

static sbx_err_t validate_tenant(pctx_t *c,
                                 sbx_policy_tenant_t *t,
                                 char *errstr,
                                 size_t errstr_size)
{
        const sbx_policy_class_t *small;
        const char *m = missing(c, tenant_fields, "tenant.", t->id);
        size_t i;

        if (m)
                return fail_at(c, t->line, errstr, errstr_size,
                               "tenant %s has no %s", t->id, m);
        t->classes = sbx_calloc(t->class_names.n, sizeof(*t->classes));
        for (i = 0; i < t->class_names.n; i++) {
                t->classes[i] = sbx_policy_class(c->p, t->class_names.v[i]);
                if (!t->classes[i])
                        return fail_at(
                            c, key_line(c, "tenant.", t->id, "classes"), errstr,
                            errstr_size, "tenant %s: unknown class '%s'", t->id,
                            t->class_names.v[i]);
                t->nclasses++;
        }
        qsort(t->classes, t->nclasses, sizeof(*t->classes), class_ptr_cmp);
        small = t->classes[0];
        if (!t->network_profiles.n)
                list_add(&t->network_profiles, "none");
        if (!t->max_ttl_seconds)
                t->max_ttl_seconds = c->p->max_ttl_seconds;
        if (t->max_sandboxes > 0 &&
            (small->cpu > t->max_cpu || small->memory_mb > t->max_memory_mb))
                return fail_at(c, key_line(c, "tenant.", t->id, "max_cpu"),
                               errstr, errstr_size,
                               "tenant %s: max_cpu %g / max_memory_mb %lld "
                               "cannot hold its smallest class %s (%g CPU / "
                               "%lld MB)",
                               t->id, t->max_cpu, (long long)t->max_memory_mb,
                               small->name, small->cpu,
                               (long long)small->memory_mb);
        return check_refs(c, &t->network_profiles, "tenant.", t->id,
                          "network_profiles", &c->p->network_profiles,
                          "network_profiles", errstr, errstr_size);
}

static sbx_err_t validate(pctx_t *c, char *errstr, size_t errstr_size)
{
        static const char *const default_runtimes[SBX_RISK__CNT] = {
            "runc, runsc", "runc, runsc", "runsc"};
        sbx_policy_t *p = c->p;
        sbx_err_t err   = SBX_OK;
        const char *m;
        size_t i;
        int r;

        if (!p->templates.n)
                list_add(&p->templates, "host");
        if (!sbx_policy_list_has(&p->network_profiles, "none"))
                list_add(&p->network_profiles, "none");
        if (!p->runtimes.n)
                parse_list("runc, runsc", &p->runtimes, NULL, 0);
        if (p->default_ttl_seconds > p->max_ttl_seconds)
                return fail_at(c, key_line(c, "", NULL, "default_ttl_seconds"),
                               errstr, errstr_size,
                               "default_ttl_seconds %lld exceeds "
                               "max_ttl_seconds %lld",
                               (long long)p->default_ttl_seconds,
                               (long long)p->max_ttl_seconds);
        if (!p->nclasses)
                return fail_at(c, 0, errstr, errstr_size,
                               "no class declared (class.<name>.cpu = ...)");
        for (i = 0; i < p->nclasses && !err; i++) {
                sbx_policy_class_t *k = p->classes[i];
                if ((m = missing(c, class_fields, "class.", k->name)))
                        return fail_at(c, k->line, errstr, errstr_size,
                                       "class %s has no %s", k->name, m);
                if (!k->templates.n)
                        list_add(&k->templates, p->templates.v[0]);
                err =
                    check_refs(c, &k->templates, "class.", k->name, "templates",
                               &p->templates, "templates", errstr, errstr_size);
        }
        for (r = 0; r < SBX_RISK__CNT && !err; r++) {
                sbx_policy_risk_t *rk = &p->risks[r];
                if (!rk->runtimes.n)
                        parse_list(default_runtimes[r], &rk->runtimes, NULL, 0);
                if (!(err = check_refs(c, &rk->runtimes, "risk.", risk_names[r],
                                       "runtimes", &p->runtimes, "runtimes",
                                       errstr, errstr_size)))
                        err = check_refs(
                            c, &rk->network_profiles, "risk.", risk_names[r],
                            "network_profiles", &p->network_profiles,
                            "network_profiles", errstr, errstr_size);
        }
        if (!err && !p->ntenants)
                return fail_at(c, 0, errstr, errstr_size,
                               "no tenant declared (tenant.<id>.classes = "
                               "...)");
        for (i = 0; i < p->ntenants && !err; i++)
                err = validate_tenant(c, p->tenants[i], errstr, errstr_size);
        return err;
}

/* Parses @text, or the file @name if @text is NULL, and validates it. */
static sbx_policy_t *parse(const char *name,
                           const char *text,
                           char *errstr,
                           size_t errstr_size)
{
        pctx_t c = {.p = sbx_calloc(1, sizeof(sbx_policy_t)), .name = name};
        sbx_err_t err;
        size_t i;

        c.p->default_ttl_seconds = 1800;
        c.p->max_ttl_seconds     = 14400;
        err                      = text
                                       ? sbx_kv_parse(name, text, policy_kv, &c, errstr, errstr_size)
                                       : sbx_kv_parse_file(name, policy_kv, &c, errstr, errstr_size);
        if (!err)
                err = validate(&c, errstr, errstr_size);
        for (i = 0; i < c.nseen; i++)
                free(c.seen[i].key);
        free(c.seen);
        if (err) {
                sbx_policy_destroy(c.p);
                return NULL;
        }
        return c.p;
}

sbx_policy_t *sbx_policy_parse(const char *name,
                               const char *text,
                               char *errstr,
                               size_t errstr_size)
{
        sbx_assert(text != NULL);
        return parse(name, text, errstr, errstr_size);
}

sbx_policy_t *sbx_policy_load(const char *path,
                              char *errstr,
                              size_t errstr_size)
{
        return parse(path, NULL, errstr, errstr_size);
}

void sbx_policy_destroy(sbx_policy_t *p)
{
        size_t i;
        int r;

        if (!p)
                return;
        for (i = 0; i < p->nclasses; i++) {
                list_free(&p->classes[i]->templates);
                list_free(&p->classes[i]->workloads);
                free(p->classes[i]->name);
                free(p->classes[i]);
        }
        for (i = 0; i < p->ntenants; i++) {
                list_free(&p->tenants[i]->class_names);
                list_free(&p->tenants[i]->network_profiles);
                free(p->tenants[i]->classes);
                free(p->tenants[i]->id);
                free(p->tenants[i]);
        }
        for (r = 0; r < SBX_RISK__CNT; r++) {
                list_free(&p->risks[r].runtimes);
                list_free(&p->risks[r].network_profiles);
        }
        list_free(&p->templates);
        list_free(&p->network_profiles);
        list_free(&p->runtimes);
        free(p->classes);
        free(p->tenants);
        free(p);
}

const sbx_policy_class_t *sbx_policy_class(const sbx_policy_t *p,
                                           const char *name)
{
        size_t i;
        for (i = 0; name && i < p->nclasses; i++)
                if (!strcmp(p->classes[i]->name, name))
                        return p->classes[i];
        return NULL;
}

const sbx_policy_class_t *const *sbx_policy_classes(const sbx_policy_t *p,
                                                    size_t *ret_n)
{
        *ret_n = p->nclasses;
        return (const sbx_policy_class_t *const *)p->classes;
}

const sbx_policy_tenant_t *sbx_policy_tenant(const sbx_policy_t *p,
                                             const char *id)
{
        size_t i;
        for (i = 0; id && i < p->ntenants; i++)
                if (!strcmp(p->tenants[i]->id, id))
                        return p->tenants[i];
        return NULL;
}

int sbx_policy_tenant_known(const sbx_policy_t *p, const char *id)
{
        return sbx_policy_tenant(p, id) != NULL;
}

size_t sbx_policy_tenant_count(const sbx_policy_t *p)
{
        return p->ntenants;
}

const sbx_policy_class_t *const *
sbx_policy_tenant_classes(const sbx_policy_t *p, const char *id, size_t *ret_n)
{
        const sbx_policy_tenant_t *t = sbx_policy_tenant(p, id);
        *ret_n                       = t ? t->nclasses : 0;
        return t ? t->classes : NULL;
}

int sbx_policy_tenant_allows_class(const sbx_policy_tenant_t *t,
                                   const char *name)
{
        size_t i;
        for (i = 0; name && i < t->nclasses; i++)
                if (!strcmp(t->classes[i]->name, name))
                        return 1;
        return 0;
}

int sbx_policy_tenant_allows_network(const sbx_policy_tenant_t *t,
                                     const char *profile)
{
        return profile && sbx_policy_list_has(&t->network_profiles, profile);
}

const sbx_policy_risk_t *sbx_policy_risk(const sbx_policy_t *p, sbx_risk_t r)
{
        sbx_assert((unsigned)r < SBX_RISK__CNT);
        return &p->risks[r];
}

int sbx_policy_network_known(const sbx_policy_t *p, const char *profile)
{
        return profile && sbx_policy_list_has(&p->network_profiles, profile);
}

int64_t sbx_policy_default_ttl(const sbx_policy_t *p)
{
        return p->default_ttl_seconds;
}

#define CMP(x, y) ((x) < (y) ? -1 : (x) > (y) ? 1 : 0)

int sbx_policy_class_cmp(const sbx_policy_class_t *a,
                         const sbx_policy_class_t *b)
{
        int d;
        if ((d = CMP(a->cpu, b->cpu)) ||
            (d = CMP(a->memory_mb, b->memory_mb)) ||
            (d = CMP(a->disk_gb, b->disk_gb)) || (d = CMP(a->gpus, b->gpus)) ||
            (d = CMP(a->browser, b->browser)))
                return d;
        return strcmp(a->name, b->name);
}
