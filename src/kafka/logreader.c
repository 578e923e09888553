/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Log reader implementation: a consumer assigned every partition of its
 * topics explicitly, at offsets fixed when it is made, so it starts at
 * once (no group join), never misses what is appended after it returns
 * and never disturbs a stage's group.
 */
#include "kafka/logreader.h"

#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>

#include "core/util.h"
#include "kafka/kconf.h"
#include "kafka/processor.h"

#define MAXP 1024 /* partitions, all topics together */
#define MAXT 4

struct sbx_logreader_s {
        rd_kafka_t *rk;
        const sbx_codec_t *codec;
        const char *topics[MAXT];
        int ntopics, base[MAXT]; /* topic t's partitions start at base[t] */
        int npart;               /* all topics together */
        int64_t target[MAXP], pos[MAXP];
        int32_t last_part;
        int64_t last_off;
        long bad;
};

static sbx_err_t watermarks(sbx_logreader_t *r,
                            const char *topic,
                            int p,
                            int64_t *lo,
                            int64_t *hi,
                            char *errstr,
                            size_t errstr_size)
{
        rd_kafka_resp_err_t err =
            rd_kafka_query_watermark_offsets(r->rk, topic, p, lo, hi, 10000);
        if (err)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA,
                                  "%s [%d]: watermarks: %s", topic, p,
                                  rd_kafka_err2str(err));
        return SBX_OK;
}

/* Adds every partition of @p topic to @p tl at its low or high watermark. */
static sbx_err_t assign_topic(sbx_logreader_t *r,
                              const sbx_config_t *config,
                              const char *topic,
                              int from_end,
                              rd_kafka_topic_partition_list_t *tl,
                              char *errstr,
                              size_t errstr_size)
{
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_topic_t *t = rd_kafka_topic_new(r->rk, topic, NULL);
        int i, n;

        if (rd_kafka_metadata(r->rk, 0, t, &md, 10000) || md->topic_cnt != 1 ||
            md->topics[0].err) {
                if (md)
                        rd_kafka_metadata_destroy(md);
                rd_kafka_topic_destroy(t);
                return sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA,
                                  "cannot read %s from %s", topic,
                                  config->brokers);
        }
        n = md->topics[0].partition_cnt;
        rd_kafka_metadata_destroy(md);
        rd_kafka_topic_destroy(t);
        if (r->npart + n > MAXP)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_TOOBIG,
                                  "%s: more than %d partitions to read", topic,
                                  MAXP);
        r->base[r->ntopics]     = r->npart;
        r->topics[r->ntopics++] = topic;
        for (i = 0; i < n; i++) {
                int64_t lo = 0, hi = 0;
                if (watermarks(r, topic, i, &lo, &hi, errstr, errstr_size))
                        return SBX_ERR_KAFKA;
                r->target[r->npart + i] = hi;
                r->pos[r->npart + i]    = from_end ? hi : lo;
                /* Explicit offsets: no lazy lookup, so nothing appended
                 * after this call can be missed or delayed. */
                rd_kafka_topic_partition_list_add(tl, topic, i)->offset =
                    from_end ? hi : lo;
        }
        r->npart += n;
        return SBX_OK;
}

sbx_logreader_t *sbx_logreader_new_topics(const sbx_config_t *config,
                                          const char *const *topics,
                                          int from_end,
                                          char *errstr,
                                          size_t errstr_size)
{
        sbx_logreader_t *r = sbx_calloc(1, sizeof(*r));
        rd_kafka_conf_t *conf;
        rd_kafka_topic_partition_list_t *tl;
        char group[128], rderr[512], id[37];
        int i;

        sbx_uuid(id);
        sbx_fmt(group, sizeof(group), "sbx.reader.%s", id);
        conf = sbx_kconf_new(config, SBX_KCONF_CONSUMER, group, errstr,
                             errstr_size);
        if (!conf || sbx_kconf_set(conf, "fetch.wait.max.ms", "10", errstr,
                                   errstr_size)) {
                if (conf)
                        rd_kafka_conf_destroy(conf);
                goto fail;
        }
        r->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, rderr, sizeof(rderr));
        if (!r->rk) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA, "%s", rderr);
                rd_kafka_conf_destroy(conf);
                goto fail;
        }
        tl = rd_kafka_topic_partition_list_new(16);
        for (i = 0; topics[i]; i++)
                if (i == MAXT || assign_topic(r, config, topics[i], from_end,
                                              tl, errstr, errstr_size)) {
                        if (i == MAXT)
                                sbx_seterr(errstr, errstr_size, SBX_ERR_TOOBIG,
                                           "more than %d topics to read", MAXT);
                        rd_kafka_topic_partition_list_destroy(tl);
                        goto fail;
                }
        rd_kafka_assign(r->rk, tl);
        rd_kafka_topic_partition_list_destroy(tl);
        return r;
fail:
        sbx_logreader_destroy(r);
        return NULL;
}

sbx_logreader_t *sbx_logreader_new(const sbx_config_t *config,
                                   const sbx_codec_t *codec,
                                   int from_end,
                                   char *errstr,
                                   size_t errstr_size)
{
        static const char *const lifecycle[] = {SBX_TOPIC_LIFECYCLE, NULL};
        sbx_logreader_t *r                   = sbx_logreader_new_topics(
                              config, lifecycle, from_end, errstr, errstr_size);
        if (r)
                r->codec = codec;
        return r;
}

/* The next message (and its topic's index), or NULL after the deadline.
 * Records its position; consumer errors are not messages. */
static rd_kafka_message_t *poll_msg(sbx_logreader_t *r,
                                    int64_t deadline,
                                    int *ret_topic)
{
        for (;;) {
                int64_t left = (deadline - sbx_mono_us()) / 1000;
                rd_kafka_message_t *m =
                    rd_kafka_consumer_poll(r->rk, left > 0 ? (int)left : 0);
                int t;
                if (!m)
                        return NULL;
                for (t = 0; t < r->ntopics && !m->err; t++)
                        if (!strcmp(rd_kafka_topic_name(m->rkt),
                                    r->topics[t]) &&
                            m->partition >= 0 &&
                            r->base[t] + m->partition < r->npart) {
                                r->pos[r->base[t] + m->partition] =
                                    m->offset + 1;
                                *ret_topic = t;
                                return m;
                        }
                rd_kafka_message_destroy(m);
                if (sbx_mono_us() >= deadline)
                        return NULL;
        }
}

sbx_event_t *sbx_logreader_next(sbx_logreader_t *r, int timeout_ms)
{
        int64_t deadline = sbx_mono_us() + (int64_t)timeout_ms * 1000;
        rd_kafka_message_t *m;
        int t;
        sbx_assert(r->codec);
        while ((m = poll_msg(r, deadline, &t))) {
                sbx_event_t *ev = NULL;
                if (!strcmp(r->topics[t], SBX_TOPIC_LIFECYCLE)) {
                        if (sbx_event_decode(r->codec, m->payload, m->len, &ev,
                                             NULL, 0))
                                r->bad++;
                        else {
                                r->last_part = m->partition;
                                r->last_off  = m->offset;
                        }
                }
                rd_kafka_message_destroy(m);
                if (ev)
                        return ev;
        }
        return NULL;
}

sbx_err_t sbx_logreader_next_msg(sbx_logreader_t *r,
                                 int timeout_ms,
                                 const char **ret_topic,
                                 void **ret_value,
                                 size_t *ret_len)
{
        int t;
        rd_kafka_message_t *m =
            poll_msg(r, sbx_mono_us() + (int64_t)timeout_ms * 1000, &t);
        void *v;
        if (!m)
                return SBX_ERR_TIMEOUT;
        v = sbx_malloc(m->len ? m->len : 1);
        if (m->len)
                memcpy(v, m->payload, m->len);
        r->last_part = m->partition;
        r->last_off  = m->offset;
        *ret_topic   = r->topics[t];
        *ret_value   = v;
        *ret_len     = m->len;
        rd_kafka_message_destroy(m);
        return SBX_OK;
}

int sbx_logreader_caught_up(sbx_logreader_t *r)
{
        int i;
        for (i = 0; i < r->npart; i++)
                if (r->pos[i] < r->target[i])
                        return 0;
        return 1;
}

sbx_err_t sbx_logreader_mark_end(sbx_logreader_t *r,
                                 char *errstr,
                                 size_t errstr_size)
{
        int t, i;
        for (t = 0; t < r->ntopics; t++) {
                int end = t + 1 < r->ntopics ? r->base[t + 1] : r->npart;
                for (i = r->base[t]; i < end; i++) {
                        int64_t lo = 0, hi = 0;
                        if (watermarks(r, r->topics[t], i - r->base[t], &lo,
                                       &hi, errstr, errstr_size))
                                return SBX_ERR_KAFKA;
                        r->target[i] = hi;
                }
        }
        return SBX_OK;
}

void sbx_logreader_position(const sbx_logreader_t *r,
                            int32_t *ret_partition,
                            int64_t *ret_offset)
{
        *ret_partition = r->last_part;
        *ret_offset    = r->last_off;
}

long sbx_logreader_undecodable(const sbx_logreader_t *r)
{
        return r->bad;
}

void sbx_logreader_destroy(sbx_logreader_t *r)
{
        if (!r)
                return;
        if (r->rk) {
                rd_kafka_consumer_close(r->rk);
                rd_kafka_destroy(r->rk);
        }
        free(r);
}
