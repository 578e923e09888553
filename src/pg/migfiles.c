/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Loader of migration files. Numbers must start at 1 and have no gaps or
 * repeats, so two branches that both add "0003_..." collide here instead of
 * in a database; a .sql file with any other name is an error, not ignored.
 */
#include "pg/migfiles.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

#define MIG_MAX_FILE (4 * 1024 * 1024)

static int parse_name(const char *name, int *ret_version)
{
        const char *p = name;
        int v = 0, digits = 0;
        size_t n = strlen(name);

        if (n < 5 || strcmp(name + n - 4, ".sql"))
                return -1;
        while (isdigit((unsigned char)*p) && digits < 6) {
                v = v * 10 + (*p - '0');
                p++;
                digits++;
        }
        if (digits < 4 || *p != '_' || p + 1 == name + n - 4)
                return -1;
        for (p++; p < name + n - 4; p++)
                if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p) &&
                    *p != '_')
                        return -1;
        *ret_version = v;
        return 0;
}

static int blank(const char *s)
{
        for (; *s; s++)
                if (!isspace((unsigned char)*s))
                        return 0;
        return 1;
}

static int mig_cmp(const void *a, const void *b)
{
        const sbx_migration_t *x = a, *y = b;
        return (x->version > y->version) - (x->version < y->version);
}

static void fnv_hex(const char *s, size_t n, char out[17])
{
        snprintf(out, 17, "%016llx",
                 (unsigned long long)sbx_fnv1a64_n(SBX_FNV1A64_INIT, s, n));
}

sbx_err_t sbx_migrations_load(const char *dir, sbx_migrations_t **ret_migs,
                              char *errstr, size_t errstr_size)
{
        DIR *d = opendir(dir);
        struct dirent *de;
        sbx_migrations_t *m = sbx_calloc(1, sizeof(*m));
        sbx_err_t err = SBX_OK;
        size_t i, len;

        if (!d) {
                free(m);
                return sbx_seterr(errstr, errstr_size, SBX_ERR_NOENT,
                                  "cannot open migration directory %s", dir);
        }
        while ((de = readdir(d)) && !err) {
                sbx_migration_t *mig;
                size_t n = strlen(de->d_name);
                char path[4096];
                int version;

                if (n < 4 || strcmp(de->d_name + n - 4, ".sql"))
                        continue;
                sbx_fmt(path, sizeof(path), "%s/%s", dir, de->d_name);
                if (parse_name(de->d_name, &version)) {
                        err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                         "%s: migration files are named "
                                         "NNNN_name.sql (digits, '_', "
                                         "lower-case words)",
                                         path);
                        break;
                }
                m->v = sbx_realloc(m->v, (m->n + 1) * sizeof(*m->v));
                mig = &m->v[m->n++];
                memset(mig, 0, sizeof(*mig));
                mig->version = version;
                mig->name = sbx_strdup(de->d_name);
                mig->path = sbx_strdup(path);
                err = sbx_read_file(path, MIG_MAX_FILE, &mig->sql, &len,
                                    errstr, errstr_size);
                if (err)
                        break;
                if (strlen(mig->sql) != len) {
                        err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                         "%s: holds a NUL byte", path);
                        break;
                }
                fnv_hex(mig->sql, len, mig->checksum);
        }
        closedir(d);
        if (err)
                goto fail;
        if (m->n)
                qsort(m->v, m->n, sizeof(*m->v), mig_cmp);
        for (i = 0; i < m->n; i++) {
                if (m->v[i].version != (int)i + 1) {
                        err = sbx_seterr(
                            errstr, errstr_size, SBX_ERR_INVALID,
                            "%s: expected migration number %04zu here (numbers "
                            "start at 1, without gaps or repeats)",
                            m->v[i].path, i + 1);
                        goto fail;
                }
                if (blank(m->v[i].sql)) {
                        err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                         "%s: empty migration", m->v[i].path);
                        goto fail;
                }
        }
        *ret_migs = m;
        return SBX_OK;
fail:
        sbx_migrations_destroy(m);
        return err;
}

void sbx_migrations_destroy(sbx_migrations_t *m)
{
        size_t i;
        if (!m)
                return;
        for (i = 0; i < m->n; i++) {
                free(m->v[i].name);
                free(m->v[i].path);
                free(m->v[i].sql);
        }
        free(m->v);
        free(m);
}

int sbx_text_line_of(const char *text, long pos)
{
        long chars = 0;
        int line = 1;
        const unsigned char *p = (const unsigned char *)text;

        for (; *p; p++) {
                if ((*p & 0xC0) != 0x80 && ++chars >= pos)
                        break;
                if (*p == '\n')
                        line++;
        }
        return line;
}
