/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Snapshots, forks and layer collection (runtime/layers.h) on real runc
 * sandboxes, as root. A sandbox writes files, deletes template files (a
 * whiteout in the root and in the /usr stack), replaces a directory (an
 * opaque one), plants symlinks to host files, a hard link and a fifo; it
 * is paused, snapshotted (A) and resumed. A fork of A sees exactly that
 * and the two do not see each other's later writes; a snapshot of the
 * fork (B, parent A) forks into a sandbox with both changes. Equal
 * content gives equal layers and ids; limits, a running sandbox, a wrong
 * parent and a foreign base are refused; collection keeps the ancestors
 * of what is kept and then removes everything. Prints (does not assert)
 * snapshot and fork times for a sandbox with pandas and matplotlib
 * installed from the dependency cache.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <dirent.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/util.h"
#include "runtime/fsutil.h"
#include "runtime/layercopy.h"
#include "runtime/layers.h"
#include "runtime/runtime.h"
#include "runtime_fixture.h"

static rtfx_t T;
static sbx_layers_t *S;
static char store_dir[600], secret_dir[600], secret[700];
static char snap_a[SBX_SNAPSHOT_ID_SIZE], snap_b[SBX_SNAPSHOT_ID_SIZE];
static sbx_snapshot_info_t info_a;
static const char *id_a, *id_f1, *id_f2;
static sbx_template_t *fork_a, *fork_b;
static const char *const sleep_argv[] = {"/bin/sleep", "3600", NULL};

enum { OK = 0, FAILS = -1 };

static sbx_sandbox_spec_t spec_for(const char *id, const sbx_template_t *t)
{
        return (sbx_sandbox_spec_t){.id            = id,
                                    .tmpl          = t,
                                    .cpu_quota_us  = 100000,
                                    .cpu_period_us = 100000,
                                    .memory_mb     = 256,
                                    .pids_max      = 256,
                                    .disk_mb       = 256,
                                    .argv          = sleep_argv};
}

/* Runs `sh -c script` in @p id (deadline 15 min): its exit status,
 * stdout in *ret_out, the start of stderr in @p err. */
static int sh(const char *id,
              const char *script,
              char **ret_out,
              char *err,
              size_t err_size)
{
        const char *argv[]     = {"/bin/sh", "-c", script, NULL};
        sbx_runc_exec_opts_t o = {.timeout_ms = 900000};
        sbx_runc_exec_result_t r;
        int code;
        if (sbx_runtime_exec(T.rt, id, argv, &o, &r, err, err_size))
                fail_msg("exec in %s: %s", id, err);
        code = r.exit_code;
        sbx_fmt(err, err_size, "%s", r.err ? r.err : "");
        *ret_out = r.out;
        r.out    = NULL;
        sbx_runc_exec_result_clear(&r);
        return code;
}

/* Runs @p script; checks its status (OK or FAILS) and, unless @p want
 * is NULL, that its stdout is exactly @p want. */
static void expect(const char *id,
                   int status,
                   const char *want,
                   const char *script)
{
        char *out = NULL, err[2048];
        int code  = sh(id, script, &out, err, sizeof(err));
        if ((status == OK) != (code == 0))
                fail_msg("%s in %s: exit %d: %s", script, id, code, err);
        if (want && strcmp(out, want))
                fail_msg("%s in %s: '%s', wanted '%s'", script, id, out, want);
        free(out);
}

static void pause_ok(const char *id)
{
        char err[512];
        if (sbx_runtime_pause(T.rt, id, err, sizeof(err)))
                fail_msg("pause %s: %s", id, err);
}

static void resume_ok(const char *id)
{
        char err[512];
        if (sbx_runtime_resume(T.rt, id, err, sizeof(err)))
                fail_msg("resume %s: %s", id, err);
}

static sbx_snapshot_info_t snapshot_ok(const char *id, const char *parent)
{
        sbx_snapshot_info_t info;
        char err[1024];
        pause_ok(id);
        if (sbx_runtime_snapshot(T.rt, id, S, parent, &info, err, sizeof(err)))
                fail_msg("snapshot %s: %s", id, err);
        resume_ok(id);
        return info;
}

static sbx_template_t *fork_ok(const char *snap)
{
        sbx_template_t *t = NULL;
        char err[1024];
        if (sbx_layers_fork_template(S, T.host, snap, &t, err, sizeof(err)))
                fail_msg("fork template of %s: %s", snap, err);
        return t;
}

/* The directory of snapshot @p snap's layer at @p target. */
static char *layer_of(const char *snap,
                      const char *target,
                      char *buf,
                      size_t size)
{
        char path[1024];
        json_error_t je;
        json_t *rec, *l;
        size_t i;
        sbx_fmt(path, sizeof(path), "%s/snapshots/%s.json", store_dir, snap);
        rec = json_load_file(path, 0, &je);
        if (!rec)
                fail_msg("%s: %s", path, je.text);
        buf[0] = '\0';
        json_array_foreach(json_object_get(rec, "layers"), i, l)
        {
                if (!strcmp(json_string_value(json_object_get(l, "target")),
                            target))
                        sbx_layers_layer_dir(
                            S, json_string_value(json_object_get(l, "digest")),
                            buf, size);
        }
        json_decref(rec);
        if (!buf[0])
                fail_msg("%s has no layer at %s", snap, target);
        return buf;
}

static size_t count_entries(const char *dir)
{
        struct dirent **names = NULL;
        int n                 = scandir(dir, &names, NULL, NULL);
        size_t k              = 0;
        for (int i = 0; i < n; i++) {
                k += names[i]->d_name[0] != '.';
                free(names[i]);
        }
        free(names);
        return k;
}

static size_t n_layers(void)
{
        char p[700];
        return count_entries(sbx_fmt(p, sizeof(p), "%s/layers", store_dir));
}

static int secret_seen; /* nftw has no context argument */

static int find_secret(const char *path,
                       const struct stat *st,
                       int type,
                       struct FTW *f)
{
        (void)f;
        if (type == FTW_F && S_ISREG(st->st_mode) &&
            rtfx_file_has(path, "HOST-SECRET"))
                secret_seen = 1;
        return 0;
}

/* What sandbox A changes (and, again, sandbox C for dedup). */
static const char *changes_a(char *buf, size_t size)
{
        return sbx_fmt(
            buf, size,
            "set -e; echo a1 > /etc/from-a; echo a2 > /etc/from-a-2; "
            "chmod 600 /etc/from-a-2; ln /etc/from-a /etc/from-a-hard; "
            "echo usr > /usr/local/from-a; "
            "rm /etc/debian_version /usr/bin/yes; "
            "rm -rf /etc/alternatives; mkdir /etc/alternatives; "
            "echo mine > /etc/alternatives/mine; "
            "ln -s %s /etc/leak; ln -s %s /root/leakdir; "
            "mkfifo /root/fifo",
            secret, secret_dir);
}

static void check_layer_a(void)
{
        char root[1024], usr[1024], p[1200], target[1024], v[8];
        struct stat st;
        ssize_t n;

        layer_of(snap_a, "/", root, sizeof(root));
        layer_of(snap_a, "/usr", usr, sizeof(usr));
        /* symlinks stay symlinks, pointing where the sandbox said */
        sbx_fmt(p, sizeof(p), "%s/etc/leak", root);
        assert_int_equal(lstat(p, &st), 0);
        assert_true(S_ISLNK(st.st_mode));
        n = readlink(p, target, sizeof(target) - 1);
        assert_true(n > 0);
        target[n] = '\0';
        assert_string_equal(target, secret);
        sbx_fmt(p, sizeof(p), "%s/root/leakdir", root);
        assert_int_equal(lstat(p, &st), 0);
        assert_true(S_ISLNK(st.st_mode));
        /* ...and what they point at was not read into the layer */
        secret_seen = 0;
        assert_int_equal(nftw(root, find_secret, 16, FTW_PHYS), 0);
        assert_false(secret_seen);
        /* whiteouts, in the root and in the /usr stack */
        sbx_fmt(p, sizeof(p), "%s/etc/debian_version", root);
        assert_int_equal(lstat(p, &st), 0);
        assert_true(S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0));
        sbx_fmt(p, sizeof(p), "%s/bin/yes", usr);
        assert_int_equal(lstat(p, &st), 0);
        assert_true(S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0));
        /* the replaced directory is opaque; the fifo was left out */
        sbx_fmt(p, sizeof(p), "%s/etc/alternatives", root);
        assert_int_equal(lgetxattr(p, "trusted.overlay.opaque", v, sizeof(v)),
                         1);
        assert_int_equal(v[0], 'y');
        sbx_fmt(p, sizeof(p), "%s/root/fifo", root);
        assert_int_equal(lstat(p, &st), -1);
        assert_true(rtfx_file_has(sbx_fmt(p, sizeof(p), "%s/local/from-a", usr),
                                  "usr"));
}

/* What a fork of A (or of a descendant) sees of A's changes. */
static void expect_a(const char *id)
{
        char want[800];
        expect(id, OK, "a1\n", "cat /etc/from-a");
        expect(id, OK, "a1\n", "cat /etc/from-a-hard");
        expect(id, OK, "usr\n", "cat /usr/local/from-a");
        expect(id, FAILS, NULL, "test -e /etc/debian_version");
        expect(id, FAILS, NULL, "test -e /usr/bin/yes");
        expect(id, OK, NULL, "test -x /usr/bin/true"); /* the rest of /usr */
        expect(id, OK, "mine\n", "ls -A /etc/alternatives");
        expect(id, OK, sbx_fmt(want, sizeof(want), "%s\n", secret),
               "readlink /etc/leak");
        expect(id, FAILS, NULL, "cat /etc/leak");
        expect(id, FAILS, NULL, "test -e /root/fifo");
}

static void test_snapshot_and_fork(void **state)
{
        sbx_sandbox_spec_t s;
        char script[2048], p[1024], err[1024];
        sbx_snapshot_info_t info;
        (void)state;

        id_a = rtfx_new_id(&T, "a");
        s    = spec_for(id_a, T.host);
        rtfx_create_ok(&T, &s, NULL);
        expect(id_a, OK, NULL, changes_a(script, sizeof(script)));

        /* a running sandbox is refused */
        assert_int_equal(
            sbx_runtime_snapshot(T.rt, id_a, S, NULL, &info, err, sizeof(err)),
            SBX_ERR_INVALID);
        assert_non_null(strstr(err, "pause"));
        /* so is a parent it was not forked from */
        pause_ok(id_a);
        assert_int_equal(
            sbx_runtime_snapshot(T.rt, id_a, S, "snap-0123456789ab", &info, err,
                                 sizeof(err)),
            SBX_ERR_INVALID);
        resume_ok(id_a);

        info_a = snapshot_ok(id_a, NULL);
        printf("  snapshot A: %s %s, %llu entries, %llu bytes, %.1f ms\n",
               info_a.id, info_a.digest, (unsigned long long)info_a.entries,
               (unsigned long long)info_a.size_bytes,
               info_a.duration_us / 1000.0);
        sbx_fmt(snap_a, sizeof(snap_a), "%s", info_a.id);
        assert_int_equal(strlen(snap_a), 17);
        assert_int_equal(info_a.skipped, 1); /* the fifo */
        assert_true(info_a.size_bytes >= 3 * 3);
        check_layer_a();
        expect(id_a, OK, NULL, "echo later > /etc/after-snap");

        fork_a = fork_ok(snap_a);
        assert_string_equal(sbx_template_snapshot(fork_a), snap_a);
        assert_string_equal(sbx_template_base_digest(fork_a),
                            sbx_template_digest(T.host));
        assert_string_not_equal(sbx_template_digest(fork_a),
                                sbx_template_digest(T.host));
        assert_int_equal(sbx_template_layer_count(fork_a),
                         sbx_template_layer_count(T.host) + 1);
        assert_string_equal(sbx_template_layer(fork_a, 0),
                            layer_of(snap_a, "/", p, sizeof(p)));

        id_f1 = rtfx_new_id(&T, "f1");
        s     = spec_for(id_f1, fork_a);
        rtfx_create_ok(&T, &s, NULL);
        expect_a(id_f1);
        expect(id_f1, OK, "600\n", "stat -c %a /etc/from-a-2");
        /* after the snapshot, neither sees the other's writes */
        expect(id_f1, FAILS, NULL, "test -e /etc/after-snap");
        expect(id_f1, OK, NULL, "echo fork > /etc/in-fork");
        expect(id_a, FAILS, NULL, "test -e /etc/in-fork");
        expect(id_a, OK, "later\n", "cat /etc/after-snap");
}

static void test_chain(void **state)
{
        sbx_sandbox_spec_t s;
        sbx_snapshot_info_t info;
        char err[1024];
        (void)state;

        expect(id_f1, OK, NULL,
               "set -e; echo b > /etc/from-b; rm /etc/from-a-2; "
               "echo b > /usr/local/from-b");
        /* a fork's snapshot must name the snapshot it was forked from */
        pause_ok(id_f1);
        assert_int_equal(
            sbx_runtime_snapshot(T.rt, id_f1, S, NULL, &info, err, sizeof(err)),
            SBX_ERR_INVALID);
        assert_non_null(strstr(err, snap_a));
        resume_ok(id_f1);
        info = snapshot_ok(id_f1, snap_a);
        sbx_fmt(snap_b, sizeof(snap_b), "%s", info.id);
        assert_string_not_equal(snap_b, snap_a);

        fork_b = fork_ok(snap_b);
        assert_string_not_equal(sbx_template_digest(fork_b),
                                sbx_template_digest(fork_a));
        assert_int_equal(sbx_template_layer_count(fork_b),
                         sbx_template_layer_count(T.host) + 2);
        id_f2 = rtfx_new_id(&T, "f2");
        s     = spec_for(id_f2, fork_b);
        rtfx_create_ok(&T, &s, NULL);
        expect(id_f2, OK, "a1\n", "cat /etc/from-a");
        expect(id_f2, OK, "b\n", "cat /etc/from-b");
        expect(id_f2, OK, "b\n", "cat /usr/local/from-b");
        expect(id_f2, OK, "fork\n", "cat /etc/in-fork");
        expect(id_f2, FAILS, NULL, "test -e /etc/from-a-2"); /* B deleted */
        expect_a(id_f2);
}

static void test_fork_refusals(void **state)
{
        char dir[700], p[800], err[1024];
        sbx_template_t *other, *t = NULL;
        sbx_err_t rc;
        static const char digest[] =
            "sha256:"
            "00000000000000000000000000000000000000000000000000000000000000aa";
        (void)state;

        /* a snapshot only forks onto the template it was taken on */
        sbx_fmt(dir, sizeof(dir), "%s/tpl-other", T.root);
        assert_int_equal(sbx_fs_mkdirs(sbx_fmt(p, sizeof(p), "%s/rootfs", dir),
                                       0755, 0, 0, err, sizeof(err)),
                         SBX_OK);
        assert_int_equal(
            sbx_fs_write(sbx_fmt(p, sizeof(p), "%s/digest", dir), digest,
                         sizeof(digest) - 1, 0644, err, sizeof(err)),
            SBX_OK);
        other = sbx_template_dir_new(dir, err, sizeof(err));
        assert_non_null(other);
        rc = sbx_layers_fork_template(S, other, snap_a, &t, err, sizeof(err));
        sbx_template_destroy(other);
        assert_int_equal(rc, SBX_ERR_INVALID);
        assert_non_null(strstr(err, sbx_template_digest(T.host)));
        /* nor onto a fork, and an unknown snapshot is not found */
        assert_int_equal(
            sbx_layers_fork_template(S, fork_a, snap_b, &t, err, sizeof(err)),
            SBX_ERR_INVALID);
        assert_int_equal(
            sbx_layers_fork_template(S, T.host, "snap-0123456789ab", &t, err,
                                     sizeof(err)),
            SBX_ERR_NOENT);
        assert_null(t);
}

/* Snapshots are of runc sandboxes only (gVisor may hold written data). */
static void test_runsc_refused(void **state)
{
        const char *id       = rtfx_new_id(&T, "gvisor");
        sbx_sandbox_spec_t s = spec_for(id, T.host);
        sbx_snapshot_info_t info;
        char err[1024];
        (void)state;
        assert_true(sbx_runtime_has(T.rt, "runsc"));
        s.runtime = "runsc";
        rtfx_create_ok(&T, &s, NULL);
        pause_ok(id);
        assert_int_equal(
            sbx_runtime_snapshot(T.rt, id, S, NULL, &info, err, sizeof(err)),
            SBX_ERR_UNSUPPORTED);
        assert_non_null(strstr(err, "runsc"));
        resume_ok(id); /* this runsc (20221219) panics deleting a paused one */
        rtfx_delete_ok(&T, id);
}

/* A chain whose snapshots have equal layers in one stack (here /usr,
 * unchanged by X and by Y: the empty layer) still forks, although
 * overlayfs refuses a directory twice in one mount. */
static void expect_fork_of_repeated_layer(const char *snap_x)
{
        const char *id = rtfx_new_id(&T, "fx"), *id_y = rtfx_new_id(&T, "fy");
        sbx_template_t *tx   = fork_ok(snap_x), *ty;
        sbx_sandbox_spec_t s = spec_for(id, tx);
        sbx_snapshot_info_t y;
        char ux[1024], uy[1024];

        rtfx_create_ok(&T, &s, NULL);
        y = snapshot_ok(id, snap_x);
        assert_string_equal(layer_of(y.id, "/usr", uy, sizeof(uy)),
                            layer_of(snap_x, "/usr", ux, sizeof(ux)));
        ty = fork_ok(y.id);
        s  = spec_for(id_y, ty);
        rtfx_create_ok(&T, &s, NULL);
        expect(id_y, OK, "2097152\n", "stat -c %s /etc/from-x");
        expect(id_y, OK, "b\n", "cat /usr/local/from-b");
        expect_a(id_y);
        rtfx_delete_ok(&T, id_y);
        rtfx_delete_ok(&T, id);
        sbx_template_destroy(tx);
        sbx_template_destroy(ty);
}

/* Equal content, written at another time by another sandbox, is the
 * same layers and the same snapshot; limits are enforced. */
static void test_dedup_and_limits(void **state)
{
        const char *id       = rtfx_new_id(&T, "c");
        sbx_sandbox_spec_t s = spec_for(id, T.host);
        sbx_snapshot_info_t info;
        char script[2048], err[1024], p[700];
        size_t before;
        (void)state;

        rtfx_create_ok(&T, &s, NULL);
        sleep(1); /* other mtimes than A's */
        expect(id, OK, NULL, changes_a(script, sizeof(script)));
        pause_ok(id);
        sbx_layers_set_limits(S, 5, 0);
        assert_int_equal(
            sbx_runtime_snapshot(T.rt, id, S, NULL, &info, err, sizeof(err)),
            SBX_ERR_TOOBIG);
        assert_non_null(strstr(err, "entries"));
        sbx_layers_set_limits(S, 1000000, 4);
        assert_int_equal(
            sbx_runtime_snapshot(T.rt, id, S, NULL, &info, err, sizeof(err)),
            SBX_ERR_TOOBIG);
        assert_non_null(strstr(err, "content"));
        assert_int_equal(
            count_entries(sbx_fmt(p, sizeof(p), "%s/staging", store_dir)), 0);
        sbx_layers_set_limits(S, 1000000, 16ull << 30);
        resume_ok(id);

        before = n_layers();
        info   = snapshot_ok(id, NULL);
        assert_string_equal(info.digest, info_a.digest);
        assert_string_equal(info.id, snap_a);
        assert_int_equal(n_layers(), before);
        rtfx_delete_ok(&T, id);
}

static int exists(const char *path)
{
        struct stat st;
        return lstat(path, &st) == 0;
}

static void test_gc(void **state)
{
        char p[1200], err[1024], root_x[1024], root_a[1024], usr_a[1024];
        const char *keep[] = {snap_b};
        sbx_snapshot_info_t x;
        size_t snaps = 0, layers = 0;
        uint64_t freed = 0;
        (void)state;

        /* X, a child of B with a unique 2 MiB file, then Y of X */
        expect(id_f2, OK, NULL,
               "dd if=/dev/urandom of=/etc/from-x bs=1M count=2 2>/dev/null");
        x = snapshot_ok(id_f2, snap_b);
        expect_fork_of_repeated_layer(x.id); /* and Y, a child of X */
        layer_of(x.id, "/", root_x, sizeof(root_x));
        layer_of(snap_a, "/", root_a, sizeof(root_a));
        layer_of(snap_a, "/usr", usr_a, sizeof(usr_a));
        assert_int_equal(sbx_layers_gc(S, keep, 1, &snaps, &layers, &freed, err,
                                       sizeof(err)),
                         SBX_OK);
        printf("  gc keep={B}: %zu snapshots, %zu layers, %llu bytes freed\n",
               snaps, layers, (unsigned long long)freed);
        assert_int_equal(snaps, 2); /* X and Y */
        assert_true(layers >= 2);
        assert_true(freed >= 2 << 20);
        assert_false(exists(root_x));
        /* B's parent A stays, with its layers, and the forks run on */
        assert_true(exists(root_a) && exists(usr_a));
        assert_true(exists(
            sbx_fmt(p, sizeof(p), "%s/snapshots/%s.json", store_dir, snap_a)));
        assert_false(exists(
            sbx_fmt(p, sizeof(p), "%s/snapshots/%s.json", store_dir, x.id)));
        expect(id_f2, OK, "a1\n", "cat /etc/from-a");

        /* what a crash left in staging/ and trash/ goes on reopen */
        assert_int_equal(
            mkdir(sbx_fmt(p, sizeof(p), "%s/trash/1.1", store_dir), 0700), 0);
        assert_int_equal(
            mkdir(sbx_fmt(p, sizeof(p), "%s/staging/999999999.1", store_dir),
                  0700),
            0);
        sbx_layers_close(S);
        S = sbx_layers_open(store_dir, err, sizeof(err));
        assert_non_null(S);
        assert_int_equal(
            count_entries(sbx_fmt(p, sizeof(p), "%s/trash", store_dir)), 0);
        assert_int_equal(
            count_entries(sbx_fmt(p, sizeof(p), "%s/staging", store_dir)), 0);

        rtfx_delete_ok(&T, id_a);
        rtfx_delete_ok(&T, id_f1);
        rtfx_delete_ok(&T, id_f2);
        assert_int_equal(sbx_layers_gc(S, NULL, 0, &snaps, &layers, &freed, err,
                                       sizeof(err)),
                         SBX_OK);
        printf("  gc keep={}: %zu snapshots, %zu layers, %llu bytes freed\n",
               snaps, layers, (unsigned long long)freed);
        assert_int_equal(snaps, 2);
        assert_true(layers >= 3);
        assert_true(freed > 0);
        assert_int_equal(n_layers(), 0);
        assert_int_equal(
            count_entries(sbx_fmt(p, sizeof(p), "%s/snapshots", store_dir)), 0);
}

static double mb(uint64_t bytes)
{
        return (double)bytes / (1 << 20);
}

/* Times, not asserted: a sandbox with a few hundred MB of packages. */
static void test_pip_timing(void **state)
{
        const char *id = rtfx_new_id(&T, "pip"), *fid = rtfx_new_id(&T, "pipf");
        sbx_sandbox_spec_t s = spec_for(id, T.host);
        sbx_snapshot_info_t a, b;
        sbx_template_t *t;
        char *out = NULL, err[1024];
        int64_t t0, create_us, first_us;
        size_t snaps, layers;
        uint64_t freed;
        (void)state;

        if (!exists(SBX_SOURCE_ROOT "/var/deps/acme/pip"))
                fail_msg(
                    "no wheel cache in var/deps/acme/pip: run "
                    "deploy/local/deps.sh");
        s.deps_dir  = SBX_SOURCE_ROOT "/var/deps/acme";
        s.disk_mb   = 2048;
        s.memory_mb = 1024;
        s.tmp_mb    = 512;
        s.pids_max  = 512;
        rtfx_create_ok(&T, &s, NULL);
        t0 = sbx_mono_us();
        expect(id, OK, NULL,
               "python3 -m pip install -q --no-index --find-links /deps/pip "
               "--break-system-packages pandas matplotlib");
        printf("  pip install pandas matplotlib: %.1f s\n",
               (sbx_mono_us() - t0) / 1e6);
        assert_int_equal(
            sh(id, "du -sm /usr/local | cut -f1", &out, err, sizeof(err)), 0);
        printf("  installed: %ld MiB in /usr/local\n", strtol(out, NULL, 10));
        free(out);

        a = snapshot_ok(id, NULL);
        printf(
            "  snapshot: %llu entries, %.1f MiB, %.0f ms paused, of which "
            "%.0f ms syncfs\n",
            (unsigned long long)a.entries, mb(a.size_bytes),
            a.duration_us / 1000.0, a.sync_us / 1000.0);
        b = snapshot_ok(id, NULL);
        printf("  same again (deduplicated): %.0f ms, %.0f ms syncfs\n",
               b.duration_us / 1000.0, b.sync_us / 1000.0);
        assert_string_equal(a.id, b.id);

        t0        = sbx_mono_us();
        t         = fork_ok(a.id);
        s         = spec_for(fid, t);
        s.disk_mb = 1024;
        rtfx_create_ok(&T, &s, &create_us);
        expect(fid, OK, NULL, "python3 -c 'import pandas, matplotlib'");
        first_us = sbx_mono_us() - t0;
        printf(
            "  fork: template + create -> running %.0f ms; with the first "
            "`import pandas, matplotlib` %.0f ms\n",
            create_us / 1000.0, first_us / 1000.0);
        expect(fid, OK, "ok\n",
               "python3 -c 'import pandas as p; "
               "print(\"ok\" if p.DataFrame({\"a\": [1, 2]}).a.sum() == 3 "
               "else \"bad\")'");
        rtfx_delete_ok(&T, fid);
        rtfx_delete_ok(&T, id);
        sbx_template_destroy(t);
        assert_int_equal(sbx_layers_gc(S, NULL, 0, &snaps, &layers, &freed, err,
                                       sizeof(err)),
                         SBX_OK);
        printf("  gc: %zu snapshot, %zu layers, %.1f MiB freed\n", snaps,
               layers, mb(freed));
        assert_int_equal(n_layers(), 0);
}

/* Copies a hand-made upper dir; returns the error (and message). */
static sbx_err_t copy_upper(const char *upper, char *err, size_t err_size)
{
        char dst[700], digest[SBX_LAYER_DIGEST_SIZE];
        sbx_layer_limits_t lim  = {1000, 1 << 20};
        sbx_layer_count_t count = {0, 0, 0};
        sbx_err_t rc;
        sbx_fmt(dst, sizeof(dst), "%s.copy", upper);
        rc = sbx_layer_copy(upper, dst, &lim, &count, digest, err, err_size);
        sbx_fs_rmtree(dst, NULL, 0);
        return rc;
}

/* What a copy cannot carry is refused, not turned into a wrong layer. */
static void test_copy_refusals(void **state)
{
        char up[700], p[800], err[1024];
        (void)state;
        sbx_fmt(up, sizeof(up), "%s/upper-dev", T.root);
        assert_int_equal(sbx_fs_mkdirs(up, 0755, 0, 0, err, sizeof(err)), 0);
        assert_int_equal(mknod(sbx_fmt(p, sizeof(p), "%s/sda", up),
                               S_IFBLK | 0600, makedev(8, 0)),
                         0);
        assert_int_equal(copy_upper(up, err, sizeof(err)), SBX_ERR_UNSUPPORTED);
        assert_non_null(strstr(err, "device node"));

        sbx_fmt(up, sizeof(up), "%s/upper-redirect", T.root);
        assert_int_equal(sbx_fs_mkdirs(sbx_fmt(p, sizeof(p), "%s/moved", up),
                                       0755, 0, 0, err, sizeof(err)),
                         0);
        assert_int_equal(setxattr(p, "trusted.overlay.redirect", "/old", 4, 0),
                         0);
        assert_int_equal(copy_upper(up, err, sizeof(err)), SBX_ERR_UNSUPPORTED);
        assert_non_null(strstr(err, "redirect"));

        sbx_fmt(up, sizeof(up), "%s/upper-metacopy", T.root);
        assert_int_equal(sbx_fs_mkdirs(up, 0755, 0, 0, err, sizeof(err)), 0);
        assert_int_equal(sbx_fs_write(sbx_fmt(p, sizeof(p), "%s/f", up), "", 0,
                                      0644, err, sizeof(err)),
                         0);
        assert_int_equal(setxattr(p, "trusted.overlay.metacopy", "", 0, 0), 0);
        assert_int_equal(copy_upper(up, err, sizeof(err)), SBX_ERR_UNSUPPORTED);
        assert_non_null(strstr(err, "metacopy"));
        /* the upper dir itself must not be a symlink either */
        sbx_fmt(p, sizeof(p), "%s/upper-link", T.root);
        assert_int_equal(symlink(secret_dir, p), 0);
        assert_int_equal(copy_upper(p, err, sizeof(err)), SBX_ERR_IO);
}

static int group_setup(void **state)
{
        char err[1024], p[800];
        (void)state;
        if (rtfx_open(&T, "layers"))
                return -1;
        sbx_fmt(store_dir, sizeof(store_dir), "%s/store", T.root);
        sbx_fmt(secret_dir, sizeof(secret_dir), "%s/host-secret", T.root);
        sbx_fmt(secret, sizeof(secret), "%s/secret.txt", secret_dir);
        if (sbx_fs_mkdirs(secret_dir, 0700, 0, 0, err, sizeof(err)) ||
            sbx_fs_write(secret, "HOST-SECRET\n", 12, 0600, err, sizeof(err)) ||
            !(S = sbx_layers_open(store_dir, err, sizeof(err)))) {
                fprintf(stderr, "layers: %s (%s)\n", err,
                        sbx_fmt(p, sizeof(p), "%s", store_dir));
                return -1;
        }
        return 0;
}

static int group_teardown(void **state)
{
        (void)state;
        sbx_template_destroy(fork_a);
        sbx_template_destroy(fork_b);
        sbx_layers_close(S);
        return rtfx_close(&T);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_snapshot_and_fork),
            cmocka_unit_test(test_chain),
            cmocka_unit_test(test_fork_refusals),
            cmocka_unit_test(test_runsc_refused),
            cmocka_unit_test(test_dedup_and_limits),
            cmocka_unit_test(test_gc),
            cmocka_unit_test(test_copy_refusals),
            cmocka_unit_test(test_pip_timing),
        };
        setvbuf(stdout, NULL, _IONBF, 0);
        return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
