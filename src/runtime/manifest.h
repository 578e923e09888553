/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a sandbox changed in its environment, read from its writable
 * layers (runtime/rootfs.h): the Python packages it installed and the
 * paths it changed outside /tmp and /workspace. The upper dirs are the
 * sandbox's to write, so they are read as untrusted: names only (never a
 * file's content), every directory opened beneath its layer without
 * following any symlink, and every listing bounded.
 *
 * The result is the part of an EnvironmentManifest (schemas/) that the
 * sandbox's files decide:
 *
 *   {"installed_capabilities": [{"name", "version", "ecosystem": "pip"}],
 *    "pip_lock_hash": "<16 hex>", "dirty_paths": ["/usr/local", ...],
 *    "dirty_level": 0..3}
 *
 * dirty_level: 0 nothing changed; 1 only home directories and caches
 * (/root, /home, /var/cache, /var/tmp); 2 packages (/usr/local, a Python
 * site directory, pip's C headers); 3 anything else (unknown pollution:
 * never reused).
 */
#ifndef SBX_RUNTIME_MANIFEST_H
#define SBX_RUNTIME_MANIFEST_H

#include <jansson.h>
#include <stddef.h>

#include "sbx/err.h"

/** Installed packages listed at most (more: dirty level 3). */
#define SBX_MANIFEST_MAX_PACKAGES 1024
/** Changed paths listed at most (more: dirty level 3). */
#define SBX_MANIFEST_MAX_PATHS 64

/**
 * Scans the writable layers of the sandbox in directory @p dir (made by
 * sbx_runtime_create). *ret (owned by the caller) is the object above,
 * sorted, so equal environments give equal JSON.
 */
sbx_err_t sbx_manifest_scan(const char *dir,
                            json_t **ret,
                            char *errstr,
                            size_t errstr_size);

/**
 * The manifest of a sandbox made from a snapshot: what the snapshot's
 * layers had (@p below, the manifest its sandbox last reported) with what
 * its own writable layers say (@p above, a scan) on top: a package in
 * both has @p above's version, paths are the union, the dirty level the
 * higher. Both borrowed; a new reference in the form of a scan. A package
 * the sandbox removed from a lower layer is still listed.
 */
json_t *sbx_manifest_merge(const json_t *below, const json_t *above);

#endif
