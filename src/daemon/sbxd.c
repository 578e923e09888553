/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sbxd, the sbx daemon. At start it converges the broker's topics and the
 * database's migrations to the tree's declarative files, then reports that
 * it is ready and runs until SIGTERM or SIGINT. The stages (intake,
 * planner, guard, scheduler, executor, keeper, projector) run as its
 * threads.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/topicspec.h"
#include "core/util.h"
#include "kafka/topics.h"
#include "pg/migrate.h"

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

static const char usage[] =
    "usage: sbxd [--config FILE] [--exit-when-ready]\n"
    "  Applies topics/ and projections/, then runs the control plane until\n"
    "  SIGTERM/SIGINT. --exit-when-ready stops after the start-up checks.\n";

int main(int argc, char **argv)
{
        const char *config_path = NULL;
        int exit_when_ready = 0, ntopics = 0, nmig = 0, i;
        sbx_config_t *config = NULL;
        sbx_topicspecs_t *specs = NULL;
        struct sigaction sa;
        char errstr[1024];
        int64_t t0 = sbx_mono_us();
        int rc = 1;

        for (i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--config") && i + 1 < argc)
                        config_path = argv[++i];
                else if (!strcmp(argv[i], "--exit-when-ready"))
                        exit_when_ready = 1;
                else if (!strcmp(argv[i], "--help")) {
                        fputs(usage, stdout);
                        return 0;
                } else {
                        fprintf(stderr, "sbxd: unknown argument %s\n%s",
                                argv[i], usage);
                        return 2;
                }
        }

        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_signal;
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);

        if (sbx_config_load(config_path, &config, errstr, sizeof(errstr))) {
                fprintf(stderr, "sbxd: config: %s\n", errstr);
                goto done;
        }
        fprintf(stderr, "sbxd: starting (broker %s, database %s)\n",
                config->brokers, config->pg);
        if (sbx_topicspecs_load_dir(config->topics_dir, &specs, errstr,
                                    sizeof(errstr)) ||
            sbx_topics_apply(config, specs, 0, log_line, "topics", &ntopics,
                             errstr, sizeof(errstr))) {
                fprintf(stderr, "sbxd: topics: %s\n", errstr);
                goto done;
        }
        if (sbx_migrate(config->pg, config->projections_dir, 0, log_line,
                        "db", &nmig, errstr, sizeof(errstr))) {
                fprintf(stderr, "sbxd: db: %s\n", errstr);
                goto done;
        }
        printf("sbxd ready in %.0f ms: %zu topics on %s (%d changed), "
               "database migrated (%d applied)\n",
               (double)(sbx_mono_us() - t0) / 1000.0, specs->n,
               config->brokers, ntopics, nmig);
        fflush(stdout);
        rc = 0;
        while (!exit_when_ready && !stop_requested)
                pause();
        if (stop_requested)
                fprintf(stderr, "sbxd: stopping\n");
done:
        sbx_topicspecs_destroy(specs);
        sbx_config_destroy(config);
        return rc;
}
