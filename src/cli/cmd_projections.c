/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `sbx projections rebuild`: empties the projections and the projector's
 * stored offsets, then replays the log into them up to its end as it is
 * when the command starts, saying how far it got and how fast.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "core/util.h"
#include "projector/projector.h"

static const char usage[] =
    "usage: sbx projections rebuild [--batch N]\n"
    "Empties the projections (claim, sandbox_instance, sandbox_lease,\n"
    "sandbox_environment, sandbox_allocation, node), sandbox_event and the\n"
    "projector's offsets in the database of SBX_PG, then replays\n"
    "sbx.lifecycle.v1 and sbx.nodes.v1 into them up to where they end now.\n"
    "A running projector (sbxd) notices and starts over from the new\n"
    "offsets: no event is lost or written twice.\n"
    "\n"
    "  --batch N            messages per transaction (default 5000)\n";

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
        (void)sig;
        interrupted = 1;
}

typedef struct progress_s {
        int64_t total, t0, last;
        int quiet;
} progress_t;

static void on_progress(void *opaque, const sbx_projector_stats_t *st)
{
        progress_t *p = opaque;
        int64_t now   = sbx_mono_us();
        int64_t done  = st->written + st->nodes + st->undecodable;
        if (p->quiet || now - p->last < 1000000)
                return;
        p->last = now;
        printf(
            "rebuild: %lld messages, %.0f%% of the %lld offsets to read, "
            "%.0f messages/s\n",
            (long long)done,
            p->total ? 100.0 * (double)done / (double)p->total : 100.0,
            (long long)p->total, (double)done * 1e6 / (double)(now - p->t0));
        fflush(stdout);
}

static void on_log(void *opaque, const char *line)
{
        progress_t *p = opaque;
        if (!p->quiet)
                printf("rebuild: %s\n", line);
}

int sbx_cmd_projections(sbx_cli_t *cli, int argc, char **argv)
{
        long long batch            = 0;
        const char *what           = NULL;
        const sbx_opt_t opts[]     = {{"--batch", SBX_OPT_INT, &batch, NULL},
                                      {NULL, SBX_OPT_FLAG, NULL, NULL}};
        sbx_projector_opts_t popts = {0};
        progress_t p               = {0};
        sbx_projector_stats_t st;
        sbx_config_t *config = NULL;
        sbx_codec_t *codec   = NULL;
        sbx_projector_t *pj  = NULL;
        char errstr[1024];
        int rc;

        if ((rc = sbx_cli_parse("projections", usage, opts, argc, argv, &what,
                                1, 1, NULL, NULL)) >= 0)
                return rc;
        if (strcmp(what, "rebuild"))
                return 1 + sbx_cli_fail(
                               "projections: unknown action '%s' "
                               "(see sbx projections --help)",
                               what);
        if (batch < 0 || batch > 1000000)
                return 1 + sbx_cli_fail(
                               "projections: --batch must be "
                               "1..1000000");
        config = sbx_cli_config(cli);
        if (!config)
                return 1;
        rc              = 1;
        p.quiet         = cli->json;
        popts.batch_max = batch ? (int)batch : 5000;
        popts.batch_ms  = 1000; /* a bulk load: fewer, larger commits */
        popts.log       = on_log;
        popts.progress  = on_progress;
        popts.opaque    = &p;
        codec           = sbx_codec_new(errstr, sizeof(errstr));
        if (codec)
                pj = sbx_projector_new(config, codec, &popts, errstr,
                                       sizeof(errstr));
        if (!pj || sbx_projector_reset(pj, errstr, sizeof(errstr)) ||
            sbx_projector_stop_at_end(pj, &p.total, errstr, sizeof(errstr))) {
                sbx_cli_fail("projections rebuild: %s", errstr);
                goto done;
        }
        signal(SIGINT, on_sigint);
        p.t0 = sbx_mono_us();
        if (!sbx_projector_run(pj, &interrupted)) {
                sbx_cli_fail(
                    "projections rebuild: interrupted; the "
                    "projections are partial until a rebuild "
                    "finishes");
                goto done;
        }
        sbx_projector_get_stats(pj, &st);
        if (cli->json)
                sbx_cli_print_json(json_pack(
                    "{s:s, s:I, s:I, s:I, s:I, s:f, s:f}", "action",
                    "projections rebuild", "events", (json_int_t)st.written,
                    "node_statuses", (json_int_t)st.nodes, "undecodable",
                    (json_int_t)st.undecodable, "batches",
                    (json_int_t)st.batches, "seconds",
                    (double)(sbx_mono_us() - p.t0) / 1e6, "events_per_s",
                    sbx_projector_rate(&st)));
        else
                printf(
                    "rebuild: done: %lld events, %lld node statuses, %lld "
                    "undecodable in %.2f s (%lld batches): %.0f events/s\n",
                    (long long)st.written, (long long)st.nodes,
                    (long long)st.undecodable,
                    (double)(sbx_mono_us() - p.t0) / 1e6, (long long)st.batches,
                    sbx_projector_rate(&st));
        rc = 0;
done:
        sbx_projector_destroy(pj);
        sbx_codec_destroy(codec);
        sbx_config_destroy(config);
        return rc;
}
