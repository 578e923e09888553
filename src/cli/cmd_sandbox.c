/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Commands on one sandbox, through the client library: `renew` and
 * `release` act under a lease; `pause`, `resume` and `snapshot` name the
 * sandbox's last lease; `destroy` needs none. Each waits until the log
 * shows it done (or intake's rejection, whose reasons it prints) and says
 * so in one line, or one JSON object with --json. They differ only in a
 * row of the table below.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli/cli.h"
#include "core/util.h"

typedef struct args_s {
        const char *sandbox, *tenant, *claim, *reason;
        long long lease, timeout, extend;
        int64_t expires_at; /* set by renew */
        sbx_client_t *c;
        char snapshot[64]; /* set by snapshot */
        char err[1024];
} args_t;

typedef struct cmd_s {
        const char *name, *usage;
        int lease;         /* --lease is required */
        const char *extra; /* the command's own option, or NULL */
        sbx_err_t (*call)(args_t *a);
        const char *done;  /* "released": the line printed */
        const char *phase; /* the sandbox's phase after it, or NULL */
} cmd_t;

static sbx_err_t call_renew(args_t *a)
{
        sbx_lease_t *l = sbx_lease_new(a->sandbox, a->lease, NULL);
        sbx_err_t rc =
            sbx_client_renew(a->c, l, (int)a->extend, (int)a->timeout * 1000,
                             a->err, sizeof(a->err));
        a->expires_at = sbx_lease_expires_at(l);
        sbx_lease_destroy(l);
        return rc;
}

static sbx_err_t call_release(args_t *a)
{
        sbx_lease_t *l = sbx_lease_new(a->sandbox, a->lease, a->claim);
        sbx_err_t rc   = sbx_client_release(a->c, l, (int)a->timeout * 1000,
                                            a->err, sizeof(a->err));
        sbx_lease_destroy(l);
        return rc;
}

static sbx_err_t call_pause(args_t *a)
{
        return sbx_client_pause(a->c, a->sandbox, a->lease,
                                (int)a->timeout * 1000, a->err, sizeof(a->err));
}

static sbx_err_t call_resume(args_t *a)
{
        return sbx_client_resume(a->c, a->sandbox, a->lease,
                                 (int)a->timeout * 1000, a->err,
                                 sizeof(a->err));
}

static sbx_err_t call_snapshot(args_t *a)
{
        return sbx_client_snapshot(a->c, a->sandbox, a->lease, a->snapshot,
                                   sizeof(a->snapshot), (int)a->timeout * 1000,
                                   a->err, sizeof(a->err));
}

static sbx_err_t call_destroy(args_t *a)
{
        sbx_client_set_progress(a->c, sbx_cli_progress, NULL);
        return sbx_client_destroy_sandbox(a->c, a->sandbox, a->reason,
                                          (int)a->timeout * 1000, a->err,
                                          sizeof(a->err));
}

#define COMMON_OPTS                                                            \
        "  --tenant T           the tenant (default: $SBX_TENANT)\n"           \
        "  --timeout S          stop waiting after S seconds (default 30, "    \
        "destroy 60)\n"

static const cmd_t cmds[] = {
    {"renew",
     "usage: sbx renew SANDBOX --lease N [--extend SECONDS] [--tenant T] "
     "[--timeout S]\n"
     "Extends lease N of the sandbox to SECONDS from now (5..3600, default "
     "300).\n" COMMON_OPTS,
     1, "--extend", call_renew, "renewed the lease of", NULL},
    {"release",
     "usage: sbx release SANDBOX --lease N [--claim ID] [--tenant T] "
     "[--timeout S]\n"
     "Gives the sandbox back: it is sanitized and may serve the session "
     "again.\n" COMMON_OPTS
     "  --claim ID           the claim that holds the lease\n",
     1, "--claim", call_release, "released", "SANITIZING"},
    {"pause",
     "usage: sbx pause SANDBOX --lease N [--tenant T] [--timeout S]\n"
     "Freezes an idle sandbox (N: its last lease). A leased sandbox is "
     "refused:\n"
     "release it first.\n" COMMON_OPTS,
     1, NULL, call_pause, "paused", "HIBERNATING"},
    {"resume",
     "usage: sbx resume SANDBOX --lease N [--tenant T] [--timeout S]\n"
     "Thaws a paused sandbox (N: its last lease).\n" COMMON_OPTS,
     1, NULL, call_resume, "resumed", "IDLE"},
    {"snapshot",
     "usage: sbx snapshot SANDBOX --lease N [--tenant T] [--timeout S]\n"
     "Captures the sandbox's filesystem (what it wrote over its template) "
     "as\n"
     "immutable, content-addressed layers, under lease N (the holder's, or "
     "an\n"
     "idle sandbox's last), freezing it meanwhile; prints the snapshot's "
     "id.\n" COMMON_OPTS,
     1, NULL, call_snapshot, "snapshot taken of", NULL},
    {"destroy",
     "usage: sbx destroy SANDBOX [--reason TEXT] [--tenant T] [--timeout S]\n"
     "Destroys the sandbox (its container, files and lease) and waits until "
     "it is\n"
     "terminated, showing each event on stderr.\n" COMMON_OPTS
     "  --reason TEXT        why, for the audit trail\n",
     0, "--reason", call_destroy, "destroyed", "TERMINATED"},
};

/* Says how it went: a line, or an object with --json. */
static void print_done(const sbx_cli_t *cli, const cmd_t *k, const args_t *a)
{
        char until[64] = "";
        if (cli->json) {
                json_t *j =
                    json_pack("{s:s, s:s, s:s?}", "command", k->name,
                              "sandbox_id", a->sandbox, "phase", k->phase);
                if (a->expires_at)
                        json_object_set_new(j, "lease_expires_at",
                                            json_integer(a->expires_at));
                if (a->snapshot[0])
                        json_object_set_new(j, "snapshot_id",
                                            json_string(a->snapshot));
                sbx_cli_print_json(j);
                return;
        }
        if (a->expires_at) {
                time_t t = (time_t)(a->expires_at / 1000000);
                struct tm tm;
                gmtime_r(&t, &tm);
                strftime(until, sizeof(until), " until %H:%M:%S UTC", &tm);
        }
        printf("%s %s%s%s%s\n", k->done, a->sandbox, until,
               a->snapshot[0] ? ": " : "", a->snapshot);
}

static int run(sbx_cli_t *cli, const char *name, int argc, char **argv)
{
        args_t a              = {.lease = -1, .extend = 300};
        const cmd_t *k        = NULL;
        const sbx_opt_t own[] = {
            {"--extend", SBX_OPT_INT, &a.extend, NULL},
            {"--claim", SBX_OPT_STR, &a.claim, NULL},
            {"--reason", SBX_OPT_STR, &a.reason, NULL},
        };
        sbx_opt_t opts[5] = {
            {"--lease", SBX_OPT_INT, &a.lease, NULL},
            {"--tenant", SBX_OPT_STR, &a.tenant, NULL},
            {"--timeout", SBX_OPT_INT, &a.timeout, NULL},
        };
        sbx_err_t err;
        size_t i;
        int rc;

        for (i = 0; i < SBX_ARRAY_SIZE(cmds); i++)
                if (!strcmp(cmds[i].name, name))
                        k = &cmds[i];
        sbx_assert(k);
        for (i = 0; k->extra && i < SBX_ARRAY_SIZE(own); i++)
                if (!strcmp(own[i].name, k->extra))
                        opts[3] = own[i];
        if ((rc = sbx_cli_parse(name, k->usage, opts, argc, argv, &a.sandbox, 1,
                                1, NULL, NULL)) >= 0)
                return rc;
        if (k->lease && a.lease < 1)
                return 1 + sbx_cli_fail(
                               "%s: give the lease version with "
                               "--lease N (see sbx %s --help)",
                               name, name);
        if (a.timeout < 0 || a.timeout > 3600)
                return 1 +
                       sbx_cli_fail("%s --timeout: want 1..3600 seconds", name);
        if (!(a.c = sbx_cli_client(cli, a.tenant, NULL)))
                return 1;
        err = k->call(&a);
        sbx_client_destroy(a.c);
        if (err)
                return sbx_cli_fail("%s %s: %s", name, a.sandbox, a.err);
        print_done(cli, k, &a);
        return 0;
}

int sbx_cmd_renew(sbx_cli_t *cli, int argc, char **argv)
{
        return run(cli, "renew", argc, argv);
}

int sbx_cmd_release(sbx_cli_t *cli, int argc, char **argv)
{
        return run(cli, "release", argc, argv);
}

int sbx_cmd_pause(sbx_cli_t *cli, int argc, char **argv)
{
        return run(cli, "pause", argc, argv);
}

int sbx_cmd_resume(sbx_cli_t *cli, int argc, char **argv)
{
        return run(cli, "resume", argc, argv);
}

int sbx_cmd_snapshot(sbx_cli_t *cli, int argc, char **argv)
{
        return run(cli, "snapshot", argc, argv);
}

int sbx_cmd_destroy(sbx_cli_t *cli, int argc, char **argv)
{
        return run(cli, "destroy", argc, argv);
}
