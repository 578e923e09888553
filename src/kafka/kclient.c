/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Producer and consumer wrappers. send_sync waits on a per-call delivery
 * report (through the message opaque), so concurrent callers never see
 * each other's results. Destroying a consumer closes it first, so the
 * group rebalances at once instead of after the session timeout.
 */
#include "kafka/kclient.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>

#include "core/util.h"
#include "kafka/kconf.h"

struct sbx_kproducer_s {
        rd_kafka_t *rk;
        atomic_long failed; /* asynchronous sends that failed; delivery
                               reports run on any thread that polls */
};

struct sbx_kconsumer_s {
        rd_kafka_t *rk;
};

struct sbx_kmsg_s {
        rd_kafka_message_t *rkm;
};

typedef struct delivery_s {
        int done;
        rd_kafka_resp_err_t err;
        int32_t partition;
        int64_t offset;
} delivery_t;

static void on_delivery(rd_kafka_t *rk,
                        const rd_kafka_message_t *m,
                        void *opaque)
{
        delivery_t *d = m->_private;
        (void)rk;
        if (!d) {
                if (m->err)
                        atomic_fetch_add(&((sbx_kproducer_t *)opaque)->failed,
                                         1);
                return;
        }
        d->err       = m->err;
        d->partition = m->partition;
        d->offset    = m->offset;
        d->done      = 1;
}

sbx_kproducer_t *sbx_kproducer_new(const sbx_config_t *config,
                                   char *errstr,
                                   size_t errstr_size)
{
        rd_kafka_conf_t *conf;
        sbx_kproducer_t *p;
        char rderr[512];

        conf = sbx_kconf_new(config, SBX_KCONF_PRODUCER, NULL, errstr,
                             errstr_size);
        if (!conf)
                return NULL;
        rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
        p = sbx_calloc(1, sizeof(*p));
        rd_kafka_conf_set_opaque(conf, p);
        p->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, rderr, sizeof(rderr));
        if (!p->rk) {
                rd_kafka_conf_destroy(conf);
                sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA, "%s", rderr);
                free(p);
                return NULL;
        }
        return p;
}

sbx_err_t sbx_kproducer_send_sync(sbx_kproducer_t *p,
                                  const char *topic,
                                  const void *key,
                                  size_t key_size,
                                  const void *value,
                                  size_t value_size,
                                  const sbx_kheader_t *headers,
                                  size_t nheaders,
                                  int timeout_ms,
                                  int32_t *ret_partition,
                                  int64_t *ret_offset,
                                  char *errstr,
                                  size_t errstr_size)
{
        rd_kafka_headers_t *hdrs = NULL;
        delivery_t d             = {0};
        rd_kafka_resp_err_t err;
        int64_t deadline = sbx_mono_us() + (int64_t)timeout_ms * 1000;
        size_t i;

        if (nheaders) {
                hdrs = rd_kafka_headers_new(nheaders);
                for (i = 0; i < nheaders; i++)
                        rd_kafka_header_add(hdrs, headers[i].name, -1,
                                            headers[i].value,
                                            (ssize_t)headers[i].size);
        }
        err = rd_kafka_producev(p->rk, RD_KAFKA_V_TOPIC(topic),
                                RD_KAFKA_V_KEY((void *)key, key_size),
                                RD_KAFKA_V_VALUE((void *)value, value_size),
                                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_OPAQUE(&d),
                                RD_KAFKA_V_END);
        if (err) {
                if (hdrs)
                        rd_kafka_headers_destroy(hdrs);
                return sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA,
                                  "produce to %s: %s", topic,
                                  rd_kafka_err2str(err));
        }
        while (!d.done) {
                rd_kafka_poll(p->rk, 50);
                if (!d.done && sbx_mono_us() > deadline) {
                        /* The message still references &d: wait it out. */
                        rd_kafka_flush(p->rk, 60000);
                        if (!d.done)
                                sbx_assert(!"delivery report never came");
                        return sbx_seterr(errstr, errstr_size, SBX_ERR_TIMEOUT,
                                          "produce to %s: no ack in %d ms",
                                          topic, timeout_ms);
                }
        }
        if (d.err)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA,
                                  "produce to %s: %s", topic,
                                  rd_kafka_err2str(d.err));
        if (ret_partition)
                *ret_partition = d.partition;
        if (ret_offset)
                *ret_offset = d.offset;
        return SBX_OK;
}

sbx_err_t sbx_kproducer_prepare(sbx_kproducer_t *p,
                                const char *topic,
                                char *errstr,
                                size_t errstr_size)
{
        return sbx_kmeta_prepare(p->rk, topic, errstr, errstr_size);
}

sbx_err_t sbx_kproducer_send(sbx_kproducer_t *p,
                             const char *topic,
                             const void *key,
                             size_t key_size,
                             const void *value,
                             size_t value_size)
{
        rd_kafka_resp_err_t err;
        for (;;) {
                err = rd_kafka_producev(
                    p->rk, RD_KAFKA_V_TOPIC(topic),
                    RD_KAFKA_V_KEY((void *)key, key_size),
                    RD_KAFKA_V_VALUE((void *)value, value_size),
                    RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
                if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL)
                        break;
                rd_kafka_poll(p->rk, 10);
        }
        rd_kafka_poll(p->rk, 0);
        return err ? SBX_ERR_KAFKA : SBX_OK;
}

sbx_err_t sbx_kproducer_flush(sbx_kproducer_t *p,
                              int timeout_ms,
                              long *ret_failed)
{
        rd_kafka_resp_err_t err = rd_kafka_flush(p->rk, timeout_ms);
        long failed             = atomic_load(&p->failed);
        if (ret_failed)
                *ret_failed = failed;
        return err || failed ? SBX_ERR_KAFKA : SBX_OK;
}

long sbx_kproducer_failed(sbx_kproducer_t *p)
{
        return atomic_load(&p->failed);
}

int sbx_kproducer_idempotent(sbx_kproducer_t *p)
{
        char buf[16];
        size_t sz                   = sizeof(buf);
        const rd_kafka_conf_t *conf = rd_kafka_conf(p->rk);
        return rd_kafka_conf_get(conf, "enable.idempotence", buf, &sz) ==
                   RD_KAFKA_CONF_OK &&
               !strcmp(buf, "true");
}

void sbx_kproducer_destroy(sbx_kproducer_t *p)
{
        if (!p)
                return;
        if (p->rk) {
                rd_kafka_flush(p->rk, 10000);
                rd_kafka_destroy(p->rk);
        }
        free(p);
}

sbx_kconsumer_t *sbx_kconsumer_new(const sbx_config_t *config,
                                   const char *group_id,
                                   const char *const *topics,
                                   char *errstr,
                                   size_t errstr_size)
{
        rd_kafka_conf_t *conf;
        rd_kafka_topic_partition_list_t *tl;
        sbx_kconsumer_t *c;
        rd_kafka_resp_err_t err;
        char rderr[512];
        int n;

        conf = sbx_kconf_new(config, SBX_KCONF_CONSUMER, group_id, errstr,
                             errstr_size);
        if (!conf)
                return NULL;
        c     = sbx_calloc(1, sizeof(*c));
        c->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, rderr, sizeof(rderr));
        if (!c->rk) {
                rd_kafka_conf_destroy(conf);
                sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA, "%s", rderr);
                free(c);
                return NULL;
        }
        rd_kafka_poll_set_consumer(c->rk);
        for (n = 0; topics[n]; n++)
                ;
        tl = rd_kafka_topic_partition_list_new(n);
        for (n = 0; topics[n]; n++)
                rd_kafka_topic_partition_list_add(tl, topics[n],
                                                  RD_KAFKA_PARTITION_UA);
        err = rd_kafka_subscribe(c->rk, tl);
        rd_kafka_topic_partition_list_destroy(tl);
        if (err) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA, "subscribe: %s",
                           rd_kafka_err2str(err));
                sbx_kconsumer_destroy(c);
                return NULL;
        }
        return c;
}

sbx_err_t sbx_kconsumer_poll(sbx_kconsumer_t *c,
                             int timeout_ms,
                             sbx_kmsg_t **ret_msg,
                             char *errstr,
                             size_t errstr_size)
{
        rd_kafka_message_t *rkm = rd_kafka_consumer_poll(c->rk, timeout_ms);
        sbx_kmsg_t *m;

        if (!rkm) {
                *ret_msg = NULL;
                return SBX_OK;
        }
        if (rkm->err) {
                sbx_err_t err =
                    sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA,
                               "consume: %s", rd_kafka_message_errstr(rkm));
                rd_kafka_message_destroy(rkm);
                return err;
        }
        m        = sbx_malloc(sizeof(*m));
        m->rkm   = rkm;
        *ret_msg = m;
        return SBX_OK;
}

sbx_err_t sbx_kconsumer_commit(sbx_kconsumer_t *c, const sbx_kmsg_t *msg)
{
        return rd_kafka_commit_message(c->rk, msg->rkm, 0) ? SBX_ERR_KAFKA
                                                           : SBX_OK;
}

void sbx_kconsumer_destroy(sbx_kconsumer_t *c)
{
        if (!c)
                return;
        if (c->rk) {
                rd_kafka_consumer_close(c->rk);
                rd_kafka_destroy(c->rk);
        }
        free(c);
}

const char *sbx_kmsg_topic(const sbx_kmsg_t *m)
{
        return rd_kafka_topic_name(m->rkm->rkt);
}

int32_t sbx_kmsg_partition(const sbx_kmsg_t *m)
{
        return m->rkm->partition;
}

int64_t sbx_kmsg_offset(const sbx_kmsg_t *m)
{
        return m->rkm->offset;
}

const void *sbx_kmsg_key(const sbx_kmsg_t *m, size_t *ret_size)
{
        *ret_size = m->rkm->key_len;
        return m->rkm->key;
}

const void *sbx_kmsg_value(const sbx_kmsg_t *m, size_t *ret_size)
{
        *ret_size = m->rkm->len;
        return m->rkm->payload;
}

const void *sbx_kmsg_header(const sbx_kmsg_t *m,
                            const char *name,
                            size_t *ret_size)
{
        rd_kafka_headers_t *hdrs;
        const void *val;
        if (rd_kafka_message_headers(m->rkm, &hdrs))
                return NULL;
        if (rd_kafka_header_get_last(hdrs, name, &val, ret_size))
                return NULL;
        return val;
}

void sbx_kmsg_destroy(sbx_kmsg_t *m)
{
        if (!m)
                return;
        rd_kafka_message_destroy(m->rkm);
        free(m);
}
