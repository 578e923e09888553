/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Configuration loading. Defaults point at the local stack that
 * deploy/local starts and at the declarative files of the source tree, so
 * a developer needs no config file at all; a deployment sets SBX_CONFIG.
 */
#include "core/config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/kv.h"
#include "core/util.h"

#ifndef SBX_SOURCE_ROOT
#define SBX_SOURCE_ROOT "."
#endif

static void set_str(char **dst, const char *v)
{
        free(*dst);
        *dst = sbx_strdup(v);
}

static sbx_err_t config_kv(const char *key, const char *value, int line,
                           void *opaque, char *errstr, size_t errstr_size)
{
        sbx_config_t *c = opaque;
        long long v;

        (void)line;
        if (!strcmp(key, "brokers"))
                set_str(&c->brokers, value);
        else if (!strcmp(key, "pg"))
                set_str(&c->pg, value);
        else if (!strcmp(key, "topics_dir"))
                set_str(&c->topics_dir, value);
        else if (!strcmp(key, "projections_dir"))
                set_str(&c->projections_dir, value);
        else if (!strcmp(key, "instance"))
                set_str(&c->instance, value);
        else if (!strcmp(key, "replication.factor")) {
                if (sbx_kv_int(value, -1, 32, &v) || v == 0)
                        return sbx_seterr(errstr, errstr_size,
                                          SBX_ERR_INVALID,
                                          "replication.factor must be -1 "
                                          "(auto) or 1..32");
                c->replication_factor = (int)v;
        } else if (!strncmp(key, "kafka.", 6) && key[6]) {
                c->kafka_props = sbx_realloc(
                    c->kafka_props,
                    (c->nkafka_props + 1) * sizeof(*c->kafka_props));
                c->kafka_props[c->nkafka_props].name = sbx_strdup(key + 6);
                c->kafka_props[c->nkafka_props].value = sbx_strdup(value);
                c->nkafka_props++;
        } else
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "unknown config key '%s'", key);
        return SBX_OK;
}

sbx_err_t sbx_config_load(const char *path, sbx_config_t **ret_config,
                          char *errstr, size_t errstr_size)
{
        sbx_config_t *c = sbx_calloc(1, sizeof(*c));
        const char *root = getenv("SBX_SOURCE_ROOT");
        char buf[4096], host[256];
        const char *e;
        sbx_err_t err;

        if (!root || !*root)
                root = SBX_SOURCE_ROOT;
        c->brokers = sbx_strdup("127.0.0.1:19092");
        c->pg = sbx_strdup("host=127.0.0.1 port=15432 dbname=sbx user=sbx");
        c->topics_dir = sbx_strdup(sbx_fmt(buf, sizeof(buf), "%s/topics", root));
        c->projections_dir =
            sbx_strdup(sbx_fmt(buf, sizeof(buf), "%s/projections", root));
        if (gethostname(host, sizeof(host)) != 0)
                strcpy(host, "localhost");
        host[sizeof(host) - 1] = '\0';
        c->instance = sbx_strdup(
            sbx_fmt(buf, sizeof(buf), "%s-%ld", host, (long)getpid()));
        c->replication_factor = -1;

        if (!path)
                path = getenv("SBX_CONFIG");
        if (path && *path) {
                err = sbx_kv_parse_file(path, config_kv, c, errstr,
                                        errstr_size);
                if (err)
                        goto fail;
        }
        if ((e = getenv("SBX_BROKERS")) && *e)
                set_str(&c->brokers, e);
        if ((e = getenv("SBX_PG")) && *e)
                set_str(&c->pg, e);
        if ((e = getenv("SBX_TOPICS_DIR")) && *e)
                set_str(&c->topics_dir, e);
        if ((e = getenv("SBX_PROJECTIONS_DIR")) && *e)
                set_str(&c->projections_dir, e);
        *ret_config = c;
        return SBX_OK;
fail:
        sbx_config_destroy(c);
        return err;
}

void sbx_config_destroy(sbx_config_t *c)
{
        size_t i;
        if (!c)
                return;
        for (i = 0; i < c->nkafka_props; i++) {
                free(c->kafka_props[i].name);
                free(c->kafka_props[i].value);
        }
        free(c->kafka_props);
        free(c->brokers);
        free(c->pg);
        free(c->topics_dir);
        free(c->projections_dir);
        free(c->instance);
        free(c);
}
