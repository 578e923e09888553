/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What layers.c (the store, forks, collection) and snapshot.c (taking a
 * snapshot) share of the layer store (runtime/layers.h): the store
 * object, snapshot records in memory, and the record and locking
 * helpers. Not for other modules.
 */
#ifndef SBX_RUNTIME_LAYERS_INT_H
#define SBX_RUNTIME_LAYERS_INT_H

#include <jansson.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/layers.h"

#define SBX_LAYERS_MAX_STACKS  8   /* layer stacks of a template at most */
#define SBX_LAYERS_TARGET_SIZE 128 /* a stack's target path and its NUL */
/* Bytes of lower-dir paths one overlayfs mount takes at most: its
 * options, upper and work dirs included, must fit in a 4 KiB page. */
#define SBX_LAYERS_MAX_LOWERS_LEN 3072

struct sbx_layers_s {
        char *dir;
        sbx_layer_limits_t lim;
        atomic_uint seq; /* for unique staging and trash names */
};

/* One layer of a snapshot: the stack it belongs to and its digest. */
typedef struct sbx_layer_ref_s {
        char target[SBX_LAYERS_TARGET_SIZE];
        char digest[SBX_LAYER_DIGEST_SIZE];
        uint64_t size, entries;
} sbx_layer_ref_t;

/* A snapshot record (snapshots/<id>.json) in memory. */
typedef struct sbx_snap_s {
        char id[SBX_SNAPSHOT_ID_SIZE];
        char parent[SBX_SNAPSHOT_ID_SIZE]; /* "" for none */
        char base[SBX_LAYER_DIGEST_SIZE];
        char digest[SBX_LAYER_DIGEST_SIZE];
        size_t n;
        sbx_layer_ref_t layers[SBX_LAYERS_MAX_STACKS];
} sbx_snap_t;

/* "snap-<12 hex>"; "sha256:<64 hex>"; "/" or an absolute path that
 * passes sbx_fs_abs_path_ok and fits SBX_LAYERS_TARGET_SIZE. */
int sbx_layers_id_ok(const char *id);
int sbx_layers_digest_ok(const char *d);
int sbx_layers_target_ok(const char *t);

/* Path of record @p id, and a fresh name in staging/ or trash/. */
char *sbx_layers_snap_path(const sbx_layers_t *s,
                           const char *id,
                           char *buf,
                           size_t size);
char *sbx_layers_work_path(sbx_layers_t *s,
                           const char *area,
                           char *buf,
                           size_t size);

/* Takes the store's lock: returns the descriptor to close, or -1. */
int sbx_layers_lock(const sbx_layers_t *s, char *errstr, size_t errstr_size);

/* Parses a small JSON file; SBX_ERR_NOENT if it does not exist. */
sbx_err_t sbx_layers_load_json(const char *path,
                               json_t **ret,
                               char *errstr,
                               size_t errstr_size);

/* Reads record @p id (SBX_ERR_NOENT: none); writes @p r durably with
 * the totals of its layers and the time. */
sbx_err_t sbx_layers_snap_load(const sbx_layers_t *s,
                               const char *id,
                               sbx_snap_t *r,
                               char *errstr,
                               size_t errstr_size);
sbx_err_t sbx_layers_snap_write(sbx_layers_t *s,
                                const sbx_snap_t *r,
                                uint64_t size,
                                uint64_t entries,
                                char *errstr,
                                size_t errstr_size);

#endif
