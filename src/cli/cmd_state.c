/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `sbx ls` and `sbx show`: the folded state of claims and sandboxes, as
 * every stage folds it, from the whole log. Nothing is read from a
 * projection, so what they print is what the control plane decides by.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli/cli.h"
#include "core/util.h"

/* The state as JSON for users: without the fold's bookkeeping. */
static json_t *state_json(const sbx_state_t *s)
{
        json_t *j = sbx_state_to_json(s);
        json_object_del(j, "recent");
        json_object_del(j, "phase_no");
        return j;
}

static const char ls_usage[] =
    "usage: sbx ls [--tenant T] [--all]\n"
    "Lists the tenant's live claims and sandboxes, folded from the whole "
    "log,\n"
    "oldest first. --all: released, failed and terminated ones too; --json: "
    "an\n"
    "array of states.\n"
    "\n"
    "  --tenant T           the tenant (default: $SBX_TENANT)\n";

typedef struct pick_s {
        const char *tenant;
        int all;
        const sbx_state_t **v;
        size_t n;
} pick_t;

static void pick(sbx_aggentry_t *e, void *opaque)
{
        pick_t *p            = opaque;
        const sbx_state_t *s = e->state;
        if (s->seq == 0 || s->aggregate == SBX_AGG_REQUEST ||
            !sbx_streq(s->tenant_id, p->tenant) ||
            (!p->all && sbx_phase_terminal(s->aggregate, s->phase)))
                return;
        p->v         = sbx_realloc(p->v, (p->n + 1) * sizeof(*p->v));
        p->v[p->n++] = s;
}

static int by_created(const void *a, const void *b)
{
        const sbx_state_t *x = *(const sbx_state_t *const *)a;
        const sbx_state_t *y = *(const sbx_state_t *const *)b;
        return (x->created_at > y->created_at) -
               (x->created_at < y->created_at);
}

/* "5s", "3m", "2h", "4d": how long ago @p us was. */
static const char *ago(int64_t us, char *buf, size_t n)
{
        int64_t s = (sbx_now_us() - us) / 1000000;
        if (s < 120)
                return sbx_fmt(buf, n, "%llds", (long long)s);
        if (s < 7200)
                return sbx_fmt(buf, n, "%lldm", (long long)s / 60);
        if (s < 172800)
                return sbx_fmt(buf, n, "%lldh", (long long)s / 3600);
        return sbx_fmt(buf, n, "%lldd", (long long)s / 86400);
}

static void print_row(const sbx_state_t *s)
{
        char age[32];
        const char *other =
            s->aggregate == SBX_AGG_CLAIM ? s->sandbox_id : s->lease_owner;
        printf("%-8s %-44s %-14s %-14s %-44s %5lld %-20s %-14s %s\n",
               sbx_aggregate_name(s->aggregate), s->id,
               sbx_phase_name(s->aggregate, s->phase),
               s->session_id ? s->session_id : "-", other ? other : "-",
               (long long)s->lease_version, s->node_id ? s->node_id : "-",
               s->resource_class ? s->resource_class : "-",
               ago(s->created_at, age, sizeof(age)));
}

int sbx_cmd_ls(sbx_cli_t *cli, int argc, char **argv)
{
        pick_t p               = {getenv("SBX_TENANT"), 0, NULL, 0};
        const sbx_opt_t opts[] = {{"--tenant", SBX_OPT_STR, &p.tenant, NULL},
                                  {"--all", SBX_OPT_FLAG, &p.all, NULL},
                                  {NULL, SBX_OPT_FLAG, NULL, NULL}};
        sbx_aggstore_t *store  = NULL;
        size_t i;
        int rc;

        if ((rc = sbx_cli_parse("ls", ls_usage, opts, argc, argv, NULL, 0, 0,
                                NULL, NULL)) >= 0)
                return rc;
        if (!p.tenant || !*p.tenant)
                return 1 + sbx_cli_fail(
                               "ls: no tenant: give --tenant T or "
                               "set SBX_TENANT");
        if (sbx_cli_read_log(cli, 0, NULL, NULL, &store))
                return 1;
        sbx_aggstore_foreach(store, pick, &p);
        if (p.n)
                qsort(p.v, p.n, sizeof(*p.v), by_created);
        if (cli->json) {
                json_t *arr = json_array();
                for (i = 0; i < p.n; i++)
                        json_array_append_new(arr, state_json(p.v[i]));
                sbx_cli_print_json(arr);
        } else {
                printf("%-8s %-44s %-14s %-14s %-44s %5s %-20s %-14s %s\n",
                       "KIND", "ID", "PHASE", "SESSION", "SANDBOX/HOLDER",
                       "LEASE", "NODE", "CLASS", "AGE");
                for (i = 0; i < p.n; i++)
                        print_row(p.v[i]);
        }
        free(p.v);
        sbx_aggstore_destroy(store);
        return 0;
}

static const char show_usage[] =
    "usage: sbx show ID\n"
    "Prints the folded state of claim or sandbox ID: its phase, tenant, "
    "session,\n"
    "lease, node, class and the rest (--json: as an object).\n";

/* Is @p k a time field (µs since the epoch)? */
static int is_time(const char *k)
{
        size_t n = strlen(k);
        return n > 3 && !strcmp(k + n - 3, "_at");
}

static void print_field(const char *k, const json_t *v)
{
        char buf[64];
        if (json_is_string(v) && *json_string_value(v))
                printf("%-18s %s\n", k, json_string_value(v));
        else if (json_is_integer(v) && json_integer_value(v) && is_time(k)) {
                time_t t = (time_t)(json_integer_value(v) / 1000000);
                struct tm tm;
                gmtime_r(&t, &tm);
                strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm);
                printf("%-18s %s\n", k, buf);
        } else if (json_is_integer(v) && json_integer_value(v))
                printf("%-18s %lld\n", k, (long long)json_integer_value(v));
        else if (json_is_real(v) && json_real_value(v) != 0.0)
                printf("%-18s %g\n", k, json_real_value(v));
        else if (json_is_true(v))
                printf("%-18s true\n", k);
}

int sbx_cmd_show(sbx_cli_t *cli, int argc, char **argv)
{
        const char *id        = NULL;
        sbx_aggstore_t *store = NULL;
        sbx_aggentry_t *e;
        json_t *j, *v;
        const char *k;
        int rc;

        if ((rc = sbx_cli_parse("show", show_usage, NULL, argc, argv, &id, 1, 1,
                                NULL, NULL)) >= 0)
                return rc;
        if (sbx_cli_read_log(cli, 0, NULL, NULL, &store))
                return 1;
        e = sbx_aggstore_get(store, id);
        if (!e || e->state->seq == 0) {
                sbx_aggstore_destroy(store);
                return sbx_cli_fail(
                    "show: no claim or sandbox '%s' in the "
                    "log",
                    id);
        }
        j = state_json(e->state);
        if (cli->json)
                sbx_cli_print_json(j);
        else {
                json_object_foreach(j, k, v)
                {
                        print_field(k, v);
                }
                json_decref(j);
        }
        sbx_aggstore_destroy(store);
        return 0;
}
