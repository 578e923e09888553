/* SPDX-License-Identifier: Apache-2.0 */
/*
 * End-to-end tests of sbx-agent without a container: each test starts the
 * agent binary named by argv[1] as its child with --no-pid1 (one test: as
 * PID 1 of a PID namespace), a socket and a tmp dir in a fresh directory,
 * and talks to it through the client (src/agent/client.c) as the executor
 * would. What a test says about processes it checks in /proc; every
 * teardown checks that SIGTERM makes the agent exit 0 and remove its
 * socket (agent_fixture.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_fixture.h"

static void test_echo_hello(void **state)
{
        fixture_t *fx      = *state;
        const char *argv[] = {"/bin/echo", "hello", NULL};
        result_t r         = {0};

        assert_int_equal(run(fx, argv, 5000, &r), SBX_OK);
        assert_int_equal(r.started, 1);
        assert_true(r.pid > 0);
        assert_string_equal((char *)r.out.data, "hello\n");
        assert_null(r.err.data);
        assert_int_equal(r.exit.exit_code, 0);
        assert_int_equal(r.exit.signal, 0);
        assert_false(r.exit.timed_out);
        assert_false(r.exit.cancelled);
        assert_true(r.exit.wall_us > 0);
        result_free(&r);
        assert_int_equal(sbx_agent_ping(fx->conn, r.errstr, sizeof(r.errstr)),
                         SBX_OK);
}

static void test_stderr_exit_code_signal(void **state)
{
        const char *argv[] = {"sh", "-c", "echo err >&2; exit 3", NULL};
        result_t r         = {0};

        assert_int_equal(run(*state, argv, 5000, &r), SBX_OK);
        assert_string_equal((char *)r.err.data, "err\n");
        assert_null(r.out.data);
        assert_int_equal(r.exit.exit_code, 3);
        assert_int_equal(r.exit.signal, 0);
        result_free(&r);
        argv[2] = "kill -9 $$";
        assert_int_equal(run(*state, argv, 5000, &r), SBX_OK);
        assert_int_equal(r.exit.signal, 9);
        assert_int_equal(r.exit.exit_code, -1);
        assert_false(r.exit.timed_out);
        result_free(&r);
}

static void test_stdin_echoed(void **state)
{
        fixture_t *fx                   = *state;
        static const char *const argv[] = {"cat", NULL};
        size_t n                        = 300000; /* several pipe buffers */
        uint8_t *in                     = malloc(n);
        sbx_agent_exec_req_t req        = {.argv = argv, .deadline_ms = 10000};
        result_t r                      = {0};

        for (size_t i = 0; i < n; i++)
                in[i] = (uint8_t)(i * 7 + (i >> 9)); /* NULs included */
        req.stdin_data = in;
        req.stdin_len  = n;
        assert_int_equal(run_req(fx->conn, &req, &r), SBX_OK);
        assert_int_equal(r.exit.exit_code, 0);
        assert_int_equal(r.out.len, n);
        assert_memory_equal(r.out.data, in, n);
        result_free(&r);
        /* No stdin: cat sees EOF at once. */
        req.stdin_len = 0;
        assert_int_equal(run_req(fx->conn, &req, &r), SBX_OK);
        assert_int_equal(r.exit.exit_code, 0);
        assert_int_equal(r.out.len, 0);
        result_free(&r);
        free(in);
}

static void test_large_output(void **state)
{
        const char *zero[] = {"head", "-c", "5000000", "/dev/zero", NULL};
        const char *seq[]  = {"seq", "1", "1000000", NULL};
        result_t r         = {0};
        char line[16];
        size_t off = 0;

        assert_int_equal(run(*state, zero, 20000, &r), SBX_OK);
        assert_int_equal(r.exit.exit_code, 0);
        assert_int_equal(r.out.len, 5000000);
        for (size_t i = 0; i < r.out.len; i++)
                if (r.out.data[i])
                        fail_msg("byte %zu is %d", i, r.out.data[i]);
        result_free(&r);
        /* Content and order intact: every line where it belongs. */
        assert_int_equal(run(*state, seq, 20000, &r), SBX_OK);
        for (int i = 1; i <= 1000000; i++) {
                int n = snprintf(line, sizeof(line), "%d\n", i);
                if (off + (size_t)n > r.out.len ||
                    memcmp(r.out.data + off, line, (size_t)n))
                        fail_msg("line %d missing or wrong", i);
                off += (size_t)n;
        }
        assert_int_equal(off, r.out.len);
        result_free(&r);
}

static void test_env_exact_and_path(void **state)
{
        fixture_t *fx                     = *state;
        static const char *const argv[]   = {"/usr/bin/env", NULL};
        static const char *const byname[] = {"env", NULL};
        static const char *const envp[]   = {"A=1", "B=two words",
                                             "EMPTY=", NULL};
        sbx_agent_exec_req_t req          = {.argv = argv, .envp = envp};
        result_t r                        = {0};

        assert_int_equal(run_req(fx->conn, &req, &r), SBX_OK);
        assert_string_equal((char *)r.out.data, "A=1\nB=two words\nEMPTY=\n");
        result_free(&r);
        /* Empty environment; then a PATH search without PATH (default). */
        req.envp = NULL;
        assert_int_equal(run_req(fx->conn, &req, &r), SBX_OK);
        assert_int_equal(r.out.len, 0);
        result_free(&r);
        req.argv = byname;
        req.envp = envp;
        assert_int_equal(run_req(fx->conn, &req, &r), SBX_OK);
        assert_string_equal((char *)r.out.data, "A=1\nB=two words\nEMPTY=\n");
        result_free(&r);
}

/* PATH comes from the request; a file that is not a program is not
 * handed to /bin/sh (glibc's execvpe would). */
static void test_path_search_without_shell(void **state)
{
        fixture_t *fx = *state;
        char bin[160], path_env[200];
        const char *argv[] = {"tool", NULL}, *envp[] = {path_env, NULL};
        sbx_agent_exec_req_t req = {.argv = argv, .envp = envp};
        result_t r               = {0};

        snprintf(bin, sizeof(bin), "%s/bin", fx->dir);
        snprintf(path_env, sizeof(path_env), "PATH=/nonexistent:%s", bin);
        assert_int_equal(mkdir(bin, 0755), 0);
        make_file(bin, "tool", "#!/bin/sh\necho tool ran\n", 0755);
        make_file(bin, "noshebang", "echo shell ran\n", 0755);
        assert_int_equal(run_req(fx->conn, &req, &r), SBX_OK);
        assert_string_equal((char *)r.out.data, "tool ran\n");
        result_free(&r);
        argv[0] = "noshebang";
        assert_int_equal(run_req(fx->conn, &req, &r), SBX_ERR_RUNTIME);
        assert_non_null(
            strstr(r.errstr, "execve noshebang: Exec format error"));
        assert_null(r.out.data);
        result_free(&r);
}

static void test_cwd_and_spawn_errors(void **state)
{
        fixture_t *fx            = *state;
        const char *pwd[]        = {"/bin/pwd", NULL};
        const char *nope[]       = {"no-such-program-xyz", NULL};
        sbx_agent_exec_req_t req = {.argv = pwd, .cwd = fx->tmp};
        result_t r               = {0};
        char want[160];

        assert_int_equal(run_req(fx->conn, &req, &r), SBX_OK);
        snprintf(want, sizeof(want), "%s\n", fx->tmp);
        assert_string_equal((char *)r.out.data, want);
        result_free(&r);
        req.cwd = "/nonexistent-dir";
        assert_int_equal(run_req(fx->conn, &req, &r), SBX_ERR_NOENT);
        assert_string_equal(r.errstr,
                            "agent: chdir /nonexistent-dir: No such "
                            "file or directory");
        assert_int_equal(r.started, 0);
        result_free(&r);
        req.cwd  = NULL;
        req.argv = nope;
        assert_int_equal(run_req(fx->conn, &req, &r), SBX_ERR_NOENT);
        assert_string_equal(r.errstr,
                            "agent: execve no-such-program-xyz: No "
                            "such file or directory");
        result_free(&r);
        /* An answer, not a break: the connection still works. */
        assert_int_equal(sbx_agent_ping(fx->conn, r.errstr, sizeof(r.errstr)),
                         SBX_OK);
}

static void test_uid_gid(void **state)
{
        fixture_t *fx            = *state;
        const char *argv[]       = {"sh", "-c", "id -u; id -g; id -G", NULL};
        unsigned id              = geteuid() == 0 ? 65534 : geteuid();
        sbx_agent_exec_req_t req = {
            .argv  = argv,
            .envp  = (const char *const[]){"PATH=/usr/bin:/bin", NULL},
            .flags = SBX_AGENT_EXEC_UID | SBX_AGENT_EXEC_GID,
            .uid   = id,
            .gid   = geteuid() == 0 ? 65534 : getegid()};
        result_t r = {0};
        char want[64];

        assert_int_equal(run_req(fx->conn, &req, &r), SBX_OK);
        snprintf(want, sizeof(want), "%u\n%u\n%u\n", id, req.gid, req.gid);
        assert_string_equal((char *)r.out.data, want);
        result_free(&r);
}

static void test_deadline_kills(void **state)
{
        const char *argv[] = {"sleep", "30", NULL};
        result_t r         = {0};
        int64_t t0         = now_ms();

        assert_int_equal(run(*state, argv, 300, &r), SBX_OK);
        assert_true(now_ms() - t0 < 1000);
        assert_true(now_ms() - t0 >= 300);
        assert_true(r.exit.timed_out);
        assert_int_equal(r.exit.signal, 9);
        assert_true(r.exit.wall_us >= 300000 && r.exit.wall_us < 1000000);
        assert_true(gone_within(r.pid, 0));
        result_free(&r);
}

static void test_deadline_kills_group(void **state)
{
        const char *argv[] = {"sh", "-c", "sleep 100 & echo $!; sleep 100",
                              NULL};
        result_t r         = {0};
        int64_t t0         = now_ms();
        int bg;

        assert_int_equal(run(*state, argv, 300, &r), SBX_OK);
        assert_true(now_ms() - t0 < 1000);
        assert_true(r.exit.timed_out);
        bg = atoi((char *)r.out.data);
        assert_true(bg > 0);
        assert_true(gone_within(bg, 1000));
        /* The whole group: killed, and reaped (zombies are in /proc). */
        for (int t = 0; t < 100 && count_procs(r.pid, 1, 0); t++)
                sleep_ms(10);
        assert_int_equal(count_procs(r.pid, 1, 0), 0);
        result_free(&r);
}

/* What left the exec's group (setsid) while it ran dies at its deadline
 * too; a process an earlier exec left behind does not. */
static void test_deadline_kills_escaped(void **state)
{
        const char *argv[] = {
            "sh", "-c",
            "setsid sh -c 'trap \"\" TERM HUP; sleep 100' >/dev/null 2>&1 & "
            "echo $!; sleep 100",
            NULL};
        result_t r = {0};
        int earlier, escaped;

        earlier = run_sh_pid(*state,
                             "setsid sleep 100 >/dev/null 2>&1 & "
                             "echo $!");
        assert_int_equal(run(*state, argv, 500, &r), SBX_OK);
        assert_true(r.exit.timed_out);
        escaped = atoi((char *)r.out.data);
        assert_true(escaped > 0);
        assert_true(gone_within(escaped, 1000));
        assert_false(gone_within(earlier, 0));
        result_free(&r);
}

static void test_cancel_from_callback(void **state)
{
        const char *argv[] = {"sleep", "30", NULL};
        result_t r         = {.cancel_on_start = 1};
        int64_t t0         = now_ms();

        assert_int_equal(run(*state, argv, 0, &r), SBX_OK);
        assert_true(now_ms() - t0 < 1000);
        assert_true(r.exit.cancelled);
        assert_false(r.exit.timed_out);
        assert_int_equal(r.exit.signal, 9);
        assert_true(gone_within(r.pid, 0));
        result_free(&r);
}

typedef struct bg_exec_s {
        fixture_t *fx;
        sbx_agent_conn_t *conn;
        result_t r;
        sbx_err_t rc;
} bg_exec_t;

static void *bg_run(void *opaque)
{
        bg_exec_t *b                    = opaque;
        static const char *const argv[] = {"sleep", "30", NULL};
        sbx_agent_exec_req_t req        = {.exec_id = 4242, .argv = argv};
        b->rc                           = run_req(b->conn, &req, &b->r);
        return NULL;
}

/* The executor's way: the exec blocks on one connection, CANCEL goes on
 * another. Also shows two connections served at once. */
static void test_cancel_from_other_connection(void **state)
{
        fixture_t *fx = *state;
        bg_exec_t b   = {.fx = fx};
        char err[256];
        pthread_t th;
        int64_t t0;

        b.conn = sbx_agent_connect(fx->sock, 5000, err, sizeof(err));
        assert_non_null(b.conn);
        assert_int_equal(pthread_create(&th, NULL, bg_run, &b), 0);
        for (int t = 0; t < 500 && !b.r.started; t++)
                sleep_ms(10);
        assert_int_equal(sbx_agent_ping(fx->conn, err, sizeof(err)), SBX_OK);
        t0 = now_ms();
        assert_int_equal(sbx_agent_cancel(fx->conn, 4242, err, sizeof(err)),
                         SBX_OK);
        pthread_join(th, NULL);
        assert_int_equal(b.rc, SBX_OK);
        assert_true(now_ms() - t0 < 1000);
        assert_true(b.r.exec_id == 4242);
        assert_true(b.r.exit.cancelled);
        assert_int_equal(b.r.exit.signal, 9);
        result_free(&b.r);
        sbx_agent_close(b.conn);
}

/* A raw connection to the agent, for what the client would not send. */
static int raw_connect(fixture_t *fx)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        int fd                = socket(AF_UNIX, SOCK_STREAM, 0);
        strcpy(sa.sun_path, fx->sock);
        assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        return fd;
}

/* Reads frames from @p fd until one of @p type arrives (or EOF: -1). */
static int raw_expect(int fd,
                      sbx_agent_dec_t *dec,
                      int type,
                      sbx_agent_frame_t *ret)
{
        uint8_t buf[4096];
        char err[256];
        for (;;) {
                ssize_t n  = read(fd, buf, sizeof(buf));
                size_t off = 0;
                if (n <= 0)
                        return -1;
                while (off < (size_t)n) {
                        size_t used;
                        assert_int_equal(
                            sbx_agent_dec_feed(dec, buf + off, (size_t)n - off,
                                               &used, ret, err, sizeof(err)),
                            SBX_OK);
                        off += used;
                        if ((int)ret->type == type)
                                return 0; /* rest of buf: not needed */
                        sbx_agent_frame_clear(ret);
                }
        }
}

static void test_garbage_gets_error_and_hangup(void **state)
{
        fixture_t *fx        = *state;
        int fd               = raw_connect(fx);
        sbx_agent_dec_t *dec = sbx_agent_dec_new();
        sbx_agent_frame_t f;
        char buf[16], err[256];

        assert_int_equal(write(fd, "GET / HTTP/1.0\r\n\r\n", 18), 18);
        assert_int_equal(raw_expect(fd, dec, SBX_AGENT_F_ERROR, &f), 0);
        assert_int_equal(f.code, SBX_AGENT_E_PROTO);
        assert_string_equal(f.message, "bad magic byte 0x47 (want 0xa9)");
        sbx_agent_frame_clear(&f);
        assert_int_equal(read(fd, buf, sizeof(buf)), 0); /* hung up */
        close(fd);
        sbx_agent_dec_destroy(dec);
        assert_int_equal(sbx_agent_ping(fx->conn, err, sizeof(err)), SBX_OK);
}

static void test_hangup_kills_its_execs(void **state)
{
        fixture_t *fx                   = *state;
        static const char *const argv[] = {"sleep", "30", NULL};
        sbx_agent_frame_t req           = {.type = SBX_AGENT_F_EXEC,
                                           .exec = {.exec_id = 7, .argv = argv}};
        sbx_agent_buf_t buf             = {0};
        sbx_agent_dec_t *dec            = sbx_agent_dec_new();
        int fd                          = raw_connect(fx);
        sbx_agent_frame_t f;
        char err[256];

        assert_int_equal(sbx_agent_frame_encode(&req, &buf, err, sizeof(err)),
                         SBX_OK);
        assert_int_equal(write(fd, buf.data, buf.len), (ssize_t)buf.len);
        assert_int_equal(raw_expect(fd, dec, SBX_AGENT_F_STARTED, &f), 0);
        assert_true(f.pid > 0);
        close(fd);
        assert_true(gone_within(f.pid, 1000));
        sbx_agent_frame_clear(&f);
        sbx_agent_buf_free(&buf);
        sbx_agent_dec_destroy(dec);
}

static void test_reset(void **state)
{
        fixture_t *fx = *state;
        char path[256], outside[160];
        int p1, p2, killed = -1;
        int64_t t0;
        DIR *d;
        struct dirent *de;

        /* Leftovers of earlier execs, orphaned to the agent; the first
         * holds the exec's stdout, which must not keep it from ending. */
        t0 = now_ms();
        p1 = run_sh_pid(fx, "sleep 100 & echo $!");
        assert_true(now_ms() - t0 < 2000);
        p2 = run_sh_pid(fx, "setsid sleep 100 >/dev/null 2>&1 & echo $!");
        assert_false(gone_within(p1, 0));
        assert_false(gone_within(p2, 0));
        /* Not the agent's: RESET must leave it alone. */
        fx->bystander = fork();
        if (fx->bystander == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                pause();
                _exit(0);
        }
        /* A /tmp the sandbox left behind, with traps for the wipe. */
        make_file(fx->dir, "outside", "keep me", 0644);
        snprintf(outside, sizeof(outside), "%s/outside", fx->dir);
        snprintf(path, sizeof(path), "%s/link", fx->tmp);
        assert_int_equal(symlink(outside, path), 0);
        make_file(fx->tmp, ".hidden", "", 0);
        snprintf(path, sizeof(path), "%s/a", fx->tmp);
        assert_int_equal(mkdir(path, 0700), 0);
        snprintf(path, sizeof(path), "%s/a/b", fx->tmp);
        assert_int_equal(mkdir(path, 0700), 0);
        make_file(path, "file", "x", 0644);
        assert_int_equal(chmod(path, 0), 0); /* a/b: no access at all */

        assert_int_equal(sbx_agent_reset(fx->conn, &killed, path, sizeof(path)),
                         SBX_OK);
        assert_int_equal(killed, 2);
        assert_true(gone_within(p1, 0));
        assert_true(gone_within(p2, 0));
        assert_false(gone_within(fx->bystander, 0));
        assert_non_null(d = opendir(fx->tmp));
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                        fail_msg("%s left in tmp", de->d_name);
        closedir(d);
        assert_int_equal(access(outside, F_OK), 0);
        /* Nothing left to kill the second time. */
        assert_int_equal(sbx_agent_reset(fx->conn, &killed, path, sizeof(path)),
                         SBX_OK);
        assert_int_equal(killed, 0);
}

static void test_rusage_cpu(void **state)
{
        const char *argv[] = {
            "sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done",
            NULL};
        result_t r = {0};

        assert_int_equal(run(*state, argv, 30000, &r), SBX_OK);
        assert_int_equal(r.exit.exit_code, 0);
        assert_true(r.exit.user_us + r.exit.sys_us >= 20000);
        assert_true(r.exit.user_us + r.exit.sys_us <= r.exit.wall_us + 50000);
        assert_true(r.exit.maxrss_kb > 0);
        result_free(&r);
}

static void test_zombies_reaped(void **state)
{
        fixture_t *fx      = *state;
        const char *argv[] = {"sh", "-c", "sleep 0.01 & sleep 0.01 & true",
                              NULL};
        int orphan;

        for (int i = 0; i < 40; i++) {
                result_t r = {0};
                assert_int_equal(run(fx, argv, 5000, &r), SBX_OK);
                assert_int_equal(r.exit.exit_code, 0);
                result_free(&r);
        }
        /* An orphan becomes the agent's child, and is reaped at its end. */
        orphan = run_sh_pid(fx, "sleep 0.3 >/dev/null 2>&1 & echo $!");
        {
                pstat_t ps;
                assert_int_equal(read_pstat(orphan, &ps), 0);
                assert_int_equal(ps.ppid, fx->agent);
        }
        assert_true(gone_within(orphan, 2000));
        sleep_ms(100);
        assert_int_equal(count_procs(fx->agent, 0, 1), 0);
        assert_int_equal(count_procs(fx->agent, 0, 0), 0);
}

static void test_sigterm_kills_leftovers(void **state)
{
        fixture_t *fx = *state;
        int bg        = run_sh_pid(fx, "sleep 100 >/dev/null 2>&1 & echo $!");

        assert_int_equal(stop_agent(fx), 0);
        assert_true(gone_within(bg, 1000));
}

static void test_client_errors(void **state)
{
        fixture_t *fx = *state;
        char path[160], err[256];
        sbx_agent_conn_t *c;
        int64_t t0 = now_ms();

        /* No agent there: retried for the timeout, then a reason. */
        snprintf(path, sizeof(path), "%s/run/none.sock", fx->dir);
        assert_null(sbx_agent_connect(path, 200, err, sizeof(err)));
        assert_true(now_ms() - t0 >= 200);
        assert_non_null(strstr(err, "No such file or directory"));
        /* A link is not followed, even to the agent's own socket: the
         * directory is the sandbox's to write. */
        snprintf(path, sizeof(path), "%s/run/link.sock", fx->dir);
        assert_int_equal(symlink(fx->sock, path), 0);
        assert_null(sbx_agent_connect(path, 1000, err, sizeof(err)));
        assert_non_null(strstr(err, "non-socket"));
        /* The agent goes away: the connection breaks, and stays broken. */
        assert_non_null(
            c = sbx_agent_connect(fx->sock, 1000, err, sizeof(err)));
        assert_int_equal(stop_agent(fx), 0);
        assert_int_equal(sbx_agent_ping(c, err, sizeof(err)), SBX_ERR_IO);
        assert_int_equal(sbx_agent_ping(c, err, sizeof(err)), SBX_ERR_IO);
        assert_non_null(strstr(err, "broken"));
        sbx_agent_close(c);
}

/* The real thing: PID 1 of a PID namespace (as runc makes it). */
static void test_pid1_in_pid_namespace(void **state)
{
        fixture_t *fx      = *state;
        const char *argv[] = {"sh", "-c",
                              "kill -TERM 1; kill -INT 1; echo $PPID", NULL};
        result_t r         = {0};
        int killed         = -1;

        if (!fx->agent)
                skip(); /* PID namespaces need root: test_agent as root */
        assert_int_not_equal(fx->agent_pid, fx->agent);
        /* Signals from inside the sandbox do not stop it. */
        assert_int_equal(run(fx, argv, 5000, &r), SBX_OK);
        assert_string_equal((char *)r.out.data, "1\n");
        result_free(&r);
        assert_int_equal(sbx_agent_ping(fx->conn, r.errstr, sizeof(r.errstr)),
                         SBX_OK);
        /* Orphans are PID 1's to reap; leftovers are RESET's to kill. */
        argv[2] =
            "(sleep 0.1 &); setsid sleep 100 >/dev/null 2>&1 & "
            "sleep 100 >/dev/null 2>&1 & true";
        assert_int_equal(run(fx, argv, 5000, &r), SBX_OK);
        result_free(&r);
        sleep_ms(300);
        assert_int_equal(count_procs(fx->agent_pid, 0, 1), 0);
        assert_int_equal(count_procs(fx->agent_pid, 0, 0), 2);
        assert_int_equal(
            sbx_agent_reset(fx->conn, &killed, r.errstr, sizeof(r.errstr)),
            SBX_OK);
        assert_int_equal(killed, 2);
        assert_int_equal(count_procs(fx->agent_pid, 0, 0), 0);
}

int main(int argc, char **argv)
{
#define T(f)                                                                   \
        cmocka_unit_test_prestate_setup_teardown(f, setup, teardown, argv[1])
        const struct CMUnitTest tests[] = {
            T(test_echo_hello),
            T(test_stderr_exit_code_signal),
            T(test_stdin_echoed),
            T(test_large_output),
            T(test_env_exact_and_path),
            T(test_path_search_without_shell),
            T(test_cwd_and_spawn_errors),
            T(test_uid_gid),
            T(test_deadline_kills),
            T(test_deadline_kills_group),
            T(test_deadline_kills_escaped),
            T(test_cancel_from_callback),
            T(test_cancel_from_other_connection),
            T(test_garbage_gets_error_and_hangup),
            T(test_hangup_kills_its_execs),
            T(test_reset),
            T(test_rusage_cpu),
            T(test_zombies_reaped),
            T(test_sigterm_kills_leftovers),
            T(test_client_errors),
            cmocka_unit_test_prestate_setup_teardown(
                test_pid1_in_pid_namespace, setup_pid1, teardown, argv[1]),
        };
#undef T
        if (argc != 2) {
                fprintf(stderr, "usage: %s PATH-OF-sbx-agent\n", argv[0]);
                return 2;
        }
        return cmocka_run_group_tests(tests, NULL, NULL);
}
