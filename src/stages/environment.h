/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A sandbox's EnvironmentManifest (schemas/EnvironmentManifest.avsc): the
 * evidence the reuse check weighs. The executor scans the sandbox after
 * every exec (runtime/manifest.h) and appends EnvironmentUpdated when the
 * fingerprint changes, so the log holds the sandbox's manifest history:
 * what it installed, and how far it drifted from its template.
 */
#ifndef SBX_STAGES_ENVIRONMENT_H
#define SBX_STAGES_ENVIRONMENT_H

#include <jansson.h>

#include "core/fold.h"

/**
 * The manifest of sandbox @p s from @p scan (sbx_manifest_scan's output,
 * borrowed): its template digest, its language runtimes (@p python: the
 * template's python3 version; "" or NULL: unknown), the scanned packages,
 * paths and dirty level, and a fingerprint ("env-" and 16 hex digits) of
 * them (the digest stands for the runtimes).
 * A new reference.
 */
json_t *sbx_env_manifest(const sbx_state_t *s,
                         const json_t *scan,
                         const char *python);

#endif
