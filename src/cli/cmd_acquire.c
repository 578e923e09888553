/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `sbx acquire`: asks for a sandbox through the client library. The task
 * and plan come from flags or a JSON file, in the order given (a later
 * flag overrides the file); with --wait the claim is followed through its
 * phases, one progress line per event on stderr, until it is bound (the
 * sandbox id and lease version on stdout) or refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "core/util.h"

static const char usage[] =
    "usage: sbx acquire [--tenant T] [--session S] (--task TEXT | --file "
    "FILE)\n"
    "                   [OPTIONS] [--wait [--timeout S]]\n"
    "Asks the control plane for a sandbox. Without --wait it prints the "
    "claim id;\n"
    "with --wait it shows each event of the claim on stderr until the claim "
    "is\n"
    "bound, then prints \"SANDBOX LEASE_VERSION\" (--json: an object).\n"
    "\n"
    "  --tenant T           the tenant (default: $SBX_TENANT)\n"
    "  --session S          the agent session (reuse is per session)\n"
    "  --task TEXT          what the sandbox is for: the planner sizes it by "
    "this\n"
    "  --file FILE          a Task or AcquireSandbox as JSON (sbx schema "
    "request);\n"
    "                       '-' reads stdin\n"
    "  --plan STEP          a step of the agent's plan (repeat)\n"
    "  --tool-call CMD      a command the agent plans to run (repeat)\n"
    "  --language L         a language the task uses (repeat)\n"
    "  --package [ECO:]NAME[CONSTRAINT]  an expected dependency (repeat), "
    "e.g.\n"
    "                       'pandas>=2', 'npm:react'\n"
    "  --browser, --gpu, --compile  the task needs a browser, a GPU, a "
    "compiler\n"
    "  --risk low|medium|high\n"
    "  --network PROFILE    network the task needs (default none; the\n"
    "                       planner may infer one, e.g. pip: pypi-readonly)\n"
    "  --network-profile P  the network profile asked for: the planner takes\n"
    "                       it as is (the guard still checks it), e.g. none\n"
    "                       for a task that installs from the tenant's cache\n"
    "  --class C            a resource class hint\n"
    "  --lease SECONDS      lease length, 5..3600 (default 300)\n"
    "  --ttl SECONDS        sandbox lifetime (default 1800)\n"
    "  --workspace ID       the workspace to mount at /workspace\n"
    "  --claim ID           the claim id (default: a new one; resending is "
    "a no-op)\n"
    "  --from-snapshot S    fork: start from snapshot S (sbx snapshot printed "
    "it),\n"
    "                       on the node that holds it, instead of a clean "
    "template\n"
    "  --wait               follow the claim until it is bound\n"
    "  --timeout S          stop waiting after S seconds (default 120)\n";

/* Options that set an acquire field, in the order they are given; the
 * needs_* ones are flags. */
static const struct {
        const char *opt, *field;
} fields[] = {
    {"--task", "text"},
    {"--plan", "plan"},
    {"--tool-call", "tool_call"},
    {"--language", "language"},
    {"--package", "package"},
    {"--risk", "risk"},
    {"--network", "network"},
    {"--network-profile", "network_profile"},
    {"--class", "class"},
    {"--lease", "lease_seconds"},
    {"--ttl", "ttl_seconds"},
    {"--workspace", "workspace_id"},
    {"--claim", "claim_id"},
    {"--from-snapshot", "snapshot_id"},
    {"--browser", "needs_browser"},
    {"--gpu", "needs_gpu"},
    {"--compile", "needs_compile"},
};

#define NBASE 5 /* options before the fields in sbx_cmd_acquire's table */

static int set_field(void *dst, const char *opt, const char *value)
{
        char err[512];
        size_t i;
        for (i = 0; i < SBX_ARRAY_SIZE(fields); i++)
                if (!strcmp(fields[i].opt, opt) &&
                    sbx_acquire_set(dst, fields[i].field,
                                    value ? value : "true", err, sizeof(err))) {
                        sbx_cli_fail("acquire %s: %s", opt, err);
                        return -1;
                }
        return 0;
}

static int set_file(void *dst, const char *opt, const char *path)
{
        char *text = NULL, err[1024];
        size_t len = 0;
        int rc     = 0;
        (void)opt;
        if (sbx_read_file(strcmp(path, "-") ? path : "/dev/stdin", 1 << 20,
                          &text, &len, err, sizeof(err)) ||
            sbx_acquire_set_json(dst, text, err, sizeof(err))) {
                sbx_cli_fail("acquire --file %s: %s", path, err);
                rc = -1;
        }
        free(text);
        return rc;
}

static void print_lease(const sbx_cli_t *cli, const sbx_lease_t *l)
{
        if (!cli->json) {
                printf("%s %lld\n", sbx_lease_sandbox_id(l),
                       (long long)sbx_lease_version(l));
                return;
        }
        sbx_cli_print_json(json_pack(
            "{s:s, s:s, s:I, s:s?, s:I}", "claim_id", sbx_lease_claim_id(l),
            "sandbox_id", sbx_lease_sandbox_id(l), "lease_version",
            (json_int_t)sbx_lease_version(l), "node_id", sbx_lease_node_id(l),
            "lease_expires_at", (json_int_t)sbx_lease_expires_at(l)));
}

int sbx_cmd_acquire(sbx_cli_t *cli, int argc, char **argv)
{
        sbx_acquire_t *a   = sbx_acquire_new(NULL);
        const char *tenant = NULL, *session = NULL;
        long long timeout = 120;
        int wait = 0, rc = 1;
        sbx_client_t *c = NULL;
        sbx_lease_t *l  = NULL;
        char err[1024];
        sbx_opt_t opts[NBASE + SBX_ARRAY_SIZE(fields) + 1] = {
            {"--tenant", SBX_OPT_STR, &tenant, NULL},
            {"--session", SBX_OPT_STR, &session, NULL},
            {"--file", SBX_OPT_FN, a, set_file},
            {"--wait", SBX_OPT_FLAG, &wait, NULL},
            {"--timeout", SBX_OPT_INT, &timeout, NULL},
        };
        size_t i;

        for (i = 0; i < SBX_ARRAY_SIZE(fields); i++) {
                sbx_opt_t *o = &opts[NBASE + i];
                o->name      = fields[i].opt;
                o->kind = strncmp(fields[i].field, "needs_", 6) ? SBX_OPT_FN
                                                                : SBX_OPT_FN0;
                o->dst  = a;
                o->fn   = set_field;
        }
        if ((rc = sbx_cli_parse("acquire", usage, opts, argc, argv, NULL, 0, 0,
                                NULL, NULL)) >= 0)
                goto done;
        rc = 1;
        if (timeout < 1 || timeout > 86400) {
                rc = 1 + sbx_cli_fail(
                             "acquire --timeout: want 1..86400 "
                             "seconds");
                goto done;
        }
        if (!(c = sbx_cli_client(cli, tenant, session)))
                goto done;
        if (!wait) {
                if (sbx_client_acquire_async(c, a, err, sizeof(err))) {
                        rc = sbx_cli_fail("acquire: %s", err);
                        goto done;
                }
                if (cli->json)
                        sbx_cli_print_json(json_pack("{s:s}", "claim_id",
                                                     sbx_acquire_claim_id(a)));
                else
                        printf("%s\n", sbx_acquire_claim_id(a));
                rc = 0;
                goto done;
        }
        sbx_client_set_progress(c, sbx_cli_progress, NULL);
        if (sbx_client_acquire(c, a, (int)timeout * 1000, &l, err, sizeof(err)))
                rc = sbx_cli_fail("acquire: %s", err);
        else {
                print_lease(cli, l);
                rc = 0;
        }
done:
        sbx_lease_destroy(l);
        sbx_client_destroy(c);
        sbx_acquire_destroy(a);
        return rc;
}
