/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Projector benchmark. Writes N synthetic, fold-legal lifecycle events
 * (whole claim and sandbox lifecycles: acquire, plan, place, bind, lease,
 * exec, environment update, release, sanitize, destroy; one redelivered
 * event in every twenty lifecycles) and node heartbeats to fresh topics,
 * then, into a fresh PostgreSQL schema:
 *  - projects them (events/s into PostgreSQL, time per batch);
 *  - starts a second projector over the same offsets, which only replays
 *    the log into its fold (the cost of a restart);
 *  - rebuilds them (reset and replay, as `sbx projections rebuild`).
 * The topics and the schema are dropped at the end. With --existing it
 * measures sbx.lifecycle.v1 and sbx.nodes.v1 as they are instead.
 *
 * usage: bench_projector [--events N] [--batch N] [--existing] [--keep]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "codec/codec.h"
#include "core/event.h"
#include "core/topicspec.h"
#include "core/util.h"
#include "kafka/kclient.h"
#include "kafka/processor.h"
#include "kafka/topics.h"
#include "pg/migrate.h"
#include "projector/projector.h"

#define EVENTS_PER_UNIT 17 /* a claim's 6 events and its sandbox's 11 */

typedef struct bench_s {
        sbx_config_t *config;
        sbx_codec_t *codec;
        sbx_kproducer_t *prod;
        char lifecycle[128], nodes[128], schema[64];
        int batch, existing;
        long appended, distinct; /* events written; less redeliveries */
} bench_t;

static void die(const char *what, const char *why)
{
        fprintf(stderr, "bench_projector: %s: %s\n", what, why);
        exit(1);
}

static void send_event(bench_t *b,
                       sbx_event_t *ev,
                       unsigned char **keep,
                       size_t *keep_len)
{
        unsigned char *buf;
        size_t len;
        char err[512];

        sbx_event_set(&ev->producer, "bench/projector");
        sbx_event_set(&ev->tenant_id, "bench");
        sbx_event_set(&ev->correlation_id, ev->aggregate_id);
        if (sbx_event_encode(b->codec, ev, &buf, &len, err, sizeof(err)))
                die(sbx_evtype_name(ev->type), err);
        if (sbx_kproducer_send(b->prod, b->lifecycle, ev->aggregate_id,
                               strlen(ev->aggregate_id), buf, len))
                die("produce", sbx_evtype_name(ev->type));
        if (keep) {
                *keep     = buf;
                *keep_len = len;
        } else
                free(buf);
        sbx_event_destroy(ev);
}

/* Sandbox events are fenced by lease 1 from the exec on. */
static sbx_event_t *fenced(sbx_evtype_t t,
                           const char *id,
                           int64_t seq,
                           json_t *payload)
{
        sbx_event_t *ev   = sbx_event_new(t, id, seq, payload);
        ev->lease_version = 1;
        return ev;
}

/* One claim and its sandbox, from request to termination. */
static void unit(bench_t *b, long u, int redeliver)
{
        char claim[64], sb[64], node[32];
        int64_t now        = sbx_now_us();
        unsigned char *dup = NULL;
        size_t dup_len     = 0;
        int64_t s          = 0;

        snprintf(claim, sizeof(claim), "bench-claim-%ld", u);
        snprintf(sb, sizeof(sb), "bench-sb-%ld", u);
        snprintf(node, sizeof(node), "bench-node-%ld", u % 10);
#define C(t, p) send_event(b, sbx_event_new(t, claim, ++s, p), NULL, NULL)
        C(SBX_EV_CLAIM_REQUESTED,
          json_pack("{s:s, s:s, s:{s:s}}", "request_id", claim, "user_id",
                    "bench-user", "task", "text", "print hello world"));
        C(SBX_EV_PLAN_PROPOSED,
          json_pack("{s:s, s:s, s:s, s:{s:s, s:f, s:I, s:I, s:f, s:s}}",
                    "planner", "rules", "input_hash", "0123abcd", "signature",
                    "python-script", "intent", "workload", "python-script",
                    "cpu", 1.0, "memory_mb", (json_int_t)2048, "disk_gb",
                    (json_int_t)10, "confidence", 0.9, "reason",
                    "signals: python"));
        C(SBX_EV_PLAN_APPROVED,
          json_pack("{s:s, s:f, s:I, s:I, s:s, s:s, s:s, s:I, s:[s]}",
                    "resource_class", "python-small", "cpu", 1.0, "memory_mb",
                    (json_int_t)2048, "disk_gb", (json_int_t)10,
                    "network_profile", "none", "template", "host", "runtime",
                    "runc", "ttl_seconds", (json_int_t)1800, "reasons",
                    "fits python-small"));
        C(SBX_EV_PLACED,
          json_pack("{s:s, s:s}", "node_id", node, "sandbox_id", sb));
        C(SBX_EV_CLAIM_BOUND,
          json_pack("{s:s, s:s, s:I, s:I}", "sandbox_id", sb, "node_id", node,
                    "lease_version", (json_int_t)1, "lease_expires_at",
                    (json_int_t)(now + 300000000)));
        C(SBX_EV_CLAIM_RELEASED, json_pack("{s:s}", "reason", "released"));
#undef C
        s = 0;
#define S(t, p) send_event(b, sbx_event_new(t, sb, ++s, p), NULL, NULL)
#define F(t, p) send_event(b, fenced(t, sb, ++s, p), NULL, NULL)
        S(SBX_EV_SANDBOX_CREATED,
          json_pack("{s:s, s:s, s:s, s:s, s:f, s:I, s:s}", "origin", "claim",
                    "node_id", node, "resource_class", "python-small",
                    "template", "host", "cpu", 1.0, "memory_mb",
                    (json_int_t)2048, "claim_id", claim));
        S(SBX_EV_PROVISIONED, json_pack("{s:s, s:I}", "runtime_instance", sb,
                                        "startup_us", (json_int_t)47000));
        S(SBX_EV_LEASE_GRANTED,
          json_pack("{s:s, s:I, s:I}", "owner", claim, "lease_version",
                    (json_int_t)1, "expires_at",
                    (json_int_t)(now + 300000000)));
        F(SBX_EV_EXEC_REQUESTED, json_pack("{s:s}", "exec_id", "e-1"));
        F(SBX_EV_EXEC_STARTED, json_pack("{s:s}", "exec_id", "e-1"));
        send_event(
            b,
            fenced(SBX_EV_EXEC_FINISHED, sb, ++s,
                   json_pack("{s:s, s:i, s:{s:I, s:I, s:I, s:I}}", "exec_id",
                             "e-1", "exit_code", 0, "usage", "wall_us",
                             (json_int_t)20000, "cpu_user_us",
                             (json_int_t)15000, "cpu_sys_us", (json_int_t)2000,
                             "peak_memory_bytes", (json_int_t)(40 << 20))),
            redeliver ? &dup : NULL, &dup_len);
        S(SBX_EV_ENVIRONMENT_UPDATED,
          json_pack("{s:{s:s, s:s, s:i, s:s}}", "manifest", "template_digest",
                    "sha256:host", "pip_lock_hash", "abc", "dirty_level", 1,
                    "fingerprint", "f-1"));
        F(SBX_EV_LEASE_RELEASED, json_pack("{s:s}", "reason", "released"));
        S(SBX_EV_SANITIZED, json_object());
        S(SBX_EV_RECYCLE_STARTED,
          json_pack("{s:s, s:s}", "level", "destroy", "reason", "done"));
        S(SBX_EV_TERMINATED, json_pack("{s:s}", "reason", "destroyed"));
#undef S
#undef F
        if (dup) { /* the ExecFinished again: the fold says "duplicate" */
                sbx_kproducer_send(b->prod, b->lifecycle, sb, strlen(sb), dup,
                                   dup_len);
                free(dup);
        }
}

static void heartbeat(bench_t *b, long n)
{
        char id[32], err[512];
        unsigned char *buf;
        size_t len;
        json_t *j;

        snprintf(id, sizeof(id), "bench-node-%ld", n % 10);
        j = json_pack(
            "{s:s, s:I, s:b, s:b, s:f, s:I, s:I, s:i, s:f, s:I, "
            "s:i, s:[], s:[s], s:[], s:[s], s:i, s:I}",
            "node_id", id, "at", (json_int_t)sbx_now_us(), "healthy", 1,
            "draining", 0, "cpu_capacity", 64.0, "memory_mb_capacity",
            (json_int_t)262144, "disk_gb_capacity", (json_int_t)1000,
            "max_sandboxes", 500, "cpu_committed", 12.0, "memory_mb_committed",
            (json_int_t)24576, "sandboxes", 12, "pools", "templates",
            "sha256:host", "snapshots", "runtimes", "runc", "recent_ooms", 0,
            "seq", (json_int_t)n);
        if (sbx_codec_encode(b->codec, SBX_SCHEMA_NODE_STATUS, j, &buf, &len,
                             err, sizeof(err)))
                die("NodeStatus", err);
        json_decref(j);
        sbx_kproducer_send(b->prod, b->nodes, id, strlen(id), buf, len);
        free(buf);
}

static void quiet(const char *line, void *opaque)
{
        (void)line;
        (void)opaque;
}

static void make_topics(bench_t *b)
{
        char text[2][256], err[512];
        sbx_topicspec_t *spec[2];
        sbx_topicspecs_t specs = {spec, 2};
        int i;

        snprintf(text[0], sizeof(text[0]),
                 "name = %s\npartitions = 12\nconfig.retention.ms = 86400000\n",
                 b->lifecycle);
        snprintf(text[1], sizeof(text[1]),
                 "name = %s\npartitions = 3\nconfig.cleanup.policy = compact\n",
                 b->nodes);
        for (i = 0; i < 2; i++)
                if (sbx_topicspec_parse("bench", text[i], &spec[i], err,
                                        sizeof(err)))
                        die("topic spec", err);
        if (sbx_topics_apply(b->config, &specs, 0, quiet, NULL, NULL, err,
                             sizeof(err)))
                die("topics", err);
        for (i = 0; i < 2; i++)
                sbx_topicspec_destroy(spec[i]);
}

static void produce(bench_t *b, long events)
{
        long units  = (events + EVENTS_PER_UNIT - 1) / EVENTS_PER_UNIT, u;
        int64_t t0  = sbx_mono_us();
        long failed = 0;
        char err[512];

        if (sbx_kproducer_prepare(b->prod, b->lifecycle, err, sizeof(err)) ||
            sbx_kproducer_prepare(b->prod, b->nodes, err, sizeof(err)))
                die("producer", err);
        for (u = 0; u < units; u++) {
                unit(b, u, u % 20 == 0);
                if (u % 10 == 0)
                        heartbeat(b, u / 10);
        }
        if (sbx_kproducer_flush(b->prod, 120000, &failed))
                die("produce", "not every message was acknowledged");
        b->distinct = units * EVENTS_PER_UNIT;
        b->appended = b->distinct + (units + 19) / 20;
        printf(
            "wrote %ld events (%ld lifecycles, %ld redelivered) and %ld "
            "heartbeats in %.2f s\n",
            units * EVENTS_PER_UNIT + (units + 19) / 20, units,
            (units + 19) / 20, (units + 9) / 10,
            (double)(sbx_mono_us() - t0) / 1e6);
}

static void pg_do(const char *conninfo, const char *sql)
{
        PGconn *pg  = PQconnectdb(conninfo);
        PGresult *r = PQexec(pg, "SET client_min_messages = warning");
        PQclear(r);
        r = PQexec(pg, sql);
        if (PQresultStatus(r) != PGRES_COMMAND_OK)
                die(sql, PQerrorMessage(pg));
        PQclear(r);
        PQfinish(pg);
}

/*
 * Exactly once: sandbox_event holds one row per append of the log (a
 * redelivered event is an append of its own, projections/0002), so its
 * rows must be the appends written, and its event ids the distinct
 * events. Prints the check; -1 if either differs.
 */
static int exactly_once(const bench_t *b, const char *what)
{
        PGconn *pg  = PQconnectdb(b->config->pg);
        PGresult *r = PQexec(
            pg, "SELECT count(*), count(DISTINCT event_id) FROM sandbox_event");
        long long rows = -1, ids = -1;
        int ok;
        if (PQresultStatus(r) == PGRES_TUPLES_OK) {
                rows = atoll(PQgetvalue(r, 0, 0));
                ids  = atoll(PQgetvalue(r, 0, 1));
        }
        PQclear(r);
        PQfinish(pg);
        if (b->existing)
                return 0;
        ok = rows == b->appended && ids == b->distinct;
        printf(
            "%-8s exactly once: %lld rows for %ld appends, %lld event ids "
            "for %ld distinct events%s\n",
            what, rows, b->appended, ids, b->distinct, ok ? "" : ": MISMATCH");
        return ok ? 0 : -1;
}

/* Projects up to the topics' ends now; prints and returns seconds. */
static double project(bench_t *b, const char *what, int reset)
{
        sbx_projector_opts_t o      = {0};
        volatile sig_atomic_t never = 0;
        sbx_projector_stats_t st;
        sbx_projector_t *pj;
        int64_t t0 = sbx_mono_us(), total = 0;
        double secs;
        char err[512];

        o.lifecycle_topic = b->existing ? NULL : b->lifecycle;
        o.nodes_topic     = b->existing ? NULL : b->nodes;
        o.batch_max       = b->batch;
        pj = sbx_projector_new(b->config, b->codec, &o, err, sizeof(err));
        if (!pj || (reset && sbx_projector_reset(pj, err, sizeof(err))) ||
            sbx_projector_stop_at_end(pj, &total, err, sizeof(err)))
                die(what, err);
        sbx_projector_run(pj, &never);
        secs = (double)(sbx_mono_us() - t0) / 1e6;
        sbx_projector_get_stats(pj, &st);
        printf(
            "%-8s %7lld written, %7lld replayed, %5lld node statuses, "
            "%4lld batches (%5.1f ms each) in %6.2f s: ",
            what, (long long)st.written, (long long)st.replayed,
            (long long)st.nodes, (long long)st.batches,
            st.batches ? (double)st.pg_us / 1000.0 / (double)st.batches : 0.0,
            secs);
        if (st.written)
                printf("%.0f events/s into PostgreSQL\n",
                       sbx_projector_rate(&st));
        else
                printf("%.0f events/s folded, nothing to write\n",
                       (double)st.replayed / secs);
        sbx_projector_destroy(pj);
        return secs;
}

static const char usage[] =
    "usage: bench_projector [--events N] [--batch N] [--existing] [--keep]\n"
    "  --events N   lifecycle events to write (default 200000)\n"
    "  --batch N    messages per transaction (default 1000)\n"
    "  --existing   measure sbx.lifecycle.v1 and sbx.nodes.v1 as they are\n"
    "  --keep       keep the topics and the schema\n";

int main(int argc, char **argv)
{
        bench_t b   = {0};
        long events = 200000;
        int keep = 0, i, rc = 0;
        char err[512], conninfo[1024], sql[256];

        for (i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--events") && i + 1 < argc)
                        events = atol(argv[++i]);
                else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
                        b.batch = atoi(argv[++i]);
                else if (!strcmp(argv[i], "--existing"))
                        b.existing = 1;
                else if (!strcmp(argv[i], "--keep"))
                        keep = 1;
                else {
                        fputs(usage, stderr);
                        return 2;
                }
        }
        if (events < 1) {
                fputs(usage, stderr);
                return 2;
        }
        if (sbx_config_load(NULL, &b.config, err, sizeof(err)))
                die("config", err);
        b.codec = sbx_codec_new(err, sizeof(err));
        if (!b.codec)
                die("codec", err);
        snprintf(b.lifecycle, sizeof(b.lifecycle), "sbx.bench.lifecycle.%ld",
                 (long)getpid());
        snprintf(b.nodes, sizeof(b.nodes), "sbx.bench.nodes.%ld",
                 (long)getpid());
        snprintf(b.schema, sizeof(b.schema), "bench_projector_%ld",
                 (long)getpid());
        if (!b.existing) {
                b.prod = sbx_kproducer_new(b.config, err, sizeof(err));
                if (!b.prod)
                        die("producer", err);
                make_topics(&b);
                produce(&b, events);
        }
        snprintf(sql, sizeof(sql), "CREATE SCHEMA %s", b.schema);
        pg_do(b.config->pg, sql);
        snprintf(conninfo, sizeof(conninfo), "%s options='-csearch_path=%s'",
                 b.config->pg, b.schema);
        if (sbx_migrate(conninfo, b.config->projections_dir, 0, quiet, NULL,
                        NULL, err, sizeof(err)))
                die("migrate", err);
        free(b.config->pg);
        b.config->pg = sbx_strdup(conninfo);
        printf("projecting %s into schema %s, batches of %d\n",
               b.existing ? SBX_TOPIC_LIFECYCLE : b.lifecycle, b.schema,
               b.batch ? b.batch : 1000);
        project(&b, "project", 0);
        rc |= exactly_once(&b, "project");
        project(&b, "restart", 0);
        printf("rebuild took %.2f s\n", project(&b, "rebuild", 1));
        rc |= exactly_once(&b, "rebuild");
        if (!keep) {
                const char *topics[] = {b.lifecycle, b.nodes};
                char *admin          = strstr(conninfo, " options=");
                *admin               = '\0';
                snprintf(sql, sizeof(sql), "DROP SCHEMA %s CASCADE", b.schema);
                pg_do(conninfo, sql);
                if (!b.existing &&
                    sbx_topics_delete(b.config, topics, 2, err, sizeof(err)))
                        fprintf(stderr, "bench_projector: %s\n", err);
        }
        sbx_kproducer_destroy(b.prod);
        sbx_codec_destroy(b.codec);
        sbx_config_destroy(b.config);
        return rc ? 1 : 0;
}
