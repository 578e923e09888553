/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers every module uses. Allocation aborts on failure; formatting is
 * always bounded by the buffer size; file reads are bounded by a limit the
 * caller states, so no input can make sbx read without end.
 */
#include "core/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

_Noreturn void sbx_assert_fail(const char *expr, const char *file, int line)
{
        fprintf(stderr, "sbx: assertion failed: %s (%s:%d)\n", expr, file,
                line);
        abort();
}

static void *check_alloc(void *p)
{
        if (!p) {
                fprintf(stderr, "sbx: out of memory\n");
                abort();
        }
        return p;
}

void *sbx_malloc(size_t size)
{
        return check_alloc(malloc(size ? size : 1));
}

void *sbx_calloc(size_t n, size_t size)
{
        return check_alloc(calloc(n ? n : 1, size ? size : 1));
}

void *sbx_realloc(void *ptr, size_t size)
{
        return check_alloc(realloc(ptr, size ? size : 1));
}

char *sbx_strdup(const char *s)
{
        return check_alloc(strdup(s));
}

int sbx_streq(const char *a, const char *b)
{
        return a && b && !strcmp(a, b);
}

char *sbx_strndup(const char *s, size_t n)
{
        return check_alloc(strndup(s, n));
}

char *sbx_fmt(char *buf, size_t size, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, size, fmt, ap);
        va_end(ap);
        return buf;
}

sbx_err_t sbx_seterr(char *errstr,
                     size_t errstr_size,
                     sbx_err_t err,
                     const char *fmt,
                     ...)
{
        if (errstr && errstr_size > 0) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(errstr, errstr_size, fmt, ap);
                va_end(ap);
        }
        return err;
}

int64_t sbx_now_us(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t sbx_mono_us(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

sbx_err_t sbx_read_file(const char *path,
                        size_t max_size,
                        char **ret_buf,
                        size_t *ret_len,
                        char *errstr,
                        size_t errstr_size)
{
        FILE *f    = fopen(path, "rb");
        char *buf  = NULL;
        size_t len = 0, cap = 0;
        sbx_err_t err = SBX_OK;

        if (!f)
                return sbx_seterr(errstr, errstr_size,
                                  errno == ENOENT ? SBX_ERR_NOENT : SBX_ERR_IO,
                                  "%s: %s", path, strerror(errno));
        for (;;) {
                size_t n;
                if (cap - len < 4096) {
                        cap = cap ? cap * 2 : 8192;
                        buf = sbx_realloc(buf, cap + 1);
                }
                n = fread(buf + len, 1, cap - len, f);
                len += n;
                if (len > max_size) {
                        err = sbx_seterr(errstr, errstr_size, SBX_ERR_TOOBIG,
                                         "%s: larger than %zu bytes", path,
                                         max_size);
                        goto done;
                }
                if (n == 0) {
                        if (ferror(f))
                                err =
                                    sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                               "%s: read error", path);
                        break;
                }
        }
        if (!buf)
                buf = sbx_malloc(1);
        buf[len] = '\0';
done:
        fclose(f);
        if (err) {
                free(buf);
                return err;
        }
        *ret_buf = buf;
        if (ret_len)
                *ret_len = len;
        return SBX_OK;
}

uint64_t sbx_fnv1a64_n(uint64_t h, const void *data, size_t n)
{
        const unsigned char *p = data;
        for (size_t i = 0; i < n; i++)
                h = (h ^ p[i]) * 0x100000001b3ULL;
        return h;
}

uint64_t sbx_fnv1a64(uint64_t h, const char *s)
{
        return s ? sbx_fnv1a64_n(h, s, strlen(s)) : h;
}

char *sbx_strtrim(char *s)
{
        char *end;
        while (*s && isspace((unsigned char)*s))
                s++;
        end = s + strlen(s);
        while (end > s && isspace((unsigned char)end[-1]))
                *--end = '\0';
        return s;
}
