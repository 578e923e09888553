/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A sandbox's resource usage, read from its cgroup v1 directories (the
 * runtime puts sandbox <id> at <controller mount>/<parent>/<id>). The
 * controller mount points are found once in /proc/self/mountinfo, so a
 * host that mounts cpu and cpuacct together works as well as one that
 * does not. Reading never changes anything but the peak-memory reset.
 */
#ifndef SBX_RUNTIME_CGROUP_H
#define SBX_RUNTIME_CGROUP_H

#include <stddef.h>
#include <stdint.h>

#include "sbx/err.h"

typedef struct sbx_cgroup_s sbx_cgroup_t;

typedef struct sbx_usage_s {
        uint64_t memory_peak;    /**< bytes, memory.max_usage_in_bytes */
        uint64_t memory_current; /**< bytes, memory.usage_in_bytes */
        uint64_t memory_limit;   /**< bytes, memory.limit_in_bytes */
        uint64_t memory_failcnt; /**< hits of the limit: the larger of
                                      memory.failcnt, memory.memsw.failcnt */
        uint64_t oom_kills;      /**< processes the OOM killer took
                                      (memory.oom_control oom_kill) */
        int under_oom;           /**< 1 while the cgroup is out of memory */
        uint64_t cpu_ns;         /**< CPU time, cpuacct.usage */
        uint64_t pids_current;   /**< tasks now, pids.current */
} sbx_usage_t;

/** Finds the v1 controller mounts; NULL (errstr filled) if memory,
 *  cpuacct or pids is not mounted. */
sbx_cgroup_t *sbx_cgroup_new(char *errstr, size_t errstr_size);
void sbx_cgroup_destroy(sbx_cgroup_t *cg);

/** Mount point of @p controller ("memory", "cpuacct", "pids", "freezer",
 *  "cpu"), or NULL; owned by @p cg. */
const char *sbx_cgroup_mount(const sbx_cgroup_t *cg, const char *controller);

/** Reads the usage of cgroup @p path (e.g. "/sbx/<id>"). SBX_ERR_NOENT if
 *  the cgroup does not exist. */
sbx_err_t sbx_cgroup_usage(const sbx_cgroup_t *cg,
                           const char *path,
                           sbx_usage_t *ret,
                           char *errstr,
                           size_t errstr_size);

/** Reads one unsigned value, e.g. ("memory", path, "memory.limit_in_bytes").
 */
sbx_err_t sbx_cgroup_read_u64(const sbx_cgroup_t *cg,
                              const char *controller,
                              const char *path,
                              const char *file,
                              uint64_t *ret,
                              char *errstr,
                              size_t errstr_size);

/** Restarts the peak-memory measurement (e.g. per exec). */
sbx_err_t sbx_cgroup_reset_peak(const sbx_cgroup_t *cg,
                                const char *path,
                                char *errstr,
                                size_t errstr_size);

/** 1 if @p path exists under any known controller. */
int sbx_cgroup_exists(const sbx_cgroup_t *cg, const char *path);

/** Removes @p path from every controller (rmdir); absent is success,
 *  a cgroup that still has tasks is SBX_ERR_CONFLICT. */
sbx_err_t sbx_cgroup_remove(const sbx_cgroup_t *cg,
                            const char *path,
                            char *errstr,
                            size_t errstr_size);

#endif
