/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The projector in sbxd: a stage with a loop of its own (it keeps its
 * offsets in PostgreSQL, so the processor's Kafka-committed model does
 * not fit). Its news goes to sbxd's stderr as "sbxd: projector: ...".
 */
#include "projector/projector_stage.h"

#include <stdio.h>

#include "projector/projector.h"

static void log_line(void *opaque, const char *line)
{
        (void)opaque;
        fprintf(stderr, "sbxd: projector: %s\n", line);
}

static void *start(const sbx_config_t *config,
                   const sbx_codec_t *codec,
                   char *errstr,
                   size_t errstr_size)
{
        sbx_projector_opts_t opts = {0};
        opts.log                  = log_line;
        return sbx_projector_new(config, codec, &opts, errstr, errstr_size);
}

static void run(void *self, volatile sig_atomic_t *stop)
{
        sbx_projector_run(self, stop);
}

static int caught_up(void *self)
{
        sbx_projector_stats_t st;
        sbx_projector_get_stats(self, &st);
        return st.caught_up;
}

static void destroy(void *self)
{
        sbx_projector_destroy(self);
}

static const sbx_stage_loop_t loop = {
    .start     = start,
    .run       = run,
    .caught_up = caught_up,
    .destroy   = destroy,
};

const sbx_stage_t sbx_stage_projector = {
    .name = "projector",
    .loop = &loop,
};
