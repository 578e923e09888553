/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The runtime fixture of runtime_fixture.h. Everything a run makes lives
 * under one directory, so the close can check and remove all of it even
 * after a test failed halfway.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "runtime/rootfs.h"
#include "runtime_fixture.h"

int rtfx_open(rtfx_t *f, const char *name)
{
        char err[1024] = "needs root (runc, mounts, cgroups)";

        memset(f, 0, sizeof(*f));
        sbx_fmt(f->name, sizeof(f->name), "%s", name);
        sbx_fmt(f->root, sizeof(f->root), "%s/var/run/sbx-%s-%ld",
                SBX_SOURCE_ROOT, name, (long)getpid());
        sbx_fmt(f->state, sizeof(f->state), "%s/state", f->root);
        sbx_fmt(f->ws, sizeof(f->ws), "%s/ws", f->root);
        if (geteuid() != 0 ||
            !(f->rt = sbx_runtime_new(f->state, err, sizeof(err))) ||
            !(f->host = sbx_template_host_new(
                  SBX_SOURCE_ROOT "/var/templates/host", err, sizeof(err)))) {
                fprintf(stderr, "%s: %s\n", name, err);
                return -1;
        }
        return 0;
}

const char *rtfx_new_id(rtfx_t *f, const char *tag)
{
        assert_true(f->n_ids < RTFX_MAX_IDS);
        sbx_fmt(f->ids[f->n_ids], sizeof(f->ids[0]), "%s-%ld-%s", f->name,
                (long)getpid(), tag);
        return f->ids[f->n_ids++];
}

void rtfx_create_ok(rtfx_t *f, const sbx_sandbox_spec_t *s, int64_t *ret_us)
{
        char err[1024];
        int64_t t0 = sbx_mono_us();
        if (sbx_runtime_create(f->rt, s, err, sizeof(err)))
                fail_msg("create %s (%s): %s", s->id,
                         s->runtime ? s->runtime : "runc", err);
        if (ret_us)
                *ret_us = sbx_mono_us() - t0;
}

void rtfx_delete_ok(rtfx_t *f, const char *id)
{
        char err[1024];
        if (sbx_runtime_delete(f->rt, id, err, sizeof(err)))
                fail_msg("delete %s: %s", id, err);
}

sbx_usage_t rtfx_usage(rtfx_t *f, const char *id)
{
        sbx_usage_t u;
        char err[512];
        if (sbx_runtime_usage(f->rt, id, &u, err, sizeof(err)))
                fail_msg("usage %s: %s", id, err);
        return u;
}

static void on_list(const char *id,
                    const char *runtime,
                    sbx_sandbox_status_t status,
                    int pid,
                    void *opaque)
{
        rtfx_listed_t *l = opaque;
        (void)pid;
        l->total++;
        if (!strcmp(id, l->id)) {
                l->found++;
                l->status = status;
                sbx_fmt(l->runtime, sizeof(l->runtime), "%s", runtime);
        }
}

rtfx_listed_t rtfx_list_find(rtfx_t *f, const char *id)
{
        rtfx_listed_t l = {id, 0, 0, SBX_SANDBOX_ABSENT, ""};
        char err[1024];
        if (sbx_runtime_list(f->rt, on_list, &l, err, sizeof(err)))
                fail_msg("list: %s", err);
        return l;
}

void rtfx_expect_gone(rtfx_t *f, const char *id)
{
        char dir[1024], cgp[256], err[256];
        sbx_sandbox_status_t st;
        int pid;
        struct stat sb;
        sbx_runtime_sandbox_dir(f->rt, id, dir, sizeof(dir));
        assert_int_equal(
            sbx_runtime_state(f->rt, id, &st, &pid, err, sizeof(err)),
            SBX_ERR_NOENT);
        assert_int_equal(rtfx_list_find(f, id).found, 0);
        assert_false(sbx_rootfs_is_mounted(dir));
        assert_false(
            sbx_cgroup_exists(sbx_runtime_cgroup(f->rt),
                              sbx_runtime_cgroup_path(id, cgp, sizeof(cgp))));
        assert_int_equal(stat(dir, &sb), -1);
}

int rtfx_file_has(const char *path, const char *text)
{
        char *s = NULL;
        int ok;
        if (sbx_read_file(path, 1 << 20, &s, NULL, NULL, 0))
                return 0;
        ok = strstr(s, text) != NULL;
        free(s);
        return ok;
}

int rtfx_close(rtfx_t *f)
{
        char err[1024]  = "", cgp[256];
        rtfx_listed_t l = {"", 0, 0, SBX_SANDBOX_ABSENT, ""};
        int bad         = 0;

        for (int i = 0; f->rt && i < f->n_ids; i++) {
                if (sbx_runtime_delete(f->rt, f->ids[i], err, sizeof(err)))
                        bad = fprintf(stderr, "teardown: %s\n", err);
                if (sbx_cgroup_exists(
                        sbx_runtime_cgroup(f->rt),
                        sbx_runtime_cgroup_path(f->ids[i], cgp, sizeof(cgp))))
                        bad = fprintf(stderr, "teardown: cgroup %s\n", cgp);
        }
        if (f->rt &&
            (sbx_runtime_list(f->rt, on_list, &l, err, sizeof(err)) || l.total))
                bad = fprintf(stderr, "teardown: %d left listed %s\n", l.total,
                              err);
        sbx_template_destroy(f->host);
        sbx_runtime_destroy(f->rt);
        f->host = NULL;
        f->rt   = NULL;
        if (f->root[0] && sbx_rootfs_is_mounted(f->root))
                bad = fprintf(stderr, "teardown: mounts left in %s\n", f->root);
        if (f->root[0] && sbx_rootfs_wipe(f->root, err, sizeof(err)))
                bad = fprintf(stderr, "teardown: %s\n", err);
        return bad ? -1 : 0;
}
