/* SPDX-License-Identifier: Apache-2.0 */
/*
 * COPY text rows. The invariant: after sbx_copy_end() the buffer holds
 * only whole rows, each with exactly the columns written for it, and no
 * value contains an unescaped tab, newline or carriage return.
 */
#include "pg/copybuf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/util.h"

/* 9999-12-31 23:59:59.999999 UTC */
#define MAX_TIME_US 253402300799999999LL

void sbx_copybuf_reset(sbx_copybuf_t *b)
{
        b->len    = 0;
        b->rows   = 0;
        b->in_row = 0;
}

void sbx_copybuf_free(sbx_copybuf_t *b)
{
        free(b->buf);
        memset(b, 0, sizeof(*b));
}

static void reserve(sbx_copybuf_t *b, size_t more)
{
        if (b->len + more <= b->cap)
                return;
        while (b->len + more > b->cap)
                b->cap = b->cap ? b->cap * 2 : 64 * 1024;
        b->buf = sbx_realloc(b->buf, b->cap);
}

/* Starts a column: the separator if it is not the row's first. */
static void column(sbx_copybuf_t *b)
{
        reserve(b, 1);
        if (b->in_row)
                b->buf[b->len++] = '\t';
        b->in_row = 1;
}

static void put_raw(sbx_copybuf_t *b, const char *s, size_t n)
{
        reserve(b, n);
        memcpy(b->buf + b->len, s, n);
        b->len += n;
}

static void put_escaped(sbx_copybuf_t *b, const char *s, size_t n)
{
        size_t i;
        reserve(b, 2 * n);
        for (i = 0; i < n; i++) {
                char c = s[i], e = 0;
                switch (c) {
                case '\\':
                        e = '\\';
                        break;
                case '\t':
                        e = 't';
                        break;
                case '\n':
                        e = 'n';
                        break;
                case '\r':
                        e = 'r';
                        break;
                default:
                        break;
                }
                if (e) {
                        b->buf[b->len++] = '\\';
                        b->buf[b->len++] = e;
                } else
                        b->buf[b->len++] = c;
        }
}

void sbx_copy_str(sbx_copybuf_t *b, const char *s)
{
        column(b);
        if (!s)
                put_raw(b, "\\N", 2);
        else
                put_escaped(b, s, strlen(s));
}

void sbx_copy_int(sbx_copybuf_t *b, int64_t v)
{
        char n[24];
        column(b);
        put_raw(b, n, (size_t)snprintf(n, sizeof(n), "%" PRId64, v));
}

void sbx_copy_num(sbx_copybuf_t *b, double v)
{
        char n[40];
        column(b);
        put_raw(b, n, (size_t)snprintf(n, sizeof(n), "%.17g", v));
}

void sbx_copy_bool(sbx_copybuf_t *b, int v)
{
        column(b);
        put_raw(b, v ? "t" : "f", 1);
}

void sbx_copy_time(sbx_copybuf_t *b, int64_t us)
{
        char t[64];
        struct tm tm;
        time_t secs;
        int64_t frac;
        size_t n;

        column(b);
        if (us < 0)
                us = 0;
        if (us > MAX_TIME_US)
                us = MAX_TIME_US;
        secs = (time_t)(us / 1000000);
        frac = us % 1000000;
        gmtime_r(&secs, &tm);
        n = strftime(t, sizeof(t), "%Y-%m-%d %H:%M:%S", &tm);
        n += (size_t)snprintf(t + n, sizeof(t) - n, ".%06" PRId64 "+00", frac);
        put_raw(b, t, n);
}

/*
 * Rewrites every JSON escape \u0000 of @p s in place to \ufffd. Only real
 * escapes count: the text "\\u0000" (an escaped backslash, then "u0000")
 * is left alone.
 */
static void unescape_nul(char *s)
{
        for (; *s; s++) {
                if (*s != '\\')
                        continue;
                if (s[1] == 'u' && !strncmp(s + 2, "0000", 4))
                        memcpy(s + 2, "fffd", 4);
                if (s[1])
                        s++; /* skip the escaped character */
        }
}

void sbx_copy_json(sbx_copybuf_t *b, const json_t *j)
{
        char *s;
        if (!j) {
                sbx_copy_str(b, NULL);
                return;
        }
        s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
        sbx_assert(s != NULL);
        unescape_nul(s);
        sbx_copy_str(b, s);
        free(s);
}

void sbx_copy_end(sbx_copybuf_t *b)
{
        reserve(b, 1);
        b->buf[b->len++] = '\n';
        b->in_row        = 0;
        b->rows++;
}
