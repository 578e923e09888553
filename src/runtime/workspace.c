/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Workspace slots (runtime/workspace.h). A host directory reaches the
 * slot as a detached bind (open_tree), made nosuid, nodev and private
 * (mount_setattr) before it is moved onto the slot (move_mount): the
 * flags it has then are the ones every propagated copy gets, since a
 * later remount would not propagate. It is opened with openat2(
 * RESOLVE_NO_SYMLINKS) after the symlink-refusing mkdir -p, so no
 * symlink, planted before or during the call, steers what is mounted.
 */
#include "runtime/workspace.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/util.h"
#include "runtime/fsutil.h"
#include "runtime/rootfs.h"

#define WS_HOST_MAX     4096 /* longest host directory path */
#define WS_DETACH_TRIES 8

/* D/<name><suffix>: the slot ("-slot") or its record ("-attached") */
static char *slot_path(const char *dir, const char *name, const char *suffix)
{
        size_t n = strlen(dir) + strlen(name) + strlen(suffix) + 2;
        char *s  = sbx_malloc(n);
        snprintf(s, n, "%s/%s%s", dir, name, suffix);
        return s;
}

static int name_ok(const char *name)
{
        return !strcmp(name, SBX_SLOT_WORKSPACE) ||
               !strcmp(name, SBX_SLOT_DEPS);
}

/* An O_PATH fd of directory @p path, reached without any symlink. */
static int open_dir_nofollow(const char *path)
{
        struct open_how how = {
            .flags   = O_PATH | O_DIRECTORY | O_CLOEXEC,
            .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
}

static void close_fd(int fd)
{
        if (fd >= 0)
                close(fd);
}

sbx_err_t sbx_slot_new(const char *dir,
                       const char *root,
                       const char *name,
                       uid_t uid,
                       gid_t gid,
                       char *errstr,
                       size_t errstr_size)
{
        char *slot;
        int rfd = -1, wfd = -1, tree = -1;
        struct stat st;
        sbx_err_t err;

        if (!name_ok(name))
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "no slot is called '%s'", name);
        slot = slot_path(dir, name, "-slot");
        err  = sbx_fs_mkdir(slot, 0755, uid, gid, errstr, errstr_size);
        if (err)
                goto done;
        /* its own peer group: nothing but an attach propagates to it */
        if (mount(slot, slot, NULL, MS_BIND, NULL) ||
            mount(NULL, slot, NULL,
                  MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV |
                      MS_NOEXEC,
                  NULL) ||
            mount(NULL, slot, NULL, MS_PRIVATE, NULL) ||
            mount(NULL, slot, NULL, MS_SHARED, NULL)) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                 "%s slot %s: %s", name, slot, strerror(errno));
                goto done;
        }
        rfd = open(root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (rfd >= 0 && (!mkdirat(rfd, name, 0755) || errno == EEXIST))
                wfd = openat(rfd, name,
                             O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (wfd < 0 || fstat(wfd, &st) || !S_ISDIR(st.st_mode)) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                 "%s/%s: %s (the template's /%s must be a "
                                 "directory)",
                                 root, name,
                                 wfd < 0 ? strerror(errno) : "not a directory",
                                 name);
                goto done;
        }
        /* a clone of a shared mount is its peer */
        tree = open_tree(AT_FDCWD, slot, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        if (tree < 0 ||
            move_mount(tree, "", wfd, "",
                       MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH))
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                 "%s slot on %s/%s: %s", name, root, name,
                                 strerror(errno));
done:
        close_fd(tree);
        close_fd(wfd);
        close_fd(rfd);
        free(slot);
        return err;
}

/* The recorded host directory, or NULL. */
static char *recorded(const char *rec)
{
        char *s = NULL;
        if (sbx_read_file(rec, WS_HOST_MAX + 2, &s, NULL, NULL, 0))
                return NULL;
        sbx_strtrim(s);
        return s;
}

static sbx_err_t record(const char *rec,
                        const char *host,
                        char *errstr,
                        size_t errstr_size)
{
        size_t tn = strlen(rec) + 5;
        char *tmp = sbx_malloc(tn);
        size_t n  = strlen(host) + 2;
        char *txt = sbx_malloc(n);
        sbx_err_t err;

        snprintf(tmp, tn, "%s.tmp", rec);
        snprintf(txt, n, "%s\n", host);
        err = sbx_fs_write(tmp, txt, strlen(txt), 0600, errstr, errstr_size);
        if (!err && rename(tmp, rec))
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                 "rename %s: %s", rec, strerror(errno));
        if (err)
                unlink(tmp);
        free(tmp);
        free(txt);
        return err;
}

sbx_err_t sbx_slot_attach(const char *dir,
                          const char *name,
                          const char *host,
                          int readonly,
                          uid_t uid,
                          gid_t gid,
                          char *errstr,
                          size_t errstr_size)
{
        struct mount_attr attr = {
            .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                        (readonly ? MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC : 0),
            .propagation = MS_PRIVATE,
        };
        char *slot = slot_path(dir, name, "-slot");
        char *rec  = slot_path(dir, name, "-attached");
        char *cur  = NULL;
        struct stat hs, ss;
        int hfd = -1, tree = -1;
        size_t n;
        sbx_err_t err = SBX_OK;

        if (!sbx_fs_abs_path_ok(host) || strlen(host) > WS_HOST_MAX) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                 "%s '%s': need an absolute path of "
                                 "[A-Za-z0-9/_.+-] without '..'",
                                 name, host ? host : "");
                goto done;
        }
        n = sbx_rootfs_mounts_at(slot);
        if (n == 0) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                 "%s has no %s slot (the sandbox was "
                                 "made without workspace_late)",
                                 dir, name);
                goto done;
        }
        if (n > 1) {
                /* attached already: success if it is this directory */
                hfd = open_dir_nofollow(host);
                if (hfd >= 0 && !fstat(hfd, &hs) && !stat(slot, &ss) &&
                    hs.st_dev == ss.st_dev && hs.st_ino == ss.st_ino)
                        goto done;
                cur = recorded(rec);
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_CONFLICT,
                                 "%s is attached to this sandbox, not %s",
                                 cur ? cur : "another directory", host);
                goto done;
        }
        err = sbx_fs_mkdirs(host, 0755, uid, gid, errstr, errstr_size);
        if (err)
                goto done;
        hfd = open_dir_nofollow(host);
        if (hfd < 0) {
                err =
                    sbx_seterr(errstr, errstr_size,
                               errno == ELOOP ? SBX_ERR_INVALID : SBX_ERR_IO,
                               "%s %s: %s%s", name, host, strerror(errno),
                               errno == ELOOP ? " (symlinks are refused)" : "");
                goto done;
        }
        err = record(rec, host, errstr, errstr_size);
        if (err)
                goto done;
        tree = open_tree(hfd, "",
                         OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
        if (tree < 0 ||
            mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) ||
            move_mount(tree, "", AT_FDCWD, slot, MOVE_MOUNT_F_EMPTY_PATH)) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                 "attaching %s to %s: %s", host, slot,
                                 strerror(errno));
                unlink(rec);
        }
done:
        close_fd(tree);
        close_fd(hfd);
        free(cur);
        free(rec);
        free(slot);
        return err;
}

sbx_err_t sbx_slot_detach(const char *dir,
                          const char *name,
                          char *errstr,
                          size_t errstr_size)
{
        char *slot    = slot_path(dir, name, "-slot");
        char *rec     = slot_path(dir, name, "-attached");
        size_t n      = sbx_rootfs_mounts_at(slot);
        sbx_err_t err = SBX_OK;

        if (n == 0) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                 "%s has no %s slot", dir, name);
                goto done;
        }
        /* Lazily: a sandbox process with a file or its cwd in the
         * workspace keeps that until it lets go; new lookups see the
         * empty slot at once. Never the slot's own mount (n > 1). */
        for (int i = 0; n > 1 && i < WS_DETACH_TRIES; i++) {
                if (umount2(slot, MNT_DETACH | UMOUNT_NOFOLLOW) &&
                    errno != EINVAL) {
                        err = sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                         "detaching the %s of %s: %s", name,
                                         dir, strerror(errno));
                        goto done;
                }
                n = sbx_rootfs_mounts_at(slot);
        }
        if (n > 1)
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                 "%s: still %zu mounts on the slot", dir, n);
        else if (unlink(rec) && errno != ENOENT)
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_IO, "%s: %s", rec,
                                 strerror(errno));
done:
        free(rec);
        free(slot);
        return err;
}

sbx_err_t sbx_slot_attached(const char *dir,
                            const char *name,
                            char **ret_host,
                            char *errstr,
                            size_t errstr_size)
{
        char *slot    = slot_path(dir, name, "-slot");
        char *rec     = slot_path(dir, name, "-attached");
        size_t n      = sbx_rootfs_mounts_at(slot);
        char *host    = NULL;
        sbx_err_t err = SBX_OK;

        if (n == 0)
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                 "%s has no workspace slot", dir);
        else if (n > 1 && !(host = recorded(rec)))
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                 "%s: something is mounted on the slot but "
                                 "%s does not say what",
                                 dir, rec);
        if (!err)
                *ret_host = host;
        free(rec);
        free(slot);
        return err;
}
