/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The client library's core: the client (config, codec, a producer of
 * requests), leases, the wait loop of client_int.h, and the commands that
 * intake answers with a single event (renew, release, pause, resume,
 * snapshot) or a short chain (destroy). A call never trusts that its
 * request did anything: it returns only what it read from the log.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_int.h"
#include "core/util.h"
#include "kafka/processor.h"

#define DEFAULT_TIMEOUT_MS 30000
#define POLL_MS            100

/* librdkafka logs to stderr; a client says what went wrong through its
 * calls instead, unless the config asks for librdkafka's log_level. */
static void quiet_kafka(sbx_config_t *config)
{
        size_t i;
        for (i = 0; i < config->nkafka_props; i++)
                if (!strcmp(config->kafka_props[i].name, "log_level"))
                        return;
        config->kafka_props =
            sbx_realloc(config->kafka_props, (config->nkafka_props + 1) *
                                                 sizeof(*config->kafka_props));
        config->kafka_props[config->nkafka_props].name =
            sbx_strdup("log_level");
        config->kafka_props[config->nkafka_props].value = sbx_strdup("2");
        config->nkafka_props++;
}

sbx_client_t *sbx_client_new(const char *tenant,
                             const char *config_path,
                             char *errstr,
                             size_t errstr_size)
{
        sbx_client_t *c;
        char err[1024];

        if (!tenant)
                tenant = getenv("SBX_TENANT");
        if (!tenant || !*tenant) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                           "no tenant: give one or set SBX_TENANT");
                return NULL;
        }
        c         = sbx_calloc(1, sizeof(*c));
        c->tenant = sbx_strdup(tenant);
        c->name   = sbx_strdup("sbx-client/" SBX_VERSION);
        if (sbx_config_load(config_path, &c->config, err, sizeof(err))) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID, "config: %s",
                           err);
                goto fail;
        }
        quiet_kafka(c->config);
        if (!(c->codec = sbx_codec_new(err, sizeof(err))) ||
            !(c->prod = sbx_kproducer_new(c->config, err, sizeof(err))) ||
            sbx_kproducer_prepare(c->prod, SBX_TOPIC_REQUESTS, err,
                                  sizeof(err))) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA, "broker %s: %s",
                           c->config->brokers, err);
                goto fail;
        }
        return c;
fail:
        sbx_client_destroy(c);
        return NULL;
}

void sbx_client_destroy(sbx_client_t *c)
{
        if (!c)
                return;
        sbx_kproducer_destroy(c->prod);
        sbx_codec_destroy(c->codec);
        sbx_config_destroy(c->config);
        free(c->tenant);
        free(c->session);
        free(c->user);
        free(c->name);
        free(c);
}

sbx_err_t sbx_client_set(sbx_client_t *c,
                         const char *name,
                         const char *value,
                         char *errstr,
                         size_t errstr_size)
{
        char **field = !strcmp(name, "session")  ? &c->session
                       : !strcmp(name, "user")   ? &c->user
                       : !strcmp(name, "client") ? &c->name
                                                 : NULL;
        if (!field)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "unknown client option '%s'", name);
        free(*field);
        *field = value ? sbx_strdup(value) : NULL;
        return SBX_OK;
}

void sbx_client_set_progress(sbx_client_t *c,
                             sbx_progress_cb_t cb,
                             void *opaque)
{
        c->progress        = cb;
        c->progress_opaque = opaque;
}

json_t *sbx_client_request(const sbx_client_t *c,
                           const char *name,
                           json_t *body,
                           char rid[64])
{
        char uuid[37];
        sbx_uuid(uuid);
        sbx_fmt(rid, 64, "req-%s", uuid);
        return json_pack(
            "{s:s, s:s, s:s?, s:s, s:s, s:I, s:{s:o}}", "request_id", rid,
            "tenant_id", c->tenant, "session_id", c->session, "user_id",
            c->user ? c->user : "", "client", c->name ? c->name : "",
            "occurred_at", (json_int_t)sbx_now_us(), "command", name, body);
}

sbx_err_t sbx_client_publish(sbx_client_t *c,
                             const json_t *req,
                             const char *key,
                             char *errstr,
                             size_t errstr_size)
{
        unsigned char *buf = NULL;
        size_t len         = 0;
        char err[1024];
        sbx_err_t rc = SBX_OK;

        if (sbx_codec_encode(c->codec, SBX_SCHEMA_REQUEST, req, &buf, &len, err,
                             sizeof(err)))
                rc = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                "request: %s", err);
        else if (sbx_kproducer_send_sync(c->prod, SBX_TOPIC_REQUESTS, key,
                                         strlen(key), buf, len, NULL, 0, 30000,
                                         NULL, NULL, err, sizeof(err)))
                rc = sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA,
                                "publish to %s: %s", SBX_TOPIC_REQUESTS, err);
        free(buf);
        return rc;
}

char *sbx_client_reasons(const sbx_event_t *ev)
{
        const json_t *a = json_object_get(ev->payload, "reasons");
        size_t i, n = 1;
        char *s;
        for (i = 0; i < json_array_size(a); i++)
                n += json_string_length(json_array_get(a, i)) + 2;
        s    = sbx_malloc(n);
        s[0] = '\0';
        for (i = 0; i < json_array_size(a); i++) {
                if (i)
                        strcat(s, "; ");
                strcat(s, json_string_value(json_array_get(a, i)));
        }
        return s;
}

/* A short human detail of an event for progress lines, or NULL. */
static const char *detail_of(const sbx_event_t *ev)
{
        static const char *const fields[] = {
            "reason",           "resource_class", "signature", "node_id",
            "runtime_instance", "level",          NULL};
        const json_t *reasons = json_object_get(ev->payload, "reasons");
        int i;
        if (json_array_size(reasons))
                return json_string_value(json_array_get(reasons, 0));
        for (i = 0; fields[i]; i++) {
                const char *s = sbx_event_str(ev, fields[i]);
                if (s && *s)
                        return s;
        }
        return NULL;
}

/* Is @p ev about the wait's target, and current? Folds a claim. */
static int relevant(sbx_wait_t *w, const sbx_event_t *ev)
{
        if (w->claim) {
                if (!strcmp(ev->aggregate_id, w->target))
                        return sbx_fold(w->state, ev) == SBX_FOLD_ACCEPTED;
                /* The sandbox serving the claim: progress only. */
                return !strcmp(ev->correlation_id, w->target) &&
                       ev->aggregate == SBX_AGG_SANDBOX;
        }
        if (strcmp(ev->aggregate_id, w->target))
                return 0;
        if (w->seen && ev->seq <= w->last_seq)
                return 0;
        w->last_seq = ev->seq;
        return 1;
}

/* One lifecycle message: 0 go on, 1 done, or an error. */
static int on_lifecycle(sbx_wait_t *w, const void *v, size_t len)
{
        sbx_client_t *c = w->c;
        sbx_event_t *ev = NULL;
        int r           = 0;

        if (sbx_event_decode(c->codec, v, len, &ev, NULL, 0))
                return 0;
        if (ev->type == SBX_EV_REQUEST_REJECTED &&
            !strcmp(ev->aggregate_id, w->rid)) {
                if (!w->rejection && !w->accepted) {
                        char *why    = sbx_client_reasons(ev);
                        w->rejection = why;
                        if (sbx_logreader_mark_end(w->reader, NULL, 0))
                                r = sbx_seterr(w->errstr, w->errstr_size,
                                               SBX_ERR_REJECTED, "rejected: %s",
                                               why);
                }
        } else if (relevant(w, ev)) {
                int is_claim = !strcmp(ev->aggregate_id, w->target) && w->claim;
                w->seen++;
                if (c->progress)
                        c->progress(
                            c->progress_opaque, ev->aggregate_id,
                            sbx_evtype_name(ev->type),
                            is_claim
                                ? sbx_phase_name(SBX_AGG_CLAIM, w->state->phase)
                                : NULL,
                            ev->producer, detail_of(ev), sbx_mono_us() - w->t0);
                r = w->on_event(w, ev, is_claim ? w->state : NULL);
        }
        sbx_event_destroy(ev);
        return r;
}

sbx_err_t sbx_client_call(sbx_wait_t *w,
                          const char *name,
                          json_t *body,
                          const char *other,
                          int timeout_ms)
{
        sbx_client_t *c            = w->c;
        const char *const topics[] = {SBX_TOPIC_LIFECYCLE, other, NULL};
        sbx_logreader_t *r;
        json_t *req;
        char err[1024];
        int rc = 0;

        r = sbx_logreader_new_topics(c->config, topics, 1, err, sizeof(err));
        if (!r) {
                json_decref(body);
                return sbx_seterr(w->errstr, w->errstr_size, SBX_ERR_KAFKA,
                                  "%s", err);
        }
        w->reader = r;
        if (w->claim)
                w->state = sbx_state_new(SBX_AGG_CLAIM, w->target);
        req         = sbx_client_request(c, name, body, w->rid);
        w->t0       = sbx_mono_us();
        w->deadline = w->t0 + (int64_t)timeout_ms * 1000;
        rc = sbx_client_publish(c, req, w->target, w->errstr, w->errstr_size);
        json_decref(req);
        while (!rc && sbx_mono_us() < w->deadline) {
                const char *topic;
                void *v;
                size_t len;
                if (!sbx_logreader_next_msg(r, POLL_MS, &topic, &v, &len)) {
                        if (!strcmp(topic, SBX_TOPIC_LIFECYCLE))
                                rc = on_lifecycle(w, v, len);
                        else if (w->on_msg)
                                rc = w->on_msg(w, topic, v, len);
                        free(v);
                }
                if (!rc && w->rejection && !w->accepted &&
                    sbx_logreader_caught_up(r))
                        break;
        }
        if (!rc && w->rejection && !w->accepted)
                rc = sbx_seterr(w->errstr, w->errstr_size, SBX_ERR_REJECTED,
                                "rejected: %s", w->rejection);
        else if (!rc && !w->seen)
                rc = sbx_seterr(w->errstr, w->errstr_size, SBX_ERR_TIMEOUT,
                                "timed out after %.0f s waiting for %s (no "
                                "event of it came: is the control plane "
                                "running?)",
                                (double)(sbx_mono_us() - w->t0) / 1e6, w->what);
        else if (!rc)
                rc = sbx_seterr(
                    w->errstr, w->errstr_size, SBX_ERR_TIMEOUT,
                    "timed out after %.0f s waiting for %s%s%s%s",
                    (double)(sbx_mono_us() - w->t0) / 1e6, w->what,
                    w->state ? " (it is " : "",
                    w->state ? sbx_phase_name(SBX_AGG_CLAIM, w->state->phase)
                             : "",
                    w->state ? ")" : "");
        sbx_logreader_destroy(r);
        sbx_state_destroy(w->state);
        free(w->rejection);
        w->state     = NULL;
        w->rejection = NULL;
        w->reader    = NULL;
        return rc < 0 ? (sbx_err_t)rc : SBX_OK;
}

/* ---- leases -------------------------------------------------------------- */

sbx_lease_t *sbx_lease_new(const char *sandbox_id,
                           int64_t version,
                           const char *claim_id)
{
        sbx_lease_t *l = sbx_calloc(1, sizeof(*l));
        l->sandbox_id  = sbx_strdup(sandbox_id);
        l->claim_id    = claim_id ? sbx_strdup(claim_id) : NULL;
        l->version     = version;
        return l;
}

void sbx_lease_destroy(sbx_lease_t *l)
{
        if (!l)
                return;
        free(l->sandbox_id);
        free(l->claim_id);
        free(l->node_id);
        free(l);
}

const char *sbx_lease_sandbox_id(const sbx_lease_t *l)
{
        return l->sandbox_id;
}

const char *sbx_lease_claim_id(const sbx_lease_t *l)
{
        return l->claim_id;
}

int64_t sbx_lease_version(const sbx_lease_t *l)
{
        return l->version;
}

const char *sbx_lease_node_id(const sbx_lease_t *l)
{
        return l->node_id;
}

int64_t sbx_lease_expires_at(const sbx_lease_t *l)
{
        return l->expires_at;
}

/* ---- commands intake answers with one event ------------------------------ */

typedef struct want_s {
        sbx_evtype_t type;  /* the event that says it is done */
        int64_t lease;      /* it must carry this lease version; <0: any */
        sbx_evtype_t then;  /* and then this one (destroy); 0: none */
        int got;            /* type came */
        int64_t expires_at; /* of a LeaseRenewed */
        char *taken;        /* snapshot: gets the id of the one taken */
        size_t size;
        char error[512]; /* snapshot: why it could not be taken */
} want_t;

static int want_event(sbx_wait_t *w,
                      const sbx_event_t *ev,
                      const sbx_state_t *s)
{
        want_t *x = w->opaque;
        (void)s;
        if (!x->got && ev->type == x->type &&
            (x->lease < 0 || ev->lease_version == x->lease)) {
                x->got        = 1;
                w->accepted   = 1;
                x->expires_at = sbx_event_int(ev, "expires_at", 0);
                return x->then ? 0 : 1;
        }
        if (!x->got || ev->type != x->then)
                return 0;
        if (x->taken)
                sbx_fmt(x->taken, x->size, "%s",
                        sbx_event_str(ev, "snapshot_id")
                            ? sbx_event_str(ev, "snapshot_id")
                            : "");
        if (sbx_event_str(ev, "error"))
                sbx_fmt(x->error, sizeof(x->error), "%s",
                        sbx_event_str(ev, "error"));
        return 1;
}

/* Sends command @p name on sandbox @p sandbox (@p body stolen) and waits
 * for @p x's events. */
static sbx_err_t sandbox_call(sbx_client_t *c,
                              const char *sandbox,
                              const char *name,
                              json_t *body,
                              want_t *x,
                              int timeout_ms,
                              char *errstr,
                              size_t errstr_size)
{
        sbx_wait_t w;
        char what[320];

        memset(&w, 0, sizeof(w));
        sbx_fmt(what, sizeof(what), "%s of sandbox %s",
                sbx_evtype_name(x->then ? x->then : x->type), sandbox);
        w.c           = c;
        w.target      = sandbox;
        w.what        = what;
        w.on_event    = want_event;
        w.opaque      = x;
        w.errstr      = errstr;
        w.errstr_size = errstr_size;
        return sbx_client_call(
            &w, name, body, NULL,
            timeout_ms > 0 ? timeout_ms : DEFAULT_TIMEOUT_MS);
}

sbx_err_t sbx_client_renew(sbx_client_t *c,
                           sbx_lease_t *l,
                           int extend_seconds,
                           int timeout_ms,
                           char *errstr,
                           size_t errstr_size)
{
        want_t x = {
            .type = SBX_EV_LEASE_RENEWED, .lease = l->version, .then = 0};
        sbx_err_t rc;
        rc = sandbox_call(
            c, l->sandbox_id, "sbx.Renew",
            json_pack("{s:s, s:I, s:i}", "sandbox_id", l->sandbox_id,
                      "lease_version", (json_int_t)l->version, "extend_seconds",
                      extend_seconds),
            &x, timeout_ms, errstr, errstr_size);
        if (!rc)
                l->expires_at = x.expires_at;
        return rc;
}

sbx_err_t sbx_client_release(sbx_client_t *c,
                             const sbx_lease_t *l,
                             int timeout_ms,
                             char *errstr,
                             size_t errstr_size)
{
        want_t x = {
            .type = SBX_EV_LEASE_RELEASED, .lease = l->version, .then = 0};
        return sandbox_call(
            c, l->sandbox_id, "sbx.Release",
            json_pack("{s:s, s:I, s:s}", "sandbox_id", l->sandbox_id,
                      "lease_version", (json_int_t)l->version, "claim_id",
                      l->claim_id ? l->claim_id : ""),
            &x, timeout_ms, errstr, errstr_size);
}

/* A command on @p sandbox naming its last lease (@p lease_version < 0:
 * none), done when an event of @p type comes. */
static sbx_err_t last_lease_call(sbx_client_t *c,
                                 const char *name,
                                 const char *sandbox,
                                 int64_t lease_version,
                                 want_t *x,
                                 int timeout_ms,
                                 char *errstr,
                                 size_t errstr_size)
{
        json_t *body = json_pack("{s:s}", "sandbox_id", sandbox);
        if (lease_version >= 0)
                json_object_set_new(body, "lease_version",
                                    json_integer(lease_version));
        return sandbox_call(c, sandbox, name, body, x, timeout_ms, errstr,
                            errstr_size);
}

sbx_err_t sbx_client_pause(sbx_client_t *c,
                           const char *sandbox_id,
                           int64_t lease_version,
                           int timeout_ms,
                           char *errstr,
                           size_t errstr_size)
{
        want_t x = {.type = SBX_EV_HIBERNATED, .lease = -1, .then = 0};
        return last_lease_call(c, "sbx.Pause", sandbox_id, lease_version, &x,
                               timeout_ms, errstr, errstr_size);
}

sbx_err_t sbx_client_resume(sbx_client_t *c,
                            const char *sandbox_id,
                            int64_t lease_version,
                            int timeout_ms,
                            char *errstr,
                            size_t errstr_size)
{
        want_t x = {.type = SBX_EV_RESUMED, .lease = -1, .then = 0};
        return last_lease_call(c, "sbx.Resume", sandbox_id, lease_version, &x,
                               timeout_ms, errstr, errstr_size);
}

sbx_err_t sbx_client_snapshot(sbx_client_t *c,
                              const char *sandbox_id,
                              int64_t lease_version,
                              char *ret_id,
                              size_t ret_id_size,
                              int timeout_ms,
                              char *errstr,
                              size_t errstr_size)
{
        want_t x = {.type  = SBX_EV_SNAPSHOT_REQUESTED,
                    .lease = -1,
                    .then  = SBX_EV_SNAPSHOT_TAKEN};
        sbx_err_t rc;
        x.taken = ret_id;
        x.size  = ret_id_size;
        rc = last_lease_call(c, "sbx.Snapshot", sandbox_id, lease_version, &x,
                             timeout_ms, errstr, errstr_size);
        if (!rc && x.error[0])
                rc = sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                "snapshot of %s failed: %s", sandbox_id,
                                x.error);
        return rc;
}

sbx_err_t sbx_client_destroy_sandbox(sbx_client_t *c,
                                     const char *sandbox_id,
                                     const char *reason,
                                     int timeout_ms,
                                     char *errstr,
                                     size_t errstr_size)
{
        want_t x = {.type  = SBX_EV_RECYCLE_STARTED,
                    .lease = -1,
                    .then  = SBX_EV_TERMINATED};
        return sandbox_call(
            c, sandbox_id, "sbx.Destroy",
            json_pack("{s:s, s:s}", "sandbox_id", sandbox_id, "reason",
                      reason ? reason : "requested"),
            &x, timeout_ms > 0 ? timeout_ms : 2 * DEFAULT_TIMEOUT_MS, errstr,
            errstr_size);
}
