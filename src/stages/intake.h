/* SPDX-License-Identifier: Apache-2.0 */
/*
 * intake: the door of sbx. It reads client commands from sbx.requests.v1,
 * validates them (schema, sizes, tenant, target state, lease version) and
 * appends the lifecycle event they ask for, or a RequestRejected that the
 * client reads by request id. Undecodable bytes go to the DLQ.
 */
#ifndef SBX_INTAKE_H
#define SBX_INTAKE_H

#include <jansson.h>

#include "core/event.h"
#include "stages/stage.h"

extern const sbx_stage_t sbx_stage_intake;

/* Limits on what a client may send. */
#define SBX_INTAKE_MAX_TEXT  (64 * 1024)
#define SBX_INTAKE_MAX_ITEMS 256
#define SBX_INTAKE_MAX_ARG   (64 * 1024)
#define SBX_INTAKE_MAX_FILE  (1024 * 1024)

/* The outcome of checking one command against the current state. */
typedef enum sbx_intake_verdict_e {
        SBX_INTAKE_APPEND,  /* *ret_event is the event to append */
        SBX_INTAKE_REJECT,  /* reason set: a RequestRejected */
        SBX_INTAKE_WAIT,    /* the state may not have caught up: retry */
        SBX_INTAKE_IGNORE,  /* a resend of a request already taken */
} sbx_intake_verdict_t;

/**
 * The pure decision for one decoded request (@p req, codec JSON of
 * sbx.Request). @p target is the folded state of the aggregate the command
 * names (NULL if unknown). @p tenant_known says whether the policy knows
 * the request's tenant. Writes the event to append or the reason.
 */
sbx_intake_verdict_t sbx_intake_check(const json_t *req,
                                      const sbx_state_t *target,
                                      int tenant_known, int64_t now_us,
                                      sbx_event_t **ret_event, char *reason,
                                      size_t reason_size);

/** The aggregate id a request targets (borrowed from @p req), or NULL. */
const char *sbx_intake_target(const json_t *req);

#endif
