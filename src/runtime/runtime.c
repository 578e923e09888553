/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The runtime façade: spec -> rootfs -> bundle -> runc/runsc, and back.
 * Which runtime runs a sandbox is recorded in its directory before the
 * container is started, so every later call — and a restarted daemon —
 * asks the right one. Create undoes its own partial work; delete is the
 * same undo, callable at any time and any number of times.
 */
#include "runtime/runtime.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "runtime/fsutil.h"
#include "runtime/rootfs.h"
#include "runtime/manifest.h"
#include "runtime/workspace.h"

#define RUNTIME_META SBX_RUNTIME_NAME_FILE

struct sbx_runtime_s {
        char *state_root, *sandboxes;
        sbx_runc_t *runc, *runsc;
        sbx_cgroup_t *cg;
};

const char *sbx_find_bin(const char *name, char *buf, size_t size)
{
        static const char *const dirs[] = {"/usr/sbin",       "/usr/bin",
                                           "/usr/local/sbin", "/usr/local/bin",
                                           "/sbin",           "/bin"};
        for (size_t i = 0; i < SBX_ARRAY_SIZE(dirs); i++) {
                sbx_fmt(buf, size, "%s/%s", dirs[i], name);
                if (!access(buf, X_OK))
                        return buf;
        }
        return NULL;
}

sbx_runtime_t *sbx_runtime_new(const char *state_root,
                               char *errstr,
                               size_t errstr_size)
{
        sbx_runtime_t *rt = sbx_calloc(1, sizeof(*rt));
        char bin[256], root[1024];

        if (!sbx_fs_path_ok(state_root) || state_root[0] != '/') {
                sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                           "state root '%s': need an absolute path of "
                           "[A-Za-z0-9/_.+-]",
                           state_root ? state_root : "");
                goto fail;
        }
        rt->state_root = sbx_strdup(state_root);
        rt->sandboxes =
            sbx_strdup(sbx_fmt(root, sizeof(root), "%s/sandboxes", state_root));
        if (sbx_fs_mkdirs(state_root, 0700, 0, 0, errstr, errstr_size) ||
            sbx_fs_mkdirs(rt->sandboxes, 0700, 0, 0, errstr, errstr_size))
                goto fail;
        rt->cg = sbx_cgroup_new(errstr, errstr_size);
        if (!rt->cg)
                goto fail;
        if (!sbx_find_bin("runc", bin, sizeof(bin))) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_NOENT,
                           "runc not found in /usr/sbin, /usr/bin, "
                           "/usr/local/*: install it (deploy/local/"
                           "install.sh)");
                goto fail;
        }
        rt->runc =
            sbx_runc_new(SBX_RUNC_KIND_RUNC, bin,
                         sbx_fmt(root, sizeof(root), "%s/runc", state_root),
                         errstr, errstr_size);
        if (!rt->runc)
                goto fail;
        if (sbx_find_bin("runsc", bin, sizeof(bin))) {
                rt->runsc = sbx_runc_new(
                    SBX_RUNC_KIND_RUNSC, bin,
                    sbx_fmt(root, sizeof(root), "%s/runsc", state_root), errstr,
                    errstr_size);
                if (!rt->runsc)
                        goto fail;
        }
        return rt;
fail:
        sbx_runtime_destroy(rt);
        return NULL;
}

void sbx_runtime_destroy(sbx_runtime_t *rt)
{
        if (!rt)
                return;
        sbx_runc_destroy(rt->runc);
        sbx_runc_destroy(rt->runsc);
        sbx_cgroup_destroy(rt->cg);
        free(rt->state_root);
        free(rt->sandboxes);
        free(rt);
}

int sbx_runtime_has(const sbx_runtime_t *rt, const char *name)
{
        if (!strcmp(name, "runc"))
                return rt->runc != NULL;
        if (!strcmp(name, "runsc"))
                return rt->runsc != NULL;
        return 0;
}

void sbx_runtime_set_timeouts(sbx_runtime_t *rt,
                              int64_t create_ms,
                              int64_t op_ms)
{
        sbx_runc_set_timeouts(rt->runc, create_ms, op_ms);
        if (rt->runsc)
                sbx_runc_set_timeouts(rt->runsc, create_ms, op_ms);
}

char *sbx_runtime_sandbox_dir(const sbx_runtime_t *rt,
                              const char *id,
                              char *buf,
                              size_t size)
{
        return sbx_fmt(buf, size, "%s/%s", rt->sandboxes, id);
}

const sbx_cgroup_t *sbx_runtime_cgroup(const sbx_runtime_t *rt)
{
        return rt->cg;
}

char *sbx_runtime_cgroup_path(const char *id, char *buf, size_t size)
{
        return sbx_fmt(buf, size, "%s/%s", SBX_RUNTIME_CGROUP_PARENT, id);
}

/* The driver that runs @p id, from its sandbox directory. */
sbx_err_t sbx_runtime_name(const sbx_runtime_t *rt,
                           const char *id,
                           char *buf,
                           size_t size,
                           char *errstr,
                           size_t errstr_size)
{
        char path[1024], *name = NULL;
        sbx_err_t err;

        if (!sbx_sandbox_id_ok(id))
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "sandbox id '%s' is not valid", id ? id : "");
        sbx_fmt(path, sizeof(path), "%s/%s/" RUNTIME_META, rt->sandboxes, id);
        err = sbx_read_file(path, 64, &name, NULL, errstr, errstr_size);
        if (err == SBX_ERR_NOENT)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_NOENT,
                                  "no sandbox '%s'", id);
        if (!err)
                sbx_fmt(buf, size, "%s", sbx_strtrim(name));
        free(name);
        return err;
}

static sbx_err_t driver_of(sbx_runtime_t *rt,
                           const char *id,
                           sbx_runc_t **ret,
                           char *errstr,
                           size_t errstr_size)
{
        char name[64];
        sbx_err_t err =
            sbx_runtime_name(rt, id, name, sizeof(name), errstr, errstr_size);

        if (err)
                return err;
        if (!strcmp(name, "runc"))
                *ret = rt->runc;
        else if (!strcmp(name, "runsc") && rt->runsc)
                *ret = rt->runsc;
        else
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_UNSUPPORTED,
                                 "sandbox '%s' runs under '%s', which is not "
                                 "available",
                                 id, name);
        return err;
}

/* Removes the cgroup, waiting a little for exiting tasks to leave it. */
static sbx_err_t cgroup_gone(sbx_runtime_t *rt,
                             const char *id,
                             char *errstr,
                             size_t errstr_size)
{
        char cgp[256];
        sbx_err_t err = SBX_OK;
        sbx_runtime_cgroup_path(id, cgp, sizeof(cgp));
        for (int i = 0; i < 50; i++) {
                err = sbx_cgroup_remove(rt->cg, cgp, errstr, errstr_size);
                if (err != SBX_ERR_CONFLICT)
                        break;
                usleep(20000);
        }
        return err;
}

sbx_err_t sbx_runtime_delete(sbx_runtime_t *rt,
                             const char *id,
                             char *errstr,
                             size_t errstr_size)
{
        sbx_runc_t *drv = NULL;
        char dir[1024];
        sbx_err_t err;

        err = driver_of(rt, id, &drv, errstr, errstr_size);
        if (err == SBX_ERR_INVALID)
                return err;
        if (!err) {
                err = sbx_runc_delete(drv, id, errstr, errstr_size);
        } else {
                /* no record: whatever either runtime still has is ours */
                err = sbx_runc_delete(rt->runc, id, errstr, errstr_size);
                if (!err && rt->runsc)
                        err =
                            sbx_runc_delete(rt->runsc, id, errstr, errstr_size);
        }
        if (!err)
                err = cgroup_gone(rt, id, errstr, errstr_size);
        if (!err)
                err = sbx_rootfs_wipe(
                    sbx_runtime_sandbox_dir(rt, id, dir, sizeof(dir)), errstr,
                    errstr_size);
        return err;
}

/* What a snapshot of the sandbox needs to know of its template. */
static sbx_err_t write_template(const char *dir,
                                const sbx_template_t *t,
                                char *errstr,
                                size_t errstr_size)
{
        char path[1024];
        json_t *d  = sbx_template_describe(t);
        char *text = json_dumps(d, JSON_COMPACT);
        sbx_err_t err;

        sbx_assert(text != NULL);
        err = sbx_fs_write(
            sbx_fmt(path, sizeof(path), "%s/" SBX_RUNTIME_TEMPLATE_FILE, dir),
            text, strlen(text), 0600, errstr, errstr_size);
        free(text);
        json_decref(d);
        return err;
}

sbx_err_t sbx_runtime_create(sbx_runtime_t *rt,
                             const sbx_sandbox_spec_t *spec,
                             char *errstr,
                             size_t errstr_size)
{
        sbx_runc_t *drv;
        sbx_rootfs_t *fs         = NULL;
        sbx_bundle_bind_t *binds = NULL;
        json_t *cfg              = NULL;
        char dir[1024], path[1024], e2[256], msg[2048] = "";
        const char *name = spec->runtime ? spec->runtime : "runc";
        sbx_err_t err;

        err = sbx_sandbox_spec_check(spec, errstr, errstr_size);
        if (err)
                return err;
        drv = !strcmp(name, "runsc") ? rt->runsc : rt->runc;
        if (!drv)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_UNSUPPORTED,
                                  "%s is not installed", name);
        if (spec->workspace_dir &&
            (err = sbx_fs_mkdirs(spec->workspace_dir, 0755, spec->uid,
                                 spec->gid, errstr, errstr_size)))
                return err;
        if (spec->deps_dir && (err = sbx_fs_mkdirs(spec->deps_dir, 0755, 0, 0,
                                                   errstr, errstr_size)))
                return err;
        if (spec->socket_dir &&
            (err = sbx_fs_mkdirs(spec->socket_dir, 0700, spec->uid, spec->gid,
                                 errstr, errstr_size)))
                return err;
        sbx_runtime_sandbox_dir(rt, spec->id, dir, sizeof(dir));
        err = sbx_rootfs_new(dir, spec->tmpl,
                             spec->disk_mb ? spec->disk_mb : 1024, &fs, errstr,
                             errstr_size);
        if (err == SBX_ERR_CONFLICT) /* not ours to undo */
                return sbx_seterr(errstr, errstr_size, err,
                                  "sandbox '%s' already exists", spec->id);
        if (err)
                return err; /* rootfs undid its own work */
        sbx_fmt(path, sizeof(path), "%s/" RUNTIME_META, dir);
        err = sbx_fs_write(path, name, strlen(name), 0600, errstr, errstr_size);
        if (!err)
                err = write_template(dir, spec->tmpl, errstr, errstr_size);
        if (!err && spec->workspace_late)
                err = sbx_slot_new(dir, fs->root, SBX_SLOT_WORKSPACE, spec->uid,
                                   spec->gid, errstr, errstr_size);
        if (!err && spec->workspace_late)
                err = sbx_slot_new(dir, fs->root, SBX_SLOT_DEPS, 0, 0, errstr,
                                   errstr_size);
        if (err)
                goto fail;
        binds = sbx_calloc(fs->n_subs, sizeof(*binds));
        for (size_t i = 0; i < fs->n_subs; i++)
                binds[i] = (sbx_bundle_bind_t){fs->sub_merged[i],
                                               fs->sub_target[i], 0};
        cfg =
            sbx_bundle_config(&(sbx_bundle_t){spec, fs->root, binds, fs->n_subs,
                                              SBX_RUNTIME_CGROUP_PARENT},
                              errstr, errstr_size);
        if (!cfg) {
                err = SBX_ERR_INVALID;
                goto fail;
        }
        err = sbx_bundle_write(dir, cfg, errstr, errstr_size);
        if (err)
                goto fail;
        sbx_fmt(path, sizeof(path), "%s/runtime.log", dir);
        err = sbx_runc_run(
            drv, spec->id, dir, path,
            (spec->socket_dir ? SBX_RUNC_RUN_HOST_UDS : 0) |
                (spec->workspace_late ? SBX_RUNC_RUN_SHARED_ROOT : 0),
            msg, sizeof(msg));
        if (err)
                sbx_seterr(errstr, errstr_size, err, "%s", msg);
        if (err && strstr(msg, "exists")) {
                /* the runtime already runs this id: not ours to delete */
                sbx_rootfs_wipe(dir, e2, sizeof(e2));
                goto done;
        }
        if (err)
                goto fail;
        goto done;
fail:
        sbx_runc_delete(drv, spec->id, e2, sizeof(e2));
        cgroup_gone(rt, spec->id, e2, sizeof(e2));
        sbx_rootfs_wipe(dir, e2, sizeof(e2));
done:
        json_decref(cfg);
        free(binds);
        sbx_rootfs_destroy(fs);
        return err;
}

/* The uid and gid of the sandbox's init, from its config.json. */
static sbx_err_t sandbox_user(const char *dir,
                              uid_t *ret_uid,
                              gid_t *ret_gid,
                              char *errstr,
                              size_t errstr_size)
{
        char path[1024];
        json_error_t jerr;
        json_int_t uid = -1, gid = -1;
        json_t *cfg;

        sbx_fmt(path, sizeof(path), "%s/config.json", dir);
        cfg = json_load_file(path, 0, &jerr);
        if (!cfg)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_IO, "%s: %s",
                                  path, jerr.text);
        json_unpack(cfg, "{s:{s:{s:I,s:I}}}", "process", "user", "uid", &uid,
                    "gid", &gid);
        json_decref(cfg);
        if (uid < 0 || uid > UINT32_MAX || gid < 0 || gid > UINT32_MAX)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                  "%s: no process.user", path);
        *ret_uid = (uid_t)uid;
        *ret_gid = (gid_t)gid;
        return SBX_OK;
}

static sbx_err_t attach(sbx_runtime_t *rt,
                        const char *id,
                        const char *slot,
                        const char *dir,
                        char *errstr,
                        size_t errstr_size)
{
        sbx_runc_t *drv;
        char sdir[1024];
        uid_t uid     = 0;
        gid_t gid     = 0;
        int ro        = !strcmp(slot, SBX_SLOT_DEPS);
        sbx_err_t err = driver_of(rt, id, &drv, errstr, errstr_size);

        if (err)
                return err;
        sbx_runtime_sandbox_dir(rt, id, sdir, sizeof(sdir));
        if (!ro) /* the workspace is the sandbox user's */
                err = sandbox_user(sdir, &uid, &gid, errstr, errstr_size);
        if (!err)
                err = sbx_slot_attach(sdir, slot, dir, ro, uid, gid, errstr,
                                      errstr_size);
        return err;
}

sbx_err_t sbx_runtime_attach_workspace(sbx_runtime_t *rt,
                                       const char *id,
                                       const char *dir,
                                       char *errstr,
                                       size_t errstr_size)
{
        return attach(rt, id, SBX_SLOT_WORKSPACE, dir, errstr, errstr_size);
}

sbx_err_t sbx_runtime_attach_deps(sbx_runtime_t *rt,
                                  const char *id,
                                  const char *dir,
                                  char *errstr,
                                  size_t errstr_size)
{
        return attach(rt, id, SBX_SLOT_DEPS, dir, errstr, errstr_size);
}

sbx_err_t sbx_runtime_manifest(sbx_runtime_t *rt,
                               const char *id,
                               json_t **ret,
                               char *errstr,
                               size_t errstr_size)
{
        sbx_runc_t *drv;
        char sdir[1024];
        sbx_err_t err = driver_of(rt, id, &drv, errstr, errstr_size);
        if (err)
                return err;
        return sbx_manifest_scan(
            sbx_runtime_sandbox_dir(rt, id, sdir, sizeof(sdir)), ret, errstr,
            errstr_size);
}

sbx_err_t sbx_runtime_detach_workspace(sbx_runtime_t *rt,
                                       const char *id,
                                       char *errstr,
                                       size_t errstr_size)
{
        char sdir[1024];
        struct stat st;
        if (!sbx_sandbox_id_ok(id))
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "sandbox id '%s' is not valid", id ? id : "");
        sbx_runtime_sandbox_dir(rt, id, sdir, sizeof(sdir));
        if (lstat(sdir, &st) && errno == ENOENT)
                return SBX_OK; /* no sandbox: nothing attached */
        return sbx_slot_detach(sdir, SBX_SLOT_WORKSPACE, errstr, errstr_size);
}

sbx_err_t sbx_runtime_attached_workspace(sbx_runtime_t *rt,
                                         const char *id,
                                         char **ret_dir,
                                         char *errstr,
                                         size_t errstr_size)
{
        sbx_runc_t *drv;
        char sdir[1024];
        sbx_err_t err = driver_of(rt, id, &drv, errstr, errstr_size);
        if (err)
                return err;
        return sbx_slot_attached(
            sbx_runtime_sandbox_dir(rt, id, sdir, sizeof(sdir)),
            SBX_SLOT_WORKSPACE, ret_dir, errstr, errstr_size);
}

sbx_err_t sbx_runtime_state(sbx_runtime_t *rt,
                            const char *id,
                            sbx_sandbox_status_t *ret_status,
                            int *ret_pid,
                            char *errstr,
                            size_t errstr_size)
{
        sbx_runc_t *drv;
        sbx_err_t err = driver_of(rt, id, &drv, errstr, errstr_size);
        if (!err)
                err = sbx_runc_state(drv, id, ret_status, ret_pid, errstr,
                                     errstr_size);
        return err;
}

sbx_err_t sbx_runtime_kill(sbx_runtime_t *rt,
                           const char *id,
                           int sig,
                           char *errstr,
                           size_t errstr_size)
{
        sbx_runc_t *drv;
        sbx_err_t err = driver_of(rt, id, &drv, errstr, errstr_size);
        if (!err)
                err = sbx_runc_kill(drv, id, sig, 0, errstr, errstr_size);
        return err;
}

sbx_err_t sbx_runtime_pause(sbx_runtime_t *rt,
                            const char *id,
                            char *errstr,
                            size_t errstr_size)
{
        sbx_runc_t *drv;
        sbx_err_t err = driver_of(rt, id, &drv, errstr, errstr_size);
        if (!err)
                err = sbx_runc_pause(drv, id, errstr, errstr_size);
        return err;
}

sbx_err_t sbx_runtime_resume(sbx_runtime_t *rt,
                             const char *id,
                             char *errstr,
                             size_t errstr_size)
{
        sbx_runc_t *drv;
        sbx_err_t err = driver_of(rt, id, &drv, errstr, errstr_size);
        if (!err)
                err = sbx_runc_resume(drv, id, errstr, errstr_size);
        return err;
}

sbx_err_t sbx_runtime_exec(sbx_runtime_t *rt,
                           const char *id,
                           const char *const *argv,
                           const sbx_runc_exec_opts_t *opts,
                           sbx_runc_exec_result_t *ret,
                           char *errstr,
                           size_t errstr_size)
{
        sbx_runc_t *drv;
        sbx_err_t err = driver_of(rt, id, &drv, errstr, errstr_size);
        if (err) {
                memset(ret, 0, sizeof(*ret));
                return err;
        }
        return sbx_runc_exec(drv, id, argv, opts, ret, errstr, errstr_size);
}

sbx_err_t sbx_runtime_usage(sbx_runtime_t *rt,
                            const char *id,
                            sbx_usage_t *ret,
                            char *errstr,
                            size_t errstr_size)
{
        char cgp[256];
        if (!sbx_sandbox_id_ok(id))
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "sandbox id '%s' is not valid", id ? id : "");
        return sbx_cgroup_usage(rt->cg,
                                sbx_runtime_cgroup_path(id, cgp, sizeof(cgp)),
                                ret, errstr, errstr_size);
}

sbx_err_t sbx_runtime_usage_reset(sbx_runtime_t *rt,
                                  const char *id,
                                  char *errstr,
                                  size_t errstr_size)
{
        char cgp[256];
        if (!sbx_sandbox_id_ok(id))
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "sandbox id '%s' is not valid", id ? id : "");
        return sbx_cgroup_reset_peak(
            rt->cg, sbx_runtime_cgroup_path(id, cgp, sizeof(cgp)), errstr,
            errstr_size);
}

typedef struct seen_s {
        char **ids;
        size_t n;
        const char *runtime;
        sbx_runtime_list_cb_t *cb;
        void *opaque;
} seen_t;

static void list_one(const char *id,
                     sbx_sandbox_status_t status,
                     int pid,
                     void *opaque)
{
        seen_t *s      = opaque;
        s->ids         = sbx_realloc(s->ids, (s->n + 1) * sizeof(char *));
        s->ids[s->n++] = sbx_strdup(id);
        s->cb(id, s->runtime, status, pid, s->opaque);
}

sbx_err_t sbx_runtime_list(sbx_runtime_t *rt,
                           sbx_runtime_list_cb_t *cb,
                           void *opaque,
                           char *errstr,
                           size_t errstr_size)
{
        seen_t s              = {NULL, 0, "runc", cb, opaque};
        struct dirent **names = NULL;
        sbx_err_t err;
        int n;

        err = sbx_runc_list(rt->runc, list_one, &s, errstr, errstr_size);
        if (!err && rt->runsc) {
                s.runtime = "runsc";
                err =
                    sbx_runc_list(rt->runsc, list_one, &s, errstr, errstr_size);
        }
        n = err ? 0 : scandir(rt->sandboxes, &names, NULL, alphasort);
        for (int i = 0; i < n; i++) {
                const char *id = names[i]->d_name;
                size_t j;
                for (j = 0; j < s.n && strcmp(s.ids[j], id); j++)
                        ;
                if (j == s.n && sbx_sandbox_id_ok(id)) {
                        char name[64] = "";
                        sbx_runtime_name(rt, id, name, sizeof(name), NULL, 0);
                        cb(id, name, SBX_SANDBOX_ABSENT, 0, opaque);
                }
                free(names[i]);
        }
        free(names);
        for (size_t j = 0; j < s.n; j++)
                free(s.ids[j]);
        free(s.ids);
        return err;
}
