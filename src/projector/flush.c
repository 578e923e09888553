/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Batch statements. The merge of a REPLACE table is generated from its
 * column list (rows.c): of the staged rows of one key the one with the
 * highest ord wins, and replaces the table's row, or deletes it when it
 * is a tombstone. Usage rows are added up instead. Topic names in SQL
 * text come from the projector's own configuration, checked to be legal
 * Kafka names (no quote can occur in them).
 */
#include "projector/flush.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

struct sbx_pflush_s {
        char *ddl;                /* staging tables */
        char *copy[SBX_PT__CNT];  /* COPY ... FROM STDIN */
        char *merge[SBX_PT__CNT]; /* staged -> table; NULL: appended */
};

/* The usage of each claim in the batch, added to what is there. */
static const char usage_ddl[] =
    "CREATE TEMP TABLE IF NOT EXISTS stage_usage (ord bigint, claim_id text, "
    "wall_us bigint, cpu_us bigint, peak_memory_bytes bigint, oom boolean) "
    "ON COMMIT DELETE ROWS;";

static const char usage_merge[] =
    "INSERT INTO sandbox_allocation AS t (claim_id, execs, duration_us, "
    "peak_cpu, peak_memory_mb, oom) "
    "SELECT claim_id, count(*), sum(wall_us), "
    "max(CASE WHEN wall_us > 0 THEN cpu_us::float8 / wall_us ELSE 0 END), "
    "max((peak_memory_bytes + 1048575) / 1048576), bool_or(oom) "
    "FROM stage_usage GROUP BY claim_id "
    "ON CONFLICT (claim_id) DO UPDATE SET "
    "execs = t.execs + EXCLUDED.execs, "
    "duration_us = t.duration_us + EXCLUDED.duration_us, "
    "peak_cpu = GREATEST(t.peak_cpu, EXCLUDED.peak_cpu), "
    "peak_memory_mb = GREATEST(t.peak_memory_mb, EXCLUDED.peak_memory_mb), "
    "oom = t.oom OR EXCLUDED.oom;";

/* A sandbox's user is the user of the claim it was made for (or first
 * leased to), whichever of the two rows came first. */
static const char user_fill[] =
    "UPDATE sandbox_instance s SET user_id = c.user_id FROM claim c "
    "WHERE c.claim_id = s.claim_id AND s.user_id IS DISTINCT FROM c.user_id "
    "AND (s.sandbox_id IN (SELECT sandbox_id FROM stage_sandbox) "
    "OR c.claim_id IN (SELECT claim_id FROM stage_claim));";

/* A growing string. */
typedef struct str_s {
        char *s;
        size_t len, cap;
} str_t;

static void add(str_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void add(str_t *b, const char *fmt, ...)
{
        va_list ap;
        int n;
        va_start(ap, fmt);
        n = vsnprintf(NULL, 0, fmt, ap);
        va_end(ap);
        sbx_assert(n >= 0);
        if (b->len + (size_t)n + 1 > b->cap) {
                b->cap = (b->len + (size_t)n + 1) * 2;
                b->s   = sbx_realloc(b->s, b->cap);
        }
        va_start(ap, fmt);
        vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        b->len += (size_t)n;
}

/* Is column @p col (length @p n) one of the comma-separated @p list? */
static int listed(const char *list, const char *col, size_t n)
{
        const char *p = list;
        while (*p) {
                size_t m = strcspn(p, ",");
                if (m == n && !strncmp(p, col, n))
                        return 1;
                p += m;
                while (*p == ',' || *p == ' ')
                        p++;
        }
        return 0;
}

/* "a, b" -> "a, b" without the key columns, each prefixed by @p prefix. */
static void nonkey(str_t *b, const sbx_ptable_def_t *d, const char *prefix)
{
        const char *p = d->cols;
        int first     = 1;
        while (*p) {
                size_t n = strcspn(p, ",");
                if (!listed(d->key, p, n)) {
                        add(b, "%s%s%.*s", first ? "" : ", ", prefix, (int)n,
                            p);
                        first = 0;
                }
                p += n;
                while (*p == ',' || *p == ' ')
                        p++;
        }
}

static char *replace_sql(const sbx_ptable_def_t *d)
{
        str_t b = {0};
        if (d->tombstones)
                add(&b,
                    "DELETE FROM %s WHERE (%s) IN (SELECT %s FROM (SELECT "
                    "DISTINCT ON (%s) %s, gone FROM %s ORDER BY %s, ord "
                    "DESC) l WHERE l.gone);",
                    d->table, d->key, d->key, d->key, d->key, d->stage, d->key);
        add(&b,
            "INSERT INTO %s (%s) SELECT %s FROM (SELECT DISTINCT ON (%s) * "
            "FROM %s ORDER BY %s, ord DESC) l%s ON CONFLICT (%s) DO UPDATE "
            "SET (",
            d->table, d->cols, d->cols, d->key, d->stage, d->key,
            d->tombstones ? " WHERE NOT l.gone" : "", d->key);
        nonkey(&b, d, "");
        add(&b, ") = ROW(");
        nonkey(&b, d, "EXCLUDED.");
        add(&b, ");");
        return b.s;
}

sbx_pflush_t *sbx_pflush_new(void)
{
        sbx_pflush_t *f = sbx_calloc(1, sizeof(*f));
        str_t ddl       = {0};
        int t;

        for (t = 0; t < SBX_PT__CNT; t++) {
                const sbx_ptable_def_t *d = &sbx_ptables[t];
                str_t c                   = {0};
                switch (d->merge) {
                case SBX_PMERGE_APPEND:
                        add(&c, "COPY %s (%s) FROM STDIN", d->table, d->cols);
                        break;
                case SBX_PMERGE_REPLACE:
                        add(&ddl,
                            "CREATE TEMP TABLE IF NOT EXISTS %s ON COMMIT "
                            "DELETE ROWS AS SELECT NULL::bigint AS ord,%s %s "
                            "FROM %s WITH NO DATA;",
                            d->stage,
                            d->tombstones ? " NULL::boolean AS gone," : "",
                            d->cols, d->table);
                        add(&c, "COPY %s (ord,%s %s) FROM STDIN", d->stage,
                            d->tombstones ? " gone," : "", d->cols);
                        f->merge[t] = replace_sql(d);
                        break;
                case SBX_PMERGE_ADD:
                        add(&ddl, "%s", usage_ddl);
                        add(&c, "COPY %s (ord, %s) FROM STDIN", d->stage,
                            d->cols);
                        f->merge[t] = sbx_strdup(usage_merge);
                        break;
                }
                f->copy[t] = c.s;
        }
        f->ddl = ddl.s;
        return f;
}

void sbx_pflush_destroy(sbx_pflush_t *f)
{
        int t;
        if (!f)
                return;
        for (t = 0; t < SBX_PT__CNT; t++) {
                free(f->copy[t]);
                free(f->merge[t]);
        }
        free(f->ddl);
        free(f);
}

sbx_err_t sbx_pflush_prepare(const sbx_pflush_t *f,
                             sbx_pg_t *pg,
                             char *errstr,
                             size_t errstr_size)
{
        return sbx_pg_exec(pg, f->ddl, NULL, errstr, errstr_size);
}

/* BEGIN and the offsets' compare-and-swap, as one command. */
static char *cas_sql(const sbx_pmove_t *moves, size_t n)
{
        str_t b = {0};
        size_t i;
        add(&b,
            "BEGIN; UPDATE projector_offsets o SET next_offset = v.next, "
            "updated_at = now() FROM (VALUES ");
        for (i = 0; i < n; i++)
                add(&b,
                    "%s('%s', %d, %" PRId64 "::bigint, %" PRId64 "::bigint)",
                    i ? ", " : "", moves[i].topic, (int)moves[i].partition,
                    moves[i].from, moves[i].to);
        add(&b,
            ") v(topic, part, prev, next) WHERE o.topic = v.topic AND "
            "o.partition = v.part AND o.next_offset = v.prev");
        return b.s;
}

sbx_err_t sbx_pflush_commit(const sbx_pflush_t *f,
                            sbx_pg_t *pg,
                            const sbx_prows_t *rows,
                            const sbx_pmove_t *moves,
                            size_t nmoves,
                            char *errstr,
                            size_t errstr_size)
{
        char *sql   = cas_sql(moves, nmoves);
        str_t merge = {0};
        int64_t n   = 0;
        char why[512];
        sbx_err_t err;
        int t;

        sbx_assert(nmoves > 0);
        err = sbx_pg_exec(pg, sql, &n, errstr, errstr_size);
        free(sql);
        if (!err && n != (int64_t)nmoves)
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_CONFLICT,
                                 "%zu of %zu stored offsets moved under this "
                                 "projector (another projector, or a "
                                 "rebuild)",
                                 nmoves - (size_t)n, nmoves);
        for (t = 0; !err && t < SBX_PT__CNT; t++) {
                const sbx_copybuf_t *b = &rows->buf[t];
                if (!b->rows)
                        continue;
                err = sbx_pg_copy_in(pg, f->copy[t], b->buf, b->len, why,
                                     sizeof(why));
                if (err)
                        sbx_seterr(errstr, errstr_size, err, "%s: %s",
                                   sbx_ptables[t].table, why);
                if (f->merge[t])
                        add(&merge, "%s", f->merge[t]);
        }
        if (!err) {
                if (rows->buf[SBX_PT_CLAIM].rows ||
                    rows->buf[SBX_PT_SANDBOX].rows)
                        add(&merge, "%s", user_fill);
                add(&merge, "COMMIT");
                err = sbx_pg_exec(pg, merge.s, NULL, errstr, errstr_size);
        }
        if (err && sbx_pg_alive(pg))
                sbx_pg_exec(pg, "ROLLBACK", NULL, NULL, 0);
        free(merge.s);
        return err;
}
