/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Parser and validator of topic spec files. Only topic-level configs that
 * Kafka knows are accepted, and numeric ones must be numbers, so a typo is
 * caught here with its file and line rather than half-way through applying
 * a spec set to a broker.
 */
#include "core/topicspec.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kv.h"
#include "core/util.h"

#define MAX_CONFIGS 64

/* Kafka topic-level configs sbx lets a spec set; 'n' marks numeric ones. */
static const struct {
        const char *name;
        char kind;
} known_configs[] = {
    {"cleanup.policy", 's'},
    {"compression.type", 's'},
    {"delete.retention.ms", 'n'},
    {"file.delete.delay.ms", 'n'},
    {"flush.messages", 'n'},
    {"flush.ms", 'n'},
    {"index.interval.bytes", 'n'},
    {"local.retention.bytes", 'n'},
    {"local.retention.ms", 'n'},
    {"max.compaction.lag.ms", 'n'},
    {"max.message.bytes", 'n'},
    {"message.timestamp.after.max.ms", 'n'},
    {"message.timestamp.before.max.ms", 'n'},
    {"message.timestamp.type", 's'},
    {"min.cleanable.dirty.ratio", 's'},
    {"min.compaction.lag.ms", 'n'},
    {"min.insync.replicas", 'n'},
    {"preallocate", 's'},
    {"retention.bytes", 'n'},
    {"retention.ms", 'n'},
    {"segment.bytes", 'n'},
    {"segment.index.bytes", 'n'},
    {"segment.jitter.ms", 'n'},
    {"segment.ms", 'n'},
    {"unclean.leader.election.enable", 's'},
};

int sbx_topic_name_valid(const char *name)
{
        size_t n = strlen(name);
        if (n == 0 || n > 249 || !strcmp(name, ".") || !strcmp(name, ".."))
                return 0;
        for (; *name; name++)
                if (!isalnum((unsigned char)*name) && !strchr("._-", *name))
                        return 0;
        return 1;
}

static sbx_err_t check_config(const char *name, const char *value,
                              char *errstr, size_t errstr_size)
{
        size_t i;
        long long v;

        for (i = 0; i < SBX_ARRAY_SIZE(known_configs); i++) {
                if (strcmp(known_configs[i].name, name))
                        continue;
                if (known_configs[i].kind == 'n' &&
                    sbx_kv_int(value, -1, INT64_MAX, &v))
                        return sbx_seterr(errstr, errstr_size,
                                          SBX_ERR_INVALID,
                                          "config %s: '%s' is not a number "
                                          ">= -1",
                                          name, value);
                if (!strcmp(name, "cleanup.policy") &&
                    strcmp(value, "delete") && strcmp(value, "compact") &&
                    strcmp(value, "compact,delete") &&
                    strcmp(value, "delete,compact"))
                        return sbx_seterr(errstr, errstr_size,
                                          SBX_ERR_INVALID,
                                          "config cleanup.policy: '%s' is "
                                          "not delete, compact or both",
                                          value);
                if (!*value)
                        return sbx_seterr(errstr, errstr_size,
                                          SBX_ERR_INVALID,
                                          "config %s: empty value", name);
                return SBX_OK;
        }
        return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                          "unknown topic config '%s'", name);
}

static sbx_err_t spec_kv(const char *key, const char *value, int line,
                         void *opaque, char *errstr, size_t errstr_size)
{
        sbx_topicspec_t *spec = opaque;
        long long v;
        size_t i;

        if (!strcmp(key, "name")) {
                if (spec->name)
                        return sbx_seterr(errstr, errstr_size,
                                          SBX_ERR_INVALID, "name set twice");
                if (!sbx_topic_name_valid(value))
                        return sbx_seterr(errstr, errstr_size,
                                          SBX_ERR_INVALID,
                                          "'%s' is not a valid topic name",
                                          value);
                spec->name = sbx_strdup(value);
        } else if (!strcmp(key, "partitions")) {
                if (sbx_kv_int(value, 1, 10000, &v))
                        return sbx_seterr(errstr, errstr_size,
                                          SBX_ERR_INVALID,
                                          "partitions must be 1..10000, "
                                          "not '%s'",
                                          value);
                spec->partitions = (int)v;
        } else if (!strcmp(key, "replication.factor")) {
                if (sbx_kv_int(value, 1, 32, &v))
                        return sbx_seterr(errstr, errstr_size,
                                          SBX_ERR_INVALID,
                                          "replication.factor must be "
                                          "1..32, not '%s'",
                                          value);
                spec->replication_factor = (int)v;
        } else if (!strcmp(key, "description") || !strcmp(key, "key")) {
                if (!strcmp(key, "description")) {
                        free(spec->description);
                        spec->description = sbx_strdup(value);
                }
        } else if (!strncmp(key, "config.", 7)) {
                const char *cname = key + 7;
                sbx_err_t err = check_config(cname, value, errstr,
                                             errstr_size);
                if (err)
                        return err;
                for (i = 0; i < spec->nconfigs; i++)
                        if (!strcmp(spec->configs[i].name, cname))
                                return sbx_seterr(errstr, errstr_size,
                                                  SBX_ERR_INVALID,
                                                  "config %s set twice",
                                                  cname);
                if (spec->nconfigs == MAX_CONFIGS)
                        return sbx_seterr(errstr, errstr_size, SBX_ERR_TOOBIG,
                                          "more than %d configs", MAX_CONFIGS);
                spec->configs = sbx_realloc(
                    spec->configs, (spec->nconfigs + 1) * sizeof(*spec->configs));
                spec->configs[spec->nconfigs].name = sbx_strdup(cname);
                spec->configs[spec->nconfigs].value = sbx_strdup(value);
                spec->nconfigs++;
        } else {
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "unknown key '%s' (name, partitions, "
                                  "replication.factor, description, key, "
                                  "config.*)",
                                  key);
        }
        (void)line;
        return SBX_OK;
}

sbx_err_t sbx_topicspec_parse(const char *file, const char *text,
                              sbx_topicspec_t **ret_spec, char *errstr,
                              size_t errstr_size)
{
        sbx_topicspec_t *spec = sbx_calloc(1, sizeof(*spec));
        sbx_err_t err;

        spec->replication_factor = -1;
        spec->file = sbx_strdup(file);
        err = sbx_kv_parse(file, text, spec_kv, spec, errstr, errstr_size);
        if (err)
                goto fail;
        if (!spec->name) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                 "%s: no 'name ='", file);
                goto fail;
        }
        if (!spec->partitions) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                 "%s: no 'partitions ='", file);
                goto fail;
        }
        *ret_spec = spec;
        return SBX_OK;
fail:
        sbx_topicspec_destroy(spec);
        return err;
}

void sbx_topicspec_destroy(sbx_topicspec_t *spec)
{
        size_t i;
        if (!spec)
                return;
        for (i = 0; i < spec->nconfigs; i++) {
                free(spec->configs[i].name);
                free(spec->configs[i].value);
        }
        free(spec->configs);
        free(spec->description);
        free(spec->name);
        free(spec->file);
        free(spec);
}

const char *sbx_topicspec_config(const sbx_topicspec_t *spec, const char *name)
{
        size_t i;
        for (i = 0; i < spec->nconfigs; i++)
                if (!strcmp(spec->configs[i].name, name))
                        return spec->configs[i].value;
        return NULL;
}

static int name_cmp(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

sbx_err_t sbx_topicspecs_load_dir(const char *dir, sbx_topicspecs_t **ret_specs,
                                  char *errstr, size_t errstr_size)
{
        DIR *d = opendir(dir);
        struct dirent *de;
        char **names = NULL;
        size_t nnames = 0, i, j;
        sbx_topicspecs_t *specs = sbx_calloc(1, sizeof(*specs));
        sbx_err_t err = SBX_OK;

        if (!d) {
                free(specs);
                return sbx_seterr(errstr, errstr_size, SBX_ERR_NOENT,
                                  "cannot open topic spec directory %s", dir);
        }
        while ((de = readdir(d))) {
                size_t n = strlen(de->d_name);
                if (n > 6 && !strcmp(de->d_name + n - 6, ".topic")) {
                        names = sbx_realloc(names,
                                            (nnames + 1) * sizeof(*names));
                        names[nnames++] = sbx_strdup(de->d_name);
                }
        }
        closedir(d);
        if (nnames)
                qsort(names, nnames, sizeof(*names), name_cmp);

        specs->specs = sbx_calloc(nnames, sizeof(*specs->specs));
        for (i = 0; i < nnames && !err; i++) {
                char path[4096], *text;
                sbx_topicspec_t *spec;

                sbx_fmt(path, sizeof(path), "%s/%s", dir, names[i]);
                err = sbx_read_file(path, 1024 * 1024, &text, NULL, errstr,
                                    errstr_size);
                if (err)
                        break;
                err = sbx_topicspec_parse(path, text, &spec, errstr,
                                          errstr_size);
                free(text);
                if (err)
                        break;
                for (j = 0; j < specs->n; j++)
                        if (!strcmp(specs->specs[j]->name, spec->name))
                                err = sbx_seterr(
                                    errstr, errstr_size, SBX_ERR_INVALID,
                                    "%s: topic %s is already declared in %s",
                                    path, spec->name, specs->specs[j]->file);
                specs->specs[specs->n++] = spec;
        }
        for (i = 0; i < nnames; i++)
                free(names[i]);
        free(names);
        if (!err && specs->n == 0)
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_NOENT,
                                 "no *.topic files in %s", dir);
        if (err) {
                sbx_topicspecs_destroy(specs);
                return err;
        }
        *ret_specs = specs;
        return SBX_OK;
}

void sbx_topicspecs_destroy(sbx_topicspecs_t *specs)
{
        size_t i;
        if (!specs)
                return;
        for (i = 0; i < specs->n; i++)
                sbx_topicspec_destroy(specs->specs[i]);
        free(specs->specs);
        free(specs);
}
