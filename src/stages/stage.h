/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The stage interface. A stage is decision logic plus a few hooks; the
 * processor (src/kafka/processor.c) owns every Kafka handle and calls them:
 *
 *  - observe: every lifecycle event of every partition, in log order,
 *    with the fold's verdict and the aggregate's state after it. Stages
 *    keep what they need to decide (tasks, intents, node registry).
 *  - decide: level-triggered, for one aggregate of a partition this
 *    instance owns, when its state changed (or on every tick, or after a
 *    rebalance), unless this instance's own append to it is still in
 *    flight. It looks at the state (and `now`) and appends zero or one
 *    event with sbx_proc_append(). Replays, redeliveries and rebalances
 *    are harmless: the same state yields the same decision, and a racing
 *    append is superseded by the fold.
 *  - on_message: a message of an extra topic (requests, nodes).
 *  - own: one of this instance's appends read back, with its verdict.
 *
 * No hook sees a Kafka handle; stage logic is tested without a broker.
 */
#ifndef SBX_STAGE_H
#define SBX_STAGE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/fold.h"

typedef struct sbx_proc_s sbx_proc_t;
struct sbx_codec_s;

/*
 * A stage that runs a loop of its own instead of a processor (the
 * projector, whose offsets live in PostgreSQL, not in Kafka). sbxd calls
 * start, then run on a thread of its own until *stop, asks caught_up for
 * its "ready" line, and destroys it after run returned.
 */
typedef struct sbx_stage_loop_s {
        void *(*start)(const sbx_config_t *config,
                       const struct sbx_codec_s *codec,
                       char *errstr,
                       size_t errstr_size);
        void (*run)(void *self, volatile sig_atomic_t *stop);
        int (*caught_up)(void *self);
        void (*destroy)(void *self);
} sbx_stage_loop_t;

typedef struct sbx_stage_s {
        const char *name;
        /* Topics besides sbx.lifecycle.v1 that the group consumes and
         * co-partitions (e.g. sbx.requests.v1), NULL-terminated or NULL. */
        const char *const *group_topics;
        /* Also read sbx.nodes.v1 (every partition) into on_message. */
        int wants_nodes;
        /* Own lifecycle partitions and call decide (0: observe only). */
        int decides;
        /* Undecodable lifecycle messages of owned partitions go to the
         * DLQ from this stage (exactly one stage should say so). */
        int dlq_lifecycle;
        /* Call decide for every owned aggregate this often (0: never). */
        int tick_ms;
        /* Each instance is a group of its own and so owns every partition
         * (per-node stages: the executor; they filter by node). */
        int own_all;
        /* Non-NULL: the stage runs this loop; the hooks below are unused. */
        const sbx_stage_loop_t *loop;

        void *(*init)(const sbx_config_t *config, sbx_proc_t *proc,
                      char *errstr, size_t errstr_size);
        void (*destroy)(void *self);
        void (*observe)(void *self, const sbx_event_t *ev, sbx_verdict_t v,
                        const sbx_state_t *state);
        void (*decide)(void *self, sbx_proc_t *proc, const sbx_state_t *state,
                       int64_t now_us);
        void (*on_message)(void *self, sbx_proc_t *proc, const char *topic,
                           const void *key, size_t key_size, const void *value,
                           size_t value_size);
        void (*own)(void *self, sbx_proc_t *proc, const sbx_event_t *ev,
                    sbx_verdict_t v);
        /* Called every loop iteration (about every 20 ms when idle). */
        void (*idle)(void *self, sbx_proc_t *proc, int64_t now_us);
        /* Called once when the processor stops, while it can still append
         * and produce (e.g. a node says it is draining). */
        void (*shutdown)(void *self, sbx_proc_t *proc);
} sbx_stage_t;

/** This instance's name in events: "<stage>/<instance>" (borrowed). */
const char *sbx_proc_producer(const sbx_proc_t *p);
/** The shared codec (borrowed). */
const struct sbx_codec_s *sbx_proc_codec(const sbx_proc_t *p);
/** State of aggregate @p id as folded so far, or NULL. */
const sbx_state_t *sbx_proc_state(sbx_proc_t *p, const char *id);
/** Does this instance own the lifecycle partition of aggregate @p id? */
int sbx_proc_owns(sbx_proc_t *p, const char *id);
/** Is an append of this instance to @p id still in flight? */
int sbx_proc_pending(sbx_proc_t *p, const char *id);
/** The instance name (config instance), borrowed. */
const char *sbx_proc_instance(const sbx_proc_t *p);
/** Calls @p cb for every aggregate state held. */
void sbx_proc_foreach_state(sbx_proc_t *p,
                            void (*cb)(const sbx_state_t *s, void *opaque),
                            void *opaque);

/**
 * Appends @p ev (stolen) to sbx.lifecycle.v1 keyed by its aggregate id,
 * with CloudEvents headers and a traceparent, and waits for the ack. The
 * aggregate is then pending (no decide) until an event with that seq is
 * read back. SBX_ERR_KAFKA with errstr if the broker did not take it.
 */
sbx_err_t sbx_proc_append(sbx_proc_t *p, struct sbx_event_s *ev, char *errstr,
                          size_t errstr_size);
/** Produces raw bytes to another topic (e.g. sbx.nodes.v1), waiting. */
sbx_err_t sbx_proc_produce(sbx_proc_t *p, const char *topic, const void *key,
                           size_t key_size, const void *value,
                           size_t value_size, char *errstr,
                           size_t errstr_size);
/** Sends the message to sbx.dlq.v1 with @p reason in its headers. */
void sbx_proc_dlq(sbx_proc_t *p, const char *topic, const void *key,
                  size_t key_size, const void *value, size_t value_size,
                  const char *reason);

/* Counters, for the metrics endpoint and benchmarks. */
typedef struct sbx_proc_stats_s {
        int64_t consumed;   /* lifecycle + extra-topic messages read */
        int64_t appended;   /* events this instance appended */
        int64_t won;        /* of those, accepted by the fold */
        int64_t superseded; /* of those, superseded */
        int64_t dlq;        /* messages sent to the DLQ */
        int64_t lag;        /* lifecycle messages behind the high watermark */
        int64_t decisions;  /* decide calls */
        int owned;          /* lifecycle partitions owned */
        int caught_up;      /* the initial replay is done and the group
                               has assigned this instance its share */
} sbx_proc_stats_t;

#endif
