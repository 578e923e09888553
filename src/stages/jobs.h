/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The executor's slow work (provision, exec, sanitize, destroy, freeze,
 * thaw) runs on a few worker threads, so that one long exec never holds
 * up the node's other sandboxes. A sandbox has at most one job at a time:
 * it is busy from submit until the executor has reported the finished job
 * in the log and forgets it, so a level-triggered decide never starts the
 * same work twice. With zero threads a job runs inside submit (the hollow
 * runtime, whose work is instant).
 */
#ifndef SBX_JOBS_H
#define SBX_JOBS_H

#include <jansson.h>

#include "core/fold.h"
#include "stages/executor.h"

typedef enum sbx_job_kind_e {
        SBX_JOB_PROVISION,
        SBX_JOB_EXEC,
        SBX_JOB_SANITIZE,
        SBX_JOB_DESTROY,
        SBX_JOB_FREEZE,
        SBX_JOB_THAW,
        SBX_JOB_ATTACH,
        SBX_JOB_SNAPSHOT,
} sbx_job_kind_t;

typedef struct sbx_job_s {
        sbx_job_kind_t kind;
        sbx_state_t *s; /* the sandbox as it was at submit (a copy) */
        json_t *req;    /* exec: the ExecRequested payload */
        /* results */
        int rc;
        char err[512];
        char inst[256];
        int killed;
        int64_t us; /* how long the work took */
        sbx_exec_result_t r;
        json_t *snapshot; /* SnapshotTaken's payload */
        struct sbx_job_s *next;
} sbx_job_t;

typedef struct sbx_jobs_s sbx_jobs_t;
typedef void(sbx_job_fn_t)(void *ctx, sbx_job_t *job);

/** A job for sandbox @p s (copied) with @p req (borrowed, may be NULL). */
sbx_job_t *sbx_job_new(sbx_job_kind_t kind,
                       const sbx_state_t *s,
                       const json_t *req);
void sbx_job_free(sbx_job_t *job);

/** @p threads workers calling @p fn(@p ctx, job); 0: run in submit. */
sbx_jobs_t *sbx_jobs_new(int threads, sbx_job_fn_t *fn, void *ctx);
/** Stops the workers after their current job; queued jobs are dropped
 * (the executor redoes them from the log after a restart). */
void sbx_jobs_destroy(sbx_jobs_t *jobs);

/** Is a job of sandbox @p id queued, running or finished unreported? */
int sbx_jobs_busy(sbx_jobs_t *jobs, const char *id);
/** Queues @p job (stolen); its sandbox must not be busy. */
void sbx_jobs_submit(sbx_jobs_t *jobs, sbx_job_t *job);
/** A finished job (the caller owns it) or NULL. Its sandbox stays busy
 * until sbx_jobs_forget(). */
sbx_job_t *sbx_jobs_take(sbx_jobs_t *jobs);
/** The sandbox's job is reported: it may get another. */
void sbx_jobs_forget(sbx_jobs_t *jobs, const char *id);
/** Jobs queued or running (for the node status). */
int sbx_jobs_running(sbx_jobs_t *jobs);

#endif
