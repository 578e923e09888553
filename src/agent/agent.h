/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internals of sbx-agent shared by its main loop (agent.c) and its exec
 * machinery (exec.c). One thread, one poll loop: the agent serves up to
 * SBX_AGENTD_MAX_CONNS connections and SBX_AGENTD_MAX_EXECS running execs
 * at once. An exec belongs to the connection that started it, which gets
 * its output and EXIT; a CANCEL may come from any connection. When a
 * connection goes away its execs are killed, and their output is read and
 * dropped until they are reaped.
 */
#ifndef SBX_AGENT_AGENT_H
#define SBX_AGENT_AGENT_H

#include <poll.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "agent/proto.h"

#define SBX_AGENTD_MAX_CONNS 16
#define SBX_AGENTD_MAX_EXECS 64
#define SBX_AGENTD_CHUNK     65536 /* bytes per pipe read: one frame */
/* A connection with this much unsent stops its execs' pipes being read. */
#define SBX_AGENTD_OUT_HIGH (512 * 1024)
/* After the program exits, how long a quiet pipe still held open by a
 * background process is drained before it is closed. */
#define SBX_AGENTD_LINGER_US 100000

typedef struct sbx_agentd_conn_s {
        int fd;
        int pidx; /* index in the poll set, -1 if not in it */
        sbx_agent_dec_t *dec;
        sbx_agent_buf_t out; /* encoded frames not yet sent */
} sbx_agentd_conn_t;

/* The pipes of an exec, in this order in fds[] and pidx[]. */
enum {
        SBX_AGENTD_STATUS,
        SBX_AGENTD_STDIN,
        SBX_AGENTD_STDOUT,
        SBX_AGENTD_STDERR,
        SBX_AGENTD_NFDS
};

typedef struct sbx_agentd_exec_s {
        uint64_t id;
        sbx_agentd_conn_t *conn;  /* NULL once the connection is gone */
        pid_t pid;                /* the leader; also the process group */
        int fds[SBX_AGENTD_NFDS]; /* our ends, -1 once closed */
        int pidx[SBX_AGENTD_NFDS];
        sbx_agent_frame_t req; /* the EXEC frame, until stdin is fed */
        char *argv0, *cwd;     /* for a spawn error's message */
        size_t stdin_off;
        int64_t start_us, end_us;
        unsigned long long start_ticks; /* the leader's /proc starttime */
        int start_known;
        int64_t deadline_us; /* 0: none or passed */
        int64_t linger_us;   /* 0: not lingering */
        int started;         /* execve succeeded and STARTED was queued */
        int spawn_stage;     /* > 0: the child failed at this step */
        int spawn_errno;
        int reaped, status;
        struct rusage ru;
        int timed_out, cancelled;
} sbx_agentd_exec_t;

typedef struct sbx_agentd_s {
        const char *socket_path;
        const char *tmp_dir; /* wiped by RESET; NULL: nothing to wipe */
        int pid1;            /* PID 1 of a sandbox: RESET kills everyone */
        pid_t self;
        mode_t child_umask;
        char *start_cwd;
        int listen_fd, sig_fd;
        int stop;
        uint8_t *iobuf; /* SBX_AGENTD_CHUNK bytes */
        sbx_agentd_conn_t *conns[SBX_AGENTD_MAX_CONNS];
        sbx_agentd_exec_t *execs[SBX_AGENTD_MAX_EXECS];
        struct pollfd pfds[2 + SBX_AGENTD_MAX_CONNS +
                           SBX_AGENTD_NFDS * SBX_AGENTD_MAX_EXECS];
        nfds_t npfds;
} sbx_agentd_t;

/** Queues @p frame (borrowed) on @p c; a frame that cannot be encoded is
 *  an agent bug and aborts. */
void sbx_agentd_send(sbx_agentd_conn_t *c, const sbx_agent_frame_t *frame);

/** Queues an ERROR frame about @p exec_id (0: none) on @p c. */
void sbx_agentd_send_error(sbx_agentd_conn_t *c,
                           uint64_t exec_id,
                           sbx_agent_ecode_t code,
                           int sys_errno,
                           const char *fmt,
                           ...) __attribute__((format(printf, 5, 6)));

/** Starts the exec of EXEC frame @p req (taken over) for @p c, or
 *  answers with an ERROR frame. */
void sbx_agentd_exec_start(sbx_agentd_t *a,
                           sbx_agentd_conn_t *c,
                           sbx_agent_frame_t *req);

/** SIGKILLs the process group of @p e unless it was reaped. */
void sbx_agentd_exec_kill(sbx_agentd_exec_t *e);

/**
 * SIGKILLs what exec @p e left outside its process group while it ran
 * (setsid, a double fork): every process started since its leader that
 * is in no other running exec's session. For the deadline and CANCEL,
 * after sbx_agentd_exec_kill(): a timed-out exec must not go on running.
 */
void sbx_agentd_exec_kill_escaped(sbx_agentd_t *a, sbx_agentd_exec_t *e);

/** Adds the pipes of every exec worth polling to a->pfds. */
void sbx_agentd_exec_pollset(sbx_agentd_t *a, int64_t now);

/** Handles what poll reported on the execs' pipes. */
void sbx_agentd_exec_io(sbx_agentd_t *a, int64_t now);

/** Deadlines and lingering pipes: acts on those due at @p now and
 *  returns the poll timeout in ms to the next one (-1: none). */
int sbx_agentd_exec_timers(sbx_agentd_t *a, int64_t now);

/** Reaps every child that exited; records the status of execs. */
void sbx_agentd_reap(sbx_agentd_t *a);

/** Sends EXIT (or ERROR) for execs that are over, and frees them. */
void sbx_agentd_exec_finish(sbx_agentd_t *a);

/** Frees every exec without a word to anyone: the agent is exiting. */
void sbx_agentd_exec_drop_all(sbx_agentd_t *a);

#endif
