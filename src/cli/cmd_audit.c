/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `sbx audit ID`: the audit trail of a sandbox or a claim, read from the
 * audit views of the projections (projections/0007_audit_views.sql): who
 * created the sandbox and why, why the planner sized it so, which claims
 * and sessions held or reused it (and which were refused it), what it
 * installed and how its life ended. The claim of a sandbox is the one it
 * was created for (or first leased to); the sandbox of a claim is the one
 * it was bound to. Nothing is computed here that a view does not say, so
 * psql and this command agree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "core/util.h"

static const char usage[] =
    "usage: sbx audit ID\n"
    "Prints the audit trail of sandbox ID (sb-...) or claim ID (claim-...; "
    "then\n"
    "of the claim and its sandbox) from the audit views of the projections "
    "in\n"
    "the database of SBX_PG: who created the sandbox and why (Created), why "
    "the\n"
    "planner chose its size (Sized), which claims and sessions held or "
    "reused it\n"
    "and which were refused it (Leases/Reuse), what it installed "
    "(Installed),\n"
    "the snapshots it took and the forks made of them (Snapshots),\n"
    "and when and why it hibernated, was recycled, failed, was lost or "
    "ended\n"
    "(Lifecycle end). --json: one object with a member per section.\n";

/* ---- shared with cmd_telemetry.c ---------------------------------------- */

sbx_pg_t *sbx_cli_pg(const sbx_cli_t *cli, const char *cmd)
{
        sbx_config_t *config = sbx_cli_config(cli);
        sbx_pg_t *pg         = NULL;
        char errstr[1024];

        if (!config)
                return NULL;
        pg = sbx_pg_connect(config->pg, errstr, sizeof(errstr));
        if (pg && sbx_pg_exec(pg, "SET TimeZone = 'UTC'", NULL, errstr,
                              sizeof(errstr))) {
                sbx_pg_close(pg);
                pg = NULL;
        }
        if (!pg)
                sbx_cli_fail("%s: %s", cmd, errstr);
        sbx_config_destroy(config);
        return pg;
}

static void on_json_row(void *opaque, int ncols, const char *const *values)
{
        json_t *v = ncols == 1 && values[0]
                        ? json_loads(values[0], JSON_DECODE_ANY, NULL)
                        : NULL;
        json_array_append_new(opaque, v ? v : json_null());
}

json_t *sbx_cli_pg_rows(sbx_pg_t *pg,
                        const char *cmd,
                        const char *sql,
                        int nparams,
                        const char *const *params)
{
        json_t *rows = json_array();
        char errstr[1024];

        if (!sbx_pg_query(pg, sql, nparams, params, on_json_row, rows, errstr,
                          sizeof(errstr)))
                return rows;
        sbx_cli_fail("%s: %s%s", cmd, errstr,
                     strstr(errstr, "does not exist")
                         ? " (is the database migrated? see sbx db migrate)"
                         : "");
        json_decref(rows);
        return NULL;
}

/* ---- reading the views --------------------------------------------------- */

typedef struct audit_s {
        sbx_pg_t *pg;
        const char *claim_id, *sandbox_id; /* borrowed from ids */
        json_t *ids;                       /* kind, claim_id, sandbox_id */
        json_t *created, *sizing, *placements, *leases, *refusals;
        json_t *installs, *snapshots, *lifecycle;
} audit_t;

static const char resolve_sql[] =
    "SELECT json_build_object('kind', kind, 'claim_id', claim_id, "
    "'sandbox_id', sandbox_id)::text FROM ("
    "SELECT 'sandbox' AS kind, claim_id, sandbox_id FROM sandbox_instance "
    "WHERE sandbox_id = $1 UNION ALL "
    "SELECT 'claim', claim_id, sandbox_id FROM claim WHERE claim_id = $1) x "
    "LIMIT 1";

/* Refusals of the claim, and of the sandbox to other claims. */
static const char refusals_sql[] =
    "SELECT row_to_json(v)::text FROM audit_reuse_refusals v "
    "WHERE claim_id = $1 OR sandbox_id = $2 ORDER BY occurred_at, claim_id";

/* Rows of view @p view where @p key is @p value, in @p order; an empty
 * array when @p value is NULL. */
static json_t *rows_of(audit_t *a,
                       const char *view,
                       const char *key,
                       const char *value,
                       const char *order)
{
        char sql[512];
        const char *params[1] = {value};
        if (!value)
                return json_array();
        sbx_fmt(sql, sizeof(sql),
                "SELECT row_to_json(v)::text FROM %s v WHERE %s = $1 "
                "ORDER BY %s",
                view, key, order);
        return sbx_cli_pg_rows(a->pg, "audit", sql, 1, params);
}

/* The first row of @p rows (stolen), or JSON null. */
static json_t *first(json_t *rows)
{
        json_t *v = json_incref(json_array_get(rows, 0));
        json_decref(rows);
        return v ? v : json_null();
}

/* Which kind @p id is and its claim and sandbox; 1 after printing why
 * not. */
static int resolve(audit_t *a, const char *id)
{
        const char *params[1] = {id};
        json_t *rows = sbx_cli_pg_rows(a->pg, "audit", resolve_sql, 1, params);

        if (!rows)
                return 1;
        a->ids = first(rows);
        if (json_is_null(a->ids))
                return sbx_cli_fail(
                    "audit: no claim or sandbox '%s' in the "
                    "projections",
                    id);
        a->claim_id = json_string_value(json_object_get(a->ids, "claim_id"));
        a->sandbox_id =
            json_string_value(json_object_get(a->ids, "sandbox_id"));
        return 0;
}

static int read_views(audit_t *a)
{
        const char *both[2] = {a->claim_id, a->sandbox_id};

        if (!(a->created = rows_of(a, "audit_sandbox_created", "sandbox_id",
                                   a->sandbox_id, "sandbox_id")) ||
            !(a->sizing = rows_of(a, "audit_claim_sizing", "claim_id",
                                  a->claim_id, "claim_id")) ||
            !(a->placements = rows_of(a, "audit_claim_placements", "claim_id",
                                      a->claim_id, "seq")) ||
            !(a->leases = rows_of(a, "audit_sandbox_leases", "sandbox_id",
                                  a->sandbox_id, "lease_version")) ||
            !(a->refusals =
                  sbx_cli_pg_rows(a->pg, "audit", refusals_sql, 2, both)) ||
            !(a->installs = rows_of(a, "audit_sandbox_installs", "sandbox_id",
                                    a->sandbox_id, "environment_version")) ||
            !(a->snapshots = rows_of(a, "audit_sandbox_snapshots", "sandbox_id",
                                     a->sandbox_id, "seq")) ||
            !(a->lifecycle = rows_of(a, "audit_sandbox_lifecycle", "sandbox_id",
                                     a->sandbox_id, "seq")))
                return 1;
        a->created = first(a->created);
        a->sizing  = first(a->sizing);
        return 0;
}

static void audit_clear(audit_t *a)
{
        json_decref(a->ids);
        json_decref(a->created);
        json_decref(a->sizing);
        json_decref(a->placements);
        json_decref(a->leases);
        json_decref(a->refusals);
        json_decref(a->installs);
        json_decref(a->snapshots);
        json_decref(a->lifecycle);
}

static json_t *audit_json(const audit_t *a, const char *id)
{
        return json_pack(
            "{s:s, s:O, s:s?, s:s?, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O}",
            "id", id, "kind", json_object_get(a->ids, "kind"), "claim_id",
            a->claim_id, "sandbox_id", a->sandbox_id, "created", a->created,
            "sizing", a->sizing, "placements", a->placements, "leases",
            a->leases, "reuse_refusals", a->refusals, "installs", a->installs,
            "snapshots", a->snapshots, "lifecycle", a->lifecycle);
}

/* ---- printing ------------------------------------------------------------ */

/* The string member @p k of @p row, or "-". */
static const char *str(const json_t *row, const char *k)
{
        const char *s = json_string_value(json_object_get(row, k));
        return s && *s ? s : "-";
}

static double num(const json_t *row, const char *k)
{
        return json_number_value(json_object_get(row, k));
}

static int truth(const json_t *row, const char *k)
{
        return json_is_true(json_object_get(row, k));
}

/* "2026-01-02 03:04:05 UTC" of the time member @p k (row_to_json in
 * UTC: "2026-01-02T03:04:05.678+00:00"), or "-". */
static const char *when(const json_t *row, const char *k, char *buf, size_t n)
{
        const char *ts = json_string_value(json_object_get(row, k));
        if (!ts || strlen(ts) < 19)
                return "-";
        return sbx_fmt(buf, n, "%.10s %.8s UTC", ts, ts + 11);
}

static void print_created(const json_t *c)
{
        char t[32];
        puts("Created");
        if (json_is_null(c)) {
                puts("  (no sandbox)");
                return;
        }
        printf("  %-13s %s, %s\n", "sandbox", str(c, "sandbox_id"),
               str(c, "state"));
        if (!strcmp(str(c, "origin"), "pool"))
                printf("  %-13s warm pool %s\n", "origin", str(c, "pool"));
        else
                printf("  %-13s for claim %s\n", "origin",
                       str(c, "created_for_claim"));
        printf("  %-13s %s by %s on node %s\n", "at",
               when(c, "created_at", t, sizeof(t)), str(c, "created_by"),
               str(c, "node_id"));
        printf("  %-13s %s (request %s)\n", "claim", str(c, "claim_id"),
               str(c, "request_id"));
        printf("  %-13s %s\n", "tenant", str(c, "tenant_id"));
        printf("  %-13s %s\n", "user", str(c, "user_id"));
        printf("  %-13s %s\n", "session", str(c, "session_id"));
        printf("  %-13s %s\n", "task", str(c, "task"));
        printf("  %-13s %s\n", "placement", str(c, "placement_reason"));
        printf("  %-13s %s, %g CPU, %.0f MB, %s, template %s, network %s\n",
               "size", str(c, "resource_class"), num(c, "cpu"),
               num(c, "memory_mb"), str(c, "runtime_provider"),
               str(c, "template_id"), str(c, "network_profile"));
}

static void print_usage(const json_t *s)
{
        if (num(s, "execs") == 0) {
                printf("  %-13s no exec finished\n", "used");
                return;
        }
        printf("  %-13s %.0f exec(s), %.3f s, peak %.2f CPU, %.0f MB, %s\n",
               "used", num(s, "execs"), num(s, "duration_us") / 1e6,
               num(s, "peak_cpu"), num(s, "peak_memory_mb"),
               truth(s, "oom") ? "OOM killed" : "no OOM");
}

static void print_sizing(const json_t *s)
{
        puts("Sized");
        if (json_is_null(s)) {
                puts("  (no claim)");
                return;
        }
        printf("  %-13s %s, %s\n", "claim", str(s, "claim_id"),
               str(s, "phase"));
        printf("  %-13s %s\n", "task", str(s, "task"));
        printf("  %-13s %s\n", "signature", str(s, "signature"));
        printf("  %-13s %s", "planner", str(s, "planner"));
        if (strcmp(str(s, "fallback_reason"), "-"))
                printf(" (llm fell back: %s)", str(s, "fallback_reason"));
        printf("\n  %-13s %s, %g CPU, %.0f MB, confidence %.2f\n",
               "recommended", str(s, "recommended_class"),
               num(s, "recommended_cpu"), num(s, "recommended_memory_mb"),
               num(s, "confidence"));
        printf("  %-13s %s\n", "because", str(s, "planner_reason"));
        printf("  %-13s %s: %s, %g CPU, %.0f MB%s\n", "guard",
               str(s, "decision"), str(s, "actual_class"), num(s, "cpu"),
               num(s, "memory_mb"), truth(s, "clamped") ? ", clamped" : "");
        printf("  %-13s %s\n", "guard reasons", str(s, "guard_reasons"));
        print_usage(s);
}

static void print_placements(const json_t *rows)
{
        size_t i;
        const json_t *p;
        if (!json_array_size(rows))
                return;
        puts("Placement");
        json_array_foreach(rows, i, p)
        {
                printf("  %-13s %s, score %.2f%s: %s\n", str(p, "decision"),
                       str(p, "sandbox_id"), num(p, "score"),
                       truth(p, "bound") ? ", bound" : ", not bound",
                       str(p, "reason"));
        }
}

static void print_lease(const json_t *l)
{
        char t0[32], t1[32];
        printf("  lease %-7.0f %s, session %s, %s, %.0f exec(s)\n",
               num(l, "lease_version"), str(l, "claim_id"),
               str(l, "session_id"), truth(l, "reuse") ? "reuse" : "new",
               num(l, "execs"));
        if (strcmp(str(l, "chosen_by"), "-"))
                printf("  %-13s %s score %.2f: %s\n", "", str(l, "chosen_by"),
                       num(l, "score"), str(l, "choice_reason"));
        if (json_is_null(json_object_get(l, "ended_at")))
                printf("  %-13s held since %s, expires %s\n", "",
                       when(l, "acquired_at", t0, sizeof(t0)),
                       when(l, "expires_at", t1, sizeof(t1)));
        else
                printf("  %-13s %s .. %s, %s: %s\n", "",
                       when(l, "acquired_at", t0, sizeof(t0)),
                       when(l, "ended_at", t1, sizeof(t1)), str(l, "ended_by"),
                       str(l, "end_reason"));
}

static void print_leases(const json_t *leases, const json_t *refusals)
{
        size_t i;
        const json_t *r;
        puts("Leases/Reuse");
        if (!json_array_size(leases) && !json_array_size(refusals))
                puts("  (none)");
        json_array_foreach(leases, i, r)
        {
                print_lease(r);
        }
        json_array_foreach(refusals, i, r)
        {
                printf("  %-13s reuse=false claim=%s sandbox=%s (%s): %s\n",
                       "refused", str(r, "claim_id"), str(r, "sandbox_id"),
                       str(r, "source"), str(r, "reason"));
        }
}

/* "+a +b -c" of the arrays @p add and @p del; "no package change". */
static void print_diff(const json_t *add, const json_t *del)
{
        size_t i;
        const json_t *p;
        printf("  %-13s", "");
        json_array_foreach(add, i, p)
        {
                printf(" +%s", json_string_value(p));
        }
        json_array_foreach(del, i, p)
        {
                printf(" -%s", json_string_value(p));
        }
        puts(json_array_size(add) + json_array_size(del)
                 ? ""
                 : " no package change");
}

static void print_installs(const json_t *rows)
{
        size_t i;
        const json_t *r;
        char t[32];
        puts("Installed");
        if (!json_array_size(rows))
                puts("  (no environment update)");
        json_array_foreach(rows, i, r)
        {
                printf(
                    "  v%-12.0f %s, lease %.0f of %s, %.0f package(s), "
                    "dirty level %.0f, fingerprint %s\n",
                    num(r, "environment_version"),
                    when(r, "occurred_at", t, sizeof(t)),
                    num(r, "lease_version"), str(r, "lease_owner"),
                    (double)json_array_size(json_object_get(r, "packages")),
                    num(r, "dirty_level"), str(r, "fingerprint"));
                print_diff(json_object_get(r, "packages_added"),
                           json_object_get(r, "packages_removed"));
        }
}

static void print_snapshots(const json_t *rows)
{
        size_t i, k;
        const json_t *r, *f;
        char t[32];
        if (!json_array_size(rows))
                return; /* a section only for sandboxes that took some */
        puts("Snapshots");
        json_array_foreach(rows, i, r)
        {
                if (strcmp(str(r, "error"), "-")) {
                        printf("  %s  failed: %s\n",
                               when(r, "occurred_at", t, sizeof(t)),
                               str(r, "error"));
                        continue;
                }
                printf("  %-17s %s, %.1f MB, paused %.0f ms",
                       str(r, "snapshot_id"),
                       when(r, "occurred_at", t, sizeof(t)),
                       num(r, "size_bytes") / 1048576,
                       num(r, "duration_us") / 1000);
                if (strcmp(str(r, "parent_snapshot"), "-"))
                        printf(", child of %s", str(r, "parent_snapshot"));
                putchar('\n');
                json_array_foreach(json_object_get(r, "forks"), k, f)
                    printf("                    forked into %s\n",
                           json_string_value(f));
        }
}

static void print_lifecycle(const json_t *rows)
{
        size_t i;
        const json_t *r;
        char t[32];
        puts("Lifecycle end");
        if (!json_array_size(rows))
                puts("  (still in service)");
        json_array_foreach(rows, i, r)
        {
                printf("  %s  %-15s %s -> %s",
                       when(r, "occurred_at", t, sizeof(t)),
                       str(r, "event_type"), str(r, "old_state"),
                       str(r, "new_state"));
                if (strcmp(str(r, "recycle_level"), "-"))
                        printf(", level %s", str(r, "recycle_level"));
                printf(": %s\n", str(r, "reason"));
        }
}

static void print_audit(const audit_t *a)
{
        print_created(a->created);
        print_sizing(a->sizing);
        print_placements(a->placements);
        print_leases(a->leases, a->refusals);
        print_installs(a->installs);
        print_snapshots(a->snapshots);
        print_lifecycle(a->lifecycle);
}

int sbx_cmd_audit(sbx_cli_t *cli, int argc, char **argv)
{
        const char *id = NULL;
        audit_t a;
        int rc;

        if ((rc = sbx_cli_parse("audit", usage, NULL, argc, argv, &id, 1, 1,
                                NULL, NULL)) >= 0)
                return rc;
        memset(&a, 0, sizeof(a));
        a.pg = sbx_cli_pg(cli, "audit");
        if (!a.pg)
                return 1;
        rc = resolve(&a, id) || read_views(&a);
        if (!rc && cli->json)
                sbx_cli_print_json(audit_json(&a, id));
        else if (!rc)
                print_audit(&a);
        audit_clear(&a);
        sbx_pg_close(a.pg);
        return rc;
}
