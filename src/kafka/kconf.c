/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Builds librdkafka configurations. The invariant it keeps: every sbx
 * producer is idempotent with acks=all and hashes keys like the Java
 * client, whatever the caller's config file adds on top.
 */
#include "kafka/kconf.h"

#include <stdio.h>
#include <string.h>

#include "core/util.h"

int sbx_kconf_set(rd_kafka_conf_t *conf, const char *name, const char *value,
                  char *errstr, size_t errstr_size)
{
        char rderr[256];
        if (rd_kafka_conf_set(conf, name, value, rderr, sizeof(rderr)) !=
            RD_KAFKA_CONF_OK) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                           "kafka config %s=%s: %s", name, value, rderr);
                return -1;
        }
        return 0;
}

rd_kafka_conf_t *sbx_kconf_new(const sbx_config_t *config,
                               sbx_kconf_role_t role, const char *group_id,
                               char *errstr, size_t errstr_size)
{
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        char client_id[512];
        size_t i;

        sbx_fmt(client_id, sizeof(client_id), "sbx-%s", config->instance);
        if (sbx_kconf_set(conf, "bootstrap.servers", config->brokers, errstr,
                          errstr_size) ||
            sbx_kconf_set(conf, "client.id", client_id, errstr, errstr_size) ||
            sbx_kconf_set(conf, "socket.timeout.ms", "10000", errstr,
                          errstr_size))
                goto fail;
        /* The user's extra properties first, so sbx's invariants win. */
        for (i = 0; i < config->nkafka_props; i++)
                if (sbx_kconf_set(conf, config->kafka_props[i].name,
                                  config->kafka_props[i].value, errstr,
                                  errstr_size))
                        goto fail;
        switch (role) {
        case SBX_KCONF_ADMIN:
                break;
        case SBX_KCONF_PRODUCER:
                if (sbx_kconf_set(conf, "enable.idempotence", "true", errstr,
                                  errstr_size) ||
                    sbx_kconf_set(conf, "acks", "all", errstr, errstr_size) ||
                    sbx_kconf_set(conf, "partitioner", "murmur2_random",
                                  errstr, errstr_size) ||
                    sbx_kconf_set(conf, "linger.ms", "1", errstr,
                                  errstr_size) ||
                    sbx_kconf_set(conf, "message.timeout.ms", "30000", errstr,
                                  errstr_size))
                        goto fail;
                break;
        case SBX_KCONF_CONSUMER:
                sbx_assert(group_id != NULL);
                if (sbx_kconf_set(conf, "group.id", group_id, errstr,
                                  errstr_size) ||
                    sbx_kconf_set(conf, "partition.assignment.strategy",
                                  "range,roundrobin", errstr, errstr_size) ||
                    sbx_kconf_set(conf, "enable.auto.commit", "false", errstr,
                                  errstr_size) ||
                    sbx_kconf_set(conf, "auto.offset.reset", "earliest",
                                  errstr, errstr_size) ||
                    sbx_kconf_set(conf, "isolation.level", "read_committed",
                                  errstr, errstr_size) ||
                    sbx_kconf_set(conf, "enable.partition.eof", "false",
                                  errstr, errstr_size))
                        goto fail;
                break;
        }
        return conf;
fail:
        rd_kafka_conf_destroy(conf);
        return NULL;
}

sbx_err_t sbx_kmeta_prepare(rd_kafka_t *rk, const char *topic, char *errstr,
                            size_t errstr_size)
{
        rd_kafka_topic_t *t = rd_kafka_topic_new(rk, topic, NULL);
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_resp_err_t err;

        if (!t)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA,
                                  "topic %s: %s", topic,
                                  rd_kafka_err2str(rd_kafka_last_error()));
        err = rd_kafka_metadata(rk, 0, t, &md, 10000);
        if (md)
                rd_kafka_metadata_destroy(md);
        rd_kafka_topic_destroy(t);
        if (err)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA,
                                  "metadata of %s: %s", topic,
                                  rd_kafka_err2str(err));
        return SBX_OK;
}
