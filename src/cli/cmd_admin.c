/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `sbx topics apply` and `sbx db migrate`: converge the broker and the
 * database to the declarative files of the tree, and say what changed.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "core/topicspec.h"
#include "kafka/topics.h"
#include "pg/migrate.h"

static void print_line(const char *line, void *opaque)
{
        json_t *arr = opaque;
        if (arr)
                json_array_append_new(arr, json_string(line));
        else
                printf("  %s\n", line);
}

static int finish_json(json_t *arr, const char *what, int n)
{
        json_t *o = json_pack("{s:s, s:i, s:o}", "action", what, "changes", n,
                              "details", arr);
        char *s   = json_dumps(o, JSON_COMPACT);
        puts(s);
        free(s);
        json_decref(o);
        return 0;
}

static const char topics_usage[] =
    "usage: sbx topics apply [--dry-run]\n"
    "Creates or alters the Kafka topics to match the specs of topics/, "
    "saying\n"
    "what changes; --dry-run only says it.\n";

static const char db_usage[] =
    "usage: sbx db migrate [--dry-run]\n"
    "Applies the SQL migrations of projections/ that the database lacks, "
    "each in\n"
    "its own transaction; --dry-run checks them all in one that is rolled "
    "back.\n";

int sbx_cmd_topics(sbx_cli_t *cli, int argc, char **argv)
{
        sbx_config_t *config;
        sbx_topicspecs_t *specs = NULL;
        json_t *arr             = cli->json ? json_array() : NULL;
        char errstr[1024];
        int n = 0, rc = 1;

        if (sbx_cli_help(argc, argv, topics_usage)) {
                json_decref(arr);
                return 0;
        }
        if (argc < 1 || strcmp(argv[0], "apply")) {
                json_decref(arr);
                return sbx_cli_fail("usage: sbx topics apply [--dry-run]");
        }
        config = sbx_cli_config(cli);
        if (!config)
                goto done;
        if (sbx_topicspecs_load_dir(config->topics_dir, &specs, errstr,
                                    sizeof(errstr))) {
                rc = sbx_cli_fail("%s", errstr);
                goto done;
        }
        if (!arr)
                printf("topics: %zu specs in %s, broker %s\n", specs->n,
                       config->topics_dir, config->brokers);
        if (sbx_topics_apply(config, specs, cli->dry_run, print_line, arr, &n,
                             errstr, sizeof(errstr))) {
                rc = sbx_cli_fail("topics apply: %s", errstr);
                goto done;
        }
        if (arr) {
                rc  = finish_json(arr, "topics apply", n);
                arr = NULL;
        } else {
                printf("topics: %s\n", n == 0 ? "up to date, nothing changed"
                                       : cli->dry_run
                                           ? "changes above would be made"
                                           : "changes above applied");
                rc = 0;
        }
done:
        json_decref(arr);
        sbx_topicspecs_destroy(specs);
        sbx_config_destroy(config);
        return rc;
}

int sbx_cmd_db(sbx_cli_t *cli, int argc, char **argv)
{
        sbx_config_t *config;
        json_t *arr = cli->json ? json_array() : NULL;
        char errstr[1024];
        int n = 0, rc = 1;

        if (sbx_cli_help(argc, argv, db_usage)) {
                json_decref(arr);
                return 0;
        }
        if (argc < 1 || strcmp(argv[0], "migrate")) {
                json_decref(arr);
                return sbx_cli_fail("usage: sbx db migrate [--dry-run]");
        }
        config = sbx_cli_config(cli);
        if (!config)
                goto done;
        if (sbx_migrate(config->pg, config->projections_dir, cli->dry_run,
                        print_line, arr, &n, errstr, sizeof(errstr))) {
                rc = sbx_cli_fail("db migrate: %s", errstr);
                goto done;
        }
        if (arr) {
                rc  = finish_json(arr, "db migrate", n);
                arr = NULL;
        } else {
                printf("db: %s\n", n == 0 ? "up to date, nothing to apply"
                                   : cli->dry_run
                                       ? "migrations above would be applied"
                                       : "migrations above applied");
                rc = 0;
        }
done:
        json_decref(arr);
        sbx_config_destroy(config);
        return rc;
}
