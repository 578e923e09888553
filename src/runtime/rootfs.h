/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A sandbox's file systems, from a template (runtime/template.h). The
 * sandbox gets one overlayfs per layer stack (the root and each sub-layer)
 * whose upper and work dirs live on the sandbox's own ext4 image,
 * loop-mounted and sized to the disk limit: everything a sandbox writes
 * outside /tmp and /workspace lands there, bounded (ENOSPC), and nothing
 * is ever written to a layer. The image is sparse: the host's free space
 * is not reserved, so admission control must count disk_mb itself.
 *
 * Layout of a sandbox directory D (all made by sbx_rootfs_new):
 *   D/disk.img   sparse ext4 image (the disk limit)
 *   D/disk/      its mount: root.upper, root.work, sub<i>.upper, sub<i>.work
 *   D/rootfs/    the merged root overlay (the OCI root.path)
 *   D/sub<i>/    the merged overlay of sub-layer i (bind-mounted at its
 *                target by the bundle)
 * (and, for a sandbox with a workspace slot, what runtime/workspace.h
 * adds).
 */
#ifndef SBX_RUNTIME_ROOTFS_H
#define SBX_RUNTIME_ROOTFS_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/template.h"
#include "sbx/err.h"

/** The mounted file systems of one sandbox (paths owned by the struct). */
typedef struct sbx_rootfs_s {
        char *dir;   /**< the sandbox directory D */
        char *root;  /**< D/rootfs */
        char *upper; /**< D/disk/root.upper: the root's writes */
        size_t n_subs;
        char **sub_merged; /**< D/sub<i> */
        char **sub_target; /**< e.g. "/usr" */
        char **sub_upper;  /**< D/disk/sub<i>.upper */
} sbx_rootfs_t;

/**
 * Creates @p dir (which must not exist: SBX_ERR_CONFLICT), a sparse ext4
 * image of @p disk_mb MiB, loop-mounts it (the loop device detaches itself
 * at unmount) and mounts the overlays of @p t. On failure everything made
 * is undone. @p t is borrowed; *ret_fs is owned by the caller.
 */
sbx_err_t sbx_rootfs_new(const char *dir,
                         const sbx_template_t *t,
                         int64_t disk_mb,
                         sbx_rootfs_t **ret_fs,
                         char *errstr,
                         size_t errstr_size);

/** Frees @p r; the mounts stay (they live as long as the sandbox). */
void sbx_rootfs_destroy(sbx_rootfs_t *r);

/**
 * Unmounts everything mounted at or below @p dir (deepest first) and
 * removes the directory tree without crossing into any file system that is
 * still mounted. Works from /proc/self/mountinfo alone, so it cleans up
 * after a crashed daemon. A missing @p dir is success.
 */
sbx_err_t sbx_rootfs_wipe(const char *dir, char *errstr, size_t errstr_size);

/** How many mounts are stacked at exactly @p path (0: none). */
size_t sbx_rootfs_mounts_at(const char *path);

/** 1 if anything is mounted at or below @p dir. */
int sbx_rootfs_is_mounted(const char *dir);

#endif
