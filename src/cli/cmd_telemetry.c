/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `sbx telemetry`: the allocation telemetry per workload signature, as the
 * view allocation_telemetry of the projections says it: what the planner
 * recommends for a kind of work against the P95 and the maximum of what
 * that work used, its OOM rate and mean duration. Most claims first.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"

static const char usage[] =
    "usage: sbx telemetry [--signature S]\n"
    "Prints the allocation telemetry of the projections in the database of\n"
    "SBX_PG, one row per workload signature (most claims first): claims\n"
    "planned, claims measured (with a finished exec), the most common\n"
    "recommended and granted classes, the median recommended CPU and "
    "memory\n"
    "against the P95 and maximum peaks the work used, the OOM rate and the\n"
    "mean exec time per claim. --json: an array of rows.\n"
    "\n"
    "  --signature S        only signature S (an error if it has no "
    "claims)\n";

static const char sql[] =
    "SELECT row_to_json(t)::text FROM allocation_telemetry t "
    "WHERE $1::text IS NULL OR signature = $1 "
    "ORDER BY claims DESC, signature";

/* A number column: the value with @p prec decimals, or "-" if null. */
static void cell(const json_t *row, const char *k, int width, int prec)
{
        const json_t *v = json_object_get(row, k);
        if (json_is_number(v))
                printf(" %*.*f", width, prec, json_number_value(v));
        else
                printf(" %*s", width, "-");
}

static const char *str(const json_t *row, const char *k)
{
        const char *s = json_string_value(json_object_get(row, k));
        return s && *s ? s : "-";
}

static void print_row(const json_t *r)
{
        const json_t *rate = json_object_get(r, "oom_rate");
        printf("%-20s %7lld %8lld %-15s %-15s", str(r, "signature"),
               (long long)json_integer_value(json_object_get(r, "claims")),
               (long long)json_integer_value(
                   json_object_get(r, "measured_claims")),
               str(r, "recommended_class"), str(r, "actual_class"));
        cell(r, "recommended_cpu", 7, 2);
        cell(r, "p95_peak_cpu", 7, 2);
        cell(r, "max_peak_cpu", 7, 2);
        cell(r, "recommended_memory_mb", 7, 0);
        cell(r, "p95_peak_memory_mb", 7, 0);
        cell(r, "max_peak_memory_mb", 7, 0);
        if (json_is_number(rate))
                printf(" %5.1f%%", 100.0 * json_number_value(rate));
        else
                printf(" %6s", "-");
        cell(r, "mean_duration_s", 8, 3);
        putchar('\n');
}

static void print_table(const json_t *rows)
{
        size_t i;
        const json_t *r;
        printf("%-20s %7s %8s %-15s %-15s %7s %7s %7s %7s %7s %7s %6s %8s\n",
               "SIGNATURE", "CLAIMS", "MEASURED", "RECOMMENDED", "GRANTED",
               "REC_CPU", "P95_CPU", "MAX_CPU", "REC_MB", "P95_MB", "MAX_MB",
               "OOM", "MEAN_S");
        json_array_foreach(rows, i, r)
        {
                print_row(r);
        }
}

int sbx_cmd_telemetry(sbx_cli_t *cli, int argc, char **argv)
{
        const char *signature  = NULL;
        const sbx_opt_t opts[] = {
            {"--signature", SBX_OPT_STR, &signature, NULL},
            {NULL, SBX_OPT_FLAG, NULL, NULL}};
        sbx_pg_t *pg;
        json_t *rows;
        int rc;

        if ((rc = sbx_cli_parse("telemetry", usage, opts, argc, argv, NULL, 0,
                                0, NULL, NULL)) >= 0)
                return rc;
        pg = sbx_cli_pg(cli, "telemetry");
        if (!pg)
                return 1;
        rows = sbx_cli_pg_rows(pg, "telemetry", sql, 1, &signature);
        sbx_pg_close(pg);
        if (!rows)
                return 1;
        if (signature && !json_array_size(rows)) {
                json_decref(rows);
                return sbx_cli_fail(
                    "telemetry: no claims with signature '%s' in the "
                    "projections",
                    signature);
        }
        if (cli->json)
                sbx_cli_print_json(rows);
        else {
                print_table(rows);
                json_decref(rows);
        }
        return 0;
}
