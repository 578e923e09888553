/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness of the decoders of untrusted bytes from the log: the
 * codec (sbx_codec_decode) for the three message kinds and the event
 * envelope on top of it (sbx_event_decode). Input format: fuzz_codec.h.
 * Besides "no crash, no leak, no undefined behaviour", it checks what a
 * consumer relies on: a failed decode gives a reason and writes no
 * output; a decoded value re-encodes, decodes to the same JSON, and
 * re-encodes to the same bytes; the event envelope is a lossless view of
 * the decoded record. A broken property abort()s with both sides printed.
 */
#include "fuzz_codec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "codec/codec.h"
#include "core/event.h"

static const char *const kind_names[SBX_SCHEMA__CNT] = {
    "event", "request", "node status", "exec output"};

/* Stands for "not written" in the output parameters. */
static json_t untouched_json;
static sbx_event_t untouched_event;

/* One codec for the whole process: it is read-only once built. */
static const sbx_codec_t *codec_get(void)
{
        static sbx_codec_t *codec;
        char err[512];

        if (!codec) {
                codec = sbx_codec_new(err, sizeof(err));
                if (!codec) {
                        fprintf(stderr, "fuzz_codec: sbx_codec_new: %s\n", err);
                        abort();
                }
        }
        return codec;
}

/* Reports a broken property and aborts, which libFuzzer records. */
_Noreturn static void broken(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

_Noreturn static void broken(const char *fmt, ...)
{
        va_list ap;
        fputs("fuzz_codec: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        abort();
}

static void dump(const char *label, const json_t *v)
{
        char *s = json_dumps(v, JSON_SORT_KEYS | JSON_ENCODE_ANY);
        fprintf(stderr, "%s: %s\n", label, s ? s : "(unprintable)");
        free(s);
}

/* The contract of a failed decode: a reason, and nothing written. */
static void check_failure(const char *what, const char *err, int written)
{
        if (!err[0])
                broken("%s failed without a reason in errstr", what);
        if (written)
                broken("%s failed but wrote its output parameter", what);
}

/*
 * Decodes @p buf as @p kind; on success checks that the value survives
 * encode + decode unchanged and that encoding is then stable byte for
 * byte. Returns the decoded value (a new reference) or NULL.
 */
static json_t *check_codec(const sbx_codec_t *c,
                           sbx_schema_kind_t kind,
                           const unsigned char *buf,
                           size_t len)
{
        json_t *v = &untouched_json, *v2 = &untouched_json;
        unsigned char *out = NULL, *out2 = NULL;
        size_t out_len = 0, out2_len = 0;
        char err[512] = "";

        if (sbx_codec_decode(c, kind, buf, len, &v, err, sizeof(err))) {
                check_failure("sbx_codec_decode", err, v != &untouched_json);
                return NULL;
        }
        if (sbx_codec_encode(c, kind, v, &out, &out_len, err, sizeof(err))) {
                dump("decoded", v);
                broken("a decoded %s does not re-encode: %s", kind_names[kind],
                       err);
        }
        if (sbx_codec_decode(c, kind, out, out_len, &v2, err, sizeof(err))) {
                dump("decoded", v);
                broken("a re-encoded %s does not decode: %s", kind_names[kind],
                       err);
        }
        if (!json_equal(v, v2)) {
                dump("first decode ", v);
                dump("second decode", v2);
                broken("%s changed in a round trip", kind_names[kind]);
        }
        if (sbx_codec_encode(c, kind, v2, &out2, &out2_len, err, sizeof(err)))
                broken("second encode of a %s failed: %s", kind_names[kind],
                       err);
        if (out_len != out2_len || memcmp(out, out2, out_len)) {
                dump("value", v);
                broken("a %s encodes to %zu bytes, then to %zu others",
                       kind_names[kind], out_len, out2_len);
        }
        free(out2);
        free(out);
        json_decref(v2);
        return v;
}

/*
 * The envelope on top of the codec: sbx_event_decode() either rejects
 * with a reason or gives an event whose JSON is the codec's value
 * (@p codec_value, NULL if the codec rejected the bytes) and which
 * survives sbx_event_encode() + sbx_event_decode().
 */
static void check_event(const sbx_codec_t *c,
                        const unsigned char *buf,
                        size_t len,
                        const json_t *codec_value)
{
        sbx_event_t *ev = &untouched_event, *ev2 = &untouched_event;
        unsigned char *out = NULL;
        size_t out_len     = 0;
        char err[512]      = "";
        json_t *j, *j2;

        if (sbx_event_decode(c, buf, len, &ev, err, sizeof(err))) {
                check_failure("sbx_event_decode", err, ev != &untouched_event);
                return;
        }
        if (!codec_value)
                broken(
                    "sbx_event_decode accepts what sbx_codec_decode "
                    "rejects");
        j = sbx_event_to_json(ev);
        if (!json_equal(j, codec_value)) {
                dump("codec value", codec_value);
                dump("event      ", j);
                broken("the event is not the record it was decoded from");
        }
        if (sbx_event_encode(c, ev, &out, &out_len, err, sizeof(err))) {
                dump("event", j);
                broken("a decoded event does not re-encode: %s", err);
        }
        if (sbx_event_decode(c, out, out_len, &ev2, err, sizeof(err))) {
                dump("event", j);
                broken("a re-encoded event does not decode: %s", err);
        }
        j2 = sbx_event_to_json(ev2);
        if (!json_equal(j, j2)) {
                dump("first decode ", j);
                dump("second decode", j2);
                broken("event changed in a round trip");
        }
        json_decref(j2);
        json_decref(j);
        free(out);
        sbx_event_destroy(ev2);
        sbx_event_destroy(ev);
}

static void check_message(const sbx_codec_t *c,
                          sbx_schema_kind_t kind,
                          const unsigned char *buf,
                          size_t len)
{
        json_t *v = check_codec(c, kind, buf, len);
        if (kind == SBX_SCHEMA_EVENT)
                check_event(c, buf, len, v);
        json_decref(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const sbx_codec_t *c = codec_get();
        sbx_schema_kind_t kind;
        unsigned char *msg;
        uint64_t fp;
        int i, k;

        if (size < 1)
                return 0;
        kind = sbx_fuzz_kind(data[0]);
        if (data[0] >= SBX_FUZZ_RAW) {
                for (k = 0; k < SBX_SCHEMA__CNT; k++)
                        check_message(c, (sbx_schema_kind_t)k, data + 1,
                                      size - 1);
                return 0;
        }
        /* An exact-size copy, so that ASan sees any read past the end. */
        msg = malloc(SBX_FUZZ_HEADER_LEN + size - 1);
        if (!msg)
                abort();
        fp     = sbx_codec_fingerprint(c, kind);
        msg[0] = 0xC3;
        msg[1] = 0x01;
        for (i = 0; i < 8; i++)
                msg[2 + i] = (unsigned char)(fp >> (8 * i));
        memcpy(msg + SBX_FUZZ_HEADER_LEN, data + 1, size - 1);
        check_message(c, kind, msg, SBX_FUZZ_HEADER_LEN + size - 1);
        free(msg);
        return 0;
}
