/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A Prometheus text endpoint (GET /metrics) over the processors' counters,
 * served by one thread on 127.0.0.1:PORT (0.0.0.0 with SBX_METRICS_ANY=1).
 */
#ifndef SBX_METRICS_H
#define SBX_METRICS_H

#include "kafka/processor.h"

typedef struct sbx_metrics_s sbx_metrics_t;

/** Starts serving @p procs (borrowed, @p n of them) on @p port. */
sbx_metrics_t *sbx_metrics_start(sbx_proc_t *const *procs, int n, int port,
                                 char *errstr, size_t errstr_size);
void sbx_metrics_stop(sbx_metrics_t *m);
/** The exposition text (caller frees). */
char *sbx_metrics_render(sbx_proc_t *const *procs, int n);

#endif
