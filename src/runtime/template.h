/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Templates: what a sandbox's root file system is made from. A template is
 * a stack of read-only directory layers plus "sub-layers" — host
 * directories that appear at a path of their own (the host template's
 * /usr) — and a digest that names its content. Layers are never written:
 * a sandbox sees them through overlayfs (runtime/rootfs.h), and a layer
 * directory, once complete, is never changed in place. A fork is a
 * template with a snapshot's layers (runtime/layers.h) on top of its
 * base's, named by a digest of its own.
 */
#ifndef SBX_RUNTIME_TEMPLATE_H
#define SBX_RUNTIME_TEMPLATE_H

#include <jansson.h>
#include <stddef.h>

#include "sbx/err.h"

typedef struct sbx_template_s sbx_template_t;

/**
 * The host template, generated (once per digest) under @p dir, e.g.
 * var/templates/host, as dir/<hex>/{root,usr}. The root layer holds
 * Debian's merged-/usr symlinks (/bin -> usr/bin…, copied from the host),
 * the mount points and a minimal /etc: root and sandbox (uid 1000) users,
 * hosts, empty resolv.conf, nsswitch, ld.so.cache, services, protocols and
 * the alternatives links — no host secret. /usr is a sub-layer: the
 * host's /usr under a layer that makes /usr/local an empty, opaque
 * directory (the host admin's own files stay out). A host whose /bin or
 * /lib… is a real directory gets it as a sub-layer too. The digest is the
 * sha256 of dir/<hex>.manifest: every generated entry, size and mtime of
 * the copied files, and the whole of /var/lib/dpkg/status, which stands
 * for the host package set. Returns NULL and fills errstr on failure.
 */
sbx_template_t *sbx_template_host_new(const char *dir,
                                      char *errstr,
                                      size_t errstr_size);

/**
 * A template built by deploy/local/template.sh in @p dir (dir/rootfs and
 * dir/digest, "sha256:<64 hex>"). The digest is read, not recomputed.
 */
sbx_template_t *sbx_template_dir_new(const char *dir,
                                     char *errstr,
                                     size_t errstr_size);

void sbx_template_destroy(sbx_template_t *t);

/** "host" or the directory's base name; owned by @p t. */
const char *sbx_template_name(const sbx_template_t *t);
/** "sha256:<hex>"; owned by @p t. */
const char *sbx_template_digest(const sbx_template_t *t);
/** The root's lower layers, topmost first; owned by @p t. */
size_t sbx_template_layer_count(const sbx_template_t *t);
const char *sbx_template_layer(const sbx_template_t *t, size_t i);
/** Sub-layers: overlays of their own at a target path in the sandbox
 *  (e.g. "/usr"), each with its lower layers, topmost first. */
size_t sbx_template_sub_count(const sbx_template_t *t);
const char *sbx_template_sub_target(const sbx_template_t *t, size_t i);
size_t sbx_template_sub_layer_count(const sbx_template_t *t, size_t i);
const char *sbx_template_sub_layer(const sbx_template_t *t, size_t i, size_t j);

/**
 * Forks (runtime/layers.h): a template whose stacks are @p base's with
 * snapshot layers pushed on top. @p base must not be a fork itself.
 * The strings are copied; the new template does not refer to @p base.
 */
sbx_template_t *sbx_template_fork(const sbx_template_t *base,
                                  const char *name,
                                  const char *digest,
                                  const char *snapshot);

/** Puts directory @p layer on top of the stack at @p target (moving it
 *  there if the stack has it already: overlayfs refuses a directory twice
 *  in one mount). SBX_ERR_INVALID if @p t has no stack at @p target. */
sbx_err_t sbx_template_push(sbx_template_t *t,
                            const char *target,
                            const char *layer,
                            char *errstr,
                            size_t errstr_size);

/** A fork's base template digest; any other template's own digest.
 *  Owned by @p t. */
const char *sbx_template_base_digest(const sbx_template_t *t);
/** The snapshot id a fork shows, NULL for other templates; owned. */
const char *sbx_template_snapshot(const sbx_template_t *t);

/** What a sandbox records of its template (new reference):
 *  {"digest", "base", "snapshot" (null if none), "stacks": ["/", …]},
 *  the stacks in the order of the sandbox's upper dirs (root, sub0…). */
json_t *sbx_template_describe(const sbx_template_t *t);

#endif
