/* SPDX-License-Identifier: Apache-2.0 */
#include "stages/exec_output.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "kafka/kclient.h"
#include "kafka/processor.h"

struct sbx_outpub_s {
        sbx_kproducer_t *prod;
        const sbx_codec_t *codec;
        pthread_mutex_t mu; /* the codec's avro-c values are not shared */
};

typedef struct stream_s {
        unsigned char *keep; /* inline part */
        size_t kept;
        int64_t offset; /* bytes published so far */
        int seq;
} stream_t;

struct sbx_output_s {
        sbx_outpub_t *pub;
        char *sandbox, *exec_id;
        int64_t lease_version;
        long failed_before; /* the producer's failure count at start */
        stream_t st[2];
        int chunks, failed;
        char error[256];
};

sbx_outpub_t *sbx_outpub_new(const sbx_config_t *config,
                             const sbx_codec_t *codec,
                             char *e,
                             size_t es)
{
        sbx_outpub_t *p = sbx_calloc(1, sizeof(*p));
        p->prod         = sbx_kproducer_new(config, e, es);
        if (!p->prod ||
            sbx_kproducer_prepare(p->prod, SBX_TOPIC_OUTPUT, e, es)) {
                sbx_kproducer_destroy(p->prod);
                free(p);
                return NULL;
        }
        p->codec = codec;
        pthread_mutex_init(&p->mu, NULL);
        return p;
}

void sbx_outpub_destroy(sbx_outpub_t *p)
{
        if (!p)
                return;
        sbx_kproducer_destroy(p->prod);
        pthread_mutex_destroy(&p->mu);
        free(p);
}

sbx_output_t *sbx_output_new(sbx_outpub_t *pub,
                             const char *sandbox,
                             const char *exec_id,
                             int64_t lease_version)
{
        sbx_output_t *o = sbx_calloc(1, sizeof(*o));
        int k;
        o->pub           = pub;
        o->sandbox       = sbx_strdup(sandbox);
        o->exec_id       = sbx_strdup(exec_id);
        o->lease_version = lease_version;
        if (pub)
                o->failed_before = sbx_kproducer_failed(pub->prod);
        for (k = 0; k < 2; k++) {
                o->st[k].keep = sbx_malloc(SBX_OUTPUT_INLINE);
        }
        return o;
}

/* Publishes @p n bytes of stream @p k (at most SBX_OUTPUT_CHUNK) as its
 * next chunk. */
static void publish(sbx_output_t *o, int k, const uint8_t *d, size_t n, int eof)
{
        stream_t *s        = &o->st[k];
        unsigned char *msg = NULL;
        size_t len         = 0;
        char err[256];
        json_t *v = json_pack(
            "{s:s, s:s, s:I, s:s, s:i, s:I, s:o, s:b, s:I}", "sandbox_id",
            o->sandbox, "exec_id", o->exec_id, "lease_version",
            (json_int_t)o->lease_version, "stream", k ? "stderr" : "stdout",
            "seq", s->seq, "offset", (json_int_t)s->offset, "data",
            sbx_codec_bytes(d, n), "eof", eof, "at", (json_int_t)sbx_now_us());
        pthread_mutex_lock(&o->pub->mu);
        if (sbx_codec_encode(o->pub->codec, SBX_SCHEMA_EXEC_OUTPUT, v, &msg,
                             &len, err, sizeof(err)))
                sbx_fmt(o->error, sizeof(o->error), "output chunk: %s", err);
        pthread_mutex_unlock(&o->pub->mu);
        json_decref(v);
        if (msg && sbx_kproducer_send(o->pub->prod, SBX_TOPIC_OUTPUT,
                                      o->sandbox, strlen(o->sandbox), msg, len))
                o->failed++;
        free(msg);
        s->offset += (int64_t)n;
        s->seq++;
        o->chunks++;
}

void sbx_output_write(sbx_output_t *o, int k, const uint8_t *d, size_t n)
{
        stream_t *s = &o->st[k];
        size_t room = SBX_OUTPUT_INLINE - s->kept, c;

        c = n < room ? n : room;
        memcpy(s->keep + s->kept, d, c);
        s->kept += c;
        if (!o->pub) {
                s->offset += (int64_t)n;
                return;
        }
        for (; n > 0; d += c, n -= c) {
                c = n < SBX_OUTPUT_CHUNK ? n : SBX_OUTPUT_CHUNK;
                publish(o, k, d, c, 0);
        }
}

void sbx_output_close(sbx_output_t *o, sbx_output_result_t *r)
{
        int k;
        long failed = 0;

        memset(r, 0, sizeof(*r));
        for (k = 0; k < 2; k++) {
                stream_t *s = &o->st[k];
                if (o->pub && s->seq)
                        publish(o, k, NULL, 0, 1); /* eof */
                r->inline_bytes[k] = sbx_codec_bytes(s->keep, s->kept);
                r->total[k]        = s->offset;
                if (r->total[k] > (int64_t)s->kept)
                        r->truncated = 1;
                free(s->keep);
        }
        /* Another exec's failure may show here too: the count is the
         * producer's. It errs on the side of saying so. */
        if (o->pub && o->chunks &&
            sbx_kproducer_flush(o->pub->prod, 30000, &failed) &&
            failed > o->failed_before)
                o->failed = 1;
        r->chunks = o->chunks;
        if (o->failed)
                sbx_fmt(r->error, sizeof(r->error),
                        "some output chunks were not delivered to %s",
                        SBX_TOPIC_OUTPUT);
        else if (o->error[0])
                sbx_fmt(r->error, sizeof(r->error), "%s", o->error);
        else if (r->truncated && !o->pub)
                sbx_fmt(r->error, sizeof(r->error),
                        "output beyond %d bytes per stream was dropped",
                        SBX_OUTPUT_INLINE);
        free(o->sandbox);
        free(o->exec_id);
        free(o);
}
