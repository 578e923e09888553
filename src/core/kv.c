/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Parser of "key = value" files. It never accepts a line it does not
 * understand: the first malformed line stops the parse with its file and
 * line number, and the callback has then seen only the lines before it.
 */
#include "core/kv.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

#define KV_MAX_FILE (1024 * 1024)

static int key_ok(const char *k)
{
        if (!*k)
                return 0;
        for (; *k; k++)
                if (!isalnum((unsigned char)*k) && !strchr("._-", *k))
                        return 0;
        return 1;
}

sbx_err_t sbx_kv_parse(const char *name, const char *text, sbx_kv_cb_t *cb,
                       void *opaque, char *errstr, size_t errstr_size)
{
        char *copy = sbx_strdup(text), *line, *next;
        int lineno = 0;
        sbx_err_t err = SBX_OK;
        char reason[512];

        for (line = copy; line; line = next) {
                char *eq, *key, *val;
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                lineno++;
                line = sbx_strtrim(line);
                if (!*line || *line == '#')
                        continue;
                eq = strchr(line, '=');
                if (!eq) {
                        err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                         "%s:%d: expected 'key = value'", name,
                                         lineno);
                        break;
                }
                *eq = '\0';
                key = sbx_strtrim(line);
                val = sbx_strtrim(eq + 1);
                if (!key_ok(key)) {
                        err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                         "%s:%d: bad key '%s' (letters, "
                                         "digits, '.', '_', '-')",
                                         name, lineno, key);
                        break;
                }
                reason[0] = '\0';
                err = cb(key, val, lineno, opaque, reason, sizeof(reason));
                if (err) {
                        sbx_seterr(errstr, errstr_size, err, "%s:%d: %s", name,
                                   lineno, reason[0] ? reason : sbx_err2str(err));
                        break;
                }
        }
        free(copy);
        return err;
}

sbx_err_t sbx_kv_parse_file(const char *path, sbx_kv_cb_t *cb, void *opaque,
                            char *errstr, size_t errstr_size)
{
        char *text;
        size_t len;
        sbx_err_t err;

        err = sbx_read_file(path, KV_MAX_FILE, &text, &len, errstr,
                            errstr_size);
        if (err)
                return err;
        if (strlen(text) != len) {
                free(text);
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "%s: holds a NUL byte, not a text file",
                                  path);
        }
        err = sbx_kv_parse(path, text, cb, opaque, errstr, errstr_size);
        free(text);
        return err;
}

sbx_err_t sbx_kv_int(const char *value, long long min, long long max,
                     long long *ret_value)
{
        char *end;
        long long v;

        if (!*value)
                return SBX_ERR_INVALID;
        errno = 0;
        v = strtoll(value, &end, 10);
        if (errno || *end || v < min || v > max)
                return SBX_ERR_INVALID;
        *ret_value = v;
        return SBX_OK;
}
