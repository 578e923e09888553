/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What test_agent.c needs around its tests: a fixture that starts the
 * sbx-agent binary as a child of the test (with --no-pid1, or as PID 1 of
 * a new PID namespace through unshare) in a fresh directory and connects
 * to it with the client, stops it with SIGTERM checking that it exits 0
 * and removes its socket, and cleans up; execs that collect their output;
 * and looks at processes through /proc.
 */
#ifndef SBX_TEST_AGENT_FIXTURE_H
#define SBX_TEST_AGENT_FIXTURE_H

#include <stdint.h>
#include <sys/types.h>

#include "agent/client.h"

typedef struct fixture_s {
        const char *agent_path;
        char dir[64], sock[128], tmp[128];
        pid_t agent;     /* our child: the agent, or unshare running it */
        pid_t agent_pid; /* the agent's pid here (its own pid, if not 1) */
        pid_t bystander; /* a process of the test's own, killed at the end */
        sbx_agent_conn_t *conn;
} fixture_t;

typedef struct bytes_s {
        uint8_t *data;
        size_t len;
} bytes_t;

typedef struct result_s {
        bytes_t out, err;
        sbx_agent_exit_t exit;
        uint64_t exec_id;
        _Atomic int started; /* read by another thread in one test */
        int pid, cancel_on_start;
        char errstr[512];
} result_t;

typedef struct pstat_s {
        int pid, ppid, pgrp;
        char state;
} pstat_t;

/** cmocka setup: *state is the agent's path on entry, the fixture after. */
int setup(void **state);
/** Same, the agent being PID 1 of a new PID namespace (needs root; without
 *  it the fixture has no agent and the test must skip). */
int setup_pid1(void **state);
/** cmocka teardown: stop_agent() if it runs, kill the bystander, remove
 *  the directory. Fails if the agent did not exit cleanly. */
int teardown(void **state);
/** SIGTERM to the agent: 0 if it exits 0 within 5 s without its socket. */
int stop_agent(fixture_t *fx);

/** Runs @p req on @p conn, collecting output and exit in @p r. */
sbx_err_t run_req(sbx_agent_conn_t *conn,
                  const sbx_agent_exec_req_t *req,
                  result_t *r);
/** Runs @p argv with PATH=/usr/bin:/bin as its only environment. */
sbx_err_t run(fixture_t *fx,
              const char *const *argv,
              uint32_t deadline_ms,
              result_t *r);
/** Runs sh -c @p script, asserts success, returns the number it printed. */
int run_sh_pid(fixture_t *fx, const char *script);
void result_free(result_t *r);

/** Reads /proc/<pid>/stat; -1 if there is no such process. */
int read_pstat(int pid, pstat_t *ps);
/** Counts processes whose parent (or process group, if @p by_pgrp) is
 *  @p v, only zombies if @p zombies_only. */
int count_procs(int v, int by_pgrp, int zombies_only);
/** 1 once /proc/<pid> is gone (dead and reaped), polled for @p ms. */
int gone_within(int pid, long ms);
void sleep_ms(long ms);
int64_t now_ms(void);
/** Writes @p content to @p dir/@p name, then sets @p mode. */
void make_file(const char *dir,
               const char *name,
               const char *content,
               mode_t mode);

#endif
