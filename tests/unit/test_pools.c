/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Warm pool specs and what a pool needs: the shipped pools file parses
 * against the shipped policy; a bad file is refused with file:line and
 * the reason; the fill rule keeps buffer_min..buffer_max ready within
 * pool_min..pool_max and the room the node has left.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/policy.h"
#include "stages/pools.h"

#define POLICY SBX_SOURCE_ROOT "/deploy/policy/default.conf"
#define POOLS  SBX_SOURCE_ROOT "/deploy/pools/local.conf"

static sbx_policy_t *policy;

static int setup(void **state)
{
        char err[512];
        (void)state;
        policy = sbx_policy_load(POLICY, err, sizeof(err));
        if (!policy)
                fail_msg("%s", err);
        return 0;
}

static int teardown(void **state)
{
        (void)state;
        sbx_policy_destroy(policy);
        return 0;
}

static void test_shipped_pools_parse(void **state)
{
        char err[512];
        sbx_pools_t *p = sbx_pools_load(POOLS, policy, err, sizeof(err));
        (void)state;
        if (!p)
                fail_msg("%s", err);
        assert_true(p->n >= 1);
        assert_string_equal(p->v[0].key, "runc/python-small/host");
        /* sizes come from the policy's class */
        assert_true(p->v[0].cpu == 1.0);
        assert_int_equal(p->v[0].memory_mb, 2048);
        assert_true(p->v[0].buffer_min <= p->v[0].buffer_max);
        sbx_pools_destroy(p);
}

static void expect_refused(const char *text, const char *why)
{
        char err[512] = "";
        sbx_pools_t *p =
            sbx_pools_parse("pools.conf", text, policy, err, sizeof(err));
        if (p)
                fail_msg("accepted: %s", text);
        if (!strstr(err, why))
                fail_msg("want '%s' in '%s'", why, err);
}

static void test_bad_files_refused(void **state)
{
        (void)state;
        expect_refused("pool.a.class = no-such-class\n",
                       "pools.conf:1: unknown class 'no-such-class'");
        expect_refused(
            "pool.a.class = python-small\npool.a.class = python-ds\n",
            "pools.conf:2: 'pool.a.class' set twice");
        expect_refused("pool.a.runtime = crun\n",
                       "runtime must be runc or runsc");
        expect_refused("pool.a.buffer_min = -1\n", "must be an integer");
        expect_refused("pool.a.colour = blue\n", "unknown field 'colour'");
        expect_refused("pools.a.class = python-small\n", "unknown key");
        expect_refused("pool.a.buffer_min = 2\n",
                       "pools.conf:1: pool a: class "
                       "is required");
        expect_refused(
            "pool.a.class = python-small\npool.a.buffer_min = 3\n"
            "pool.a.buffer_max = 2\n",
            "want buffer_min <= buffer_max");
}

static sbx_pool_spec_t spec(int pmin, int pmax, int bmin, int bmax)
{
        sbx_pool_spec_t s;
        memset(&s, 0, sizeof(s));
        s.pool_min   = pmin;
        s.pool_max   = pmax;
        s.buffer_min = bmin;
        s.buffer_max = bmax;
        return s;
}

static int delta(const sbx_pool_spec_t *s,
                 int ready,
                 int prov,
                 int total,
                 int room)
{
        sbx_pool_count_t c = {ready, prov, total};
        return sbx_pool_delta(s, &c, room);
}

static void test_fill_rule(void **state)
{
        sbx_pool_spec_t s = spec(0, 6, 1, 2);
        (void)state;
        /* empty: fill the buffer up to buffer_max */
        assert_int_equal(delta(&s, 0, 0, 0, 100), 2);
        /* one starting counts as buffer: nothing more yet */
        assert_int_equal(delta(&s, 0, 1, 1, 100), 0);
        /* within the buffer: nothing */
        assert_int_equal(delta(&s, 2, 0, 5, 100), 0);
        /* below buffer_min with leased ones: refill, capped by pool_max */
        assert_int_equal(delta(&s, 0, 0, 5, 100), 1);
        assert_int_equal(delta(&s, 0, 0, 6, 100), 0);
        /* the node's room caps it */
        assert_int_equal(delta(&s, 0, 0, 0, 1), 1);
        assert_int_equal(delta(&s, 0, 0, 0, 0), 0);
        /* above buffer_max: retire the extra ready ones */
        assert_int_equal(delta(&s, 4, 0, 4, 100), -2);
        /* pool_min holds even then */
        s = spec(4, 8, 0, 1);
        assert_int_equal(delta(&s, 4, 0, 4, 100), 0);
        assert_int_equal(delta(&s, 0, 0, 1, 100), 3);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_shipped_pools_parse),
            cmocka_unit_test(test_bad_files_refused),
            cmocka_unit_test(test_fill_rule),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
