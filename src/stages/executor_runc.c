/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The executor's real runtime: sandboxes are OCI containers run by runc
 * (or runsc for the high-isolation tier) through src/runtime, with
 * sbx-agent as PID 1; execs, file operations and the level-1 reset go to
 * the agent over its socket, never through `runc exec` or a shell. Usage
 * is the sandbox cgroup's (peak memory since the exec began, OOM kills)
 * plus the agent's rusage. Every op is called from the executor's worker
 * threads, never twice at once for one sandbox.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/client.h"
#include "codec/codec.h"
#include "core/util.h"
#include "runtime/layers.h"
#include "runtime/runtime.h"
#include "runtime/template.h"
#include "stages/exec_output.h"
#include "stages/executor.h"

typedef struct runc_rt_s {
        sbx_runtime_t *rt;
        sbx_template_t *host;
        sbx_layers_t *layers; /* the node's snapshots, <var>/layers/<node> */
        char var[1024], agent[1024], node[128], deps[1024];
} runc_rt_t;

void sbx_capacity_of_machine(const sbx_config_t *c, sbx_capacity_t *cap)
{
        long cpus  = sysconf(_SC_NPROCESSORS_ONLN);
        long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
        int64_t mem = pages > 0 && psize > 0
                          ? (int64_t)pages / 1024 * psize / 1024
                          : 4096;

        cap->cpu =
            c->node_cpu ? c->node_cpu : (double)(cpus > 0 ? cpus : 1) * 8;
        cap->memory_mb = c->node_memory_mb
                             ? c->node_memory_mb
                             : (mem > 2048 ? mem - 1024 : mem / 2);
        cap->max_sandboxes =
            c->node_max_sandboxes ? c->node_max_sandboxes : 256;
}

/* The host template's python3 (its /usr is the host's): "3.11" from the
 * /usr/bin/python3 -> python3.11 link, or "". */
static void python_version(char *buf, size_t size)
{
        char target[64];
        ssize_t n = readlink("/usr/bin/python3", target, sizeof(target) - 1);
        buf[0]    = '\0';
        if (n <= 7 || strncmp(target, "python", 6))
                return;
        target[n] = '\0';
        sbx_fmt(buf, size, "%s", target + 6);
}

static void *runc_open(const sbx_config_t *config,
                       sbx_capacity_t *cap,
                       char *e,
                       size_t es)
{
        runc_rt_t *r     = sbx_calloc(1, sizeof(*r));
        const char *node = config->node_id;
        char path[1200];

        sbx_fmt(r->var, sizeof(r->var), "%s", config->var_dir);
        sbx_fmt(r->agent, sizeof(r->agent), "%s", config->agent_path);
        if (config->deps_dir)
                sbx_fmt(r->deps, sizeof(r->deps), "%s", config->deps_dir);
        else
                sbx_fmt(r->deps, sizeof(r->deps), "%s/deps", r->var);
        sbx_fmt(r->node, sizeof(r->node), "%s", node);
        sbx_capacity_of_machine(config, cap);
        if (access(r->agent, X_OK)) {
                sbx_seterr(e, es, SBX_ERR_NOENT,
                           "sbx-agent not found at %s (set agent_path)",
                           r->agent);
                goto fail;
        }
        r->rt = sbx_runtime_new(
            sbx_fmt(path, sizeof(path), "%s/run/%s", r->var, node), e, es);
        if (!r->rt)
                goto fail;
        r->host = sbx_template_host_new(
            sbx_fmt(path, sizeof(path), "%s/templates/host", r->var), e, es);
        if (!r->host)
                goto fail;
        /* One store per node: its collection knows only its own. */
        sbx_fmt(cap->template_digest, sizeof(cap->template_digest), "%s",
                sbx_template_digest(r->host));
        python_version(cap->python, sizeof(cap->python));
        r->layers = sbx_layers_open(
            sbx_fmt(path, sizeof(path), "%s/layers/%s", r->var, node), e, es);
        if (!r->layers)
                goto fail;
        return r;
fail:
        sbx_layers_close(r->layers);
        sbx_template_destroy(r->host);
        sbx_runtime_destroy(r->rt);
        free(r);
        return NULL;
}

static void runc_close(void *p)
{
        runc_rt_t *r = p;
        if (!r)
                return;
        sbx_layers_close(r->layers);
        sbx_template_destroy(r->host);
        sbx_runtime_destroy(r->rt);
        free(r);
}

static char *socket_dir(const runc_rt_t *r, const char *id, char *buf, size_t n)
{
        return sbx_fmt(buf, n, "%s/run/%s/sock/%s", r->var, r->node, id);
}

static sbx_agent_conn_t *agent_of(const runc_rt_t *r,
                                  const char *id,
                                  int timeout_ms,
                                  char *e,
                                  size_t es)
{
        char dir[1400], sock[1500];
        socket_dir(r, id, dir, sizeof(dir));
        sbx_fmt(sock, sizeof(sock), "%s/agent.sock", dir);
        return sbx_agent_connect(sock, timeout_ms, e, es);
}

static char *workspace_of(const runc_rt_t *r,
                          const sbx_state_t *s,
                          char *buf,
                          size_t n)
{
        return sbx_fmt(buf, n, "%s/workspaces/%s/%s", r->var,
                       s->tenant_id && *s->tenant_id ? s->tenant_id : "_",
                       s->session_id ? s->session_id : s->id);
}

/* The tenant's dependency cache (wheels under pip/): every sandbox of
 * the tenant reads it at /deps; nothing in a sandbox can write it. */
static char *deps_of(const runc_rt_t *r,
                     const sbx_state_t *s,
                     char *buf,
                     size_t n)
{
        return sbx_fmt(buf, n, "%s/%s", r->deps,
                       s->tenant_id && *s->tenant_id ? s->tenant_id : "_");
}

/* Creates sandbox @p s; a leftover of the same id that is not running
 * (a provision cut short by a restart) is deleted and made again. */
static int create(runc_rt_t *r,
                  const sbx_sandbox_spec_t *spec,
                  char *e,
                  size_t es)
{
        sbx_sandbox_status_t st;
        sbx_err_t err = sbx_runtime_create(r->rt, spec, e, es);
        if (err != SBX_ERR_CONFLICT)
                return err ? -1 : 0;
        int pid = 0;
        if (!sbx_runtime_state(r->rt, spec->id, &st, &pid, NULL, 0) &&
            (st == SBX_SANDBOX_RUNNING || st == SBX_SANDBOX_PAUSED))
                return 0; /* a restarted executor: it is there */
        if (sbx_runtime_delete(r->rt, spec->id, e, es))
                return -1;
        return sbx_runtime_create(r->rt, spec, e, es) ? -1 : 0;
}

static int runc_provision(void *p,
                          const sbx_state_t *s,
                          char *inst,
                          size_t is,
                          char *e,
                          size_t es)
{
        runc_rt_t *r = p;
        char dir[1400], ws[1400], deps[1400], sock[1500];
        const char *argv[] = {SBX_AGENT_PATH, "--socket",
                              SBX_AGENT_SOCKET_DIR "/agent.sock", NULL};
        sbx_sandbox_spec_t spec;
        sbx_agent_conn_t *c;
        sbx_template_t *fork = NULL;
        int rc;

        /* A fork: the snapshot's layers (and its parents') over the
         * template's. */
        if (s->fork_snapshot &&
            sbx_layers_fork_template(r->layers, r->host, s->fork_snapshot,
                                     &fork, e, es))
                return -1;
        memset(&spec, 0, sizeof(spec));
        socket_dir(r, s->id, dir, sizeof(dir)); /* made by create */
        spec.id           = s->id;
        spec.runtime      = sbx_streq(s->runtime, "runsc") ? "runsc" : "runc";
        spec.tmpl         = fork ? fork : r->host;
        spec.cpu_quota_us = s->cpu > 0 ? (int64_t)(s->cpu * 100000) : 100000;
        spec.memory_mb    = s->memory_mb >= 64 ? s->memory_mb : 512;
        spec.pids_max     = 512;
        spec.disk_mb      = 2048;
        /* The session's workspace outlives its sandboxes; a warm pool
         * sandbox has no session yet and gets it when leased (attach). */
        if (sbx_streq(s->origin, "pool"))
                spec.workspace_late = 1;
        else {
                spec.workspace_dir = workspace_of(r, s, ws, sizeof(ws));
                spec.deps_dir      = deps_of(r, s, deps, sizeof(deps));
        }
        spec.agent_path = r->agent;
        spec.socket_dir = dir;
        spec.argv       = argv;
        rc              = create(r, &spec, e, es);
        sbx_template_destroy(fork); /* the mounts hold what they need */
        if (rc)
                return -1;
        /* Provisioned means the agent answers. */
        sbx_fmt(sock, sizeof(sock), "%s/agent.sock", dir);
        c = sbx_agent_connect(sock, 10000, e, es);
        if (!c || sbx_agent_ping(c, e, es)) {
                sbx_agent_close(c);
                sbx_runtime_delete(r->rt, s->id, NULL, 0);
                return -1;
        }
        sbx_agent_close(c);
        sbx_fmt(inst, is, "%s:%s", spec.runtime, s->id);
        return 0;
}

static int runc_attach(void *p, const sbx_state_t *s, char *e, size_t es)
{
        runc_rt_t *r = p;
        char ws[1400], deps[1400];
        return sbx_runtime_attach_workspace(
                   r->rt, s->id, workspace_of(r, s, ws, sizeof(ws)), e, es) ||
                       sbx_runtime_attach_deps(
                           r->rt, s->id, deps_of(r, s, deps, sizeof(deps)), e,
                           es)
                   ? -1
                   : 0;
}

static int on_out(void *opaque, const uint8_t *d, size_t n)
{
        sbx_output_write(opaque, 0, d, n);
        return 0;
}

static int on_err(void *opaque, const uint8_t *d, size_t n)
{
        sbx_output_write(opaque, 1, d, n);
        return 0;
}

/* argv (and stdin) for an op: exec as asked; files through plain tools,
 * the path an argv element, never a shell. */
static int op_argv(const json_t *req,
                   const char **argv,
                   size_t max,
                   char *limit,
                   size_t ls)
{
        const char *op   = json_string_value(json_object_get(req, "op"));
        const char *path = json_string_value(json_object_get(req, "path"));
        const json_t *a  = json_object_get(req, "argv");
        size_t i, n = 0;

        if (op && !strcmp(op, "write_file")) {
                argv[n++] = "/usr/bin/dd";
                sbx_fmt(limit, ls, "of=%s", path ? path : "");
                argv[n++] = limit;
                argv[n++] = "status=none";
        } else if (op && !strcmp(op, "read_file")) {
                argv[n++] = "/usr/bin/cat";
                argv[n++] = "--";
                argv[n++] = path ? path : "";
        } else
                for (i = 0; i < json_array_size(a) && n < max - 1; i++)
                        argv[n++] = json_string_value(json_array_get(a, i));
        argv[n] = NULL;
        return (int)n;
}

/*
 * What an exec's environment holds unless the request says otherwise.
 * pip installs from the tenant's dependency cache only (the sandbox has
 * no network), into the sandbox's own root (a disposable overlay, so
 * Debian's "externally managed" guard does not apply), and leaves no
 * cache behind to pollute the environment.
 */
static const char *const default_env[] = {
    "PATH=/usr/local/bin:/usr/bin:/bin",
    "HOME=/root",
    "PIP_NO_INDEX=1",
    "PIP_FIND_LINKS=" SBX_DEPS_PATH "/pip",
    "PIP_BREAK_SYSTEM_PACKAGES=1",
    "PIP_NO_CACHE_DIR=1",
    "PIP_ROOT_USER_ACTION=ignore",
    "PIP_DISABLE_PIP_VERSION_CHECK=1",
};

/*
 * A lease whose task needs one package in a version the sandbox excludes
 * (ReuseChosen mode "venv") runs its execs in a venv above the sandbox's
 * packages: python and pip resolve there first, an install lands there,
 * and the sandbox's own packages stay as they were. It is made at the
 * lease's first exec, in /tmp, which the level-1 reset at release wipes.
 */
#define VENV_PATH "/tmp/sbx-venv"
static const char venv_script[] =
    "test -x " VENV_PATH
    "/bin/pip && exit 0; "
    "python3 -m venv --system-site-packages --without-pip " VENV_PATH
    " && "
    "printf '#!" VENV_PATH
    "/bin/python3\nimport sys\n"
    "from pip._internal.cli.main import main\nsys.exit(main())\n' > " VENV_PATH
    "/bin/pip && chmod 755 " VENV_PATH "/bin/pip && ln -sf pip " VENV_PATH
    "/bin/pip3";

static int venv_ready(const runc_rt_t *r,
                      const sbx_state_t *s,
                      const char **envp,
                      char *e,
                      size_t es)
{
        const char *argv[] = {"/bin/sh", "-c", venv_script, NULL};
        sbx_agent_exec_req_t ar;
        sbx_agent_exec_cb_t cb;
        sbx_agent_exit_t ex;
        sbx_agent_conn_t *c = agent_of(r, s->id, 5000, e, es);
        int rc;

        memset(&ar, 0, sizeof(ar));
        memset(&cb, 0, sizeof(cb));
        memset(&ex, 0, sizeof(ex));
        ar.argv        = argv;
        ar.envp        = envp;
        ar.cwd         = "/";
        ar.deadline_ms = 60000;
        rc             = !c || sbx_agent_exec(c, &ar, &cb, &ex, e, es) ? -1 : 0;
        sbx_agent_close(c);
        if (!rc && ex.exit_code != 0) {
                sbx_fmt(e, es, "making the venv at %s: exit %d", VENV_PATH,
                        ex.exit_code);
                rc = -1;
        }
        return rc;
}

static int runc_exec(void *p,
                     const sbx_state_t *s,
                     const json_t *req,
                     sbx_output_t *out,
                     sbx_exec_result_t *res)
{
        runc_rt_t *r = p;
        const char *argv[260], **envp;
        const char *k;
        json_t *v;
        char limit[4200], e[512];
        unsigned char *in = NULL;
        size_t inlen = 0, i = 0;
        sbx_agent_exec_req_t ar;
        sbx_agent_exit_t ex;
        sbx_agent_exec_cb_t cb;
        sbx_agent_conn_t *c;
        sbx_usage_t u, u0;
        const json_t *env     = json_object_get(req, "env");
        const json_t *stdin_v = json_object_get(req, "content");
        int venv              = json_is_true(json_object_get(req, "venv"));

        memset(&ar, 0, sizeof(ar));
        envp =
            sbx_calloc(json_object_size(env) + SBX_ARRAY_SIZE(default_env) + 2,
                       sizeof(*envp));
        json_object_foreach((json_t *)env, k, v)
        {
                char *kv = NULL;
                if (asprintf(&kv, "%s=%s", k, json_string_value(v)) < 0)
                        abort();
                envp[i++] = kv;
        }
        for (size_t d = 0; d < SBX_ARRAY_SIZE(default_env); d++) {
                size_t kl = strcspn(default_env[d], "=");
                char key[64];
                sbx_fmt(key, sizeof(key), "%.*s", (int)kl, default_env[d]);
                if (json_object_get(env, key))
                        continue;
                envp[i++] = sbx_strdup(venv && !strcmp(key, "PATH")
                                           ? "PATH=" VENV_PATH
                                             "/bin:/usr/local/bin:/usr/bin:/bin"
                                           : default_env[d]);
        }
        if (venv && !json_object_get(env, "VIRTUAL_ENV"))
                envp[i++] = sbx_strdup("VIRTUAL_ENV=" VENV_PATH);
        if (!json_is_string(stdin_v))
                stdin_v = json_object_get(req, "stdin");
        if (json_is_string(stdin_v))
                sbx_codec_bytes_value(stdin_v, &in, &inlen);
        op_argv(req, argv, SBX_ARRAY_SIZE(argv), limit, sizeof(limit));
        ar.deadline_ms =
            (uint32_t)json_integer_value(json_object_get(req, "timeout_ms"));
        ar.cwd = json_string_value(json_object_get(req, "cwd"));
        if (!ar.cwd)
                ar.cwd = "/workspace";
        ar.argv       = argv;
        ar.envp       = envp;
        ar.stdin_data = in;
        ar.stdin_len  = inlen;
        memset(&cb, 0, sizeof(cb));
        cb.on_stdout = on_out;
        cb.on_stderr = on_err;
        cb.opaque    = out;
        memset(&ex, 0, sizeof(ex));
        /* The cgroup's OOM kill count is for its whole life: this exec's
         * are the ones it adds. */
        memset(&u0, 0, sizeof(u0));
        sbx_runtime_usage(r->rt, s->id, &u0, NULL, 0);
        sbx_runtime_usage_reset(r->rt, s->id, NULL, 0);
        c = venv && venv_ready(r, s, envp, e, sizeof(e))
                ? NULL
                : agent_of(r, s->id, 5000, e, sizeof(e));
        if (!c || sbx_agent_exec(c, &ar, &cb, &ex, e, sizeof(e))) {
                sbx_sandbox_status_t st = SBX_SANDBOX_ABSENT;
                int pid                 = 0;
                res->exit_code          = 127;
                sbx_fmt(res->error, sizeof(res->error), "%s", e);
                /* Under runsc a memory or pids limit takes the whole
                 * sandbox down (gVisor holds every process): say so. */
                if (sbx_runtime_state(r->rt, s->id, &st, &pid, NULL, 0) ||
                    (st != SBX_SANDBOX_RUNNING && st != SBX_SANDBOX_PAUSED)) {
                        res->sandbox_died = 1;
                        sbx_fmt(res->error, sizeof(res->error),
                                "the sandbox died during the exec (%s): %s",
                                sbx_sandbox_status_str(st), e);
                }
        } else {
                res->exit_code =
                    ex.exit_code < 0 ? 128 + ex.signal : ex.exit_code;
                res->signal    = ex.signal;
                res->timed_out = ex.timed_out;
        }
        sbx_agent_close(c);
        memset(&u, 0, sizeof(u));
        sbx_runtime_usage(r->rt, s->id, &u, NULL, 0);
        res->usage = json_pack("{s:I, s:I, s:I, s:I, s:I, s:b}", "wall_us",
                               (json_int_t)ex.wall_us, "cpu_user_us",
                               (json_int_t)ex.user_us, "cpu_sys_us",
                               (json_int_t)ex.sys_us, "peak_memory_bytes",
                               (json_int_t)u.memory_peak, "max_rss_kb",
                               (json_int_t)ex.maxrss_kb, "oom_killed",
                               u.oom_kills > u0.oom_kills &&
                                   (ex.signal == 9 || res->sandbox_died));
        for (i = 0; envp[i]; i++)
                free((char *)envp[i]);
        free(envp);
        free(in);
        return 0;
}

static int runc_sanitize(void *p,
                         const sbx_state_t *s,
                         int *killed,
                         char *e,
                         size_t es)
{
        runc_rt_t *r        = p;
        sbx_agent_conn_t *c = agent_of(r, s->id, 5000, e, es);
        int rc              = !c || sbx_agent_reset(c, killed, e, es) ? -1 : 0;
        sbx_agent_close(c);
        return rc;
}

static int runc_destroy(void *p, const sbx_state_t *s)
{
        runc_rt_t *r = p;
        char dir[1400];
        int rc = sbx_runtime_delete(r->rt, s->id, NULL, 0) ? -1 : 0;
        rmdir(socket_dir(r, s->id, dir, sizeof(dir)));
        return rc;
}

static int runc_freeze(void *p, const sbx_state_t *s, char *e, size_t es)
{
        return sbx_runtime_pause(((runc_rt_t *)p)->rt, s->id, e, es) ? -1 : 0;
}

static int runc_thaw(void *p, const sbx_state_t *s, char *e, size_t es)
{
        return sbx_runtime_resume(((runc_rt_t *)p)->rt, s->id, e, es) ? -1 : 0;
}

typedef struct list_s {
        sbx_seen_cb_t *cb;
        void *opaque;
} list_t;

static void list_cb(const char *id,
                    const char *runtime,
                    sbx_sandbox_status_t st,
                    int pid,
                    void *opaque)
{
        list_t *l = opaque;
        sbx_seen_t seen;
        (void)runtime;
        (void)pid;
        switch (st) {
        case SBX_SANDBOX_RUNNING:
        case SBX_SANDBOX_CREATING:
        case SBX_SANDBOX_UNKNOWN:
                seen = SBX_SEEN_RUNNING;
                break;
        case SBX_SANDBOX_PAUSED:
                seen = SBX_SEEN_PAUSED;
                break;
        case SBX_SANDBOX_ABSENT:
                seen = SBX_SEEN_ABSENT;
                break;
        default: /* created but never started, or stopped */
                seen = SBX_SEEN_STOPPED;
                break;
        }
        l->cb(id, seen, l->opaque);
}

static int runc_list(void *p,
                     sbx_seen_cb_t *cb,
                     void *opaque,
                     char *e,
                     size_t es)
{
        list_t l = {cb, opaque};
        return sbx_runtime_list(((runc_rt_t *)p)->rt, list_cb, &l, e, es) ? -1
                                                                          : 0;
}

static int runc_manifest(void *p,
                         const sbx_state_t *s,
                         json_t **ret,
                         char *e,
                         size_t es)
{
        runc_rt_t *r = p;
        return sbx_runtime_manifest(r->rt, s->id, ret, e, es) ? -1 : 0;
}

/*
 * Snapshot: pause the sandbox (nothing writes while its upper dirs are
 * copied), capture them into the node's store, resume it. A fork's
 * snapshot is a child of the one it was forked from.
 */
static int runc_snapshot(void *p,
                         const sbx_state_t *s,
                         json_t **ret,
                         char *e,
                         size_t es)
{
        runc_rt_t *r = p;
        sbx_snapshot_info_t info;
        char e2[256];
        sbx_err_t err = sbx_runtime_pause(r->rt, s->id, e, es);

        if (err)
                return -1;
        err = sbx_runtime_snapshot(r->rt, s->id, r->layers, s->fork_snapshot,
                                   &info, e, es);
        if (sbx_runtime_resume(r->rt, s->id, e2, sizeof(e2)) && !err) {
                sbx_fmt(e, es, "resume after the snapshot: %s", e2);
                return -1;
        }
        if (err)
                return -1;
        *ret = json_pack("{s:s, s:s, s:s?, s:I, s:I, s:n}", "snapshot_id",
                         info.id, "layer_digest", info.digest,
                         "parent_snapshot", s->fork_snapshot, "size_bytes",
                         (json_int_t)info.size_bytes, "duration_us",
                         (json_int_t)info.duration_us, "error");
        return 0;
}

static int runc_collect(void *p,
                        const char *const *keep,
                        size_t n,
                        char *e,
                        size_t es)
{
        runc_rt_t *r = p;
        size_t snaps = 0, layers = 0;
        uint64_t freed = 0;
        if (sbx_layers_gc(r->layers, keep, n, &snaps, &layers, &freed, e, es))
                return -1;
        if (snaps || layers)
                fprintf(stderr,
                        "sbxd: executor %s: collected %zu snapshot(s), %zu "
                        "layer(s), %.1f MB\n",
                        r->node, snaps, layers, (double)freed / 1048576);
        return 0;
}

const sbx_runtime_ops_t sbx_runtime_runc = {
    .name      = "runc",
    .threads   = 1,
    .open      = runc_open,
    .close     = runc_close,
    .provision = runc_provision,
    .attach    = runc_attach,
    .exec      = runc_exec,
    .manifest  = runc_manifest,
    .snapshot  = runc_snapshot,
    .collect   = runc_collect,
    .sanitize  = runc_sanitize,
    .destroy   = runc_destroy,
    .freeze    = runc_freeze,
    .thaw      = runc_thaw,
    .list      = runc_list,
};
