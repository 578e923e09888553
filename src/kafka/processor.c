/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Processor implementation. Invariants: the aggregate store only ever
 * grows by folding the log in partition order; decide runs only for owned
 * partitions, after the initial replay, and never for an aggregate whose
 * own append is in flight (pending until its seq is read back, or 30 s).
 * Correctness never depends on committed offsets of the lifecycle: every
 * start replays it; commits matter only for the extra topics.
 */
#include "kafka/processor.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "core/aggstore.h"
#include "core/event.h"
#include "core/util.h"
#include "kafka/kconf.h"

#define MAX_PARTITIONS  1024
#define PENDING_TIMEOUT (30 * 1000000LL)
#define OWN_TTL         (120 * 1000000LL)

typedef struct own_s {
        char id[40];
        int64_t at;
} own_t;

struct sbx_proc_s {
        const sbx_stage_t *stage;
        void *self;
        const sbx_config_t *config;
        const sbx_codec_t *codec;
        char producer_name[256];

        rd_kafka_t *group; /* ownership + extra topics; NULL if not needed */
        rd_kafka_t *data;  /* every lifecycle (+nodes) partition */
        rd_kafka_t *prod;

        int npart;
        unsigned char owned[MAX_PARTITIONS];
        int64_t target[MAX_PARTITIONS]; /* hwm at start */
        int64_t pos[MAX_PARTITIONS];    /* next offset to read */
        int64_t hwm[MAX_PARTITIONS];
        int caught_up, need_scan;
        int64_t last_tick, last_hwm_check;

        sbx_aggstore_t *store;
        own_t *own;
        size_t nown, capown;

        _Atomic int64_t consumed, appended, won, superseded, dlq, lag,
            decisions;
        _Atomic int nowned, caught, assigned;
};

const char *sbx_proc_producer(const sbx_proc_t *p)
{
        return p->producer_name;
}

const sbx_codec_t *sbx_proc_codec(const sbx_proc_t *p)
{
        return p->codec;
}

const sbx_stage_t *sbx_proc_stage(const sbx_proc_t *p)
{
        return p->stage;
}

const sbx_state_t *sbx_proc_state(sbx_proc_t *p, const char *id)
{
        sbx_aggentry_t *e = sbx_aggstore_get(p->store, id);
        return e ? e->state : NULL;
}

/* The partition of a key, as the producer's murmur2_random partitioner
 * (the Java client's) computes it. */
static int32_t partition_of(const sbx_proc_t *p, const char *key)
{
        const unsigned char *data = (const unsigned char *)key;
        size_t len = strlen(key), i;
        const uint32_t seed = 0x9747b28c, m = 0x5bd1e995;
        uint32_t h = seed ^ (uint32_t)len;
        for (i = 0; i + 4 <= len; i += 4) {
                uint32_t k = (uint32_t)data[i] | (uint32_t)data[i + 1] << 8 |
                             (uint32_t)data[i + 2] << 16 |
                             (uint32_t)data[i + 3] << 24;
                k *= m;
                k ^= k >> 24;
                k *= m;
                h *= m;
                h ^= k;
        }
        switch (len & 3) {
        case 3:
                h ^= (uint32_t)data[i + 2] << 16;
                /* fall through */
        case 2:
                h ^= (uint32_t)data[i + 1] << 8;
                /* fall through */
        case 1:
                h ^= data[i];
                h *= m;
        }
        h ^= h >> 13;
        h *= m;
        h ^= h >> 15;
        return p->npart ? (int32_t)((h & 0x7fffffff) % (uint32_t)p->npart) : 0;
}

int sbx_proc_pending(sbx_proc_t *p, const char *id)
{
        sbx_aggentry_t *e = sbx_aggstore_get(p->store, id);
        return e && e->pending_seq &&
               sbx_mono_us() - e->pending_at < PENDING_TIMEOUT;
}

const char *sbx_proc_instance(const sbx_proc_t *p)
{
        return p->config->instance;
}

typedef struct each_s {
        void (*cb)(const sbx_state_t *s, void *opaque);
        void *opaque;
} each_t;

static void each_cb(sbx_aggentry_t *e, void *opaque)
{
        each_t *x = opaque;
        x->cb(e->state, x->opaque);
}

void sbx_proc_foreach_state(sbx_proc_t *p,
                            void (*cb)(const sbx_state_t *s, void *opaque),
                            void *opaque)
{
        each_t x = {cb, opaque};
        sbx_aggstore_foreach(p->store, each_cb, &x);
}

int sbx_proc_owns(sbx_proc_t *p, const char *id)
{
        int32_t part = partition_of(p, id);
        return part < MAX_PARTITIONS && p->owned[part];
}

/* ---- headers ------------------------------------------------------------ */

static uint64_t fnv(const char *s)
{
        return sbx_fnv1a64(SBX_FNV1A64_INIT, s);
}

static rd_kafka_headers_t *event_headers(const sbx_proc_t *p,
                                         const sbx_event_t *ev)
{
        rd_kafka_headers_t *h = rd_kafka_headers_new(8);
        char buf[128], tm[64];
        time_t secs = (time_t)(ev->occurred_at / 1000000);
        struct tm t;

        rd_kafka_header_add(h, "ce_specversion", -1, "1.0", 3);
        rd_kafka_header_add(h, "ce_id", -1, ev->event_id, -1);
        sbx_fmt(buf, sizeof(buf), "sbx.%s", sbx_evtype_name(ev->type));
        rd_kafka_header_add(h, "ce_type", -1, buf, -1);
        sbx_fmt(buf, sizeof(buf), "/sbx/%s", p->producer_name);
        rd_kafka_header_add(h, "ce_source", -1, buf, -1);
        gmtime_r(&secs, &t);
        strftime(tm, sizeof(tm), "%Y-%m-%dT%H:%M:%S", &t);
        sbx_fmt(buf, sizeof(buf), "%s.%06lldZ", tm,
                (long long)(ev->occurred_at % 1000000));
        rd_kafka_header_add(h, "ce_time", -1, buf, -1);
        rd_kafka_header_add(h, "ce_subject", -1, ev->aggregate_id, -1);
        rd_kafka_header_add(h, "content-type", -1, "application/avro", -1);
        /* One trace per chain (correlation id), one span per event. */
        sbx_fmt(buf, sizeof(buf), "00-%016llx%016llx-%016llx-01",
                (unsigned long long)fnv(ev->correlation_id),
                (unsigned long long)fnv(ev->tenant_id),
                (unsigned long long)fnv(ev->event_id));
        rd_kafka_header_add(h, "traceparent", -1, buf, -1);
        return h;
}

/* ---- producing ---------------------------------------------------------- */

typedef struct dr_s {
        int sync_tag; /* 0xD5: a produce_sync waiter */
        int done;
        rd_kafka_resp_err_t err;
        int32_t partition;
} dr_t;

static void on_append_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m,
                               void *opaque);

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m,
                        void *opaque)
{
        dr_t *d = m->_private;
        if (!d)
                return;
        if (d->sync_tag == 0xA1) { /* both structs start with the tag */
                on_append_delivery(rk, m, opaque);
                return;
        }
        d->err = m->err;
        d->partition = m->partition;
        d->done = 1;
}

static sbx_err_t produce_sync(sbx_proc_t *p, const char *topic,
                              const void *key, size_t klen, const void *val,
                              size_t vlen, rd_kafka_headers_t *hdrs,
                              int32_t *ret_partition, char *errstr,
                              size_t errstr_size)
{
        dr_t d = {0};
        rd_kafka_resp_err_t err;

        d.sync_tag = 0xD5;
        err = rd_kafka_producev(
            p->prod, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_KEY((void *)key, klen),
            RD_KAFKA_V_VALUE((void *)val, vlen),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
            RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_OPAQUE(&d), RD_KAFKA_V_END);
        if (err) {
                if (hdrs)
                        rd_kafka_headers_destroy(hdrs);
                return sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA,
                                  "produce to %s: %s", topic,
                                  rd_kafka_err2str(err));
        }
        /* message.timeout.ms bounds this wait */
        while (!d.done)
                rd_kafka_poll(p->prod, 10);
        if (d.err)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA,
                                  "produce to %s: %s", topic,
                                  rd_kafka_err2str(d.err));
        if (ret_partition)
                *ret_partition = d.partition;
        return SBX_OK;
}

static void own_add(sbx_proc_t *p, const char *id)
{
        int64_t now = sbx_mono_us();
        size_t i, j = 0;
        for (i = 0; i < p->nown; i++) /* prune the ones never read back */
                if (now - p->own[i].at < OWN_TTL)
                        p->own[j++] = p->own[i];
        p->nown = j;
        if (p->nown == p->capown) {
                p->capown = p->capown ? p->capown * 2 : 64;
                p->own = sbx_realloc(p->own, p->capown * sizeof(*p->own));
        }
        sbx_fmt(p->own[p->nown].id, sizeof(p->own[0].id), "%s", id);
        p->own[p->nown].at = now;
        p->nown++;
}

static int own_take(sbx_proc_t *p, const char *id)
{
        size_t i;
        for (i = 0; i < p->nown; i++)
                if (!strcmp(p->own[i].id, id)) {
                        p->own[i] = p->own[--p->nown];
                        return 1;
                }
        return 0;
}

/* An append in flight: what its delivery report needs to undo. */
typedef struct inflight_s {
        int sync_tag; /* 0xA1: an asynchronous append (see dr_t) */
        sbx_proc_t *p;
        char id[SBX_MAX_ID_LEN + 1];
} inflight_t;

static void on_append_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m,
                               void *opaque)
{
        inflight_t *f = m->_private;
        (void)rk;
        (void)opaque;
        if (!f)
                return;
        if (m->err) {
                /* Not in the log: let decide() try again. */
                sbx_aggentry_t *e = sbx_aggstore_get(f->p->store, f->id);
                if (e)
                        e->pending_seq = 0;
                fprintf(stderr, "sbxd: %s: append to %s failed: %s\n",
                        f->p->producer_name, f->id, rd_kafka_err2str(m->err));
        }
        free(f);
}

sbx_err_t sbx_proc_append(sbx_proc_t *p, sbx_event_t *ev, char *errstr,
                          size_t errstr_size)
{
        unsigned char *buf = NULL;
        size_t len = 0;
        inflight_t *f;
        sbx_aggentry_t *e;
        rd_kafka_resp_err_t rerr;
        sbx_err_t err;

        sbx_event_set(&ev->producer, p->producer_name);
        err = sbx_event_encode(p->codec, ev, &buf, &len, errstr, errstr_size);
        if (err)
                goto done;
        f = sbx_calloc(1, sizeof(*f));
        f->sync_tag = 0xA1;
        f->p = p;
        sbx_fmt(f->id, sizeof(f->id), "%s", ev->aggregate_id);
        /* Asynchronous: the idempotent producer keeps per-partition order
         * and the aggregate stays pending until its seq is read back (or
         * the delivery fails), so nothing decides on a stale state. */
        for (;;) {
                rerr = rd_kafka_producev(
                    p->prod, RD_KAFKA_V_TOPIC(SBX_TOPIC_LIFECYCLE),
                    RD_KAFKA_V_KEY(ev->aggregate_id, strlen(ev->aggregate_id)),
                    RD_KAFKA_V_VALUE(buf, len), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                    RD_KAFKA_V_HEADERS(event_headers(p, ev)),
                    RD_KAFKA_V_OPAQUE(f), RD_KAFKA_V_END);
                if (rerr != RD_KAFKA_RESP_ERR__QUEUE_FULL)
                        break;
                rd_kafka_poll(p->prod, 10);
        }
        if (rerr) {
                free(f);
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA,
                                 "append to %s: %s", SBX_TOPIC_LIFECYCLE,
                                 rd_kafka_err2str(rerr));
                goto done;
        }
        e = sbx_aggstore_upsert(p->store, ev->aggregate, ev->aggregate_id,
                                partition_of(p, ev->aggregate_id));
        e->pending_seq = ev->seq;
        e->pending_at = sbx_mono_us();
        own_add(p, ev->event_id);
        atomic_fetch_add(&p->appended, 1);
done:
        free(buf);
        sbx_event_destroy(ev);
        return err;
}

sbx_err_t sbx_proc_produce(sbx_proc_t *p, const char *topic, const void *key,
                           size_t key_size, const void *value,
                           size_t value_size, char *errstr,
                           size_t errstr_size)
{
        return produce_sync(p, topic, key, key_size, value, value_size, NULL,
                            NULL, errstr, errstr_size);
}

void sbx_proc_dlq(sbx_proc_t *p, const char *topic, const void *key,
                  size_t key_size, const void *value, size_t value_size,
                  const char *reason)
{
        rd_kafka_headers_t *h = rd_kafka_headers_new(4);
        char err[256];
        rd_kafka_header_add(h, "sbx_reason", -1, reason, -1);
        rd_kafka_header_add(h, "sbx_source_topic", -1, topic, -1);
        rd_kafka_header_add(h, "sbx_stage", -1, p->producer_name, -1);
        if (produce_sync(p, SBX_TOPIC_DLQ, key, key_size, value, value_size, h,
                         NULL, err, sizeof(err)))
                fprintf(stderr, "sbxd: %s: DLQ write failed: %s\n",
                        p->producer_name, err);
        else
                atomic_fetch_add(&p->dlq, 1);
}

/* ---- consuming ---------------------------------------------------------- */

static void on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *parts, void *opaque)
{
        sbx_proc_t *p = opaque;
        int i, n = 0;

        if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
                rd_kafka_topic_partition_list_t *life =
                    rd_kafka_topic_partition_list_new(parts->cnt);
                for (i = 0; i < parts->cnt; i++) {
                        rd_kafka_topic_partition_t *tp = &parts->elems[i];
                        if (strcmp(tp->topic, SBX_TOPIC_LIFECYCLE))
                                continue;
                        if (tp->partition < MAX_PARTITIONS)
                                p->owned[tp->partition] = 1;
                        rd_kafka_topic_partition_list_add(life, tp->topic,
                                                          tp->partition);
                }
                rd_kafka_assign(rk, parts);
                atomic_store(&p->assigned, 1);
                /* Ownership only: the data consumer reads the lifecycle. */
                if (life->cnt)
                        rd_kafka_pause_partitions(rk, life);
                rd_kafka_topic_partition_list_destroy(life);
                p->need_scan = 1;
        } else {
                memset(p->owned, 0, sizeof(p->owned));
                rd_kafka_assign(rk, NULL);
        }
        for (i = 0; i < MAX_PARTITIONS; i++)
                n += p->owned[i];
        atomic_store(&p->nowned, n);
}

static rd_kafka_t *new_consumer(sbx_proc_t *p, const char *group, int grouped,
                                char *errstr, size_t errstr_size)
{
        rd_kafka_conf_t *conf = sbx_kconf_new(p->config, SBX_KCONF_CONSUMER,
                                              group, errstr, errstr_size);
        rd_kafka_t *rk;
        char rderr[512];

        if (!conf)
                return NULL;
        if (grouped) {
                /* store after handling, commit in the background */
                if (sbx_kconf_set(conf, "enable.auto.commit", "true", errstr,
                                  errstr_size) ||
                    sbx_kconf_set(conf, "enable.auto.offset.store", "false",
                                  errstr, errstr_size) ||
                    sbx_kconf_set(conf, "session.timeout.ms", "10000", errstr,
                                  errstr_size) ||
                    sbx_kconf_set(conf, "heartbeat.interval.ms", "1000",
                                  errstr, errstr_size)) {
                        rd_kafka_conf_destroy(conf);
                        return NULL;
                }
                rd_kafka_conf_set_rebalance_cb(conf, on_rebalance);
                rd_kafka_conf_set_opaque(conf, p);
        }
        if (sbx_kconf_set(conf, "fetch.wait.max.ms", "10", errstr,
                          errstr_size)) {
                rd_kafka_conf_destroy(conf);
                return NULL;
        }
        rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, rderr, sizeof(rderr));
        if (!rk) {
                rd_kafka_conf_destroy(conf);
                sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA, "%s", rderr);
                return NULL;
        }
        rd_kafka_poll_set_consumer(rk);
        return rk;
}

static int topic_partitions(rd_kafka_t *rk, const char *topic)
{
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_topic_t *t = rd_kafka_topic_new(rk, topic, NULL);
        int n = -1;
        if (rd_kafka_metadata(rk, 0, t, &md, 10000) == 0 && md->topic_cnt == 1 &&
            !md->topics[0].err)
                n = md->topics[0].partition_cnt;
        if (md)
                rd_kafka_metadata_destroy(md);
        rd_kafka_topic_destroy(t);
        return n;
}

sbx_proc_t *sbx_proc_new(const sbx_stage_t *stage, const sbx_config_t *config,
                         const sbx_codec_t *codec, char *errstr,
                         size_t errstr_size)
{
        sbx_proc_t *p = sbx_calloc(1, sizeof(*p));
        rd_kafka_conf_t *pconf;
        rd_kafka_topic_partition_list_t *tl;
        char group[256], rderr[512];
        int i, nnodes = 0;

        p->stage = stage;
        p->config = config;
        p->codec = codec;
        p->store = sbx_aggstore_new();
        sbx_fmt(p->producer_name, sizeof(p->producer_name), "%s/%s",
                stage->name, config->instance);

        pconf = sbx_kconf_new(config, SBX_KCONF_PRODUCER, NULL, errstr,
                              errstr_size);
        if (!pconf)
                goto fail;
        rd_kafka_conf_set_dr_msg_cb(pconf, on_delivery);
        p->prod = rd_kafka_new(RD_KAFKA_PRODUCER, pconf, rderr, sizeof(rderr));
        if (!p->prod) {
                rd_kafka_conf_destroy(pconf);
                sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA, "%s", rderr);
                goto fail;
        }

        if (sbx_kmeta_prepare(p->prod, SBX_TOPIC_LIFECYCLE, errstr,
                              errstr_size))
                goto fail;

        sbx_fmt(group, sizeof(group), "%s.%s.data.%s", config->group_prefix,
                stage->name, config->instance);
        p->data = new_consumer(p, group, 0, errstr, errstr_size);
        if (!p->data)
                goto fail;
        p->npart = topic_partitions(p->data, SBX_TOPIC_LIFECYCLE);
        if (p->npart <= 0 || p->npart > MAX_PARTITIONS) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA,
                           "cannot read the partitions of %s from %s (run "
                           "`sbx topics apply`?)",
                           SBX_TOPIC_LIFECYCLE, config->brokers);
                goto fail;
        }
        if (stage->wants_nodes &&
            (nnodes = topic_partitions(p->data, SBX_TOPIC_NODES)) <= 0) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA,
                           "cannot read the partitions of %s",
                           SBX_TOPIC_NODES);
                goto fail;
        }
        tl = rd_kafka_topic_partition_list_new(p->npart + nnodes);
        for (i = 0; i < p->npart; i++) {
                int64_t lo = 0, hi = 0;
                rd_kafka_topic_partition_list_add(tl, SBX_TOPIC_LIFECYCLE, i)
                    ->offset = RD_KAFKA_OFFSET_BEGINNING;
                rd_kafka_resp_err_t werr;
                int tries = 0;
                /* Fresh topics may not have a leader yet: retry for 30 s. */
                while ((werr = rd_kafka_query_watermark_offsets(
                            p->data, SBX_TOPIC_LIFECYCLE, i, &lo, &hi,
                            10000)) &&
                       ++tries < 60)
                        usleep(500000);
                if (werr) {
                        rd_kafka_topic_partition_list_destroy(tl);
                        sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA,
                                   "cannot read the watermarks of %s: %s",
                                   SBX_TOPIC_LIFECYCLE, rd_kafka_err2str(werr));
                        goto fail;
                }
                p->target[i] = hi;
                p->hwm[i] = hi;
                p->pos[i] = lo;
        }
        for (i = 0; i < nnodes; i++)
                rd_kafka_topic_partition_list_add(tl, SBX_TOPIC_NODES, i)
                    ->offset = RD_KAFKA_OFFSET_BEGINNING;
        rd_kafka_assign(p->data, tl);
        rd_kafka_topic_partition_list_destroy(tl);

        if (stage->decides || stage->group_topics) {
                if (stage->own_all)
                        sbx_fmt(group, sizeof(group), "%s.%s.%s",
                                config->group_prefix, stage->name,
                                config->instance);
                else
                        sbx_fmt(group, sizeof(group), "%s.%s",
                                config->group_prefix, stage->name);
                p->group = new_consumer(p, group, 1, errstr, errstr_size);
                if (!p->group)
                        goto fail;
                tl = rd_kafka_topic_partition_list_new(4);
                if (stage->decides)
                        rd_kafka_topic_partition_list_add(
                            tl, SBX_TOPIC_LIFECYCLE, RD_KAFKA_PARTITION_UA);
                for (i = 0; stage->group_topics && stage->group_topics[i]; i++)
                        rd_kafka_topic_partition_list_add(
                            tl, stage->group_topics[i], RD_KAFKA_PARTITION_UA);
                if (rd_kafka_subscribe(p->group, tl)) {
                        rd_kafka_topic_partition_list_destroy(tl);
                        sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA,
                                   "subscribe failed");
                        goto fail;
                }
                rd_kafka_topic_partition_list_destroy(tl);
        }
        if (stage->init) {
                p->self = stage->init(config, p, errstr, errstr_size);
                if (!p->self)
                        goto fail;
        }
        return p;
fail:
        sbx_proc_destroy(p);
        return NULL;
}

void sbx_proc_destroy(sbx_proc_t *p)
{
        if (!p)
                return;
        if (p->self && p->stage->destroy)
                p->stage->destroy(p->self);
        if (p->group) {
                rd_kafka_commit(p->group, NULL, 0);
                rd_kafka_consumer_close(p->group);
                rd_kafka_destroy(p->group);
        }
        if (p->data) {
                rd_kafka_consumer_close(p->data);
                rd_kafka_destroy(p->data);
        }
        if (p->prod) {
                rd_kafka_flush(p->prod, 10000);
                rd_kafka_destroy(p->prod);
        }
        sbx_aggstore_destroy(p->store);
        free(p->own);
        free(p);
}

void sbx_proc_get_stats(sbx_proc_t *p, sbx_proc_stats_t *r)
{
        r->consumed = atomic_load(&p->consumed);
        r->appended = atomic_load(&p->appended);
        r->won = atomic_load(&p->won);
        r->superseded = atomic_load(&p->superseded);
        r->dlq = atomic_load(&p->dlq);
        r->lag = atomic_load(&p->lag);
        r->decisions = atomic_load(&p->decisions);
        r->owned = atomic_load(&p->nowned);
        r->caught_up = atomic_load(&p->caught) &&
                       (!p->group || atomic_load(&p->assigned));
}

static void decide_one(sbx_proc_t *p, sbx_aggentry_t *e, int64_t now)
{
        if (!p->stage->decides || !p->stage->decide || !p->caught_up ||
            e->state->seq == 0 || e->partition >= MAX_PARTITIONS ||
            !p->owned[e->partition])
                return;
        if (e->pending_seq) {
                if (sbx_mono_us() - e->pending_at < PENDING_TIMEOUT)
                        return;
                e->pending_seq = 0; /* our append never came back: retry */
        }
        atomic_fetch_add(&p->decisions, 1);
        p->stage->decide(p->self, p, e->state, now);
}

static void scan_cb(sbx_aggentry_t *e, void *opaque)
{
        sbx_proc_t *p = opaque;
        decide_one(p, e, sbx_now_us());
}

static void check_caught_up(sbx_proc_t *p)
{
        int i;
        if (p->caught_up)
                return;
        for (i = 0; i < p->npart; i++)
                if (p->pos[i] < p->target[i])
                        return;
        p->caught_up = 1;
        p->need_scan = 1;
        atomic_store(&p->caught, 1);
}

static void handle_lifecycle(sbx_proc_t *p, rd_kafka_message_t *m)
{
        sbx_event_t *ev = NULL;
        sbx_aggentry_t *e = NULL;
        sbx_verdict_t v;
        char err[512];

        if (m->partition < MAX_PARTITIONS)
                p->pos[m->partition] = m->offset + 1;
        if (sbx_event_decode(p->codec, m->payload, m->len, &ev, err,
                             sizeof(err))) {
                if (p->stage->dlq_lifecycle && m->partition < MAX_PARTITIONS &&
                    p->owned[m->partition] && p->caught_up)
                        sbx_proc_dlq(p, SBX_TOPIC_LIFECYCLE, m->key, m->key_len,
                                     m->payload, m->len, err);
                return;
        }
        v = sbx_aggstore_fold(p->store, ev, m->partition, &e);
        if (p->stage->observe)
                p->stage->observe(p->self, ev, v, e->state);
        if (own_take(p, ev->event_id)) {
                atomic_fetch_add(v == SBX_FOLD_ACCEPTED ? &p->won
                                                        : &p->superseded,
                                 1);
                if (p->stage->own)
                        p->stage->own(p->self, p, ev, v);
        }
        if (v == SBX_FOLD_ACCEPTED)
                decide_one(p, e, sbx_now_us());
        sbx_event_destroy(ev);
}

static void update_lag(sbx_proc_t *p)
{
        int64_t lag = 0, lo, hi;
        int i;
        for (i = 0; i < p->npart; i++) {
                if (!rd_kafka_get_watermark_offsets(p->data, SBX_TOPIC_LIFECYCLE,
                                                    i, &lo, &hi) &&
                    hi > p->hwm[i])
                        p->hwm[i] = hi;
                if (p->hwm[i] > p->pos[i])
                        lag += p->hwm[i] - p->pos[i];
        }
        atomic_store(&p->lag, lag);
}

void sbx_proc_run(sbx_proc_t *p, volatile sig_atomic_t *stop)
{
        check_caught_up(p);
        while (!*stop) {
                rd_kafka_message_t *m;
                int n;
                int64_t now = sbx_mono_us();

                /* Group: rebalances and the extra topics - only once the
                 * replay is done, so nothing is decided on a partial state
                 * (intake would refuse a sandbox it has not read yet). */
                for (n = 0; p->group && p->caught_up && n < 100; n++) {
                        m = rd_kafka_consumer_poll(p->group, 0);
                        if (!m)
                                break;
                        if (!m->err && p->stage->on_message) {
                                atomic_fetch_add(&p->consumed, 1);
                                p->stage->on_message(
                                    p->self, p, rd_kafka_topic_name(m->rkt),
                                    m->key, m->key_len, m->payload, m->len);
                        }
                        if (!m->err)
                                rd_kafka_offset_store(m->rkt, m->partition,
                                                      m->offset);
                        rd_kafka_message_destroy(m);
                }
                /* Data: the lifecycle (and node status), folded. */
                for (n = 0; n < 500; n++) {
                        m = rd_kafka_consumer_poll(p->data, n ? 0 : 20);
                        if (!m)
                                break;
                        if (!m->err) {
                                const char *t = rd_kafka_topic_name(m->rkt);
                                atomic_fetch_add(&p->consumed, 1);
                                if (!strcmp(t, SBX_TOPIC_LIFECYCLE))
                                        handle_lifecycle(p, m);
                                else if (p->stage->on_message)
                                        p->stage->on_message(p->self, p, t,
                                                             m->key, m->key_len,
                                                             m->payload, m->len);
                        }
                        rd_kafka_message_destroy(m);
                }
                check_caught_up(p);
                if (p->caught_up &&
                    (p->need_scan ||
                     (p->stage->tick_ms &&
                      now - p->last_tick >= p->stage->tick_ms * 1000LL))) {
                        p->need_scan = 0;
                        p->last_tick = now;
                        sbx_aggstore_foreach(p->store, scan_cb, p);
                }
                if (now - p->last_hwm_check > 1000000) {
                        p->last_hwm_check = now;
                        update_lag(p);
                }
                if (p->stage->idle)
                        p->stage->idle(p->self, p, sbx_now_us());
                rd_kafka_poll(p->prod, 0);
        }
        if (p->stage->shutdown)
                p->stage->shutdown(p->self, p);
}
