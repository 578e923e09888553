/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Offsets and reset. A partition whose row is missing starts from the
 * beginning of the log: that is what a fresh database and a reset mean.
 * The reset's table list comes from rows.c, so a table added there is
 * emptied too.
 */
#include "projector/offsets.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "projector/rows.h"

typedef struct load_s {
        int64_t *next;
        int npart;
        int bad;
} load_t;

static void on_row(void *opaque, int ncols, const char *const *v)
{
        load_t *l = opaque;
        int p     = v[0] ? atoi(v[0]) : -1;
        (void)ncols;
        if (p < 0 || p >= l->npart || !v[1])
                l->bad = 1;
        else
                l->next[p] = strtoll(v[1], NULL, 10);
}

sbx_err_t sbx_poffsets_load(sbx_pg_t *pg,
                            const char *topic,
                            int npart,
                            int64_t *ret_next,
                            char *errstr,
                            size_t errstr_size)
{
        const char *params[2];
        char n[16];
        load_t l = {ret_next, npart, 0};
        sbx_err_t err;

        params[0] = topic;
        params[1] = sbx_fmt(n, sizeof(n), "%d", npart);
        err       = sbx_pg_query(
                  pg,
                  "INSERT INTO projector_offsets (topic, partition, next_offset) "
                        "SELECT $1, p, 0 FROM generate_series(0, $2::int - 1) p "
                        "ON CONFLICT DO NOTHING",
                  2, params, on_row, &l, errstr, errstr_size);
        if (!err)
                err = sbx_pg_query(pg,
                                   "SELECT partition, next_offset FROM "
                                   "projector_offsets WHERE topic = $1 AND "
                                   "partition < $2::int",
                                   2, params, on_row, &l, errstr, errstr_size);
        if (!err && l.bad)
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                 "projector_offsets of %s hold a partition "
                                 "or offset that is not one",
                                 topic);
        return err;
}

sbx_err_t sbx_poffsets_reset(sbx_pg_t *pg, char *errstr, size_t errstr_size)
{
        char sql[1024] = "TRUNCATE projector_offsets";
        size_t len     = strlen(sql);
        int t, u;

        for (t = 0; t < SBX_PT__CNT; t++) {
                for (u = 0; u < t; u++)
                        if (!strcmp(sbx_ptables[u].table, sbx_ptables[t].table))
                                break;
                if (u == t)
                        len += (size_t)snprintf(sql + len, sizeof(sql) - len,
                                                ", %s", sbx_ptables[t].table);
        }
        sbx_assert(len < sizeof(sql));
        return sbx_pg_exec(pg, sql, NULL, errstr, errstr_size);
}
