/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a task needs of a sandbox's installed packages (the reuse check's
 * dependency part). Installed packages are "name==version,..." (the
 * fold's env_packages); a need is a PackageReq: a name and a constraint
 * of comma-separated PEP 440-style specifiers (==, !=, <, <=, >, >=;
 * "==1.5.*" prefix matches), compared segment by segment, numbers as
 * numbers. A need the sandbox lacks is missing (an additive install); one
 * it has in a version the constraint excludes is a conflict: never
 * resolved by uninstalling in place.
 */
#ifndef SBX_STAGES_DEPS_H
#define SBX_STAGES_DEPS_H

#include <jansson.h>
#include <stddef.h>

/** 1 if @p version satisfies every specifier of @p constraint ("" or
 *  NULL: any). An unparsable specifier is not satisfied. */
int sbx_deps_satisfies(const char *version, const char *constraint);

/** The version of @p name in @p installed ("name==version,..."), copied
 *  into @p buf, or NULL. */
const char *sbx_deps_installed(const char *installed,
                               const char *name,
                               char *buf,
                               size_t size);

/**
 * How many of @p need (an array of PackageReq) @p installed has in a
 * version their constraint excludes; @p why says which is the first.
 */
int sbx_deps_conflict(const char *installed,
                      const json_t *need,
                      char *why,
                      size_t why_size);

#endif
