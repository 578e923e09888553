/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The seccomp profile every sandbox runs under, as data: Docker's default
 * allow-list for x86_64 (moby profiles/seccomp/default.json) for a process
 * without capabilities, with io_uring and modify_ldt left out, the native
 * ABI only, and everything else failing with EPERM (clone3 with ENOSYS so
 * that glibc falls back to clone, whose namespace flags are refused).
 */
#ifndef SBX_RUNTIME_SECCOMP_H
#define SBX_RUNTIME_SECCOMP_H

#include <stddef.h>

#include <jansson.h>

/** The OCI linux.seccomp object; new reference owned by the caller. */
json_t *sbx_seccomp_profile_new(void);

/** The allowed syscall names (static storage) and their count. */
const char *const *sbx_seccomp_allowed(size_t *ret_count);

#endif
