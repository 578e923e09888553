/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The two halves of sbx-agent's level 1 reset that touch the system:
 * killing processes found in /proc and emptying a directory. Both are
 * written to be safe when the agent runs on a host for tests: the kill
 * reaches only the agent's descendants unless told it is PID 1, and the
 * wipe never follows a symbolic link nor crosses into another file system.
 */
#ifndef SBX_AGENT_RESET_H
#define SBX_AGENT_RESET_H

#include <sys/types.h>

#include "sbx/err.h"

/*
 * Narrows a kill to what an exec left behind: processes started after
 * process @p since_pid, which started at @p since (the starttime of
 * /proc/<pid>/stat, in clock ticks since boot; in the same tick, a higher
 * pid is later), whose session is none of @p spare (the sessions of
 * execs still running).
 */
typedef struct sbx_reset_scope_s {
        unsigned long long since;
        pid_t since_pid;
        const pid_t *spare;
        size_t n_spare;
} sbx_reset_scope_t;

/**
 * SIGKILLs every live process other than @p self: all of them if
 * @p everyone (the agent is PID 1 of the sandbox), else only descendants of
 * @p self (which must be a child subreaper so that orphans stay its
 * descendants); of those, only the ones in @p scope unless it is NULL.
 * Scans /proc again until a scan finds no process it has not
 * already killed, then calls @p reap (with @p opaque) until none of the
 * targets is left, zombies included, or two seconds have passed.
 * *ret_killed is the number of distinct processes killed. SBX_ERR_IO if
 * /proc cannot be read, SBX_ERR_RUNTIME if some survived.
 */
sbx_err_t sbx_reset_kill_procs(pid_t self,
                               int everyone,
                               const sbx_reset_scope_t *scope,
                               void (*reap)(void *opaque),
                               void *opaque,
                               unsigned *ret_killed,
                               char *errstr,
                               size_t errstr_size);

/** The starttime of process @p pid (see sbx_reset_scope_t); -1 if there
 *  is no such process. */
int sbx_reset_proc_start(pid_t pid, unsigned long long *ret_start);

/**
 * Removes everything inside @p dir (not @p dir itself). Symbolic links
 * are removed, never followed; directories on another file system (mount
 * points) are left alone and counted as failed. *ret_removed and
 * *ret_failed count entries. SBX_ERR_IO if @p dir cannot be opened.
 */
sbx_err_t sbx_reset_wipe_dir(const char *dir,
                             unsigned *ret_removed,
                             unsigned *ret_failed,
                             char *errstr,
                             size_t errstr_size);

#endif
