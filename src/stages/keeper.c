/* SPDX-License-Identifier: Apache-2.0 */
/*
 * keeper: everything with a deadline. Every second it looks at the
 * aggregates of its partitions and appends what time has made true: a
 * lease past its expiry (LeaseExpired, fenced by the version it expires),
 * an idle sandbox past the idle timeout (Hibernated), past its lifetime
 * or of unknown pollution (RecycleStarted fork or destroy), a sandbox whose
 * node went silent (SandboxLost), a bound claim whose lease ended
 * (ClaimReleased) or whose sandbox died (ClaimFailed). All times come from the
 * log and the node status topic, so a restarted keeper finds the same
 * deadlines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/event.h"
#include "core/util.h"
#include "kafka/processor.h"
#include "stages/keeper.h"
#include "stages/nodes.h"

typedef struct keeper_s {
        sbx_nodes_t *nodes;
        sbx_keeper_conf_t conf;
} keeper_t;

static void *keeper_init(const sbx_config_t *c,
                         sbx_proc_t *p,
                         char *e,
                         size_t es)
{
        keeper_t *k = sbx_calloc(1, sizeof(*k));
        (void)c;
        (void)p;
        (void)e;
        (void)es;
        k->nodes = sbx_nodes_new();
        sbx_keeper_conf_default(&k->conf);
        return k;
}

static void keeper_destroy(void *self)
{
        keeper_t *k = self;
        sbx_nodes_destroy(k->nodes);
        free(k);
}

static void keeper_message(void *self,
                           sbx_proc_t *p,
                           const char *topic,
                           const void *key,
                           size_t kl,
                           const void *v,
                           size_t vl)
{
        keeper_t *k = self;
        (void)key;
        (void)kl;
        if (!strcmp(topic, SBX_TOPIC_NODES))
                sbx_nodes_update(k->nodes, sbx_proc_codec(p), v, vl);
}

void sbx_keeper_conf_default(sbx_keeper_conf_t *c)
{
        c->idle_timeout_us = 600 * 1000000LL;
        c->max_lifetime_us = 4 * 3600 * 1000000LL;
        c->node_grace_us   = 30 * 1000000LL;
}

static sbx_event_t *next(const sbx_state_t *s, sbx_evtype_t t, json_t *payload)
{
        sbx_event_t *ev = sbx_event_new(t, s->id, s->seq + 1, payload);
        sbx_event_set(&ev->tenant_id, s->tenant_id);
        sbx_event_set(&ev->session_id, s->session_id);
        sbx_event_set(&ev->correlation_id, s->correlation_id);
        return ev;
}

/*
 * An idle sandbox that may serve no one again (@p why). Level 2, "fork",
 * when its dependencies and workspace live on in a clean snapshot: the
 * session's next claim is made from it (the scheduler restores it);
 * level 3, "destroy", when nothing is worth keeping.
 */
static sbx_event_t *recycle(const sbx_state_t *s, const char *why)
{
        char reason[400];
        if (!s->clean_snapshot)
                return next(
                    s, SBX_EV_RECYCLE_STARTED,
                    json_pack("{s:s, s:s}", "level", "destroy", "reason", why));
        sbx_fmt(reason, sizeof(reason),
                "%s; its dependencies and workspace go on in snapshot %s", why,
                s->clean_snapshot);
        return next(s, SBX_EV_RECYCLE_STARTED,
                    json_pack("{s:s, s:s}", "level", "fork", "reason", reason));
}

/*
 * The claim of sandbox @p sb, lost under its lease, is placed again:
 * restored from the sandbox's latest snapshot (a fork, on the same node)
 * while @p node still answers, else anew on another node. Not past the
 * scheduler's attempts: then the claim fails.
 */
static sbx_event_t *restore(const sbx_keeper_conf_t *conf,
                            const sbx_state_t *c,
                            const sbx_state_t *sb,
                            const sbx_node_t *node,
                            int64_t now)
{
        int alive        = node && now - node->at <= conf->node_grace_us;
        const char *snap = alive ? sb->last_snapshot : NULL;
        int final        = c->attempts >= SBX_KEEPER_MAX_ATTEMPTS;
        char why[512];

        sbx_fmt(why, sizeof(why), "sandbox %s lost (%s): %s", sb->id,
                sb->lost_reason,
                final  ? "no attempt left"
                : snap ? "restored from its latest snapshot"
                       : "placed anew");
        return next(c, SBX_EV_PLACEMENT_FAILED,
                    json_pack("{s:s?, s:s, s:s, s:i, s:b, s:s?}", "node_id",
                              alive ? NULL : sb->node_id, "sandbox_id", sb->id,
                              "reason", why, "attempt", c->attempts, "final",
                              final, "snapshot_id", snap));
}

sbx_event_t *sbx_keeper_decide(const sbx_keeper_conf_t *conf,
                               const sbx_state_t *s,
                               const sbx_state_t *other,
                               const sbx_node_t *node,
                               int64_t now)
{
        char why[256];
        sbx_event_t *ev;

        if (s->aggregate == SBX_AGG_SANDBOX) {
                int live = s->phase != SBX_SB_NONE &&
                           s->phase != SBX_SB_TERMINATED &&
                           s->phase != SBX_SB_FAILED && s->phase != SBX_SB_LOST;
                if ((s->phase == SBX_SB_LEASED || s->phase == SBX_SB_RUNNING) &&
                    s->lease_expires_at && now > s->lease_expires_at) {
                        ev                = next(s, SBX_EV_LEASE_EXPIRED,
                                                 json_pack("{s:I}", "expired_at",
                                                           (json_int_t)s->lease_expires_at));
                        ev->lease_version = s->lease_version;
                        return ev;
                }
                int node_gone =
                    s->node_id && *s->node_id &&
                    (node ? now - node->at > conf->node_grace_us
                          : now - s->created_at > conf->node_grace_us);
                if (s->phase == SBX_SB_RECYCLING && node_gone)
                        /* Its node is gone and took the sandbox with it. */
                        return next(s, SBX_EV_TERMINATED,
                                    json_pack("{s:s}", "reason",
                                              "node lost; nothing left to "
                                              "destroy"));
                if (live && s->phase != SBX_SB_RECYCLING && node_gone) {
                        sbx_fmt(why, sizeof(why), "node %s silent for %lld s",
                                s->node_id,
                                (long long)((now - (node ? node->at
                                                         : s->created_at)) /
                                            1000000));
                        return next(s, SBX_EV_SANDBOX_LOST,
                                    json_pack("{s:s}", "reason", why));
                }
                if (s->phase == SBX_SB_IDLE && s->dirty_level >= 3)
                        return recycle(s, "unknown pollution (dirty level 3)");
                if ((s->phase == SBX_SB_IDLE ||
                     s->phase == SBX_SB_HIBERNATING) &&
                    now - s->created_at > conf->max_lifetime_us)
                        return recycle(s, "max lifetime");
                if ((s->phase == SBX_SB_FAILED || s->phase == SBX_SB_LOST))
                        return next(
                            s, SBX_EV_RECYCLE_STARTED,
                            json_pack("{s:s, s:s}", "level", "destroy",
                                      "reason",
                                      s->reason ? s->reason : "failed"));
                if (s->phase == SBX_SB_IDLE && s->last_active_at &&
                    now - s->last_active_at > conf->idle_timeout_us)
                        return next(
                            s, SBX_EV_HIBERNATED,
                            json_pack("{s:s}", "reason", "idle timeout"));
                return NULL;
        }
        if (s->aggregate == SBX_AGG_CLAIM && s->phase == SBX_CLAIM_BOUND &&
            other && other->seq > 0) {
                /* other: the bound sandbox, as far as this reader knows */
                /* Lost under a lease that is still live: the claim is
                 * placed again (a client gone with its lease gets
                 * nothing made for it). */
                if (other->lost_reason &&
                    other->lease_version == s->lease_version &&
                    now < (s->lease_expires_at > other->lease_expires_at
                               ? s->lease_expires_at
                               : other->lease_expires_at))
                        return restore(conf, s, other, node, now);
                /* Failed under the lease: even once it is recycled, the
                 * claim failed; it was not released. */
                if (other->fail_reason &&
                    other->lease_version == s->lease_version)
                        return next(
                            s, SBX_EV_CLAIM_FAILED,
                            json_pack("{s:s+}", "reason",
                                      "sandbox lost: ", other->fail_reason));
                if (other->lease_version > s->lease_version ||
                    (other->lease_version == s->lease_version &&
                     !other->lease_owner))
                        return next(
                            s, SBX_EV_CLAIM_RELEASED,
                            json_pack("{s:s}", "reason",
                                      other->phase == SBX_SB_SANITIZING ||
                                              other->phase == SBX_SB_IDLE
                                          ? "lease ended"
                                          : "sandbox recycled"));
        }
        return NULL;
}

static void keeper_decide(void *self,
                          sbx_proc_t *p,
                          const sbx_state_t *s,
                          int64_t now)
{
        keeper_t *k              = self;
        const sbx_state_t *other = NULL;
        const sbx_node_t *node   = NULL;
        sbx_event_t *ev;
        char err[512];

        if (s->aggregate == SBX_AGG_CLAIM && s->sandbox_id)
                other = sbx_proc_state(p, s->sandbox_id);
        if (s->aggregate == SBX_AGG_SANDBOX && s->node_id)
                node = sbx_nodes_get(k->nodes, s->node_id);
        if (other && other->node_id) /* a claim: its sandbox's node */
                node = sbx_nodes_get(k->nodes, other->node_id);
        ev = sbx_keeper_decide(&k->conf, s, other, node, now);
        if (ev && sbx_proc_append(p, ev, err, sizeof(err)))
                fprintf(stderr, "sbxd: keeper: %s\n", err);
}

static const char *const keeper_topics[] = {NULL};

const sbx_stage_t sbx_stage_keeper = {
    .name          = "keeper",
    .group_topics  = keeper_topics,
    .wants_nodes   = 1,
    .decides       = 1,
    .dlq_lifecycle = 1,
    .tick_ms       = 1000,
    .init          = keeper_init,
    .destroy       = keeper_destroy,
    .on_message    = keeper_message,
    .decide        = keeper_decide,
};
