/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runc/runsc CLI driver. Each call is one process: an argv assembled here
 * (global flags, the subcommand, its flags, then the container id and,
 * for exec, the user's argv last), run with a deadline. `run --detach`
 * gets /dev/null for stdio, because the runtimes hand their own stdio to
 * the container's init and a pipe held by a sandbox would be a channel
 * into the daemon; its errors come from the runtime's JSON log instead.
 */
#include "runtime/runc.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "runtime/bundle.h"
#include "runtime/spawn.h"

struct sbx_runc_s {
        sbx_runc_kind_t kind;
        char *bin, *root;
        int64_t create_ms, op_ms;
};

typedef struct argv_s {
        const char **v;
        size_t n, cap;
        char **owned;
        size_t n_owned;
        size_t verb; /* index of the subcommand, for messages */
} argv_t;

static const char *const status_names[] = {
    "absent", "creating", "created", "running", "paused", "stopped", "unknown",
};

const char *sbx_sandbox_status_str(sbx_sandbox_status_t s)
{
        if ((size_t)s >= SBX_ARRAY_SIZE(status_names))
                return "unknown";
        return status_names[s];
}

sbx_sandbox_status_t sbx_sandbox_status_parse(const char *s)
{
        for (size_t i = 0; s && i < SBX_ARRAY_SIZE(status_names); i++)
                if (!strcmp(s, status_names[i]))
                        return (sbx_sandbox_status_t)i;
        return SBX_SANDBOX_UNKNOWN;
}

static void av_push(argv_t *a, const char *s)
{
        if (a->n + 2 > a->cap) {
                a->cap = a->cap ? a->cap * 2 : 32;
                a->v   = sbx_realloc(a->v, a->cap * sizeof(char *));
        }
        a->v[a->n++] = s;
        a->v[a->n]   = NULL;
}

static void av_pushf(argv_t *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void av_pushf(argv_t *a, const char *fmt, ...)
{
        va_list ap;
        char *s = NULL;
        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
                sbx_assert(!"vasprintf");
        va_end(ap);
        a->owned = sbx_realloc(a->owned, (a->n_owned + 1) * sizeof(char *));
        a->owned[a->n_owned++] = s;
        av_push(a, s);
}

static void av_free(argv_t *a)
{
        for (size_t i = 0; i < a->n_owned; i++)
                free(a->owned[i]);
        free(a->owned);
        free(a->v);
}

/* bin --root R [runsc flags]; @p flags: SBX_RUNC_RUN_* (run only) */
static void av_base(const sbx_runc_t *r, argv_t *a, unsigned flags)
{
        av_push(a, r->bin);
        av_push(a, "--root");
        av_push(a, r->root);
        if (r->kind == SBX_RUNC_KIND_RUNSC) {
                av_push(a, "--platform=ptrace");
                av_push(a, "--network=none");
                av_push(a, "--oci-seccomp");
                if (flags & SBX_RUNC_RUN_HOST_UDS)
                        av_push(a, "--host-uds=create");
                if (flags & SBX_RUNC_RUN_SHARED_ROOT)
                        av_push(a, "--file-access=shared");
        }
}

sbx_runc_t *sbx_runc_new(sbx_runc_kind_t kind,
                         const char *bin,
                         const char *root,
                         char *errstr,
                         size_t errstr_size)
{
        sbx_runc_t *r = sbx_calloc(1, sizeof(*r));
        r->kind       = kind;
        r->bin        = sbx_strdup(bin ? bin : "");
        r->root       = sbx_strdup(root ? root : "");
        r->create_ms  = kind == SBX_RUNC_KIND_RUNSC ? 60000 : 30000;
        r->op_ms      = 30000;
        if (!bin || bin[0] != '/' || access(bin, X_OK)) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_NOENT,
                           "%s: not an executable (absolute path needed)",
                           r->bin);
                goto fail;
        }
        if (!root || root[0] != '/' || (mkdir(root, 0700) && errno != EEXIST)) {
                sbx_seterr(
                    errstr, errstr_size, SBX_ERR_IO, "runtime root '%s': %s",
                    r->root,
                    root && root[0] == '/' ? strerror(errno) : "not absolute");
                goto fail;
        }
        return r;
fail:
        sbx_runc_destroy(r);
        return NULL;
}

void sbx_runc_destroy(sbx_runc_t *r)
{
        if (!r)
                return;
        free(r->bin);
        free(r->root);
        free(r);
}

const char *sbx_runc_name(const sbx_runc_t *r)
{
        return r->kind == SBX_RUNC_KIND_RUNSC ? "runsc" : "runc";
}

void sbx_runc_set_timeouts(sbx_runc_t *r, int64_t create_ms, int64_t op_ms)
{
        if (create_ms > 0)
                r->create_ms = create_ms;
        if (op_ms > 0)
                r->op_ms = op_ms;
}

/* Runs @p a with captured output; a nonzero exit is SBX_ERR_RUNTIME (or
 * SBX_ERR_NOENT when the runtime says the container does not exist). */
static sbx_err_t call(const sbx_runc_t *r,
                      argv_t *a,
                      sbx_spawn_result_t *ret,
                      char *errstr,
                      size_t errstr_size)
{
        sbx_spawn_opts_t o = {.timeout_ms = r->op_ms, .max_output = 4 << 20};
        sbx_spawn_result_t res;
        sbx_err_t err = sbx_spawn_run(a->v, &o, &res, errstr, errstr_size);

        if (!err && res.exit_code) {
                int noent = strstr(res.err, "does not exist") != NULL;
                err       = sbx_seterr(errstr, errstr_size,
                                 noent ? SBX_ERR_NOENT : SBX_ERR_RUNTIME,
                                       "%s %s: exit %d: %s", sbx_runc_name(r),
                                       a->v[a->verb], res.exit_code,
                                       sbx_strtrim(res.err));
        }
        if (ret && !err)
                *ret = res;
        else
                sbx_spawn_result_clear(&res);
        return err;
}

/* Joins the "msg" of error-level entries of a runtime JSON log (runsc
 * writes them without newlines, so objects are read back to back). */
static void log_errors(const char *path, char *out, size_t out_size)
{
        char *text = NULL;
        size_t len = 0, off = 0, used = 0;

        if (!out_size)
                return;
        out[0] = '\0';
        if (sbx_read_file(path, 1 << 20, &text, &len, NULL, 0))
                return;
        while (off < len) {
                json_error_t je;
                json_t *o = json_loadb(text + off, len - off,
                                       JSON_DISABLE_EOF_CHECK, &je);
                const char *lvl, *msg;
                if (!o)
                        break;
                off += je.position;
                lvl = json_string_value(json_object_get(o, "level"));
                msg = json_string_value(json_object_get(o, "msg"));
                if (lvl && msg && !strcmp(lvl, "error") && used < out_size) {
                        int n = snprintf(out + used, out_size - used, "%s%s",
                                         used ? "; " : "", msg);
                        if (n > 0)
                                used += (size_t)n;
                }
                json_decref(o);
                while (off < len && (text[off] == '\n' || text[off] == ' '))
                        off++;
        }
        free(text);
}

sbx_err_t sbx_runc_run(const sbx_runc_t *r,
                       const char *id,
                       const char *bundle,
                       const char *log_path,
                       unsigned flags,
                       char *errstr,
                       size_t errstr_size)
{
        argv_t a           = {0};
        sbx_spawn_opts_t o = {.timeout_ms = r->create_ms, .discard_output = 1};
        sbx_spawn_result_t res;
        sbx_err_t err;
        char msg[2048];
        FILE *f;

        if (!sbx_sandbox_id_ok(id))
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "bad container id");
        f = fopen(log_path, "we");
        if (!f)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_IO, "%s: %s",
                                  log_path, strerror(errno));
        fclose(f);
        av_base(r, &a, flags);
        av_push(&a, "--log");
        av_push(&a, log_path);
        av_push(&a, "--log-format");
        av_push(&a, "json");
        av_push(&a, "run");
        av_push(&a, "--detach");
        av_push(&a, "--bundle");
        av_push(&a, bundle);
        av_push(&a, id);
        err = sbx_spawn_run(a.v, &o, &res, errstr, errstr_size);
        if (!err && res.exit_code) {
                log_errors(log_path, msg, sizeof(msg));
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_RUNTIME,
                                 "%s run %s: exit %d: %s", sbx_runc_name(r), id,
                                 res.exit_code,
                                 msg[0] ? msg : "(no error logged)");
        }
        sbx_spawn_result_clear(&res);
        av_free(&a);
        return err;
}

sbx_err_t sbx_runc_state(const sbx_runc_t *r,
                         const char *id,
                         sbx_sandbox_status_t *ret_status,
                         int *ret_pid,
                         char *errstr,
                         size_t errstr_size)
{
        argv_t a = {0};
        sbx_spawn_result_t res;
        json_t *j = NULL;
        json_error_t je;
        sbx_err_t err;

        if (!sbx_sandbox_id_ok(id))
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "bad container id");
        av_base(r, &a, 0);
        a.verb = a.n;
        av_push(&a, "state");
        av_push(&a, id);
        err = call(r, &a, &res, errstr, errstr_size);
        av_free(&a);
        if (err)
                return err;
        j = json_loadb(res.out, res.out_len, 0, &je);
        if (!json_is_object(j)) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_RUNTIME,
                                 "%s state %s: unreadable output: %s",
                                 sbx_runc_name(r), id, je.text);
        } else {
                *ret_status = sbx_sandbox_status_parse(
                    json_string_value(json_object_get(j, "status")));
                *ret_pid = (int)json_integer_value(json_object_get(j, "pid"));
        }
        json_decref(j);
        sbx_spawn_result_clear(&res);
        return err;
}

static sbx_err_t simple(const sbx_runc_t *r,
                        const char *verb,
                        const char *flag,
                        const char *id,
                        const char *arg,
                        char *errstr,
                        size_t errstr_size)
{
        argv_t a = {0};
        sbx_err_t err;
        if (!sbx_sandbox_id_ok(id))
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "bad container id");
        av_base(r, &a, 0);
        a.verb = a.n;
        av_push(&a, verb);
        if (flag)
                av_push(&a, flag);
        av_push(&a, id);
        if (arg)
                av_push(&a, arg);
        err = call(r, &a, NULL, errstr, errstr_size);
        av_free(&a);
        return err;
}

sbx_err_t sbx_runc_kill(const sbx_runc_t *r,
                        const char *id,
                        int sig,
                        int all,
                        char *errstr,
                        size_t errstr_size)
{
        char s[16];
        return simple(r, "kill", all ? "--all" : NULL, id,
                      sbx_fmt(s, sizeof(s), "%d", sig), errstr, errstr_size);
}

sbx_err_t sbx_runc_pause(const sbx_runc_t *r,
                         const char *id,
                         char *errstr,
                         size_t errstr_size)
{
        return simple(r, "pause", NULL, id, NULL, errstr, errstr_size);
}

sbx_err_t sbx_runc_resume(const sbx_runc_t *r,
                          const char *id,
                          char *errstr,
                          size_t errstr_size)
{
        return simple(r, "resume", NULL, id, NULL, errstr, errstr_size);
}

sbx_err_t sbx_runc_delete(const sbx_runc_t *r,
                          const char *id,
                          char *errstr,
                          size_t errstr_size)
{
        sbx_err_t err =
            simple(r, "delete", "--force", id, NULL, errstr, errstr_size);
        return err == SBX_ERR_NOENT ? SBX_OK : err;
}

sbx_err_t sbx_runc_list(const sbx_runc_t *r,
                        sbx_runc_list_cb_t *cb,
                        void *opaque,
                        char *errstr,
                        size_t errstr_size)
{
        argv_t a = {0};
        sbx_spawn_result_t res;
        json_t *j, *e;
        json_error_t je;
        size_t i;
        sbx_err_t err;

        av_base(r, &a, 0);
        a.verb = a.n;
        av_push(&a, "list");
        av_push(&a, "--format");
        av_push(&a, "json");
        err = call(r, &a, &res, errstr, errstr_size);
        av_free(&a);
        if (err)
                return err;
        j = json_loadb(res.out, res.out_len, JSON_DECODE_ANY, &je);
        if (!j || !(json_is_array(j) || json_is_null(j)))
                err =
                    sbx_seterr(errstr, errstr_size, SBX_ERR_RUNTIME,
                               "%s list: unreadable output: %s",
                               sbx_runc_name(r), j ? "not an array" : je.text);
        json_array_foreach(j, i, e)
        {
                const char *id = json_string_value(json_object_get(e, "id"));
                if (id)
                        cb(id,
                           sbx_sandbox_status_parse(
                               json_string_value(json_object_get(e, "status"))),
                           (int)json_integer_value(json_object_get(e, "pid")),
                           opaque);
        }
        json_decref(j);
        sbx_spawn_result_clear(&res);
        return err;
}

typedef struct exec_kill_s {
        const sbx_runc_t *r;
        const char *id, *pidfile;
} exec_kill_t;

/* At an exec's deadline: SIGKILLs the process itself (runc/runsc exec then
 * reaps it and exits) — by host pid under runc, by its pid inside the
 * sandbox under runsc. Killing runc exec first would leave the process to
 * the sandbox's init, or running. */
static void exec_kill(void *opaque)
{
        const exec_kill_t *k = opaque;
        char *s              = NULL, flag[32], e[256];
        long pid;
        if (sbx_read_file(k->pidfile, 64, &s, NULL, NULL, 0))
                return;
        pid = strtol(s, NULL, 10);
        free(s);
        if (pid <= 1)
                return;
        if (k->r->kind == SBX_RUNC_KIND_RUNC)
                kill((pid_t)pid, SIGKILL);
        else
                simple(k->r, "kill",
                       sbx_fmt(flag, sizeof(flag), "--pid=%ld", pid), k->id,
                       "9", e, sizeof(e));
}

sbx_err_t sbx_runc_exec(const sbx_runc_t *r,
                        const char *id,
                        const char *const *argv,
                        const sbx_runc_exec_opts_t *opts,
                        sbx_runc_exec_result_t *ret,
                        char *errstr,
                        size_t errstr_size)
{
        static const sbx_runc_exec_opts_t none;
        const sbx_runc_exec_opts_t *x = opts ? opts : &none;
        argv_t a                      = {0};
        char pidfile[1024]            = "";
        exec_kill_t kill_ctx          = {r, id, pidfile};
        sbx_spawn_opts_t o            = {
                       .timeout_ms = x->timeout_ms ? x->timeout_ms : r->op_ms,
                       .max_output = x->max_output};
        sbx_spawn_result_t res;
        sbx_err_t err;

        memset(ret, 0, sizeof(*ret));
        if (!sbx_sandbox_id_ok(id) || !argv || !argv[0])
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "exec: bad container id or empty argv");
        av_base(r, &a, 0);
        av_push(&a, "exec");
        for (size_t i = 0; x->env && x->env[i]; i++)
                av_pushf(&a, "--env=%s", x->env[i]);
        if (x->cwd)
                av_pushf(&a, "--cwd=%s", x->cwd);
        if (x->set_user)
                av_pushf(&a, "--user=%u:%u", (unsigned)x->uid,
                         (unsigned)x->gid);
        sbx_fmt(pidfile, sizeof(pidfile), "%s/.exec-%ld-%lld.pid", r->root,
                (long)gettid(), (long long)sbx_mono_us());
        if (r->kind == SBX_RUNC_KIND_RUNC)
                av_pushf(&a, "--pid-file=%s", pidfile);
        else
                av_pushf(&a, "--internal-pid-file=%s", pidfile);
        o.on_timeout = exec_kill;
        o.opaque     = &kill_ctx;
        av_push(&a, id);
        for (size_t i = 0; argv[i]; i++)
                av_push(&a, argv[i]);
        err = sbx_spawn_run(a.v, &o, &res, errstr, errstr_size);
        if (!err || err == SBX_ERR_TIMEOUT) {
                ret->exit_code = res.exit_code;
                ret->out       = res.out;
                ret->out_len   = res.out_len;
                ret->err       = res.err;
                ret->err_len   = res.err_len;
                ret->truncated = res.truncated;
        } else {
                sbx_spawn_result_clear(&res);
        }
        unlink(pidfile);
        av_free(&a);
        return err;
}

void sbx_runc_exec_result_clear(sbx_runc_exec_result_t *r)
{
        if (!r)
                return;
        free(r->out);
        free(r->err);
        r->out = r->err = NULL;
}
