/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What one message does. A lifecycle event is folded whatever its offset
 * (the fold needs every earlier event of its aggregate); it becomes rows
 * only from the partition's stored offset on, so a message is written by
 * exactly one committed batch. A node status is a row (or, as a
 * tombstone, the deletion of one). A message that does not decode is
 * recorded with the reason, never skipped in silence.
 */
#include <stdlib.h>
#include <string.h>

#include "core/event.h"
#include "core/util.h"
#include "projector/extras.h"
#include "projector/projector_int.h"

static void ext_free(sbx_aggentry_t *e, void *opaque)
{
        (void)opaque;
        sbx_pext_destroy(e->ext);
        e->ext = NULL;
}

void pj_store_clear(sbx_projector_t *pj)
{
        if (pj->store)
                sbx_aggstore_foreach(pj->store, ext_free, NULL);
        sbx_aggstore_destroy(pj->store);
        pj->store = NULL;
}

/* A message joins the batch at @p offset of @p pp. */
static void batched(sbx_projector_t *pj, pj_part_t *pp, int64_t offset)
{
        int64_t now = sbx_mono_us();
        pp->next    = offset + 1;
        if (!pj->batch_msgs++)
                pj->batch_since = now;
        if (!pj->t_first_write)
                pj->t_first_write = now;
}

static void undecodable(sbx_projector_t *pj,
                        int topic,
                        pj_part_t *pp,
                        const sbx_pmsg_t *m,
                        const char *reason)
{
        sbx_prows_undecodable(&pj->rows, pj->topics[topic], m->partition,
                              m->offset, m->value_size, reason);
        atomic_fetch_add(&pj->st.undecodable, 1);
        batched(pj, pp, m->offset);
}

static void lifecycle(sbx_projector_t *pj, pj_part_t *pp, const sbx_pmsg_t *m)
{
        int write       = m->offset >= pp->stored;
        sbx_event_t *ev = NULL;
        sbx_aggentry_t *e;
        sbx_verdict_t v;
        char why[512];
        int old_phase;

        if (!m->value) {
                if (write)
                        undecodable(pj, PJ_LIFECYCLE, pp, m,
                                    "a tombstone in the log");
                return;
        }
        if (sbx_event_decode(pj->codec, m->value, m->value_size, &ev, why,
                             sizeof(why))) {
                if (write)
                        undecodable(pj, PJ_LIFECYCLE, pp, m, why);
                return;
        }
        e = sbx_aggstore_upsert(pj->store, ev->aggregate, ev->aggregate_id,
                                m->partition);
        old_phase = e->state->phase;
        v         = sbx_aggstore_fold(pj->store, ev, m->partition, &e);
        /* Requests (rejected commands) have no projection but their
         * events: no extras. */
        if (v == SBX_FOLD_ACCEPTED && e->state->aggregate != SBX_AGG_REQUEST) {
                if (!e->ext)
                        e->ext = sbx_pext_new();
                sbx_pext_apply(e->ext, e->state, ev);
        }
        if (write) {
                sbx_prows_event(&pj->rows, ev, v, e->state->aggregate,
                                old_phase, e->state->phase, m->partition,
                                m->offset);
                if (v == SBX_FOLD_ACCEPTED && e->ext)
                        sbx_prows_aggregate(&pj->rows, e->state, e->ext);
                atomic_fetch_add(&pj->st.written, 1);
                batched(pj, pp, m->offset);
        } else
                atomic_fetch_add(&pj->st.replayed, 1);
        sbx_event_destroy(ev);
}

static void node(sbx_projector_t *pj, pj_part_t *pp, const sbx_pmsg_t *m)
{
        json_t *status = NULL;
        char why[512], *id;

        if (m->offset < pp->stored)
                return;
        if (!m->value) {
                if (!m->key || !m->key_size || m->key_size > SBX_MAX_ID_LEN) {
                        undecodable(pj, PJ_NODES, pp, m,
                                    "a tombstone without a node id key");
                        return;
                }
                id = sbx_strndup(m->key, m->key_size);
                sbx_prows_node(&pj->rows, NULL, id, m->partition, m->offset);
                free(id);
        } else if (sbx_codec_decode(pj->codec, SBX_SCHEMA_NODE_STATUS, m->value,
                                    m->value_size, &status, why, sizeof(why))) {
                undecodable(pj, PJ_NODES, pp, m, why);
                return;
        } else {
                sbx_prows_node(&pj->rows, status, NULL, m->partition,
                               m->offset);
                json_decref(status);
        }
        atomic_fetch_add(&pj->st.nodes, 1);
        batched(pj, pp, m->offset);
}

void pj_consume(sbx_projector_t *pj, const sbx_pmsg_t *m)
{
        pj_part_t *pp = &pj->part[m->topic][m->partition];

        pp->seen = m->offset + 1;
        if (pp->stop >= 0 && m->offset >= pp->stop)
                return;
        if (m->topic == PJ_LIFECYCLE)
                lifecycle(pj, pp, m);
        else
                node(pj, pp, m);
}
