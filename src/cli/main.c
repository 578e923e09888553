/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Entry point of the sbx command line: global options, then a command.
 * Every command accepts --help and --json; an error is one line on stderr
 * and a non-zero exit status.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/util.h"

static const char usage[] =
    "usage: sbx [--config FILE] [--json] COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  topics apply [--dry-run]   create or alter Kafka topics to match "
    "topics/\n"
    "  db migrate [--dry-run]     apply the missing SQL migrations of "
    "projections/\n"
    "  fsm                        print the claim and sandbox transition "
    "tables\n"
    "  schema event|request|node|output  print the bundled Avro schema "
    "(--json: with fingerprint)\n"
    "  codec encode|decode KIND   JSON <-> single-object Avro, stdin to "
    "stdout\n"
    "  acquire --task TEXT|--file F [--wait] [--from-snapshot ID] ...  ask "
    "for a\n"
    "                             sandbox (or a fork), follow it to its "
    "lease\n"
    "  exec SANDBOX --lease N -- CMD...  run a command, streaming its "
    "output; exits with its status\n"
    "  renew|release SANDBOX --lease N  extend or give back a lease\n"
    "  pause|resume SANDBOX --lease N  freeze or thaw an idle sandbox\n"
    "  snapshot SANDBOX --lease N capture its filesystem as layers; "
    "prints the id\n"
    "  destroy SANDBOX            destroy it and wait until it is "
    "terminated\n"
    "  ls [--all]                 the tenant's live claims and sandboxes\n"
    "  show ID                    the folded state of a claim or sandbox\n"
    "  events [ID...] [--follow]  the log (a claim's id shows its whole "
    "chain), with verdicts\n"
    "  projections rebuild        empty the projections and replay the log "
    "into them\n"
    "  audit ID                   who created a sandbox (or claim) and why, "
    "its size,\n"
    "                             leases, reuse, installs, snapshots and "
    "end, from the\n"
    "                             projections\n"
    "  telemetry [--signature S]  allocation telemetry per workload "
    "signature\n"
    "  version                    print the version\n"
    "\n"
    "Every command takes --help. environment: SBX_TENANT, SBX_CONFIG, "
    "SBX_BROKERS, SBX_PG,\n"
    "SBX_TOPICS_DIR, SBX_PROJECTIONS_DIR\n";

int sbx_cli_fail(const char *fmt, ...)
{
        va_list ap;
        fputs("sbx: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return 1;
}

sbx_config_t *sbx_cli_config(const sbx_cli_t *cli)
{
        sbx_config_t *config;
        char errstr[1024];
        if (sbx_config_load(cli->config_path, &config, errstr,
                            sizeof(errstr))) {
                sbx_cli_fail("config: %s", errstr);
                return NULL;
        }
        return config;
}

static const struct {
        const char *name;
        int (*fn)(sbx_cli_t *cli, int argc, char **argv);
} commands[] = {
    {"topics", sbx_cmd_topics},
    {"db", sbx_cmd_db},
    {"fsm", sbx_cmd_fsm},
    {"schema", sbx_cmd_schema},
    {"codec", sbx_cmd_codec},
    {"events", sbx_cmd_events},
    {"acquire", sbx_cmd_acquire},
    {"exec", sbx_cmd_exec},
    {"renew", sbx_cmd_renew},
    {"release", sbx_cmd_release},
    {"pause", sbx_cmd_pause},
    {"resume", sbx_cmd_resume},
    {"snapshot", sbx_cmd_snapshot},
    {"destroy", sbx_cmd_destroy},
    {"ls", sbx_cmd_ls},
    {"show", sbx_cmd_show},
    {"projections", sbx_cmd_projections},
    {"audit", sbx_cmd_audit},
    {"telemetry", sbx_cmd_telemetry},
};

int main(int argc, char **argv)
{
        sbx_cli_t cli = {0};
        char *args[256];
        int nargs       = 0, i;
        const char *cmd = NULL;

        for (i = 1; i < argc; i++) {
                const char *a = argv[i];
                if (cmd && !strcmp(a, "--")) {
                        /* What follows is the command's, options too. */
                        if (argc - i > (int)SBX_ARRAY_SIZE(args) - nargs)
                                return sbx_cli_fail("too many arguments");
                        while (i < argc)
                                args[nargs++] = argv[i++];
                        break;
                }
                if ((!strcmp(a, "--help") || !strcmp(a, "-h")) && !cmd) {
                        fputs(usage, stdout);
                        return 0;
                } else if (!strcmp(a, "--json"))
                        cli.json = 1;
                else if (!strcmp(a, "--dry-run"))
                        cli.dry_run = 1;
                else if (!strcmp(a, "--follow") || !strcmp(a, "-f"))
                        cli.follow = 1;
                else if (!strcmp(a, "--config")) {
                        if (++i == argc)
                                return sbx_cli_fail("--config needs a file");
                        cli.config_path = argv[i];
                } else if (!cmd && !strncmp(a, "--", 2) && a[2])
                        return sbx_cli_fail(
                            "unknown option %s (see sbx "
                            "--help)",
                            a);
                else if (!cmd)
                        cmd = a;
                else if (nargs < (int)SBX_ARRAY_SIZE(args))
                        args[nargs++] = argv[i];
                else
                        return sbx_cli_fail("too many arguments");
        }
        if (!cmd) {
                fputs(usage, stderr);
                return 2;
        }
        if (!strcmp(cmd, "version")) {
                printf("sbx %s\n", SBX_VERSION);
                return 0;
        }
        for (i = 0; i < (int)SBX_ARRAY_SIZE(commands); i++)
                if (!strcmp(cmd, commands[i].name))
                        return commands[i].fn(&cli, nargs, args);
        return sbx_cli_fail("unknown command '%s' (see sbx --help)", cmd);
}
