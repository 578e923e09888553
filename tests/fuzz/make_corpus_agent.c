/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Writes the seed corpus of fuzz_agent_proto into the directory named on
 * the command line: one input per frame type, a stream of all of them fed
 * in odd-sized pieces, and a few refusals (bad magic, oversized, truncated)
 * so the fuzzer starts from both sides of every check. Each input is byte
 * 0 (the piece size, 0 for whole) followed by the stream.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/proto.h"

static int write_seed(const char *dir,
                      const char *name,
                      uint8_t step,
                      const uint8_t *data,
                      size_t len)
{
        char path[4096];
        FILE *f;
        int rc;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        if (!(f = fopen(path, "wb"))) {
                perror(path);
                return -1;
        }
        rc = fwrite(&step, 1, 1, f) != 1 ||
             (len && fwrite(data, 1, len, f) != len);
        rc |= fclose(f);
        return rc ? -1 : 0;
}

int main(int argc, char **argv)
{
        static const char *const xargv[] = {"sh", "-c", "echo hi", NULL};
        static const char *const xenv[]  = {"PATH=/usr/bin:/bin", "A=", NULL};
        static const uint8_t bytes[]     = {'h', 'i', '\n', 0, 0xff};
        sbx_agent_frame_t frames[]       = {
                  {.type = SBX_AGENT_F_PING, .nonce = 1},
                  {.type = SBX_AGENT_F_PONG, .nonce = 1},
                  {.type = SBX_AGENT_F_EXEC,
                   .exec = {.exec_id     = 7,
                            .deadline_ms = 1000,
                            .flags       = SBX_AGENT_EXEC_UID | SBX_AGENT_EXEC_GID,
                            .uid         = 1000,
                            .gid         = 1000,
                            .cwd         = "/workspace",
                            .argv        = xargv,
                            .envp        = xenv,
                            .stdin_data  = bytes,
                            .stdin_len   = sizeof(bytes)}},
                  {.type = SBX_AGENT_F_STARTED, .exec_id = 7, .pid = 42},
                  {.type     = SBX_AGENT_F_STDOUT,
                   .exec_id  = 7,
                   .data     = bytes,
                   .data_len = sizeof(bytes)},
                  {.type     = SBX_AGENT_F_STDERR,
                   .exec_id  = 7,
                   .data     = bytes,
                   .data_len = 3},
                  {.type    = SBX_AGENT_F_EXIT,
                   .exec_id = 7,
                   .exit    = {.exit_code = -1,
                               .signal    = 9,
                               .timed_out = 1,
                               .wall_us   = 300000,
                               .user_us   = 10,
                               .sys_us    = 20,
                               .maxrss_kb = 1024}},
                  {.type = SBX_AGENT_F_CANCEL, .exec_id = 7},
                  {.type = SBX_AGENT_F_RESET, .level = 1},
                  {.type = SBX_AGENT_F_RESET_DONE, .killed = 2, .tmp_removed = 5},
                  {.type      = SBX_AGENT_F_ERROR,
                   .exec_id   = 7,
                   .code      = SBX_AGENT_E_SPAWN,
                   .sys_errno = 2,
                   .message   = "execve nope: No such file or directory"},
        };
        static const uint8_t bad_magic[] = {'G', 'E', 'T', ' ', '/'};
        static const uint8_t oversized[] = {
            SBX_AGENT_MAGIC, 1, 5, 0, 0x00, 0x10, 0x00, 0x01};
        sbx_agent_buf_t all = {0};
        char err[256], name[64];
        int rc = 0;

        if (argc != 2) {
                fprintf(stderr, "usage: %s DIR\n", argv[0]);
                return 2;
        }
        for (size_t i = 0; i < sizeof(frames) / sizeof(frames[0]); i++) {
                sbx_agent_buf_t one = {0};
                if (sbx_agent_frame_encode(&frames[i], &one, err,
                                           sizeof(err)) ||
                    sbx_agent_frame_encode(&frames[i], &all, err,
                                           sizeof(err))) {
                        fprintf(stderr, "encode: %s\n", err);
                        return 1;
                }
                snprintf(name, sizeof(name), "frame-%s",
                         sbx_agent_ftype_name(frames[i].type));
                for (char *p = name; *p; p++)
                        *p = (char)(*p == '_' ? '-' : *p | 0x20);
                rc |= write_seed(argv[1], name, 0, one.data, one.len);
                sbx_agent_buf_free(&one);
        }
        rc |= write_seed(argv[1], "stream-whole", 0, all.data, all.len);
        rc |= write_seed(argv[1], "stream-by-1", 1, all.data, all.len);
        rc |= write_seed(argv[1], "stream-by-7", 7, all.data, all.len);
        rc |=
            write_seed(argv[1], "stream-truncated", 13, all.data, all.len - 3);
        rc |= write_seed(argv[1], "bad-magic", 0, bad_magic, sizeof(bad_magic));
        rc |= write_seed(argv[1], "oversized", 0, oversized, sizeof(oversized));
        sbx_agent_buf_free(&all);
        return rc ? 1 : 0;
}
