/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the agent wire protocol: every frame type survives encode and
 * decode, whole or fed one byte at a time; truncated, oversized and
 * malformed input is refused with a reason that names the problem, and a
 * decoder stays refused after it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/proto.h"

static const char *const test_argv[] = {"/bin/echo", "hello world", "", NULL};
static const char *const test_envp[] = {"A=1", "EMPTY=", "B=x=y", NULL};
static const uint8_t test_stdin[]    = {0, 1, 2, 0xff, 'a', 0};

/* One frame of each type, fields set to unusual values. */
static sbx_agent_frame_t sample(sbx_agent_ftype_t type)
{
        sbx_agent_frame_t f = {.type = type, .exec_id = 0x0102030405060708ULL};

        switch (type) {
        case SBX_AGENT_F_PING:
        case SBX_AGENT_F_PONG:
                f.nonce = 0xfedcba9876543210ULL;
                break;
        case SBX_AGENT_F_EXEC:
                f.exec = (sbx_agent_exec_req_t){
                    .exec_id     = 42,
                    .deadline_ms = 300,
                    .flags       = SBX_AGENT_EXEC_UID | SBX_AGENT_EXEC_GID,
                    .uid         = 1000,
                    .gid         = 4294967295U,
                    .cwd         = "/work space",
                    .argv        = test_argv,
                    .envp        = test_envp,
                    .stdin_data  = test_stdin,
                    .stdin_len   = sizeof(test_stdin)};
                break;
        case SBX_AGENT_F_STARTED:
                f.pid = 2147483647;
                break;
        case SBX_AGENT_F_STDOUT:
        case SBX_AGENT_F_STDERR:
                f.data     = test_stdin;
                f.data_len = sizeof(test_stdin);
                break;
        case SBX_AGENT_F_EXIT:
                f.exit = (sbx_agent_exit_t){.exit_code = -1,
                                            .signal    = 9,
                                            .timed_out = 1,
                                            .cancelled = 1,
                                            .wall_us   = UINT64_MAX,
                                            .user_us   = 123456,
                                            .sys_us    = 7,
                                            .maxrss_kb = 1ULL << 40};
                break;
        case SBX_AGENT_F_RESET:
                f.level = 1;
                break;
        case SBX_AGENT_F_RESET_DONE:
                f.killed      = 3;
                f.tmp_removed = 4000000000U;
                f.tmp_failed  = 1;
                break;
        case SBX_AGENT_F_ERROR:
                f.code      = SBX_AGENT_E_SPAWN;
                f.sys_errno = 2;
                f.message   = "execve nope: No such file or directory";
                break;
        default:
                break;
        }
        return f;
}

static void assert_vec_equal(const char *const *a, const char *const *b)
{
        size_t i;
        for (i = 0; a[i] && b[i]; i++)
                assert_string_equal(a[i], b[i]);
        assert_null(a[i]);
        assert_null(b[i]);
}

static void assert_frame_equal(const sbx_agent_frame_t *a,
                               const sbx_agent_frame_t *b)
{
        assert_int_equal(a->type, b->type);
        switch (a->type) {
        case SBX_AGENT_F_PING:
        case SBX_AGENT_F_PONG:
                assert_true(a->nonce == b->nonce);
                break;
        case SBX_AGENT_F_EXEC:
                assert_true(a->exec.exec_id == b->exec.exec_id);
                assert_int_equal(a->exec.deadline_ms, b->exec.deadline_ms);
                assert_int_equal(a->exec.flags, b->exec.flags);
                assert_int_equal(a->exec.uid, b->exec.uid);
                assert_int_equal(a->exec.gid, b->exec.gid);
                assert_string_equal(a->exec.cwd, b->exec.cwd);
                assert_vec_equal(a->exec.argv, b->exec.argv);
                assert_vec_equal(a->exec.envp, b->exec.envp);
                assert_int_equal(a->exec.stdin_len, b->exec.stdin_len);
                assert_memory_equal(a->exec.stdin_data, b->exec.stdin_data,
                                    a->exec.stdin_len);
                break;
        case SBX_AGENT_F_STARTED:
                assert_int_equal(a->pid, b->pid);
                assert_true(a->exec_id == b->exec_id);
                break;
        case SBX_AGENT_F_STDOUT:
        case SBX_AGENT_F_STDERR:
                assert_true(a->exec_id == b->exec_id);
                assert_int_equal(a->data_len, b->data_len);
                assert_memory_equal(a->data, b->data, a->data_len);
                break;
        case SBX_AGENT_F_EXIT:
                assert_true(a->exec_id == b->exec_id);
                assert_memory_equal(&a->exit, &b->exit, sizeof(a->exit));
                break;
        case SBX_AGENT_F_CANCEL:
                assert_true(a->exec_id == b->exec_id);
                break;
        case SBX_AGENT_F_RESET:
                assert_int_equal(a->level, b->level);
                break;
        case SBX_AGENT_F_RESET_DONE:
                assert_int_equal(a->killed, b->killed);
                assert_int_equal(a->tmp_removed, b->tmp_removed);
                assert_int_equal(a->tmp_failed, b->tmp_failed);
                break;
        case SBX_AGENT_F_ERROR:
                assert_true(a->exec_id == b->exec_id);
                assert_int_equal(a->code, b->code);
                assert_int_equal(a->sys_errno, b->sys_errno);
                assert_string_equal(a->message, b->message);
                break;
        default:
                fail_msg("unexpected type %d", a->type);
        }
}

/* Decodes exactly one frame from all of @p buf. */
static void decode_one(const sbx_agent_buf_t *buf, sbx_agent_frame_t *f)
{
        sbx_agent_dec_t *dec = sbx_agent_dec_new();
        char err[256]        = "";
        size_t used          = 0;

        assert_int_equal(sbx_agent_dec_feed(dec, buf->data, buf->len, &used, f,
                                            err, sizeof(err)),
                         SBX_OK);
        assert_int_equal(used, buf->len);
        assert_int_not_equal(f->type, SBX_AGENT_F_NONE);
        assert_int_equal(sbx_agent_dec_eof(dec, err, sizeof(err)), SBX_OK);
        sbx_agent_dec_destroy(dec);
}

static void test_round_trip_every_type(void **state)
{
        (void)state;
        for (int t = SBX_AGENT_F_PING; t < SBX_AGENT_F__CNT; t++) {
                sbx_agent_frame_t in = sample((sbx_agent_ftype_t)t), out;
                sbx_agent_buf_t buf = {0}, buf2 = {0};
                char err[256];

                assert_int_equal(
                    sbx_agent_frame_encode(&in, &buf, err, sizeof(err)),
                    SBX_OK);
                assert_int_equal(buf.data[0], SBX_AGENT_MAGIC);
                assert_int_equal(buf.data[2], t);
                decode_one(&buf, &out);
                assert_frame_equal(&in, &out);
                /* Canonical: the decoded frame encodes to the same bytes. */
                assert_int_equal(
                    sbx_agent_frame_encode(&out, &buf2, err, sizeof(err)),
                    SBX_OK);
                assert_int_equal(buf.len, buf2.len);
                assert_memory_equal(buf.data, buf2.data, buf.len);
                sbx_agent_frame_clear(&out);
                sbx_agent_buf_free(&buf);
                sbx_agent_buf_free(&buf2);
        }
}

static void test_exec_minimal_and_exit_code(void **state)
{
        static const char *const argv[] = {"true", NULL};
        sbx_agent_frame_t in            = {.type = SBX_AGENT_F_EXEC,
                                           .exec = {.exec_id = 1, .argv = argv}};
        sbx_agent_frame_t ex            = {
                       .type = SBX_AGENT_F_EXIT, .exec_id = 9, .exit = {.exit_code = 255}};
        sbx_agent_frame_t out;
        sbx_agent_buf_t buf = {0};
        char err[256];
        (void)state;

        /* NULL cwd and envp go as empty; stdin absent. */
        assert_int_equal(sbx_agent_frame_encode(&in, &buf, err, sizeof(err)),
                         SBX_OK);
        decode_one(&buf, &out);
        assert_string_equal(out.exec.cwd, "");
        assert_string_equal(out.exec.argv[0], "true");
        assert_null(out.exec.argv[1]);
        assert_null(out.exec.envp[0]);
        assert_int_equal(out.exec.stdin_len, 0);
        sbx_agent_frame_clear(&out);
        buf.len = 0;
        assert_int_equal(sbx_agent_frame_encode(&ex, &buf, err, sizeof(err)),
                         SBX_OK);
        decode_one(&buf, &out);
        assert_int_equal(out.exit.exit_code, 255);
        assert_int_equal(out.exit.signal, 0);
        assert_int_equal(out.exit.timed_out, 0);
        sbx_agent_frame_clear(&out);
        sbx_agent_buf_free(&buf);
}

/* A stream of every frame type, fed one byte per call. */
static void test_byte_by_byte(void **state)
{
        sbx_agent_buf_t buf = {0};
        size_t ends[SBX_AGENT_F__CNT];
        sbx_agent_dec_t *dec = sbx_agent_dec_new();
        int next             = SBX_AGENT_F_PING;
        char err[256];
        (void)state;

        for (int t = SBX_AGENT_F_PING; t < SBX_AGENT_F__CNT; t++) {
                sbx_agent_frame_t f = sample((sbx_agent_ftype_t)t);
                assert_int_equal(
                    sbx_agent_frame_encode(&f, &buf, err, sizeof(err)), SBX_OK);
                ends[t] = buf.len;
        }
        for (size_t i = 0; i < buf.len; i++) {
                sbx_agent_frame_t f;
                size_t used = 0;
                assert_int_equal(sbx_agent_dec_feed(dec, buf.data + i, 1, &used,
                                                    &f, err, sizeof(err)),
                                 SBX_OK);
                assert_int_equal(used, 1);
                if (f.type == SBX_AGENT_F_NONE) {
                        assert_true(next < SBX_AGENT_F__CNT);
                        assert_true(i + 1 < ends[next]);
                        continue;
                }
                /* A frame completes exactly at its last byte. */
                assert_int_equal(f.type, next);
                assert_int_equal(i + 1, ends[next]);
                sbx_agent_frame_t want = sample(f.type);
                assert_frame_equal(&want, &f);
                sbx_agent_frame_clear(&f);
                next++;
        }
        assert_int_equal(next, SBX_AGENT_F__CNT);
        assert_int_equal(sbx_agent_dec_eof(dec, err, sizeof(err)), SBX_OK);
        sbx_agent_dec_destroy(dec);
        sbx_agent_buf_free(&buf);
}

/* A feed stops at the end of a frame; the rest is for the next call. */
static void test_feed_stops_after_one_frame(void **state)
{
        sbx_agent_frame_t a  = sample(SBX_AGENT_F_PING),
                          b  = sample(SBX_AGENT_F_CANCEL), f;
        sbx_agent_buf_t buf  = {0};
        sbx_agent_dec_t *dec = sbx_agent_dec_new();
        size_t used, first;
        char err[256];
        (void)state;

        assert_int_equal(sbx_agent_frame_encode(&a, &buf, err, sizeof(err)),
                         SBX_OK);
        first = buf.len;
        assert_int_equal(sbx_agent_frame_encode(&b, &buf, err, sizeof(err)),
                         SBX_OK);
        assert_int_equal(sbx_agent_dec_feed(dec, buf.data, buf.len, &used, &f,
                                            err, sizeof(err)),
                         SBX_OK);
        assert_int_equal(used, first);
        assert_int_equal(f.type, SBX_AGENT_F_PING);
        sbx_agent_frame_clear(&f);
        assert_int_equal(
            sbx_agent_dec_feed(dec, buf.data + used, buf.len - used, &used, &f,
                               err, sizeof(err)),
            SBX_OK);
        assert_int_equal(used, buf.len - first);
        assert_int_equal(f.type, SBX_AGENT_F_CANCEL);
        assert_true(f.exec_id == b.exec_id);
        sbx_agent_frame_clear(&f);
        sbx_agent_dec_destroy(dec);
        sbx_agent_buf_free(&buf);
}

/* Feeds @p len bytes; returns the error and leaves the reason in err. */
static sbx_err_t feed_all(const uint8_t *data,
                          size_t len,
                          char *err,
                          size_t err_size)
{
        sbx_agent_dec_t *dec = sbx_agent_dec_new();
        sbx_err_t rc         = SBX_OK;
        size_t off           = 0;

        err[0] = '\0';
        while (off < len && !rc) {
                sbx_agent_frame_t f;
                size_t used;
                rc = sbx_agent_dec_feed(dec, data + off, len - off, &used, &f,
                                        err, err_size);
                if (!rc) {
                        off += used;
                        sbx_agent_frame_clear(&f);
                }
        }
        if (!rc)
                rc = sbx_agent_dec_eof(dec, err, err_size);
        sbx_agent_dec_destroy(dec);
        return rc;
}

static void test_truncated(void **state)
{
        sbx_agent_frame_t f = sample(SBX_AGENT_F_EXEC);
        sbx_agent_buf_t buf = {0};
        char err[256], want[128];
        (void)state;

        assert_int_equal(sbx_agent_frame_encode(&f, &buf, err, sizeof(err)),
                         SBX_OK);
        assert_int_equal(feed_all(buf.data, 3, err, sizeof(err)),
                         SBX_ERR_INVALID);
        assert_string_equal(err,
                            "truncated frame: the stream ended after 3 "
                            "of 8 header bytes");
        assert_int_equal(feed_all(buf.data, buf.len - 1, err, sizeof(err)),
                         SBX_ERR_INVALID);
        snprintf(want, sizeof(want),
                 "truncated EXEC frame: the stream ended after %zu of %zu "
                 "body bytes",
                 buf.len - 9, buf.len - 8);
        assert_string_equal(err, want);
        assert_int_equal(feed_all(buf.data, buf.len, err, sizeof(err)), SBX_OK);
        sbx_agent_buf_free(&buf);
}

static void test_oversized(void **state)
{
        uint8_t hdr[8] = {
            SBX_AGENT_MAGIC, 1, SBX_AGENT_F_STDOUT, 0, 0x00, 0x10, 0x00, 0x01};
        size_t big          = SBX_AGENT_MAX_BODY - 12; /* exec id + length */
        uint8_t *data       = calloc(1, big + 1);
        sbx_agent_frame_t f = {.type     = SBX_AGENT_F_STDOUT,
                               .exec_id  = 1,
                               .data     = data,
                               .data_len = big};
        sbx_agent_buf_t buf = {0};
        char err[256];
        (void)state;

        /* 1 MiB + 1 announced: refused at the header, nothing allocated. */
        assert_int_equal(feed_all(hdr, sizeof(hdr), err, sizeof(err)),
                         SBX_ERR_TOOBIG);
        assert_string_equal(err,
                            "STDOUT frame of 1048577 bytes exceeds the "
                            "limit of 1048576 bytes");
        /* Exactly at the limit: fine both ways. */
        assert_int_equal(sbx_agent_frame_encode(&f, &buf, err, sizeof(err)),
                         SBX_OK);
        assert_int_equal(buf.len, 8 + SBX_AGENT_MAX_BODY);
        assert_int_equal(feed_all(buf.data, buf.len, err, sizeof(err)), SBX_OK);
        /* One byte more: the encoder refuses and leaves buf as it was. */
        f.data_len = big + 1;
        assert_int_equal(sbx_agent_frame_encode(&f, &buf, err, sizeof(err)),
                         SBX_ERR_TOOBIG);
        assert_non_null(strstr(err, "larger than 1048576 bytes"));
        assert_int_equal(buf.len, 8 + SBX_AGENT_MAX_BODY);
        sbx_agent_buf_free(&buf);
        free(data);
}

static void test_garbage_header(void **state)
{
        static const struct {
                uint8_t hdr[8];
                size_t fail_at; /* bytes fed when refused */
                const char *reason;
        } cases[] = {
            {{'G', 'E', 'T', ' ', '/', ' ', 'H', 'T'},
             1,
             "bad magic byte 0x47 (want 0xa9)"},
            {{SBX_AGENT_MAGIC, 2, 1, 0, 0, 0, 0, 8},
             2,
             "unsupported protocol version 2 (want 1)"},
            {{SBX_AGENT_MAGIC, 1, 0, 0, 0, 0, 0, 8}, 3, "unknown frame type 0"},
            {{SBX_AGENT_MAGIC, 1, 12, 0, 0, 0, 0, 8},
             3,
             "unknown frame type 12"},
            {{SBX_AGENT_MAGIC, 1, 1, 7, 0, 0, 0, 8},
             4,
             "reserved header byte is 0x07, not 0"},
            {{SBX_AGENT_MAGIC, 1, 1, 0, 0xff, 0xff, 0xff, 0xff},
             8,
             "PING frame of 4294967295 bytes exceeds the limit of 1048576 "
             "bytes"},
        };
        (void)state;

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                sbx_agent_dec_t *dec = sbx_agent_dec_new();
                sbx_agent_frame_t f;
                char err[256] = "";
                size_t used, fed = 0;
                sbx_err_t rc = SBX_OK;
                while (!rc && fed < 8) {
                        rc = sbx_agent_dec_feed(dec, cases[i].hdr + fed, 1,
                                                &used, &f, err, sizeof(err));
                        fed++;
                }
                assert_int_not_equal(rc, SBX_OK);
                assert_int_equal(fed, cases[i].fail_at);
                assert_string_equal(err, cases[i].reason);
                /* Sticky: a broken stream cannot resync. */
                err[0] = '\0';
                assert_int_equal(sbx_agent_dec_feed(dec, cases[i].hdr, 1, &used,
                                                    &f, err, sizeof(err)),
                                 rc);
                assert_string_equal(err, cases[i].reason);
                sbx_agent_dec_destroy(dec);
        }
}

/* Body bytes of a frame: header built around them. */
static sbx_err_t feed_body(int type,
                           const char *body,
                           size_t len,
                           char *err,
                           size_t err_size)
{
        uint8_t *buf = malloc(8 + len);
        sbx_err_t rc;

        buf[0] = SBX_AGENT_MAGIC;
        buf[1] = SBX_AGENT_VERSION;
        buf[2] = (uint8_t)type;
        buf[3] = 0;
        buf[4] = (uint8_t)(len >> 24);
        buf[5] = (uint8_t)(len >> 16);
        buf[6] = (uint8_t)(len >> 8);
        buf[7] = (uint8_t)len;
        memcpy(buf + 8, body, len);
        rc = feed_all(buf, 8 + len, err, err_size);
        free(buf);
        return rc;
}

#define ID "\0\0\0\0\0\0\0\1"
#define EXEC_HEAD                                                              \
        ID "\0\0\0\0"                                                          \
           "\0"                                                                \
           "\0\0\0\0"                                                          \
           "\0\0\0\0"                                                          \
           "\0\0\0\0"

static void test_malformed_bodies(void **state)
{
        static const struct {
                int type;
                const char *body;
                size_t len;
                const char *reason;
        } cases[] = {
#define C(t, b, r) {SBX_AGENT_F_##t, b, sizeof(b) - 1, r}
            C(PING, "\0\0\0", "PING frame: nonce: needs 8 bytes, 3 left"),
            C(PING, "\0\0\0\0\0\0\0\0\0", "PING frame: body: 1 trailing bytes"),
            C(CANCEL, "\0\0\0\0\0\0\0\0",
              "CANCEL frame: exec id: 0 is reserved"),
            C(STARTED, ID "\0\0\0\0", "STARTED frame: pid: out of range"),
            C(STARTED, ID "\x80\0\0\0", "STARTED frame: pid: out of range"),
            C(STDOUT, ID "\0\0\0\5abc",
              "STDOUT frame: data: needs 5 bytes, 3 left"),
            C(STDERR, ID "\xff\xff\xff\xff",
              "STDERR frame: data: needs 4294967295 bytes, 0 left"),
            C(RESET, "\0\0\0\2", "RESET frame: level: only level 1 is defined"),
            C(ERROR, ID "\0\0\0\x63\0\0\0\0\0\0\0\0",
              "ERROR frame: code: unknown"),
            C(ERROR, ID "\0\0\0\1\0\0\0\0\0\0\0\2a\0",
              "ERROR frame: message: contains a NUL byte"),
            C(EXIT,
              ID "\0"
                 "\0\0\0\1"
                 "\0\0\0\x09"
                 "\0\0\0\0\0\0\0\0"
                 "\0\0\0\0\0\0\0\0"
                 "\0\0\0\0\0\0\0\0"
                 "\0\0\0\0\0\0\0\0",
              "EXIT frame: status: needs an exit code 0..255 or a signal "
              "1..64"),
            C(EXIT,
              ID "\x04"
                 "\0\0\0\0"
                 "\0\0\0\0"
                 "\0\0\0\0\0\0\0\0"
                 "\0\0\0\0\0\0\0\0"
                 "\0\0\0\0\0\0\0\0"
                 "\0\0\0\0\0\0\0\0",
              "EXIT frame: flags: unknown bits set"),
            C(EXEC,
              "\0\0\0\0\0\0\0\0"
              "\0\0\0\0"
              "\0"
              "\0\0\0\0"
              "\0\0\0\0"
              "\0\0\0\0"
              "\0\0\0\1"
              "\0\0\0\1a"
              "\0\0\0\0"
              "\0\0\0\0",
              "EXEC frame: exec id: 0 is reserved"),
            C(EXEC,
              ID "\0\0\0\0"
                 "\x04"
                 "\0\0\0\0"
                 "\0\0\0\0",
              "EXEC frame: flags: unknown bits set"),
            C(EXEC,
              ID "\0\0\0\0"
                 "\0"
                 "\0\0\0\1"
                 "\0\0\0\0",
              "EXEC frame: uid/gid: set without its flag"),
            C(EXEC,
              EXEC_HEAD "\0\0\0\0"
                        "\0\0\0\0"
                        "\0\0\0\0",
              "EXEC frame: argc: argv is empty"),
            C(EXEC,
              EXEC_HEAD "\0\0\0\3"
                        "\0\0\0\1a",
              "EXEC frame: argc: 3 entries cannot fit in 5 bytes"),
            C(EXEC, EXEC_HEAD "\x7f\xff\xff\xff",
              "EXEC frame: argc: 2147483647 entries, limit 32768"),
            C(EXEC,
              EXEC_HEAD "\0\0\0\1"
                        "\0\0\0\0"
                        "\0\0\0\0"
                        "\0\0\0\0",
              "EXEC frame: argv[0]: is empty"),
            C(EXEC,
              EXEC_HEAD "\0\0\0\1"
                        "\0\0\0\2a\0"
                        "\0\0\0\0"
                        "\0\0\0\0",
              "EXEC frame: argv: contains a NUL byte"),
            C(EXEC,
              EXEC_HEAD "\0\0\0\1"
                        "\0\0\0\1a"
                        "\0\0\0\1"
                        "\0\0\0\3=ab"
                        "\0\0\0\0",
              "EXEC frame: env: an entry is not NAME=value"),
            C(EXEC,
              EXEC_HEAD "\0\0\0\1"
                        "\0\0\0\1a"
                        "\0\0\0\1"
                        "\0\0\0\2ab"
                        "\0\0\0\0",
              "EXEC frame: env: an entry is not NAME=value"),
            C(EXEC,
              EXEC_HEAD "\0\0\0\1"
                        "\0\0\0\1a"
                        "\0\0\0\0"
                        "\0\0\0\2x",
              "EXEC frame: stdin: needs 2 bytes, 1 left"),
            C(EXEC,
              EXEC_HEAD "\0\0\0\1"
                        "\0\0\0\1a"
                        "\0\0\0\0"
                        "\0\0\0\0"
                        "!",
              "EXEC frame: body: 1 trailing bytes"),
#undef C
        };
        (void)state;

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char err[256] = "";
                sbx_err_t rc  = feed_body(cases[i].type, cases[i].body,
                                          cases[i].len, err, sizeof(err));
                if (rc != SBX_ERR_INVALID || strcmp(err, cases[i].reason))
                        fail_msg("case %zu: got %d '%s', want '%s'", i, rc, err,
                                 cases[i].reason);
        }
        /* And the well-formed neighbour of those EXEC cases is accepted. */
        {
                static const char ok[] = EXEC_HEAD
                    "\0\0\0\1"
                    "\0\0\0\1a"
                    "\0\0\0\0"
                    "\0\0\0\0";
                char err[256];
                assert_int_equal(feed_body(SBX_AGENT_F_EXEC, ok, sizeof(ok) - 1,
                                           err, sizeof(err)),
                                 SBX_OK);
        }
}

static void test_encoder_refuses_what_decoder_refuses(void **state)
{
        static const char *const empty0[] = {"", NULL};
        static const char *const argv[]   = {"ls", NULL};
        static const char *const badenv[] = {"NOEQUALS", NULL};
        sbx_agent_frame_t cases[]         = {
                    {.type = SBX_AGENT_F_EXEC, .exec = {.exec_id = 1}},
                    {.type = SBX_AGENT_F_EXEC, .exec = {.exec_id = 1, .argv = empty0}},
                    {.type = SBX_AGENT_F_EXEC, .exec = {.exec_id = 0, .argv = argv}},
                    {.type = SBX_AGENT_F_EXEC,
                     .exec = {.exec_id = 1, .argv = argv, .envp = badenv}},
                    {.type = SBX_AGENT_F_EXEC,
                     .exec = {.exec_id = 1, .argv = argv, .uid = 5}},
                    {.type = SBX_AGENT_F_STDOUT, .exec_id = 0},
                    {.type = SBX_AGENT_F_STARTED, .exec_id = 1, .pid = 0},
                    {.type    = SBX_AGENT_F_EXIT,
                     .exec_id = 1,
                     .exit    = {.exit_code = 256}},
                    {.type    = SBX_AGENT_F_EXIT,
                     .exec_id = 1,
                     .exit    = {.exit_code = 0, .signal = 9}},
                    {.type = SBX_AGENT_F_RESET, .level = 2},
                    {.type = SBX_AGENT_F_ERROR, .code = 0},
                    {.type = SBX_AGENT_F_NONE},
                    {.type = SBX_AGENT_F__CNT},
        };
        sbx_agent_buf_t buf = {0};
        (void)state;

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char err[256] = "";
                if (sbx_agent_frame_encode(&cases[i], &buf, err, sizeof(err)) !=
                        SBX_ERR_INVALID ||
                    !err[0] || buf.len != 0)
                        fail_msg("case %zu: encoded or no reason ('%s')", i,
                                 err);
        }
        sbx_agent_buf_free(&buf);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_round_trip_every_type),
            cmocka_unit_test(test_exec_minimal_and_exit_code),
            cmocka_unit_test(test_byte_by_byte),
            cmocka_unit_test(test_feed_stops_after_one_frame),
            cmocka_unit_test(test_truncated),
            cmocka_unit_test(test_oversized),
            cmocka_unit_test(test_garbage_header),
            cmocka_unit_test(test_malformed_bodies),
            cmocka_unit_test(test_encoder_refuses_what_decoder_refuses),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
