/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sbx command line: shared option parsing and the command table.
 * Each command lives in its own cmd_<name>.c and returns the process exit
 * status; --help prints its usage on stdout and exits 0; errors are
 * printed as one line "sbx: <reason>" and exit non-zero (2 for a bad
 * argument).
 */
#ifndef SBX_CLI_H
#define SBX_CLI_H

#include "core/aggstore.h"
#include "core/config.h"
#include "pg/pgconn.h"
#include "sbx/client.h"

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

/* ---- options of a command (args.c) --------------------------------------- */

typedef enum sbx_opt_kind_e {
        SBX_OPT_FLAG, /* int *: set to 1 */
        SBX_OPT_STR,  /* const char **: the value */
        SBX_OPT_INT,  /* long long *: the value, a whole number */
        SBX_OPT_FN,   /* fn(dst, name, value) for each occurrence */
        SBX_OPT_FN0,  /* fn(dst, name, NULL): a flag with an action */
} sbx_opt_kind_t;

typedef struct sbx_opt_s {
        const char *name; /* "--lease" */
        sbx_opt_kind_t kind;
        void *dst;
        /* SBX_OPT_FN*: 0, or -1 after printing why with sbx_cli_fail() */
        int (*fn)(void *dst, const char *name, const char *value);
} sbx_opt_t;

/**
 * Parses a command's arguments by @p opts (ended by a NULL name): between
 * @p min and @p max positional arguments go into @p pos; with @p rest,
 * what follows "--" goes into *rest and *nrest (else "--" is an error).
 * Returns -1 when all is parsed, else the exit status to return now: 0
 * after printing @p usage for --help, 2 after a one-line error.
 */
int sbx_cli_parse(const char *cmd,
                  const char *usage,
                  const sbx_opt_t *opts,
                  int argc,
                  char **argv,
                  const char **pos,
                  int min,
                  int max,
                  char ***rest,
                  int *nrest);

/** Prints @p usage and returns 1 if @p argv asks for --help (or -h). */
int sbx_cli_help(int argc, char **argv, const char *usage);

/** A client library handle for @p tenant (NULL: $SBX_TENANT) and
 * @p session (may be NULL); prints why not. */
sbx_client_t *sbx_cli_client(const sbx_cli_t *cli,
                             const char *tenant,
                             const char *session);

/** A progress callback (sbx_progress_cb_t) printing one line per event
 * on stderr; @p opaque unused. */
void sbx_cli_progress(void *opaque,
                      const char *aggregate_id,
                      const char *event_type,
                      const char *phase,
                      const char *producer,
                      const char *detail,
                      int64_t elapsed_us);

/** Prints a JSON value (stolen) as one line on stdout. */
void sbx_cli_print_json(json_t *v);

/* ---- the log (cmd_events.c) ---------------------------------------------- */

/**
 * Reads and folds the whole log (and, with @p follow, what comes until
 * SIGINT), calling @p cb for every event with its verdict; the folded
 * states are then in *ret_store (caller destroys), if not NULL. Prints
 * why it cannot and returns 1; else 0.
 */
int sbx_cli_read_log(const sbx_cli_t *cli,
                     int follow,
                     void (*cb)(const sbx_event_t *ev,
                                sbx_verdict_t v,
                                void *opaque),
                     void *opaque,
                     sbx_aggstore_t **ret_store);

/* ---- the projections (cmd_audit.c) --------------------------------------- */

/** A connection to the database of the config (SBX_PG), its times in
 * UTC; prints why not (@p cmd first) and returns NULL. */
sbx_pg_t *sbx_cli_pg(const sbx_cli_t *cli, const char *cmd);

/**
 * Runs @p sql, whose rows are one column each, a JSON text (row_to_json),
 * with @p nparams text parameters (borrowed; NULL is SQL NULL). Returns
 * the rows as a new JSON array, or NULL after printing why (@p cmd
 * first).
 */
json_t *sbx_cli_pg_rows(sbx_pg_t *pg,
                        const char *cmd,
                        const char *sql,
                        int nparams,
                        const char *const *params);

/* ---- commands ------------------------------------------------------------ */

int sbx_cmd_topics(sbx_cli_t *cli, int argc, char **argv);
int sbx_cmd_db(sbx_cli_t *cli, int argc, char **argv);
int sbx_cmd_fsm(sbx_cli_t *cli, int argc, char **argv);
int sbx_cmd_schema(sbx_cli_t *cli, int argc, char **argv);
int sbx_cmd_codec(sbx_cli_t *cli, int argc, char **argv);
int sbx_cmd_events(sbx_cli_t *cli, int argc, char **argv);
int sbx_cmd_ls(sbx_cli_t *cli, int argc, char **argv);
int sbx_cmd_show(sbx_cli_t *cli, int argc, char **argv);
int sbx_cmd_acquire(sbx_cli_t *cli, int argc, char **argv);
int sbx_cmd_exec(sbx_cli_t *cli, int argc, char **argv);
int sbx_cmd_renew(sbx_cli_t *cli, int argc, char **argv);
int sbx_cmd_release(sbx_cli_t *cli, int argc, char **argv);
int sbx_cmd_pause(sbx_cli_t *cli, int argc, char **argv);
int sbx_cmd_resume(sbx_cli_t *cli, int argc, char **argv);
int sbx_cmd_snapshot(sbx_cli_t *cli, int argc, char **argv);
int sbx_cmd_destroy(sbx_cli_t *cli, int argc, char **argv);
int sbx_cmd_projections(sbx_cli_t *cli, int argc, char **argv);
int sbx_cmd_audit(sbx_cli_t *cli, int argc, char **argv);
int sbx_cmd_telemetry(sbx_cli_t *cli, int argc, char **argv);

#endif
