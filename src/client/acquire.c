/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Acquiring a sandbox: an AcquireSandbox request built field by field (or
 * from a JSON file), published keyed by its claim id, and the claim's
 * chain followed through its phases until it is bound, refused or failed.
 * The claim is new, so the client folds it from its first event exactly
 * as the stages do.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_int.h"
#include "core/util.h"

#define ACQUIRE_TIMEOUT_MS 120000

struct sbx_acquire_s {
        json_t *body; /* AcquireSandbox; its "task" is always an object */
};

sbx_acquire_t *sbx_acquire_new(const char *task_text)
{
        sbx_acquire_t *a = sbx_calloc(1, sizeof(*a));
        char uuid[37], claim[64];
        sbx_uuid(uuid);
        sbx_fmt(claim, sizeof(claim), "claim-%s", uuid);
        a->body = json_pack("{s:s, s:{}}", "claim_id", claim, "task");
        if (task_text)
                json_object_set_new(json_object_get(a->body, "task"), "text",
                                    json_string(task_text));
        return a;
}

void sbx_acquire_destroy(sbx_acquire_t *a)
{
        if (!a)
                return;
        json_decref(a->body);
        free(a);
}

const json_t *sbx_acquire_body(const sbx_acquire_t *a)
{
        return a->body;
}

const char *sbx_acquire_claim_id(const sbx_acquire_t *a)
{
        return json_string_value(json_object_get(a->body, "claim_id"));
}

/* How a field named by sbx_acquire_set() is stored. */
typedef enum kind_e { STR, INT, BOOL, APPEND, PACKAGE } kind_t;

static const struct field_s {
        const char *name; /* for sbx_acquire_set() */
        int in_task;      /* a Task field, else an AcquireSandbox one */
        const char *key;  /* the schema's name */
        kind_t kind;
} fields[] = {
    {"claim_id", 0, "claim_id", STR},
    {"snapshot_id", 0, "snapshot_id", STR},
    {"class", 0, "requested_class", STR},
    {"lease_seconds", 0, "lease_seconds", INT},
    {"ttl_seconds", 0, "ttl_seconds", INT},
    {"network_profile", 0, "network_profile", STR},
    {"secret_scope", 0, "secret_scope", STR},
    {"workspace_id", 0, "workspace_id", STR},
    {"project_id", 0, "project_id", STR},
    {"text", 1, "text", STR},
    {"risk", 1, "risk", STR},
    {"network", 1, "network", STR},
    {"repo_size_mb", 1, "repo_size_mb", INT},
    {"data_size_mb", 1, "data_size_mb", INT},
    {"workspace_size_mb", 1, "workspace_size_mb", INT},
    {"expected_duration_s", 1, "expected_duration_s", INT},
    {"needs_browser", 1, "needs_browser", BOOL},
    {"needs_gpu", 1, "needs_gpu", BOOL},
    {"needs_compile", 1, "needs_compile", BOOL},
    {"plan", 1, "plan", APPEND},
    {"tool_call", 1, "tool_calls", APPEND},
    {"language", 1, "languages", APPEND},
    {"package", 1, "packages", PACKAGE},
};

/* A PackageReq from "[ECOSYSTEM:]NAME[CONSTRAINT]", or NULL. */
static json_t *package(const char *v)
{
        const char *colon = strchr(v, ':'), *eco = "pip";
        size_t elen = 3, n;
        if (colon) {
                eco  = v;
                elen = (size_t)(colon - v);
                v    = colon + 1;
        }
        n = strcspn(v, "=<>!~@^ ");
        if (!n || elen != 3 ||
            (strncmp(eco, "pip", 3) && strncmp(eco, "npm", 3) &&
             strncmp(eco, "apt", 3)))
                return NULL;
        return json_pack("{s:s%, s:s%, s:s}", "name", v, n, "ecosystem", eco,
                         elen, "constraint", v + n);
}

sbx_err_t sbx_acquire_set(sbx_acquire_t *a,
                          const char *name,
                          const char *value,
                          char *errstr,
                          size_t errstr_size)
{
        const struct field_s *f = NULL;
        json_t *obj, *v = NULL;
        size_t i;

        for (i = 0; i < SBX_ARRAY_SIZE(fields); i++)
                if (!strcmp(fields[i].name, name))
                        f = &fields[i];
        if (!f)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "unknown acquire field '%s'", name);
        obj = f->in_task ? json_object_get(a->body, "task") : a->body;
        switch (f->kind) {
        case STR:
                v = json_string(value);
                break;
        case INT: {
                char *end;
                long long n;
                errno = 0;
                n     = strtoll(value, &end, 10);
                if (!errno && end != value && !*end)
                        v = json_integer(n);
                break;
        }
        case BOOL:
                if (!strcmp(value, "true") || !strcmp(value, "1"))
                        v = json_true();
                else if (!strcmp(value, "false") || !strcmp(value, "0"))
                        v = json_false();
                break;
        case APPEND:
        case PACKAGE:
                v = f->kind == APPEND ? json_string(value) : package(value);
                if (!v)
                        break;
                if (!json_is_array(json_object_get(obj, f->key)))
                        json_object_set_new(obj, f->key, json_array());
                json_array_append_new(json_object_get(obj, f->key), v);
                return SBX_OK;
        }
        if (!v)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "%s: bad value '%s'%s", name, value,
                                  f->kind == INT    ? " (want a whole number)"
                                  : f->kind == BOOL ? " (want true or false)"
                                                    : "");
        json_object_set_new(obj, f->key, v);
        return SBX_OK;
}

sbx_err_t sbx_acquire_set_json(sbx_acquire_t *a,
                               const char *text,
                               char *errstr,
                               size_t errstr_size)
{
        json_error_t jerr;
        json_t *j = json_loads(text, 0, &jerr), *task;

        if (!json_is_object(j)) {
                json_decref(j);
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "not a JSON object: %s (line %d)",
                                  j ? "another value" : jerr.text, jerr.line);
        }
        task = json_object_get(j, "task");
        if (task && !json_is_object(task)) {
                json_decref(j);
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "\"task\" is not an object");
        }
        if (task) {
                json_object_update(json_object_get(a->body, "task"), task);
                json_object_del(j, "task");
                json_object_update(a->body, j);
        } else
                json_object_update(json_object_get(a->body, "task"), j);
        json_decref(j);
        return SBX_OK;
}

sbx_err_t sbx_client_acquire_async(sbx_client_t *c,
                                   const sbx_acquire_t *a,
                                   char *errstr,
                                   size_t errstr_size)
{
        char rid[64];
        json_t *req  = sbx_client_request(c, "sbx.AcquireSandbox",
                                          json_deep_copy(a->body), rid);
        sbx_err_t rc = sbx_client_publish(c, req, sbx_acquire_claim_id(a),
                                          errstr, errstr_size);
        json_decref(req);
        return rc;
}

static int acquire_event(sbx_wait_t *w,
                         const sbx_event_t *ev,
                         const sbx_state_t *s)
{
        sbx_lease_t **ret = w->opaque;
        (void)ev;
        if (!s)
                return 0;
        if (sbx_streq(s->request_id, w->rid))
                w->accepted = 1;
        if (s->phase == SBX_CLAIM_BOUND) {
                sbx_lease_t *l =
                    sbx_lease_new(s->sandbox_id, s->lease_version, s->id);
                l->node_id    = s->node_id ? sbx_strdup(s->node_id) : NULL;
                l->expires_at = s->lease_expires_at;
                *ret          = l;
                return 1;
        }
        if (sbx_phase_terminal(SBX_AGG_CLAIM, s->phase))
                return sbx_seterr(w->errstr, w->errstr_size, SBX_ERR_FAILED,
                                  "claim %s %s: %s", s->id,
                                  sbx_phase_name(SBX_AGG_CLAIM, s->phase),
                                  s->reason ? s->reason : "no reason given");
        return 0;
}

sbx_err_t sbx_client_acquire(sbx_client_t *c,
                             const sbx_acquire_t *a,
                             int timeout_ms,
                             sbx_lease_t **ret_lease,
                             char *errstr,
                             size_t errstr_size)
{
        sbx_lease_t *lease = NULL;
        sbx_wait_t w;
        sbx_err_t rc;
        char what[128];

        memset(&w, 0, sizeof(w));
        sbx_fmt(what, sizeof(what), "claim %s to be bound",
                sbx_acquire_claim_id(a));
        w.c           = c;
        w.target      = sbx_acquire_claim_id(a);
        w.claim       = 1;
        w.what        = what;
        w.on_event    = acquire_event;
        w.opaque      = &lease;
        w.errstr      = errstr;
        w.errstr_size = errstr_size;
        rc = sbx_client_call(&w, "sbx.AcquireSandbox", json_deep_copy(a->body),
                             NULL,
                             timeout_ms > 0 ? timeout_ms : ACQUIRE_TIMEOUT_MS);
        if (rc) {
                sbx_lease_destroy(lease);
                return rc;
        }
        *ret_lease = lease;
        return SBX_OK;
}
