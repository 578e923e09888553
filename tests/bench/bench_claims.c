/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Control-plane benchmark: publishes N claims as fast as the producer
 * takes them and follows the log until every claim is bound, then prints
 * the latency distribution from publish to Placed and to ClaimBound (the
 * events' own occurred_at, same host clock), claims/s end to end and
 * accepted events/s per stage. The nodes are whatever executors run; with
 * hollow nodes no container is started, and the output says so.
 * Afterwards every claim is cancelled (not timed), so that no control
 * plane restores it once its node is gone.
 *
 * usage: bench_claims --claims N [--label TEXT] [--json FILE] [--hollow]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib.h"
#include "codec/codec.h"
#include "core/aggstore.h"
#include "core/util.h"
#include "kafka/kclient.h"
#include "kafka/logreader.h"
#include "kafka/processor.h"

typedef struct claim_s {
        char id[64];
        int64_t published, placed, bound;
} claim_t;

static void dist(const char *name,
                 claim_t *c,
                 size_t n,
                 int which,
                 FILE *json,
                 int last)
{
        int64_t *v = sbx_calloc(n, sizeof(*v));
        size_t i, k = 0;
        for (i = 0; i < n; i++) {
                int64_t end = which ? c[i].bound : c[i].placed;
                if (end)
                        v[k++] = end - c[i].published;
        }
        qsort(v, k, sizeof(*v), bl_cmp64);
        if (!json)
                printf("| %-22s | %6zu | %8.1f | %8.1f | %8.1f | %8.1f |\n",
                       name, k, bl_pct(v, k, .5), bl_pct(v, k, .9),
                       bl_pct(v, k, .99), k ? (double)v[k - 1] / 1000.0 : 0);
        if (json)
                fprintf(json,
                        "  \"%s\": {\"count\": %zu, \"p50_ms\": %.2f, "
                        "\"p90_ms\": %.2f, \"p99_ms\": %.2f, \"max_ms\": "
                        "%.2f}%s\n",
                        name, k, bl_pct(v, k, .5), bl_pct(v, k, .9),
                        bl_pct(v, k, .99), k ? (double)v[k - 1] / 1000.0 : 0,
                        last ? "" : ",");
        free(v);
}

/*
 * The claims end with the benchmark: each is cancelled (sbx.Cancel), so
 * that no later control plane restores them when their node is gone.
 * Waits up to 60 s until the log says so; not timed.
 */
static void cancel_all(const claim_t *c,
                       size_t n,
                       sbx_codec_t *codec,
                       sbx_kproducer_t *prod,
                       sbx_logreader_t *log,
                       sbx_aggstore_t *store)
{
        size_t i, left = 0;
        int64_t deadline = sbx_mono_us() + 60 * 1000000LL;
        char err[512];
        for (i = 0; i < n; i++) {
                char uuid[37], rid[64];
                unsigned char *buf = NULL;
                size_t len;
                json_t *req;
                sbx_uuid(uuid);
                sbx_fmt(rid, sizeof(rid), "req-%s", uuid);
                req = json_pack("{s:s, s:s, s:s, s:s, s:I, s:{s:{s:s, s:s}}}",
                                "request_id", rid, "tenant_id", "bench",
                                "session_id", c[i].id, "client", "bench",
                                "occurred_at", (json_int_t)sbx_now_us(),
                                "command", "sbx.Cancel", "claim_id", c[i].id,
                                "reason", "benchmark over");
                if (!sbx_codec_encode(codec, SBX_SCHEMA_REQUEST, req, &buf,
                                      &len, err, sizeof(err)) &&
                    !sbx_kproducer_send(prod, SBX_TOPIC_REQUESTS, c[i].id,
                                        strlen(c[i].id), buf, len))
                        left++;
                else
                        fprintf(stderr, "bench: cancel %s: %s\n", c[i].id, err);
                free(buf);
                json_decref(req);
        }
        sbx_kproducer_flush(prod, 60000, NULL);
        while (left && sbx_mono_us() < deadline) {
                sbx_event_t *ev = sbx_logreader_next(log, 500);
                sbx_aggentry_t *e;
                int32_t part;
                int64_t off;
                if (!ev)
                        continue;
                sbx_logreader_position(log, &part, &off);
                if (sbx_aggstore_fold(store, ev, part, &e) ==
                        SBX_FOLD_ACCEPTED &&
                    ev->type == SBX_EV_CLAIM_CANCELLED &&
                    !strncmp(ev->aggregate_id, "bench-", 6))
                        left--;
                sbx_event_destroy(ev);
        }
        if (left)
                fprintf(stderr, "bench: %zu claim(s) not cancelled yet\n",
                        left);
}

int main(int argc, char **argv)
{
        int n = 1000, i, hollow = 0;
        const char *label = "", *json_path = NULL;
        sbx_config_t *cfg;
        sbx_codec_t *codec;
        sbx_kproducer_t *prod;
        sbx_logreader_t *log;
        sbx_aggstore_t *store = sbx_aggstore_new();
        claim_t *c;
        char err[512];
        int64_t t0, t_pub, t_end = 0, deadline;
        int bound = 0;
        struct {
                char stage[32];
                long events;
        } per[16];
        int nper   = 0;
        FILE *json = NULL;

        for (i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--claims") && i + 1 < argc)
                        n = atoi(argv[++i]);
                else if (!strcmp(argv[i], "--label") && i + 1 < argc)
                        label = argv[++i];
                else if (!strcmp(argv[i], "--json") && i + 1 < argc)
                        json_path = argv[++i];
                else if (!strcmp(argv[i], "--hollow"))
                        hollow = 1;
        }
        if (sbx_config_load(NULL, &cfg, err, sizeof(err)) ||
            !(codec = sbx_codec_new(err, sizeof(err))) ||
            !(prod = sbx_kproducer_new(cfg, err, sizeof(err))) ||
            !(log = sbx_logreader_new(cfg, codec, 1, err, sizeof(err)))) {
                fprintf(stderr, "bench: %s\n", err);
                return 1;
        }
        c = sbx_calloc((size_t)n, sizeof(*c));
        /* The client's start-up is not the control plane's latency: learn
         * the topic's leaders before the clock starts. */
        if (sbx_kproducer_prepare(prod, SBX_TOPIC_REQUESTS, err, sizeof(err))) {
                fprintf(stderr, "bench: %s\n", err);
                return 1;
        }
        t0 = sbx_now_us();
        for (i = 0; i < n; i++) {
                char uuid[37], rid[64];
                unsigned char *buf;
                size_t len;
                json_t *req;
                sbx_uuid(uuid);
                sbx_fmt(c[i].id, sizeof(c[i].id), "bench-%s", uuid);
                sbx_fmt(rid, sizeof(rid), "req-%s", uuid);
                req = json_pack("{s:s, s:s, s:s, s:I, s:{s:{s:s, s:{s:s}}}}",
                                "request_id", rid, "tenant_id", "bench",
                                "session_id", c[i].id, "occurred_at",
                                (json_int_t)sbx_now_us(), "command",
                                "sbx.AcquireSandbox", "claim_id", c[i].id,
                                "task", "text", "print(1+1)");
                sbx_codec_encode(codec, SBX_SCHEMA_REQUEST, req, &buf, &len,
                                 err, sizeof(err));
                c[i].published = sbx_now_us();
                if (sbx_kproducer_send(prod, SBX_TOPIC_REQUESTS, c[i].id,
                                       strlen(c[i].id), buf, len)) {
                        fprintf(stderr, "bench: produce failed\n");
                        return 1;
                }
                free(buf);
                json_decref(req);
        }
        if (sbx_kproducer_flush(prod, 60000, NULL)) {
                fprintf(stderr, "bench: some claims were not published\n");
                return 1;
        }
        t_pub    = sbx_now_us();
        deadline = sbx_mono_us() + 600 * 1000000LL;
        while (bound < n && sbx_mono_us() < deadline) {
                sbx_event_t *ev = sbx_logreader_next(log, 500);
                sbx_aggentry_t *e;
                int32_t part;
                int64_t off;
                sbx_verdict_t v;
                if (!ev)
                        continue;
                sbx_logreader_position(log, &part, &off);
                v = sbx_aggstore_fold(store, ev, part, &e);
                if (v == SBX_FOLD_ACCEPTED && ev->occurred_at >= t0) {
                        const char *slash = strchr(ev->producer, '/');
                        int len = slash ? (int)(slash - ev->producer) : 0, k;
                        for (k = 0; k < nper; k++)
                                if ((int)strlen(per[k].stage) == len &&
                                    !strncmp(per[k].stage, ev->producer,
                                             (size_t)len))
                                        break;
                        if (k == nper && nper < 16) {
                                sbx_fmt(per[k].stage, sizeof(per[k].stage),
                                        "%.*s", len, ev->producer);
                                per[k].events = 0;
                                nper++;
                        }
                        if (k < nper)
                                per[k].events++;
                }
                if (v == SBX_FOLD_ACCEPTED && ev->aggregate == SBX_AGG_CLAIM &&
                    !strncmp(ev->aggregate_id, "bench-", 6)) {
                        for (i = 0; i < n; i++)
                                if (!strcmp(c[i].id, ev->aggregate_id))
                                        break;
                        if (i < n && ev->type == SBX_EV_PLACED)
                                c[i].placed = ev->occurred_at;
                        if (i < n && ev->type == SBX_EV_CLAIM_BOUND) {
                                c[i].bound = ev->occurred_at;
                                bound++;
                                if (ev->occurred_at > t_end)
                                        t_end = ev->occurred_at;
                        }
                }
                sbx_event_destroy(ev);
        }
        printf("\n### claims -> bound %s%s\n\n", label,
               hollow ? " (HOLLOW NODES: placements are bound without "
                        "starting containers)"
                      : "");
        printf(
            "%d claims published in %.0f ms (%.0f/s); %d bound; "
            "end to end %.0f claims/s\n\n",
            n, (double)(t_pub - t0) / 1000.0, n / ((double)(t_pub - t0) / 1e6),
            bound, bound / ((double)(t_end - t0) / 1e6));
        printf(
            "| latency from publish   |  count |  p50 ms  |  p90 ms  |  "
            "p99 ms  |  max ms  |\n|---|---|---|---|---|---|\n");
        if (json_path)
                json = fopen(json_path, "w");
        if (json)
                fprintf(json,
                        "{\n  \"label\": \"%s\",\n  \"hollow\": %s,\n  "
                        "\"claims\": %d,\n  \"bound\": %d,\n  "
                        "\"claims_per_s\": %.1f,\n",
                        label, hollow ? "true" : "false", n, bound,
                        bound / ((double)(t_end - t0) / 1e6));
        dist("to Placed", c, (size_t)n, 0, NULL, 0);
        dist("to ClaimBound", c, (size_t)n, 1, NULL, 0);
        if (json) {
                fprintf(json, "  \"latency\": {\n");
                dist("to Placed", c, (size_t)n, 0, json, 0);
                dist("to ClaimBound", c, (size_t)n, 1, json, 1);
                fprintf(json, "  },\n  \"events_per_s\": {");
        }
        printf("\n| stage | accepted events | events/s |\n|---|---|---|\n");
        for (i = 0; i < nper; i++) {
                double rate = per[i].events / ((double)(t_end - t0) / 1e6);
                printf("| %s | %ld | %.0f |\n", per[i].stage, per[i].events,
                       rate);
                if (json)
                        fprintf(json, "%s\"%s\": %.1f", i ? ", " : "",
                                per[i].stage, rate);
        }
        if (json) {
                fprintf(json, "}\n}\n");
                fclose(json);
        }
        cancel_all(c, (size_t)n, codec, prod, log, store);
        free(c);
        sbx_logreader_destroy(log);
        sbx_aggstore_destroy(store);
        sbx_kproducer_destroy(prod);
        sbx_codec_destroy(codec);
        sbx_config_destroy(cfg);
        return bound == n ? 0 : 1;
}
