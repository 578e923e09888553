/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sbxd, the sbx daemon. It converges the broker's topics and the
 * database's migrations to the tree's files, then runs stages as threads
 * (all of the control plane by default, or those named by --stage, one
 * processor each, or the stage's own loop for the projector), serves
 * their counters on the metrics endpoint, reports ready once every stage
 * has replayed the log, and stops cleanly on SIGTERM or SIGINT.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/codec.h"
#include "core/config.h"
#include "core/topicspec.h"
#include "core/util.h"
#include "daemon/metrics.h"
#include "kafka/processor.h"
#include "kafka/topics.h"
#include "pg/migrate.h"
#include "stages/registry.h"

#define MAX_STAGES 16

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
        (void)sig;
        stop_requested = 1;
}

static void log_line(const char *line, void *opaque)
{
        fprintf(stderr, "sbxd: %s: %s\n", (const char *)opaque, line);
}

/* One stage's thread: a processor, or a stage's own loop. */
typedef struct worker_s {
        const sbx_stage_t *stage;
        sbx_proc_t *proc;
        void *loop; /* stage->loop's object */
        pthread_t thread;
} worker_t;

static void *run_stage(void *arg)
{
        worker_t *w = arg;
        if (w->loop)
                w->stage->loop->run(w->loop, &stop_requested);
        else
                sbx_proc_run(w->proc, &stop_requested);
        return NULL;
}

static int worker_caught_up(worker_t *w)
{
        sbx_proc_stats_t st;
        if (w->loop)
                return w->stage->loop->caught_up(w->loop);
        sbx_proc_get_stats(w->proc, &st);
        return st.caught_up;
}

static const char usage[] =
    "usage: sbxd [--config FILE] [--stage NAME[,NAME...]] [--node-id ID]\n"
    "            [--exit-when-ready] [--no-setup]\n"
    "  Applies topics/ and projections/ (unless --no-setup), then runs the\n"
    "  stages (default: intake, planner, guard, scheduler, keeper,\n"
    "  projector) until SIGTERM/SIGINT. Stages: %s.\n";

static int add_stages(const char *list, const sbx_stage_t **out, int *n)
{
        char *copy = sbx_strdup(list), *tok, *save = NULL;
        int rc = 0;
        for (tok = strtok_r(copy, ",", &save); tok;
             tok = strtok_r(NULL, ",", &save)) {
                const sbx_stage_t *s = sbx_stage_by_name(tok);
                if (!s || *n == MAX_STAGES) {
                        fprintf(stderr, "sbxd: unknown stage '%s' (stages: %s)\n",
                                tok, sbx_stage_names);
                        rc = -1;
                        break;
                }
                out[(*n)++] = s;
        }
        free(copy);
        return rc;
}

static int setup(sbx_config_t *config)
{
        sbx_topicspecs_t *specs = NULL;
        char errstr[1024];
        int nt = 0, nm = 0, rc = -1;

        if (sbx_topicspecs_load_dir(config->topics_dir, &specs, errstr,
                                    sizeof(errstr)) ||
            sbx_topics_apply(config, specs, 0, log_line, "topics", &nt, errstr,
                             sizeof(errstr))) {
                fprintf(stderr, "sbxd: topics: %s\n", errstr);
                goto done;
        }
        if (sbx_migrate(config->pg, config->projections_dir, 0, log_line, "db",
                        &nm, errstr, sizeof(errstr))) {
                fprintf(stderr, "sbxd: db: %s\n", errstr);
                goto done;
        }
        fprintf(stderr,
                "sbxd: %zu topics on %s (%d changed), database migrated "
                "(%d applied)\n",
                specs->n, config->brokers, nt, nm);
        rc = 0;
done:
        sbx_topicspecs_destroy(specs);
        return rc;
}

int main(int argc, char **argv)
{
        const char *config_path = NULL, *node_id = NULL;
        const sbx_stage_t *stages[MAX_STAGES];
        sbx_proc_t *procs[MAX_STAGES] = {0}; /* the processors, for metrics */
        worker_t workers[MAX_STAGES];
        int nstages = 0, nprocs = 0, i, exit_when_ready = 0, no_setup = 0,
            rc = 1, started = 0;
        sbx_config_t *config = NULL;
        sbx_codec_t *codec = NULL;
        sbx_metrics_t *metrics = NULL;
        struct sigaction sa;
        char errstr[1024];
        int64_t t0 = sbx_mono_us();

        memset(workers, 0, sizeof(workers));
        for (i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--config") && i + 1 < argc)
                        config_path = argv[++i];
                else if (!strcmp(argv[i], "--stage") && i + 1 < argc) {
                        if (add_stages(argv[++i], stages, &nstages))
                                return 2;
                } else if (!strcmp(argv[i], "--node-id") && i + 1 < argc)
                        node_id = argv[++i];
                else if (!strcmp(argv[i], "--exit-when-ready"))
                        exit_when_ready = 1;
                else if (!strcmp(argv[i], "--no-setup"))
                        no_setup = 1;
                else if (!strcmp(argv[i], "--help")) {
                        printf(usage, sbx_stage_names);
                        return 0;
                } else {
                        fprintf(stderr, "sbxd: unknown argument %s\n", argv[i]);
                        fprintf(stderr, usage, sbx_stage_names);
                        return 2;
                }
        }
        if (!nstages)
                for (i = 0; sbx_default_stages[i]; i++)
                        stages[nstages++] = sbx_default_stages[i];

        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_signal;
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);

        if (sbx_config_load(config_path, &config, errstr, sizeof(errstr))) {
                fprintf(stderr, "sbxd: config: %s\n", errstr);
                goto done;
        }
        if (node_id) {
                free(config->node_id);
                config->node_id = sbx_strdup(node_id);
        }
        fprintf(stderr, "sbxd: starting (broker %s, database %s)\n",
                config->brokers, config->pg);
        if (!no_setup && setup(config))
                goto done;
        codec = sbx_codec_new(errstr, sizeof(errstr));
        if (!codec) {
                fprintf(stderr, "sbxd: codec: %s\n", errstr);
                goto done;
        }
        for (i = 0; i < nstages; i++) {
                worker_t *w = &workers[i];
                w->stage    = stages[i];
                if (w->stage->loop)
                        w->loop = w->stage->loop->start(config, codec, errstr,
                                                        sizeof(errstr));
                else
                        w->proc = procs[nprocs++] = sbx_proc_new(
                            stages[i], config, codec, errstr, sizeof(errstr));
                if (!w->loop && !w->proc) {
                        fprintf(stderr, "sbxd: stage %s: %s\n",
                                stages[i]->name, errstr);
                        goto done;
                }
        }
        if (config->metrics_port) {
                metrics = sbx_metrics_start(procs, nprocs, config->metrics_port,
                                            errstr, sizeof(errstr));
                if (!metrics) {
                        fprintf(stderr, "sbxd: %s\n", errstr);
                        goto done;
                }
        }
        for (i = 0; i < nstages; i++)
                pthread_create(&workers[i].thread, NULL, run_stage,
                               &workers[i]);
        started = 1;
        /* Ready once every stage has replayed the log (the projector: and
         * written it). */
        for (;;) {
                int ready = 1;
                for (i = 0; i < nstages; i++)
                        ready &= worker_caught_up(&workers[i]);
                if (ready || stop_requested)
                        break;
                usleep(20000);
        }
        if (!stop_requested) {
                printf("sbxd ready in %.0f ms: stages", 
                       (double)(sbx_mono_us() - t0) / 1000.0);
                for (i = 0; i < nstages; i++)
                        printf(" %s", stages[i]->name);
                printf("; metrics on :%d\n", config->metrics_port);
                fflush(stdout);
        }
        rc = 0;
        while (!exit_when_ready && !stop_requested)
                usleep(100000);
        stop_requested = 1;
done:
        if (started)
                for (i = 0; i < nstages; i++)
                        pthread_join(workers[i].thread, NULL);
        sbx_metrics_stop(metrics);
        for (i = 0; i < nprocs; i++)
                sbx_proc_destroy(procs[i]);
        for (i = 0; i < nstages; i++)
                if (workers[i].loop)
                        workers[i].stage->loop->destroy(workers[i].loop);
        if (started)
                fprintf(stderr, "sbxd: stopped\n");
        sbx_codec_destroy(codec);
        sbx_config_destroy(config);
        return rc;
}
