/* SPDX-License-Identifier: Apache-2.0 */
/*
 * File helpers of the runtime: whole-file writes, directories with an
 * explicit mode and owner, and a tree removal that never follows a symlink
 * and never crosses into another mounted file system — the only kind of
 * recursive delete sbx runs next to sandbox-writable data.
 */
#ifndef SBX_RUNTIME_FSUTIL_H
#define SBX_RUNTIME_FSUTIL_H

#include <stddef.h>
#include <sys/types.h>

#include "sbx/err.h"

/** Writes @p len bytes to @p path (created or truncated) with @p mode. */
sbx_err_t sbx_fs_write(const char *path,
                       const void *data,
                       size_t len,
                       mode_t mode,
                       char *errstr,
                       size_t errstr_size);

/** mkdir + chmod (despite umask) + chown; an existing directory is OK. */
sbx_err_t sbx_fs_mkdir(const char *path,
                       mode_t mode,
                       uid_t uid,
                       gid_t gid,
                       char *errstr,
                       size_t errstr_size);

/**
 * mkdir -p: only directories it makes get @p mode and @p uid / @p gid
 * (missing parents are made 0755, owned by root). A component that exists
 * and is not a directory, a symlink included, is SBX_ERR_INVALID.
 */
sbx_err_t sbx_fs_mkdirs(const char *path,
                        mode_t mode,
                        uid_t uid,
                        gid_t gid,
                        char *errstr,
                        size_t errstr_size);

/** Removes @p path and everything below it on the same file system. */
sbx_err_t sbx_fs_rmtree(const char *path, char *errstr, size_t errstr_size);

/** 1 if @p s is non-empty and has no byte outside [A-Za-z0-9/_.+-]. */
int sbx_fs_path_ok(const char *s);

/** 1 if @p p is absolute, passes sbx_fs_path_ok and has no ".." part. */
int sbx_fs_abs_path_ok(const char *p);

#endif
