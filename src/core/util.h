/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Small helpers shared by every module: always-on assertions, allocation
 * that aborts on failure (error paths in sbx are about I/O and input, not
 * about malloc), bounded string formatting and monotonic/wall clocks.
 */
#ifndef SBX_UTIL_H
#define SBX_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "sbx/err.h"

#define SBX_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define SBX_STR_(x)       #x
#define SBX_STR(x)        SBX_STR_(x)

#define sbx_assert(cond)                                                       \
        do {                                                                   \
                if (!(cond))                                                   \
                        sbx_assert_fail(#cond, __FILE__, __LINE__);            \
        } while (0)

_Noreturn void sbx_assert_fail(const char *expr, const char *file, int line);

void *sbx_malloc(size_t size);
void *sbx_calloc(size_t n, size_t size);
void *sbx_realloc(void *ptr, size_t size);
char *sbx_strdup(const char *s);
char *sbx_strndup(const char *s, size_t n);
/** 1 if both are set and equal. */
int sbx_streq(const char *a, const char *b);

/** snprintf into @p buf that never overflows; returns @p buf. */
char *sbx_fmt(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** Formats into errstr (if not NULL) and returns @p err. */
sbx_err_t sbx_seterr(char *errstr,
                     size_t errstr_size,
                     sbx_err_t err,
                     const char *fmt,
                     ...) __attribute__((format(printf, 4, 5)));

/** Wall clock in microseconds since the epoch. */
int64_t sbx_now_us(void);
/** Monotonic clock in microseconds. */
int64_t sbx_mono_us(void);

/** Reads a whole file (NUL-terminated); caller frees *ret_buf. */
sbx_err_t sbx_read_file(const char *path,
                        size_t max_size,
                        char **ret_buf,
                        size_t *ret_len,
                        char *errstr,
                        size_t errstr_size);

/** Trims ASCII white space at both ends, in place; returns @p s. */
char *sbx_strtrim(char *s);

/** FNV-1a 64 (not a cryptographic hash): the start value, then the
 *  hash of @p s (NUL-terminated) or of @p n bytes continuing from @p h. */
#define SBX_FNV1A64_INIT 0xcbf29ce484222325ULL
uint64_t sbx_fnv1a64(uint64_t h, const char *s);
uint64_t sbx_fnv1a64_n(uint64_t h, const void *data, size_t n);

#endif
