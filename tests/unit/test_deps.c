/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Version constraints of the reuse check: the design origin's conflict
 * (pandas 3.x installed, a project pinned to pandas==1.5.3 and
 * numpy<1.24) and the specifiers agents write.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "stages/deps.h"

static void test_specifiers(void **state)
{
        static const struct {
                const char *version, *constraint;
                int ok;
        } cases[] = {
            {"1.5.3", "==1.5.3", 1}, {"1.5.3", "==1.5.*", 1},
            {"2.2.0", "==1.5.*", 0}, {"1.5", "==1.5.0", 1},
            {"1.23.5", "<1.24", 1},  {"1.24.0", "<1.24", 0},
            {"2.1", ">=2,<3", 1},    {"3.1.1", ">=2, <3", 0},
            {"1.10", ">1.9", 1},     {"1.9", ">1.10", 0},
            {"2026.6", ">=2025", 1}, {"4.0.0", "!=4.0.0", 0},
            {"4.0.1", "!=4.0.0", 1}, {"3.1.1", "", 1},
            {"1.0", "~=1.0", 0}, /* not understood: not satisfied */
        };
        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                if (sbx_deps_satisfies(cases[i].version, cases[i].constraint) !=
                    cases[i].ok)
                        fail_msg("%s %s: want %d", cases[i].version,
                                 cases[i].constraint, cases[i].ok);
}

static void test_the_origins_conflict(void **state)
{
        const char *have = "numpy==2.4.6,openpyxl==3.1.5,pandas==3.1.1";
        json_t *need = json_pack("[{s:s, s:s}, {s:s, s:s}]", "name", "pandas",
                                 "constraint", "==1.5.3", "name", "numpy",
                                 "constraint", "<1.24");
        json_t *fine = json_pack("[{s:s, s:s}, {s:s}]", "name", "pandas",
                                 "constraint", ">=3", "name", "matplotlib");
        char why[256], ver[64];
        (void)state;

        assert_int_equal(sbx_deps_conflict(have, need, why, sizeof(why)), 2);
        assert_string_equal(why,
                            "the task needs pandas==1.5.3, 3.1.1 is installed");
        assert_int_equal(sbx_deps_conflict(have, fine, why, sizeof(why)), 0);
        /* a clean environment conflicts with nothing */
        assert_int_equal(sbx_deps_conflict(NULL, need, why, sizeof(why)), 0);
        assert_string_equal(sbx_deps_installed(have, "numpy", ver, sizeof(ver)),
                            "2.4.6");
        assert_null(sbx_deps_installed(have, "num", ver, sizeof(ver)));
        json_decref(need);
        json_decref(fine);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_specifiers),
            cmocka_unit_test(test_the_origins_conflict),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
