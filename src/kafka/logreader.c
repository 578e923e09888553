/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Log reader implementation: a consumer assigned every lifecycle
 * partition explicitly, so it starts at once (no group join) and never
 * disturbs a stage's group.
 */
#include "kafka/logreader.h"

#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>

#include "core/util.h"
#include "kafka/kconf.h"
#include "kafka/processor.h"

#define MAXP 1024

struct sbx_logreader_s {
        rd_kafka_t *rk;
        const sbx_codec_t *codec;
        int npart;
        int64_t target[MAXP], pos[MAXP];
        int32_t last_part;
        int64_t last_off;
        long bad;
};

sbx_logreader_t *sbx_logreader_new(const sbx_config_t *config,
                                   const sbx_codec_t *codec, int from_end,
                                   char *errstr, size_t errstr_size)
{
        sbx_logreader_t *r = sbx_calloc(1, sizeof(*r));
        rd_kafka_conf_t *conf;
        rd_kafka_topic_partition_list_t *tl;
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_topic_t *t;
        char group[128], rderr[512], id[37];
        int i;

        r->codec = codec;
        sbx_uuid(id);
        sbx_fmt(group, sizeof(group), "sbx.reader.%s", id);
        conf = sbx_kconf_new(config, SBX_KCONF_CONSUMER, group, errstr,
                             errstr_size);
        if (!conf || sbx_kconf_set(conf, "fetch.wait.max.ms", "10", errstr,
                                   errstr_size))
                goto fail_conf;
        r->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, rderr, sizeof(rderr));
        if (!r->rk) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA, "%s", rderr);
                goto fail_conf;
        }
        t = rd_kafka_topic_new(r->rk, SBX_TOPIC_LIFECYCLE, NULL);
        if (rd_kafka_metadata(r->rk, 0, t, &md, 10000) || md->topic_cnt != 1 ||
            md->topics[0].err) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA,
                           "cannot read %s from %s", SBX_TOPIC_LIFECYCLE,
                           config->brokers);
                if (md)
                        rd_kafka_metadata_destroy(md);
                rd_kafka_topic_destroy(t);
                goto fail;
        }
        r->npart = md->topics[0].partition_cnt < MAXP
                       ? md->topics[0].partition_cnt
                       : MAXP;
        rd_kafka_metadata_destroy(md);
        rd_kafka_topic_destroy(t);
        tl = rd_kafka_topic_partition_list_new(r->npart);
        for (i = 0; i < r->npart; i++) {
                int64_t lo = 0, hi = 0;
                rd_kafka_query_watermark_offsets(r->rk, SBX_TOPIC_LIFECYCLE, i,
                                                 &lo, &hi, 10000);
                r->target[i] = hi;
                r->pos[i] = from_end ? hi : lo;
                /* Explicit offsets: no lazy lookup, so nothing appended
                 * after this call can be missed or delayed. */
                rd_kafka_topic_partition_list_add(tl, SBX_TOPIC_LIFECYCLE, i)
                    ->offset = from_end ? hi : lo;
        }
        rd_kafka_assign(r->rk, tl);
        rd_kafka_topic_partition_list_destroy(tl);
        return r;
fail_conf:
        if (conf && !r->rk)
                rd_kafka_conf_destroy(conf);
fail:
        sbx_logreader_destroy(r);
        return NULL;
}

sbx_event_t *sbx_logreader_next(sbx_logreader_t *r, int timeout_ms)
{
        int64_t deadline = sbx_mono_us() + (int64_t)timeout_ms * 1000;
        for (;;) {
                int64_t left = (deadline - sbx_mono_us()) / 1000;
                rd_kafka_message_t *m =
                    rd_kafka_consumer_poll(r->rk, left > 0 ? (int)left : 0);
                sbx_event_t *ev = NULL;
                if (!m)
                        return NULL;
                if (!m->err && m->partition < MAXP) {
                        r->pos[m->partition] = m->offset + 1;
                        if (sbx_event_decode(r->codec, m->payload, m->len, &ev,
                                             NULL, 0))
                                r->bad++;
                        else {
                                r->last_part = m->partition;
                                r->last_off = m->offset;
                        }
                }
                rd_kafka_message_destroy(m);
                if (ev)
                        return ev;
                if (sbx_mono_us() >= deadline)
                        return NULL;
        }
}

int sbx_logreader_caught_up(sbx_logreader_t *r)
{
        int i;
        for (i = 0; i < r->npart; i++)
                if (r->pos[i] < r->target[i])
                        return 0;
        return 1;
}

void sbx_logreader_position(const sbx_logreader_t *r, int32_t *ret_partition,
                            int64_t *ret_offset)
{
        *ret_partition = r->last_part;
        *ret_offset = r->last_off;
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
