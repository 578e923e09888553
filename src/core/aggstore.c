/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An open-addressing hash table (FNV-1a, linear probing, load <= 1/2) of
 * aggregate states. Entries are never removed: a terminated aggregate
 * still answers "stale" to a late event, which the fold needs.
 */
#include "core/aggstore.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

struct sbx_aggstore_s {
        sbx_aggentry_t **slots;
        size_t cap, n;
};

static uint64_t hash(const char *s)
{
        return sbx_fnv1a64(SBX_FNV1A64_INIT, s);
}

sbx_aggstore_t *sbx_aggstore_new(void)
{
        sbx_aggstore_t *s = sbx_calloc(1, sizeof(*s));
        s->cap = 1024;
        s->slots = sbx_calloc(s->cap, sizeof(*s->slots));
        return s;
}

void sbx_aggstore_destroy(sbx_aggstore_t *s)
{
        size_t i;
        if (!s)
                return;
        for (i = 0; i < s->cap; i++)
                if (s->slots[i]) {
                        sbx_state_destroy(s->slots[i]->state);
                        free(s->slots[i]);
                }
        free(s->slots);
        free(s);
}

static size_t find_slot(sbx_aggentry_t **slots, size_t cap, const char *id)
{
        size_t i = (size_t)(hash(id) & (cap - 1));
        while (slots[i] && strcmp(slots[i]->state->id, id))
                i = (i + 1) & (cap - 1);
        return i;
}

sbx_aggentry_t *sbx_aggstore_get(sbx_aggstore_t *s, const char *id)
{
        return s->slots[find_slot(s->slots, s->cap, id)];
}

static void grow(sbx_aggstore_t *s)
{
        size_t ncap = s->cap * 2, i;
        sbx_aggentry_t **ns = sbx_calloc(ncap, sizeof(*ns));
        for (i = 0; i < s->cap; i++)
                if (s->slots[i])
                        ns[find_slot(ns, ncap, s->slots[i]->state->id)] =
                            s->slots[i];
        free(s->slots);
        s->slots = ns;
        s->cap = ncap;
}

sbx_aggentry_t *sbx_aggstore_upsert(sbx_aggstore_t *s, sbx_aggregate_t kind,
                                    const char *id, int32_t partition)
{
        size_t i = find_slot(s->slots, s->cap, id);
        sbx_aggentry_t *e;
        if (s->slots[i])
                return s->slots[i];
        if ((s->n + 1) * 2 > s->cap) {
                grow(s);
                i = find_slot(s->slots, s->cap, id);
        }
        e = sbx_calloc(1, sizeof(*e));
        e->state = sbx_state_new(kind, id);
        e->partition = partition;
        s->slots[i] = e;
        s->n++;
        return e;
}

size_t sbx_aggstore_count(const sbx_aggstore_t *s)
{
        return s->n;
}

void sbx_aggstore_foreach(sbx_aggstore_t *s,
                          void (*cb)(sbx_aggentry_t *e, void *opaque),
                          void *opaque)
{
        size_t i;
        for (i = 0; i < s->cap; i++)
                if (s->slots[i])
                        cb(s->slots[i], opaque);
}

sbx_verdict_t sbx_aggstore_fold(sbx_aggstore_t *s, const sbx_event_t *ev,
                                int32_t partition, sbx_aggentry_t **ret_entry)
{
        sbx_aggentry_t *e =
            sbx_aggstore_upsert(s, ev->aggregate, ev->aggregate_id, partition);
        sbx_verdict_t v;

        /* An aggregate whose first event is of another kind: keep its
         * kind as the first accepted event set it. */
        if (e->state->seq == 0)
                e->state->aggregate = ev->aggregate;
        v = sbx_fold(e->state, ev);
        e->partition = partition;
        if (e->pending_seq && e->state->seq >= e->pending_seq)
                e->pending_seq = 0;
        if (ret_entry)
                *ret_entry = e;
        return v;
}
