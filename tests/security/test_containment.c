/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The containment suite: what untrusted code can do to the host from
 * inside a real sandbox. Each test makes a sandbox the way the executor
 * does (runtime adapter, host template, sbx-agent as PID 1, limits), runs
 * an attack in it as root through the agent — read a host secret, write
 * outside, fork and memory bombs, fill the disk, reach the host's network,
 * mount, ptrace a host process, write /proc/sys and /sys, load a kernel
 * module, escape through symlinks, exceed the pids limit, outlive the exec
 * deadline — and asserts both that the attack failed or stayed inside the
 * sandbox's bounds and, from the host, that the host is as it was. The
 * root of a sandbox is writable by design (an overlay on the sandbox's own
 * disk image), so a write to /etc succeeds inside and must land there.
 * Under runsc a memory or pids bomb takes the whole sandbox down rather
 * than one process (see whole_sandbox_dies in attack_limits.c). The suite
 * runs once per runtime, `test_containment AGENT runc|runsc`, and prints
 * what each attack saw inside. Every sandbox, host process and file a test
 * makes is removed by its teardown even when it fails (tests fail through
 * cmocka, never abort); the group teardown then checks that no container,
 * mount or cgroup is left.

 *
 * This file is the run: the test list, in order, and main(). The harness
 * is containment.c; the attacks are in attack_fs.c (files), attack_limits.c
 * (limits) and attack_kernel.c (kernel and host processes).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>

#include "containment.h"
#include "core/util.h"

/* ---- the run ---- */

static int group_setup(void **state)
{
        char name[32];
        (void)state;
        return rtfx_open(&S.fx,
                         sbx_fmt(name, sizeof(name), "sec-%s", S.runtime));
}

static int group_teardown(void **state)
{
        (void)state;
        return rtfx_close(&S.fx);
}

int main(int argc, char **argv)
{
#define T(f) cmocka_unit_test_setup_teardown(f, box_setup, box_teardown)
        const struct CMUnitTest tests[] = {
            T(test_read_host_secret),
            T(test_write_outside),
            T(test_fork_bomb),
            T(test_memory_bomb),
            T(test_disk_fill),
            T(test_network),
            T(test_mount),
            T(test_ptrace_host),
            T(test_proc_sys),
            T(test_kernel_module),
            T(test_workspace_symlink),
            T(test_pids_limit),
            T(test_past_deadline),
        };
#undef T
        int rc;
        if (argc != 3 ||
            (strcmp(argv[2], "runc") && strcmp(argv[2], "runsc"))) {
                fprintf(stderr, "usage: %s PATH-OF-sbx-agent runc|runsc\n",
                        argv[0]);
                return 2;
        }
        /* the sandbox binds it: an absolute path */
        S.agent = realpath(argv[1], NULL);
        if (!S.agent) {
                fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
                return 2;
        }
        S.runtime = argv[2];
        setvbuf(stdout, NULL, _IONBF, 0);
        rc = cmocka_run_group_tests_name(argv[2], tests, group_setup,
                                         group_teardown);
        free((char *)S.agent);
        return rc;
}
