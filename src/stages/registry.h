/* SPDX-License-Identifier: Apache-2.0 */
/* The stages sbxd can run, by name. */
#ifndef SBX_REGISTRY_H
#define SBX_REGISTRY_H

#include "stages/stage.h"

/** The stage named @p name, or NULL. */
const sbx_stage_t *sbx_stage_by_name(const char *name);
/** The stages `sbxd` runs when no --stage is given (NULL-terminated). */
extern const sbx_stage_t *const sbx_default_stages[];
/** Every stage name, comma-separated, for usage messages. */
extern const char sbx_stage_names[];

#endif
