/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The executor's parts (executor.c decisions and job reports,
 * executor_pool.c warm pools and node status, executor_reconcile.c)
 * share this state. Everything runs on the processor's thread except the
 * jobs' work (stages/jobs.h).
 */
#ifndef SBX_EXECUTOR_INT_H
#define SBX_EXECUTOR_INT_H

#include "core/policy.h"
#include "stages/exec_output.h"
#include "stages/executor.h"
#include "stages/jobs.h"
#include "stages/pools.h"

typedef struct exec_s {
        const sbx_runtime_ops_t *ops;
        void *rt;
        sbx_capacity_t cap;
        sbx_jobs_t *jobs;
        sbx_outpub_t *pub;    /* NULL for the hollow runtime */
        sbx_policy_t *policy; /* for the pools' classes */
        sbx_pools_t *pools;   /* NULL: no warm pools */
        json_t *reqs;      /* sandbox id -> its latest ExecRequested payload */
        json_t *holder;    /* claim id -> the sandbox leased to it */
        json_t *made;      /* pool sandbox id -> pool, until read back */
        json_t *dead;      /* sandbox id -> why it died under an exec */
        json_t *placed;    /* claim id -> the sandbox the scheduler named */
        json_t *waiting;   /* that sandbox id -> the claim */
        json_t *frozen;    /* sandbox ids the freezer holds */
        json_t *attached;  /* sandbox ids whose workspace is attached */
        json_t *manifests; /* sandbox id -> manifest to append */
        json_t *venv;      /* sandbox id -> the claim whose execs use a venv */
        json_t *envs;      /* sandbox id -> the manifest it last reported */
        /* this node's snapshot id -> {at: taken at (µs), manifest: its
         * sandbox's then, which a fork of it starts with} */
        json_t *snapshots;
        int64_t snapshot_retention_us;
        sbx_job_t *later; /* reports that wait for an append in flight */
        char node[128];
        int64_t last_status, last_reconcile, beat;
        int reconciled; /* the first reconcile after catching up ran */
        /* commitments, recounted from the store */
        double cpu;
        int64_t mem;
        int n;
} exec_t;

/* executor.c */
int sbx_exec_mine(const exec_t *x, const sbx_state_t *s);
void sbx_exec_append(sbx_proc_t *p, sbx_event_t *ev);
sbx_event_t *sbx_exec_next(const sbx_state_t *s,
                           sbx_evtype_t t,
                           json_t *payload);
void sbx_exec_recount(exec_t *x, sbx_proc_t *p);
void sbx_exec_submit(exec_t *x,
                     sbx_proc_t *p,
                     sbx_job_kind_t kind,
                     const sbx_state_t *s,
                     const json_t *req);

/* executor_pool.c */
/** A ready sandbox of pool @p key on this node, not leased nor busy. */
const sbx_state_t *sbx_exec_pool_take(exec_t *x,
                                      sbx_proc_t *p,
                                      const char *key);
/* Once a second (and at shutdown): counts the node's commitments and
 * pools once, fills the pools when @p fill (after the replay), and
 * publishes the node's status. */
void sbx_exec_node_tick(exec_t *x,
                        sbx_proc_t *p,
                        int64_t now,
                        int fill,
                        int draining);

/* executor_reconcile.c */
void sbx_exec_reconcile(exec_t *x, sbx_proc_t *p);

/* executor_snapshots.c */
/** Remembers a SnapshotTaken (accepted) of this node. */
void sbx_exec_snapshot_taken(exec_t *x, const sbx_event_t *ev);
/** The manifest snapshot @p id of this node carries (NULL: none known). */
const json_t *sbx_exec_snapshot_manifest(const exec_t *x, const char *id);
/** The ids of the snapshots the log still needs (a new array), or NULL
 *  while one is being taken. */
json_t *sbx_exec_snapshots_to_keep(const exec_t *x,
                                   sbx_proc_t *p,
                                   int64_t now_us,
                                   int64_t retention_us);
/** Lets the runtime delete every other snapshot and its layers. */
void sbx_exec_collect(exec_t *x, sbx_proc_t *p, int64_t now_us);

#endif
