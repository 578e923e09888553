/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Worker threads of the executor: one mutex over a FIFO queue, a list of
 * finished jobs and the set of busy sandbox ids.
 */
#include "stages/jobs.h"

#include <pthread.h>
#include <stdlib.h>

#include "core/util.h"

struct sbx_jobs_s {
        pthread_mutex_t mu;
        pthread_cond_t cv;
        sbx_job_t *head, *tail; /* queued */
        sbx_job_t *done;        /* finished, newest first */
        json_t *busy;           /* sandbox id -> true */
        int running, stop, nthreads;
        pthread_t *threads;
        sbx_job_fn_t *fn;
        void *ctx;
};

sbx_job_t *sbx_job_new(sbx_job_kind_t kind,
                       const sbx_state_t *s,
                       const json_t *req)
{
        sbx_job_t *j = sbx_calloc(1, sizeof(*j));
        json_t *copy = sbx_state_to_json(s);
        j->kind      = kind;
        j->s         = sbx_state_from_json(copy);
        sbx_assert(j->s);
        json_decref(copy);
        j->req = req ? json_incref((json_t *)req) : NULL;
        return j;
}

void sbx_job_free(sbx_job_t *j)
{
        if (!j)
                return;
        sbx_state_destroy(j->s);
        json_decref(j->req);
        json_decref(j->r.stdout_bytes);
        json_decref(j->r.stderr_bytes);
        json_decref(j->r.usage);
        json_decref(j->r.manifest);
        json_decref(j->snapshot);
        free(j);
}

static void finish(sbx_jobs_t *w, sbx_job_t *j)
{
        j->next = w->done;
        w->done = j;
}

static void *worker(void *arg)
{
        sbx_jobs_t *w = arg;
        pthread_mutex_lock(&w->mu);
        for (;;) {
                sbx_job_t *j;
                while (!w->stop && !w->head)
                        pthread_cond_wait(&w->cv, &w->mu);
                if (w->stop)
                        break;
                j       = w->head;
                w->head = j->next;
                if (!w->head)
                        w->tail = NULL;
                w->running++;
                pthread_mutex_unlock(&w->mu);
                w->fn(w->ctx, j);
                pthread_mutex_lock(&w->mu);
                w->running--;
                finish(w, j);
        }
        pthread_mutex_unlock(&w->mu);
        return NULL;
}

sbx_jobs_t *sbx_jobs_new(int threads, sbx_job_fn_t *fn, void *ctx)
{
        sbx_jobs_t *w = sbx_calloc(1, sizeof(*w));
        int i;
        pthread_mutex_init(&w->mu, NULL);
        pthread_cond_init(&w->cv, NULL);
        w->busy = json_object();
        w->fn   = fn;
        w->ctx  = ctx;
        w->threads =
            sbx_calloc(threads > 0 ? (size_t)threads : 1, sizeof(*w->threads));
        for (i = 0; i < threads; i++) {
                if (pthread_create(&w->threads[i], NULL, worker, w))
                        break;
                w->nthreads++;
        }
        return w;
}

static void free_list(sbx_job_t *j)
{
        while (j) {
                sbx_job_t *next = j->next;
                sbx_job_free(j);
                j = next;
        }
}

void sbx_jobs_destroy(sbx_jobs_t *w)
{
        int i;
        if (!w)
                return;
        pthread_mutex_lock(&w->mu);
        w->stop = 1;
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
        for (i = 0; i < w->nthreads; i++)
                pthread_join(w->threads[i], NULL);
        free_list(w->head);
        free_list(w->done);
        json_decref(w->busy);
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
        free(w->threads);
        free(w);
}

int sbx_jobs_busy(sbx_jobs_t *w, const char *id)
{
        int busy;
        pthread_mutex_lock(&w->mu);
        busy = json_object_get(w->busy, id) != NULL;
        pthread_mutex_unlock(&w->mu);
        return busy;
}

void sbx_jobs_submit(sbx_jobs_t *w, sbx_job_t *j)
{
        pthread_mutex_lock(&w->mu);
        sbx_assert(!json_object_get(w->busy, j->s->id));
        json_object_set_new(w->busy, j->s->id, json_true());
        if (!w->nthreads) {
                pthread_mutex_unlock(&w->mu);
                w->fn(w->ctx, j);
                pthread_mutex_lock(&w->mu);
                finish(w, j);
        } else {
                j->next = NULL;
                if (w->tail)
                        w->tail->next = j;
                else
                        w->head = j;
                w->tail = j;
                pthread_cond_signal(&w->cv);
        }
        pthread_mutex_unlock(&w->mu);
}

sbx_job_t *sbx_jobs_take(sbx_jobs_t *w)
{
        sbx_job_t *j;
        pthread_mutex_lock(&w->mu);
        j = w->done;
        if (j) {
                w->done = j->next;
                j->next = NULL;
        }
        pthread_mutex_unlock(&w->mu);
        return j;
}

void sbx_jobs_forget(sbx_jobs_t *w, const char *id)
{
        pthread_mutex_lock(&w->mu);
        json_object_del(w->busy, id);
        pthread_mutex_unlock(&w->mu);
}

int sbx_jobs_running(sbx_jobs_t *w)
{
        int n = 0;
        sbx_job_t *j;
        pthread_mutex_lock(&w->mu);
        for (j = w->head; j; j = j->next)
                n++;
        n += w->running;
        pthread_mutex_unlock(&w->mu);
        return n;
}
