/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Taking a snapshot (sbx_runtime_snapshot, runtime/layers.h). Every upper
 * dir of the paused sandbox is copied into staging/ without the store's
 * lock (the slow part), then the file system is flushed (syncfs) if any
 * layer is new, then the snapshot commits under the lock: each staging
 * copy is renamed to its digest's name, or dropped if a layer of that
 * name exists, and the record is written. The commit checks under the
 * lock that the parent survived collection. Which upper dir is which
 * stack, which base template and which parent come from the record
 * sbx_runtime_create left in the sandbox directory, never from the
 * sandbox's own files.
 */
#include "runtime/layers.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "runtime/fsutil.h"
#include "runtime/layers_int.h"
#include "runtime/sha256.h"

/* What the sandbox directory says of its template (template.json). */
typedef struct sandbox_rec_s {
        char base[SBX_LAYER_DIGEST_SIZE];
        char snapshot[SBX_SNAPSHOT_ID_SIZE];
        size_t n;
        char targets[SBX_LAYERS_MAX_STACKS][SBX_LAYERS_TARGET_SIZE];
} sandbox_rec_t;

/* The template record sbx_runtime_create left in the sandbox dir. */
static sbx_err_t sandbox_load(sbx_runtime_t *rt,
                              const char *id,
                              sandbox_rec_t *r,
                              char *errstr,
                              size_t errstr_size)
{
        char dir[1024], path[1200];
        const char *base = NULL, *snap = NULL;
        json_t *j = NULL, *stacks = NULL, *jsnap = NULL, *t;
        size_t i;
        sbx_err_t err;

        if (!sbx_sandbox_id_ok(id))
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "sandbox id '%s' is not valid", id ? id : "");
        sbx_fmt(path, sizeof(path), "%s/" SBX_RUNTIME_TEMPLATE_FILE,
                sbx_runtime_sandbox_dir(rt, id, dir, sizeof(dir)));
        err = sbx_layers_load_json(path, &j, errstr, errstr_size);
        if (err == SBX_ERR_NOENT)
                return sbx_seterr(errstr, errstr_size, err,
                                  "sandbox %s: no %s (no such sandbox, or "
                                  "made before snapshots existed)",
                                  id, path);
        if (err)
                return err;
        memset(r, 0, sizeof(*r));
        if (json_unpack(j, "{s:s, s:o, s:o}", "base", &base, "snapshot", &jsnap,
                        "stacks", &stacks) ||
            !sbx_layers_digest_ok(base) ||
            ((snap = json_string_value(jsnap)) ? !sbx_layers_id_ok(snap)
                                               : !json_is_null(jsnap)) ||
            !json_is_array(stacks) || !json_array_size(stacks) ||
            json_array_size(stacks) > SBX_LAYERS_MAX_STACKS)
                err = SBX_ERR_IO;
        json_array_foreach(err ? NULL : stacks, i, t)
        {
                if (!sbx_layers_target_ok(json_string_value(t)) ||
                    (i == 0) != !strcmp(json_string_value(t), "/")) {
                        err = SBX_ERR_IO;
                        break;
                }
                sbx_fmt(r->targets[i], SBX_LAYERS_TARGET_SIZE, "%s",
                        json_string_value(t));
                r->n = i + 1;
        }
        if (!err) {
                sbx_fmt(r->base, sizeof(r->base), "%s", base);
                sbx_fmt(r->snapshot, sizeof(r->snapshot), "%s",
                        snap ? snap : "");
        } else
                sbx_seterr(errstr, errstr_size, err,
                           "%s: not a template record", path);
        json_decref(j);
        return err;
}

/* runc only: gVisor's sentry may hold what a paused sandbox wrote to a
 * file it keeps open, so its upper dirs are not known to be complete. */
static sbx_err_t check_runtime(sbx_runtime_t *rt,
                               const char *id,
                               char *errstr,
                               size_t errstr_size)
{
        char name[64];
        sbx_err_t err =
            sbx_runtime_name(rt, id, name, sizeof(name), errstr, errstr_size);
        if (!err && strcmp(name, "runc"))
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_UNSUPPORTED,
                                 "sandbox %s runs under %s: snapshots are "
                                 "taken of runc sandboxes only",
                                 id, name);
        return err;
}

/* The sandbox must not write while its upper dirs are copied. */
static sbx_err_t check_quiet(sbx_runtime_t *rt,
                             const char *id,
                             char *errstr,
                             size_t errstr_size)
{
        const char *fz = sbx_cgroup_mount(sbx_runtime_cgroup(rt), "freezer");
        char path[1024], cgp[256], *state = NULL;
        sbx_sandbox_status_t st;
        int pid, frozen = 0;
        sbx_err_t err;

        if (fz) {
                sbx_fmt(path, sizeof(path), "%s%s/freezer.state", fz,
                        sbx_runtime_cgroup_path(id, cgp, sizeof(cgp)));
                frozen = !sbx_read_file(path, 64, &state, NULL, NULL, 0) &&
                         !strcmp(sbx_strtrim(state), "FROZEN");
                free(state);
        }
        if (frozen)
                return SBX_OK;
        err = sbx_runtime_state(rt, id, &st, &pid, errstr, errstr_size);
        if (err)
                return err;
        if (st != SBX_SANDBOX_PAUSED && st != SBX_SANDBOX_STOPPED)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "sandbox %s is %s: pause it (or let it "
                                  "stop) before a snapshot",
                                  id, sbx_sandbox_status_str(st));
        return SBX_OK;
}

/* Checks that @p parent is the snapshot the sandbox was forked from, on
 * the same base, and that the chain stays within SBX_LAYERS_MAX_CHAIN. */
static sbx_err_t check_parent(const sbx_layers_t *s,
                              const char *id,
                              const sandbox_rec_t *sb,
                              const char *parent,
                              char *errstr,
                              size_t errstr_size)
{
        sbx_snap_t r;
        char p[SBX_SNAPSHOT_ID_SIZE];
        size_t depth = 1;

        parent = parent ? parent : "";
        if (strcmp(parent, sb->snapshot))
                return sbx_seterr(
                    errstr, errstr_size, SBX_ERR_INVALID,
                    "sandbox %s was made from %s%s: its snapshot's parent "
                    "must be %s, not %s",
                    id, sb->snapshot[0] ? "snapshot " : "a template",
                    sb->snapshot, sb->snapshot[0] ? sb->snapshot : "none",
                    parent[0] ? parent : "none");
        sbx_fmt(p, sizeof(p), "%s", parent);
        for (; *p; sbx_fmt(p, sizeof(p), "%s", r.parent), depth++) {
                sbx_err_t err =
                    sbx_layers_snap_load(s, p, &r, errstr, errstr_size);
                if (err)
                        return err;
                if (strcmp(r.base, sb->base))
                        return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                          "snapshot %s is of template %s, "
                                          "sandbox %s of %s",
                                          p, r.base, id, sb->base);
                if (depth >= SBX_LAYERS_MAX_CHAIN)
                        return sbx_seterr(errstr, errstr_size, SBX_ERR_TOOBIG,
                                          "snapshot chain of %s would be "
                                          "deeper than %d",
                                          id, SBX_LAYERS_MAX_CHAIN);
        }
        return SBX_OK;
}

/* Copies the sandbox's upper dirs into @p staging[i] (made here). */
static sbx_err_t copy_uppers(sbx_runtime_t *rt,
                             sbx_layers_t *s,
                             const char *id,
                             const sandbox_rec_t *sb,
                             sbx_snap_t *r,
                             char staging[][1024],
                             sbx_layer_count_t *count,
                             char *errstr,
                             size_t errstr_size)
{
        char dir[1024], upper[1200];
        sbx_err_t err = SBX_OK;

        sbx_runtime_sandbox_dir(rt, id, dir, sizeof(dir));
        for (size_t i = 0; !err && i < sb->n; i++) {
                sbx_layer_count_t before = *count;
                sbx_layer_ref_t *l       = &r->layers[i];
                if (i == 0)
                        sbx_fmt(upper, sizeof(upper), "%s/disk/root.upper",
                                dir);
                else
                        sbx_fmt(upper, sizeof(upper), "%s/disk/sub%zu.upper",
                                dir, i - 1);
                sbx_layers_work_path(s, "staging", staging[i],
                                     sizeof(staging[i]));
                err = sbx_layer_copy(upper, staging[i], &s->lim, count,
                                     l->digest, errstr, errstr_size);
                sbx_fmt(l->target, SBX_LAYERS_TARGET_SIZE, "%s",
                        sb->targets[i]);
                l->size    = count->bytes - before.bytes;
                l->entries = count->entries - before.entries;
                r->n       = i + 1;
        }
        return err;
}

/* The snapshot's digest (over its layers) and id (over base, parent and
 * layers). */
static void name_snapshot(sbx_snap_t *r)
{
        sbx_sha256_t *h = sbx_sha256_new();
        char hex[SBX_SHA256_HEX_LEN + 1], line[512];

        for (size_t i = 0; i < r->n; i++)
                sbx_sha256_update(
                    h, line,
                    strlen(sbx_fmt(line, sizeof(line), "%s %s\n",
                                   r->layers[i].target, r->layers[i].digest)));
        sbx_sha256_hex_final(h, hex);
        sbx_fmt(r->digest, sizeof(r->digest), "sha256:%s", hex);
        sbx_fmt(line, sizeof(line), "sbx snapshot v1\nbase %s\nparent %s\n%s\n",
                r->base, r->parent, r->digest);
        sbx_sha256_update(h, line, strlen(line));
        sbx_sha256_hex_final(h, hex);
        sbx_fmt(r->id, sizeof(r->id), "snap-%.12s", hex);
        sbx_sha256_destroy(h);
}

/* Flushes the store's file system: a layer's name must not outlive a
 * host crash without its content. */
static sbx_err_t flush(const sbx_layers_t *s, char *errstr, size_t errstr_size)
{
        int fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int rc = fd < 0 ? -1 : syncfs(fd);
        int e  = errno;
        if (fd >= 0)
                close(fd);
        if (rc)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                  "syncfs %s: %s", s->dir, strerror(e));
        return SBX_OK;
}

/* 1 if every layer of @p r is in the store already. */
static int all_stored(const sbx_layers_t *s, const sbx_snap_t *r)
{
        char path[1024];
        struct stat st;
        for (size_t i = 0; i < r->n; i++)
                if (lstat(sbx_layers_layer_dir(s, r->layers[i].digest, path,
                                               sizeof(path)),
                          &st))
                        return 0;
        return 1;
}

/* Under the lock: staging copies become layers (flushed first, once,
 * unless *synced), then the record. */
static sbx_err_t commit(sbx_layers_t *s,
                        sbx_snap_t *r,
                        char staging[][1024],
                        const sbx_layer_count_t *count,
                        int *synced,
                        char *errstr,
                        size_t errstr_size)
{
        char path[1024];
        struct stat st;
        sbx_err_t err = SBX_OK;
        int fd        = sbx_layers_lock(s, errstr, errstr_size);

        if (fd < 0)
                return SBX_ERR_IO;
        if (r->parent[0] &&
            stat(sbx_layers_snap_path(s, r->parent, path, sizeof(path)), &st))
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_NOENT,
                                 "parent snapshot %s was collected meanwhile",
                                 r->parent);
        for (size_t i = 0; !err && i < r->n; i++) {
                sbx_layers_layer_dir(s, r->layers[i].digest, path,
                                     sizeof(path));
                if (!lstat(path, &st))
                        continue; /* stored: the copy goes after the lock */
                if (!*synced && !(err = flush(s, errstr, errstr_size)))
                        *synced = 1;
                if (!err && rename(staging[i], path))
                        err = sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                         "rename %s to %s: %s", staging[i],
                                         path, strerror(errno));
        }
        name_snapshot(r);
        if (!err &&
            lstat(sbx_layers_snap_path(s, r->id, path, sizeof(path)), &st))
                err = sbx_layers_snap_write(s, r, count->bytes, count->entries,
                                            errstr, errstr_size);
        close(fd);
        return err;
}

sbx_err_t sbx_runtime_snapshot(sbx_runtime_t *rt,
                               const char *id,
                               sbx_layers_t *s,
                               const char *parent,
                               sbx_snapshot_info_t *ret_info,
                               char *errstr,
                               size_t errstr_size)
{
        int64_t t0 = sbx_mono_us();
        sandbox_rec_t sb;
        sbx_snap_t r;
        char staging[SBX_LAYERS_MAX_STACKS][1024];
        sbx_layer_count_t count = {0, 0, 0};
        int64_t t_sync          = 0;
        int synced              = 0;
        sbx_err_t err;

        memset(&r, 0, sizeof(r));
        if ((err = sandbox_load(rt, id, &sb, errstr, errstr_size)) ||
            (err = check_parent(s, id, &sb, parent, errstr, errstr_size)) ||
            (err = check_runtime(rt, id, errstr, errstr_size)) ||
            (err = check_quiet(rt, id, errstr, errstr_size)))
                return err;
        sbx_fmt(r.base, sizeof(r.base), "%s", sb.base);
        sbx_fmt(r.parent, sizeof(r.parent), "%s", sb.snapshot);
        err = copy_uppers(rt, s, id, &sb, &r, staging, &count, errstr,
                          errstr_size);
        /* flushed outside the lock, unless nothing new is to be stored */
        t_sync = sbx_mono_us();
        if (!err && !all_stored(s, &r) &&
            !(err = flush(s, errstr, errstr_size)))
                synced = 1;
        t_sync = sbx_mono_us() - t_sync;
        if (!err)
                err = commit(s, &r, staging, &count, &synced, errstr,
                             errstr_size);
        for (size_t i = 0; i < r.n; i++)
                sbx_fs_rmtree(staging[i], NULL, 0); /* what is left */
        if (err)
                return err;
        memset(ret_info, 0, sizeof(*ret_info));
        sbx_fmt(ret_info->id, sizeof(ret_info->id), "%s", r.id);
        sbx_fmt(ret_info->digest, sizeof(ret_info->digest), "%s", r.digest);
        ret_info->size_bytes  = count.bytes;
        ret_info->entries     = count.entries;
        ret_info->skipped     = count.skipped;
        ret_info->sync_us     = t_sync;
        ret_info->duration_us = sbx_mono_us() - t0;
        return SBX_OK;
}
