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

static sbx_err_t config_kv(const char *key,
                           const char *value,
                           int line,
                           void *opaque,
                           char *errstr,
                           size_t errstr_size)
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
        else if (!strcmp(key, "policy"))
                set_str(&c->policy, value);
        else if (!strcmp(key, "var_dir"))
                set_str(&c->var_dir, value);
        else if (!strcmp(key, "agent_path"))
                set_str(&c->agent_path, value);
        else if (!strcmp(key, "deps_dir"))
                set_str(&c->deps_dir, value);
        else if (!strcmp(key, "group_prefix"))
                set_str(&c->group_prefix, value);
        else if (!strcmp(key, "node_id"))
                set_str(&c->node_id, value);
        else if (!strcmp(key, "planner")) {
                if (strcmp(value, "rules") && strcmp(value, "llm"))
                        return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                          "planner must be rules or llm");
                set_str(&c->planner, value);
        } else if (!strcmp(key, "llm.url"))
                set_str(&c->llm_url, value);
        else if (!strcmp(key, "llm.model"))
                set_str(&c->llm_model, value);
        else if (!strcmp(key, "llm.api_key"))
                set_str(&c->llm_api_key, value);
        else if (!strcmp(key, "llm.timeout_ms")) {
                if (sbx_kv_int(value, 1, 600000, &v))
                        return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                          "llm.timeout_ms must be 1..600000");
                c->llm_timeout_ms = (int)v;
        } else if (!strcmp(key, "metrics_port")) {
                if (sbx_kv_int(value, 0, 65535, &v))
                        return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                          "metrics_port must be 0..65535");
                c->metrics_port = (int)v;
        } else if (!strcmp(key, "pools"))
                set_str(&c->pools, value);
        else if (!strcmp(key, "node.cpu")) {
                if (sbx_kv_int(value, 0, 100000, &v))
                        return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                          "node.cpu must be 0 (auto)..100000");
                c->node_cpu = (int)v;
        } else if (!strcmp(key, "node.memory_mb")) {
                if (sbx_kv_int(value, 0, 1LL << 40, &v))
                        return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                          "node.memory_mb must be 0 (auto) "
                                          "or a size in MiB");
                c->node_memory_mb = v;
        } else if (!strcmp(key, "node.max_sandboxes")) {
                if (sbx_kv_int(value, 0, 1000000, &v))
                        return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                          "node.max_sandboxes must be 0 "
                                          "(auto)..1000000");
                c->node_max_sandboxes = (int)v;
        } else if (!strcmp(key, "executor.workers")) {
                if (sbx_kv_int(value, 1, 256, &v))
                        return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                          "executor.workers must be 1..256");
                c->executor_workers = (int)v;
        } else if (!strcmp(key, "snapshot.retention_s")) {
                if (sbx_kv_int(value, 0, 365LL * 86400, &v))
                        return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                          "snapshot.retention_s must be "
                                          "0..31536000");
                c->snapshot_retention_s = v;
        } else if (!strcmp(key, "replication.factor")) {
                if (sbx_kv_int(value, -1, 32, &v) || v == 0)
                        return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                          "replication.factor must be -1 "
                                          "(auto) or 1..32");
                c->replication_factor = (int)v;
        } else if (!strncmp(key, "kafka.", 6) && key[6]) {
                c->kafka_props =
                    sbx_realloc(c->kafka_props, (c->nkafka_props + 1) *
                                                    sizeof(*c->kafka_props));
                c->kafka_props[c->nkafka_props].name  = sbx_strdup(key + 6);
                c->kafka_props[c->nkafka_props].value = sbx_strdup(value);
                c->nkafka_props++;
        } else
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "unknown config key '%s'", key);
        return SBX_OK;
}

sbx_err_t sbx_config_load(const char *path,
                          sbx_config_t **ret_config,
                          char *errstr,
                          size_t errstr_size)
{
        sbx_config_t *c  = sbx_calloc(1, sizeof(*c));
        const char *root = getenv("SBX_SOURCE_ROOT");
        char buf[4096], host[256];
        const char *e;
        sbx_err_t err;

        if (!root || !*root)
                root = SBX_SOURCE_ROOT;
        c->brokers = sbx_strdup("127.0.0.1:19092");
        c->pg = sbx_strdup("host=127.0.0.1 port=15432 dbname=sbx user=sbx");
        c->topics_dir =
            sbx_strdup(sbx_fmt(buf, sizeof(buf), "%s/topics", root));
        c->projections_dir =
            sbx_strdup(sbx_fmt(buf, sizeof(buf), "%s/projections", root));
        if (gethostname(host, sizeof(host)) != 0)
                strcpy(host, "localhost");
        host[sizeof(host) - 1] = '\0';
        c->instance            = sbx_strdup(
                       sbx_fmt(buf, sizeof(buf), "%s-%ld", host, (long)getpid()));
        c->replication_factor = -1;
        c->policy             = sbx_strdup(
                        sbx_fmt(buf, sizeof(buf), "%s/deploy/policy/default.conf", root));
        c->node_id              = sbx_strdup(host);
        c->planner              = sbx_strdup("rules");
        c->llm_model            = sbx_strdup("sbx-planner");
        c->llm_timeout_ms       = 3000;
        c->metrics_port         = 9464;
        c->group_prefix         = sbx_strdup("sbx");
        c->executor_workers     = 8;
        c->snapshot_retention_s = 86400;
        c->var_dir = sbx_strdup(sbx_fmt(buf, sizeof(buf), "%s/var", root));
#ifdef SBX_AGENT_BUILD_PATH
        c->agent_path = sbx_strdup(SBX_AGENT_BUILD_PATH);
#else
        c->agent_path = sbx_strdup("/usr/local/bin/sbx-agent");
#endif

        if (!path)
                path = getenv("SBX_CONFIG");
        if (path && *path) {
                err =
                    sbx_kv_parse_file(path, config_kv, c, errstr, errstr_size);
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
        if ((e = getenv("SBX_POLICY")) && *e)
                set_str(&c->policy, e);
        if ((e = getenv("SBX_NODE_ID")) && *e)
                set_str(&c->node_id, e);
        if ((e = getenv("SBX_INSTANCE")) && *e)
                set_str(&c->instance, e);
        if ((e = getenv("SBX_VAR")) && *e)
                set_str(&c->var_dir, e);
        if ((e = getenv("SBX_AGENT")) && *e)
                set_str(&c->agent_path, e);
        if ((e = getenv("SBX_DEPS")) && *e)
                set_str(&c->deps_dir, e);
        if ((e = getenv("SBX_POOLS")) && *e)
                set_str(&c->pools, e);
        if ((e = getenv("SBX_GROUP_PREFIX")) && *e)
                set_str(&c->group_prefix, e);
        if ((e = getenv("SBX_METRICS_PORT")) && *e) {
                long long v2;
                if (sbx_kv_int(e, 0, 65535, &v2)) {
                        err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                         "SBX_METRICS_PORT must be 0..65535");
                        goto fail;
                }
                c->metrics_port = (int)v2;
        }
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
        free(c->policy);
        free(c->node_id);
        free(c->planner);
        free(c->group_prefix);
        free(c->var_dir);
        free(c->agent_path);
        free(c->deps_dir);
        free(c->pools);
        free(c->llm_url);
        free(c->llm_model);
        free(c->llm_api_key);
        free(c);
}
