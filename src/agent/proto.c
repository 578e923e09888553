/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Encoder and incremental decoder of the agent protocol (layout in
 * proto.h). The decoder takes the header byte by byte, checking each as it
 * comes, so garbage is refused at its first bad byte; it allocates the body
 * only once the header is valid, exactly the announced size (at most
 * SBX_AGENT_MAX_BODY), and parses it with a cursor that checks every
 * length against what remains. Strings are NUL-terminated in place, each
 * moved over its own length prefix, so a decoded frame owns one body
 * buffer plus, for EXEC, its argv and envp arrays. The encoder applies the
 * same rules as the decoder, which keeps the encoding canonical.
 */
#include "agent/proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

struct sbx_agent_dec_s {
        uint8_t hdr[SBX_AGENT_HEADER_LEN];
        size_t hdr_have;
        uint8_t *body; /* NULL until the header is complete */
        size_t body_len, body_have;
        sbx_err_t err; /* sticky: a broken stream stays broken */
        char reason[256];
};

static const char *const ftype_names[SBX_AGENT_F__CNT] = {
    "NONE",   "PING", "PONG",   "EXEC",  "STARTED",    "STDOUT",
    "STDERR", "EXIT", "CANCEL", "RESET", "RESET_DONE", "ERROR"};

const char *sbx_agent_ftype_name(int type)
{
        if (type < 0 || type >= SBX_AGENT_F__CNT)
                return "?";
        return ftype_names[type];
}

void sbx_agent_buf_free(sbx_agent_buf_t *buf)
{
        free(buf->data);
        memset(buf, 0, sizeof(*buf));
}

void sbx_agent_buf_consume(sbx_agent_buf_t *buf, size_t n)
{
        sbx_assert(n <= buf->len);
        memmove(buf->data, buf->data + n, buf->len - n);
        buf->len -= n;
}

/* Makes room for @p n more bytes. */
static void buf_reserve(sbx_agent_buf_t *buf, size_t n)
{
        size_t cap = buf->cap ? buf->cap : 256;
        if (buf->cap - buf->len >= n)
                return;
        while (cap - buf->len < n)
                cap *= 2;
        buf->data = sbx_realloc(buf->data, cap);
        buf->cap  = cap;
}

/*
 * Encoding: a writer that appends to the output buffer and remembers the
 * first error; the caller rolls the buffer back if there was one.
 */
typedef struct wr_s {
        sbx_agent_buf_t *out;
        size_t body_start;
        sbx_err_t err;
        char *errstr;
        size_t errstr_size;
} wr_t;

static void wr_fail(wr_t *w, sbx_err_t err, const char *what, const char *why)
{
        if (!w->err)
                w->err = sbx_seterr(w->errstr, w->errstr_size, err, "%s: %s",
                                    what, why);
}

static void wr_raw(wr_t *w, const void *p, size_t n, const char *what)
{
        if (w->err)
                return;
        if (n > SBX_AGENT_MAX_BODY ||
            w->out->len - w->body_start > SBX_AGENT_MAX_BODY - n) {
                w->err = sbx_seterr(
                    w->errstr, w->errstr_size, SBX_ERR_TOOBIG,
                    "%s: %zu bytes make the frame body larger than %d bytes",
                    what, n, SBX_AGENT_MAX_BODY);
                return;
        }
        if (!n)
                return;
        buf_reserve(w->out, n);
        memcpy(w->out->data + w->out->len, p, n);
        w->out->len += n;
}

static void wr_be(wr_t *w, uint64_t v, size_t n, const char *what)
{
        uint8_t b[8];
        size_t i;
        for (i = 0; i < n; i++)
                b[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
        wr_raw(w, b, n, what);
}

static void wr_bytes(wr_t *w, const void *p, size_t n, const char *what)
{
        if (n > UINT32_MAX || (n && !p)) {
                wr_fail(w, SBX_ERR_INVALID, what, "bad byte string");
                return;
        }
        wr_be(w, n, 4, what);
        wr_raw(w, p, n, what);
}

static void wr_str(wr_t *w, const char *s, const char *what)
{
        wr_bytes(w, s ? s : "", s ? strlen(s) : 0, what);
}

/* A valid environment entry: "NAME=value", NAME not empty. */
static int env_entry_ok(const char *s, size_t len)
{
        const char *eq = memchr(s, '=', len);
        return eq && eq != s;
}

static size_t vec_count(const char *const *v)
{
        size_t n = 0;
        while (v && v[n])
                n++;
        return n;
}

static void encode_exec(wr_t *w, const sbx_agent_exec_req_t *x)
{
        size_t argc = vec_count(x->argv), envc = vec_count(x->envp), i;

        if (!x->exec_id)
                wr_fail(w, SBX_ERR_INVALID, "EXEC", "exec id 0 is reserved");
        if (x->flags & ~(uint32_t)(SBX_AGENT_EXEC_UID | SBX_AGENT_EXEC_GID))
                wr_fail(w, SBX_ERR_INVALID, "EXEC", "unknown flags");
        if ((!(x->flags & SBX_AGENT_EXEC_UID) && x->uid) ||
            (!(x->flags & SBX_AGENT_EXEC_GID) && x->gid))
                wr_fail(w, SBX_ERR_INVALID, "EXEC",
                        "uid or gid set without its flag");
        if (!argc || !x->argv[0][0])
                wr_fail(w, SBX_ERR_INVALID, "EXEC", "empty argv or argv[0]");
        if (argc > SBX_AGENT_MAX_ARGS || envc > SBX_AGENT_MAX_ARGS)
                wr_fail(w, SBX_ERR_TOOBIG, "EXEC", "too many argv or env");
        for (i = 0; i < envc; i++)
                if (!env_entry_ok(x->envp[i], strlen(x->envp[i])))
                        wr_fail(w, SBX_ERR_INVALID, "EXEC env",
                                "an entry is not NAME=value");
        wr_be(w, x->exec_id, 8, "EXEC exec id");
        wr_be(w, x->deadline_ms, 4, "EXEC deadline");
        wr_be(w, x->flags, 1, "EXEC flags");
        wr_be(w, x->uid, 4, "EXEC uid");
        wr_be(w, x->gid, 4, "EXEC gid");
        wr_str(w, x->cwd, "EXEC cwd");
        wr_be(w, argc, 4, "EXEC argc");
        for (i = 0; i < argc; i++)
                wr_str(w, x->argv[i], "EXEC argv");
        wr_be(w, envc, 4, "EXEC envc");
        for (i = 0; i < envc; i++)
                wr_str(w, x->envp[i], "EXEC env");
        wr_bytes(w, x->stdin_data, x->stdin_len, "EXEC stdin");
}

static void encode_exit(wr_t *w, uint64_t exec_id, const sbx_agent_exit_t *e)
{
        if (!(e->signal == 0 && e->exit_code >= 0 && e->exit_code <= 255) &&
            !(e->signal >= 1 && e->signal <= 64 && e->exit_code == -1))
                wr_fail(w, SBX_ERR_INVALID, "EXIT",
                        "needs an exit code 0..255 or a signal 1..64");
        wr_be(w, exec_id, 8, "EXIT exec id");
        wr_be(w,
              (e->timed_out ? SBX_AGENT_EXIT_TIMED_OUT : 0) |
                  (e->cancelled ? SBX_AGENT_EXIT_CANCELLED : 0),
              1, "EXIT flags");
        wr_be(w, (uint32_t)e->exit_code, 4, "EXIT code");
        wr_be(w, (uint32_t)e->signal, 4, "EXIT signal");
        wr_be(w, e->wall_us, 8, "EXIT wall");
        wr_be(w, e->user_us, 8, "EXIT user");
        wr_be(w, e->sys_us, 8, "EXIT sys");
        wr_be(w, e->maxrss_kb, 8, "EXIT maxrss");
}

/* Frame types whose exec id must not be 0. */
static int needs_exec_id(int type)
{
        return type == SBX_AGENT_F_STARTED || type == SBX_AGENT_F_STDOUT ||
               type == SBX_AGENT_F_STDERR || type == SBX_AGENT_F_EXIT ||
               type == SBX_AGENT_F_CANCEL;
}

sbx_err_t sbx_agent_frame_encode(const sbx_agent_frame_t *f,
                                 sbx_agent_buf_t *out,
                                 char *errstr,
                                 size_t errstr_size)
{
        wr_t w         = {out, 0, SBX_OK, errstr, errstr_size};
        size_t start   = out->len, body_len;
        const char *nm = sbx_agent_ftype_name(f->type);
        uint8_t hdr[SBX_AGENT_HEADER_LEN] = {SBX_AGENT_MAGIC, SBX_AGENT_VERSION,
                                             (uint8_t)f->type, 0};

        if (f->type <= SBX_AGENT_F_NONE || f->type >= SBX_AGENT_F__CNT)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "cannot encode frame type %d", (int)f->type);
        if (needs_exec_id(f->type) && !f->exec_id)
                wr_fail(&w, SBX_ERR_INVALID, nm, "exec id 0 is reserved");
        buf_reserve(out, SBX_AGENT_HEADER_LEN);
        memcpy(out->data + out->len, hdr, sizeof(hdr));
        out->len += sizeof(hdr);
        w.body_start = out->len;
        switch (f->type) {
        case SBX_AGENT_F_PING:
        case SBX_AGENT_F_PONG:
                wr_be(&w, f->nonce, 8, nm);
                break;
        case SBX_AGENT_F_EXEC:
                encode_exec(&w, &f->exec);
                break;
        case SBX_AGENT_F_STARTED:
                if (f->pid <= 0)
                        wr_fail(&w, SBX_ERR_INVALID, nm, "pid must be > 0");
                wr_be(&w, f->exec_id, 8, nm);
                wr_be(&w, (uint32_t)f->pid, 4, nm);
                break;
        case SBX_AGENT_F_STDOUT:
        case SBX_AGENT_F_STDERR:
                wr_be(&w, f->exec_id, 8, nm);
                wr_bytes(&w, f->data, f->data_len, nm);
                break;
        case SBX_AGENT_F_EXIT:
                encode_exit(&w, f->exec_id, &f->exit);
                break;
        case SBX_AGENT_F_CANCEL:
                wr_be(&w, f->exec_id, 8, nm);
                break;
        case SBX_AGENT_F_RESET:
                if (f->level != 1)
                        wr_fail(&w, SBX_ERR_INVALID, nm, "level must be 1");
                wr_be(&w, f->level, 4, nm);
                break;
        case SBX_AGENT_F_RESET_DONE:
                wr_be(&w, f->killed, 4, nm);
                wr_be(&w, f->tmp_removed, 4, nm);
                wr_be(&w, f->tmp_failed, 4, nm);
                break;
        case SBX_AGENT_F_ERROR:
                if (f->code < 1 || f->code >= SBX_AGENT_E__CNT ||
                    f->sys_errno < 0 || f->sys_errno > 4095)
                        wr_fail(&w, SBX_ERR_INVALID, nm, "bad code or errno");
                wr_be(&w, f->exec_id, 8, nm);
                wr_be(&w, f->code, 4, nm);
                wr_be(&w, (uint32_t)f->sys_errno, 4, nm);
                wr_str(&w, f->message, nm);
                break;
        default:
                break;
        }
        if (w.err) {
                out->len = start;
                return w.err;
        }
        body_len = out->len - w.body_start;
        for (size_t i = 0; i < 4; i++)
                out->data[start + 4 + i] = (uint8_t)(body_len >> (8 * (3 - i)));
        return SBX_OK;
}

void sbx_agent_frame_clear(sbx_agent_frame_t *f)
{
        if (!f)
                return;
        free(f->mem_);
        free(f->argv_);
        free(f->envp_);
        memset(f, 0, sizeof(*f));
}

/*
 * Decoding: a cursor over one body. Each read checks its length against
 * what remains and, on failure, records the first reason.
 */
typedef struct rd_s {
        uint8_t *p;
        size_t len, off;
        const char *frame;
        sbx_err_t err;
        char *reason;
        size_t reason_size;
} rd_t;

static int rd_fail(rd_t *r, const char *what, const char *why)
{
        if (!r->err)
                r->err = sbx_seterr(r->reason, r->reason_size, SBX_ERR_INVALID,
                                    "%s frame: %s: %s", r->frame, what, why);
        return -1;
}

static int rd_need(rd_t *r, size_t n, const char *what)
{
        char why[96];
        if (r->err)
                return -1;
        if (r->len - r->off < n)
                return rd_fail(
                    r, what,
                    sbx_fmt(why, sizeof(why), "needs %zu bytes, %zu left", n,
                            r->len - r->off));
        return 0;
}

static uint64_t rd_be(rd_t *r, size_t n, const char *what)
{
        uint64_t v = 0;
        if (rd_need(r, n, what))
                return 0;
        for (size_t i = 0; i < n; i++)
                v = (v << 8) | r->p[r->off + i];
        r->off += n;
        return v;
}

/* A u32-length-prefixed byte string; points into the body. */
static const uint8_t *rd_bytes(rd_t *r, size_t *ret_len, const char *what)
{
        size_t n = (size_t)rd_be(r, 4, what);
        const uint8_t *p;
        if (rd_need(r, n, what))
                return NULL;
        p = r->p + r->off;
        r->off += n;
        *ret_len = n;
        return p;
}

/*
 * A string: moved 4 bytes down over its own length prefix, which was
 * already read, and NUL-terminated where its last byte was or inside the
 * old prefix; nothing not yet read is touched.
 */
static char *rd_str(rd_t *r, size_t *ret_len, const char *what)
{
        size_t n = (size_t)rd_be(r, 4, what);
        char *s;
        if (rd_need(r, n, what))
                return NULL;
        if (memchr(r->p + r->off, '\0', n)) {
                rd_fail(r, what, "contains a NUL byte");
                return NULL;
        }
        s = (char *)r->p + r->off - 4;
        memmove(s, r->p + r->off, n);
        s[n] = '\0';
        r->off += n;
        if (ret_len)
                *ret_len = n;
        return s;
}

/* A count of strings, each at least 4 bytes: bounded by what is left. */
static size_t rd_count(rd_t *r, const char *what)
{
        size_t n = (size_t)rd_be(r, 4, what);
        char why[96];
        if (r->err)
                return 0;
        if (n > SBX_AGENT_MAX_ARGS) {
                rd_fail(r, what,
                        sbx_fmt(why, sizeof(why), "%zu entries, limit %d", n,
                                SBX_AGENT_MAX_ARGS));
                return 0;
        }
        if (n > (r->len - r->off) / 4) {
                rd_fail(r, what,
                        sbx_fmt(why, sizeof(why),
                                "%zu entries cannot fit in %zu bytes", n,
                                r->len - r->off));
                return 0;
        }
        return n;
}

static void decode_exec(rd_t *r, sbx_agent_frame_t *f)
{
        sbx_agent_exec_req_t *x = &f->exec;
        size_t argc, envc, i, n = 0;

        x->exec_id     = rd_be(r, 8, "exec id");
        x->deadline_ms = (uint32_t)rd_be(r, 4, "deadline");
        x->flags       = (uint32_t)rd_be(r, 1, "flags");
        x->uid         = (uint32_t)rd_be(r, 4, "uid");
        x->gid         = (uint32_t)rd_be(r, 4, "gid");
        if (!r->err && !x->exec_id)
                rd_fail(r, "exec id", "0 is reserved");
        if (x->flags & ~(uint32_t)(SBX_AGENT_EXEC_UID | SBX_AGENT_EXEC_GID))
                rd_fail(r, "flags", "unknown bits set");
        if ((!(x->flags & SBX_AGENT_EXEC_UID) && x->uid) ||
            (!(x->flags & SBX_AGENT_EXEC_GID) && x->gid))
                rd_fail(r, "uid/gid", "set without its flag");
        x->cwd = rd_str(r, NULL, "cwd");
        argc   = rd_count(r, "argc");
        if (!r->err && !argc)
                rd_fail(r, "argc", "argv is empty");
        if (r->err)
                return;
        f->argv_ = sbx_calloc(argc + 1, sizeof(char *));
        for (i = 0; i < argc && !r->err; i++)
                f->argv_[i] = rd_str(r, &n, "argv");
        if (!r->err && !f->argv_[0][0])
                rd_fail(r, "argv[0]", "is empty");
        envc = rd_count(r, "envc");
        if (r->err)
                return;
        f->envp_ = sbx_calloc(envc + 1, sizeof(char *));
        for (i = 0; i < envc && !r->err; i++) {
                f->envp_[i] = rd_str(r, &n, "env");
                if (!r->err && !env_entry_ok(f->envp_[i], n))
                        rd_fail(r, "env", "an entry is not NAME=value");
        }
        x->stdin_data = rd_bytes(r, &x->stdin_len, "stdin");
        x->argv       = (const char *const *)f->argv_;
        x->envp       = (const char *const *)f->envp_;
}

static void decode_exit(rd_t *r, sbx_agent_frame_t *f)
{
        sbx_agent_exit_t *e = &f->exit;
        uint64_t flags;

        f->exec_id   = rd_be(r, 8, "exec id");
        flags        = rd_be(r, 1, "flags");
        e->exit_code = (int32_t)(uint32_t)rd_be(r, 4, "exit code");
        e->signal    = (int)(uint32_t)rd_be(r, 4, "signal");
        e->wall_us   = rd_be(r, 8, "wall");
        e->user_us   = rd_be(r, 8, "user");
        e->sys_us    = rd_be(r, 8, "sys");
        e->maxrss_kb = rd_be(r, 8, "maxrss");
        if (r->err)
                return;
        if (flags &
            ~(uint64_t)(SBX_AGENT_EXIT_TIMED_OUT | SBX_AGENT_EXIT_CANCELLED))
                rd_fail(r, "flags", "unknown bits set");
        e->timed_out = !!(flags & SBX_AGENT_EXIT_TIMED_OUT);
        e->cancelled = !!(flags & SBX_AGENT_EXIT_CANCELLED);
        if (!(e->signal == 0 && e->exit_code >= 0 && e->exit_code <= 255) &&
            !(e->signal >= 1 && e->signal <= 64 && e->exit_code == -1))
                rd_fail(r, "status",
                        "needs an exit code 0..255 or a signal 1..64");
}

/*
 * Parses @p body (taken over: owned by *f on success, freed on failure)
 * of a frame of @p type.
 */
static sbx_err_t decode_body(int type,
                             uint8_t *body,
                             size_t len,
                             sbx_agent_frame_t *ret_frame,
                             char *reason,
                             size_t reason_size)
{
        sbx_agent_frame_t f = {.type = (sbx_agent_ftype_t)type, .mem_ = body};
        rd_t r   = {body,   len,    0,          sbx_agent_ftype_name(type),
                    SBX_OK, reason, reason_size};
        size_t n = 0;

        switch (type) {
        case SBX_AGENT_F_PING:
        case SBX_AGENT_F_PONG:
                f.nonce = rd_be(&r, 8, "nonce");
                break;
        case SBX_AGENT_F_EXEC:
                decode_exec(&r, &f);
                break;
        case SBX_AGENT_F_STARTED:
                f.exec_id = rd_be(&r, 8, "exec id");
                n         = (size_t)rd_be(&r, 4, "pid");
                if (!r.err && (n == 0 || n > INT32_MAX))
                        rd_fail(&r, "pid", "out of range");
                f.pid = (int32_t)n;
                break;
        case SBX_AGENT_F_STDOUT:
        case SBX_AGENT_F_STDERR:
                f.exec_id = rd_be(&r, 8, "exec id");
                f.data    = rd_bytes(&r, &f.data_len, "data");
                break;
        case SBX_AGENT_F_EXIT:
                decode_exit(&r, &f);
                break;
        case SBX_AGENT_F_CANCEL:
                f.exec_id = rd_be(&r, 8, "exec id");
                break;
        case SBX_AGENT_F_RESET:
                f.level = (uint32_t)rd_be(&r, 4, "level");
                if (!r.err && f.level != 1)
                        rd_fail(&r, "level", "only level 1 is defined");
                break;
        case SBX_AGENT_F_RESET_DONE:
                f.killed      = (uint32_t)rd_be(&r, 4, "killed");
                f.tmp_removed = (uint32_t)rd_be(&r, 4, "tmp removed");
                f.tmp_failed  = (uint32_t)rd_be(&r, 4, "tmp failed");
                break;
        case SBX_AGENT_F_ERROR:
                f.exec_id   = rd_be(&r, 8, "exec id");
                f.code      = (uint32_t)rd_be(&r, 4, "code");
                f.sys_errno = (int32_t)(uint32_t)rd_be(&r, 4, "errno");
                if (!r.err && (f.code < 1 || f.code >= SBX_AGENT_E__CNT))
                        rd_fail(&r, "code", "unknown");
                if (!r.err && (f.sys_errno < 0 || f.sys_errno > 4095))
                        rd_fail(&r, "errno", "out of range");
                f.message = rd_str(&r, NULL, "message");
                break;
        default:
                sbx_assert(!"frame type checked in the header");
        }
        if (!r.err && needs_exec_id(type) && !f.exec_id)
                rd_fail(&r, "exec id", "0 is reserved");
        if (!r.err && r.off != len) {
                char why[64];
                rd_fail(&r, "body",
                        sbx_fmt(why, sizeof(why), "%zu trailing bytes",
                                len - r.off));
        }
        if (r.err) {
                sbx_agent_frame_clear(&f);
                return r.err;
        }
        *ret_frame = f;
        return SBX_OK;
}

sbx_agent_dec_t *sbx_agent_dec_new(void)
{
        return sbx_calloc(1, sizeof(sbx_agent_dec_t));
}

void sbx_agent_dec_destroy(sbx_agent_dec_t *dec)
{
        if (!dec)
                return;
        free(dec->body);
        free(dec);
}

/* Poisons @p dec with a reason; returns the error. */
static sbx_err_t dec_fail(sbx_agent_dec_t *dec, sbx_err_t err, const char *why)
{
        dec->err = err;
        if (why != dec->reason)
                sbx_fmt(dec->reason, sizeof(dec->reason), "%s", why);
        return err;
}

/* Checks the header bytes received so far; at 8, sizes the body. */
static sbx_err_t dec_check_header(sbx_agent_dec_t *dec)
{
        const uint8_t *h = dec->hdr;
        char why[160];
        size_t len;

        if (dec->hdr_have > 0 && h[0] != SBX_AGENT_MAGIC)
                return dec_fail(dec, SBX_ERR_INVALID,
                                sbx_fmt(why, sizeof(why),
                                        "bad magic byte 0x%02x (want 0x%02x)",
                                        h[0], SBX_AGENT_MAGIC));
        if (dec->hdr_have > 1 && h[1] != SBX_AGENT_VERSION)
                return dec_fail(dec, SBX_ERR_INVALID,
                                sbx_fmt(why, sizeof(why),
                                        "unsupported protocol version %u "
                                        "(want %d)",
                                        h[1], SBX_AGENT_VERSION));
        if (dec->hdr_have > 2 &&
            (h[2] == SBX_AGENT_F_NONE || h[2] >= SBX_AGENT_F__CNT))
                return dec_fail(
                    dec, SBX_ERR_INVALID,
                    sbx_fmt(why, sizeof(why), "unknown frame type %u", h[2]));
        if (dec->hdr_have > 3 && h[3] != 0)
                return dec_fail(dec, SBX_ERR_INVALID,
                                sbx_fmt(why, sizeof(why),
                                        "reserved header byte is 0x%02x, "
                                        "not 0",
                                        h[3]));
        if (dec->hdr_have < SBX_AGENT_HEADER_LEN)
                return SBX_OK;
        len = (size_t)h[4] << 24 | (size_t)h[5] << 16 | (size_t)h[6] << 8 |
              (size_t)h[7];
        if (len > SBX_AGENT_MAX_BODY)
                return dec_fail(dec, SBX_ERR_TOOBIG,
                                sbx_fmt(why, sizeof(why),
                                        "%s frame of %zu bytes exceeds the "
                                        "limit of %d bytes",
                                        sbx_agent_ftype_name(h[2]), len,
                                        SBX_AGENT_MAX_BODY));
        dec->body      = sbx_malloc(len);
        dec->body_len  = len;
        dec->body_have = 0;
        return SBX_OK;
}

sbx_err_t sbx_agent_dec_feed(sbx_agent_dec_t *dec,
                             const uint8_t *data,
                             size_t len,
                             size_t *ret_used,
                             sbx_agent_frame_t *ret_frame,
                             char *errstr,
                             size_t errstr_size)
{
        sbx_agent_frame_t f = {.type = SBX_AGENT_F_NONE};
        size_t used         = 0, n;
        uint8_t *body;
        sbx_err_t err;

        if (dec->err)
                goto fail;
        while (dec->hdr_have < SBX_AGENT_HEADER_LEN && used < len) {
                dec->hdr[dec->hdr_have++] = data[used++];
                if (dec_check_header(dec))
                        goto fail;
        }
        if (dec->hdr_have < SBX_AGENT_HEADER_LEN)
                goto done;
        n = dec->body_len - dec->body_have;
        if (n > len - used)
                n = len - used;
        if (n) {
                memcpy(dec->body + dec->body_have, data + used, n);
                dec->body_have += n;
                used += n;
        }
        if (dec->body_have < dec->body_len)
                goto done;
        body          = dec->body;
        dec->body     = NULL;
        dec->hdr_have = 0;
        err = decode_body(dec->hdr[2], body, dec->body_len, &f, dec->reason,
                          sizeof(dec->reason));
        if (err) {
                dec_fail(dec, err, dec->reason);
                goto fail;
        }
done:
        *ret_used  = used;
        *ret_frame = f;
        return SBX_OK;
fail:
        return sbx_seterr(errstr, errstr_size, dec->err, "%s", dec->reason);
}

sbx_err_t sbx_agent_dec_eof(const sbx_agent_dec_t *dec,
                            char *errstr,
                            size_t errstr_size)
{
        if (dec->err)
                return sbx_seterr(errstr, errstr_size, dec->err, "%s",
                                  dec->reason);
        if (dec->hdr_have == 0)
                return SBX_OK;
        if (dec->hdr_have < SBX_AGENT_HEADER_LEN)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "truncated frame: the stream ended after "
                                  "%zu of %d header bytes",
                                  dec->hdr_have, SBX_AGENT_HEADER_LEN);
        return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                          "truncated %s frame: the stream ended after %zu of "
                          "%zu body bytes",
                          sbx_agent_ftype_name(dec->hdr[2]), dec->body_have,
                          dec->body_len);
}
