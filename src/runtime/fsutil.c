/* SPDX-License-Identifier: Apache-2.0 */
/*
 * File helpers for the runtime module. sbx_fs_rmtree walks with nftw
 * (FTW_PHYS: symlinks are removed, never followed; FTW_MOUNT: a file system
 * still mounted below the tree is left alone and makes the removal fail),
 * so a sandbox that planted symlinks in its upper dir cannot steer it.
 */
#include "runtime/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"

sbx_err_t sbx_fs_write(const char *path,
                       const void *data,
                       size_t len,
                       mode_t mode,
                       char *errstr,
                       size_t errstr_size)
{
        const char *p = data;
        int fd        = open(
                   path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
        if (fd < 0)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_IO, "%s: %s",
                                  path, strerror(errno));
        while (len > 0) {
                ssize_t n = write(fd, p, len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        int e = errno;
                        close(fd);
                        return sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                          "%s: write: %s", path, strerror(e));
                }
                p += n;
                len -= (size_t)n;
        }
        if (fchmod(fd, mode) || close(fd))
                return sbx_seterr(errstr, errstr_size, SBX_ERR_IO, "%s: %s",
                                  path, strerror(errno));
        return SBX_OK;
}

sbx_err_t sbx_fs_mkdir(const char *path,
                       mode_t mode,
                       uid_t uid,
                       gid_t gid,
                       char *errstr,
                       size_t errstr_size)
{
        if (mkdir(path, mode)) {
                int e = errno;
                if (e == ENOENT) {
                        /* Missing parents (e.g. var/templates in a fresh
                         * checkout) are made 0755, owned by root. */
                        char parent[4096], *slash;
                        sbx_fmt(parent, sizeof(parent), "%s", path);
                        slash = strrchr(parent, '/');
                        if (slash && slash != parent) {
                                *slash = '\0';
                                if (sbx_fs_mkdir(parent, 0755, 0, 0, errstr,
                                                 errstr_size))
                                        return SBX_ERR_IO;
                        }
                        e = mkdir(path, mode) ? errno : 0;
                }
                if (e && e != EEXIST)
                        return sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                          "mkdir %s: %s", path, strerror(e));
        }
        if (chmod(path, mode) || lchown(path, uid, gid))
                return sbx_seterr(errstr, errstr_size, SBX_ERR_IO, "%s: %s",
                                  path, strerror(errno));
        return SBX_OK;
}

sbx_err_t sbx_fs_mkdirs(const char *path,
                        mode_t mode,
                        uid_t uid,
                        gid_t gid,
                        char *errstr,
                        size_t errstr_size)
{
        char *p = sbx_strdup(path);
        struct stat st;
        sbx_err_t err = SBX_OK;

        for (char *s = p + 1; !err; s++) {
                int last = *s == '\0';
                if (*s != '/' && !last)
                        continue;
                *s = '\0';
                if (lstat(p, &st)) {
                        err =
                            sbx_fs_mkdir(p, last ? mode : 0755, last ? uid : 0,
                                         last ? gid : 0, errstr, errstr_size);
                } else if (!S_ISDIR(st.st_mode)) {
                        err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                         "%s exists and is not a directory "
                                         "(symlinks are refused)",
                                         p);
                }
                if (last)
                        break;
                *s = '/';
        }
        free(p);
        return err;
}

static int rm_one(const char *path,
                  const struct stat *st,
                  int type,
                  struct FTW *f)
{
        (void)st;
        (void)f;
        if (type == FTW_DP)
                return rmdir(path) ? -1 : 0;
        return unlink(path) ? -1 : 0;
}

sbx_err_t sbx_fs_rmtree(const char *path, char *errstr, size_t errstr_size)
{
        struct stat st;
        if (lstat(path, &st)) {
                if (errno == ENOENT)
                        return SBX_OK;
                return sbx_seterr(errstr, errstr_size, SBX_ERR_IO, "%s: %s",
                                  path, strerror(errno));
        }
        if (!S_ISDIR(st.st_mode)) {
                if (unlink(path))
                        return sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                          "unlink %s: %s", path,
                                          strerror(errno));
                return SBX_OK;
        }
        if (nftw(path, rm_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT))
                return sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                  "removing %s: %s", path, strerror(errno));
        return SBX_OK;
}

int sbx_fs_path_ok(const char *s)
{
        if (!s || !*s)
                return 0;
        for (; *s; s++) {
                char c = *s;
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                      (c >= '0' && c <= '9') || c == '/' || c == '_' ||
                      c == '.' || c == '+' || c == '-'))
                        return 0;
        }
        return 1;
}

int sbx_fs_abs_path_ok(const char *p)
{
        if (!p || p[0] != '/' || !sbx_fs_path_ok(p))
                return 0;
        for (const char *c = p; (c = strstr(c, "..")) != NULL; c += 2)
                if (c[-1] == '/' && (c[2] == '/' || c[2] == '\0'))
                        return 0;
        return 1;
}
