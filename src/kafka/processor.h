/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The processor runs one stage (src/stages/stage.h) on Kafka. Two
 * consumers: a group consumer that decides which lifecycle partitions this
 * instance owns (their fetching is paused; the group also delivers the
 * stage's extra topics, e.g. sbx.requests.v1, with committed offsets), and
 * a data consumer that reads every lifecycle partition from the beginning
 * and folds it, so each instance holds the state of every aggregate. Once
 * the replay has reached the high watermark seen at start, the stage
 * decides for the aggregates of the partitions it owns.
 */
#ifndef SBX_PROCESSOR_H
#define SBX_PROCESSOR_H

#include <signal.h>

#include "codec/codec.h"
#include "core/config.h"
#include "stages/stage.h"

#define SBX_TOPIC_REQUESTS  "sbx.requests.v1"
#define SBX_TOPIC_LIFECYCLE "sbx.lifecycle.v1"
#define SBX_TOPIC_NODES     "sbx.nodes.v1"
#define SBX_TOPIC_OUTPUT    "sbx.exec-output.v1"
#define SBX_TOPIC_DLQ       "sbx.dlq.v1"

/**
 * A processor for @p stage (borrowed, static). @p codec and @p config are
 * borrowed and must outlive it. Connects and subscribes; NULL with errstr
 * on failure.
 */
sbx_proc_t *sbx_proc_new(const sbx_stage_t *stage, const sbx_config_t *config,
                         const sbx_codec_t *codec, char *errstr,
                         size_t errstr_size);
/** Runs until *stop becomes non-zero; then commits and flushes. */
void sbx_proc_run(sbx_proc_t *p, volatile sig_atomic_t *stop);
/** A snapshot of the counters; safe from any thread. */
void sbx_proc_get_stats(sbx_proc_t *p, sbx_proc_stats_t *ret);
const sbx_stage_t *sbx_proc_stage(const sbx_proc_t *p);
void sbx_proc_destroy(sbx_proc_t *p);

#endif
