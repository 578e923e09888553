/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Topic specs: the declarative description of sbx's Kafka topics that
 * lives in topics/ as one "<name>.topic" file per topic, e.g.
 *
 *     name = sbx.lifecycle.v1
 *     partitions = 12
 *     config.cleanup.policy = delete
 *     config.retention.ms = -1
 *
 * A spec set is validated whole before anything acts on it.
 */
#ifndef SBX_TOPICSPEC_H
#define SBX_TOPICSPEC_H

#include <stddef.h>

#include "sbx/err.h"

typedef struct sbx_topic_config_s {
        char *name;
        char *value;
} sbx_topic_config_t;

typedef struct sbx_topicspec_s {
        char *name;
        char *file; /**< where it was declared */
        int partitions;
        int replication_factor; /**< -1: take it from the sbx config */
        char *description;
        sbx_topic_config_t *configs;
        size_t nconfigs;
} sbx_topicspec_t;

typedef struct sbx_topicspecs_s {
        sbx_topicspec_t **specs;
        size_t n;
} sbx_topicspecs_t;

/** Parses one spec from @p text; @p file names it in errors. */
sbx_err_t sbx_topicspec_parse(const char *file, const char *text,
                              sbx_topicspec_t **ret_spec, char *errstr,
                              size_t errstr_size);
void sbx_topicspec_destroy(sbx_topicspec_t *spec);

/** Value of config @p name in @p spec, or NULL. */
const char *sbx_topicspec_config(const sbx_topicspec_t *spec,
                                 const char *name);

/**
 * Loads every "*.topic" file of @p dir, sorted by file name. Fails with
 * file, line and reason on the first malformed file, and on a topic name
 * declared twice; nothing is returned then.
 */
sbx_err_t sbx_topicspecs_load_dir(const char *dir, sbx_topicspecs_t **ret_specs,
                                  char *errstr, size_t errstr_size);
void sbx_topicspecs_destroy(sbx_topicspecs_t *specs);

/** Is @p name a legal Kafka topic name? */
int sbx_topic_name_valid(const char *name);

#endif
