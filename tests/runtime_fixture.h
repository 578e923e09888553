/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What cmocka tests of real sandboxes share (test_runtime.c,
 * test_containment.c): a runtime whose state lives under
 * <repo>/var/run/sbx-<name>-<pid> with the host template, sandbox ids
 * unique to the run and remembered, and a close that deletes every one of
 * them, failed test or not, then checks that no container, cgroup or
 * mount of the run is left and removes the directory. Needs root.
 */
#ifndef SBX_TEST_RUNTIME_FIXTURE_H
#define SBX_TEST_RUNTIME_FIXTURE_H

#include <stdint.h>

#include "runtime/runtime.h"

#define RTFX_MAX_IDS 64

typedef struct rtfx_s {
        char name[32];
        char root[512];  /* <repo>/var/run/sbx-<name>-<pid>: all of the run */
        char state[512]; /* root/state: the runtime's state root */
        char ws[512];    /* root/ws: for workspaces */
        sbx_runtime_t *rt;
        sbx_template_t *host;
        char ids[RTFX_MAX_IDS][64];
        int n_ids;
} rtfx_t;

/* A sandbox as sbx_runtime_list reports it. */
typedef struct rtfx_listed_s {
        const char *id;
        int found, total;
        sbx_sandbox_status_t status;
        char runtime[16];
} rtfx_listed_t;

/** Opens the runtime and the host template for run @p name; 0, or -1
 *  with the reason on stderr. */
int rtfx_open(rtfx_t *f, const char *name);

/** Deletes every sandbox of rtfx_new_id(), checks that the runtimes list
 *  nothing and that no cgroup or mount is left, closes the runtime and
 *  removes f->root. 0, or -1 (saying why on stderr) if anything was left. */
int rtfx_close(rtfx_t *f);

/** "<name>-<pid>-<tag>", remembered for rtfx_close(); owned by @p f. */
const char *rtfx_new_id(rtfx_t *f, const char *tag);

/** Creates @p s or fails the test; *ret_us (may be NULL): how long. */
void rtfx_create_ok(rtfx_t *f, const sbx_sandbox_spec_t *s, int64_t *ret_us);
void rtfx_delete_ok(rtfx_t *f, const char *id);
sbx_usage_t rtfx_usage(rtfx_t *f, const char *id);
rtfx_listed_t rtfx_list_find(rtfx_t *f, const char *id);

/** Asserts that a deleted @p id left no container, listing, mount,
 *  cgroup or directory. */
void rtfx_expect_gone(rtfx_t *f, const char *id);

/** 1 if the file at @p path exists and contains @p text. */
int rtfx_file_has(const char *path, const char *text);

#endif
