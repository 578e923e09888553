/* SPDX-License-Identifier: Apache-2.0 */
/*
 * librdkafka configuration shared by every sbx client: bootstrap servers,
 * client id, the murmur2_random partitioner (so a key lands on the same
 * partition as with the Java client), idempotent acks=all producers and
 * eager-assignor consumers (cooperative-sticky aborts on close in 2.0.2).
 */
#ifndef SBX_KCONF_H
#define SBX_KCONF_H

#include <librdkafka/rdkafka.h>

#include "core/config.h"

typedef enum sbx_kconf_role_e {
        SBX_KCONF_ADMIN,
        SBX_KCONF_PRODUCER,
        SBX_KCONF_CONSUMER,
} sbx_kconf_role_t;

/** A new conf for @p role, or NULL with errstr set. */
rd_kafka_conf_t *sbx_kconf_new(const sbx_config_t *config,
                               sbx_kconf_role_t role, const char *group_id,
                               char *errstr, size_t errstr_size);

/** Sets one property; returns 0 or -1 with errstr set. */
int sbx_kconf_set(rd_kafka_conf_t *conf, const char *name, const char *value,
                  char *errstr, size_t errstr_size);

/**
 * Fetches @p topic's metadata into @p rk's cache, so the first message to
 * it is not held until librdkafka's periodic topic scan (every second).
 */
sbx_err_t sbx_kmeta_prepare(rd_kafka_t *rk, const char *topic, char *errstr,
                            size_t errstr_size);

#endif
