/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Events between C and the codec. The payload stays JSON: the codec has
 * already resolved it to the current schema, so every field is present
 * and typed, and stages read the few fields they need by name.
 */
#include "core/event.h"

#include <stdlib.h>
#include <string.h>

#include <uuid/uuid.h>

#include "core/util.h"

void sbx_uuid(char out[37])
{
        uuid_t u;
        uuid_generate_random(u);
        uuid_unparse_lower(u, out);
}

void sbx_event_set(char **field, const char *value)
{
        free(*field);
        *field = value ? sbx_strdup(value) : NULL;
}

sbx_event_t *sbx_event_new(sbx_evtype_t type, const char *aggregate_id,
                           int64_t seq, json_t *payload)
{
        sbx_event_t *ev = sbx_calloc(1, sizeof(*ev));
        char id[37];

        sbx_uuid(id);
        ev->event_id = sbx_strdup(id);
        ev->type = type;
        ev->aggregate = sbx_evtype_aggregate(type);
        ev->aggregate_id = sbx_strdup(aggregate_id);
        ev->seq = seq;
        ev->occurred_at = sbx_now_us();
        ev->producer = sbx_strdup("");
        ev->correlation_id = sbx_strdup("");
        ev->tenant_id = sbx_strdup("");
        ev->lease_version = SBX_NO_LEASE;
        ev->payload = payload ? payload : json_object();
        return ev;
}

void sbx_event_destroy(sbx_event_t *ev)
{
        if (!ev)
                return;
        free(ev->event_id);
        free(ev->aggregate_id);
        free(ev->producer);
        free(ev->correlation_id);
        free(ev->causation_id);
        free(ev->tenant_id);
        free(ev->session_id);
        json_decref(ev->payload);
        free(ev);
}

static json_t *str_or_null(const char *s)
{
        return s ? json_string(s) : json_null();
}

json_t *sbx_event_to_json(const sbx_event_t *ev)
{
        char branch[128];
        json_t *p = json_object(), *j;

        sbx_fmt(branch, sizeof(branch), "sbx.%s", sbx_evtype_name(ev->type));
        json_object_set(p, branch, ev->payload);
        j = json_pack("{s:s, s:s, s:s, s:I, s:s, s:I, s:s, s:s, s:o, s:s, "
                      "s:o, s:o, s:o}",
                      "event_id", ev->event_id, "aggregate",
                      sbx_aggregate_name(ev->aggregate), "aggregate_id",
                      ev->aggregate_id, "seq", (json_int_t)ev->seq, "type",
                      sbx_evtype_name(ev->type), "occurred_at",
                      (json_int_t)ev->occurred_at, "producer", ev->producer,
                      "correlation_id", ev->correlation_id, "causation_id",
                      str_or_null(ev->causation_id), "tenant_id", ev->tenant_id,
                      "session_id", str_or_null(ev->session_id),
                      "lease_version",
                      ev->lease_version == SBX_NO_LEASE
                          ? json_null()
                          : json_integer(ev->lease_version),
                      "payload", p);
        sbx_assert(j != NULL);
        return j;
}

/* The string @p v holds, or NULL if it is not a string or holds a NUL:
 * the envelope keeps C strings, and "a\0b" must not become "a". */
static const char *c_string(const json_t *v)
{
        const char *s = json_string_value(v);
        return s && strlen(s) == json_string_length(v) ? s : NULL;
}

static sbx_err_t get_id(const json_t *j, const char *name, int nullable,
                        char **ret, char *errstr, size_t errstr_size)
{
        const json_t *v = json_object_get(j, name);
        if (nullable && (!v || json_is_null(v))) {
                *ret = NULL;
                return SBX_OK;
        }
        if (!json_is_string(v))
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "event: %s missing", name);
        if (!c_string(v))
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "event: %s contains a NUL byte", name);
        if (json_string_length(v) > SBX_MAX_ID_LEN)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_TOOBIG,
                                  "event: %s longer than %d bytes", name,
                                  SBX_MAX_ID_LEN);
        *ret = sbx_strdup(json_string_value(v));
        return SBX_OK;
}

sbx_err_t sbx_event_from_json(const json_t *j, sbx_event_t **ret_ev,
                              char *errstr, size_t errstr_size)
{
        sbx_event_t *ev = sbx_calloc(1, sizeof(*ev));
        const json_t *payload = json_object_get(j, "payload");
        const char *type = c_string(json_object_get(j, "type"));
        const char *agg = c_string(json_object_get(j, "aggregate"));
        const json_t *lv = json_object_get(j, "lease_version");
        const char *branch = NULL;
        json_t *pv = NULL;
        sbx_err_t err;
        int t, a;

        if ((err = get_id(j, "event_id", 0, &ev->event_id, errstr, errstr_size)) ||
            (err = get_id(j, "aggregate_id", 0, &ev->aggregate_id, errstr,
                          errstr_size)) ||
            (err = get_id(j, "producer", 0, &ev->producer, errstr, errstr_size)) ||
            (err = get_id(j, "correlation_id", 0, &ev->correlation_id, errstr,
                          errstr_size)) ||
            (err = get_id(j, "causation_id", 1, &ev->causation_id, errstr,
                          errstr_size)) ||
            (err = get_id(j, "tenant_id", 0, &ev->tenant_id, errstr,
                          errstr_size)) ||
            (err = get_id(j, "session_id", 1, &ev->session_id, errstr,
                          errstr_size)))
                goto fail;
        if (!*ev->event_id || !*ev->aggregate_id) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                 "event: empty event_id or aggregate_id");
                goto fail;
        }
        t = type ? sbx_evtype_by_name(type) : -1;
        a = agg ? sbx_aggregate_by_name(agg) : -1;
        if (t < 0) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                 "event: unknown type '%s'",
                                 type ? type : "(none)");
                goto fail;
        }
        ev->type = (sbx_evtype_t)t;
        if (a < 0 || (sbx_aggregate_t)a != sbx_evtype_aggregate(ev->type)) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                 "event: a %s is not a %s event", type,
                                 agg ? agg : "(none)");
                goto fail;
        }
        ev->aggregate = (sbx_aggregate_t)a;
        if (!json_is_object(payload) || json_object_size(payload) != 1) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                 "event: payload is not one record");
                goto fail;
        }
        json_object_foreach((json_t *)payload, branch, pv) break;
        if (sbx_evtype_by_name(branch) != t || !json_is_object(pv)) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                 "event: type %s but payload %s", type, branch);
                goto fail;
        }
        ev->payload = json_incref(pv);
        ev->seq = json_integer_value(json_object_get(j, "seq"));
        if (ev->seq < 1) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                 "event: seq %lld < 1", (long long)ev->seq);
                goto fail;
        }
        ev->occurred_at = json_integer_value(json_object_get(j, "occurred_at"));
        ev->lease_version = json_is_integer(lv) ? json_integer_value(lv)
                                                : SBX_NO_LEASE;
        if (json_is_integer(lv) && ev->lease_version < 0) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                 "event: negative lease_version");
                goto fail;
        }
        *ret_ev = ev;
        return SBX_OK;
fail:
        sbx_event_destroy(ev);
        return err;
}

sbx_err_t sbx_event_encode(const sbx_codec_t *codec, const sbx_event_t *ev,
                           unsigned char **ret_buf, size_t *ret_len,
                           char *errstr, size_t errstr_size)
{
        json_t *j = sbx_event_to_json(ev);
        sbx_err_t err = sbx_codec_encode(codec, SBX_SCHEMA_EVENT, j, ret_buf,
                                         ret_len, errstr, errstr_size);
        json_decref(j);
        return err;
}

sbx_err_t sbx_event_decode(const sbx_codec_t *codec, const void *buf,
                           size_t len, sbx_event_t **ret_ev, char *errstr,
                           size_t errstr_size)
{
        json_t *j = NULL;
        sbx_err_t err = sbx_codec_decode(codec, SBX_SCHEMA_EVENT, buf, len, &j,
                                         errstr, errstr_size);
        if (err)
                return err;
        err = sbx_event_from_json(j, ret_ev, errstr, errstr_size);
        json_decref(j);
        return err;
}

const char *sbx_event_str(const sbx_event_t *ev, const char *field)
{
        return json_string_value(json_object_get(ev->payload, field));
}

int64_t sbx_event_int(const sbx_event_t *ev, const char *field,
                      int64_t fallback)
{
        const json_t *v = json_object_get(ev->payload, field);
        return json_is_integer(v) ? json_integer_value(v) : fallback;
}

double sbx_event_num(const sbx_event_t *ev, const char *field, double fallback)
{
        const json_t *v = json_object_get(ev->payload, field);
        return json_is_number(v) ? json_number_value(v) : fallback;
}

int sbx_event_bool(const sbx_event_t *ev, const char *field)
{
        return json_is_true(json_object_get(ev->payload, field));
}
