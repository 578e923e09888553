/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the benchmark programs share: percentiles of µs samples (nearest
 * rank, the same rule in every program), the side-by-side table with the
 * ratio of each row's p50 to each baseline's, its JSON form, small
 * parsers for flags, and spawning a command the way a bare baseline does.
 * Benchmarks measure and print; nothing here judges a number.
 */
#ifndef SBX_BENCHLIB_H
#define SBX_BENCHLIB_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* One variant's samples, in µs. */
typedef struct bl_series_s {
        const char *name; /**< row label (borrowed) */
        const char *tag;  /**< short name for ratio columns (borrowed) */
        int64_t *v;       /**< samples; sorted in place by bl_table() */
        size_t n;
} bl_series_t;

/* Set by SIGINT or SIGTERM once bl_catch_stop() ran: a benchmark checks
 * it between steps, then cleans up what it made and exits. */
extern volatile sig_atomic_t bl_stop;

/** Makes SIGINT and SIGTERM set bl_stop (SA_RESTART: calls go on). */
void bl_catch_stop(void);

/** qsort comparator of int64_t. */
int bl_cmp64(const void *a, const void *b);

/** Percentile @p p (0..1) of @p n sorted µs samples, in ms; 0 if n is 0. */
double bl_pct(const int64_t *sorted, size_t n, double p);

/**
 * Sorts every series and prints "### title (ms)" and a Markdown table:
 * count, p50, p90, p99, max and, for each index in @p base, the ratio of
 * the row's p50 to that baseline's ("vs <tag>"). Series with no sample
 * are printed as "-".
 */
void bl_table(const char *title,
              bl_series_t *s,
              size_t ns,
              const size_t *base,
              size_t nb);

/**
 * The same table as JSON (new reference): {"title", "rows": [{"name",
 * "count", "p50_ms", "p90_ms", "p99_ms", "max_ms", "vs": {tag: ratio},
 * "samples_ms": [...]}]}. Call after bl_table() (or on sorted series).
 */
json_t *bl_table_json(const char *title,
                      const bl_series_t *s,
                      size_t ns,
                      const size_t *base,
                      size_t nb);

/** Writes @p root to @p path (indented); 0, or -1 saying why on stderr. */
int bl_json_write(const json_t *root, const char *path);

/**
 * Parses "10,100,300" into @p out (at most @p max positive values);
 * returns how many, or 0 if the list is empty or malformed.
 */
size_t bl_parse_list(const char *s, long *out, size_t max);

/**
 * The number after @p key at the start of a line of file @p path (e.g.
 * "VmRSS:" in /proc/self/status, "rss " in memory.stat; "" for the first
 * number of the file), or -1 if the file or the key is missing.
 */
long long bl_file_num(const char *path, const char *key);

/**
 * Runs @p argv (argv[0] absolute) with @p envp and waits: stdin, stdout
 * and stderr are /dev/null when @p quiet. Returns the exit status, 128+N
 * for signal N, or -1 if it could not be started.
 */
int bl_run(const char *const *argv, const char *const *envp, int quiet);

/**
 * Fills @p out (room for @p max pointers) with the bwrap baseline of
 * @p argv (NULL-terminated): @p bwrap with every namespace unshared, the
 * host's root read-only, its own /dev and /proc, then argv; NULL-
 * terminated. Returns the count, or 0 if it does not fit.
 */
size_t bl_bwrap_argv(const char *bwrap,
                     const char *const *argv,
                     const char **out,
                     size_t max);

#endif
