/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Thin sbx wrappers over a librdkafka producer and consumer, so that no
 * module outside src/kafka/ sees an rd_kafka_t. The producer is always
 * idempotent with acks=all (kconf.c); the consumer commits by hand.
 */
#ifndef SBX_KCLIENT_H
#define SBX_KCLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"

typedef struct sbx_kproducer_s sbx_kproducer_t;
typedef struct sbx_kconsumer_s sbx_kconsumer_t;
typedef struct sbx_kmsg_s sbx_kmsg_t;

typedef struct sbx_kheader_s {
        const char *name;
        const void *value;
        size_t size;
} sbx_kheader_t;

sbx_kproducer_t *sbx_kproducer_new(const sbx_config_t *config,
                                   char *errstr,
                                   size_t errstr_size);
/**
 * Produces one message and waits for its acknowledgement (or
 * @p timeout_ms). On success writes where it landed. Key, value and
 * headers are copied.
 */
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
                                  size_t errstr_size);
/**
 * Learns @p topic's partitions and leaders now. Without it, the first
 * message to a topic waits for librdkafka's once-a-second topic scan.
 */
sbx_err_t sbx_kproducer_prepare(sbx_kproducer_t *p,
                                const char *topic,
                                char *errstr,
                                size_t errstr_size);
/**
 * Produces one message without waiting (key and value are copied); errors
 * show at sbx_kproducer_flush(). For bulk publishing.
 */
sbx_err_t sbx_kproducer_send(sbx_kproducer_t *p,
                             const char *topic,
                             const void *key,
                             size_t key_size,
                             const void *value,
                             size_t value_size);
/** Waits up to @p timeout_ms for every sent message; counts failures. */
sbx_err_t sbx_kproducer_flush(sbx_kproducer_t *p,
                              int timeout_ms,
                              long *ret_failed);
/** Asynchronous sends that failed so far (cumulative). */
long sbx_kproducer_failed(sbx_kproducer_t *p);
/** Is idempotence enabled in this producer's configuration? */
int sbx_kproducer_idempotent(sbx_kproducer_t *p);
void sbx_kproducer_destroy(sbx_kproducer_t *p);

/** A group consumer subscribed to @p topics (NULL-terminated). */
sbx_kconsumer_t *sbx_kconsumer_new(const sbx_config_t *config,
                                   const char *group_id,
                                   const char *const *topics,
                                   char *errstr,
                                   size_t errstr_size);
/**
 * Next message, or NULL after @p timeout_ms. Consumer errors that are not
 * messages are returned as SBX_ERR_KAFKA with errstr set; the caller owns
 * the message.
 */
sbx_err_t sbx_kconsumer_poll(sbx_kconsumer_t *c,
                             int timeout_ms,
                             sbx_kmsg_t **ret_msg,
                             char *errstr,
                             size_t errstr_size);
/** Synchronously commits the offset after @p msg. */
sbx_err_t sbx_kconsumer_commit(sbx_kconsumer_t *c, const sbx_kmsg_t *msg);
void sbx_kconsumer_destroy(sbx_kconsumer_t *c);

const char *sbx_kmsg_topic(const sbx_kmsg_t *m);
int32_t sbx_kmsg_partition(const sbx_kmsg_t *m);
int64_t sbx_kmsg_offset(const sbx_kmsg_t *m);
const void *sbx_kmsg_key(const sbx_kmsg_t *m, size_t *ret_size);
const void *sbx_kmsg_value(const sbx_kmsg_t *m, size_t *ret_size);
/** Last header named @p name, or NULL. */
const void *sbx_kmsg_header(const sbx_kmsg_t *m,
                            const char *name,
                            size_t *ret_size);
void sbx_kmsg_destroy(sbx_kmsg_t *m);

#endif
