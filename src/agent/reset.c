/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Process killing and directory wiping for sbx-agent's reset. The kill
 * works from snapshots of /proc (pid, parent, session, start time and
 * state of every process), narrowed to what an exec left if asked:
 * the targets of a snapshot are SIGKILLed, and snapshots are taken again
 * until one shows no target not already killed, which catches children
 * forked between a snapshot and the kill. Descendants are found by walking
 * parent links, so a daemon that left the agent's process groups is still
 * found. The wipe works on directory file descriptors (openat, unlinkat,
 * AT_SYMLINK_NOFOLLOW, O_NOFOLLOW), so no path is resolved twice and no
 * link is followed; it is bounded in depth by the descriptors it holds.
 */
#include "agent/reset.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"

#define KILL_ROUNDS  64 /* snapshots at most: a fork bomb outruns us */
#define REAP_WAIT_US 2000000
#define WIPE_DEPTH   128 /* directory levels: one descriptor each */
#define WIPE_PASSES  4   /* readdir passes per directory */

typedef struct proc_s {
        pid_t pid, ppid, sid;
        char state;
        unsigned long long start; /* clock ticks after boot */
        int mark;                 /* a target */
} proc_t;

typedef struct procs_s {
        proc_t *v;
        size_t n, cap;
} procs_t;

/*
 * Reads pid, state, parent, session and start time of /proc/<name>/stat:
 * "pid (comm) S ppid pgrp session …", starttime being field 22. comm is
 * at most 64 bytes (TASK_COMM_LEN and kernel thread names) and the 19
 * numbers before starttime at most 21 bytes each, so 512 bytes hold the
 * fields; the last ')' ends comm, which may contain any character. 0, or
 * -1 if the process is gone or the line unreadable.
 */
static int read_stat(const char *name, proc_t *ret)
{
        char path[64], buf[512], *p;
        ssize_t n;
        int fd, ppid, sid;
        unsigned long long start;

        sbx_fmt(path, sizeof(path), "/proc/%s/stat", name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return -1;
        buf[n] = '\0';
        p      = strrchr(buf, ')');
        if (!p || p[1] != ' ' || !p[2] || p[3] != ' ' ||
            sscanf(p + 4,
                   "%d %*d %d %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
                   "%*s %*s %*s %*s %llu",
                   &ppid, &sid, &start) != 3)
                return -1;
        ret->pid   = atoi(buf);
        ret->ppid  = ppid;
        ret->sid   = sid;
        ret->start = start;
        ret->state = p[2];
        ret->mark  = 0;
        return ret->pid > 0 ? 0 : -1;
}

int sbx_reset_proc_start(pid_t pid, unsigned long long *ret_start)
{
        char name[32];
        proc_t p;
        if (read_stat(sbx_fmt(name, sizeof(name), "%d", (int)pid), &p))
                return -1;
        *ret_start = p.start;
        return 0;
}

static int in_scope(const proc_t *p, const sbx_reset_scope_t *scope)
{
        if (!scope)
                return 1;
        if (p->start < scope->since ||
            (p->start == scope->since && p->pid < scope->since_pid))
                return 0;
        for (size_t i = 0; i < scope->n_spare; i++)
                if (p->sid == scope->spare[i])
                        return 0;
        return 1;
}

static int by_pid(const void *a, const void *b)
{
        const proc_t *x = a, *y = b;
        return (x->pid > y->pid) - (x->pid < y->pid);
}

static proc_t *find(procs_t *ps, pid_t pid)
{
        proc_t key = {.pid = pid};
        return bsearch(&key, ps->v, ps->n, sizeof(proc_t), by_pid);
}

/*
 * Takes a snapshot of /proc and marks the targets: everyone but @p self,
 * or the descendants of @p self (parent links followed to a fixed point),
 * and of those the ones in @p scope.
 */
static sbx_err_t snapshot(procs_t *ps,
                          pid_t self,
                          int everyone,
                          const sbx_reset_scope_t *scope,
                          char *errstr,
                          size_t errstr_size)
{
        DIR *d = opendir("/proc");
        struct dirent *de;
        int changed = 1;

        if (!d)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_IO, "/proc: %s",
                                  strerror(errno));
        ps->n = 0;
        while ((de = readdir(d))) {
                proc_t p;
                if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
                    read_stat(de->d_name, &p))
                        continue;
                if (ps->n == ps->cap) {
                        ps->cap = ps->cap ? ps->cap * 2 : 256;
                        ps->v   = sbx_realloc(ps->v, ps->cap * sizeof(proc_t));
                }
                ps->v[ps->n++] = p;
        }
        closedir(d);
        qsort(ps->v, ps->n, sizeof(proc_t), by_pid);
        for (size_t i = 0; i < ps->n; i++)
                ps->v[i].mark = everyone && ps->v[i].pid != self;
        while (!everyone && changed) {
                changed = 0;
                for (size_t i = 0; i < ps->n; i++) {
                        proc_t *parent;
                        if (ps->v[i].mark || ps->v[i].pid == self)
                                continue;
                        parent = find(ps, ps->v[i].ppid);
                        if (ps->v[i].ppid == self || (parent && parent->mark)) {
                                ps->v[i].mark = 1;
                                changed       = 1;
                        }
                }
        }
        for (size_t i = 0; i < ps->n; i++)
                ps->v[i].mark = ps->v[i].mark && in_scope(&ps->v[i], scope);
        return SBX_OK;
}

static int contains(const pid_t *v, size_t n, pid_t pid)
{
        for (size_t i = 0; i < n; i++)
                if (v[i] == pid)
                        return 1;
        return 0;
}

static void sleep_us(long us)
{
        struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
        nanosleep(&ts, NULL);
}

sbx_err_t sbx_reset_kill_procs(pid_t self,
                               int everyone,
                               const sbx_reset_scope_t *scope,
                               void (*reap)(void *opaque),
                               void *opaque,
                               unsigned *ret_killed,
                               char *errstr,
                               size_t errstr_size)
{
        procs_t ps     = {0};
        pid_t *killed  = NULL;
        size_t nkilled = 0, cap = 0, left = 0;
        int64_t give_up = sbx_mono_us() + REAP_WAIT_US;
        sbx_err_t err   = SBX_OK;

        for (int round = 0; round < KILL_ROUNDS; round++) {
                size_t fresh = 0;
                if ((err = snapshot(&ps, self, everyone, scope, errstr,
                                    errstr_size)))
                        goto done;
                for (size_t i = 0; i < ps.n; i++) {
                        proc_t *p = &ps.v[i];
                        if (!p->mark || p->state == 'Z' || p->state == 'X')
                                continue;
                        kill(p->pid, SIGKILL);
                        if (contains(killed, nkilled, p->pid))
                                continue;
                        if (nkilled == cap) {
                                cap = cap ? cap * 2 : 64;
                                killed =
                                    sbx_realloc(killed, cap * sizeof(pid_t));
                        }
                        killed[nkilled++] = p->pid;
                        fresh++;
                }
                /* From PID 1 this reaches everything but the agent. */
                if (everyone && !scope)
                        kill(-1, SIGKILL);
                if (!fresh)
                        break;
        }
        /* The killed become zombies, then (orphaned) children to reap. */
        for (;;) {
                if (reap)
                        reap(opaque);
                if ((err = snapshot(&ps, self, everyone, scope, errstr,
                                    errstr_size)))
                        goto done;
                left = 0;
                for (size_t i = 0; i < ps.n; i++)
                        left += ps.v[i].mark;
                if (!left || sbx_mono_us() > give_up)
                        break;
                sleep_us(2000);
        }
        if (left)
                err =
                    sbx_seterr(errstr, errstr_size, SBX_ERR_RUNTIME,
                               "%zu processes still exist after SIGKILL", left);
done:
        free(ps.v);
        free(killed);
        if (!err)
                *ret_killed = (unsigned)nkilled;
        return err;
}

typedef struct wipe_s {
        dev_t dev; /* the wiped directory's file system */
        unsigned removed;
} wipe_t;

static unsigned wipe_fd(wipe_t *w, int dfd, int depth);

/*
 * Removes the entry @p name of @p dfd; returns how many entries are left
 * of it: 0 if it is gone, else itself plus what is left inside.
 */
static unsigned wipe_entry(wipe_t *w, int dfd, const char *name, int depth)
{
        struct stat st;
        unsigned left;
        int fd;

        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
                return errno != ENOENT;
        if (!S_ISDIR(st.st_mode)) {
                if (unlinkat(dfd, name, 0) && errno != ENOENT)
                        return 1;
                w->removed++;
                return 0;
        }
        if (st.st_dev != w->dev || depth >= WIPE_DEPTH)
                return 1;
        fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == EACCES &&
            fchmodat(dfd, name, S_IRWXU, AT_SYMLINK_NOFOLLOW) == 0)
                fd = openat(dfd, name,
                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return 1;
        /* Without write and search permission nothing inside can go. */
        if ((st.st_mode & S_IRWXU) != S_IRWXU)
                fchmod(fd, (st.st_mode & 07777) | S_IRWXU);
        left = wipe_fd(w, fd, depth + 1); /* closes fd */
        if (unlinkat(dfd, name, AT_REMOVEDIR) && errno != ENOENT)
                return left + 1;
        w->removed++;
        return 0;
}

/*
 * Empties the directory open at @p dfd, closes it and returns how many
 * entries are left in it (recursively). Entries are removed while it is
 * being read, which readdir may answer by skipping some, so it reads
 * again until a pass removes nothing; the last pass counts what is left.
 */
static unsigned wipe_fd(wipe_t *w, int dfd, int depth)
{
        DIR *d        = fdopendir(dfd);
        unsigned left = 0;

        if (!d) {
                close(dfd);
                return 1;
        }
        for (int pass = 0; pass < WIPE_PASSES; pass++) {
                struct dirent *de;
                unsigned before = w->removed;
                left            = 0;
                rewinddir(d);
                while ((de = readdir(d))) {
                        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                                left +=
                                    wipe_entry(w, dirfd(d), de->d_name, depth);
                }
                if (w->removed == before)
                        break;
        }
        closedir(d);
        return left;
}

sbx_err_t sbx_reset_wipe_dir(const char *dir,
                             unsigned *ret_removed,
                             unsigned *ret_failed,
                             char *errstr,
                             size_t errstr_size)
{
        wipe_t w = {0};
        struct stat st;
        unsigned left;
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        if (fd < 0 || fstat(fd, &st)) {
                int e = errno;
                if (fd >= 0)
                        close(fd);
                return sbx_seterr(errstr, errstr_size, SBX_ERR_IO, "%s: %s",
                                  dir, strerror(e));
        }
        w.dev        = st.st_dev;
        left         = wipe_fd(&w, fd, 0);
        *ret_removed = w.removed;
        *ret_failed  = left;
        return SBX_OK;
}
