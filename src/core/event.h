/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A lifecycle event: the envelope of DESIGN.md §2 as C fields, and the
 * payload record as a JSON object holding every field of the current
 * schema (decoding fills defaults). Events are built, encoded and decoded
 * here; nothing else needs to know the codec's JSON conventions.
 */
#ifndef SBX_EVENT_H
#define SBX_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "codec/codec.h"
#include "core/fsm.h"
#include "sbx/err.h"

#define SBX_NO_LEASE       (-1)
#define SBX_MAX_ID_LEN     256

typedef struct sbx_event_s {
        char *event_id;
        sbx_aggregate_t aggregate;
        char *aggregate_id;
        int64_t seq;
        sbx_evtype_t type;
        int64_t occurred_at; /**< µs since the epoch */
        char *producer;
        char *correlation_id;
        char *causation_id;    /**< NULL if none */
        char *tenant_id;
        char *session_id;      /**< NULL if none */
        int64_t lease_version; /**< SBX_NO_LEASE if not fenced */
        json_t *payload;       /**< owned; object of the payload record */
} sbx_event_t;

/**
 * A new event of @p type for @p aggregate_id at @p seq, with a fresh
 * UUIDv4 event_id, occurred_at = now, empty strings for the other ids and
 * @p payload (a reference is stolen; NULL means {}).
 */
sbx_event_t *sbx_event_new(sbx_evtype_t type, const char *aggregate_id,
                           int64_t seq, json_t *payload);
void sbx_event_destroy(sbx_event_t *ev);
/** Replaces *field (one of the event's strings) with a copy of @p value. */
void sbx_event_set(char **field, const char *value);

/** The envelope as codec JSON (a new reference). */
json_t *sbx_event_to_json(const sbx_event_t *ev);
/**
 * An event from codec JSON (borrowed). Checks what the schema cannot:
 * the type names the payload's record, the aggregate matches the type,
 * seq >= 1, ids are non-empty and at most SBX_MAX_ID_LEN bytes.
 */
sbx_err_t sbx_event_from_json(const json_t *j, sbx_event_t **ret_ev,
                              char *errstr, size_t errstr_size);

sbx_err_t sbx_event_encode(const sbx_codec_t *codec, const sbx_event_t *ev,
                           unsigned char **ret_buf, size_t *ret_len,
                           char *errstr, size_t errstr_size);
sbx_err_t sbx_event_decode(const sbx_codec_t *codec, const void *buf,
                           size_t len, sbx_event_t **ret_ev, char *errstr,
                           size_t errstr_size);

/* Payload accessors: a missing or null field gives the fallback. */
const char *sbx_event_str(const sbx_event_t *ev, const char *field);
int64_t sbx_event_int(const sbx_event_t *ev, const char *field,
                      int64_t fallback);
double sbx_event_num(const sbx_event_t *ev, const char *field,
                     double fallback);
int sbx_event_bool(const sbx_event_t *ev, const char *field);

/** Writes a fresh UUIDv4 into @p out (37 bytes). */
void sbx_uuid(char out[37]);

#endif
