/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The projector's run loop. Invariants: a partition's stored offset only
 * moves by a committed batch that holds exactly the messages between its
 * old and new value; a batch that fails to commit is retried as it is
 * (no message is added to it meanwhile); a batch refused because its
 * offsets moved (another projector, a rebuild) is dropped and the
 * projector starts over from the stored offsets, replaying the log into
 * a fresh fold.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/topicspec.h"
#include "core/util.h"
#include "kafka/processor.h"
#include "projector/offsets.h"
#include "projector/projector_int.h"

#define REPORT_EVERY_US (60 * 1000000LL)
#define RETRY_US        (1000000LL)
#define IDLE_POLL_MS    100

void pj_log(sbx_projector_t *pj, const char *fmt, ...)
{
        char line[1024];
        va_list ap;
        if (!pj->opts.log)
                return;
        va_start(ap, fmt);
        vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        pj->opts.log(pj->opts.opaque, line);
}

sbx_projector_t *sbx_projector_new(const sbx_config_t *config,
                                   const sbx_codec_t *codec,
                                   const sbx_projector_opts_t *opts,
                                   char *errstr,
                                   size_t errstr_size)
{
        sbx_projector_t *pj = sbx_calloc(1, sizeof(*pj));
        int t, p;

        pj->config = config;
        pj->codec  = codec;
        if (opts)
                pj->opts = *opts;
        if (pj->opts.batch_max <= 0)
                pj->opts.batch_max = 1000;
        if (pj->opts.batch_ms <= 0)
                pj->opts.batch_ms = 100;
        pj->topics[PJ_LIFECYCLE] = pj->opts.lifecycle_topic
                                       ? pj->opts.lifecycle_topic
                                       : SBX_TOPIC_LIFECYCLE;
        pj->topics[PJ_NODES] =
            pj->opts.nodes_topic ? pj->opts.nodes_topic : SBX_TOPIC_NODES;
        for (t = 0; t < PJ_TOPICS; t++)
                if (!sbx_topic_name_valid(pj->topics[t])) {
                        sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                   "'%s' is not a topic name", pj->topics[t]);
                        goto fail;
                }
        pj->pg = sbx_pg_connect(config->pg, errstr, errstr_size);
        if (!pj->pg)
                goto fail;
        pj->flush = sbx_pflush_new();
        if (sbx_pflush_prepare(pj->flush, pj->pg, errstr, errstr_size)) {
                char why[512];
                sbx_fmt(why, sizeof(why), "%s", errstr ? errstr : "");
                sbx_seterr(errstr, errstr_size, SBX_ERR_PG,
                           "is the database migrated (sbx db migrate)? %s",
                           why);
                goto fail;
        }
        pj->reader =
            sbx_preader_new(config, pj->topics, PJ_TOPICS, errstr, errstr_size);
        if (!pj->reader)
                goto fail;
        for (t = 0; t < PJ_TOPICS; t++) {
                pj->npart[t] = sbx_preader_partitions(pj->reader, t);
                pj->part[t] =
                    sbx_calloc((size_t)pj->npart[t], sizeof(*pj->part[t]));
                for (p = 0; p < pj->npart[t]; p++)
                        pj->part[t][p].stop = -1;
        }
        return pj;
fail:
        sbx_projector_destroy(pj);
        return NULL;
}

void sbx_projector_destroy(sbx_projector_t *pj)
{
        int t;
        if (!pj)
                return;
        pj_store_clear(pj);
        sbx_prows_free(&pj->rows);
        sbx_preader_destroy(pj->reader);
        sbx_pflush_destroy(pj->flush);
        sbx_pg_close(pj->pg);
        for (t = 0; t < PJ_TOPICS; t++)
                free(pj->part[t]);
        free(pj);
}

sbx_err_t sbx_projector_reset(sbx_projector_t *pj,
                              char *errstr,
                              size_t errstr_size)
{
        pj->started = 0;
        if (!pj->pg)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_PG,
                                  "not connected to PostgreSQL");
        return sbx_poffsets_reset(pj->pg, errstr, errstr_size);
}

void sbx_projector_stop_at(sbx_projector_t *pj,
                           const char *topic,
                           int32_t partition,
                           int64_t offset)
{
        int t;
        for (t = 0; t < PJ_TOPICS; t++)
                if (!strcmp(topic, pj->topics[t]) && partition >= 0 &&
                    partition < pj->npart[t]) {
                        pj->part[t][partition].stop = offset;
                        pj->has_stops               = 1;
                }
}

sbx_err_t sbx_projector_stop_at_end(sbx_projector_t *pj,
                                    int64_t *ret_total,
                                    char *errstr,
                                    size_t errstr_size)
{
        int64_t total = 0, lo, hi;
        int t, p;
        for (t = 0; t < PJ_TOPICS; t++)
                for (p = 0; p < pj->npart[t]; p++) {
                        sbx_err_t err = sbx_preader_watermarks(
                            pj->reader, t, p, &lo, &hi, errstr, errstr_size);
                        if (err)
                                return err;
                        sbx_projector_stop_at(pj, pj->topics[t], p, hi);
                        total += hi - lo;
                }
        if (ret_total)
                *ret_total = total;
        return SBX_OK;
}

void sbx_projector_get_stats(sbx_projector_t *pj, sbx_projector_stats_t *ret)
{
        ret->written     = atomic_load(&pj->st.written);
        ret->replayed    = atomic_load(&pj->st.replayed);
        ret->nodes       = atomic_load(&pj->st.nodes);
        ret->undecodable = atomic_load(&pj->st.undecodable);
        ret->batches     = atomic_load(&pj->st.batches);
        ret->pg_us       = atomic_load(&pj->st.pg_us);
        ret->write_us    = atomic_load(&pj->st.write_us);
        ret->conflicts   = atomic_load(&pj->st.conflicts);
        ret->pg_errors   = atomic_load(&pj->st.pg_errors);
        ret->caught_up   = atomic_load(&pj->st.caught_up);
}

double sbx_projector_rate(const sbx_projector_stats_t *st)
{
        return st->write_us > 0
                   ? (double)st->written * 1e6 / (double)st->write_us
                   : 0;
}

/* (Re)starts from the stored offsets: a fresh fold, the lifecycle read
 * from the beginning, the nodes from where they were stored. */
static sbx_err_t start(sbx_projector_t *pj, char *errstr, size_t errstr_size)
{
        int64_t *from[PJ_TOPICS], *stored, lo, hi;
        int64_t stored_total = 0;
        sbx_err_t err        = SBX_OK;
        int t, p;

        if (!pj->pg || !sbx_pg_alive(pj->pg)) {
                sbx_pg_close(pj->pg);
                pj->pg = sbx_pg_connect(pj->config->pg, errstr, errstr_size);
                if (pj->pg && sbx_pflush_prepare(pj->flush, pj->pg, errstr,
                                                 errstr_size)) {
                        sbx_pg_close(pj->pg);
                        pj->pg = NULL;
                }
                if (!pj->pg)
                        return SBX_ERR_PG;
        }
        pj_store_clear(pj);
        pj->store = sbx_aggstore_new();
        sbx_prows_reset(&pj->rows);
        pj->batch_msgs = 0;
        pj->retry_at   = 0;
        for (t = 0; t < PJ_TOPICS; t++) {
                from[t] = sbx_calloc((size_t)pj->npart[t], sizeof(int64_t));
                stored  = sbx_calloc((size_t)pj->npart[t], sizeof(int64_t));
                if (!err)
                        err = sbx_poffsets_load(pj->pg, pj->topics[t],
                                                pj->npart[t], stored, errstr,
                                                errstr_size);
                for (p = 0; !err && p < pj->npart[t]; p++) {
                        pj_part_t *pp = &pj->part[t][p];
                        err = sbx_preader_watermarks(pj->reader, t, p, &lo, &hi,
                                                     errstr, errstr_size);
                        pp->stored = pp->next = stored[p];
                        pp->seen              = 0;
                        pp->low               = lo;
                        pp->target            = hi;
                        from[t][p] = t == PJ_LIFECYCLE ? SBX_PREADER_BEGINNING
                                                       : stored[p];
                        if (t == PJ_LIFECYCLE)
                                stored_total +=
                                    stored[p] > lo ? stored[p] - lo : 0;
                }
                free(stored);
        }
        if (!err)
                err = sbx_preader_assign(pj->reader, from, errstr, errstr_size);
        for (t = 0; t < PJ_TOPICS; t++)
                free(from[t]);
        if (err)
                return err;
        pj->started = 1;
        pj->t_start = sbx_mono_us();
        pj_log(pj,
               "projecting %s (%d partitions, %lld messages already "
               "projected) and %s (%d partitions)",
               pj->topics[PJ_LIFECYCLE], pj->npart[PJ_LIFECYCLE],
               (long long)stored_total, pj->topics[PJ_NODES],
               pj->npart[PJ_NODES]);
        return SBX_OK;
}

sbx_err_t pj_commit(sbx_projector_t *pj, char *errstr, size_t errstr_size)
{
        sbx_pmove_t *moves;
        size_t n      = 0;
        int64_t t0    = sbx_mono_us(), t1;
        sbx_err_t err = SBX_OK;
        int t, p;

        moves =
            sbx_calloc((size_t)(pj->npart[0] + pj->npart[1]), sizeof(*moves));
        for (t = 0; t < PJ_TOPICS; t++)
                for (p = 0; p < pj->npart[t]; p++) {
                        pj_part_t *pp = &pj->part[t][p];
                        if (pp->next > pp->stored)
                                moves[n++] = (sbx_pmove_t){
                                    pj->topics[t], p, pp->stored, pp->next};
                }
        if (n)
                err = sbx_pflush_commit(pj->flush, pj->pg, &pj->rows, moves, n,
                                        errstr, errstr_size);
        free(moves);
        if (err)
                return err;
        for (t = 0; t < PJ_TOPICS; t++)
                for (p = 0; p < pj->npart[t]; p++)
                        if (pj->part[t][p].next > pj->part[t][p].stored)
                                pj->part[t][p].stored = pj->part[t][p].next;
        t1 = sbx_mono_us();
        sbx_prows_reset(&pj->rows);
        pj->batch_msgs = 0;
        atomic_fetch_add(&pj->st.batches, 1);
        atomic_fetch_add(&pj->st.pg_us, t1 - t0);
        atomic_store(&pj->st.write_us, t1 - pj->t_first_write);
        if (pj->opts.progress) {
                sbx_projector_stats_t st;
                sbx_projector_get_stats(pj, &st);
                pj->opts.progress(pj->opts.opaque, &st);
        }
        return SBX_OK;
}

/*
 * Is partition @p pp of topic @p t done up to @p target: written, and for
 * the lifecycle also folded (a restarted projector is not caught up while
 * it replays)? With the batch empty, a partition whose reading passed
 * the target is, whatever gaps (a compacted topic) it had.
 */
static int reached(const sbx_projector_t *pj,
                   int t,
                   const pj_part_t *pp,
                   int64_t target)
{
        if (target <= pp->low)
                return 1;
        if (t == PJ_LIFECYCLE && pp->seen < target)
                return 0;
        return pp->stored >= target || (!pj->batch_msgs && pp->seen >= target);
}

/* Has every partition with a stop point been read up to it? Then the
 * batch is the last one: no reason to wait for more. */
static int stops_seen(const sbx_projector_t *pj)
{
        int t, p;
        if (!pj->has_stops)
                return 0;
        for (t = 0; t < PJ_TOPICS; t++)
                for (p = 0; p < pj->npart[t]; p++) {
                        const pj_part_t *pp = &pj->part[t][p];
                        if (pp->stop > pp->low && pp->seen < pp->stop)
                                return 0;
                }
        return 1;
}

/* Every partition at its stop point (or, @p targets, its start target)? */
static int all_reached(const sbx_projector_t *pj, int targets)
{
        int t, p;
        for (t = 0; t < PJ_TOPICS; t++)
                for (p = 0; p < pj->npart[t]; p++) {
                        const pj_part_t *pp = &pj->part[t][p];
                        int64_t goal        = targets ? pp->target : pp->stop;
                        if (!targets && goal < 0)
                                continue;
                        if (targets && pp->stop >= 0 && pp->stop < goal)
                                goal = pp->stop;
                        if (!reached(pj, t, pp, goal))
                                return 0;
                }
        return 1;
}

static void report(sbx_projector_t *pj, int64_t now, const char *what)
{
        sbx_projector_stats_t st;
        sbx_projector_get_stats(pj, &st);
        pj_log(
            pj,
            "%s in %.2f s: %lld events written (%lld replayed, projected "
            "before), %lld node statuses, %lld undecodable, %lld "
            "batches (%.1f ms each); %.0f events/s into PostgreSQL",
            what, (double)(now - pj->t_start) / 1e6, (long long)st.written,
            (long long)st.replayed, (long long)st.nodes,
            (long long)st.undecodable, (long long)st.batches,
            st.batches ? (double)st.pg_us / 1000.0 / (double)st.batches : 0.0,
            sbx_projector_rate(&st));
        pj->t_last_report = now;
        pj->reported      = st.written + st.nodes;
}

/* What was written since the last report, if anything. */
static void report_since(sbx_projector_t *pj, int64_t now)
{
        sbx_projector_stats_t st;
        int64_t n;
        sbx_projector_get_stats(pj, &st);
        n = st.written + st.nodes - pj->reported;
        if (n > 0)
                pj_log(pj,
                       "%lld events and node statuses written in the last "
                       "%.0f s",
                       (long long)n, (double)(now - pj->t_last_report) / 1e6);
        pj->t_last_report = now;
        pj->reported      = st.written + st.nodes;
}

/* Commits the open batch, or learns when to try again. */
static void commit_or_retry(sbx_projector_t *pj)
{
        char why[1024];
        sbx_err_t err = pj_commit(pj, why, sizeof(why));

        if (err == SBX_ERR_CONFLICT) {
                atomic_fetch_add(&pj->st.conflicts, 1);
                pj_log(pj, "starting over from the stored offsets: %s", why);
                pj->started = 0;
        } else if (err) {
                atomic_fetch_add(&pj->st.pg_errors, 1);
                pj_log(pj, "batch of %lld messages not written, retrying: %s",
                       (long long)pj->batch_msgs, why);
                pj->retry_at = sbx_mono_us() + RETRY_US;
        } else
                pj->retry_at = 0;
}

/* One turn of the loop: read a message (or wait), commit when due. */
static void turn(sbx_projector_t *pj)
{
        int64_t now = sbx_mono_us(), due;
        int timeout = IDLE_POLL_MS, drained = 0;
        sbx_pmsg_t m;
        char why[512];
        sbx_err_t err;

        if (pj->batch_msgs) {
                due     = pj->batch_since + pj->opts.batch_ms * 1000LL;
                timeout = due > now ? (int)((due - now) / 1000) : 0;
        }
        err = sbx_preader_next(pj->reader, timeout, &m, why, sizeof(why));
        if (!err) {
                pj_consume(pj, &m);
                sbx_preader_release(&m);
        } else if (err == SBX_ERR_TIMEOUT)
                drained = 1;
        else
                pj_log(pj, "%s", why);
        now = sbx_mono_us();
        if (pj->batch_msgs &&
            (drained || pj->batch_msgs >= pj->opts.batch_max ||
             now >= pj->batch_since + pj->opts.batch_ms * 1000LL ||
             stops_seen(pj)))
                commit_or_retry(pj);
        if (!drained || pj->batch_msgs)
                return;
        if (!atomic_load(&pj->st.caught_up) && all_reached(pj, 1)) {
                atomic_store(&pj->st.caught_up, 1);
                report(pj, now, "caught up");
        }
        if (pj->t_last_report && now - pj->t_last_report >= REPORT_EVERY_US)
                report_since(pj, now);
}

int sbx_projector_run(sbx_projector_t *pj, volatile sig_atomic_t *stop)
{
        char why[1024];

        while (!*stop) {
                if (!pj->started) {
                        if (start(pj, why, sizeof(why))) {
                                pj_log(pj, "cannot start, retrying: %s", why);
                                usleep(RETRY_US);
                        }
                        continue;
                }
                if (pj->retry_at) {
                        if (sbx_mono_us() < pj->retry_at) {
                                usleep(20000);
                                continue;
                        }
                        if (!sbx_pg_alive(pj->pg))
                                pj->started = 0; /* reconnect, start over */
                        else
                                commit_or_retry(pj);
                        continue;
                }
                turn(pj);
                if (pj->has_stops && !pj->batch_msgs && all_reached(pj, 0))
                        return 1;
        }
        if (pj->started && pj->batch_msgs && !pj->retry_at)
                commit_or_retry(pj);
        return 0;
}
