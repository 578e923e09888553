/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the OCI config a sandbox spec becomes: limits, namespaces, no
 * new privileges, no capabilities, the seccomp profile (every name real on
 * x86_64, the dangerous ones absent), read-only /sys, no host device, the
 * /workspace, agent and socket binds — and the specs that are refused.
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
#include <dlfcn.h>
#include <jansson.h>

#include "core/util.h"
#include "runtime/bundle.h"
#include "runtime/fsutil.h"
#include "runtime/runc.h"
#include "runtime/seccomp.h"

#define DIGEST                                                                 \
        "sha256:"                                                              \
        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

typedef struct fixture_s {
        char dir[64];
        sbx_template_t *tmpl;
        sbx_sandbox_spec_t spec;
} fixture_t;

static const char *const init_argv[] = {"/bin/sleep", "3600", NULL};

static int setup(void **state)
{
        fixture_t *f = sbx_calloc(1, sizeof(*f));
        char p[128], err[256];
        strcpy(f->dir, "/tmp/sbx-test-bundle-XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        sbx_fmt(p, sizeof(p), "%s/rootfs", f->dir);
        assert_int_equal(mkdir(p, 0755), 0);
        sbx_fmt(p, sizeof(p), "%s/digest", f->dir);
        assert_int_equal(sbx_fs_write(p, DIGEST "\n", strlen(DIGEST) + 1, 0644,
                                      err, sizeof(err)),
                         SBX_OK);
        f->tmpl = sbx_template_dir_new(f->dir, err, sizeof(err));
        assert_non_null(f->tmpl);
        f->spec = (sbx_sandbox_spec_t){
            .id            = "sb-1",
            .tmpl          = f->tmpl,
            .cpu_quota_us  = 50000,
            .cpu_period_us = 100000,
            .memory_mb     = 256,
            .pids_max      = 100,
            .tmp_mb        = 32,
            .workspace_dir = "/var/lib/sbx/ws/session-1",
            .agent_path    = "/opt/sbx/sbx-agent",
            .socket_dir    = "/run/sbx-sock/sb-1",
            .argv          = init_argv,
            .uid           = 1000,
            .gid           = 1000,
        };
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        fixture_t *f = *state;
        sbx_template_destroy(f->tmpl);
        sbx_fs_rmtree(f->dir, NULL, 0);
        free(f);
        return 0;
}

static json_t *config_of(fixture_t *f)
{
        static const sbx_bundle_bind_t binds[] = {{"/x/sub0", "/usr", 0}};
        char err[256];
        sbx_bundle_t b = {&f->spec, "/x/rootfs", binds, 1, "/sbx"};
        json_t *c      = sbx_bundle_config(&b, err, sizeof(err));
        if (!c)
                fail_msg("config: %s", err);
        return c;
}

static json_t *mount_at(json_t *c, const char *dst)
{
        size_t i;
        json_t *m;
        json_array_foreach(json_object_get(c, "mounts"), i, m)
        {
                if (!strcmp(
                        json_string_value(json_object_get(m, "destination")),
                        dst))
                        return m;
        }
        return NULL;
}

static int has_string(json_t *arr, const char *s)
{
        size_t i;
        json_t *v;
        json_array_foreach(arr, i, v)
        {
                if (json_is_string(v) && !strcmp(json_string_value(v), s))
                        return 1;
        }
        return 0;
}

static json_int_t path_int(json_t *c,
                           const char *a,
                           const char *b,
                           const char *d)
{
        json_t *v =
            json_object_get(json_object_get(json_object_get(c, "linux"), a), b);
        v = d ? json_object_get(v, d) : v;
        assert_true(json_is_integer(v));
        return json_integer_value(v);
}

static void test_limits_and_cgroup(void **state)
{
        json_t *c = config_of(*state);
        assert_int_equal(path_int(c, "resources", "memory", "limit"),
                         256 << 20);
        assert_int_equal(path_int(c, "resources", "memory", "swap"), 256 << 20);
        assert_int_equal(path_int(c, "resources", "cpu", "quota"), 50000);
        assert_int_equal(path_int(c, "resources", "cpu", "period"), 100000);
        assert_int_equal(path_int(c, "resources", "pids", "limit"), 100);
        assert_string_equal(json_string_value(json_object_get(
                                json_object_get(c, "linux"), "cgroupsPath")),
                            "/sbx/sb-1");
        json_decref(c);
}

static void test_namespaces_all_new(void **state)
{
        static const char *const want[] = {"pid", "network", "ipc",
                                           "uts", "mount",   "cgroup"};
        json_t *c                       = config_of(*state);
        json_t *ns = json_object_get(json_object_get(c, "linux"), "namespaces"),
               *n;
        size_t i;
        assert_int_equal(json_array_size(ns), SBX_ARRAY_SIZE(want));
        json_array_foreach(ns, i, n)
        {
                assert_string_equal(
                    json_string_value(json_object_get(n, "type")), want[i]);
                /* a "path" would join an existing (host) namespace */
                assert_null(json_object_get(n, "path"));
        }
        json_decref(c);
}

static void test_process_no_privileges(void **state)
{
        json_t *c = config_of(*state);
        json_t *p = json_object_get(c, "process"), *caps, *set;
        const char *key;
        assert_true(json_is_true(json_object_get(p, "noNewPrivileges")));
        assert_false(json_is_true(json_object_get(p, "terminal")));
        assert_int_equal(json_integer_value(json_object_get(
                             json_object_get(p, "user"), "uid")),
                         1000);
        assert_true(has_string(json_object_get(p, "args"), "/bin/sleep"));
        caps = json_object_get(p, "capabilities");
        assert_int_equal(json_object_size(caps), 5);
        json_object_foreach(caps, key, set)
        {
                assert_int_equal(json_array_size(set), 0);
        }
        assert_null(json_object_get(p, "apparmorProfile"));
        assert_string_equal(
            json_string_value(json_object_get(
                json_array_get(json_object_get(p, "rlimits"), 0), "type")),
            "RLIMIT_NOFILE");
        assert_true(
            has_string(json_object_get(p, "env"), "HOME=/home/sandbox"));
        json_decref(c);
}

static void test_caps_when_asked(void **state)
{
        fixture_t *f             = *state;
        const char *const caps[] = {"CAP_KILL", NULL};
        json_t *c, *b;
        f->spec.caps = caps;
        c            = config_of(f);
        b            = json_object_get(
                       json_object_get(json_object_get(c, "process"), "capabilities"),
                       "bounding");
        assert_int_equal(json_array_size(b), 1);
        assert_true(has_string(b, "CAP_KILL"));
        json_decref(c);
        f->spec.caps = NULL;
}

static void test_seccomp_profile(void **state)
{
        json_t *c     = config_of(*state);
        json_t *s     = json_object_get(json_object_get(c, "linux"), "seccomp");
        json_t *rules = json_object_get(s, "syscalls"), *r;
        json_t *allow = json_object_get(json_array_get(rules, 0), "names");
        static const char *const denied[] = {
            "mount",
            "umount2",
            "unshare",
            "setns",
            "pivot_root",
            "chroot",
            "bpf",
            "keyctl",
            "add_key",
            "init_module",
            "finit_module",
            "kexec_load",
            "reboot",
            "swapon",
            "perf_event_open",
            "open_by_handle_at",
            "io_uring_setup",
            "userfaultfd",
            "clock_settime",
            "acct",
            "syslog",
            "iopl",
        };
        size_t i;
        int clone3_enosys = 0, clone_masked = 0;

        assert_string_equal(
            json_string_value(json_object_get(s, "defaultAction")),
            "SCMP_ACT_ERRNO");
        assert_int_equal(
            json_integer_value(json_object_get(s, "defaultErrnoRet")), 1);
        assert_true(has_string(json_object_get(s, "architectures"),
                               "SCMP_ARCH_X86_64"));
        assert_string_equal(json_string_value(json_object_get(
                                json_array_get(rules, 0), "action")),
                            "SCMP_ACT_ALLOW");
        assert_true(has_string(allow, "read"));
        assert_true(has_string(allow, "execve"));
        assert_false(has_string(allow, "clone")); /* only by its flags */
        for (i = 0; i < SBX_ARRAY_SIZE(denied); i++)
                if (has_string(allow, denied[i]))
                        fail_msg("%s is allowed", denied[i]);
        json_array_foreach(rules, i, r)
        {
                json_t *names = json_object_get(r, "names");
                if (has_string(names, "clone3") &&
                    json_integer_value(json_object_get(r, "errnoRet")) == 38)
                        clone3_enosys = 1;
                if (has_string(names, "clone") &&
                    !strcmp(json_string_value(json_object_get(
                                json_array_get(json_object_get(r, "args"), 0),
                                "op")),
                            "SCMP_CMP_MASKED_EQ"))
                        clone_masked = 1;
        }
        assert_true(clone3_enosys);
        assert_true(clone_masked);
        json_decref(c);
}

/* Every allowed name must be a real x86_64 syscall: runc skips names
 * libseccomp cannot resolve, so a typo would silently deny a syscall. */
static void test_seccomp_names_resolve(void **state)
{
        void *lib = dlopen("libseccomp.so.2", RTLD_NOW);
        int (*resolve)(uint32_t, const char *);
        size_t n;
        const char *const *names = sbx_seccomp_allowed(&n);
        (void)state;
        assert_non_null(lib);
        *(void **)&resolve = dlsym(lib, "seccomp_syscall_resolve_name_arch");
        assert_non_null(resolve);
        assert_true(n > 250);
        for (size_t i = 0; i < n; i++)
                if (resolve(0xC000003E /* AUDIT_ARCH_X86_64 */, names[i]) < 0)
                        fail_msg("'%s' is not an x86_64 syscall", names[i]);
        dlclose(lib);
}

static void test_mounts_and_devices(void **state)
{
        json_t *c = config_of(*state);
        json_t *m, *o, *dev;
        size_t i;

        m = mount_at(c, "/sys");
        assert_non_null(m);
        o = json_object_get(m, "options");
        assert_true(has_string(o, "ro") && has_string(o, "nosuid") &&
                    has_string(o, "noexec") && has_string(o, "nodev"));
        assert_true(has_string(
            json_object_get(mount_at(c, "/sys/fs/cgroup"), "options"), "ro"));
        m = mount_at(c, "/workspace");
        assert_non_null(m);
        assert_string_equal(json_string_value(json_object_get(m, "source")),
                            "/var/lib/sbx/ws/session-1");
        assert_true(has_string(json_object_get(m, "options"), "rw"));
        assert_true(has_string(json_object_get(m, "options"), "nodev"));
        m = mount_at(c, "/tmp");
        assert_string_equal(json_string_value(json_object_get(m, "type")),
                            "tmpfs");
        assert_true(has_string(json_object_get(m, "options"), "size=32m"));
        assert_true(has_string(
            json_object_get(mount_at(c, "/dev/shm"), "options"), "size=64m"));
        m = mount_at(c, SBX_AGENT_PATH);
        assert_string_equal(json_string_value(json_object_get(m, "source")),
                            "/opt/sbx/sbx-agent");
        assert_true(has_string(json_object_get(m, "options"), "ro"));
        m = mount_at(c, SBX_AGENT_SOCKET_DIR);
        assert_true(has_string(json_object_get(m, "options"), "noexec"));
        m = mount_at(c, "/usr");
        assert_string_equal(json_string_value(json_object_get(m, "source")),
                            "/x/sub0");
        /* no bind from the host's /dev, no device entries, deny-all rule */
        json_array_foreach(json_object_get(c, "mounts"), i, m)
        {
                const char *src =
                    json_string_value(json_object_get(m, "source"));
                assert_false(!strncmp(src, "/dev", 4));
        }
        assert_null(json_object_get(json_object_get(c, "linux"), "devices"));
        dev = json_object_get(
            json_object_get(json_object_get(c, "linux"), "resources"),
            "devices");
        assert_int_equal(json_array_size(dev), 1);
        assert_false(
            json_is_true(json_object_get(json_array_get(dev, 0), "allow")));
        assert_string_equal(json_string_value(json_object_get(
                                json_array_get(dev, 0), "access")),
                            "rwm");
        json_decref(c);
}

static void test_root_masked_annotations(void **state)
{
        json_t *c = config_of(*state);
        json_t *l = json_object_get(c, "linux");
        assert_string_equal(json_string_value(json_object_get(
                                json_object_get(c, "root"), "path")),
                            "/x/rootfs");
        assert_false(json_is_true(
            json_object_get(json_object_get(c, "root"), "readonly")));
        assert_true(
            has_string(json_object_get(l, "maskedPaths"), "/proc/kcore"));
        assert_true(
            has_string(json_object_get(l, "readonlyPaths"), "/proc/sys"));
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(c, "annotations"),
                                              "sbx.template.digest")),
            DIGEST);
        json_decref(c);
}

/* A sandbox with a workspace slot: no /workspace bind (the runtime
 * mounts the slot in the root), an "rslave" namespace so the slot gets
 * host mounts, and every bind "rprivate" so nothing else does. Without a
 * slot, everything stays "rprivate". */
static void test_workspace_slot_propagation(void **state)
{
        fixture_t *f = *state;
        json_t *c, *m;
        size_t i, binds = 0;

        c = config_of(f);
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(c, "linux"),
                                              "rootfsPropagation")),
            "rprivate");
        json_decref(c);

        f->spec.workspace_dir  = NULL;
        f->spec.workspace_late = 1;
        c                      = config_of(f);
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(c, "linux"),
                                              "rootfsPropagation")),
            "rslave");
        assert_null(mount_at(c, "/workspace"));
        json_array_foreach(json_object_get(c, "mounts"), i, m)
        {
                if (strcmp(json_string_value(json_object_get(m, "type")),
                           "bind"))
                        continue;
                binds++;
                if (!has_string(json_object_get(m, "options"), "rprivate"))
                        fail_msg("bind at %s is not rprivate",
                                 json_string_value(
                                     json_object_get(m, "destination")));
        }
        assert_int_equal(binds, 3); /* /usr, the agent, its sockets */
        json_decref(c);
}

static void test_bad_specs_refused(void **state)
{
        fixture_t *f                  = *state;
        const sbx_sandbox_spec_t good = f->spec;
        const char *const bad_env[]   = {"NOEQUALS", NULL};
        const char *const bad_caps[]  = {"CAP_SYS_ADMIN; rm", NULL};
        char err[256];
        struct {
                sbx_sandbox_spec_t s;
                sbx_err_t want;
        } cases[13];
        size_t n = 0;
        for (size_t i = 0; i < SBX_ARRAY_SIZE(cases); i++)
                cases[i].s = good, cases[i].want = SBX_ERR_INVALID;
        cases[n++].s.id = "../etc";
        cases[n++].s.id = "-rf";
        cases[n++].s.id =
            "a1234567890123456789012345678901234567890123456789012345678901234";
        cases[n++].s.runtime        = "crun";
        cases[n].want               = SBX_ERR_UNSUPPORTED;
        cases[n++].s.network        = "host";
        cases[n++].s.memory_mb      = 0;
        cases[n++].s.argv           = NULL;
        cases[n++].s.workspace_dir  = "relative/ws";
        cases[n++].s.workspace_dir  = "/var/ws/../../etc";
        cases[n++].s.env            = bad_env;
        cases[n++].s.caps           = bad_caps;
        cases[n++].s.socket_dir     = "/run/a,b";
        cases[n++].s.workspace_late = 1; /* and a workspace_dir */
        for (size_t i = 0; i < n; i++) {
                sbx_bundle_t b = {&cases[i].s, "/x/rootfs", NULL, 0, "/sbx"};
                json_t *c;
                err[0] = '\0';
                if (sbx_sandbox_spec_check(&cases[i].s, err, sizeof(err)) !=
                    cases[i].want)
                        fail_msg("case %zu accepted or misjudged", i);
                assert_true(err[0] != '\0');
                c = sbx_bundle_config(&b, err, sizeof(err));
                assert_null(c);
        }
        assert_int_equal(sbx_sandbox_spec_check(&good, err, sizeof(err)),
                         SBX_OK);
}

static void test_write_config(void **state)
{
        fixture_t *f = *state;
        json_t *c    = config_of(f), *back;
        char p[128], err[256];
        struct stat st;
        assert_int_equal(sbx_bundle_write(f->dir, c, err, sizeof(err)), SBX_OK);
        sbx_fmt(p, sizeof(p), "%s/config.json", f->dir);
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
        back = json_load_file(p, 0, NULL);
        assert_non_null(back);
        assert_true(json_equal(back, c));
        json_decref(back);
        json_decref(c);
}

static void test_status_names(void **state)
{
        (void)state;
        for (int s = SBX_SANDBOX_ABSENT; s <= SBX_SANDBOX_UNKNOWN; s++)
                assert_int_equal(
                    sbx_sandbox_status_parse(sbx_sandbox_status_str(s)), s);
        assert_int_equal(sbx_sandbox_status_parse("exploded"),
                         SBX_SANDBOX_UNKNOWN);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_limits_and_cgroup, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_namespaces_all_new, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_process_no_privileges, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_caps_when_asked, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_seccomp_profile, setup,
                                            teardown),
            cmocka_unit_test(test_seccomp_names_resolve),
            cmocka_unit_test_setup_teardown(test_mounts_and_devices, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_root_masked_annotations, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_workspace_slot_propagation,
                                            setup, teardown),
            cmocka_unit_test_setup_teardown(test_bad_specs_refused, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_write_config, setup, teardown),
            cmocka_unit_test(test_status_names),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
