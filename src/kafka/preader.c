/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The partition reader: one librdkafka consumer with a group id of its
 * own that it never joins (assign, not subscribe), so it starts reading
 * at once and disturbs no stage's group. Messages are handed out as they
 * come; within a partition they come in offset order.
 */
#include "kafka/preader.h"

#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>

#include "core/event.h"
#include "core/util.h"
#include "kafka/kconf.h"

struct sbx_preader_s {
        rd_kafka_t *rk;
        const char *topics[SBX_PREADER_MAX_TOPICS];
        int npart[SBX_PREADER_MAX_TOPICS];
        int ntopics;
};

static int partition_count(rd_kafka_t *rk, const char *topic)
{
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_topic_t *t = rd_kafka_topic_new(rk, topic, NULL);
        int n               = -1;
        if (!rd_kafka_metadata(rk, 0, t, &md, 10000) && md->topic_cnt == 1 &&
            !md->topics[0].err)
                n = md->topics[0].partition_cnt;
        if (md)
                rd_kafka_metadata_destroy(md);
        rd_kafka_topic_destroy(t);
        return n;
}

sbx_preader_t *sbx_preader_new(const sbx_config_t *config,
                               const char *const *topics,
                               int ntopics,
                               char *errstr,
                               size_t errstr_size)
{
        sbx_preader_t *r = sbx_calloc(1, sizeof(*r));
        rd_kafka_conf_t *conf;
        char group[128], rderr[512], id[37];
        int i;

        sbx_assert(ntopics > 0 && ntopics <= SBX_PREADER_MAX_TOPICS);
        sbx_uuid(id);
        sbx_fmt(group, sizeof(group), "sbx.preader.%s", id);
        conf = sbx_kconf_new(config, SBX_KCONF_CONSUMER, group, errstr,
                             errstr_size);
        if (!conf)
                goto fail;
        if (sbx_kconf_set(conf, "fetch.wait.max.ms", "10", errstr,
                          errstr_size)) {
                rd_kafka_conf_destroy(conf);
                goto fail;
        }
        r->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, rderr, sizeof(rderr));
        if (!r->rk) {
                rd_kafka_conf_destroy(conf);
                sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA, "%s", rderr);
                goto fail;
        }
        rd_kafka_poll_set_consumer(r->rk);
        for (i = 0; i < ntopics; i++) {
                r->topics[i] = topics[i];
                r->npart[i]  = partition_count(r->rk, topics[i]);
                if (r->npart[i] <= 0) {
                        sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA,
                                   "cannot read topic %s from %s", topics[i],
                                   config->brokers);
                        goto fail;
                }
        }
        r->ntopics = ntopics;
        return r;
fail:
        sbx_preader_destroy(r);
        return NULL;
}

void sbx_preader_destroy(sbx_preader_t *r)
{
        if (!r)
                return;
        if (r->rk) {
                rd_kafka_consumer_close(r->rk);
                rd_kafka_destroy(r->rk);
        }
        free(r);
}

int sbx_preader_partitions(const sbx_preader_t *r, int topic)
{
        return r->npart[topic];
}

const char *sbx_preader_topic(const sbx_preader_t *r, int topic)
{
        return r->topics[topic];
}

sbx_err_t sbx_preader_watermarks(sbx_preader_t *r,
                                 int topic,
                                 int32_t partition,
                                 int64_t *ret_low,
                                 int64_t *ret_high,
                                 char *errstr,
                                 size_t errstr_size)
{
        int64_t lo = 0, hi = 0;
        rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
            r->rk, r->topics[topic], partition, &lo, &hi, 10000);
        if (err)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA,
                                  "watermarks of %s [%d]: %s", r->topics[topic],
                                  (int)partition, rd_kafka_err2str(err));
        *ret_low  = lo;
        *ret_high = hi;
        return SBX_OK;
}

sbx_err_t sbx_preader_assign(sbx_preader_t *r,
                             int64_t *const *from,
                             char *errstr,
                             size_t errstr_size)
{
        rd_kafka_topic_partition_list_t *tl =
            rd_kafka_topic_partition_list_new(16);
        rd_kafka_resp_err_t err;
        int t, p;

        for (t = 0; t < r->ntopics; t++)
                for (p = 0; p < r->npart[t]; p++)
                        rd_kafka_topic_partition_list_add(tl, r->topics[t], p)
                            ->offset = from[t][p] == SBX_PREADER_BEGINNING
                                           ? RD_KAFKA_OFFSET_BEGINNING
                                           : from[t][p];
        err = rd_kafka_assign(r->rk, tl);
        rd_kafka_topic_partition_list_destroy(tl);
        if (err)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA,
                                  "assign: %s", rd_kafka_err2str(err));
        return SBX_OK;
}

sbx_err_t sbx_preader_next(sbx_preader_t *r,
                           int timeout_ms,
                           sbx_pmsg_t *ret_msg,
                           char *errstr,
                           size_t errstr_size)
{
        rd_kafka_message_t *m = rd_kafka_consumer_poll(r->rk, timeout_ms);
        const char *topic;
        int t;

        if (!m)
                return SBX_ERR_TIMEOUT;
        if (m->err) {
                sbx_err_t err =
                    sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA,
                               "consume: %s", rd_kafka_message_errstr(m));
                rd_kafka_message_destroy(m);
                return err;
        }
        topic = rd_kafka_topic_name(m->rkt);
        for (t = 0; t < r->ntopics; t++)
                if (!strcmp(topic, r->topics[t]))
                        break;
        sbx_assert(t < r->ntopics && m->partition < r->npart[t]);
        ret_msg->topic      = t;
        ret_msg->partition  = m->partition;
        ret_msg->offset     = m->offset;
        ret_msg->key        = m->key;
        ret_msg->key_size   = m->key_len;
        ret_msg->value      = m->payload;
        ret_msg->value_size = m->len;
        ret_msg->handle     = m;
        return SBX_OK;
}

void sbx_preader_release(sbx_pmsg_t *m)
{
        if (m->handle)
                rd_kafka_message_destroy(m->handle);
        m->handle = NULL;
}
