/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the codec: single-object framing, round trips of the three
 * message kinds, schema evolution (a v1 writer read by the current
 * reader), and rejection with a reason of every kind of bad input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codec/avro_canon.h"
#include "codec/codec.h"
#include "core/util.h"

static sbx_codec_t *codec;

static int setup(void **state)
{
        char err[512];
        (void)state;
        codec = sbx_codec_new(err, sizeof(err));
        if (!codec)
                fprintf(stderr, "codec: %s\n", err);
        return codec ? 0 : -1;
}

static int teardown(void **state)
{
        (void)state;
        sbx_codec_destroy(codec);
        return 0;
}

static json_t *event_json(const char *payload_type, json_t *payload)
{
        json_t *p = json_object();
        json_object_set_new(p, payload_type, payload);
        return json_pack(
            "{s:s, s:s, s:s, s:I, s:s, s:I, s:s, s:s, s:n, s:s, "
            "s:s, s:I, s:o}",
            "event_id", "6f1c2a4e-1d2b-4c3d-9e8f-0a1b2c3d4e5f", "aggregate",
            "sandbox", "aggregate_id", "sb-1028", "seq", (json_int_t)3, "type",
            "LeaseGranted", "occurred_at", (json_int_t)1789192000000000LL,
            "producer", "executor/node-1", "correlation_id", "claim-1",
            "causation_id", "tenant_id", "acme", "session_id", "session-9",
            "lease_version", (json_int_t)42, "payload", p);
}

static json_t *decode_ok(sbx_schema_kind_t kind, unsigned char *buf, size_t len)
{
        json_t *v = NULL;
        char err[512];
        if (sbx_codec_decode(codec, kind, buf, len, &v, err, sizeof(err)))
                fail_msg("decode: %s", err);
        return v;
}

static void test_event_roundtrip_and_framing(void **state)
{
        json_t *ev = event_json(
            "sbx.LeaseGranted",
            json_pack("{s:s, s:I, s:I, s:b}", "owner", "session-9/tool-call-18",
                      "lease_version", (json_int_t)42, "expires_at",
                      (json_int_t)1789192000, "reuse", 1));
        unsigned char *buf = NULL;
        size_t len         = 0;
        uint64_t fp        = 0;
        char err[512];
        json_t *back;
        (void)state;

        assert_int_equal(sbx_codec_encode(codec, SBX_SCHEMA_EVENT, ev, &buf,
                                          &len, err, sizeof(err)),
                         SBX_OK);
        assert_int_equal(buf[0], 0xC3);
        assert_int_equal(buf[1], 0x01);
        assert_int_equal(sbx_codec_peek_fingerprint(buf, len, &fp), SBX_OK);
        assert_true(fp == sbx_codec_fingerprint(codec, SBX_SCHEMA_EVENT));
        {
                uint64_t want = 0;
                assert_int_equal(
                    sbx_avro_fingerprint(
                        sbx_codec_schema_json(codec, SBX_SCHEMA_EVENT), &want,
                        err, sizeof(err)),
                    SBX_OK);
                assert_true(fp == want);
        }
        back = decode_ok(SBX_SCHEMA_EVENT, buf, len);
        if (!json_equal(back, ev)) {
                char *a = json_dumps(ev, JSON_SORT_KEYS),
                     *b = json_dumps(back, JSON_SORT_KEYS);
                fail_msg("round trip differs:\n%s\n%s", a, b);
        }
        json_decref(back);
        free(buf);
        json_decref(ev);
}

static void test_defaults_fill_missing_fields_on_encode(void **state)
{
        /* ExecFinished without the optional fields: defaults apply. */
        json_t *ev = event_json(
            "sbx.ExecFinished",
            json_pack("{s:s, s:i, s:{s:I}}", "exec_id", "x1", "exit_code", 0,
                      "usage", "wall_us", (json_int_t)1500));
        unsigned char *buf;
        size_t len;
        char err[512];
        json_t *back, *p;
        (void)state;
        assert_int_equal(sbx_codec_encode(codec, SBX_SCHEMA_EVENT, ev, &buf,
                                          &len, err, sizeof(err)),
                         SBX_OK);
        back = decode_ok(SBX_SCHEMA_EVENT, buf, len);
        p    = json_object_get(json_object_get(back, "payload"),
                               "sbx.ExecFinished");
        assert_non_null(p);
        assert_string_equal(json_string_value(json_object_get(p, "stdout")),
                            "");
        assert_false(json_is_true(
            json_object_get(json_object_get(p, "usage"), "oom_killed")));
        assert_int_equal(json_integer_value(json_object_get(
                             json_object_get(p, "usage"), "wall_us")),
                         1500);
        assert_true(json_is_null(json_object_get(p, "error")));
        json_decref(back);
        free(buf);
        json_decref(ev);
}

static void test_bytes_survive_any_value(void **state)
{
        unsigned char raw[256];
        json_t *ev, *back, *out;
        unsigned char *buf;
        size_t len, i;
        char err[512];
        (void)state;
        for (i = 0; i < sizeof(raw); i++)
                raw[i] = (unsigned char)i;
        ev = event_json(
            "sbx.ExecFinished",
            json_pack("{s:s, s:i, s:o, s:{}}", "exec_id", "x", "exit_code", 1,
                      "stdout", json_stringn("", 0), "usage"));
        /* stdout: every byte value, in Avro JSON's code point form */
        {
                json_t *p = json_object_get(json_object_get(ev, "payload"),
                                            "sbx.ExecFinished");
                char u[512];
                size_t n = 0;
                for (i = 0; i < 256; i++) {
                        if (i < 0x80)
                                u[n++] = (char)i;
                        else {
                                u[n++] = (char)(0xC0 | (i >> 6));
                                u[n++] = (char)(0x80 | (i & 0x3F));
                        }
                }
                json_object_set_new(p, "stdout", json_stringn(u, n));
        }
        assert_int_equal(sbx_codec_encode(codec, SBX_SCHEMA_EVENT, ev, &buf,
                                          &len, err, sizeof(err)),
                         SBX_OK);
        /* the raw bytes are in the body as they are */
        {
                int found = 0;
                for (i = 0; i + 256 <= len; i++)
                        if (!memcmp(buf + i, raw, 256))
                                found = 1;
                assert_true(found);
        }
        back = decode_ok(SBX_SCHEMA_EVENT, buf, len);
        out  = json_object_get(json_object_get(back, "payload"),
                               "sbx.ExecFinished");
        assert_true(json_equal(
            json_object_get(out, "stdout"),
            json_object_get(json_object_get(json_object_get(ev, "payload"),
                                            "sbx.ExecFinished"),
                            "stdout")));
        json_decref(back);
        json_decref(ev);
        free(buf);
}

static void expect_encode_error(json_t *v, const char *want)
{
        unsigned char *buf = NULL;
        size_t len;
        char err[512] = "";
        assert_int_equal(sbx_codec_encode(codec, SBX_SCHEMA_EVENT, v, &buf,
                                          &len, err, sizeof(err)),
                         SBX_ERR_INVALID);
        assert_null(buf);
        if (!strstr(err, want))
                fail_msg("error '%s' lacks '%s'", err, want);
        json_decref(v);
}

static void test_encode_rejects_what_the_schema_does_not_allow(void **state)
{
        json_t *ev;
        (void)state;
        ev = event_json(
            "sbx.LeaseGranted",
            json_pack("{s:s, s:I}", "owner", "c", "expires_at", (json_int_t)1));
        expect_encode_error(ev,
                            "missing field (no default) at "
                            "payload.lease_version");
        ev = event_json("sbx.LeaseGranted",
                        json_pack("{s:s, s:I, s:I, s:s}", "owner", "c",
                                  "lease_version", (json_int_t)1, "expires_at",
                                  (json_int_t)1, "colour", "red"));
        expect_encode_error(ev, "unknown field at payload.colour");
        ev = event_json(
            "sbx.LeaseGranted",
            json_pack("{s:s, s:s, s:I}", "owner", "c", "lease_version", "42",
                      "expires_at", (json_int_t)1));
        expect_encode_error(ev, "expected an integer at payload.lease_version");
        ev = event_json("sbx.NoSuchEvent", json_object());
        expect_encode_error(ev, "no such union branch at payload");
        ev = event_json("sbx.LeaseGranted", json_object());
        json_object_set_new(ev, "aggregate", json_string("cluster"));
        expect_encode_error(ev, "unknown enum symbol at aggregate");
}

static unsigned char *encode_lease(size_t *ret_len)
{
        json_t *ev = event_json(
            "sbx.LeaseGranted",
            json_pack("{s:s, s:I, s:I}", "owner", "c", "lease_version",
                      (json_int_t)42, "expires_at", (json_int_t)7));
        unsigned char *buf;
        char err[512];
        assert_int_equal(sbx_codec_encode(codec, SBX_SCHEMA_EVENT, ev, &buf,
                                          ret_len, err, sizeof(err)),
                         SBX_OK);
        json_decref(ev);
        return buf;
}

static void expect_decode_error(const unsigned char *buf,
                                size_t len,
                                sbx_err_t want_err,
                                const char *want)
{
        json_t *v     = NULL;
        char err[512] = "";
        assert_int_equal(sbx_codec_decode(codec, SBX_SCHEMA_EVENT, buf, len, &v,
                                          err, sizeof(err)),
                         want_err);
        assert_null(v);
        if (!strstr(err, want))
                fail_msg("error '%s' lacks '%s'", err, want);
}

static void test_decode_rejects_bad_input_with_reason(void **state)
{
        size_t len, cut;
        unsigned char *buf = encode_lease(&len), *copy;
        (void)state;

        expect_decode_error(buf, 5, SBX_ERR_INVALID,
                            "not an Avro single-object");
        copy = sbx_malloc(len + 1);
        memcpy(copy, buf, len);
        copy[0] = 0x00;
        expect_decode_error(copy, len, SBX_ERR_INVALID, "not an Avro");
        memcpy(copy, buf, len);
        copy[5] ^= 0xFF;
        expect_decode_error(copy, len, SBX_ERR_NOENT,
                            "unknown writer schema fingerprint");
        /* Every truncation is an error, never a crash. */
        for (cut = 10; cut < len; cut++)
                expect_decode_error(buf, cut, SBX_ERR_INVALID, "");
        /* Trailing garbage. */
        memcpy(copy, buf, len);
        copy[len] = 0x00;
        expect_decode_error(copy, len + 1, SBX_ERR_INVALID, "trailing bytes");
        /* The event id's length claims 1 GiB: refused before allocation. */
        memcpy(copy, buf, len);
        {
                unsigned char huge[] = {0x80, 0x80, 0x80, 0x80, 0x08};
                unsigned char *m     = sbx_malloc(len + 8);
                memcpy(m, buf, 10);
                memcpy(m + 10, huge, sizeof(huge));
                memcpy(m + 10 + sizeof(huge), buf + 11, len - 11);
                expect_decode_error(m, len - 1 + sizeof(huge), SBX_ERR_TOOBIG,
                                    "string too long at event_id");
                free(m);
        }
        /* A request message where an event is expected. */
        free(copy);
        free(buf);
}

static void test_v1_writer_is_read_with_defaults(void **state)
{
        char *v1     = NULL, err[512];
        uint64_t fp1 = 0;
        json_t *ev, *back, *p;
        unsigned char *buf;
        size_t len;
        (void)state;

        assert_int_equal(sbx_read_file(SBX_TEST_DATA "/Event.v1.avsc", 1 << 20,
                                       &v1, NULL, err, sizeof(err)),
                         SBX_OK);
        assert_int_equal(
            sbx_codec_add_schema(codec, v1, &fp1, err, sizeof(err)), SBX_OK);
        assert_true(fp1 != sbx_codec_fingerprint(codec, SBX_SCHEMA_EVENT));
        /* v1's LeaseGranted has no "reuse": write without it ... */
        ev = event_json(
            "sbx.LeaseGranted",
            json_pack("{s:s, s:I, s:I}", "owner", "c", "lease_version",
                      (json_int_t)41, "expires_at", (json_int_t)9));
        assert_int_equal(
            sbx_codec_encode_with(codec, fp1, ev, &buf, &len, err, sizeof(err)),
            SBX_OK);
        /* ... and the current reader sees reuse = false, its default. */
        back = decode_ok(SBX_SCHEMA_EVENT, buf, len);
        p    = json_object_get(json_object_get(back, "payload"),
                               "sbx.LeaseGranted");
        assert_non_null(p);
        assert_true(json_is_false(json_object_get(p, "reuse")));
        assert_int_equal(
            json_integer_value(json_object_get(p, "lease_version")), 41);
        json_decref(back);
        free(buf);
        json_decref(ev);

        /* A nested record (Task) gained a field too. */
        ev = event_json("sbx.ClaimRequested",
                        json_pack("{s:s, s:{s:s, s:[s]}}", "request_id", "r1",
                                  "task", "text", "read the Excel file", "plan",
                                  "pip install pandas"));
        assert_int_equal(
            sbx_codec_encode_with(codec, fp1, ev, &buf, &len, err, sizeof(err)),
            SBX_OK);
        back = decode_ok(SBX_SCHEMA_EVENT, buf, len);
        p    = json_object_get(json_object_get(json_object_get(back, "payload"),
                                               "sbx.ClaimRequested"),
                               "task");
        assert_true(json_is_false(json_object_get(p, "needs_compile")));
        assert_string_equal(json_string_value(json_object_get(p, "text")),
                            "read the Excel file");
        json_decref(back);
        free(buf);
        json_decref(ev);
        free(v1);
}

static void test_request_and_node_status_roundtrip(void **state)
{
        json_t *req = json_pack(
            "{s:s, s:s, s:s, s:I, s:{s:{s:s, s:I, s:s, s:[s,s,s]}}}",
            "request_id", "r-1", "tenant_id", "acme", "session_id", "s-1",
            "occurred_at", (json_int_t)1, "command", "sbx.Exec", "sandbox_id",
            "sb-1", "lease_version", (json_int_t)42, "exec_id", "e-1", "argv",
            "python3", "-c", "print(1+1)");
        json_t *node = json_pack("{s:s, s:I, s:f, s:I}", "node_id", "node-1",
                                 "at", (json_int_t)5, "cpu_capacity", 2.0,
                                 "memory_mb_capacity", (json_int_t)24576);
        json_t *back;
        unsigned char *buf;
        size_t len;
        char err[512];
        (void)state;
        assert_int_equal(sbx_codec_encode(codec, SBX_SCHEMA_REQUEST, req, &buf,
                                          &len, err, sizeof(err)),
                         SBX_OK);
        back = decode_ok(SBX_SCHEMA_REQUEST, buf, len);
        assert_string_equal(
            json_string_value(json_array_get(
                json_object_get(
                    json_object_get(json_object_get(back, "command"),
                                    "sbx.Exec"),
                    "argv"),
                2)),
            "print(1+1)");
        /* a request is not an event */
        {
                json_t *v = NULL;
                assert_int_equal(sbx_codec_decode(codec, SBX_SCHEMA_EVENT, buf,
                                                  len, &v, err, sizeof(err)),
                                 SBX_ERR_INVALID);
                assert_non_null(strstr(err, "is a Request, expected a Event"));
        }
        json_decref(back);
        free(buf);
        assert_int_equal(sbx_codec_encode(codec, SBX_SCHEMA_NODE_STATUS, node,
                                          &buf, &len, err, sizeof(err)),
                         SBX_OK);
        back = decode_ok(SBX_SCHEMA_NODE_STATUS, buf, len);
        assert_true(json_is_true(json_object_get(back, "healthy")));
        assert_int_equal(json_array_size(json_object_get(back, "pools")), 0);
        json_decref(back);
        free(buf);
        json_decref(req);
        json_decref(node);
}

/* An exec's output chunk: binary data survives, the stream is an enum. */
static void test_exec_output_roundtrip(void **state)
{
        static const unsigned char data[] = {0, 1, 0xff, '\n', 'x'};
        json_t *chunk                     = json_pack(
                                "{s:s, s:s, s:I, s:s, s:i, s:I, s:o, s:b, s:I}", "sandbox_id",
                                "sb-1", "exec_id", "e-1", "lease_version", (json_int_t)3, "stream",
                                "stderr", "seq", 2, "offset", (json_int_t)131072, "data",
                                sbx_codec_bytes(data, sizeof(data)), "eof", 1, "at",
                                (json_int_t)1700000000000000);
        unsigned char *buf = NULL, *got = NULL;
        size_t len = 0, n = 0;
        char err[512];
        json_t *back, *bad;
        (void)state;

        assert_int_equal(sbx_codec_encode(codec, SBX_SCHEMA_EXEC_OUTPUT, chunk,
                                          &buf, &len, err, sizeof(err)),
                         SBX_OK);
        back = decode_ok(SBX_SCHEMA_EXEC_OUTPUT, buf, len);
        assert_true(json_equal(back, chunk));
        assert_int_equal(
            sbx_codec_bytes_value(json_object_get(back, "data"), &got, &n), 0);
        assert_int_equal(n, sizeof(data));
        assert_memory_equal(got, data, n);
        free(got);
        free(buf);
        json_decref(back);
        bad = json_deep_copy(chunk);
        json_object_set_new(bad, "stream", json_string("stdin"));
        assert_int_equal(sbx_codec_encode(codec, SBX_SCHEMA_EXEC_OUTPUT, bad,
                                          &buf, &len, err, sizeof(err)),
                         SBX_ERR_INVALID);
        json_decref(bad);
        json_decref(chunk);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_event_roundtrip_and_framing),
            cmocka_unit_test(test_exec_output_roundtrip),
            cmocka_unit_test(test_defaults_fill_missing_fields_on_encode),
            cmocka_unit_test(test_bytes_survive_any_value),
            cmocka_unit_test(
                test_encode_rejects_what_the_schema_does_not_allow),
            cmocka_unit_test(test_decode_rejects_bad_input_with_reason),
            cmocka_unit_test(test_v1_writer_is_read_with_defaults),
            cmocka_unit_test(test_request_and_node_status_roundtrip),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
