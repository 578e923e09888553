/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What bench_planner_fit shares with bench_fit_corpus.c: the workload
 * corpus (tests/bench/workloads/, one script per workload whose comment
 * header is the task an agent would have described) and a box that runs
 * one workload in a fresh runc sandbox of a given size through sbx-agent,
 * measuring it the way the executor does (stages/executor_runc.c): peak
 * memory from the sandbox's cgroup, CPU and wall time from the agent's
 * rusage, an OOM when the cgroup's OOM-kill count grew and the program
 * died of SIGKILL (or the sandbox died). Every sandbox a box makes is
 * deleted before the call that made it returns.
 */
#ifndef SBX_BENCH_FIT_H
#define SBX_BENCH_FIT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "sbx/err.h"

typedef struct fit_workload_s {
        char *name;   /* file name without its extension */
        char *interp; /* from the #! line, e.g. /usr/bin/python3 */
        char *dest;   /* where it is written in the sandbox */
        char *body;   /* the whole file */
        size_t len;
        char *does;   /* header "does:", for humans */
        json_t *task; /* the ClaimRequested task the header describes */
} fit_workload_t;

typedef struct fit_corpus_s {
        fit_workload_t *v;
        size_t n;
} fit_corpus_t;

/**
 * Loads every regular file of @p dir in name order. A file whose header
 * is malformed, or whose interpreter or "needs:" path is missing on this
 * host, is left out with a line on stderr saying why. Fails only if @p dir
 * cannot be read or nothing is left.
 */
sbx_err_t fit_corpus_load(const char *dir,
                          fit_corpus_t *ret,
                          char *errstr,
                          size_t errstr_size);
void fit_corpus_clear(fit_corpus_t *c);

typedef struct fit_box_s fit_box_t;

/** What one run measured. */
typedef struct fit_result_s {
        int oom;       /* killed by the cgroup's OOM killer */
        int exit_code; /* 0..255, 128 + signal, or -1: never ran */
        int timed_out;
        double peak_mb; /* cgroup memory.max_usage_in_bytes, MiB */
        double cpu;     /* cores: (user + sys) / wall */
        int64_t wall_us, user_us, sys_us;
        uint64_t peak_bytes, maxrss_kb;
        char tail[128]; /* last line of output, printable ASCII */
} fit_result_t;

/**
 * A box for sandboxes under <@p var_dir>/run/fit with the host template
 * of <@p var_dir>/templates/host and the agent binary @p agent (both
 * borrowed). Deletes what an earlier, dead run of this program left there.
 */
fit_box_t *fit_box_new(const char *var_dir,
                       const char *agent,
                       char *errstr,
                       size_t errstr_size);
void fit_box_destroy(fit_box_t *b);

/**
 * Runs @p w in a new sandbox of @p memory_mb and @p cpu cores, then
 * deletes the sandbox; *ret says how it went (an OOM or a failing
 * workload is a result, not an error). Errors: the sandbox could not be
 * made or the agent not reached, in @p errstr.
 */
sbx_err_t fit_box_run(fit_box_t *b,
                      const fit_workload_t *w,
                      int64_t memory_mb,
                      double cpu,
                      fit_result_t *ret,
                      char *errstr,
                      size_t errstr_size);

#endif
