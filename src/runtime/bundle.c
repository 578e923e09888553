/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config.json from a sandbox spec. The spec is checked here, once, before
 * any of it reaches a file or a runtime; from then on only the checked
 * values are used. The JSON is built with jansson (so no value can break
 * out of its string), and the isolation settings are constants of this
 * file, not spec fields: a caller can ask for more CPU, not for the host's
 * network or devices.
 */
#include "runtime/bundle.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"
#include "runtime/fsutil.h"
#include "runtime/seccomp.h"

#define BUNDLE_DEFAULT_PATH                                                    \
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* Docker's defaults (moby oci/defaults.go). */
static const char *const masked_paths[] = {
    "/proc/asound",
    "/proc/acpi",
    "/proc/kcore",
    "/proc/keys",
    "/proc/latency_stats",
    "/proc/timer_list",
    "/proc/timer_stats",
    "/proc/sched_debug",
    "/proc/scsi",
    "/sys/firmware",
    "/sys/devices/virtual/powercap",
};
static const char *const readonly_paths[] = {
    "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
};
static const char *const cap_sets[]   = {"bounding", "effective", "inheritable",
                                         "permitted", "ambient"};
static const char *const namespaces[] = {"pid", "network", "ipc",
                                         "uts", "mount",   "cgroup"};

int sbx_sandbox_id_ok(const char *id)
{
        size_t n;
        if (!id ||
            !((id[0] >= 'a' && id[0] <= 'z') ||
              (id[0] >= 'A' && id[0] <= 'Z') || (id[0] >= '0' && id[0] <= '9')))
                return 0;
        n = strlen(id);
        return n <= SBX_SANDBOX_ID_MAX &&
               strspn(id,
                      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                      "0123456789_.-") == n;
}

static int in_range(int64_t v, int64_t lo, int64_t hi, int zero_ok)
{
        return (zero_ok && v == 0) || (v >= lo && v <= hi);
}

sbx_err_t sbx_sandbox_spec_check(const sbx_sandbox_spec_t *s,
                                 char *errstr,
                                 size_t errstr_size)
{
#define BAD(...)                                                               \
        return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID, __VA_ARGS__)
        if (!sbx_sandbox_id_ok(s->id))
                BAD("sandbox id '%s': use 1-64 of [A-Za-z0-9_.-], starting "
                    "with a letter or digit",
                    s->id ? s->id : "");
        if (s->runtime && strcmp(s->runtime, "runc") &&
            strcmp(s->runtime, "runsc"))
                BAD("runtime '%s': runc or runsc", s->runtime);
        if (!s->tmpl)
                BAD("no template");
        if (!in_range(s->memory_mb, 8, 1 << 24, 0))
                BAD("memory_mb %lld: 8..16777216", (long long)s->memory_mb);
        if (!in_range(s->pids_max, 1, 4194304, 0))
                BAD("pids_max %lld: 1..4194304", (long long)s->pids_max);
        if (!in_range(s->cpu_quota_us, 1000, INT64_C(1) << 40, 1))
                BAD("cpu_quota_us %lld: 0 (none) or >= 1000",
                    (long long)s->cpu_quota_us);
        if (!in_range(s->cpu_period_us, 1000, 1000000, 1))
                BAD("cpu_period_us %lld: 1000..1000000",
                    (long long)s->cpu_period_us);
        if (!in_range(s->disk_mb, 16, 1 << 22, 1))
                BAD("disk_mb %lld: 16..4194304", (long long)s->disk_mb);
        if (!in_range(s->tmp_mb, 1, 1 << 20, 1) ||
            !in_range(s->shm_mb, 1, 1 << 20, 1))
                BAD("tmp_mb/shm_mb: 1..1048576");
        if (!in_range(s->nofile, 16, 1 << 20, 1))
                BAD("nofile %lld: 16..1048576", (long long)s->nofile);
        if (s->network && strcmp(s->network, "none"))
                return sbx_seterr(errstr, errstr_size, SBX_ERR_UNSUPPORTED,
                                  "network profile '%s': only \"none\" is "
                                  "supported",
                                  s->network);
        if ((s->workspace_dir && !sbx_fs_abs_path_ok(s->workspace_dir)) ||
            (s->agent_path && !sbx_fs_abs_path_ok(s->agent_path)) ||
            (s->socket_dir && !sbx_fs_abs_path_ok(s->socket_dir)) ||
            (s->deps_dir && !sbx_fs_abs_path_ok(s->deps_dir)))
                BAD("workspace_dir, deps_dir, agent_path and socket_dir must "
                    "be "
                    "absolute paths of [A-Za-z0-9/_.+-]");
        if (s->workspace_late && (s->workspace_dir || s->deps_dir))
                BAD("workspace_dir and deps_dir exclude workspace_late");
        if (s->cwd && s->cwd[0] != '/')
                BAD("cwd '%s' is not absolute", s->cwd);
        if (!s->argv || !s->argv[0] || !s->argv[0][0])
                BAD("no init argv");
        for (size_t i = 0; s->env && s->env[i]; i++)
                if (!strchr(s->env[i], '=') || s->env[i][0] == '=')
                        BAD("env entry '%s' is not K=V", s->env[i]);
        for (size_t i = 0; s->caps && s->caps[i]; i++)
                if (strncmp(s->caps[i], "CAP_", 4) ||
                    strspn(s->caps[i], "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") !=
                        strlen(s->caps[i]))
                        BAD("capability '%s'", s->caps[i]);
        return SBX_OK;
#undef BAD
}

static json_t *strings(const char *const *v, size_t n)
{
        json_t *a = json_array();
        for (size_t i = 0; v && (n ? i < n : v[i] != NULL); i++)
                json_array_append_new(a, json_string(v[i]));
        return a;
}

static json_t *mount_opts(const char *dst,
                          const char *type,
                          const char *src,
                          json_t *opts)
{
        return json_pack("{s:s,s:s,s:s,s:o}", "destination", dst, "type", type,
                         "source", src, "options", opts);
}

static json_t *tmpfs(const char *dst,
                     const char *src,
                     const char *mode,
                     int64_t size_mb,
                     int noexec)
{
        char sz[64], md[32];
        json_t *o = json_pack("[s,s]", "nosuid", "nodev");
        if (noexec)
                json_array_append_new(o, json_string("noexec"));
        json_array_append_new(
            o, json_string(sbx_fmt(md, sizeof(md), "mode=%s", mode)));
        json_array_append_new(
            o, json_string(
                   sbx_fmt(sz, sizeof(sz), "size=%lldm", (long long)size_mb)));
        return mount_opts(dst, "tmpfs", src, o);
}

static json_t *bind(const char *dst,
                    const char *src,
                    int ro,
                    int rec,
                    int noexec)
{
        json_t *o = json_pack("[s,s,s,s]", rec ? "rbind" : "bind",
                              ro ? "ro" : "rw", "nosuid", "nodev");
        if (noexec)
                json_array_append_new(o, json_string("noexec"));
        return mount_opts(dst, "bind", src, o);
}

static json_t *mounts(const sbx_bundle_t *b)
{
        const sbx_sandbox_spec_t *s = b->spec;
        json_t *m                   = json_array();

        json_array_append_new(
            m, mount_opts("/proc", "proc", "proc",
                          json_pack("[s,s,s]", "nosuid", "noexec", "nodev")));
        json_array_append_new(
            m, mount_opts("/dev", "tmpfs", "tmpfs",
                          json_pack("[s,s,s,s]", "nosuid", "strictatime",
                                    "mode=755", "size=65536k")));
        json_array_append_new(
            m, mount_opts(
                   "/dev/pts", "devpts", "devpts",
                   json_pack("[s,s,s,s,s,s]", "nosuid", "noexec", "newinstance",
                             "ptmxmode=0666", "mode=0620", "gid=5")));
        json_array_append_new(
            m, tmpfs("/dev/shm", "shm", "1777", s->shm_mb ? s->shm_mb : 64, 1));
        json_array_append_new(
            m, mount_opts("/dev/mqueue", "mqueue", "mqueue",
                          json_pack("[s,s,s]", "nosuid", "noexec", "nodev")));
        json_array_append_new(
            m, mount_opts(
                   "/sys", "sysfs", "sysfs",
                   json_pack("[s,s,s,s]", "nosuid", "noexec", "nodev", "ro")));
        json_array_append_new(
            m, mount_opts("/sys/fs/cgroup", "cgroup", "cgroup",
                          json_pack("[s,s,s,s,s]", "nosuid", "noexec", "nodev",
                                    "relatime", "ro")));
        json_array_append_new(
            m, tmpfs("/tmp", "tmpfs", "1777", s->tmp_mb ? s->tmp_mb : 64, 0));
        for (size_t i = 0; i < b->n_binds; i++)
                json_array_append_new(
                    m, bind(b->binds[i].destination, b->binds[i].source,
                            b->binds[i].readonly, 1, 0));
        if (s->workspace_dir)
                json_array_append_new(
                    m, bind(SBX_WORKSPACE_PATH, s->workspace_dir, 0, 1, 0));
        if (s->deps_dir)
                json_array_append_new(
                    m, bind(SBX_DEPS_PATH, s->deps_dir, 1, 0, 1));
        if (s->agent_path)
                json_array_append_new(
                    m, bind(SBX_AGENT_PATH, s->agent_path, 1, 0, 0));
        if (s->socket_dir)
                json_array_append_new(
                    m, bind(SBX_AGENT_SOCKET_DIR, s->socket_dir, 0, 0, 1));
        if (s->workspace_late) {
                /* "rslave" lets host mounts in; keep all but the slot out */
                size_t i;
                json_t *e;
                json_array_foreach(m, i, e)
                {
                        if (!strcmp(
                                json_string_value(json_object_get(e, "type")),
                                "bind"))
                                json_array_append_new(
                                    json_object_get(e, "options"),
                                    json_string("rprivate"));
                }
        }
        return m;
}

static json_t *process(const sbx_sandbox_spec_t *s)
{
        const char *def_env[] = {BUNDLE_DEFAULT_PATH,
                                 s->uid ? "HOME=/home/sandbox" : "HOME=/root",
                                 "LANG=C.UTF-8", NULL};
        json_t *caps          = json_object();
        int64_t nofile        = s->nofile ? s->nofile : 1024;

        for (size_t i = 0; i < SBX_ARRAY_SIZE(cap_sets); i++)
                json_object_set_new(caps, cap_sets[i], strings(s->caps, 0));
        return json_pack(
            "{s:b,s:{s:I,s:I},s:o,s:o,s:s,s:o,s:[{s:s,s:I,s:I},{s:s,s:i,s:i}],"
            "s:b}",
            "terminal", 0, "user", "uid", (json_int_t)s->uid, "gid",
            (json_int_t)s->gid, "args", strings(s->argv, 0), "env",
            strings(s->env ? s->env : def_env, 0), "cwd", s->cwd ? s->cwd : "/",
            "capabilities", caps, "rlimits", "type", "RLIMIT_NOFILE", "hard",
            (json_int_t)nofile, "soft", (json_int_t)nofile, "type",
            "RLIMIT_CORE", "hard", 0, "soft", 0, "noNewPrivileges", 1);
}

static json_t *resources(const sbx_sandbox_spec_t *s)
{
        json_int_t mem = (json_int_t)s->memory_mb << 20;
        json_t *r =
            json_pack("{s:[{s:b,s:s}],s:{s:I,s:I},s:{s:I}}", "devices", "allow",
                      0, "access", "rwm", "memory", "limit", mem, "swap", mem,
                      "pids", "limit", (json_int_t)s->pids_max);
        json_t *cpu = json_pack(
            "{s:I}", "period",
            (json_int_t)(s->cpu_period_us ? s->cpu_period_us : 100000));
        if (s->cpu_quota_us)
                json_object_set_new(cpu, "quota",
                                    json_integer(s->cpu_quota_us));
        json_object_set_new(r, "cpu", cpu);
        return r;
}

json_t *sbx_bundle_config(const sbx_bundle_t *b,
                          char *errstr,
                          size_t errstr_size)
{
        const sbx_sandbox_spec_t *s = b->spec;
        json_t *ns, *linux_, *cfg;
        char cgpath[512];

        if (sbx_sandbox_spec_check(s, errstr, errstr_size))
                return NULL;
        if (!b->root_path || b->root_path[0] != '/' || !b->cgroup_parent ||
            b->cgroup_parent[0] != '/') {
                sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                           "bundle: root_path and cgroup_parent must be "
                           "absolute");
                return NULL;
        }
        ns = json_array();
        for (size_t i = 0; i < SBX_ARRAY_SIZE(namespaces); i++)
                json_array_append_new(
                    ns, json_pack("{s:s}", "type", namespaces[i]));
        sbx_fmt(
            cgpath, sizeof(cgpath), "%s%s%s", b->cgroup_parent,
            b->cgroup_parent[strlen(b->cgroup_parent) - 1] == '/' ? "" : "/",
            s->id);
        linux_ = json_pack(
            "{s:o,s:s,s:o,s:o,s:o,s:o,s:s}", "namespaces", ns, "cgroupsPath",
            cgpath, "resources", resources(s), "maskedPaths",
            strings(masked_paths, SBX_ARRAY_SIZE(masked_paths)),
            "readonlyPaths",
            strings(readonly_paths, SBX_ARRAY_SIZE(readonly_paths)), "seccomp",
            sbx_seccomp_profile_new(), "rootfsPropagation",
            s->workspace_late ? "rslave" : "rprivate");
        cfg = json_pack("{s:s,s:o,s:{s:s,s:b},s:s,s:o,s:o,s:{s:s,s:s,s:s,s:s}}",
                        "ociVersion", "1.0.2", "process", process(s), "root",
                        "path", b->root_path, "readonly", 0, "hostname",
                        "sandbox", "mounts", mounts(b), "linux", linux_,
                        "annotations", "sbx.id", s->id, "sbx.runtime",
                        s->runtime ? s->runtime : "runc", "sbx.template",
                        sbx_template_name(s->tmpl), "sbx.template.digest",
                        sbx_template_digest(s->tmpl));
        sbx_assert(cfg);
        return cfg;
}

sbx_err_t sbx_bundle_write(const char *dir,
                           const json_t *config,
                           char *errstr,
                           size_t errstr_size)
{
        char path[1024], tmp[1024];
        char *text = json_dumps(config, JSON_INDENT(1) | JSON_SORT_KEYS);
        sbx_err_t err;

        sbx_assert(text);
        sbx_fmt(path, sizeof(path), "%s/config.json", dir);
        sbx_fmt(tmp, sizeof(tmp), "%s/.config.json.tmp", dir);
        err = sbx_fs_write(tmp, text, strlen(text), 0600, errstr, errstr_size);
        if (!err && rename(tmp, path))
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                 "rename %s: %s", path, strerror(errno));
        if (err)
                unlink(tmp);
        free(text);
        return err;
}
