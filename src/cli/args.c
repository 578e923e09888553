/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the commands share: a table-driven parser of a command's options
 * (so every command answers --help and refuses a bad argument in one
 * line the same way), the client library handle of the client commands,
 * their progress lines and JSON output.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"

static int is_help(const char *a)
{
        return !strcmp(a, "--help") || !strcmp(a, "-h");
}

int sbx_cli_help(int argc, char **argv, const char *usage)
{
        int i;
        for (i = 0; i < argc && strcmp(argv[i], "--"); i++)
                if (is_help(argv[i])) {
                        fputs(usage, stdout);
                        return 1;
                }
        return 0;
}

/* Stores @p value into option @p o; 0, or 2 after printing why not. */
static int store(const char *cmd, const sbx_opt_t *o, const char *value)
{
        char *end;
        long long n;

        switch (o->kind) {
        case SBX_OPT_FLAG:
                *(int *)o->dst = 1;
                return 0;
        case SBX_OPT_STR:
                *(const char **)o->dst = value;
                return 0;
        case SBX_OPT_INT:
                errno = 0;
                n     = strtoll(value, &end, 10);
                if (errno || end == value || *end)
                        return 1 + sbx_cli_fail(
                                       "%s %s: '%s' is not a whole "
                                       "number",
                                       cmd, o->name, value);
                *(long long *)o->dst = n;
                return 0;
        case SBX_OPT_FN:
        case SBX_OPT_FN0:
                return o->fn(o->dst, o->name, value) ? 2 : 0;
        }
        return 2;
}

int sbx_cli_parse(const char *cmd,
                  const char *usage,
                  const sbx_opt_t *opts,
                  int argc,
                  char **argv,
                  const char **pos,
                  int min,
                  int max,
                  char ***rest,
                  int *nrest)
{
        int i, npos = 0;

        if (rest) {
                *rest  = NULL;
                *nrest = 0;
        }
        if (sbx_cli_help(argc, argv, usage))
                return 0;
        for (i = 0; i < argc; i++) {
                const char *a      = argv[i];
                const sbx_opt_t *o = NULL;
                int k, rc, flag;
                if (!strcmp(a, "--")) {
                        if (!rest)
                                return 1 + sbx_cli_fail(
                                               "%s takes no command "
                                               "after -- (see sbx %s "
                                               "--help)",
                                               cmd, cmd);
                        *rest  = argv + i + 1;
                        *nrest = argc - i - 1;
                        break;
                }
                if (a[0] != '-' || !a[1]) {
                        if (npos == max)
                                return 1 + sbx_cli_fail(
                                               "%s: unexpected "
                                               "argument '%s' (see "
                                               "sbx %s --help)",
                                               cmd, a, cmd);
                        pos[npos++] = a;
                        continue;
                }
                for (k = 0; opts && opts[k].name; k++)
                        if (!strcmp(opts[k].name, a))
                                o = &opts[k];
                if (!o)
                        return 1 + sbx_cli_fail(
                                       "%s: unknown option %s (see "
                                       "sbx %s --help)",
                                       cmd, a, cmd);
                flag = o->kind == SBX_OPT_FLAG || o->kind == SBX_OPT_FN0;
                if (!flag && ++i == argc)
                        return 1 + sbx_cli_fail(
                                       "%s: %s needs a value (see "
                                       "sbx %s --help)",
                                       cmd, a, cmd);
                if ((rc = store(cmd, o, flag ? NULL : argv[i])))
                        return rc;
        }
        if (npos < min)
                return 1 + sbx_cli_fail(
                               "%s: missing argument (see sbx %s "
                               "--help)",
                               cmd, cmd);
        if (rest && !*rest)
                return 1 + sbx_cli_fail(
                               "%s: no command: give it after -- "
                               "(see sbx %s --help)",
                               cmd, cmd);
        return -1;
}

sbx_client_t *sbx_cli_client(const sbx_cli_t *cli,
                             const char *tenant,
                             const char *session)
{
        char err[1024];
        sbx_client_t *c =
            sbx_client_new(tenant, cli->config_path, err, sizeof(err));
        if (!c) {
                sbx_cli_fail("%s", err);
                return NULL;
        }
        sbx_client_set(c, "client", "sbx-cli/" SBX_VERSION, NULL, 0);
        sbx_client_set(c, "session", session, NULL, 0);
        return c;
}

void sbx_cli_progress(void *opaque,
                      const char *aggregate_id,
                      const char *event_type,
                      const char *phase,
                      const char *producer,
                      const char *detail,
                      int64_t elapsed_us)
{
        (void)opaque;
        (void)aggregate_id;
        fprintf(stderr, "  %9.1f ms  %-10s %-17s %-28s %s\n",
                (double)elapsed_us / 1000.0, phase ? phase : "(sandbox)",
                event_type, producer, detail ? detail : "");
}

void sbx_cli_print_json(json_t *v)
{
        char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        puts(s);
        fflush(stdout);
        free(s);
        json_decref(v);
}
