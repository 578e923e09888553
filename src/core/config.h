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
        char *instance;        /**< this process's name in producer ids */
        int replication_factor; /**< -1: min(3, brokers in the cluster) */
        /* extra librdkafka properties ("kafka.<prop> = value") */
        sbx_topic_config_t *kafka_props;
        size_t nkafka_props;
} sbx_config_t;

/**
 * Loads the configuration. @p path may be NULL (then $SBX_CONFIG, if set,
 * is read). Unknown keys and bad values fail with file, line and reason.
 */
sbx_err_t sbx_config_load(const char *path, sbx_config_t **ret_config,
                          char *errstr, size_t errstr_size);
void sbx_config_destroy(sbx_config_t *config);

#endif
