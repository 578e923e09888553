/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The environment manifest read from a sandbox's upper dirs: laid out
 * here by hand the way overlayfs leaves them (a root layer and a /usr
 * sub-layer bound by config.json), including what a hostile sandbox
 * could plant there.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "runtime/manifest.h"

static char dir[256];

static void mkdirs(const char *rel)
{
        char p[512], *s;
        snprintf(p, sizeof(p), "%s/%s", dir, rel);
        for (s = p + strlen(dir) + 1; (s = strchr(s, '/')); s++) {
                *s = '\0';
                mkdir(p, 0755);
                *s = '/';
        }
        mkdir(p, 0755);
}

static void touch(const char *rel)
{
        char p[512];
        FILE *f;
        snprintf(p, sizeof(p), "%s/%s", dir, rel);
        f = fopen(p, "w");
        assert_non_null(f);
        fclose(f);
}

static int setup(void **state)
{
        char cfg[1024], p[512];
        FILE *f;
        (void)state;
        snprintf(dir, sizeof(dir), "/tmp/sbx-manifest-%d", (int)getpid());
        mkdir(dir, 0755);
        mkdirs("disk/root.upper");
        mkdirs("disk/sub0.upper");
        snprintf(cfg, sizeof(cfg),
                 "{\"mounts\": [{\"destination\": \"/proc\", \"source\": "
                 "\"proc\"}, {\"destination\": \"/usr\", \"source\": "
                 "\"%s/sub0\"}]}",
                 dir);
        snprintf(p, sizeof(p), "%s/config.json", dir);
        f = fopen(p, "w");
        assert_non_null(f);
        fputs(cfg, f);
        fclose(f);
        return 0;
}

static int teardown(void **state)
{
        char cmd[300];
        (void)state;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd);
}

static json_t *scan(void)
{
        json_t *m = NULL;
        char err[256];
        if (sbx_manifest_scan(dir, &m, err, sizeof(err)))
                fail_msg("scan: %s", err);
        return m;
}

static int level(const json_t *m)
{
        return (int)json_integer_value(json_object_get(m, "dirty_level"));
}

static const char *path_at(const json_t *m, size_t i)
{
        return json_string_value(
            json_array_get(json_object_get(m, "dirty_paths"), i));
}

static void test_the_steps_of_a_sandbox(void **state)
{
        json_t *m, *caps;
        (void)state;

        /* fresh: only the runtime's own mount points in the upper */
        mkdirs("disk/root.upper/.sbx");
        mkdirs("disk/root.upper/workspace");
        mkdirs("disk/root.upper/deps");
        m = scan();
        assert_int_equal(level(m), 0);
        assert_int_equal(json_array_size(json_object_get(m, "dirty_paths")), 0);
        assert_string_equal(
            json_string_value(json_object_get(m, "pip_lock_hash")), "");
        json_decref(m);

        /* a shell history in /root: level 1 */
        touch("disk/root.upper/root");
        m = scan();
        assert_int_equal(level(m), 1);
        assert_string_equal(path_at(m, 0), "/root");
        json_decref(m);

        /* pip install pandas openpyxl: packages, sorted, level 2 */
        mkdirs(
            "disk/sub0.upper/local/lib/python3.11/dist-packages/"
            "pandas-3.1.1.dist-info");
        mkdirs(
            "disk/sub0.upper/local/lib/python3.11/dist-packages/"
            "et_xmlfile-2.0.0.dist-info");
        mkdirs("disk/sub0.upper/local/lib/python3.11/dist-packages/pandas");
        mkdirs("disk/sub0.upper/local/bin");
        m    = scan();
        caps = json_object_get(m, "installed_capabilities");
        assert_int_equal(json_array_size(caps), 2);
        assert_string_equal(
            json_string_value(json_object_get(json_array_get(caps, 0), "name")),
            "et-xmlfile");
        assert_string_equal(json_string_value(json_object_get(
                                json_array_get(caps, 1), "version")),
                            "3.1.1");
        assert_int_equal(level(m), 2);
        assert_string_equal(path_at(m, 1), "/usr/local");
        assert_int_equal(
            strlen(json_string_value(json_object_get(m, "pip_lock_hash"))), 16);
        json_decref(m);

        /* a font cache and pip's C headers: still level 2 */
        mkdirs("disk/root.upper/var/cache/fontconfig");
        mkdirs("disk/sub0.upper/include/python3.11/greenlet");
        m = scan();
        assert_int_equal(level(m), 2);
        json_decref(m);

        /* something under /usr/lib besides python: unknown, level 3 */
        mkdirs(
            "disk/sub0.upper/lib/python3/dist-packages/"
            "requests-2.0.dist-info");
        m = scan();
        assert_int_equal(level(m), 2);
        assert_int_equal(
            json_array_size(json_object_get(m, "installed_capabilities")), 3);
        json_decref(m);
        mkdirs("disk/sub0.upper/lib/x86_64-linux-gnu");
        m = scan();
        assert_int_equal(level(m), 3);
        json_decref(m);
}

static void test_planted_symlinks_are_not_followed(void **state)
{
        char target[512], link[512];
        json_t *m;
        (void)state;

        /* a directory of dist-infos elsewhere on the host... */
        snprintf(target, sizeof(target), "%s/elsewhere", dir);
        mkdirs("elsewhere/evil-6.6.6.dist-info");
        /* ...that the sandbox points its site dir at */
        mkdirs("disk/root.upper/root/.local/lib/python3.11");
        snprintf(link, sizeof(link),
                 "%s/disk/root.upper/root/.local/lib/python3.11/"
                 "site-packages",
                 dir);
        assert_int_equal(symlink(target, link), 0);
        m = scan();
        assert_int_equal(
            json_array_size(json_object_get(m, "installed_capabilities")), 0);
        assert_int_equal(level(m), 1);
        json_decref(m);
}

static void test_names_and_bounds(void **state)
{
        char rel[128];
        json_t *m;
        (void)state;

        /* a dist-info whose name is not a plain token is not a package */
        mkdirs(
            "disk/sub0.upper/local/lib/python3.11/dist-packages/"
            "a b-1.0.dist-info");
        m = scan();
        assert_int_equal(
            json_array_size(json_object_get(m, "installed_capabilities")), 0);
        json_decref(m);
        /* more changed paths than a manifest lists: level 3, bounded */
        for (int i = 0; i < SBX_MANIFEST_MAX_PATHS + 5; i++) {
                snprintf(rel, sizeof(rel), "disk/root.upper/d%03d", i);
                mkdirs(rel);
        }
        m = scan();
        assert_int_equal(level(m), 3);
        assert_int_equal(json_array_size(json_object_get(m, "dirty_paths")),
                         SBX_MANIFEST_MAX_PATHS);
        json_decref(m);
}

/* A fork: its snapshot's packages below, its own upper on top. */
static void test_a_fork_merges_its_snapshot_below(void **state)
{
        json_t *below =
            json_pack("{s:[{s:s, s:s}, {s:s, s:s}], s:[s], s:i}",
                      "installed_capabilities", "name", "numpy", "version",
                      "2.4.6", "name", "pandas", "version", "3.1.1",
                      "dirty_paths", "/usr/local", "dirty_level", 2);
        json_t *above =
            json_pack("{s:[{s:s, s:s}], s:[s], s:i}", "installed_capabilities",
                      "name", "pandas", "version", "3.2.0", "dirty_paths",
                      "/root", "dirty_level", 1);
        json_t *m = sbx_manifest_merge(below, above), *caps;
        (void)state;

        caps = json_object_get(m, "installed_capabilities");
        assert_int_equal(json_array_size(caps), 2);
        assert_string_equal(json_string_value(json_object_get(
                                json_array_get(caps, 1), "version")),
                            "3.2.0");
        assert_int_equal(level(m), 2);
        assert_int_equal(json_array_size(json_object_get(m, "dirty_paths")), 2);
        assert_string_not_equal(
            json_string_value(json_object_get(m, "pip_lock_hash")), "");
        json_decref(m);
        /* nothing scanned yet: the snapshot's manifest as it was */
        m = sbx_manifest_merge(below, NULL);
        assert_int_equal(
            json_array_size(json_object_get(m, "installed_capabilities")), 2);
        json_decref(m);
        /* unknown pollution below stays unknown pollution */
        json_object_set_new(below, "dirty_level", json_integer(3));
        m = sbx_manifest_merge(below, above);
        assert_int_equal(level(m), 3);
        json_decref(m);
        json_decref(below);
        json_decref(above);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_the_steps_of_a_sandbox, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(
                test_planted_symlinks_are_not_followed, setup, teardown),
            cmocka_unit_test_setup_teardown(test_names_and_bounds, setup,
                                            teardown),
            cmocka_unit_test(test_a_fork_merges_its_snapshot_below),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
