/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The stage table. The order is the pipeline's (DESIGN.md §1), which is
 * also the order sbxd starts them in.
 */
#include "stages/registry.h"

#include <string.h>

#include "projector/projector_stage.h"
#include "stages/executor.h"
#include "stages/intake.h"
#include "stages/keeper.h"
#include "stages/plan_stages.h"
#include "stages/scheduler.h"

static const sbx_stage_t *const all[] = {
    &sbx_stage_intake,    &sbx_stage_planner,   &sbx_stage_guard,
    &sbx_stage_scheduler, &sbx_stage_keeper,    &sbx_stage_hollow,
    &sbx_stage_executor,  &sbx_stage_projector, NULL,
};

const sbx_stage_t *const sbx_default_stages[] = {
    &sbx_stage_intake,
    &sbx_stage_planner,
    &sbx_stage_guard,
    &sbx_stage_scheduler,
    &sbx_stage_keeper,
    &sbx_stage_projector,
    NULL,
};

const char sbx_stage_names[] =
    "intake, planner, guard, scheduler, keeper, executor, hollow, projector";

const sbx_stage_t *sbx_stage_by_name(const char *name)
{
        int i;
        for (i = 0; all[i]; i++)
                if (!strcmp(all[i]->name, name))
                        return all[i];
        return NULL;
}
