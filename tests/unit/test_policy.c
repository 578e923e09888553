/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of policy files: the local stack's deploy/policy/default.conf
 * loads with the design origin's five classes and its two tenants, and
 * every kind of mistake an operator can make refuses the whole file with
 * file, line and a reason that names the mistake.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/policy.h"
#include "core/util.h"

#define DEFAULT_CONF SBX_SOURCE_ROOT "/deploy/policy/default.conf"

/* A small valid policy; tests append lines to it (from line 11). */
#define BASE                                                                   \
        "class.small.cpu = 1\n"                                                \
        "class.small.memory_mb = 2048\n"                                       \
        "class.small.disk_gb = 10\n"                                           \
        "class.big.cpu = 8\n"                                                  \
        "class.big.memory_mb = 16384\n"                                        \
        "class.big.disk_gb = 50\n"                                             \
        "tenant.t.classes = big, small\n"                                      \
        "tenant.t.max_cpu = 16\n"                                              \
        "tenant.t.max_memory_mb = 32768\n"                                     \
        "tenant.t.max_sandboxes = 4\n"

static void check_class(const sbx_policy_t *p,
                        const char *name,
                        double cpu,
                        int64_t memory_mb,
                        int64_t disk_gb)
{
        const sbx_policy_class_t *k = sbx_policy_class(p, name);
        if (!k)
                fail_msg("class %s missing", name);
        assert_true(k->cpu == cpu);
        assert_int_equal(k->memory_mb, memory_mb);
        assert_int_equal(k->disk_gb, disk_gb);
        assert_string_equal(k->templates.v[0], "host");
}

static void test_default_conf_holds_the_origins_classes(void **state)
{
        char err[512]   = "";
        sbx_policy_t *p = sbx_policy_load(DEFAULT_CONF, err, sizeof(err));
        const sbx_policy_class_t *const *cl;
        const sbx_policy_tenant_t *t;
        size_t n;
        (void)state;

        if (!p)
                fail_msg("%s", err);
        sbx_policy_classes(p, &n);
        assert_int_equal(n, 5);
        check_class(p, "python-small", 1, 2048, 10);
        check_class(p, "python-ds", 2, 4096, 20);
        check_class(p, "build-medium", 4, 8192, 30);
        check_class(p, "browser-medium", 4, 8192, 30);
        check_class(p, "compute-large", 8, 16384, 50);
        assert_true(sbx_policy_class(p, "browser-medium")->browser);
        assert_false(sbx_policy_class(p, "build-medium")->browser);
        assert_null(sbx_policy_class(p, "python-medium"));

        /* acme: all but compute-large, smallest first. */
        assert_true(sbx_policy_tenant_known(p, "acme"));
        assert_true(sbx_policy_tenant_known(p, "demo"));
        assert_false(sbx_policy_tenant_known(p, "mallory"));
        assert_false(sbx_policy_tenant_known(p, ""));
        cl = sbx_policy_tenant_classes(p, "acme", &n);
        assert_int_equal(n, 4);
        assert_string_equal(cl[0]->name, "python-small");
        assert_string_equal(cl[1]->name, "python-ds");
        assert_string_equal(cl[2]->name, "build-medium");
        assert_string_equal(cl[3]->name, "browser-medium");
        cl = sbx_policy_tenant_classes(p, "demo", &n);
        assert_int_equal(n, 5);
        assert_string_equal(cl[4]->name, "compute-large");
        assert_null(sbx_policy_tenant_classes(p, "mallory", &n));
        assert_int_equal(n, 0);

        t = sbx_policy_tenant(p, "acme");
        assert_true(t->max_cpu == 16);
        assert_int_equal(t->max_memory_mb, 32768);
        assert_int_equal(t->max_sandboxes, 20);
        assert_true(sbx_policy_tenant_allows_class(t, "browser-medium"));
        assert_false(sbx_policy_tenant_allows_class(t, "compute-large"));
        assert_true(sbx_policy_tenant_allows_network(t, "pypi-readonly"));
        assert_false(sbx_policy_tenant_allows_network(t, "web"));
        assert_true(sbx_policy_tenant_allows_network(
            sbx_policy_tenant(p, "demo"), "web"));

        /* High risk: gVisor and no network. */
        assert_int_equal(sbx_policy_risk(p, SBX_RISK_HIGH)->runtimes.n, 1);
        assert_string_equal(sbx_policy_risk(p, SBX_RISK_HIGH)->runtimes.v[0],
                            "runsc");
        assert_true(sbx_policy_list_has(
            &sbx_policy_risk(p, SBX_RISK_LOW)->runtimes, "runc"));
        assert_false(sbx_policy_list_has(
            &sbx_policy_risk(p, SBX_RISK_HIGH)->network_profiles, "web"));
        sbx_policy_destroy(p);
}

static void test_defaults_and_declaration_order(void **state)
{
        char err[512] = "";
        /* Tenants may come before the classes they name. */
        sbx_policy_t *p = sbx_policy_parse("p.conf",
                                           "tenant.t.classes = small\n"
                                           "tenant.t.max_cpu = 0.5\n"
                                           "tenant.t.max_memory_mb = 1024\n"
                                           "tenant.t.max_sandboxes = 2\n"
                                           "# a comment\n\n"
                                           "class.small.cpu = 0.25\n"
                                           "class.small.memory_mb = 512\n"
                                           "class.small.disk_gb = 1\n",
                                           err, sizeof(err));
        const sbx_policy_tenant_t *t;
        if (!p)
                fail_msg("%s", err);
        t = sbx_policy_tenant(p, "t");
        assert_true(sbx_policy_class(p, "small")->cpu == 0.25);
        assert_int_equal(sbx_policy_class(p, "small")->pids, 1024);
        assert_string_equal(sbx_policy_class(p, "small")->templates.v[0],
                            "host");
        assert_int_equal(t->network_profiles.n, 1);
        assert_string_equal(t->network_profiles.v[0], "none");
        assert_int_equal(t->max_risk, SBX_RISK_HIGH);
        assert_int_equal(t->max_ttl_seconds, 14400);
        assert_int_equal(sbx_policy_default_ttl(p), 1800);
        assert_true(sbx_policy_network_known(p, "none"));
        /* Without risk.* keys, high risk still means gVisor only. */
        assert_int_equal(sbx_policy_risk(p, SBX_RISK_HIGH)->runtimes.n, 1);
        assert_string_equal(sbx_policy_risk(p, SBX_RISK_HIGH)->runtimes.v[0],
                            "runsc");
        assert_string_equal(sbx_policy_risk(p, SBX_RISK_MEDIUM)->runtimes.v[0],
                            "runc");
        sbx_policy_destroy(p);
}

static void test_tenant_classes_are_ordered_by_size(void **state)
{
        char err[512]   = "";
        sbx_policy_t *p = sbx_policy_parse("p.conf",
                                           BASE
                                           "class.mid.cpu = 2\n"
                                           "class.mid.memory_mb = 4096\n"
                                           "class.mid.disk_gb = 20\n"
                                           "tenant.u.classes = big, small, "
                                           "mid\n"
                                           "tenant.u.max_cpu = 8\n"
                                           "tenant.u.max_memory_mb = 16384\n"
                                           "tenant.u.max_sandboxes = 1\n",
                                           err, sizeof(err));
        const sbx_policy_class_t *const *cl;
        size_t n;
        (void)state;

        if (!p)
                fail_msg("%s", err);
        cl = sbx_policy_tenant_classes(p, "t", &n);
        assert_int_equal(n, 2);
        assert_string_equal(cl[0]->name, "small");
        assert_string_equal(cl[1]->name, "big");
        cl = sbx_policy_tenant_classes(p, "u", &n);
        assert_int_equal(n, 3);
        assert_string_equal(cl[0]->name, "small");
        assert_string_equal(cl[1]->name, "mid");
        assert_string_equal(cl[2]->name, "big");
        sbx_policy_destroy(p);
}

static void expect_error(const char *text, const char *want)
{
        char err[512]   = "";
        sbx_policy_t *p = sbx_policy_parse("p.conf", text, err, sizeof(err));
        if (p) {
                sbx_policy_destroy(p);
                fail_msg("accepted a policy that should fail with '%s'", want);
        }
        if (!strstr(err, want))
                fail_msg("error '%s' lacks '%s'", err, want);
}

static void test_errors_name_file_line_reason(void **state)
{
        (void)state;
        expect_error(BASE "frobnicate = 1\n",
                     "p.conf:11: unknown key "
                     "'frobnicate'");
        expect_error(BASE "class.small.colour = red\n",
                     "p.conf:11: unknown key 'class.small.colour'");
        expect_error(BASE "class.cpu = 1\n", "p.conf:11: unknown key");
        expect_error(BASE "tenant.t.max_gpus = 1\n", "p.conf:11: unknown key");
        expect_error(BASE "class.bad!name.cpu = 1\n", "p.conf:11: bad key");
        expect_error(BASE "no equals sign\n",
                     "p.conf:11: expected 'key = "
                     "value'");

        /* Numbers. */
        expect_error(BASE "class.x.cpu = four\n",
                     "p.conf:11: cpu must be a "
                     "number");
        expect_error(BASE "class.x.cpu = -1\n", "p.conf:11: cpu must be");
        expect_error(BASE "class.x.cpu = 0\n", "p.conf:11: cpu must be");
        expect_error(BASE "class.x.cpu = 1e3\n", "p.conf:11: cpu must be");
        expect_error(BASE "class.x.cpu = nan\n", "p.conf:11: cpu must be");
        expect_error(BASE "class.x.memory_mb = 2Gi\n",
                     "p.conf:11: memory_mb must be an integer");
        expect_error(BASE "class.x.disk_gb = 1.5\n",
                     "p.conf:11: disk_gb must be an integer");
        expect_error(BASE "class.x.browser = maybe\n",
                     "p.conf:11: browser must be true or false");
        expect_error(BASE "tenant.u.max_sandboxes = -1\n",
                     "p.conf:11: max_sandboxes must be an integer");
        expect_error(BASE "tenant.t.max_risk = extreme\n",
                     "p.conf:11: max_risk must be low, medium or high");

        /* Duplicates. */
        expect_error(BASE "class.small.cpu = 2\n",
                     "p.conf:11: 'class.small.cpu' set twice (first at line "
                     "1)");
        expect_error(BASE "tenant.t.network_profiles = none, none\n",
                     "p.conf:11: 'none' listed twice");
        expect_error(BASE "templates = host, ,x\n", "p.conf:11: list item");

        /* References to what is not declared. */
        expect_error(BASE
                     "tenant.u.classes = small, gpu-huge\n"
                     "tenant.u.max_cpu = 1\n"
                     "tenant.u.max_memory_mb = 2048\n"
                     "tenant.u.max_sandboxes = 1\n",
                     "p.conf:11: tenant u: unknown class 'gpu-huge'");
        expect_error(BASE "tenant.t.network_profiles = none, wifi\n",
                     "p.conf:11: tenant t: network_profiles: 'wifi' is not "
                     "declared in network_profiles");
        expect_error(BASE "class.small.templates = host, node-playwright\n",
                     "p.conf:11: class small: templates: 'node-playwright' is "
                     "not declared in templates");
        expect_error(
            BASE "risk.high.runtimes = kata\n",
            "p.conf:11: risk high: runtimes: 'kata' is not declared in "
            "runtimes");
        expect_error(BASE "risk.extreme.runtimes = runsc\n",
                     "p.conf:11: unknown risk level 'extreme'");

        /* What is required, and what cannot work. */
        expect_error(BASE "class.x.cpu = 2\nclass.x.memory_mb = 1\n",
                     "p.conf:11: class x has no disk_gb");
        expect_error(BASE "tenant.u.classes = small\n",
                     "p.conf:11: tenant u has no max_cpu");
        expect_error(BASE "tenant.u.max_cpu = 4\n",
                     "p.conf:11: tenant u has no classes");
        expect_error(BASE
                     "tenant.u.classes = big\n"
                     "tenant.u.max_cpu = 4\n"
                     "tenant.u.max_memory_mb = 65536\n"
                     "tenant.u.max_sandboxes = 3\n",
                     "p.conf:12: tenant u: max_cpu 4 / max_memory_mb 65536 "
                     "cannot hold its smallest class big");
        expect_error(BASE
                     "default_ttl_seconds = 7200\n"
                     "max_ttl_seconds = 3600\n",
                     "p.conf:11: default_ttl_seconds 7200 exceeds");
        expect_error("", "p.conf: no class declared");
        expect_error(
            "class.small.cpu = 1\nclass.small.memory_mb = 1\n"
            "class.small.disk_gb = 1\n",
            "p.conf: no tenant declared");
}

static void test_load_refuses_the_whole_file(void **state)
{
        char path[] = "/tmp/sbx-test-policy-XXXXXX", err[512] = "";
        sbx_policy_t *p;
        FILE *f;
        int fd;
        (void)state;

        fd = mkstemp(path);
        assert_true(fd >= 0);
        f = fdopen(fd, "w");
        /* Everything valid but the very last line. */
        fputs(BASE "tenant.t.max_ttl_seconds = forever\n", f);
        fclose(f);
        p = sbx_policy_load(path, err, sizeof(err));
        assert_null(p);
        assert_non_null(strstr(err, path));
        assert_non_null(strstr(err, ":11: max_ttl_seconds must be"));
        unlink(path);

        assert_null(
            sbx_policy_load("/nonexistent/policy.conf", err, sizeof(err)));
        assert_non_null(strstr(err, "/nonexistent/policy.conf"));
        sbx_policy_destroy(NULL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_default_conf_holds_the_origins_classes),
            cmocka_unit_test(test_defaults_and_declaration_order),
            cmocka_unit_test(test_tenant_classes_are_ordered_by_size),
            cmocka_unit_test(test_errors_name_file_line_reason),
            cmocka_unit_test(test_load_refuses_the_whole_file),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
