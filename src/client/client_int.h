/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Inside the client library: the client, and the one loop every call
 * waits in. A call opens a reader at the end of the topics it needs,
 * publishes its request, then hands each lifecycle event of its target
 * (and each message of the other topics) to its own handlers until one
 * says it is done or failed, intake rejects the request, or the deadline
 * passes. Events of a sandbox are read from the middle of its history:
 * the first one seen sets the base, and an event whose seq is not beyond
 * the highest seen lost its seq to another writer and is ignored (the
 * fold's rule without the history).
 */
#ifndef SBX_CLIENT_INT_H
#define SBX_CLIENT_INT_H

#include <jansson.h>

#include "codec/codec.h"
#include "core/config.h"
#include "core/fold.h"
#include "kafka/kclient.h"
#include "kafka/logreader.h"
#include "sbx/client.h"

struct sbx_client_s {
        sbx_config_t *config;
        sbx_codec_t *codec;
        sbx_kproducer_t *prod;
        char *tenant, *session, *user, *name;
        sbx_progress_cb_t progress;
        void *progress_opaque;
};

struct sbx_lease_s {
        char *sandbox_id, *claim_id, *node_id;
        int64_t version, expires_at;
};

typedef struct sbx_wait_s sbx_wait_t;

/* Returns 0 to go on, 1 when the call is done, or an error (negative
 * sbx_err_t) with w->errstr set. */
typedef int (*sbx_wait_event_fn)(sbx_wait_t *w,
                                 const sbx_event_t *ev,
                                 const sbx_state_t *claim);
typedef int (*sbx_wait_msg_fn)(sbx_wait_t *w,
                               const char *topic,
                               const void *value,
                               size_t len);

struct sbx_wait_s {
        sbx_client_t *c;
        const char *target; /* the claim or sandbox id the call is about */
        int claim;          /* target is a claim this call created */
        const char *what;   /* for messages: "claim X", "LeaseRenewed of ..." */
        sbx_wait_event_fn on_event;
        sbx_wait_msg_fn on_msg; /* NULL: lifecycle only */
        int64_t deadline;       /* sbx_mono_us(); handlers may move it */
        void *opaque;           /* the call's own state */
        char *errstr;
        size_t errstr_size;
        int accepted; /* handlers: the request's own effect was read */
        /* set by the loop */
        char rid[64];
        int64_t t0, last_seq;
        int seen;           /* events of the target read */
        sbx_state_t *state; /* the claim's fold, if claim */
        char *rejection;    /* read, but maybe late: see sbx_client_call() */
        sbx_logreader_t *reader;
};

/** A Request of @p c's tenant and session: command @p name, @p body
 * (stolen); its request id into @p rid. */
json_t *sbx_client_request(const sbx_client_t *c,
                           const char *name,
                           json_t *body,
                           char rid[64]);

/** Encodes and publishes @p req (borrowed), keyed by @p key. */
sbx_err_t sbx_client_publish(sbx_client_t *c,
                             const json_t *req,
                             const char *key,
                             char *errstr,
                             size_t errstr_size);

/**
 * Opens a reader at the end of sbx.lifecycle.v1 (and of @p other, if not
 * NULL), publishes command @p name with @p body (stolen) keyed by the
 * wait's target, and waits as the file comment says. @p timeout_ms is
 * the deadline from now. A rejection of the request is final only once
 * the reader has caught up with everything appended before it was read,
 * without the request's own effect among it: a second intake (a
 * redelivered request, another control plane on the broker) may refuse a
 * request the first one carried out, and its rejection, on another
 * partition, may be read first.
 */
sbx_err_t sbx_client_call(sbx_wait_t *w,
                          const char *name,
                          json_t *body,
                          const char *other,
                          int timeout_ms);

/** The AcquireSandbox command @p a would send (borrowed). */
const json_t *sbx_acquire_body(const sbx_acquire_t *a);

/** The reasons of a RequestRejected, joined by "; " (caller frees). */
char *sbx_client_reasons(const sbx_event_t *ev);

#endif
