/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Line-oriented "key = value" files: the format of sbx's config, topic
 * specs and policy files. '#' starts a comment line; blank lines are
 * ignored; every other line must hold a key, '=' and a value.
 */
#ifndef SBX_KV_H
#define SBX_KV_H

#include <stddef.h>

#include "sbx/err.h"

/**
 * Called once per entry with the trimmed key and value (borrowed until the
 * callback returns) and the 1-based line number. On error the callback
 * writes a reason (without file:line, the parser prefixes it) to errstr.
 */
typedef sbx_err_t(sbx_kv_cb_t)(const char *key, const char *value, int line,
                               void *opaque, char *errstr, size_t errstr_size);

/** Parses @p text; @p name is used in messages ("name:line: reason"). */
sbx_err_t sbx_kv_parse(const char *name, const char *text, sbx_kv_cb_t *cb,
                       void *opaque, char *errstr, size_t errstr_size);

/** Reads @p path (at most 1 MiB) and parses it. */
sbx_err_t sbx_kv_parse_file(const char *path, sbx_kv_cb_t *cb, void *opaque,
                            char *errstr, size_t errstr_size);

/** Parses a decimal integer in [min, max]; SBX_ERR_INVALID otherwise. */
sbx_err_t sbx_kv_int(const char *value, long long min, long long max,
                     long long *ret_value);

#endif
