/* SPDX-License-Identifier: Apache-2.0 */
/*
 * keeper: leases, TTLs, idle timeouts and node liveness (see keeper.c).
 * sbx_keeper_decide() is the pure rule, tested without a broker.
 */
#ifndef SBX_KEEPER_H
#define SBX_KEEPER_H

#include "core/event.h"
#include "core/fold.h"
#include "stages/nodes.h"
#include "stages/stage.h"

extern const sbx_stage_t sbx_stage_keeper;

/* A lost sandbox's claim is placed again until it has been placed this
 * many times (the scheduler's bound). */
#define SBX_KEEPER_MAX_ATTEMPTS 3

typedef struct sbx_keeper_conf_s {
        int64_t idle_timeout_us; /* IDLE this long -> Hibernated */
        int64_t max_lifetime_us; /* idle sandbox older -> destroyed */
        int64_t node_grace_us;   /* node silent this long -> SandboxLost */
} sbx_keeper_conf_t;

void sbx_keeper_conf_default(sbx_keeper_conf_t *c);

/**
 * What time has made true for @p s at @p now: the event to append, or
 * NULL. @p other is the bound sandbox of a claim (may be NULL), @p node
 * the status of a sandbox's node, or of a claim's sandbox's node (NULL if
 * never seen).
 */
sbx_event_t *sbx_keeper_decide(const sbx_keeper_conf_t *conf,
                               const sbx_state_t *s,
                               const sbx_state_t *other,
                               const sbx_node_t *node,
                               int64_t now);

#endif
