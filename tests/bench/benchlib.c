/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The helpers of benchlib.h. Percentiles are nearest rank on sorted
 * samples (index p * (n - 1), rounded), the rule the benchmarks used
 * before they shared it, so their numbers stay comparable.
 */
#include "benchlib.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core/util.h"

volatile sig_atomic_t bl_stop;

static void on_stop(int sig)
{
        (void)sig;
        bl_stop = 1;
}

void bl_catch_stop(void)
{
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_stop;
        sa.sa_flags   = SA_RESTART;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
}

int bl_cmp64(const void *a, const void *b)
{
        int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
        return (x > y) - (x < y);
}

double bl_pct(const int64_t *sorted, size_t n, double p)
{
        size_t i = (size_t)(p * (double)(n - 1) + 0.5);
        return n ? (double)sorted[i < n ? i : n - 1] / 1000.0 : 0;
}

static double ratio(const bl_series_t *row, const bl_series_t *base)
{
        double b = bl_pct(base->v, base->n, .5);
        return row->n && base->n && b > 0 ? bl_pct(row->v, row->n, .5) / b : 0;
}

void bl_table(const char *title,
              bl_series_t *s,
              size_t ns,
              const size_t *base,
              size_t nb)
{
        size_t i, j;

        for (i = 0; i < ns; i++)
                qsort(s[i].v, s[i].n, sizeof(*s[i].v), bl_cmp64);
        printf(
            "\n### %s (ms)\n\n| %-36s |    n |    p50   |    p90   |"
            "    p99   |    max   |",
            title, "variant");
        for (j = 0; j < nb; j++)
                printf(" vs %-7s |", s[base[j]].tag);
        printf("\n|---|---|---|---|---|---|");
        for (j = 0; j < nb; j++)
                printf("---|");
        printf("\n");
        for (i = 0; i < ns; i++) {
                const bl_series_t *r = &s[i];
                if (!r->n) {
                        printf(
                            "| %-36s |    0 |        - |        - |"
                            "        - |        - |",
                            r->name);
                        for (j = 0; j < nb; j++)
                                printf("          - |");
                        printf("\n");
                        continue;
                }
                printf("| %-36s | %4zu | %8.2f | %8.2f | %8.2f | %8.2f |",
                       r->name, r->n, bl_pct(r->v, r->n, .5),
                       bl_pct(r->v, r->n, .9), bl_pct(r->v, r->n, .99),
                       (double)r->v[r->n - 1] / 1000.0);
                for (j = 0; j < nb; j++) {
                        double x = ratio(r, &s[base[j]]);
                        if (x > 0)
                                printf(" %9.2fx |", x);
                        else
                                printf("          - |");
                }
                printf("\n");
        }
}

json_t *bl_table_json(const char *title,
                      const bl_series_t *s,
                      size_t ns,
                      const size_t *base,
                      size_t nb)
{
        json_t *rows = json_array();
        size_t i, j;

        for (i = 0; i < ns; i++) {
                const bl_series_t *r = &s[i];
                json_t *vs = json_object(), *samples = json_array();
                for (j = 0; j < nb; j++) {
                        double x = ratio(r, &s[base[j]]);
                        json_object_set_new(vs, s[base[j]].tag,
                                            x > 0 ? json_real(x) : json_null());
                }
                for (j = 0; j < r->n; j++)
                        json_array_append_new(
                            samples, json_real((double)r->v[j] / 1000.0));
                json_array_append_new(
                    rows,
                    json_pack("{s:s, s:s, s:I, s:f, s:f, s:f, s:f, s:o, s:o}",
                              "name", r->name, "tag", r->tag ? r->tag : "",
                              "count", (json_int_t)r->n, "p50_ms",
                              bl_pct(r->v, r->n, .5), "p90_ms",
                              bl_pct(r->v, r->n, .9), "p99_ms",
                              bl_pct(r->v, r->n, .99), "max_ms",
                              r->n ? (double)r->v[r->n - 1] / 1000.0 : 0.0,
                              "vs", vs, "samples_ms", samples));
        }
        return json_pack("{s:s, s:o}", "title", title, "rows", rows);
}

int bl_json_write(const json_t *root, const char *path)
{
        if (json_dump_file(
                root, path,
                JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(6))) {
                fprintf(stderr, "bench: cannot write %s\n", path);
                return -1;
        }
        return 0;
}

size_t bl_parse_list(const char *s, long *out, size_t max)
{
        size_t n = 0;
        char *end;

        while (s && *s && n < max) {
                errno  = 0;
                long v = strtol(s, &end, 10);
                if (errno || end == s || v <= 0 || (*end && *end != ','))
                        return 0;
                out[n++] = v;
                s        = *end ? end + 1 : end;
        }
        return s && *s ? 0 : n;
}

long long bl_file_num(const char *path, const char *key)
{
        char *s     = NULL, *p;
        long long v = -1;

        if (sbx_read_file(path, 1 << 20, &s, NULL, NULL, 0))
                return -1;
        for (p = s; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
                if (!strncmp(p, key, strlen(key))) {
                        v = strtoll(p + strlen(key), NULL, 10);
                        break;
                }
        free(s);
        return v;
}

int bl_run(const char *const *argv, const char *const *envp, int quiet)
{
        posix_spawn_file_actions_t fa;
        pid_t pid;
        int st, rc;

        posix_spawn_file_actions_init(&fa);
        if (quiet) {
                posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY,
                                                 0);
                posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY,
                                                 0);
                posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY,
                                                 0);
        }
        rc = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv,
                         (char *const *)envp);
        posix_spawn_file_actions_destroy(&fa);
        if (rc)
                return -1;
        while (waitpid(pid, &st, 0) < 0)
                if (errno != EINTR)
                        return -1;
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

size_t bl_bwrap_argv(const char *bwrap,
                     const char *const *argv,
                     const char **out,
                     size_t max)
{
        static const char *const pre[] = {"--unshare-all",
                                          "--die-with-parent",
                                          "--ro-bind",
                                          "/",
                                          "/",
                                          "--dev",
                                          "/dev",
                                          "--proc",
                                          "/proc"};
        size_t k                       = 0, i;
        if (max < 2 + sizeof(pre) / sizeof(pre[0]))
                return 0;
        out[k++] = bwrap;
        for (i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
                out[k++] = pre[i];
        for (i = 0; argv[i]; i++) {
                if (k + 1 >= max)
                        return 0;
                out[k++] = argv[i];
        }
        out[k] = NULL;
        return k;
}
