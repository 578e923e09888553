/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Snapshots and forks (DESIGN.md §7): a store of immutable,
 * content-addressed layers and of the snapshot records that name them.
 * The executor keeps one under <var>/layers:
 *
 *   layers/sha256-<hex>/  a layer: what one upper dir held
 *                         (runtime/layercopy.h), named by its digest
 *   snapshots/<id>.json   a snapshot: {"id", "parent" (id or null),
 *                         "base" (the template's digest), "digest",
 *                         "layers": [{"target": "/", "digest",
 *                         "size_bytes", "entries"}, …], "size_bytes",
 *                         "entries", "created_at"}
 *   staging/, trash/      work in progress, cleared after a crash
 *   lock                  flock: commits and collection exclude each other
 *
 * A snapshot has one layer per stack of the sandbox's template (the root,
 * then each sub-layer such as /usr): what the sandbox changed on top of
 * its template — or, for a fork, on top of the snapshot it was forked
 * from, its parent. A fork template stacks a snapshot's layers, then its
 * parent's, and so on, on the base template's. Invariants: a layer's
 * name exists only once its content is complete and on disk, and it never
 * changes; a record exists only while all its layers and its parent do;
 * collection removes records before layers, each by a rename into trash/
 * first, so a crash leaves garbage, never a record without its layers.
 * Calls may run from several threads and processes on one store.
 */
#ifndef SBX_RUNTIME_LAYERS_H
#define SBX_RUNTIME_LAYERS_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/layercopy.h"
#include "runtime/runtime.h"
#include "runtime/template.h"
#include "sbx/err.h"

/** "snap-<12 hex>" and its NUL. */
#define SBX_SNAPSHOT_ID_SIZE 18
/** Snapshots in a chain (a fork's, its parent's…) at most. */
#define SBX_LAYERS_MAX_CHAIN 16

typedef struct sbx_layers_s sbx_layers_t;

typedef struct sbx_snapshot_info_s {
        char id[SBX_SNAPSHOT_ID_SIZE];
        char digest[SBX_LAYER_DIGEST_SIZE]; /**< over the layer digests */
        uint64_t size_bytes; /**< file content in the snapshot's layers */
        uint64_t entries;    /**< entries in them */
        uint64_t skipped;    /**< fifos and sockets left out */
        int64_t duration_us; /**< all of it, the sandbox paused */
        int64_t sync_us;     /**< of which flushing new layers to disk */
} sbx_snapshot_info_t;

/**
 * Opens the store in @p dir (absolute, [A-Za-z0-9/_.+-], made 0700 if
 * missing), clearing what a crashed process left in staging/ and trash/.
 * Returns NULL and fills errstr on failure.
 */
sbx_layers_t *sbx_layers_open(const char *dir,
                              char *errstr,
                              size_t errstr_size);
void sbx_layers_close(sbx_layers_t *s);

/** Bounds on one snapshot: entries and bytes of file content over all
 *  its layers (defaults: 1,000,000 and 16 GiB); 0 keeps a bound. */
void sbx_layers_set_limits(sbx_layers_t *s,
                           uint64_t max_entries,
                           uint64_t max_bytes);

/** The directory of layer @p digest ("sha256:<hex>"), into @p buf. */
char *sbx_layers_layer_dir(const sbx_layers_t *s,
                           const char *digest,
                           char *buf,
                           size_t size);

/**
 * Snapshots sandbox @p id, a runc sandbox (else SBX_ERR_UNSUPPORTED:
 * gVisor's sentry may hold written data) that the caller has paused
 * (sbx_runtime_pause) or that has stopped (else SBX_ERR_INVALID): copies
 * each of its upper dirs into a layer (SBX_ERR_TOOBIG past the store's
 * limits, SBX_ERR_UNSUPPORTED for what runtime/layercopy.h refuses) and
 * records the snapshot. @p parent must be the snapshot the sandbox was
 * forked from, NULL for one made from a plain template (SBX_ERR_INVALID
 * otherwise); SBX_ERR_NOENT if it is no longer in the store. Equal
 * content gives equal layers (stored once) and, with the same parent and
 * base, the same snapshot id. *ret_info is written on success only.
 */
sbx_err_t sbx_runtime_snapshot(sbx_runtime_t *rt,
                               const char *id,
                               sbx_layers_t *s,
                               const char *parent,
                               sbx_snapshot_info_t *ret_info,
                               char *errstr,
                               size_t errstr_size);

/**
 * The template of a fork of snapshot @p snapshot_id: @p base (borrowed,
 * not itself a fork) with the layers of the snapshot, its parent… on top
 * of each stack. SBX_ERR_INVALID if the snapshot was taken on another
 * base template, SBX_ERR_NOENT if it or a layer is missing. *ret is owned
 * by the caller and refers to the store's layer directories: keep the
 * snapshot out of collection while a sandbox made from it runs.
 */
sbx_err_t sbx_layers_fork_template(sbx_layers_t *s,
                                   const sbx_template_t *base,
                                   const char *snapshot_id,
                                   sbx_template_t **ret,
                                   char *errstr,
                                   size_t errstr_size);

/**
 * Collects garbage: deletes every snapshot that is not in @p keep
 * (@p n_keep ids, borrowed; unknown ones are ignored) nor an ancestor of
 * one, then every layer that no remaining snapshot names. The caller
 * keeps the snapshots its running forks were made from. Outputs (each may
 * be NULL): snapshots and layers removed, and the disk space their
 * files took.
 */
sbx_err_t sbx_layers_gc(sbx_layers_t *s,
                        const char *const *keep,
                        size_t n_keep,
                        size_t *ret_snapshots,
                        size_t *ret_layers,
                        uint64_t *ret_freed_bytes,
                        char *errstr,
                        size_t errstr_size);

#endif
