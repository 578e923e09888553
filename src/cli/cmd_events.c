/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `sbx events [ID...] [--follow]`: the log as a reader sees it. Each event
 * is folded as every stage folds it, so the verdict printed (accepted or
 * why superseded) is the one the control plane reached. An ID matches the
 * aggregate id or the correlation id, so a claim's id shows its whole
 * chain, including the sandbox it got. sbx_cli_read_log() is the reading
 * and folding that `ls` and `show` share.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "codec/codec.h"
#include "core/aggstore.h"
#include "core/util.h"
#include "kafka/logreader.h"

static volatile sig_atomic_t interrupted;

static void on_int(int sig)
{
        (void)sig;
        interrupted = 1;
}

static int wanted(const sbx_event_t *ev, char **ids, int n)
{
        int i;
        if (!n)
                return 1;
        for (i = 0; i < n; i++)
                if (!strcmp(ev->aggregate_id, ids[i]) ||
                    !strcmp(ev->correlation_id, ids[i]) ||
                    (ev->causation_id && !strcmp(ev->causation_id, ids[i])))
                        return 1;
        return 0;
}

static void print_event(const sbx_event_t *ev, sbx_verdict_t v, int json)
{
        char *payload = json_dumps(ev->payload, JSON_COMPACT | JSON_SORT_KEYS);
        if (json) {
                json_t *j = sbx_event_to_json(ev);
                char *s;
                json_object_set_new(j, "verdict",
                                    json_string(sbx_verdict_name(v)));
                s = json_dumps(j, JSON_COMPACT);
                puts(s);
                free(s);
                json_decref(j);
        } else {
                time_t secs = (time_t)(ev->occurred_at / 1000000);
                struct tm t;
                char tm[32];
                gmtime_r(&secs, &t);
                strftime(tm, sizeof(tm), "%H:%M:%S", &t);
                printf(
                    "%s.%03d %-7s %-24s #%-3lld %-18s %-18s %s  %.*s%s\n", tm,
                    (int)(ev->occurred_at % 1000000 / 1000),
                    sbx_aggregate_name(ev->aggregate), ev->aggregate_id,
                    (long long)ev->seq, sbx_evtype_name(ev->type),
                    v == SBX_FOLD_ACCEPTED ? "accepted" : sbx_verdict_name(v),
                    ev->producer, 160, payload,
                    strlen(payload) > 160 ? "..." : "");
        }
        free(payload);
        fflush(stdout);
}

int sbx_cli_read_log(const sbx_cli_t *cli,
                     int follow,
                     void (*cb)(const sbx_event_t *ev,
                                sbx_verdict_t v,
                                void *opaque),
                     void *opaque,
                     sbx_aggstore_t **ret_store)
{
        sbx_config_t *config  = sbx_cli_config(cli);
        sbx_codec_t *codec    = NULL;
        sbx_logreader_t *r    = NULL;
        sbx_aggstore_t *store = sbx_aggstore_new();
        char err[1024];
        int rc = 1;

        if (!config)
                goto done;
        if (!(codec = sbx_codec_new(err, sizeof(err)))) {
                sbx_cli_fail("codec: %s", err);
                goto done;
        }
        r = sbx_logreader_new(config, codec, 0, err, sizeof(err));
        if (!r) {
                sbx_cli_fail("log: %s", err);
                goto done;
        }
        signal(SIGINT, on_int);
        while (!interrupted) {
                sbx_event_t *ev = sbx_logreader_next(r, 200);
                int32_t part;
                int64_t off;
                sbx_verdict_t v;
                if (!ev) {
                        if (!follow && sbx_logreader_caught_up(r))
                                break;
                        continue;
                }
                sbx_logreader_position(r, &part, &off);
                v = sbx_aggstore_fold(store, ev, part, NULL);
                if (cb)
                        cb(ev, v, opaque);
                sbx_event_destroy(ev);
        }
        rc = 0;
        if (ret_store) {
                *ret_store = store;
                store      = NULL;
        }
done:
        sbx_logreader_destroy(r);
        sbx_aggstore_destroy(store);
        sbx_codec_destroy(codec);
        sbx_config_destroy(config);
        return rc;
}

typedef struct filter_s {
        char **ids;
        int n, json;
} filter_t;

static void print_wanted(const sbx_event_t *ev, sbx_verdict_t v, void *opaque)
{
        filter_t *f = opaque;
        if (wanted(ev, f->ids, f->n))
                print_event(ev, v, f->json);
}

static const char usage[] =
    "usage: sbx events [ID...] [--follow]\n"
    "Prints the log, each event with the verdict of the fold (accepted, or "
    "why\n"
    "it was superseded). An ID matches an aggregate, a correlation or a "
    "causation\n"
    "id, so a claim's id shows its whole chain. --follow (-f) goes on with "
    "what\n"
    "comes until interrupted; --json prints each event as an object.\n";

int sbx_cmd_events(sbx_cli_t *cli, int argc, char **argv)
{
        filter_t f = {argv, argc, cli->json};
        int i;
        if (sbx_cli_help(argc, argv, usage))
                return 0;
        for (i = 0; i < argc; i++)
                if (argv[i][0] == '-')
                        return 1 + sbx_cli_fail(
                                       "events: unknown option %s "
                                       "(see sbx events --help)",
                                       argv[i]);
        return sbx_cli_read_log(cli, cli->follow, print_wanted, &f, NULL);
}
