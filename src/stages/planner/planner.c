/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The planner's decide(): rules answer, resized by the signature's
 * telemetry, optionally replaced by a validated LLM answer, hashed and
 * wrapped into a PlanProposed event whose payload holds exactly the
 * schema's fields. The input hash is SHA-256 over a canonical JSON form of
 * what the planner was asked (task with every default filled in,
 * requested_class, network_profile; keys sorted, compact, ASCII-escaped),
 * so equal requests hash equal however they were encoded and any change
 * in them changes the hash.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "stages/planner/planner_int.h"

struct sbx_planner_s {
        sbx_llm_t *llm; /* NULL in rules mode */
        sbx_tel_t *tel;
};

void sbx_planner_appendf(char **s, const char *fmt, ...)
{
        size_t old = *s ? strlen(*s) : 0;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(NULL, 0, fmt, ap);
        va_end(ap);
        sbx_assert(n >= 0);
        *s = sbx_realloc(*s, old + (size_t)n + 1);
        va_start(ap, fmt);
        vsnprintf(*s + old, (size_t)n + 1, fmt, ap);
        va_end(ap);
}

sbx_planner_t *sbx_planner_new(const sbx_planner_conf_t *conf,
                               char *errstr,
                               size_t errstr_size)
{
        sbx_planner_t *p = sbx_calloc(1, sizeof(*p));
        const char *mode = conf && conf->mode ? conf->mode : "rules";

        p->tel = sbx_planner_tel_new();
        if (!strcmp(mode, "llm")) {
                p->llm = sbx_planner_llm_new(conf, errstr, errstr_size);
                if (!p->llm)
                        goto fail;
        } else if (strcmp(mode, "rules")) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                           "planner: unknown mode '%s' (rules or llm)", mode);
                goto fail;
        }
        return p;
fail:
        sbx_planner_destroy(p);
        return NULL;
}

void sbx_planner_destroy(sbx_planner_t *p)
{
        if (!p)
                return;
        sbx_planner_llm_destroy(p->llm);
        sbx_planner_tel_destroy(p->tel);
        free(p);
}

void sbx_planner_observe(sbx_planner_t *p, const sbx_event_t *ev)
{
        sbx_assert(p && ev);
        sbx_planner_tel_observe(p->tel, ev);
}

size_t sbx_planner_stats(const sbx_planner_t *p,
                         sbx_planner_stats_t *out,
                         size_t max)
{
        sbx_assert(p);
        return sbx_planner_tel_stats(p->tel, out, max);
}

static json_t *str_or(const json_t *v, const char *dflt)
{
        return json_is_string(v) ? json_incref((json_t *)v) : json_string(dflt);
}

static json_t *strings(const json_t *a)
{
        json_t *o = json_array();
        size_t i;
        for (i = 0; i < json_array_size(a); i++)
                if (json_is_string(json_array_get(a, i)))
                        json_array_append(o, json_array_get(a, i));
        return o;
}

/* The task as the codec would decode it: every field, defaults filled. */
static json_t *canon_task(const json_t *t)
{
        static const char *const ints[]  = {"repo_size_mb", "data_size_mb",
                                            "workspace_size_mb",
                                            "expected_duration_s"};
        static const char *const bools[] = {"needs_browser", "needs_gpu",
                                            "needs_compile"};
        const json_t *pkgs               = json_object_get(t, "packages"), *pkg;
        json_t *o = json_object(), *po = json_array();
        size_t i;

        json_object_set_new(o, "text", str_or(json_object_get(t, "text"), ""));
        json_object_set_new(o, "plan", strings(json_object_get(t, "plan")));
        json_object_set_new(o, "tool_calls",
                            strings(json_object_get(t, "tool_calls")));
        json_object_set_new(o, "languages",
                            strings(json_object_get(t, "languages")));
        json_array_foreach(pkgs, i, pkg)
        {
                if (!json_is_string(json_object_get(pkg, "name")))
                        continue;
                json_array_append_new(
                    po,
                    json_pack("{s:O, s:o, s:o}", "name",
                              json_object_get(pkg, "name"), "ecosystem",
                              str_or(json_object_get(pkg, "ecosystem"), "pip"),
                              "constraint",
                              str_or(json_object_get(pkg, "constraint"), "")));
        }
        json_object_set_new(o, "packages", po);
        for (i = 0; i < SBX_ARRAY_SIZE(ints); i++)
                json_object_set_new(o, ints[i],
                                    json_integer(json_integer_value(
                                        json_object_get(t, ints[i]))));
        for (i = 0; i < SBX_ARRAY_SIZE(bools); i++)
                json_object_set_new(
                    o, bools[i],
                    json_boolean(json_is_true(json_object_get(t, bools[i]))));
        json_object_set_new(o, "network",
                            str_or(json_object_get(t, "network"), "none"));
        json_object_set_new(o, "risk",
                            str_or(json_object_get(t, "risk"), "medium"));
        return o;
}

static json_t *str_or_null(const json_t *v)
{
        return json_is_string(v) ? json_incref((json_t *)v) : json_null();
}

static void input_hash(const json_t *claim, char out[65])
{
        json_t *c = json_pack(
            "{s:o, s:o, s:o}", "task",
            canon_task(json_object_get(claim, "task")), "requested_class",
            str_or_null(json_object_get(claim, "requested_class")),
            "network_profile",
            str_or_null(json_object_get(claim, "network_profile")));
        char *s;

        sbx_assert(c != NULL);
        s = json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
        sbx_assert(s != NULL);
        sbx_planner_sha256_hex(s, strlen(s), out);
        free(s);
        json_decref(c);
}

static int64_t round_up(int64_t v, int64_t step)
{
        return (v + step - 1) / step * step;
}

/* Resizes the rules answer by the signature's telemetry. */
static void apply_telemetry(sbx_planner_t *p, sbx_rules_t *r, sbx_sizing_t *sz)
{
        sbx_intent_t *in = &r->intent;
        int64_t mem      = in->memory_mb;
        double cpu       = in->cpu;

        if (!sbx_planner_tel_sizing(p->tel, r->signature, sz))
                return;
        if (sz->samples >= SBX_PLANNER_MIN_SAMPLES) {
                mem = sz->memory_mb;
                if (sz->cpu > 0) /* else too few sustained execs */
                        cpu = sz->cpu;
                if (sz->confidence > in->confidence)
                        in->confidence = round(sz->confidence * 100) / 100;
        } else if (sz->memory_mb > mem) {
                mem = sz->memory_mb; /* too few samples, but it OOMed */
        }
        sbx_planner_appendf(
            &in->reason,
            "; telemetry: %ld sample%s, P95 %.0f MB %.2f CPU, OOM %.0f%%",
            sz->samples, sz->samples == 1 ? "" : "s", sz->p95_mem_mb,
            sz->p95_cpu, sz->oom_rate * 100);
        if (mem == in->memory_mb && cpu == in->cpu)
                return;
        if (sz->oom_alloc_mb)
                sbx_planner_appendf(
                    &in->reason, " → %g CPU %lld MB (OOM at %lld MB)", cpu,
                    (long long)mem, (long long)sz->oom_alloc_mb);
        else
                sbx_planner_appendf(&in->reason, " → %g CPU %lld MB (%s)", cpu,
                                    (long long)mem,
                                    mem < in->memory_mb   ? "lowered"
                                    : mem > in->memory_mb ? "raised"
                                                          : "cpu resized");
        in->memory_mb = round_up(mem, SBX_PLANNER_MEM_STEP);
        in->cpu       = cpu;
        free(in->resource_class);
        in->resource_class =
            sbx_strdup(sbx_planner_rules_class(r, in->cpu, in->memory_mb));
}

/* @p s with every byte outside printable ASCII replaced by '?'. */
static json_t *ascii_string(const char *s)
{
        char *c = sbx_strdup(s), *q;
        json_t *j;
        for (q = c; *q; q++)
                if ((unsigned char)*q < 0x20 || (unsigned char)*q > 0x7e)
                        *q = '?';
        j = json_string(c);
        free(c);
        return j;
}

sbx_event_t *sbx_planner_decide(sbx_planner_t *p,
                                const sbx_event_t *claim_requested,
                                int64_t next_seq,
                                const char *producer)
{
        const sbx_event_t *req = claim_requested;
        const char *planner    = "rules";
        char hash[65], fb[512] = "";
        sbx_intent_t llm_in = {0};
        sbx_sizing_t sz     = {0};
        sbx_rules_t r;
        sbx_event_t *ev;
        json_t *payload;

        sbx_assert(p && req && producer && next_seq >= 1);
        sbx_assert(req->type == SBX_EV_CLAIM_REQUESTED);

        sbx_planner_rules(req->payload, &r);
        apply_telemetry(p, &r, &sz);
        if (p->llm) {
                if (sbx_planner_llm_ask(p->llm, req->payload, &r, &sz, &llm_in,
                                        fb, sizeof(fb)) == SBX_OK) {
                        planner = "llm";
                        fb[0]   = '\0';
                        if (!strcmp(r.intent.runtime, "runsc") &&
                            strcmp(llm_in.runtime, "runsc")) {
                                /* Only the guard may weaken isolation. */
                                free(llm_in.runtime);
                                llm_in.runtime = sbx_strdup("runsc");
                                sbx_planner_appendf(&llm_in.reason,
                                                    " [runtime kept runsc: "
                                                    "risk high]");
                        }
                        sbx_intent_copy(&r.intent, &llm_in);
                } else if (!fb[0]) {
                        sbx_fmt(fb, sizeof(fb), "llm failed");
                }
        }
        input_hash(req->payload, hash);

        payload = json_pack(
            "{s:s, s:o, s:s, s:s, s:o}", "planner", planner, "fallback_reason",
            fb[0] ? ascii_string(fb) : json_null(), "input_hash", hash,
            "signature", r.signature, "intent", sbx_intent_to_json(&r.intent));
        sbx_assert(payload != NULL);
        ev = sbx_event_new(SBX_EV_PLAN_PROPOSED, req->aggregate_id, next_seq,
                           payload);
        sbx_event_set(&ev->producer, producer);
        sbx_event_set(&ev->tenant_id, req->tenant_id ? req->tenant_id : "");
        sbx_event_set(&ev->session_id, req->session_id);
        sbx_event_set(&ev->correlation_id, req->aggregate_id);
        sbx_event_set(&ev->causation_id, req->event_id);
        sbx_intent_clear(&llm_in);
        sbx_planner_rules_clear(&r);
        return ev;
}
