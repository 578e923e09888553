/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The wire protocol between the executor and sbx-agent, PID 1 of every
 * sandbox: frames over a unix stream socket, each an 8-byte header (magic
 * 0xA9, version 1, frame type, reserved zero byte, body length as a
 * big-endian u32 of at most SBX_AGENT_MAX_BODY) and a body of big-endian
 * fixed-width integers and u32-length-prefixed strings and byte strings.
 * The encoding is canonical: a frame the decoder accepts re-encodes to the
 * same bytes. The decoder is incremental, never reads past what it was
 * given, never allocates before the header is validated nor more than the
 * body plus one pointer per string, and rejects every malformed input with
 * a reason; a stream with a bad frame cannot be resynchronised, so after
 * an error the decoder keeps failing.
 */
#ifndef SBX_AGENT_PROTO_H
#define SBX_AGENT_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "sbx/err.h"

#define SBX_AGENT_MAGIC      0xA9
#define SBX_AGENT_VERSION    1
#define SBX_AGENT_HEADER_LEN 8
#define SBX_AGENT_MAX_BODY   (1024 * 1024) /* 1 MiB per frame */
#define SBX_AGENT_MAX_ARGS   32768         /* argv and env entries, each */

typedef enum sbx_agent_ftype_e {
        SBX_AGENT_F_NONE       = 0, /* no frame (incomplete input) */
        SBX_AGENT_F_PING       = 1, /* -> agent: nonce */
        SBX_AGENT_F_PONG       = 2, /* <- agent: the ping's nonce */
        SBX_AGENT_F_EXEC       = 3, /* -> agent: run a program */
        SBX_AGENT_F_STARTED    = 4, /* <- agent: execve succeeded, pid */
        SBX_AGENT_F_STDOUT     = 5, /* <- agent: a chunk of output */
        SBX_AGENT_F_STDERR     = 6,
        SBX_AGENT_F_EXIT       = 7,  /* <- agent: the exec is over */
        SBX_AGENT_F_CANCEL     = 8,  /* -> agent: kill an exec's group */
        SBX_AGENT_F_RESET      = 9,  /* -> agent: soft reset */
        SBX_AGENT_F_RESET_DONE = 10, /* <- agent: what the reset did */
        SBX_AGENT_F_ERROR      = 11, /* <- agent: a request failed */
        SBX_AGENT_F__CNT
} sbx_agent_ftype_t;

/* Codes of ERROR frames. */
typedef enum sbx_agent_ecode_e {
        SBX_AGENT_E_PROTO   = 1, /* malformed frame; the agent hangs up */
        SBX_AGENT_E_INVALID = 2, /* well-formed but unacceptable request */
        SBX_AGENT_E_BUSY    = 3, /* too many connections or execs */
        SBX_AGENT_E_SPAWN   = 4, /* fork, chdir, set*id or execve failed */
        SBX_AGENT_E_RESET   = 5, /* the reset could not finish */
        SBX_AGENT_E__CNT
} sbx_agent_ecode_t;

/* EXEC flags. */
#define SBX_AGENT_EXEC_UID 0x01 /* run as uid, no supplementary groups */
#define SBX_AGENT_EXEC_GID 0x02 /* run as gid, no supplementary groups */

/* EXIT flags. */
#define SBX_AGENT_EXIT_TIMED_OUT 0x01 /* killed at the deadline */
#define SBX_AGENT_EXIT_CANCELLED 0x02 /* killed by CANCEL */

/*
 * An exec request. Pointers are borrowed by the encoder; in a decoded
 * frame they point into the frame's own memory. argv has at least one
 * element, a non-empty argv[0], and is NULL-terminated, as is envp (whose
 * entries are "NAME=value" with a non-empty NAME). No string holds a NUL.
 */
typedef struct sbx_agent_exec_req_s {
        uint64_t exec_id;     /* non-zero, unique among running execs */
        uint32_t deadline_ms; /* 0: none; else SIGKILL the group then */
        uint32_t flags;       /* SBX_AGENT_EXEC_* */
        uint32_t uid, gid;    /* meaningful with the flags above */
        const char *cwd;      /* "" or NULL: the agent's own cwd */
        const char *const *argv;
        const char *const *envp;   /* exactly the environment, NULL = empty */
        const uint8_t *stdin_data; /* fed to the program, then EOF */
        size_t stdin_len;
} sbx_agent_exec_req_t;

/* How an exec ended. */
typedef struct sbx_agent_exit_s {
        int exit_code;    /* 0..255, or -1 when killed by a signal */
        int signal;       /* 0, or the signal that killed it */
        int timed_out;    /* 1 if the deadline killed it */
        int cancelled;    /* 1 if CANCEL killed it */
        uint64_t wall_us; /* fork to reap */
        uint64_t user_us; /* CPU of the program and its waited children */
        uint64_t sys_us;
        uint64_t maxrss_kb; /* peak resident set of the largest of them */
} sbx_agent_exit_t;

/*
 * One frame; which fields mean something depends on type. The encoder
 * borrows every pointer; a decoded frame owns them until
 * sbx_agent_frame_clear().
 */
typedef struct sbx_agent_frame_s {
        sbx_agent_ftype_t type;
        uint64_t exec_id;    /* STARTED STDOUT STDERR EXIT CANCEL ERROR */
        uint64_t nonce;      /* PING PONG */
        int32_t pid;         /* STARTED: > 0 */
        const uint8_t *data; /* STDOUT STDERR */
        size_t data_len;
        sbx_agent_exec_req_t exec; /* EXEC (exec.exec_id, not exec_id) */
        sbx_agent_exit_t exit;     /* EXIT */
        uint32_t level;            /* RESET: 1 is the only level */
        uint32_t killed;           /* RESET_DONE: processes killed */
        uint32_t tmp_removed;      /* RESET_DONE: entries wiped */
        uint32_t tmp_failed;       /* RESET_DONE: entries left behind */
        uint32_t code;             /* ERROR: sbx_agent_ecode_t */
        int32_t sys_errno;         /* ERROR: errno behind it, or 0 */
        const char *message;       /* ERROR: for a human */
        void *mem_;                /* decoded frames: what they own */
        char **argv_;
        char **envp_;
} sbx_agent_frame_t;

/* A growable byte buffer: the encoder appends to it. */
typedef struct sbx_agent_buf_s {
        uint8_t *data;
        size_t len, cap;
} sbx_agent_buf_t;

/** Frees what @p buf holds and empties it. */
void sbx_agent_buf_free(sbx_agent_buf_t *buf);
/** Drops the first @p n bytes of @p buf (n <= len). */
void sbx_agent_buf_consume(sbx_agent_buf_t *buf, size_t n);

/** Name of a frame type ("EXEC"), "?" if unknown. */
const char *sbx_agent_ftype_name(int type);

/**
 * Appends the encoding of @p frame (borrowed) to @p out. Rejects, with a
 * reason and @p out unchanged, what the decoder would reject: a body over
 * SBX_AGENT_MAX_BODY, a zero exec id, a NUL in a string, and so on.
 */
sbx_err_t sbx_agent_frame_encode(const sbx_agent_frame_t *frame,
                                 sbx_agent_buf_t *out,
                                 char *errstr,
                                 size_t errstr_size);

/** Frees what a decoded @p frame owns and zeroes it; NULL is fine. */
void sbx_agent_frame_clear(sbx_agent_frame_t *frame);

typedef struct sbx_agent_dec_s sbx_agent_dec_t;

/** A decoder at the start of a stream. */
sbx_agent_dec_t *sbx_agent_dec_new(void);
/** Frees @p dec and a partial frame it holds; NULL is fine. */
void sbx_agent_dec_destroy(sbx_agent_dec_t *dec);

/**
 * Feeds bytes of the stream: consumes @p data (borrowed) up to the end of
 * the next frame at most. On success *ret_used is how much of it was
 * consumed and *ret_frame is either a complete frame (the caller owns it:
 * sbx_agent_frame_clear) or, when all of @p data went into a frame not
 * yet complete, of type SBX_AGENT_F_NONE. Call again with the rest.
 * Malformed input: SBX_ERR_INVALID or SBX_ERR_TOOBIG with the reason, and
 * the same error on every later call.
 */
sbx_err_t sbx_agent_dec_feed(sbx_agent_dec_t *dec,
                             const uint8_t *data,
                             size_t len,
                             size_t *ret_used,
                             sbx_agent_frame_t *ret_frame,
                             char *errstr,
                             size_t errstr_size);

/**
 * The end of the stream: SBX_OK if it fell between frames, else
 * SBX_ERR_INVALID saying how much of which frame was missing.
 */
sbx_err_t sbx_agent_dec_eof(const sbx_agent_dec_t *dec,
                            char *errstr,
                            size_t errstr_size);

#endif
