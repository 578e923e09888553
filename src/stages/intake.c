/* SPDX-License-Identifier: Apache-2.0 */
/*
 * intake's Kafka side. Each request is decided once against the folded
 * state; an append that loses a race is decided again (at most three
 * times) on the state that beat it; a request whose target intake has not
 * seen yet waits up to three seconds for the log to catch up before it is
 * refused. Every refusal is a RequestRejected the client can read.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "core/policy.h"
#include "core/util.h"
#include "kafka/processor.h"
#include "stages/intake.h"

#define WAIT_US      (3 * 1000000LL)
#define MAX_ATTEMPTS 3

typedef struct pending_s {
        json_t *req;
        char event_id[40]; /* our append awaiting its verdict, or "" */
        int attempts;
        int64_t deadline; /* waiting for the state until then, or 0 */
} pending_t;

typedef struct intake_s {
        sbx_policy_t *policy;
        pending_t *v;
        size_t n, cap;
} intake_t;

static void *intake_init(const sbx_config_t *config, sbx_proc_t *proc,
                         char *errstr, size_t errstr_size)
{
        intake_t *in = sbx_calloc(1, sizeof(*in));
        (void)proc;
        in->policy = sbx_policy_load(config->policy, errstr, errstr_size);
        if (!in->policy) {
                free(in);
                return NULL;
        }
        return in;
}

static void intake_destroy(void *self)
{
        intake_t *in = self;
        size_t i;
        for (i = 0; i < in->n; i++)
                json_decref(in->v[i].req);
        free(in->v);
        sbx_policy_destroy(in->policy);
        free(in);
}

static const char *command_name(const json_t *req)
{
        const char *name;
        json_t *c;
        json_object_foreach(json_object_get(req, "command"), name, c) return
            name + (strncmp(name, "sbx.", 4) ? 0 : 4);
        return "?";
}

static void append_rejection(sbx_proc_t *p, const json_t *req,
                             const char *reason)
{
        const char *rid = json_string_value(json_object_get(req, "request_id"));
        const char *target = sbx_intake_target(req);
        sbx_event_t *ev;
        char err[512];

        ev = sbx_event_new(SBX_EV_REQUEST_REJECTED, rid, 1,
                           json_pack("{s:s, s:s, s:[s], s:o}", "request_id",
                                     rid, "command", command_name(req),
                                     "reasons", reason, "target_id",
                                     target ? json_string(target)
                                            : json_null()));
        sbx_event_set(&ev->tenant_id,
                      json_string_value(json_object_get(req, "tenant_id")));
        sbx_event_set(&ev->session_id,
                      json_string_value(json_object_get(req, "session_id")));
        sbx_event_set(&ev->correlation_id, target ? target : rid);
        if (sbx_proc_append(p, ev, err, sizeof(err)))
                fprintf(stderr, "sbxd: intake: cannot append rejection of %s: "
                                "%s\n",
                        rid, err);
}

static pending_t *add_pending(intake_t *in, const json_t *req, int attempts)
{
        pending_t *pe;
        if (in->n == in->cap) {
                in->cap = in->cap ? in->cap * 2 : 16;
                in->v = sbx_realloc(in->v, in->cap * sizeof(*in->v));
        }
        pe = &in->v[in->n++];
        memset(pe, 0, sizeof(*pe));
        pe->req = json_incref((json_t *)req);
        pe->attempts = attempts;
        return pe;
}

static void drop_pending(intake_t *in, size_t i)
{
        json_decref(in->v[i].req);
        in->v[i] = in->v[--in->n];
}

/* Decides @p req now; returns 1 if it is settled or in flight, 0 if it
 * must wait for the state. */
static int process(intake_t *in, sbx_proc_t *p, const json_t *req,
                   int attempts, int waited_out)
{
        const char *target = sbx_intake_target(req);
        const sbx_state_t *st = target ? sbx_proc_state(p, target) : NULL;
        const char *tenant = json_string_value(json_object_get(req, "tenant_id"));
        sbx_event_t *ev = NULL;
        char reason[512] = "", err[512], id[40];
        sbx_intake_verdict_t v;

        v = sbx_intake_check(req, st, tenant && sbx_policy_tenant_known(
                                                    in->policy, tenant),
                             sbx_now_us(), &ev, reason, sizeof(reason));
        if (v == SBX_INTAKE_WAIT && waited_out) {
                sbx_fmt(reason, sizeof(reason),
                        "%s %s is unknown or not leased at that version",
                        command_name(req), target ? target : "?");
                v = SBX_INTAKE_REJECT;
        }
        switch (v) {
        case SBX_INTAKE_WAIT:
                return 0;
        case SBX_INTAKE_IGNORE:
                return 1;
        case SBX_INTAKE_REJECT:
                append_rejection(p, req, reason);
                return 1;
        case SBX_INTAKE_APPEND:
                sbx_fmt(id, sizeof(id), "%s", ev->event_id);
                if (sbx_proc_append(p, ev, err, sizeof(err))) {
                        fprintf(stderr, "sbxd: intake: append failed: %s\n",
                                err);
                        return 1;
                }
                sbx_fmt(add_pending(in, req, attempts)->event_id, 40, "%s", id);
                return 1;
        }
        return 1;
}

static int usable_id(const json_t *v, int nullable)
{
        const char *s = json_string_value(v);
        size_t n;
        if (nullable && (!v || json_is_null(v)))
                return 1;
        if (!s || (n = json_string_length(v)) == 0 || n > 128 || strlen(s) != n)
                return 0;
        for (; *s; s++)
                if (!isalnum((unsigned char)*s) && !strchr("._:-", *s))
                        return 0;
        return 1;
}

static void intake_message(void *self, sbx_proc_t *p, const char *topic,
                           const void *key, size_t klen, const void *val,
                           size_t vlen)
{
        intake_t *in = self;
        json_t *req = NULL;
        char err[512];

        if (strcmp(topic, SBX_TOPIC_REQUESTS))
                return;
        if (sbx_codec_decode(sbx_proc_codec(p), SBX_SCHEMA_REQUEST, val, vlen,
                             &req, err, sizeof(err))) {
                sbx_proc_dlq(p, topic, key, klen, val, vlen, err);
                return;
        }
        /* A rejection is keyed by the request id and carries the session:
         * if those are unusable, no reader could decode the rejection, so
         * the request goes to the DLQ instead. */
        if (!usable_id(json_object_get(req, "request_id"), 0) ||
            !usable_id(json_object_get(req, "session_id"), 1)) {
                sbx_proc_dlq(p, topic, key, klen, val, vlen,
                             "request_id or session_id is not 1..128 of "
                             "[A-Za-z0-9._:-]");
                json_decref(req);
                return;
        }
        if (!process(in, p, req, 0, 0))
                add_pending(in, req, 0)->deadline = sbx_mono_us() + WAIT_US;
        json_decref(req);
}

static void intake_own(void *self, sbx_proc_t *p, const sbx_event_t *ev,
                       sbx_verdict_t v)
{
        intake_t *in = self;
        size_t i;
        for (i = 0; i < in->n; i++) {
                json_t *req;
                int attempts;
                if (strcmp(in->v[i].event_id, ev->event_id))
                        continue;
                req = json_incref(in->v[i].req);
                attempts = in->v[i].attempts + 1;
                drop_pending(in, i);
                if (v != SBX_FOLD_ACCEPTED && ev->type != SBX_EV_REQUEST_REJECTED) {
                        if (attempts >= MAX_ATTEMPTS) {
                                char reason[256];
                                sbx_fmt(reason, sizeof(reason),
                                        "lost %d races for %s (%s); try again",
                                        attempts, ev->aggregate_id,
                                        sbx_verdict_name(v));
                                append_rejection(p, req, reason);
                        } else if (!process(in, p, req, attempts, 0))
                                add_pending(in, req, attempts)->deadline =
                                    sbx_mono_us() + WAIT_US;
                }
                json_decref(req);
                return;
        }
}

static void intake_idle(void *self, sbx_proc_t *p, int64_t now_us)
{
        intake_t *in = self;
        int64_t mono = sbx_mono_us();
        pending_t *wait = NULL;
        size_t nw = 0, i = 0;
        (void)now_us;

        /* Take the waiting requests out, then decide each again. */
        while (i < in->n) {
                if (!in->v[i].deadline) {
                        i++;
                        continue;
                }
                wait = sbx_realloc(wait, (nw + 1) * sizeof(*wait));
                wait[nw++] = in->v[i];
                in->v[i] = in->v[--in->n];
        }
        for (i = 0; i < nw; i++) {
                if (!process(in, p, wait[i].req, wait[i].attempts,
                             mono > wait[i].deadline))
                        add_pending(in, wait[i].req, wait[i].attempts)
                            ->deadline = wait[i].deadline;
                json_decref(wait[i].req);
        }
        free(wait);
}

static const char *const intake_topics[] = {SBX_TOPIC_REQUESTS, NULL};

const sbx_stage_t sbx_stage_intake = {
    .name = "intake",
    .group_topics = intake_topics,
    .init = intake_init,
    .destroy = intake_destroy,
    .on_message = intake_message,
    .own = intake_own,
    .idle = intake_idle,
};
