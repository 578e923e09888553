/* SPDX-License-Identifier: Apache-2.0 */
/* The planner and guard stages (Kafka side; logic in planner/, guard/). */
#ifndef SBX_PLAN_STAGES_H
#define SBX_PLAN_STAGES_H

#include "stages/stage.h"

extern const sbx_stage_t sbx_stage_planner;
extern const sbx_stage_t sbx_stage_guard;

#endif
