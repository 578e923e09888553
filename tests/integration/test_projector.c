/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The projector on the real local stack. A hollow control plane (intake,
 * planner, guard, scheduler, keeper and a hollow node in one sbxd) serves
 * a few dozen claims: acquire, exec, release, destroy, a stale exec that
 * intake rejects, and appends the fold supersedes (a duplicate, a stale
 * seq, a seq gap, an illegal transition, a stale lease) plus bytes that
 * are not an event. The projector runs in an sbxd of its own, into a
 * PostgreSQL schema of its own; it is killed with SIGKILL while events
 * flow and started again, and later its database session is cut. Then:
 *  - every message of sbx.lifecycle.v1 below the stored offsets has
 *    exactly one row (sandbox_event or projector_undecodable);
 *  - every event of this test's claims and sandboxes has its row, with
 *    the verdict the test's own fold gave it, and the projections say
 *    what happened to them;
 *  - a rebuild into a second schema, up to the same offsets, equals the
 *    live projection row for row in every table;
 *  - `sbx projections rebuild` into a third schema accounts for every
 *    message too.
 * Other programs may append to the log meanwhile: every check is bounded
 * by stored offsets, never by "the end of the topic".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "itest_stack.h"
#include "kafka/preader.h"
#include "pg/migrate.h"
#include "projector/projector.h"

#define NCLAIMS 22
#define STALE_AT                                                               \
        8 /* this claim's sandbox gets a renewal under a stale lease           \
           */

static char node[96], sbx_cli_path[1024];
static char ci_live[1024], ci_rebuilt[1024], ci_cli[1024];
static char schema_live[64], schema_rebuilt[64], schema_cli[64];

static const char *const tables[] = {
    "sandbox_event",
    "projector_undecodable",
    "claim",
    "sandbox_instance",
    "sandbox_lease",
    "sandbox_environment",
    "sandbox_allocation",
    "node",
};

/* ---- PostgreSQL --------------------------------------------------------- */

static PGresult *pg_query(const char *ci, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Runs one formatted statement on a fresh connection; fails the test on
 * error. The caller clears the result. */
static PGresult *pg_query(const char *ci, const char *fmt, ...)
{
        char sql[2048];
        PGconn *pg = PQconnectdb(ci);
        PGresult *r;
        va_list ap;

        if (PQstatus(pg) != CONNECTION_OK)
                fail_msg("PostgreSQL unreachable (%s): %s", ci,
                         PQerrorMessage(pg));
        va_start(ap, fmt);
        vsnprintf(sql, sizeof(sql), fmt, ap);
        va_end(ap);
        PQclear(PQexec(pg, "SET client_min_messages = warning"));
        r = PQexec(pg, sql);
        if (PQresultStatus(r) != PGRES_COMMAND_OK &&
            PQresultStatus(r) != PGRES_TUPLES_OK)
                fail_msg("%s: %s", sql, PQresultErrorMessage(r));
        PQfinish(pg);
        return r;
}

/* The first column of the first row as a number (NULL: 0). */
static long long pg_num(const char *ci, const char *sql)
{
        PGresult *r = pg_query(ci, "%s", sql);
        long long v = PQntuples(r) && !PQgetisnull(r, 0, 0)
                          ? atoll(PQgetvalue(r, 0, 0))
                          : 0;
        PQclear(r);
        return v;
}

static void quiet(const char *line, void *opaque)
{
        (void)line;
        (void)opaque;
}

/* A fresh, migrated schema @p name; its conninfo goes to @p ci. */
static void make_schema(const char *name, char *ci, size_t cisz)
{
        char err[512];
        PQclear(pg_query(cfg->pg,
                         "DROP SCHEMA IF EXISTS %s CASCADE; "
                         "CREATE SCHEMA %s",
                         name, name));
        snprintf(ci, cisz, "%s options='-csearch_path=%s'", cfg->pg, name);
        if (sbx_migrate(ci, cfg->projections_dir, 0, quiet, NULL, NULL, err,
                        sizeof(err)))
                fail_msg("migrating schema %s: %s", name, err);
}

static void drop_schemas(void)
{
        const char *s[] = {schema_live, schema_rebuilt, schema_cli};
        size_t i;
        for (i = 0; i < SBX_ARRAY_SIZE(s); i++)
                if (*s[i])
                        PQclear(pg_query(
                            cfg->pg, "DROP SCHEMA IF EXISTS %s CASCADE", s[i]));
}

/* ---- the log ------------------------------------------------------------ */

/* The lifecycle's low watermarks, by partition (caller frees). */
static int64_t *lifecycle_lows(int *ret_n)
{
        const char *topics[] = {SBX_TOPIC_LIFECYCLE};
        char err[512];
        sbx_preader_t *r = sbx_preader_new(cfg, topics, 1, err, sizeof(err));
        int64_t *lo, hi;
        int p, n;

        if (!r)
                fail_msg("reader: %s", err);
        n  = sbx_preader_partitions(r, 0);
        lo = sbx_calloc((size_t)n, sizeof(*lo));
        for (p = 0; p < n; p++)
                if (sbx_preader_watermarks(r, 0, p, &lo[p], &hi, err,
                                           sizeof(err)))
                        fail_msg("%s", err);
        sbx_preader_destroy(r);
        *ret_n = n;
        return lo;
}

/* Appends @p ev (stolen) to the lifecycle as a stage would, bypassing
 * every stage; returns its offset and partition. */
static void append(sbx_event_t *ev, int32_t *ret_part, int64_t *ret_off)
{
        unsigned char *buf;
        size_t len;
        char err[512];
        sbx_event_set(&ev->producer, "itest/projector");
        if (sbx_event_encode(codec, ev, &buf, &len, err, sizeof(err)))
                fail_msg("encode: %s", err);
        if (sbx_kproducer_send_sync(prod, SBX_TOPIC_LIFECYCLE, ev->aggregate_id,
                                    strlen(ev->aggregate_id), buf, len, NULL, 0,
                                    30000, ret_part, ret_off, err, sizeof(err)))
                fail_msg("append: %s", err);
        free(buf);
        sbx_event_destroy(ev);
}

/* ---- client requests ---------------------------------------------------- */

static void request(const char *key,
                    const char *tenant,
                    const char *cmd,
                    json_t *body)
{
        char rid[64], uuid[37];
        json_t *req;
        sbx_uuid(uuid);
        snprintf(rid, sizeof(rid), "req-%s", uuid);
        req = json_pack("{s:s, s:s, s:s, s:I, s:{s:o}}", "request_id", rid,
                        "tenant_id", tenant, "session_id", "s-proj",
                        "occurred_at", (json_int_t)sbx_now_us(), "command", cmd,
                        body);
        itest_request(prod, codec, req, key);
        json_decref(req);
}

static void acquire(char *claim,
                    size_t n,
                    const char *user,
                    const char *session,
                    const char *text)
{
        char uuid[37];
        json_t *req;
        sbx_uuid(uuid);
        snprintf(claim, n, "claim-%s", uuid);
        req = itest_acquire(claim, "bench", session, text);
        json_object_set_new(req, "user_id", json_string(user));
        itest_request(prod, codec, req, claim);
        json_decref(req);
}

typedef struct claim_s {
        char id[64], sandbox[128];
        int64_t lease;
        int destroy; /* 1: after release, 2: while leased */
} claim_t;

static claim_t claims[NCLAIMS];

static void publish_claims(int from, int n, const char *user)
{
        static const char *const tasks[] = {
            "read the Excel file and total the sales",
            "run the unit tests of the repository with pytest",
            "take a screenshot of the page with playwright",
            "print hello world"};
        int i;
        for (i = from; i < from + n; i++) {
                char session[32];
                snprintf(session, sizeof(session), "s-%s-%d", user, i % 3);
                acquire(claims[i].id, sizeof(claims[i].id), user, session,
                        tasks[i % 4]);
                claims[i].destroy = i % 4 == 1 ? 1 : i % 4 == 2 ? 2 : 0;
        }
}

/* ---- superseded appends ------------------------------------------------- */

typedef struct odd_s {
        const char *want; /* the verdict the projector must record */
        int32_t part;
        int64_t off;
} odd_t;

static odd_t odd[6];

/* A renewal under a lease that is not the current one, for a sandbox
 * that is leased and quiet (its exec finished, not yet released). */
static void append_stale_lease(itest_log_t *l, const claim_t *c)
{
        const sbx_state_t *s = itest_state(l, c->sandbox);
        sbx_event_t *ev      = sbx_event_new(
                 SBX_EV_LEASE_RENEWED, c->sandbox, s->seq + 1,
                 json_pack("{s:I}", "expires_at", (json_int_t)sbx_now_us()));
        ev->lease_version = c->lease + 7;
        odd[4].want       = "stale_lease";
        append(ev, &odd[4].part, &odd[4].off);
}

/* Appends the fold's other losers for a released claim (a redelivery, a
 * stale seq, a seq gap, an illegal transition), and bytes that are not
 * an event; each is recorded with where it landed. */
static void append_superseded(itest_log_t *l)
{
        const claim_t *rel         = &claims[0];
        const sbx_event_t *last    = NULL;
        const sbx_state_t *s       = itest_state(l, rel->id);
        const unsigned char junk[] = {0xc3, 0x01, 0xde, 0xad, 0xbe, 0xef};
        sbx_event_t *ev;
        json_t *j;
        char err[256];
        size_t i;

        for (i = 0; i < l->n; i++)
                if (!strcmp(l->ev[i]->aggregate_id, rel->id) &&
                    l->verdict[i] == SBX_FOLD_ACCEPTED)
                        last = l->ev[i];
        assert_non_null(last);
        j = sbx_event_to_json(last);
        assert_int_equal(sbx_event_from_json(j, &ev, err, sizeof(err)), SBX_OK);
        json_decref(j);
        odd[0].want = "duplicate";
        append(ev, &odd[0].part, &odd[0].off);

        ev          = sbx_event_new(SBX_EV_CLAIM_CANCELLED, rel->id, 1,
                                    json_pack("{s:s}", "reason", "late writer"));
        odd[1].want = "stale_seq";
        append(ev, &odd[1].part, &odd[1].off);

        ev          = sbx_event_new(SBX_EV_CLAIM_CANCELLED, rel->id, s->seq + 5,
                                    json_pack("{s:s}", "reason", "from the future"));
        odd[2].want = "seq_gap";
        append(ev, &odd[2].part, &odd[2].off);

        ev          = sbx_event_new(SBX_EV_CLAIM_CANCELLED, rel->id, s->seq + 1,
                                    json_pack("{s:s}", "reason", "after the end"));
        odd[3].want = "illegal_transition";
        append(ev, &odd[3].part, &odd[3].off);

        if (sbx_kproducer_send_sync(prod, SBX_TOPIC_LIFECYCLE, "junk", 4, junk,
                                    sizeof(junk), NULL, 0, 30000, &odd[5].part,
                                    &odd[5].off, err, sizeof(err)))
                fail_msg("append junk: %s", err);
        odd[5].want = NULL; /* undecodable */
}

/* Each claim bound, an exec run under its lease, then released and/or
 * destroyed, until the log says it is all done. */
static void serve_claims(itest_log_t *l, int from, int n)
{
        int i;
        for (i = from; i < from + n; i++) {
                const sbx_state_t *c =
                    itest_wait_phase(l, claims[i].id, SBX_CLAIM_BOUND, 90);
                snprintf(claims[i].sandbox, sizeof(claims[i].sandbox), "%s",
                         c->sandbox_id);
                claims[i].lease = c->lease_version;
                request(claims[i].sandbox, "bench", "sbx.Exec",
                        json_pack("{s:s, s:I, s:s, s:[s,s]}", "sandbox_id",
                                  claims[i].sandbox, "lease_version",
                                  (json_int_t)claims[i].lease, "exec_id", "e-1",
                                  "argv", "echo", "hi"));
        }
        for (i = from; i < from + n; i++) {
                const char *sb = claims[i].sandbox;
                while (!itest_find(l, sb, SBX_EV_EXEC_FINISHED))
                        itest_log_pump(l, 100);
                itest_wait_phase(l, sb, SBX_SB_LEASED, 30);
                if (i == STALE_AT)
                        append_stale_lease(l, &claims[i]);
                if (claims[i].destroy != 2) {
                        request(sb, "bench", "sbx.Release",
                                json_pack("{s:s, s:I, s:s}", "sandbox_id", sb,
                                          "lease_version",
                                          (json_int_t)claims[i].lease,
                                          "claim_id", claims[i].id));
                        itest_wait_phase(l, sb, SBX_SB_IDLE, 30);
                }
                if (claims[i].destroy) {
                        request(sb, "bench", "sbx.Destroy",
                                json_pack("{s:s, s:s}", "sandbox_id", sb,
                                          "reason", "itest"));
                        itest_wait_phase(l, sb, SBX_SB_TERMINATED, 30);
                }
        }
}

/* ---- checks ------------------------------------------------------------- */

/* Waits until the projector of @p ci has stored offsets at or past the
 * lifecycle's high watermarks as they are now. */
static void wait_projected(const char *ci)
{
        const char *topics[] = {SBX_TOPIC_LIFECYCLE};
        char err[512], sql[512];
        sbx_preader_t *r = sbx_preader_new(cfg, topics, 1, err, sizeof(err));
        int64_t deadline = sbx_mono_us() + 60 * 1000000LL, lo, hi;
        int p;

        assert_non_null(r);
        for (p = 0; p < sbx_preader_partitions(r, 0); p++) {
                assert_int_equal(
                    sbx_preader_watermarks(r, 0, p, &lo, &hi, err, sizeof(err)),
                    SBX_OK);
                snprintf(
                    sql, sizeof(sql),
                    "SELECT (next_offset >= %lld)::int FROM projector_offsets "
                    "WHERE topic = '%s' AND partition = %d",
                    (long long)hi, SBX_TOPIC_LIFECYCLE, p);
                while (!pg_num(ci, sql)) {
                        if (sbx_mono_us() > deadline)
                                fail_msg(
                                    "partition %d not projected up to "
                                    "%lld within 60 s",
                                    p, (long long)hi);
                        usleep(100000);
                }
        }
        sbx_preader_destroy(r);
}

/* Every lifecycle offset from the low watermark to the stored offset has
 * exactly one row. Returns the number of messages. */
static long long expect_every_offset_once(const char *ci)
{
        int n, p;
        int64_t *lo     = lifecycle_lows(&n);
        long long total = 0;
        char sql[512];

        for (p = 0; p < n; p++) {
                long long next, rows;
                snprintf(sql, sizeof(sql),
                         "SELECT next_offset FROM projector_offsets WHERE "
                         "topic = '%s' AND partition = %d",
                         SBX_TOPIC_LIFECYCLE, p);
                next = pg_num(ci, sql);
                snprintf(sql, sizeof(sql),
                         "SELECT (SELECT count(*) FROM sandbox_event WHERE "
                         "topic_partition = %d) + (SELECT count(*) FROM "
                         "projector_undecodable WHERE topic = '%s' AND "
                         "topic_partition = %d)",
                         p, SBX_TOPIC_LIFECYCLE, p);
                rows = pg_num(ci, sql);
                if (rows != next - lo[p])
                        fail_msg(
                            "partition %d: %lld rows for offsets %lld.."
                            "%lld (%lld messages)",
                            p, rows, (long long)lo[p], next - 1, next - lo[p]);
                total += rows;
        }
        free(lo);
        return total;
}

static int by_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The rows of aggregate @p id in sandbox_event are exactly its events in
 * the test's log, each with the test's verdict. */
static void expect_events_of(itest_log_t *l, const char *id)
{
        char **want = NULL, line[512];
        size_t n    = 0, i;
        PGresult *r;

        for (i = 0; i < l->n; i++)
                if (!strcmp(l->ev[i]->aggregate_id, id)) {
                        snprintf(line, sizeof(line), "%s|%lld|%s",
                                 l->ev[i]->event_id, (long long)l->ev[i]->seq,
                                 sbx_verdict_name(l->verdict[i]));
                        want      = sbx_realloc(want, (n + 1) * sizeof(*want));
                        want[n++] = sbx_strdup(line);
                }
        qsort(want, n, sizeof(*want), by_str);
        r = pg_query(ci_live,
                     "SELECT r FROM (SELECT event_id || '|' || seq || '|' || "
                     "reason AS r FROM sandbox_event WHERE aggregate_id = "
                     "'%s') x ORDER BY r COLLATE \"C\"",
                     id);
        if ((size_t)PQntuples(r) != n)
                fail_msg("%s: %d rows in sandbox_event, %zu events in the log",
                         id, PQntuples(r), n);
        for (i = 0; i < n; i++) {
                if (strcmp(PQgetvalue(r, (int)i, 0), want[i]))
                        fail_msg("%s: row %s, event %s", id,
                                 PQgetvalue(r, (int)i, 0), want[i]);
                free(want[i]);
        }
        free(want);
        PQclear(r);
}

static void expect_sql(const char *sql, const char *want)
{
        PGresult *r     = pg_query(ci_live, "%s", sql);
        const char *got = PQntuples(r) && !PQgetisnull(r, 0, 0)
                              ? PQgetvalue(r, 0, 0)
                              : "(none)";
        if (strcmp(got, want))
                fail_msg("%s: got %s, expected %s", sql, got, want);
        PQclear(r);
}

/* What happened to the test's claims, as the projections tell it. */
static void expect_projections(void)
{
        const claim_t *c = &claims[0], *d = NULL, *k = NULL;
        char sql[1024];
        int i;

        for (i = 0; i < NCLAIMS; i++) {
                if (claims[i].destroy == 1 && !d)
                        d = &claims[i];
                if (claims[i].destroy == 2 && !k)
                        k = &claims[i];
        }
#define EXPECT(want, ...)                                                      \
        do {                                                                   \
                snprintf(sql, sizeof(sql), __VA_ARGS__);                       \
                expect_sql(sql, want);                                         \
        } while (0)
        EXPECT("RELEASED", "SELECT phase FROM claim WHERE claim_id = '%s'",
               c->id);
        EXPECT("alice|bench",
               "SELECT user_id || '|' || tenant_id FROM sandbox_instance "
               "WHERE sandbox_id = '%s' AND execs >= 1",
               c->sandbox);
        EXPECT("LeaseReleased|released by client|true",
               "SELECT ended_by || '|' || end_reason || '|' || (lease_owner = "
               "'%s') FROM sandbox_lease WHERE sandbox_id = '%s' AND "
               "lease_version = %lld",
               c->id, c->sandbox, (long long)c->lease);
        EXPECT("rules|approved|python-small|1",
               "SELECT planner || '|' || decision || '|' || actual_class || "
               "'|' || execs FROM sandbox_allocation WHERE claim_id = '%s' "
               "AND planner_input_hash <> '' AND duration_us >= 0",
               c->id);
        EXPECT("TERMINATED|destroy",
               "SELECT state || '|' || recycle_level FROM sandbox_instance "
               "WHERE sandbox_id = '%s'",
               d->sandbox);
        EXPECT("RecycleStarted",
               "SELECT ended_by FROM sandbox_lease WHERE sandbox_id = '%s'",
               k->sandbox);
        EXPECT("1",
               "SELECT count(*) FROM sandbox_environment WHERE "
               "sandbox_id = '%s' AND environment_version = 0",
               c->sandbox);
        /* the node's last word, as it stopped: draining */
        EXPECT("false|true",
               "SELECT healthy::text || '|' || draining::text FROM node "
               "WHERE node_id = '%s'",
               node);
        for (i = 0; i < (int)SBX_ARRAY_SIZE(odd); i++)
                if (odd[i].want)
                        EXPECT(odd[i].want,
                               "SELECT reason FROM sandbox_event WHERE "
                               "topic_partition = %d AND topic_offset = %lld "
                               "AND NOT accepted",
                               (int)odd[i].part, (long long)odd[i].off);
                else
                        EXPECT("1",
                               "SELECT count(*) FROM projector_undecodable "
                               "WHERE topic_partition = %d AND topic_offset = "
                               "%lld",
                               (int)odd[i].part, (long long)odd[i].off);
#undef EXPECT
}

/* Every table of @p a equals that of @p b, row for row. */
static void expect_same_rows(const char *a, const char *b)
{
        size_t t;
        for (t = 0; t < SBX_ARRAY_SIZE(tables) + 1; t++) {
                const char *q =
                    t < SBX_ARRAY_SIZE(tables)
                        ? "SELECT r FROM (SELECT x::text AS r FROM %s.%s x) "
                          "y ORDER BY r COLLATE \"C\""
                        : "SELECT r FROM (SELECT topic || ' ' || partition "
                          "|| ' ' || next_offset AS r FROM %s.%s) y ORDER BY "
                          "r COLLATE \"C\"";
                const char *name = t < SBX_ARRAY_SIZE(tables)
                                       ? tables[t]
                                       : "projector_offsets";
                PGresult *ra     = pg_query(cfg->pg, q, a, name);
                PGresult *rb     = pg_query(cfg->pg, q, b, name);
                int i, n = PQntuples(ra);

                for (i = 0; i < n && i < PQntuples(rb); i++)
                        if (strcmp(PQgetvalue(ra, i, 0), PQgetvalue(rb, i, 0)))
                                fail_msg(
                                    "%s row %d differs:\n live:    %s\n "
                                    "rebuilt: %s",
                                    name, i, PQgetvalue(ra, i, 0),
                                    PQgetvalue(rb, i, 0));
                if (n != PQntuples(rb))
                        fail_msg("%s: %d rows live, %d rebuilt", name, n,
                                 PQntuples(rb));
                print_message("%-22s %6d rows, equal\n", name, n);
                PQclear(ra);
                PQclear(rb);
        }
}

/* The log into schema_rebuilt, up to the live projector's offsets. */
static void rebuild_to_live_offsets(void)
{
        sbx_config_t *c             = itest_config();
        volatile sig_atomic_t never = 0;
        sbx_projector_t *pj;
        sbx_projector_stats_t st;
        PGresult *r;
        char err[512];
        int i;

        free(c->pg);
        c->pg = sbx_strdup(ci_rebuilt);
        pj    = sbx_projector_new(c, codec, NULL, err, sizeof(err));
        if (!pj || sbx_projector_reset(pj, err, sizeof(err)))
                fail_msg("rebuild: %s", err);
        r = pg_query(ci_live,
                     "SELECT topic, partition, next_offset FROM "
                     "projector_offsets");
        for (i = 0; i < PQntuples(r); i++)
                sbx_projector_stop_at(pj, PQgetvalue(r, i, 0),
                                      atoi(PQgetvalue(r, i, 1)),
                                      atoll(PQgetvalue(r, i, 2)));
        PQclear(r);
        assert_int_equal(sbx_projector_run(pj, &never), 1);
        sbx_projector_get_stats(pj, &st);
        print_message(
            "rebuilt %lld events and %lld node statuses: %.0f "
            "events/s\n",
            (long long)st.written, (long long)st.nodes,
            sbx_projector_rate(&st));
        sbx_projector_destroy(pj);
        sbx_config_destroy(c);
}

/* Ends the live projector's PostgreSQL session under it, as a database
 * restart or a network cut would (its conninfo names it). */
static void cut_projector_session(void)
{
        PGresult *r = pg_query(cfg->pg,
                               "SELECT count(pg_terminate_backend(pid)) FROM "
                               "pg_stat_activity WHERE application_name = '%s'",
                               schema_live);
        assert_string_equal(PQgetvalue(r, 0, 0), "1");
        PQclear(r);
}

/* ---- tests -------------------------------------------------------------- */

static void test_live_survives_sigkill_and_equals_rebuild(void **state)
{
        itest_proc_t cp, p1, p2;
        itest_log_t l;
        int i;
        (void)state;

        make_schema(schema_live, ci_live, sizeof(ci_live));
        make_schema(schema_rebuilt, ci_rebuilt, sizeof(ci_rebuilt));
        snprintf(ci_live + strlen(ci_live), sizeof(ci_live) - strlen(ci_live),
                 " application_name=%s", schema_live);
        setenv("SBX_PG", ci_live, 1);
        p1 = itest_sbxd("proj1", "projector", NULL);
        cp = itest_sbxd("cp", "intake,planner,guard,scheduler,keeper,hollow",
                        node);
        itest_log_open(&l, cfg, codec);
        itest_log_pump(&l, 500);

        publish_claims(0, 8, "alice");
        serve_claims(&l, 0, 8);
        /* The projector dies hard while the next claims flow. */
        publish_claims(8, 8, "bob");
        usleep(150000);
        itest_kill(&p1, SIGKILL);
        serve_claims(&l, 8, 8);
        append_superseded(&l);
        request(
            claims[0].sandbox, "bench", "sbx.Exec",
            json_pack("{s:s, s:I, s:s, s:[s]}", "sandbox_id", claims[0].sandbox,
                      "lease_version", (json_int_t)claims[0].lease - 1,
                      "exec_id", "e-old", "argv", "true"));
        p2 = itest_sbxd("proj2", "projector", NULL);
        publish_claims(16, NCLAIMS - 16, "carol");
        cut_projector_session();
        serve_claims(&l, 16, NCLAIMS - 16);

        /* The control plane first: once it is gone the log is final, and
         * the projector must have all of it. */
        itest_kill(&cp, SIGTERM);
        wait_projected(ci_live);
        itest_kill(&p2, SIGTERM);
        itest_log_pump(&l, 500);

        print_message("%lld lifecycle messages, each projected once\n",
                      expect_every_offset_once(ci_live));
        for (i = 0; i < NCLAIMS; i++) {
                expect_events_of(&l, claims[i].id);
                expect_events_of(&l, claims[i].sandbox);
        }
        expect_projections();
        rebuild_to_live_offsets();
        expect_same_rows(schema_live, schema_rebuilt);
        itest_log_close(&l);
}

static void test_cli_rebuild_accounts_for_every_message(void **state)
{
        char cmd[4096], out[4096];
        size_t n;
        FILE *f;
        json_t *j;
        (void)state;

        make_schema(schema_cli, ci_cli, sizeof(ci_cli));
        snprintf(cmd, sizeof(cmd),
                 "SBX_PG=\"%s\" %s --json projections rebuild", ci_cli,
                 sbx_cli_path);
        f = popen(cmd, "r");
        assert_non_null(f);
        n      = fread(out, 1, sizeof(out) - 1, f);
        out[n] = '\0';
        if (pclose(f) != 0)
                fail_msg("%s failed:\n%s", cmd, out);
        j = json_loads(out, 0, NULL);
        if (!j || json_integer_value(json_object_get(j, "events")) <= 0 ||
            json_number_value(json_object_get(j, "events_per_s")) <= 0)
                fail_msg("unexpected output of %s:\n%s", cmd, out);
        print_message("sbx projections rebuild: %s", out);
        json_decref(j);
        assert_true(expect_every_offset_once(ci_cli) > 0);
}

static int teardown(void **state)
{
        drop_schemas();
        return itest_group_teardown(state);
}

int main(int argc, char **argv)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_teardown(
                test_live_survives_sigkill_and_equals_rebuild,
                itest_stop_children),
            cmocka_unit_test(test_cli_rebuild_accounts_for_every_message),
        };
        if (argc < 3) {
                fprintf(stderr, "usage: %s PATH/TO/sbxd PATH/TO/sbx\n",
                        argv[0]);
                return 2;
        }
        itest_stack_init(argv[1]);
        snprintf(sbx_cli_path, sizeof(sbx_cli_path), "%s", argv[2]);
        snprintf(node, sizeof(node), "itest-pnode-%ld", (long)getpid());
        snprintf(schema_live, sizeof(schema_live), "itest_proj_%ld_live",
                 (long)getpid());
        snprintf(schema_rebuilt, sizeof(schema_rebuilt),
                 "itest_proj_%ld_rebuilt", (long)getpid());
        snprintf(schema_cli, sizeof(schema_cli), "itest_proj_%ld_cli",
                 (long)getpid());
        return cmocka_run_group_tests(tests, itest_group_setup, teardown);
}
