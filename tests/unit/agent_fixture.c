/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fixture and helpers of test_agent.c (see agent_fixture.h). The agent
 * is started with PR_SET_PDEATHSIG, so a test that dies takes its agent,
 * and through it the agent's processes, along.
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
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_fixture.h"
#include "core/util.h"

static void bytes_add(bytes_t *b, const uint8_t *d, size_t n)
{
        b->data = sbx_realloc(b->data, b->len + n + 1);
        memcpy(b->data + b->len, d, n);
        b->len += n;
        b->data[b->len] = '\0';
}

static int on_started(void *opaque, uint64_t exec_id, int pid)
{
        result_t *r = opaque;
        r->exec_id  = exec_id;
        r->pid      = pid;
        r->started++;
        return r->cancel_on_start;
}

static int on_stdout(void *opaque, const uint8_t *d, size_t n)
{
        bytes_add(&((result_t *)opaque)->out, d, n);
        return 0;
}

static int on_stderr(void *opaque, const uint8_t *d, size_t n)
{
        bytes_add(&((result_t *)opaque)->err, d, n);
        return 0;
}

void result_free(result_t *r)
{
        free(r->out.data);
        free(r->err.data);
        memset(r, 0, sizeof(*r));
}

/* Runs @p req on @p conn; output and exit land in @p r. */
sbx_err_t run_req(sbx_agent_conn_t *conn,
                  const sbx_agent_exec_req_t *req,
                  result_t *r)
{
        sbx_agent_exec_cb_t cb = {on_started, on_stdout, on_stderr, r};
        return sbx_agent_exec(conn, req, &cb, &r->exit, r->errstr,
                              sizeof(r->errstr));
}

sbx_err_t run(fixture_t *fx,
              const char *const *argv,
              uint32_t deadline_ms,
              result_t *r)
{
        static const char *const envp[] = {"PATH=/usr/bin:/bin", NULL};
        sbx_agent_exec_req_t req        = {
                   .argv = argv, .envp = envp, .deadline_ms = deadline_ms};
        return run_req(fx->conn, &req, r);
}

/* Runs sh -c @p script and returns the number it printed (a pid). */
int run_sh_pid(fixture_t *fx, const char *script)
{
        const char *argv[] = {"sh", "-c", script, NULL};
        result_t r         = {0};
        int pid;
        assert_int_equal(run(fx, argv, 5000, &r), SBX_OK);
        assert_int_equal(r.exit.exit_code, 0);
        assert_non_null(r.out.data);
        pid = atoi((char *)r.out.data);
        assert_true(pid > 0);
        result_free(&r);
        return pid;
}

int read_pstat(int pid, pstat_t *ps)
{
        char path[64], buf[512], *p;
        FILE *f;
        snprintf(path, sizeof(path), "/proc/%d/stat", pid);
        if (!(f = fopen(path, "r")))
                return -1;
        p = fgets(buf, sizeof(buf), f);
        fclose(f);
        if (!p || !(p = strrchr(buf, ')')))
                return -1;
        ps->pid = pid;
        return sscanf(p + 2, "%c %d %d", &ps->state, &ps->ppid, &ps->pgrp) == 3
                   ? 0
                   : -1;
}

/* Counts processes whose field (ppid or pgrp, per @p by_pgrp) is @p v. */
int count_procs(int v, int by_pgrp, int zombies_only)
{
        DIR *d = opendir("/proc");
        struct dirent *de;
        int n = 0;
        assert_non_null(d);
        while ((de = readdir(d))) {
                pstat_t ps;
                if (atoi(de->d_name) <= 0 || read_pstat(atoi(de->d_name), &ps))
                        continue;
                if ((by_pgrp ? ps.pgrp : ps.ppid) == v &&
                    (!zombies_only || ps.state == 'Z'))
                        n++;
        }
        closedir(d);
        return n;
}

void sleep_ms(long ms)
{
        nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000}, NULL);
}

/* 1 once /proc/<pid> is gone (killed and reaped) within @p ms. */
int gone_within(int pid, long ms)
{
        for (long t = 0; t <= ms; t += 10) {
                pstat_t ps;
                if (read_pstat(pid, &ps))
                        return 1;
                sleep_ms(10);
        }
        return 0;
}

int64_t now_ms(void)
{
        return sbx_mono_us() / 1000;
}

/* Writes @p content to @p dir/@p name with @p mode. */
void make_file(const char *dir,
               const char *name,
               const char *content,
               mode_t mode)
{
        char path[256];
        FILE *f;
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        assert_non_null(f = fopen(path, "w"));
        fputs(content, f);
        fclose(f);
        assert_int_equal(chmod(path, mode), 0);
}

/* Starts the agent (as PID 1 of a new PID namespace if @p pid1) and
 * connects to it. */
static int start(void **state, int pid1)
{
        fixture_t *fx = calloc(1, sizeof(*fx));
        char err[256];

        fx->agent_path = *state;
        *state         = fx;
        strcpy(fx->dir, "/tmp/sbx-agent-test-XXXXXX");
        if (!mkdtemp(fx->dir))
                return -1;
        snprintf(fx->sock, sizeof(fx->sock), "%s/run/agent.sock", fx->dir);
        snprintf(fx->tmp, sizeof(fx->tmp), "%s/tmp", fx->dir);
        if (mkdir(fx->tmp, 0700))
                return -1;
        if (pid1 && geteuid() != 0)
                return 0; /* the test skips, saying why */
        fx->agent = fork();
        if (fx->agent == 0) {
                prctl(PR_SET_PDEATHSIG, SIGTERM); /* if the test dies */
                if (pid1)
                        execlp("unshare", "unshare", "--pid", "--fork",
                               "--mount-proc", "--kill-child", fx->agent_path,
                               "--socket", fx->sock, "--tmp", fx->tmp,
                               (char *)NULL);
                else
                        execl(fx->agent_path, fx->agent_path, "--no-pid1",
                              "--socket", fx->sock, "--tmp", fx->tmp,
                              (char *)NULL);
                _exit(127);
        }
        fx->conn = sbx_agent_connect(fx->sock, 10000, err, sizeof(err));
        if (!fx->conn) {
                fprintf(stderr, "connect: %s\n", err);
                return -1;
        }
        fx->agent_pid = fx->agent;
        for (int t = 0; pid1 && t < 100 && fx->agent_pid == fx->agent; t++) {
                DIR *d = opendir("/proc");
                struct dirent *de;
                while (d && (de = readdir(d))) {
                        pstat_t ps;
                        if (!read_pstat(atoi(de->d_name), &ps) &&
                            ps.ppid == fx->agent)
                                fx->agent_pid = ps.pid;
                }
                closedir(d);
        }
        return 0;
}

int setup(void **state)
{
        return start(state, 0);
}

int setup_pid1(void **state)
{
        return start(state, 1);
}

static int rm_entry(const char *path,
                    const struct stat *st,
                    int flag,
                    struct FTW *ftw)
{
        (void)st;
        (void)flag;
        (void)ftw;
        chmod(path, 0700);
        return remove(path) && errno != ENOENT ? -1 : 0;
}

/* Stops the agent with SIGTERM: it must exit 0 within 5 s, socket gone. */
int stop_agent(fixture_t *fx)
{
        int status = 0, rc = -1;
        struct stat st;

        sbx_agent_close(fx->conn);
        fx->conn = NULL;
        kill(fx->agent_pid, SIGTERM);
        for (int t = 0; t < 500; t++) {
                if (waitpid(fx->agent, &status, WNOHANG) == fx->agent) {
                        rc = 0;
                        break;
                }
                sleep_ms(10);
        }
        if (rc) {
                kill(fx->agent, SIGKILL);
                waitpid(fx->agent, &status, 0);
                fprintf(stderr, "agent ignored SIGTERM\n");
        } else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
                fprintf(stderr, "agent ended with status 0x%x\n", status);
                rc = -1;
        } else if (stat(fx->sock, &st) == 0) {
                fprintf(stderr, "agent left its socket behind\n");
                rc = -1;
        }
        fx->agent = 0;
        return rc;
}

int teardown(void **state)
{
        fixture_t *fx = *state;
        int rc        = fx->agent ? stop_agent(fx) : 0;
        if (fx->bystander > 0) {
                kill(fx->bystander, SIGKILL);
                waitpid(fx->bystander, NULL, 0);
        }
        nftw(fx->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        free(fx);
        return rc;
}
