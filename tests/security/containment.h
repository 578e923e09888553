/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the attacks of the containment suite share (containment.c): the
 * box — a test's sandbox and what the test made on the host beside it,
 * all removed by box_teardown() — running python or any argv in it through
 * the agent, reading and asserting on what an attack printed, host-side
 * checks, and the sampler that watches the sandbox and the host while an
 * attack runs. The attacks themselves are in attack_fs.c,
 * attack_limits.c and attack_kernel.c; test_containment.c runs them.
 */
#ifndef SBX_TEST_CONTAINMENT_H
#define SBX_TEST_CONTAINMENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "agent_fixture.h"
#include "runtime_fixture.h"

#define MAX_RESULTS    8
#define MAX_CLEANUPS   8
#define MAX_LISTENERS  8
#define PY_DEADLINE_MS 60000

/* The run: which runtime, which agent binary, the runtime fixture. */
typedef struct suite_s {
        const char *runtime;
        const char *agent;
        rtfx_t fx;
} suite_t;

extern suite_t S;

/* Limits of a test's sandbox. */
typedef struct limits_s {
        int64_t memory_mb, pids_max, disk_mb, tmp_mb;
} limits_t;

extern const limits_t default_limits;

/* What the sampler saw while an attack ran. */
typedef struct watch_s {
        struct box_s *box;
        pthread_t thread;
        atomic_int stop;
        uint64_t max_pids, max_memory;
        int samples, spawn_ok, spawn_failed, ping_ok, ping_failed;
} watch_t;

/* A test's sandbox and what the test made on the host beside it. */
typedef struct box_s {
        const char *id;
        limits_t lim;
        char ws[600], sockdir[600], sock[700];
        sbx_agent_conn_t *conn;
        int may_die; /* the attack may take the whole sandbox down */
        result_t results[MAX_RESULTS];
        int n_results;
        char *code;     /* the last python script, freed at teardown */
        pid_t host_pid; /* killed at teardown */
        char cleanup[MAX_CLEANUPS][600]; /* host trees removed then */
        int n_cleanup;
        int listeners[MAX_LISTENERS], n_listeners; /* closed then */
        watch_t watch;                             /* stopped then if it runs */
        int watching;
} box_t;

/* ---- the box: a sandbox with sbx-agent as PID 1 ---- */

/** cmocka setup and teardown of every attack: *state is the box. */
int box_setup(void **state);
int box_teardown(void **state);
/** Removes the host tree @p dir at teardown. */
void box_remember(box_t *b, const char *dir);
/** Creates the box's sandbox (named @p tag) with @p lim (NULL: the
 *  defaults) and connects to its agent. A box started again after
 *  box_stop() keeps its workspace. */
void box_start(box_t *b, const char *tag, const limits_t *lim);
/** Deletes the box's sandbox and checks that it left nothing. */
void box_stop(box_t *b);

/* ---- running attacks ---- */

/** Runs @p argv in the box as root, cwd /, into @p r (the caller's). */
sbx_err_t exec_into(box_t *b,
                    const char *const *argv,
                    uint32_t deadline_ms,
                    result_t *r);
/** Runs @p argv in the box; the result is the box's (freed at teardown).
 *  If b->may_die, the agent going away mid-exec is a result too: errstr
 *  then says so. */
result_t *exec_in(box_t *b, const char *const *argv, uint32_t deadline_ms);
/** Runs the python prelude + @p script with python3 and the
 *  NULL-terminated arguments that follow (sys.argv[1:]). The prelude's
 *  attempt(label, fn) prints "<label> OK <value>" or "<label> ERR
 *  <ERRNO>"; sys_call(nr, ...) is a raw syscall. */
result_t *py(box_t *b, uint32_t deadline_ms, const char *script, ...);

/* ---- what an attack saw ---- */

/** Its stdout and stderr, "" if none; owned by @p r. */
const char *out_of(const result_t *r);
const char *err_of(const result_t *r);
/** Prints what @p attack saw inside, line by line, for the record. */
void show(const char *attack, const result_t *r);
/** The rest of the output line whose first word is @p label, or NULL. */
const char *line_of(const result_t *r, const char *label);
/** Asserts that step @p label of the script ran and failed. */
void expect_failed(const result_t *r, const char *label);
/** Asserts that the script ran to its end ("done"), exit 0. */
void expect_completed(const result_t *r);

/* ---- the host ---- */

/** Fails the test if @p path exists on the host. */
void expect_absent(const char *path);
/** The host file @p path, or fails the test; the caller frees it. */
char *host_read(const char *path);
/** Listens on @p addr, port 0 for IP, the listener closed at teardown;
 *  "host port" of it in @p host (may be NULL). */
void listen_on(box_t *b,
               const struct sockaddr *addr,
               socklen_t len,
               char *host,
               size_t size);
/** 1 if a connection waits on listener @p fd within @p ms. */
int has_connection(int fd, int ms);

/* ---- the sampler: usage of the sandbox and the host's pulse ---- */

/** Starts sampling @p b; its teardown stops it if the test does not. */
watch_t *watch_start(box_t *b);
/** Stops sampling and prints what the sampler saw. */
void watch_stop(box_t *b);
/** The host kept working while the attack ran: it could start programs. */
void expect_host_responsive(const watch_t *w);

/* ---- the attacks: one cmocka test each ---- */

/* attack_fs.c */
void test_read_host_secret(void **state);
void test_write_outside(void **state);
void test_disk_fill(void **state);
void test_workspace_symlink(void **state);
/* attack_limits.c */
void test_fork_bomb(void **state);
void test_memory_bomb(void **state);
void test_pids_limit(void **state);
void test_past_deadline(void **state);
/* attack_kernel.c */
void test_network(void **state);
void test_mount(void **state);
void test_ptrace_host(void **state);
void test_proc_sys(void **state);
void test_kernel_module(void **state);

#endif
