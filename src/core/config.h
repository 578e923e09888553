/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sbx's runtime configuration: where the broker and the database are and
 * where the declarative files (topics/, projections/) live. Built from
 * defaults, then an optional "key = value" file, then SBX_* environment
 * variables, in that order of precedence (last wins).
 */
#ifndef SBX_CONFIG_H
#define SBX_CONFIG_H

#include <stddef.h>

#include "core/topicspec.h"
#include "sbx/err.h"

typedef struct sbx_config_s {
        char *brokers;         /**< bootstrap.servers */
        char *pg;              /**< libpq conninfo */
        char *topics_dir;      /**< topic specs */
        char *projections_dir; /**< SQL migrations */
        char *policy;          /**< resource classes, tenants, quotas */
        char *node_id;         /**< this node's id (executor) */
        char *planner;         /**< "rules" or "llm" */
        char *llm_url, *llm_model, *llm_api_key;
        int llm_timeout_ms;
        int metrics_port;   /**< Prometheus text endpoint; 0: off */
        char *group_prefix; /**< consumer groups are "<prefix>.<stage>" */
        char *var_dir;      /**< state: runtimes, templates, workspaces */
        char *agent_path;   /**< the sbx-agent binary put in sandboxes */
        char *deps_dir;     /**< tenants' dependency caches, one directory
                                 each, read-only at /deps; NULL:
                                 <var_dir>/deps */
        char *pools;        /**< the node's warm pool specs; NULL: none */
        /* what the node commits to sandboxes; 0: from the machine */
        int node_cpu;
        long long node_memory_mb;
        int node_max_sandboxes;
        int executor_workers; /**< threads for runtime work (default 8) */
        long long snapshot_retention_s; /**< a snapshot no sandbox or claim
                                             uses is kept this long (1 day) */
        char *instance;         /**< this process's name in producer ids */
        int replication_factor; /**< -1: min(3, brokers in the cluster) */
        /* extra librdkafka properties ("kafka.<prop> = value") */
        sbx_topic_config_t *kafka_props;
        size_t nkafka_props;
} sbx_config_t;

/**
 * Loads the configuration. @p path may be NULL (then $SBX_CONFIG, if set,
 * is read). Unknown keys and bad values fail with file, line and reason.
 */
sbx_err_t sbx_config_load(const char *path,
                          sbx_config_t **ret_config,
                          char *errstr,
                          size_t errstr_size);
void sbx_config_destroy(sbx_config_t *config);

#endif
