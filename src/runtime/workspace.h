/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The slots of a sandbox made before anyone knows whose it will be (warm
 * pools): /workspace (the session's workspace) and /deps (the tenant's
 * dependency cache) exist, empty and read-only, until a host directory is
 * attached to each in the running sandbox. For the workspace, in the
 * sandbox directory D (the deps slot is the same with "deps"):
 *
 *   D/workspace-slot/    the slot: an empty directory bind-mounted on
 *                        itself (read-only, nosuid, nodev, noexec) as the
 *                        only member of its own shared peer group
 *   D/rootfs/workspace   a peer of the slot, mounted before the sandbox
 *                        starts; the runtime copies it into the sandbox's
 *                        mount namespace (rootfsPropagation "rslave") as
 *                        a slave of the slot
 *   D/workspace-attached what is attached: the host directory's path,
 *                        written before it is mounted
 *
 * Attaching mounts the directory (nosuid, nodev, not recursive) on the
 * slot; the kernel propagates it to the peer and into the sandbox, never
 * the other way, and nothing else of the sandbox is shared with the host.
 * Detaching unmounts it lazily. The mounts are the truth (mountinfo, and
 * the slot's inode against the directory's), so a restarted daemon needs
 * nothing in memory; the file only names what is attached.
 *
 * Under gVisor the sandbox sees /workspace change only if its root is
 * served with --file-access=shared (see sbx_runc_run): the copy lands in
 * the gofer's mount namespace, and the sentry must revalidate. The host
 * directory is opened without following any symlink; the sandbox's files
 * are never walked by the host.
 */
#ifndef SBX_RUNTIME_WORKSPACE_H
#define SBX_RUNTIME_WORKSPACE_H

#include <stddef.h>
#include <sys/types.h>

#include "sbx/err.h"

/* The slots there are, each at /<name> in the sandbox. */
#define SBX_SLOT_WORKSPACE "workspace" /* the session's, read-write */
#define SBX_SLOT_DEPS      "deps"      /* the tenant's dependency cache, ro */

/**
 * Makes slot @p name of sandbox directory @p dir (owned by @p uid /
 * @p gid) and its peer at /<name> of the root overlay @p root (made if
 * the template lacks it; a symlink or a file there is refused). Call
 * before the sandbox starts; sbx_rootfs_wipe undoes it.
 */
sbx_err_t sbx_slot_new(const char *dir,
                       const char *root,
                       const char *name,
                       uid_t uid,
                       gid_t gid,
                       char *errstr,
                       size_t errstr_size);

/**
 * Attaches host directory @p host (absolute; made 0755, owned by @p uid /
 * @p gid, if missing; no component may be a symlink) to slot @p name of
 * @p dir, read-only if @p readonly. The same directory again is success;
 * another one is SBX_ERR_CONFLICT; a sandbox without the slot is
 * SBX_ERR_INVALID.
 */
sbx_err_t sbx_slot_attach(const char *dir,
                          const char *name,
                          const char *host,
                          int readonly,
                          uid_t uid,
                          gid_t gid,
                          char *errstr,
                          size_t errstr_size);

/** Detaches whatever is attached to slot @p name of @p dir; nothing
 *  attached is success. */
sbx_err_t sbx_slot_detach(const char *dir,
                          const char *name,
                          char *errstr,
                          size_t errstr_size);

/** *ret_host: the host directory attached to slot @p name (owned by the
 *  caller), or NULL if none. */
sbx_err_t sbx_slot_attached(const char *dir,
                            const char *name,
                            char **ret_host,
                            char *errstr,
                            size_t errstr_size);

#endif
