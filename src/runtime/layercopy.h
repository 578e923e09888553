/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Turns one overlayfs upper dir — written by a sandbox, so untrusted —
 * into a directory with the same meaning as an overlayfs lower layer, and
 * names it by its content. Copied: directories (with
 * trusted.overlay.opaque), regular files (content, mode, owner, times),
 * symlinks as symlinks (never followed) and whiteouts (character device
 * 0/0). Hard links become copies. Fifos and sockets are skipped (they
 * mean nothing without the process that made them) and counted. Refused
 * (SBX_ERR_UNSUPPORTED): any other device node, and what overlayfs wrote
 * only for its redirect_dir, metacopy or xattr-whiteout features
 * (trusted.overlay.redirect / .metacopy / .whiteout, opaque "x"), which a
 * plain copy would turn into a wrong layer. The other trusted.overlay.*
 * attributes (origin, impure, nlink…) describe the upper dir's own
 * history and are left out, as are all other extended attributes.
 *
 * The digest is the sha256 of a manifest: one record per entry, in a
 * depth-first walk with each directory's names in byte order, of the
 * path, type, mode, owner, size and the content's sha256 or the link's
 * target — no times, so equal content gives an equal digest.
 */
#ifndef SBX_RUNTIME_LAYERCOPY_H
#define SBX_RUNTIME_LAYERCOPY_H

#include <stddef.h>
#include <stdint.h>

#include "sbx/err.h"

/** "sha256:<64 hex>" and its NUL. */
#define SBX_LAYER_DIGEST_SIZE 72

/** What a copy did; accumulates over the layers of one snapshot. */
typedef struct sbx_layer_count_s {
        uint64_t entries; /**< directories, files, links, whiteouts */
        uint64_t bytes;   /**< content of the regular files */
        uint64_t skipped; /**< fifos and sockets left out */
} sbx_layer_count_t;

/** Bounds on a snapshot's totals (the count, not one layer). */
typedef struct sbx_layer_limits_s {
        uint64_t max_entries;
        uint64_t max_bytes;
} sbx_layer_limits_t;

/**
 * Copies upper dir @p upper into @p dst, which must not exist (made
 * 0700, then given the upper dir's mode and owner). Every entry is opened
 * relative to its directory with O_NOFOLLOW and checked to be the one
 * listed; nothing in @p upper is followed out of it. Adds to @p count and
 * fails with SBX_ERR_TOOBIG past @p lim. On success *ret_digest is
 * "sha256:<hex>"; on failure @p dst may hold a partial copy for the
 * caller to remove. The upper dir must not change meanwhile (freeze the
 * sandbox): a file that does is an error, never a wrong layer.
 */
sbx_err_t sbx_layer_copy(const char *upper,
                         const char *dst,
                         const sbx_layer_limits_t *lim,
                         sbx_layer_count_t *count,
                         char ret_digest[SBX_LAYER_DIGEST_SIZE],
                         char *errstr,
                         size_t errstr_size);

#endif
