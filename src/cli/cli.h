/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sbx command line: shared option parsing and the command table.
 * Each command lives in its own cmd_<name>.c and returns the process exit
 * status; errors are printed as one line "sbx: <reason>".
 */
#ifndef SBX_CLI_H
#define SBX_CLI_H

#include "core/config.h"

typedef struct sbx_cli_s {
        const char *config_path;
        int json;
        int dry_run;
        int follow;
} sbx_cli_t;

/** Prints "sbx: <msg>" to stderr and returns exit status 1. */
int sbx_cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** Loads the config named by the global options, or prints why not. */
sbx_config_t *sbx_cli_config(const sbx_cli_t *cli);

int sbx_cmd_topics(sbx_cli_t *cli, int argc, char **argv);
int sbx_cmd_db(sbx_cli_t *cli, int argc, char **argv);
int sbx_cmd_fsm(sbx_cli_t *cli, int argc, char **argv);
int sbx_cmd_schema(sbx_cli_t *cli, int argc, char **argv);
int sbx_cmd_codec(sbx_cli_t *cli, int argc, char **argv);
int sbx_cmd_events(sbx_cli_t *cli, int argc, char **argv);
int sbx_cmd_acquire(sbx_cli_t *cli, int argc, char **argv);
int sbx_cmd_exec(sbx_cli_t *cli, int argc, char **argv);

#endif
