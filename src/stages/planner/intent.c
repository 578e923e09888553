/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ResourceIntent between C and JSON. Writing produces exactly the
 * fields of schemas/ResourceIntent.avsc, so the codec accepts it. Reading
 * is for untrusted intents (an LLM's answer): every field must have the
 * schema's type and lie in a range a sandbox can have, unknown fields are
 * refused, and identifiers that later stages use as names (runtime,
 * template, network profile, class) must be plain tokens. A rejected
 * answer names the first field at fault, in schema order.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "stages/planner/planner_int.h"

#define WORKLOAD_MAX 128
#define REASON_MAX   1024

void sbx_intent_clear(sbx_intent_t *in)
{
        free(in->workload);
        free(in->resource_class);
        free(in->network_profile);
        free(in->template_name);
        free(in->runtime);
        free(in->reason);
        memset(in, 0, sizeof(*in));
}

static char *dup_or_null(const char *s)
{
        return s ? sbx_strdup(s) : NULL;
}

void sbx_intent_copy(sbx_intent_t *dst, const sbx_intent_t *src)
{
        sbx_intent_clear(dst);
        *dst                 = *src;
        dst->workload        = dup_or_null(src->workload);
        dst->resource_class  = dup_or_null(src->resource_class);
        dst->network_profile = dup_or_null(src->network_profile);
        dst->template_name   = dup_or_null(src->template_name);
        dst->runtime         = dup_or_null(src->runtime);
        dst->reason          = dup_or_null(src->reason);
}

json_t *sbx_intent_to_json(const sbx_intent_t *in)
{
        json_t *j = json_pack(
            "{s:s, s:o, s:f, s:I, s:I, s:b, s:b, s:s, s:s, s:s, s:I, s:f, "
            "s:s}",
            "workload", in->workload, "resource_class",
            in->resource_class ? json_string(in->resource_class) : json_null(),
            "cpu", in->cpu, "memory_mb", (json_int_t)in->memory_mb, "disk_gb",
            (json_int_t)in->disk_gb, "requires_browser", in->requires_browser,
            "requires_gpu", in->requires_gpu, "network_profile",
            in->network_profile, "template", in->template_name, "runtime",
            in->runtime, "ttl_seconds", (json_int_t)in->ttl_seconds,
            "confidence", in->confidence, "reason",
            in->reason ? in->reason : "");
        sbx_assert(j != NULL);
        return j;
}

static const char *const fields[] = {
    "workload", "resource_class",   "cpu",          "memory_mb",
    "disk_gb",  "requires_browser", "requires_gpu", "network_profile",
    "template", "runtime",          "ttl_seconds",  "confidence",
    "reason"};

static sbx_err_t bad(char *errstr, size_t errstr_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static sbx_err_t bad(char *errstr, size_t errstr_size, const char *fmt, ...)
{
        char why[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                          "llm answer invalid: %s", why);
}

int sbx_planner_is_token(const char *s, size_t max)
{
        size_t n = strlen(s), i;
        if (!n || n > max)
                return 0;
        for (i = 0; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') ||
                      (s[i] >= '0' && s[i] <= '9') || s[i] == '.' ||
                      s[i] == '_' || s[i] == '-'))
                        return 0;
        return 1;
}

/* A JSON integer, or a real with an integral value, in [lo, hi]. */
static sbx_err_t get_int(const json_t *j,
                         const char *name,
                         int64_t lo,
                         int64_t hi,
                         int64_t dflt,
                         int required,
                         int64_t *ret,
                         char *errstr,
                         size_t errstr_size)
{
        const json_t *v = json_object_get(j, name);
        double d;
        if (!v) {
                if (required)
                        return bad(errstr, errstr_size, "%s missing", name);
                *ret = dflt;
                return SBX_OK;
        }
        if (json_is_integer(v))
                d = (double)json_integer_value(v);
        else if (json_is_real(v) &&
                 floor(json_real_value(v)) == json_real_value(v))
                d = json_real_value(v);
        else
                return bad(errstr, errstr_size, "%s is not an integer", name);
        if (d < (double)lo || d > (double)hi)
                return bad(errstr, errstr_size,
                           "%s %.0f out of range %lld..%lld", name, d,
                           (long long)lo, (long long)hi);
        *ret = (int64_t)d;
        return SBX_OK;
}

static sbx_err_t get_num(const json_t *j,
                         const char *name,
                         double lo,
                         double hi,
                         double dflt,
                         int required,
                         double *ret,
                         char *errstr,
                         size_t errstr_size)
{
        const json_t *v = json_object_get(j, name);
        if (!v) {
                if (required)
                        return bad(errstr, errstr_size, "%s missing", name);
                *ret = dflt;
                return SBX_OK;
        }
        if (!json_is_number(v))
                return bad(errstr, errstr_size, "%s is not a number", name);
        if (!(json_number_value(v) >= lo && json_number_value(v) <= hi))
                return bad(errstr, errstr_size, "%s %g out of range %g..%g",
                           name, json_number_value(v), lo, hi);
        *ret = json_number_value(v);
        return SBX_OK;
}

static sbx_err_t get_bool(const json_t *j,
                          const char *name,
                          int dflt,
                          int *ret,
                          char *errstr,
                          size_t errstr_size)
{
        const json_t *v = json_object_get(j, name);
        if (v && !json_is_boolean(v))
                return bad(errstr, errstr_size, "%s is not a boolean", name);
        *ret = v ? json_is_true(v) : dflt;
        return SBX_OK;
}

/*
 * A string field: a token, or with @p free_text any string without NUL
 * (non-empty when 1, possibly empty when 2); null allowed if @p nullable.
 */
static sbx_err_t get_str(const json_t *j,
                         const char *name,
                         const char *dflt,
                         int required,
                         int nullable,
                         size_t max,
                         int free_text,
                         char **ret,
                         char *errstr,
                         size_t errstr_size)
{
        const json_t *v = json_object_get(j, name);
        const char *s;
        if (!v) {
                if (required)
                        return bad(errstr, errstr_size, "%s missing", name);
                *ret = dflt ? sbx_strdup(dflt) : NULL;
                return SBX_OK;
        }
        if (nullable && json_is_null(v)) {
                *ret = NULL;
                return SBX_OK;
        }
        if (!(s = json_string_value(v)))
                return bad(errstr, errstr_size, "%s is not a string", name);
        if (free_text ? json_string_length(v) > max ||
                            strlen(s) != json_string_length(v) ||
                            (free_text == 1 && !*s)
                      : !sbx_planner_is_token(s, max))
                return bad(errstr, errstr_size, "%s '%.64s' is not allowed",
                           name, s);
        *ret = sbx_strdup(s);
        return SBX_OK;
}

sbx_err_t sbx_intent_from_json(const json_t *j,
                               const sbx_intent_t *d,
                               sbx_intent_t *ret,
                               char *errstr,
                               size_t errstr_size)
{
        sbx_intent_t in = {0};
        const char *key;
        json_t *v;
        sbx_err_t err;
        size_t i;

        if (!json_is_object(j))
                return bad(errstr, errstr_size, "not a JSON object");
        if ((err = get_str(j, "workload", NULL, 1, 0, WORKLOAD_MAX, 1,
                           &in.workload, errstr, errstr_size)) ||
            (err = get_str(j, "resource_class", d->resource_class, 0, 1,
                           SBX_PLANNER_TOKEN_MAX, 0, &in.resource_class, errstr,
                           errstr_size)) ||
            (err = get_num(j, "cpu", SBX_PLANNER_CPU_MIN, SBX_PLANNER_CPU_MAX,
                           0, 1, &in.cpu, errstr, errstr_size)) ||
            (err = get_int(j, "memory_mb", SBX_PLANNER_MEM_MIN,
                           SBX_PLANNER_MEM_MAX, 0, 1, &in.memory_mb, errstr,
                           errstr_size)) ||
            (err = get_int(j, "disk_gb", 1, SBX_PLANNER_DISK_MAX, 0, 1,
                           &in.disk_gb, errstr, errstr_size)) ||
            (err = get_bool(j, "requires_browser", d->requires_browser,
                            &in.requires_browser, errstr, errstr_size)) ||
            (err = get_bool(j, "requires_gpu", d->requires_gpu,
                            &in.requires_gpu, errstr, errstr_size)) ||
            (err = get_str(j, "network_profile", d->network_profile, 0, 0,
                           SBX_PLANNER_TOKEN_MAX, 0, &in.network_profile,
                           errstr, errstr_size)) ||
            (err = get_str(j, "template", d->template_name, 0, 0,
                           SBX_PLANNER_TOKEN_MAX, 0, &in.template_name, errstr,
                           errstr_size)) ||
            (err =
                 get_str(j, "runtime", d->runtime, 0, 0, SBX_PLANNER_TOKEN_MAX,
                         0, &in.runtime, errstr, errstr_size)) ||
            (err = get_int(j, "ttl_seconds", SBX_PLANNER_TTL_MIN,
                           SBX_PLANNER_TTL_MAX, d->ttl_seconds, 0,
                           &in.ttl_seconds, errstr, errstr_size)) ||
            (err = get_num(j, "confidence", 0, 1, d->confidence, 0,
                           &in.confidence, errstr, errstr_size)) ||
            (err = get_str(j, "reason", "llm", 0, 0, REASON_MAX, 2, &in.reason,
                           errstr, errstr_size)))
                goto fail;
        if (strcmp(in.runtime, "runc") && strcmp(in.runtime, "runsc")) {
                err = bad(errstr, errstr_size,
                          "runtime '%s' is not runc or runsc", in.runtime);
                goto fail;
        }
        json_object_foreach((json_t *)j, key, v)
        {
                for (i = 0; i < SBX_ARRAY_SIZE(fields); i++)
                        if (!strcmp(key, fields[i]))
                                break;
                if (i == SBX_ARRAY_SIZE(fields)) {
                        err = bad(errstr, errstr_size, "unknown field '%.64s'",
                                  key);
                        goto fail;
                }
        }
        *ret = in;
        return SBX_OK;
fail:
        sbx_intent_clear(&in);
        return err;
}
