/* SPDX-License-Identifier: Apache-2.0 */
/* The projector as a stage of sbxd (src/stages/registry.c). */
#ifndef SBX_PROJECTOR_STAGE_H
#define SBX_PROJECTOR_STAGE_H

#include "stages/stage.h"

extern const sbx_stage_t sbx_stage_projector;

#endif
