/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness of the agent protocol decoder, which reads bytes from
 * whoever reaches the agent socket (and, on the executor's side, from a
 * sandbox's PID 1). Byte 0 of an input is the size of the pieces the rest
 * is fed in (0: all at once), so frames split anywhere are exercised; the
 * rest is a byte stream. Besides "no crash, no leak, no undefined
 * behaviour", it checks the decoder's contract: every call makes progress
 * or completes a frame; a refusal has a reason and sticks; a decoded frame
 * re-encodes to exactly the bytes it came from and decodes again from
 * them; the end of the stream is clean exactly when it falls between
 * frames. A broken property abort()s with a description.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

_Noreturn static void broken(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

_Noreturn static void broken(const char *fmt, ...)
{
        va_list ap;
        fputs("fuzz_agent_proto: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        abort();
}

/* @p f was decoded from @p raw: it must encode back to it, and decode
 * again from the encoding in a single feed. */
static void check_round_trip(const sbx_agent_frame_t *f,
                             const uint8_t *raw,
                             size_t raw_len)
{
        sbx_agent_buf_t buf = {0}, buf2 = {0};
        sbx_agent_dec_t *dec = sbx_agent_dec_new();
        sbx_agent_frame_t g;
        char err[256] = "";
        size_t used;

        if (sbx_agent_frame_encode(f, &buf, err, sizeof(err)))
                broken("a decoded %s frame does not encode: %s",
                       sbx_agent_ftype_name(f->type), err);
        if (buf.len != raw_len || memcmp(buf.data, raw, raw_len))
                broken("a %s frame of %zu bytes re-encodes to %zu other bytes",
                       sbx_agent_ftype_name(f->type), raw_len, buf.len);
        if (sbx_agent_dec_feed(dec, buf.data, buf.len, &used, &g, err,
                               sizeof(err)))
                broken("a re-encoded %s frame does not decode: %s",
                       sbx_agent_ftype_name(f->type), err);
        if (used != buf.len || g.type != f->type)
                broken(
                    "a re-encoded %s frame decodes as %s using %zu of %zu "
                    "bytes",
                    sbx_agent_ftype_name(f->type), sbx_agent_ftype_name(g.type),
                    used, buf.len);
        if (sbx_agent_frame_encode(&g, &buf2, err, sizeof(err)) ||
            buf2.len != buf.len || memcmp(buf2.data, buf.data, buf.len))
                broken("a %s frame changes in its second round trip",
                       sbx_agent_ftype_name(f->type));
        sbx_agent_frame_clear(&g);
        sbx_agent_dec_destroy(dec);
        sbx_agent_buf_free(&buf);
        sbx_agent_buf_free(&buf2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        sbx_agent_dec_t *dec;
        size_t step, pos = 0, frame_start = 0;
        char err[256];

        if (size < 1)
                return 0;
        step = data[0] ? data[0] : size;
        data++;
        size--;
        dec = sbx_agent_dec_new();
        while (pos < size) {
                size_t end = pos + step < size ? pos + step : size;
                while (pos < end) {
                        sbx_agent_frame_t f;
                        size_t used = 0;
                        sbx_err_t rc;
                        char again[256] = "";
                        err[0]          = '\0';
                        rc = sbx_agent_dec_feed(dec, data + pos, end - pos,
                                                &used, &f, err, sizeof(err));
                        if (rc) {
                                if (!err[0])
                                        broken("a refusal without a reason");
                                if (sbx_agent_dec_feed(dec, data, size, &used,
                                                       &f, again,
                                                       sizeof(again)) != rc ||
                                    strcmp(err, again))
                                        broken(
                                            "a refusal did not stick: "
                                            "'%s' then '%s'",
                                            err, again);
                                goto done;
                        }
                        if (used > end - pos)
                                broken("used %zu of %zu bytes", used,
                                       end - pos);
                        pos += used;
                        if (f.type == SBX_AGENT_F_NONE) {
                                if (pos != end)
                                        broken(
                                            "stopped at %zu of %zu bytes "
                                            "without a frame",
                                            pos, end);
                                continue;
                        }
                        check_round_trip(&f, data + frame_start,
                                         pos - frame_start);
                        frame_start = pos;
                        sbx_agent_frame_clear(&f);
                }
        }
        err[0] = '\0';
        if (sbx_agent_dec_eof(dec, err, sizeof(err)) == SBX_OK) {
                if (frame_start != size)
                        broken("a stream ending inside a frame ends cleanly");
        } else if (frame_start == size || !err[0]) {
                broken("a stream ending between frames is refused: '%s'", err);
        }
done:
        sbx_agent_dec_destroy(dec);
        return 0;
}
