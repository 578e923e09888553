/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The audit views and `sbx audit` / `sbx telemetry` against the real
 * PostgreSQL of the local stack, in a scratch database of this test's own
 * (no Kafka): `sbx db migrate` creates the views, audit_fixture.sql fills
 * the tables as the projector would, and the sbx program must then tell a
 * user who created the sandbox and for which task, which planner sized it
 * and how, which claim reused it with what score, what it installed (only
 * what accepted events say), why it ended and what the refused reuse was;
 * telemetry must give the P95 peaks and the OOM rate of the signature. A
 * warm pool sandbox is traced to the claim it was bound to. An unknown id
 * is one line and exit 1. After the reset a rebuild starts
 * with, the views are still there and, refilled, say the same.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/util.h"
#include "itest.h"
#include "pg/pgconn.h"
#include "projector/offsets.h"

static const char *sbx_path, *fixture_path;
static sbx_config_t *cfg;
static char dbname[64], conninfo[512];

typedef struct run_s {
        int status;
        char *out, *err;
} run_t;

static sbx_pg_t *connect_to(const char *ci)
{
        char err[512];
        sbx_pg_t *pg = sbx_pg_connect(ci, err, sizeof(err));
        if (!pg)
                fail_msg("PostgreSQL unreachable (%s): %s", ci, err);
        return pg;
}

static void exec_sql(const char *ci, const char *sql)
{
        sbx_pg_t *pg = connect_to(ci);
        char err[512];
        if (sbx_pg_exec(pg, sql, NULL, err, sizeof(err)))
                fail_msg("%.80s: %s", sql, err);
        sbx_pg_close(pg);
}

static char *slurp(const char *path)
{
        char *text = NULL, err[256];
        size_t len;
        if (sbx_read_file(path, 1 << 20, &text, &len, err, sizeof(err)))
                fail_msg("%s", err);
        return text;
}

/* Runs `sbx ARGS...` (NULL-terminated) on the scratch database. */
static run_t sbx(const char *arg, ...)
{
        const char *argv[16];
        char out[] = "/tmp/sbx-audit-out-XXXXXX";
        char err[] = "/tmp/sbx-audit-err-XXXXXX";
        int fo = mkstemp(out), fe = mkstemp(err), n = 1, status;
        run_t r;
        va_list ap;
        pid_t pid;

        assert_true(fo >= 0 && fe >= 0);
        argv[0] = "sbx";
        va_start(ap, arg);
        for (; arg && n < 15; arg = va_arg(ap, const char *))
                argv[n++] = arg;
        va_end(ap);
        argv[n] = NULL;
        pid     = fork();
        if (pid == 0) {
                dup2(fo, 1);
                dup2(fe, 2);
                setenv("SBX_PG", conninfo, 1);
                execv(sbx_path, (char *const *)argv);
                _exit(127);
        }
        waitpid(pid, &status, 0);
        close(fo);
        close(fe);
        r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
        r.out    = slurp(out);
        r.err    = slurp(err);
        unlink(out);
        unlink(err);
        return r;
}

static void run_free(run_t *r)
{
        free(r->out);
        free(r->err);
}

static void expect_ok(const run_t *r)
{
        if (r->status != 0)
                fail_msg("sbx exited %d; stderr '%.500s'", r->status, r->err);
}

/* Fails unless @p text holds @p want, saying what it held. */
static void expect_has(const char *text, const char *want)
{
        if (!strstr(text, want))
                fail_msg("want '%s' in:\n%s", want, text);
}

static void expect_lacks(const char *text, const char *unwanted)
{
        if (strstr(text, unwanted))
                fail_msg("did not want '%s' in:\n%s", unwanted, text);
}

/* The line of @p text that starts (after spaces) with @p head. */
static char *line_of(const char *text, const char *head, char *buf, size_t n)
{
        const char *p = text;
        while (p && *p) {
                const char *s = p + strspn(p, " ");
                size_t len    = strcspn(p, "\n");
                if (!strncmp(s, head, strlen(head)))
                        return sbx_fmt(buf, n, "%.*s", (int)len, p);
                p = p[len] ? p + len + 1 : NULL;
        }
        fail_msg("no line '%s' in:\n%s", head, text);
        return NULL;
}

static void fill(void)
{
        char *sql = slurp(fixture_path);
        exec_sql(conninfo, sql);
        free(sql);
}

static int setup(void **state)
{
        run_t r;
        (void)state;
        cfg = itest_config();
        snprintf(dbname, sizeof(dbname), "sbx_audit_test_%ld", (long)getpid());
        snprintf(conninfo, sizeof(conninfo), "CREATE DATABASE %s", dbname);
        exec_sql(cfg->pg, conninfo);
        snprintf(conninfo, sizeof(conninfo), "%s dbname=%s", cfg->pg, dbname);
        r = sbx("db", "migrate", NULL);
        expect_ok(&r);
        expect_has(r.out, "applying 0007_audit_views.sql");
        run_free(&r);
        fill();
        return 0;
}

static int teardown(void **state)
{
        char sql[128];
        (void)state;
        snprintf(sql, sizeof(sql), "DROP DATABASE %s WITH (FORCE)", dbname);
        exec_sql(cfg->pg, sql);
        sbx_config_destroy(cfg);
        return 0;
}

/* The sandbox's whole story, as a user reads it. */
static void test_audit_sandbox(void **state)
{
        run_t r = sbx("audit", "sb-audit-1", NULL);
        char l[1024];
        (void)state;
        expect_ok(&r);
        /* Created: by whom, for which claim and task. */
        expect_has(line_of(r.out, "origin", l, sizeof(l)), "claim-audit-a");
        expect_has(line_of(r.out, "user", l, sizeof(l)), "alice");
        expect_has(line_of(r.out, "session", l, sizeof(l)), "s-audit");
        expect_has(line_of(r.out, "task", l, sizeof(l)),
                   "train a small model on the CSV with scikit-learn");
        expect_has(line_of(r.out, "at ", l, sizeof(l)),
                   "2026-03-01 10:00:04 UTC by executor/node-a");
        /* Sized: the claim it was created for. */
        expect_has(line_of(r.out, "planner", l, sizeof(l)), "llm");
        expect_has(line_of(r.out, "recommended", l, sizeof(l)),
                   "python-medium, 2 CPU, 4096 MB, confidence 0.82");
        expect_has(line_of(r.out, "guard ", l, sizeof(l)),
                   "approved: python-medium");
        /* Leases/Reuse: the second claim reused it, with its score. */
        expect_has(line_of(r.out, "lease 2", l, sizeof(l)),
                   "claim-audit-b, session s-audit, reuse");
        expect_has(line_of(r.out, "ReuseChosen", l, sizeof(l)),
                   "ReuseChosen score 0.93: same_session");
        expect_has(line_of(r.out, "refused", l, sizeof(l)),
                   "reuse=false claim=claim-audit-a sandbox=sb-audit-0 "
                   "(Placed): runtime_capability_mismatch: sandbox is "
                   "python-small/runc, the task needs python-medium/runc");
        /* Installed: each manifest against the one before. */
        expect_has(r.out, "+numpy==1.26.4 +pandas==2.2.0\n");
        expect_has(r.out, "+matplotlib==3.8.2 +numpy==2.0.0 -numpy==1.26.4\n");
        expect_has(line_of(r.out, "v1", l, sizeof(l)),
                   "lease 1 of claim-audit-a, 2 package(s), dirty level 2, "
                   "fingerprint env-0000000000000001");
        expect_has(line_of(r.out, "v2", l, sizeof(l)),
                   "lease 2 of claim-audit-b, 3 package(s)");
        expect_lacks(r.out, "tensorflow");
        /* Lifecycle end. */
        expect_has(line_of(r.out, "2026-03-01 10:31:40", l, sizeof(l)),
                   "RecycleStarted  HIBERNATING -> RECYCLING, level destroy: "
                   "ttl of 1800 s expired");
        expect_has(line_of(r.out, "2026-03-01 10:31:41", l, sizeof(l)),
                   "Terminated");
        run_free(&r);
}

/* A claim's id audits the claim (its planner fell back) and its sandbox. */
static void test_audit_claim(void **state)
{
        run_t r = sbx("audit", "claim-audit-b", NULL);
        char l[1024];
        (void)state;
        expect_ok(&r);
        expect_has(line_of(r.out, "sandbox", l, sizeof(l)), "sb-audit-1");
        expect_has(line_of(r.out, "claim  ", l, sizeof(l)), "claim-audit-a");
        expect_has(r.out, "claim         claim-audit-b, RELEASED");
        expect_has(r.out, "plot the accuracy of the model with matplotlib");
        expect_has(line_of(r.out, "planner", l, sizeof(l)),
                   "rules (llm fell back: llm timed out after 3000 ms)");
        expect_has(line_of(r.out, "used", l, sizeof(l)),
                   "peak 2.50 CPU, 5000 MB, OOM killed");
        expect_has(line_of(r.out, "ReuseChosen", l, sizeof(l)),
                   "sb-audit-1, score 0.93, bound");
        run_free(&r);
}

/* A warm pool sandbox: the claim it served was bound to it instead of the
 * sandbox its placement proposed; it is still in service. */
static void test_audit_pool_sandbox(void **state)
{
        run_t r = sbx("audit", "sb-audit-live", NULL);
        char l[1024];
        (void)state;
        expect_ok(&r);
        expect_has(line_of(r.out, "origin", l, sizeof(l)),
                   "warm pool runc/python-small/host");
        expect_has(line_of(r.out, "task", l, sizeof(l)),
                   "count the lines of the log file");
        expect_has(line_of(r.out, "placement", l, sizeof(l)),
                   "best of 1 sampled of 1 feasible: node-a score 1.20");
        expect_has(line_of(r.out, "Placed  ", l, sizeof(l)),
                   "sb-audit-live, score 1.20, bound");
        expect_has(line_of(r.out, "Placed score", l, sizeof(l)),
                   "Placed score 1.20: best of 1 sampled");
        /* its snapshots: a failed one, then one with a fork of it */
        expect_has(r.out,
                   "Snapshots\n  2026-03-01 10:51:50 UTC  failed: "
                   "disk full\n");
        expect_has(line_of(r.out, "snap-0123456789ab", l, sizeof(l)),
                   "2026-03-01 10:52:00 UTC, 12.0 MB, paused 250 ms");
        expect_has(r.out, "forked into sb-audit-fork\n");
        expect_has(r.out, "Lifecycle end\n  (still in service)\n");
        run_free(&r);
        /* a sandbox that took none has no Snapshots section */
        r = sbx("audit", "sb-audit-1", NULL);
        expect_ok(&r);
        expect_lacks(r.out, "Snapshots");
        run_free(&r);
}

static void test_audit_json(void **state)
{
        run_t r = sbx("--json", "audit", "sb-audit-1", NULL);
        json_t *j, *add;
        (void)state;
        expect_ok(&r);
        j = json_loads(r.out, 0, NULL);
        assert_non_null(j);
        assert_string_equal(json_string_value(json_object_get(j, "kind")),
                            "sandbox");
        assert_string_equal(json_string_value(json_object_get(
                                json_object_get(j, "created"), "task")),
                            "train a small model on the CSV with scikit-learn");
        assert_string_equal(json_string_value(json_object_get(
                                json_object_get(j, "sizing"), "planner")),
                            "llm");
        assert_int_equal(json_array_size(json_object_get(j, "installs")), 2);
        add = json_object_get(json_array_get(json_object_get(j, "installs"), 1),
                              "packages_added");
        assert_int_equal(json_array_size(add), 2);
        assert_string_equal(json_string_value(json_array_get(add, 0)),
                            "matplotlib==3.8.2");
        assert_string_equal(json_string_value(json_array_get(add, 1)),
                            "numpy==2.0.0");
        assert_true(json_number_value(json_object_get(
                        json_array_get(json_object_get(j, "leases"), 1),
                        "score")) == 0.93);
        assert_string_equal(
            json_string_value(json_object_get(
                json_array_get(json_object_get(j, "lifecycle"), 2),
                "event_type")),
            "Terminated");
        json_decref(j);
        run_free(&r);
}

static void test_unknown_id(void **state)
{
        run_t r = sbx("audit", "sb-nope", NULL);
        (void)state;
        assert_int_equal(r.status, 1);
        assert_string_equal(r.out, "");
        assert_string_equal(r.err,
                            "sbx: audit: no claim or sandbox 'sb-nope' in the "
                            "projections\n");
        run_free(&r);
        r = sbx("telemetry", "--signature", "nope", NULL);
        assert_int_equal(r.status, 1);
        expect_has(r.err, "no claims with signature 'nope'");
        run_free(&r);
        r = sbx("audit", NULL);
        assert_int_equal(r.status, 2);
        run_free(&r);
        r = sbx("audit", "--help", NULL);
        expect_ok(&r);
        expect_has(r.out, "usage: sbx audit ID");
        run_free(&r);
        r = sbx("telemetry", "--help", NULL);
        expect_ok(&r);
        expect_has(r.out, "usage: sbx telemetry [--signature S]");
        run_free(&r);
}

/* Six python-ml claims, five measured: peaks 0.5..2.5 CPU, 1000..5000 MB
 * (P95 2.4 and 4800), one OOM (20%), 1..5 s of execs (mean 3 s). */
static void test_telemetry(void **state)
{
        run_t r = sbx("telemetry", NULL);
        char l[1024];
        json_t *j, *row;
        (void)state;
        expect_ok(&r);
        line_of(r.out, "python-ml", l, sizeof(l));
        expect_has(l,
                   "python-ml                  6        5 python-medium   "
                   "python-medium      2.00    2.40    2.50    4096    "
                   "4800    5000  20.0%    3.000");
        expect_has(r.out, "\nbrowser ");
        run_free(&r);

        r = sbx("--json", "telemetry", "--signature", "python-ml", NULL);
        expect_ok(&r);
        j = json_loads(r.out, 0, NULL);
        assert_int_equal(json_array_size(j), 1);
        row = json_array_get(j, 0);
        assert_int_equal(
            json_integer_value(json_object_get(row, "measured_claims")), 5);
        assert_true(
            fabs(json_number_value(json_object_get(row, "p95_peak_memory_mb")) -
                 4800) < 1e-9);
        assert_true(
            fabs(json_number_value(json_object_get(row, "p95_peak_cpu")) -
                 2.4) < 1e-9);
        assert_true(fabs(json_number_value(json_object_get(row, "oom_rate")) -
                         0.2) < 1e-9);
        json_decref(j);
        run_free(&r);
}

/* Read straight from the views: the live registry and the refusals. */
static void on_row(void *opaque, int ncols, const char *const *v)
{
        char *buf = opaque;
        int i;
        for (i = 0; i < ncols; i++)
                snprintf(buf + strlen(buf), 512 - strlen(buf), "%s%s",
                         i ? "|" : "", v[i] ? v[i] : "NULL");
        snprintf(buf + strlen(buf), 512 - strlen(buf), "\n");
}

static void query(const char *sql, char out[512])
{
        sbx_pg_t *pg = connect_to(conninfo);
        char err[512];
        out[0] = '\0';
        if (sbx_pg_query(pg, sql, 0, NULL, on_row, out, err, sizeof(err)))
                fail_msg("%s: %s", sql, err);
        sbx_pg_close(pg);
}

static void test_views_in_sql(void **state)
{
        char out[512];
        (void)state;
        query(
            "SELECT sandbox_id, state, node_healthy, "
            "idle_seconds BETWEEN 90 AND 600 FROM sandbox_registry_live",
            out);
        assert_string_equal(out, "sb-audit-live|IDLE|t|t\n");
        query(
            "SELECT claim_id, sandbox_id FROM audit_reuse_refusals "
            "WHERE reason_code = 'runtime_capability_mismatch'",
            out);
        assert_string_equal(out, "claim-audit-a|sb-audit-0\n");
        query(
            "SELECT array_to_string(packages_removed, ',') FROM "
            "audit_sandbox_installs WHERE sandbox_id = 'sb-audit-1' "
            "ORDER BY environment_version",
            out);
        assert_string_equal(out, "\nnumpy==1.26.4\n");
}

/* `sbx projections rebuild` starts by emptying the tables: the views
 * must stay and read the new rows. */
static void test_views_survive_rebuild_reset(void **state)
{
        run_t before = sbx("audit", "sb-audit-1", NULL), r;
        sbx_pg_t *pg = connect_to(conninfo);
        char err[512];
        (void)state;
        expect_ok(&before);
        if (sbx_poffsets_reset(pg, err, sizeof(err)))
                fail_msg("reset: %s", err);
        sbx_pg_close(pg);
        r = sbx("audit", "sb-audit-1", NULL);
        assert_int_equal(r.status, 1);
        expect_has(r.err, "no claim or sandbox 'sb-audit-1'");
        run_free(&r);
        fill();
        r = sbx("audit", "sb-audit-1", NULL);
        expect_ok(&r);
        assert_string_equal(r.out, before.out);
        run_free(&r);
        run_free(&before);
}

int main(int argc, char **argv)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_audit_sandbox),
            cmocka_unit_test(test_audit_claim),
            cmocka_unit_test(test_audit_pool_sandbox),
            cmocka_unit_test(test_audit_json),
            cmocka_unit_test(test_unknown_id),
            cmocka_unit_test(test_telemetry),
            cmocka_unit_test(test_views_in_sql),
            cmocka_unit_test(test_views_survive_rebuild_reset),
        };
        if (argc < 3) {
                fprintf(stderr, "usage: %s SBX FIXTURE_SQL\n", argv[0]);
                return 2;
        }
        sbx_path     = argv[1];
        fixture_path = argv[2];
        return cmocka_run_group_tests(tests, setup, teardown);
}
