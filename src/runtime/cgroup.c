/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup v1 reading. mountinfo lines of type "cgroup" carry the controller
 * names in their super options ("rw,memory" or "rw,cpu,cpuacct"); the
 * first mount of each controller is the one used. Files are small and
 * read whole, bounded.
 */
#include "runtime/cgroup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"

static const char *const controllers[] = {"memory", "cpuacct", "pids",
                                          "freezer", "cpu"};
#define N_CONTROLLERS (sizeof(controllers) / sizeof(controllers[0]))

struct sbx_cgroup_s {
        char *mount[N_CONTROLLERS];
};

static int has_option(const char *opts, const char *name)
{
        size_t n = strlen(name);
        for (const char *p = opts; p && *p;) {
                if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == '\0'))
                        return 1;
                p = strchr(p, ',');
                if (p)
                        p++;
        }
        return 0;
}

sbx_cgroup_t *sbx_cgroup_new(char *errstr, size_t errstr_size)
{
        sbx_cgroup_t *cg = sbx_calloc(1, sizeof(*cg));
        char *info = NULL, *line, *save = NULL;

        if (sbx_read_file("/proc/self/mountinfo", 16 << 20, &info, NULL, errstr,
                          errstr_size))
                goto fail;
        for (line = strtok_r(info, "\n", &save); line;
             line = strtok_r(NULL, "\n", &save)) {
                /* id parent maj:min root mountpoint opts [tags] - type src
                 * superopts */
                char *dash = strstr(line, " - "), *mp, *type, *sopts;
                char *sp   = NULL;
                if (!dash)
                        continue;
                *dash = '\0';
                type  = strtok_r(dash + 3, " ", &sp);
                strtok_r(NULL, " ", &sp);
                sopts = strtok_r(NULL, " ", &sp);
                if (!type || strcmp(type, "cgroup") || !sopts)
                        continue;
                sp = NULL;
                strtok_r(line, " ", &sp);
                for (int i = 0; i < 3; i++)
                        strtok_r(NULL, " ", &sp);
                mp = strtok_r(NULL, " ", &sp);
                for (size_t i = 0; mp && i < N_CONTROLLERS; i++)
                        if (!cg->mount[i] && has_option(sopts, controllers[i]))
                                cg->mount[i] = sbx_strdup(mp);
        }
        free(info);
        info = NULL;
        for (size_t i = 0; i < 3; i++)
                if (!cg->mount[i]) {
                        sbx_seterr(errstr, errstr_size, SBX_ERR_UNSUPPORTED,
                                   "cgroup v1 controller '%s' is not mounted",
                                   controllers[i]);
                        goto fail;
                }
        return cg;
fail:
        free(info);
        sbx_cgroup_destroy(cg);
        return NULL;
}

void sbx_cgroup_destroy(sbx_cgroup_t *cg)
{
        if (!cg)
                return;
        for (size_t i = 0; i < N_CONTROLLERS; i++)
                free(cg->mount[i]);
        free(cg);
}

const char *sbx_cgroup_mount(const sbx_cgroup_t *cg, const char *controller)
{
        for (size_t i = 0; i < N_CONTROLLERS; i++)
                if (!strcmp(controllers[i], controller))
                        return cg->mount[i];
        return NULL;
}

static sbx_err_t cg_path(const sbx_cgroup_t *cg,
                         const char *controller,
                         const char *path,
                         const char *file,
                         char *out,
                         size_t out_size,
                         char *errstr,
                         size_t errstr_size)
{
        const char *m = sbx_cgroup_mount(cg, controller);
        int n;
        if (!m)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_UNSUPPORTED,
                                  "cgroup controller '%s' not mounted",
                                  controller);
        if (!path || path[0] != '/' || strstr(path, ".."))
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "cgroup path '%s' must be absolute",
                                  path ? path : "");
        n = snprintf(out, out_size, "%s%s%s%s", m, path, file ? "/" : "",
                     file ? file : "");
        if (n < 0 || (size_t)n >= out_size)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_TOOBIG,
                                  "cgroup path too long");
        return SBX_OK;
}

static sbx_err_t cg_read(const sbx_cgroup_t *cg,
                         const char *controller,
                         const char *path,
                         const char *file,
                         char **ret,
                         char *errstr,
                         size_t errstr_size)
{
        char p[1024];
        sbx_err_t err = cg_path(cg, controller, path, file, p, sizeof(p),
                                errstr, errstr_size);
        if (!err)
                err = sbx_read_file(p, 1 << 20, ret, NULL, errstr, errstr_size);
        return err;
}

sbx_err_t sbx_cgroup_read_u64(const sbx_cgroup_t *cg,
                              const char *controller,
                              const char *path,
                              const char *file,
                              uint64_t *ret,
                              char *errstr,
                              size_t errstr_size)
{
        char *s = NULL, *end;
        unsigned long long v;
        sbx_err_t err =
            cg_read(cg, controller, path, file, &s, errstr, errstr_size);
        if (err)
                return err;
        errno = 0;
        v     = strtoull(s, &end, 10);
        if (errno || end == s)
                err =
                    sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                               "%s%s/%s: not a number", controller, path, file);
        else
                *ret = (uint64_t)v;
        free(s);
        return err;
}

/* Value of "key N" in a flat keyed file such as memory.oom_control. */
static uint64_t keyed(const char *text, const char *key)
{
        size_t n = strlen(key);
        for (const char *p = text; p && *p;) {
                if (!strncmp(p, key, n) && p[n] == ' ')
                        return strtoull(p + n + 1, NULL, 10);
                p = strchr(p, '\n');
                if (p)
                        p++;
        }
        return 0;
}

sbx_err_t sbx_cgroup_usage(const sbx_cgroup_t *cg,
                           const char *path,
                           sbx_usage_t *ret,
                           char *errstr,
                           size_t errstr_size)
{
        sbx_usage_t u;
        char *oom = NULL;
        sbx_err_t err;

        memset(&u, 0, sizeof(u));
        err =
            sbx_cgroup_read_u64(cg, "memory", path, "memory.max_usage_in_bytes",
                                &u.memory_peak, errstr, errstr_size);
        if (!err)
                err = sbx_cgroup_read_u64(
                    cg, "memory", path, "memory.usage_in_bytes",
                    &u.memory_current, errstr, errstr_size);
        if (!err)
                err = sbx_cgroup_read_u64(cg, "memory", path,
                                          "memory.limit_in_bytes",
                                          &u.memory_limit, errstr, errstr_size);
        if (!err)
                err =
                    sbx_cgroup_read_u64(cg, "memory", path, "memory.failcnt",
                                        &u.memory_failcnt, errstr, errstr_size);
        if (!err) {
                /* with swap limited to the memory limit, charges fail on
                 * the memory+swap counter first: count both */
                uint64_t memsw = 0;
                if (!sbx_cgroup_read_u64(cg, "memory", path,
                                         "memory.memsw.failcnt", &memsw, NULL,
                                         0) &&
                    memsw > u.memory_failcnt)
                        u.memory_failcnt = memsw;
                err = cg_read(cg, "memory", path, "memory.oom_control", &oom,
                              errstr, errstr_size);
        }
        if (!err) {
                u.oom_kills = keyed(oom, "oom_kill");
                u.under_oom = keyed(oom, "under_oom") != 0;
                err = sbx_cgroup_read_u64(cg, "cpuacct", path, "cpuacct.usage",
                                          &u.cpu_ns, errstr, errstr_size);
        }
        if (!err)
                err = sbx_cgroup_read_u64(cg, "pids", path, "pids.current",
                                          &u.pids_current, errstr, errstr_size);
        free(oom);
        if (!err)
                *ret = u;
        return err;
}

sbx_err_t sbx_cgroup_reset_peak(const sbx_cgroup_t *cg,
                                const char *path,
                                char *errstr,
                                size_t errstr_size)
{
        char p[1024];
        FILE *f;
        sbx_err_t err = cg_path(cg, "memory", path, "memory.max_usage_in_bytes",
                                p, sizeof(p), errstr, errstr_size);
        if (err)
                return err;
        f = fopen(p, "we");
        if (!f || fputs("0", f) < 0 || fclose(f)) {
                int e = errno;
                return sbx_seterr(errstr, errstr_size,
                                  e == ENOENT ? SBX_ERR_NOENT : SBX_ERR_IO,
                                  "%s: %s", p, strerror(e));
        }
        return SBX_OK;
}

int sbx_cgroup_exists(const sbx_cgroup_t *cg, const char *path)
{
        for (size_t i = 0; i < N_CONTROLLERS; i++) {
                char p[1024];
                struct stat st;
                if (cg->mount[i] &&
                    !cg_path(cg, controllers[i], path, NULL, p, sizeof(p), NULL,
                             0) &&
                    !stat(p, &st))
                        return 1;
        }
        return 0;
}

sbx_err_t sbx_cgroup_remove(const sbx_cgroup_t *cg,
                            const char *path,
                            char *errstr,
                            size_t errstr_size)
{
        sbx_err_t err = SBX_OK;
        for (size_t i = 0; i < N_CONTROLLERS; i++) {
                char p[1024];
                if (!cg->mount[i] || cg_path(cg, controllers[i], path, NULL, p,
                                             sizeof(p), errstr, errstr_size))
                        continue;
                if (rmdir(p) && errno != ENOENT)
                        err = sbx_seterr(
                            errstr, errstr_size,
                            errno == EBUSY ? SBX_ERR_CONFLICT : SBX_ERR_IO,
                            "rmdir %s: %s", p, strerror(errno));
        }
        return err;
}
