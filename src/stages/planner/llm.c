/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The LLM planner's client: one POST {llm_url}/chat/completions to an
 * OpenAI-compatible endpoint asking for a ResourceIntent through
 * response_format json_schema, under one deadline for the whole call and a
 * cap on the answer's size. The answer is untrusted: it must parse, hold
 * only the schema's fields with the right types and sane ranges, or the
 * call fails with a reason and the planner falls back to its rules. CURL*
 * lives only in this file; curl_global_init() runs once per planner, in
 * sbx_planner_llm_new(), never per request.
 */
#include <curl/curl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "stages/planner/planner_int.h"

#define DEFAULT_TIMEOUT_MS 3000
#define MAX_TIMEOUT_MS     600000
#define PROMPT_TEXT_MAX    8192 /* bytes of task text sent */
#define PROMPT_ITEM_MAX    1024 /* bytes of one plan step / tool call */
#define PROMPT_ITEMS_MAX   64

struct sbx_llm_s {
        CURL *curl;
        int global_init;
        char *url, *model, *auth;
        int timeout_ms;
        json_t *schema;
};

static const char system_prompt[] =
    "You size sandboxes for AI-agent tasks. Answer with one JSON object, a "
    "ResourceIntent: workload (short name of the kind of work), "
    "resource_class (one of the classes below or null), cpu (cores), "
    "memory_mb, disk_gb, requires_browser, requires_gpu, network_profile "
    "(none, pypi-readonly, npm-github-web), template (host), runtime (runc, "
    "or runsc when risk is high), ttl_seconds (60..86400), confidence "
    "(0..1) and reason (one sentence naming the signals you used).\n"
    "Resource classes: python-small 1 CPU 2048 MB 10 GB (scripts, small "
    "data); python-ds 2 CPU 4096 MB 20 GB (pandas/numpy analysis); "
    "build-medium 4 CPU 8192 MB 30 GB (gcc/node/java builds); "
    "browser-medium 4 CPU 8192 MB 30 GB (Playwright, Chromium); "
    "compute-large 8 CPU 16384 MB 50 GB (large repositories, heavy "
    "compute). Ask for what the task needs, not more: a policy guard maps "
    "your answer onto these classes and refuses anything larger.\n"
    "The user message is JSON: the task (text, plan, tool_calls, "
    "languages, packages, sizes in MB, needs, network, risk), the "
    "deterministic rules planner's answer, and telemetry of past tasks "
    "with the same signature (peak memory quantiles, OOM rate); prefer "
    "telemetry over guessing.";

static const char intent_schema[] =
    "{\"type\":\"object\",\"additionalProperties\":false,"
    "\"required\":[\"workload\",\"resource_class\",\"cpu\",\"memory_mb\","
    "\"disk_gb\",\"requires_browser\",\"requires_gpu\",\"network_profile\","
    "\"template\",\"runtime\",\"ttl_seconds\",\"confidence\",\"reason\"],"
    "\"properties\":{"
    "\"workload\":{\"type\":\"string\"},"
    "\"resource_class\":{\"type\":[\"string\",\"null\"]},"
    "\"cpu\":{\"type\":\"number\",\"minimum\":0.1,\"maximum\":256},"
    "\"memory_mb\":{\"type\":\"integer\",\"minimum\":64,\"maximum\":1048576},"
    "\"disk_gb\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":65536},"
    "\"requires_browser\":{\"type\":\"boolean\"},"
    "\"requires_gpu\":{\"type\":\"boolean\"},"
    "\"network_profile\":{\"type\":\"string\"},"
    "\"template\":{\"type\":\"string\"},"
    "\"runtime\":{\"type\":\"string\",\"enum\":[\"runc\",\"runsc\"]},"
    "\"ttl_seconds\":{\"type\":\"integer\",\"minimum\":60,\"maximum\":86400},"
    "\"confidence\":{\"type\":\"number\",\"minimum\":0,\"maximum\":1},"
    "\"reason\":{\"type\":\"string\"}}}";

/* Printable ASCII only: no header injection, always valid JSON text. */
static int printable(const char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
                        return 0;
        return 1;
}

static struct curl_slist *add_header(struct curl_slist *l, const char *h)
{
        struct curl_slist *n = curl_slist_append(l, h);
        sbx_assert(n != NULL); /* allocation failure aborts */
        return n;
}

sbx_llm_t *sbx_planner_llm_new(const sbx_planner_conf_t *conf,
                               char *errstr,
                               size_t errstr_size)
{
        sbx_llm_t *l    = sbx_calloc(1, sizeof(*l));
        const char *url = conf->llm_url;
        size_t n;

        if (!url ||
            (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                           "planner: llm_url must be an http(s) URL, got '%s'",
                           url ? url : "");
                goto fail;
        }
        if (!conf->llm_model || !*conf->llm_model) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                           "planner: llm mode needs llm_model");
                goto fail;
        }
        if (!printable(conf->llm_model) || !printable(url) ||
            (conf->llm_api_key && !printable(conf->llm_api_key))) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                           "planner: llm_url, llm_model and llm_api_key must "
                           "be printable ASCII");
                goto fail;
        }
        l->timeout_ms = conf->llm_timeout_ms > 0 ? conf->llm_timeout_ms
                                                 : DEFAULT_TIMEOUT_MS;
        if (l->timeout_ms > MAX_TIMEOUT_MS)
                l->timeout_ms = MAX_TIMEOUT_MS;
        for (n = strlen(url); n > 0 && url[n - 1] == '/'; n--)
                ;
        l->url = sbx_strndup(url, n);
        sbx_planner_appendf(&l->url, "/chat/completions");
        l->model = sbx_strdup(conf->llm_model);
        if (conf->llm_api_key && *conf->llm_api_key)
                sbx_planner_appendf(&l->auth, "Authorization: Bearer %s",
                                    conf->llm_api_key);
        l->schema = json_loads(intent_schema, 0, NULL);
        sbx_assert(l->schema != NULL);
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                           "planner: curl_global_init failed");
                goto fail;
        }
        l->global_init = 1;
        if (!(l->curl = curl_easy_init())) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                           "planner: curl_easy_init failed");
                goto fail;
        }
        return l;
fail:
        sbx_planner_llm_destroy(l);
        return NULL;
}

void sbx_planner_llm_destroy(sbx_llm_t *l)
{
        if (!l)
                return;
        if (l->curl)
                curl_easy_cleanup(l->curl);
        if (l->global_init)
                curl_global_cleanup();
        free(l->url);
        free(l->model);
        free(l->auth);
        json_decref(l->schema);
        free(l);
}

/* At most @p max bytes of @p v (a string), cut at a UTF-8 boundary. */
static json_t *clip(const json_t *v, size_t max)
{
        const char *s = json_string_value(v);
        size_t n      = json_string_length(v);
        json_t *j;
        if (!s)
                return json_string("");
        if (n > max) {
                n = max;
                while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
                        n--;
        }
        j = json_stringn(s, n);
        return j ? j : json_string("");
}

static json_t *clip_or_null(const json_t *v)
{
        return json_is_string(v) ? clip(v, SBX_PLANNER_TOKEN_MAX) : json_null();
}

/* The task as sent to the LLM: known fields only, long strings clipped. */
static json_t *prompt_task(const json_t *t)
{
        static const char *const arrays[] = {"plan", "tool_calls", "languages"};
        static const char *const scalars[] = {
            "repo_size_mb",        "data_size_mb",  "workspace_size_mb",
            "expected_duration_s", "needs_browser", "needs_gpu",
            "needs_compile",       "network",       "risk"};
        json_t *o = json_object(), *a, *pk = json_array(), *v;
        size_t i, k;

        json_object_set_new(o, "text",
                            clip(json_object_get(t, "text"), PROMPT_TEXT_MAX));
        for (k = 0; k < SBX_ARRAY_SIZE(arrays); k++) {
                const json_t *in = json_object_get(t, arrays[k]);
                a                = json_array();
                for (i = 0; i < json_array_size(in) && i < PROMPT_ITEMS_MAX;
                     i++)
                        json_array_append_new(
                            a, clip(json_array_get(in, i), PROMPT_ITEM_MAX));
                json_object_set_new(o, arrays[k], a);
        }
        json_array_foreach(json_object_get(t, "packages"), i, v)
        {
                if (i >= PROMPT_ITEMS_MAX)
                        break;
                json_array_append_new(
                    pk, json_pack("{s:o, s:o, s:o}", "name",
                                  clip(json_object_get(v, "name"),
                                       SBX_PLANNER_TOKEN_MAX * 2),
                                  "ecosystem",
                                  clip(json_object_get(v, "ecosystem"),
                                       SBX_PLANNER_TOKEN_MAX),
                                  "constraint",
                                  clip(json_object_get(v, "constraint"),
                                       SBX_PLANNER_TOKEN_MAX)));
        }
        json_object_set_new(o, "packages", pk);
        for (k = 0; k < SBX_ARRAY_SIZE(scalars); k++) {
                v = json_object_get(t, scalars[k]);
                if (json_is_string(v))
                        json_object_set_new(o, scalars[k],
                                            clip(v, SBX_PLANNER_TOKEN_MAX));
                else if (json_is_integer(v) || json_is_boolean(v))
                        json_object_set(o, scalars[k], v);
        }
        return o;
}

static char *request_body(const sbx_llm_t *l,
                          const json_t *claim,
                          const sbx_rules_t *r,
                          const sbx_sizing_t *sz)
{
        json_t *user, *req, *tel = json_null();
        char *content, *body;

        if (sz && sz->samples)
                tel =
                    json_pack("{s:I, s:f, s:f, s:f, s:f}", "samples",
                              (json_int_t)sz->samples, "p50_memory_mb",
                              sz->p50_mem_mb, "p95_memory_mb", sz->p95_mem_mb,
                              "p95_cpu", sz->p95_cpu, "oom_rate", sz->oom_rate);
        user = json_pack(
            "{s:o, s:o, s:o, s:s, s:o, s:o}", "task",
            prompt_task(json_object_get(claim, "task")), "requested_class",
            clip_or_null(json_object_get(claim, "requested_class")),
            "network_profile",
            clip_or_null(json_object_get(claim, "network_profile")),
            "signature", r->signature, "rules", sbx_intent_to_json(&r->intent),
            "telemetry", tel);
        sbx_assert(user != NULL);
        content = json_dumps(user, JSON_COMPACT | JSON_SORT_KEYS);
        sbx_assert(content != NULL);
        req = json_pack(
            "{s:s, s:i, s:[{s:s, s:s}, {s:s, s:s}], s:{s:s, "
            "s:{s:s, s:b, s:O}}}",
            "model", l->model, "temperature", 0, "messages", "role", "system",
            "content", system_prompt, "role", "user", "content", content,
            "response_format", "type", "json_schema", "json_schema", "name",
            "ResourceIntent", "strict", 1, "schema", l->schema);
        sbx_assert(req != NULL);
        body = json_dumps(req, JSON_COMPACT);
        sbx_assert(body != NULL);
        json_decref(req);
        json_decref(user);
        free(content);
        return body;
}

typedef struct buf_s {
        char *data;
        size_t len;
        int overflow;
} buf_t;

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *opaque)
{
        buf_t *b = opaque;
        size_t n = size * nmemb;
        if (b->len + n > SBX_PLANNER_LLM_MAX) {
                b->overflow = 1;
                return 0;
        }
        b->data = sbx_realloc(b->data, b->len + n + 1);
        memcpy(b->data + b->len, ptr, n);
        b->len += n;
        b->data[b->len] = '\0';
        return n;
}

/* POSTs @p body; the answer's body in *b when the status is 200. */
static sbx_err_t post(sbx_llm_t *l,
                      const char *body,
                      buf_t *b,
                      char *errstr,
                      size_t errstr_size)
{
        char cerr[CURL_ERROR_SIZE] = "";
        struct curl_slist *hdrs    = NULL;
        CURLcode rc;
        long status   = 0;
        sbx_err_t err = SBX_OK;

        hdrs = add_header(hdrs, "Content-Type: application/json");
        hdrs = add_header(hdrs, "Accept: application/json");
        if (l->auth)
                hdrs = add_header(hdrs, l->auth);
        curl_easy_reset(l->curl);
        curl_easy_setopt(l->curl, CURLOPT_URL, l->url);
#if LIBCURL_VERSION_NUM >= 0x075500
        curl_easy_setopt(l->curl, CURLOPT_PROTOCOLS_STR, "http,https");
#else
        curl_easy_setopt(l->curl, CURLOPT_PROTOCOLS,
                         (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
        curl_easy_setopt(l->curl, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(l->curl, CURLOPT_TIMEOUT_MS, (long)l->timeout_ms);
        curl_easy_setopt(l->curl, CURLOPT_CONNECTTIMEOUT_MS,
                         (long)l->timeout_ms);
        curl_easy_setopt(l->curl, CURLOPT_HTTPHEADER, hdrs);
        curl_easy_setopt(l->curl, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(l->curl, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
        curl_easy_setopt(l->curl, CURLOPT_USERAGENT,
                         "sbx-planner/" SBX_VERSION);
        curl_easy_setopt(l->curl, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(l->curl, CURLOPT_WRITEDATA, b);
        curl_easy_setopt(l->curl, CURLOPT_ERRORBUFFER, cerr);
        rc = curl_easy_perform(l->curl);
        curl_easy_getinfo(l->curl, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_setopt(l->curl, CURLOPT_ERRORBUFFER, NULL);
        curl_easy_setopt(l->curl, CURLOPT_HTTPHEADER, NULL);
        curl_slist_free_all(hdrs);

        if (rc == CURLE_OPERATION_TIMEDOUT)
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_TIMEOUT,
                                 "llm timeout after %d ms", l->timeout_ms);
        else if (rc == CURLE_WRITE_ERROR && b->overflow)
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_TOOBIG,
                                 "llm answer larger than %d bytes",
                                 SBX_PLANNER_LLM_MAX);
        else if (rc != CURLE_OK)
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                 "llm unreachable: %s",
                                 cerr[0] ? cerr : curl_easy_strerror(rc));
        else if (status != 200)
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                 "llm HTTP %ld: %.120s", status,
                                 b->data ? b->data : "");
        return err;
}

sbx_err_t sbx_planner_llm_ask(sbx_llm_t *l,
                              const json_t *claim,
                              const sbx_rules_t *rules,
                              const sbx_sizing_t *sz,
                              sbx_intent_t *ret,
                              char *errstr,
                              size_t errstr_size)
{
        char *body = request_body(l, claim, rules, sz);
        const json_t *msg, *content, *refusal;
        json_t *root = NULL, *answer = NULL;
        json_error_t jerr;
        buf_t b = {0};
        sbx_err_t err;

        if ((err = post(l, body, &b, errstr, errstr_size)))
                goto done;
        err = SBX_ERR_INVALID;
        if (!(root = json_loadb(b.data ? b.data : "", b.len, 0, &jerr))) {
                sbx_seterr(errstr, errstr_size, err,
                           "llm answer invalid: not JSON (%s)", jerr.text);
                goto done;
        }
        msg = json_object_get(
            json_array_get(json_object_get(root, "choices"), 0), "message");
        content = json_object_get(msg, "content");
        refusal = json_object_get(msg, "refusal");
        if (json_is_string(refusal)) {
                sbx_seterr(errstr, errstr_size, err, "llm refused: %.200s",
                           json_string_value(refusal));
                goto done;
        }
        if (!json_is_string(content)) {
                sbx_seterr(errstr, errstr_size, err,
                           "llm answer invalid: no choices[0].message.content");
                goto done;
        }
        if (!(answer = json_loadb(json_string_value(content),
                                  json_string_length(content), 0, &jerr))) {
                sbx_seterr(errstr, errstr_size, err,
                           "llm answer invalid: content is not JSON (%s)",
                           jerr.text);
                goto done;
        }
        err = sbx_intent_from_json(answer, &rules->intent, ret, errstr,
                                   errstr_size);
done:
        json_decref(answer);
        json_decref(root);
        free(b.data);
        free(body);
        return err;
}
