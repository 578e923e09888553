/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the end-to-end tests of the executor share (on top of
 * itest_stack.h): an executor on a node of the test program's own, client
 * requests of tenant ITEST_TENANT, a claim acquired and bound on that
 * node, commands run in a leased sandbox up to their ExecFinished, an
 * exec's output chunks read back from sbx.exec-output.v1, release and
 * destroy, and a teardown that leaves no sbxd, container, state directory
 * or workspace of the test behind even when a test failed.
 *
 * The broker is shared, and so is what the planner learns from it:
 *
 * - Other executors (another engineer's stack, another test run) may be
 *   alive on it, and any scheduler places a claim on the node that scores
 *   best. The test's node therefore reports a very large CPU and memory
 *   capacity (a config file in SBX_CONFIG), which makes it the best node
 *   for every claim no other node has a warm sandbox for; its
 *   max_sandboxes stays small, so other runs' claims cannot pile up on it.
 *   A claim placed elsewhere all the same fails the test, naming the node.
 * - The planner sizes a claim by the telemetry of its workload signature
 *   (the last 256 execs of that signature on the broker, OOM kills
 *   included), and the guard picks the class by those numbers: a task
 *   like "print(1+1) in python" gets python-small, or compute-large after
 *   someone's memory bomb, and a requested_class is only a hint. A task
 *   that needs a browser can only get the one browser class of the
 *   tenant, browser-medium (4 CPU, 8 GiB), whatever the telemetry says, and
 *   no pool on the local stack keeps such sandboxes. The tests claim with
 *   ITEST_TASK, so their sandboxes are browser-medium and made here.
 */
#ifndef SBX_ITEST_EXEC_H
#define SBX_ITEST_EXEC_H

#include <sys/stat.h>

#include "itest_stack.h"
#include "runtime/fsutil.h"
#include "runtime/runtime.h"

#define ITEST_TENANT       "demo"
#define ITEST_TASK         "take a screenshot of the page in python"
#define ITEST_CLASS        "browser-medium"
#define ITEST_MAX_SESSIONS 32

/* The test program's node: its id, the runtime state root the executor
 * keeps there (<var>/run/<id>), a runtime handle on that root, the config
 * file that gives it its capacity, and the sessions whose workspaces the
 * teardown removes. */
static struct itest_node_s {
        itest_log_t log; /* the test's log */
        int log_open;
        char id[96];
        char root[1200];
        char conf[128];
        sbx_runtime_t *rt;
        char sessions[ITEST_MAX_SESSIONS][64];
        int nsessions;
} itest_node;

/* Call from main after itest_stack_init(): node "<prefix>-<pid>". */
static inline void itest_node_init(const char *prefix)
{
        snprintf(itest_node.id, sizeof(itest_node.id), "%s-%ld", prefix,
                 (long)getpid());
        snprintf(itest_node.conf, sizeof(itest_node.conf),
                 "/tmp/sbx-itest-%s.conf", itest_node.id);
}

/* Group setup: the stack's, then the node's paths and runtime handle. */
static inline int itest_exec_group_setup(void **state)
{
        char err[512];
        FILE *f;
        if (itest_group_setup(state))
                return -1;
        snprintf(itest_node.root, sizeof(itest_node.root), "%s/run/%s",
                 cfg->var_dir, itest_node.id);
        f = fopen(itest_node.conf, "w");
        if (!f)
                return -1;
        /* See the file comment: large, so that the schedulers place this
         * test's claims here rather than on other nodes of the broker. */
        fputs(
            "node.cpu = 10000\nnode.memory_mb = 100000000\n"
            "node.max_sandboxes = 8\n",
            f);
        fclose(f);
        itest_node.rt = sbx_runtime_new(itest_node.root, err, sizeof(err));
        if (!itest_node.rt) {
                fprintf(stderr, "itest: runtime on %s: %s\n", itest_node.root,
                        err);
                return -1;
        }
        return 0;
}

/* A new session of this test, remembered so its workspace is removed. */
static inline const char *itest_session(char *buf, size_t n)
{
        char uuid[37];
        sbx_uuid(uuid);
        snprintf(buf, n, "s-%.12s", uuid);
        if (itest_node.nsessions < ITEST_MAX_SESSIONS)
                snprintf(itest_node.sessions[itest_node.nsessions++],
                         sizeof(itest_node.sessions[0]), "%s", buf);
        return buf;
}

/* The host directory of a session's workspace (as the executor makes it). */
static inline char *itest_workspace(const char *session, char *buf, size_t n)
{
        snprintf(buf, n, "%s/workspaces/%s/%s", cfg->var_dir, ITEST_TENANT,
                 session);
        return buf;
}

/*
 * Starts sbxd with stage executor on node @p node as instance @p name,
 * with warm pools from file @p pools (NULL: none). Its config is the test
 * node's capacity file alone.
 */
static inline itest_proc_t itest_executor_on(const char *name,
                                             const char *pools,
                                             const char *node)
{
        itest_proc_t p;
        const char *keep[2] = {getenv("SBX_CONFIG"), getenv("SBX_POOLS")};
        char *was[2];
        was[0] = keep[0] ? sbx_strdup(keep[0]) : NULL;
        was[1] = keep[1] ? sbx_strdup(keep[1]) : NULL;
        setenv("SBX_CONFIG", itest_node.conf, 1);
        if (pools)
                setenv("SBX_POOLS", pools, 1);
        else
                unsetenv("SBX_POOLS");
        p = itest_sbxd(name, "executor", node);
        if (was[0])
                setenv("SBX_CONFIG", was[0], 1);
        else
                unsetenv("SBX_CONFIG");
        if (was[1])
                setenv("SBX_POOLS", was[1], 1);
        else
                unsetenv("SBX_POOLS");
        free(was[0]);
        free(was[1]);
        return p;
}

/* An executor on the test's node. */
static inline itest_proc_t itest_executor(const char *name, const char *pools)
{
        return itest_executor_on(name, pools, itest_node.id);
}

/* The control plane: every stage but the executor. */
static inline itest_proc_t itest_control_plane(const char *name)
{
        return itest_sbxd(name, "intake,planner,guard,scheduler,keeper", NULL);
}

/* Opens the test's log (itest_exec_teardown closes it, failed test or
 * not: it lives outside the test function's frame). */
static inline itest_log_t *itest_exec_log_open(void)
{
        itest_log_open(&itest_node.log, cfg, codec);
        itest_node.log_open = 1;
        return &itest_node.log;
}

/* ---- requests ------------------------------------------------------------ */

/* A client request of ITEST_TENANT (a new reference); its id in @p rid. */
static inline json_t *itest_command(const char *session,
                                    const char *name,
                                    json_t *body,
                                    char rid[64])
{
        char uuid[37];
        sbx_uuid(uuid);
        snprintf(rid, 64, "req-%s", uuid);
        return json_pack("{s:s, s:s, s:s, s:I, s:{s:o}}", "request_id", rid,
                         "tenant_id", ITEST_TENANT, "session_id", session,
                         "occurred_at", (json_int_t)sbx_now_us(), "command",
                         name, body);
}

/* Publishes command @p name with @p body (stolen) keyed by @p key; the
 * request id in @p rid (may be NULL). */
static inline void itest_send(const char *session,
                              const char *key,
                              const char *name,
                              json_t *body,
                              char *rid)
{
        char id[64];
        json_t *req = itest_command(session, name, body, id);
        itest_request(prod, codec, req, key);
        json_decref(req);
        if (rid)
                memcpy(rid, id, sizeof(id));
}

/* Fails the test if request @p rid was rejected. */
static inline void itest_not_rejected(itest_log_t *l, const char *rid)
{
        const sbx_event_t *rej = itest_find(l, rid, SBX_EV_REQUEST_REJECTED);
        if (rej)
                fail_msg("request %s rejected: %s", rid,
                         json_string_value(json_array_get(
                             json_object_get(rej->payload, "reasons"), 0)));
}

/* Waits until request @p rid is rejected; returns its first reason. */
static inline const char *itest_wait_rejected(itest_log_t *l,
                                              const char *rid,
                                              int secs)
{
        const sbx_event_t *ev;
        itest_wait_phase(l, rid, SBX_REQ_REJECTED, secs);
        ev = itest_find(l, rid, SBX_EV_REQUEST_REJECTED);
        assert_non_null(ev);
        return json_string_value(
            json_array_get(json_object_get(ev->payload, "reasons"), 0));
}

/* ---- claims ---------------------------------------------------------------
 */

typedef struct itest_claim_s {
        char id[64];
        char session[64];
        char sandbox[128]; /* the sandbox bound to the claim */
        char placed[128];  /* the sandbox id the scheduler named */
        int64_t lease;     /* the bound lease's version */
        int64_t sent_us;   /* sbx_mono_us(): request published */
        int64_t bound_us;  /* sbx_mono_us(): ClaimBound seen */
        int64_t place_us;  /* from Placed (or ReuseChosen) to ClaimBound, by
                              the events' occurred_at: the executor's part */
} itest_claim_t;

/*
 * Acquires a sandbox for a new claim of @p session for @p task (a Task,
 * stolen; NULL: ITEST_TASK), with the AcquireSandbox fields of @p extra
 * (stolen; NULL: none). Waits until the claim is bound on the test's
 * node; fails at once if it is refused, fails, or is placed on another
 * node.
 */
static inline void itest_claim_with(itest_log_t *l,
                                    itest_claim_t *c,
                                    const char *session,
                                    json_t *task,
                                    json_t *extra)
{
        char uuid[37];
        json_t *req;
        int64_t deadline;
        const sbx_state_t *s = NULL;

        memset(c, 0, sizeof(*c));
        sbx_uuid(uuid);
        snprintf(c->id, sizeof(c->id), "claim-%s", uuid);
        snprintf(c->session, sizeof(c->session), "%s", session);
        req = itest_acquire(c->id, ITEST_TENANT, session, ITEST_TASK);
        /* Sandboxes have no network yet, whatever a plan asks for; say
         * so, so that a warm pool sandbox (no network) fits the claim. */
        json_object_set_new(json_object_get(json_object_get(req, "command"),
                                            "sbx.AcquireSandbox"),
                            "network_profile", json_string("none"));
        if (task)
                json_object_set_new(
                    json_object_get(json_object_get(req, "command"),
                                    "sbx.AcquireSandbox"),
                    "task", task);
        if (extra) {
                json_object_update(
                    json_object_get(json_object_get(req, "command"),
                                    "sbx.AcquireSandbox"),
                    extra);
                json_decref(extra);
        }
        c->sent_us = sbx_mono_us();
        itest_request(prod, codec, req, c->id);
        json_decref(req);
        deadline = c->sent_us + 90 * 1000000LL;
        while (sbx_mono_us() < deadline) {
                itest_log_pump(l, 50);
                s = itest_state(l, c->id);
                if (!s)
                        continue;
                if (s->node_id && *s->node_id &&
                    strcmp(s->node_id, itest_node.id))
                        fail_msg(
                            "claim %s was placed on node %s, not on this "
                            "test's node %s: another executor is alive "
                            "on the broker and won the placement",
                            c->id, s->node_id, itest_node.id);
                if (s->phase == SBX_CLAIM_REJECTED ||
                    s->phase == SBX_CLAIM_FAILED ||
                    s->phase == SBX_CLAIM_CANCELLED)
                        fail_msg("claim %s is %s: %s", c->id,
                                 sbx_phase_name(SBX_AGG_CLAIM, s->phase),
                                 s->reason ? s->reason : "");
                if (s->phase == SBX_CLAIM_BOUND)
                        break;
        }
        if (!s || s->phase != SBX_CLAIM_BOUND)
                fail_msg(
                    "claim %s not bound within 90 s (it is %s)", c->id,
                    s ? sbx_phase_name(SBX_AGG_CLAIM, s->phase) : "unknown");
        c->bound_us = sbx_mono_us();
        snprintf(c->sandbox, sizeof(c->sandbox), "%s", s->sandbox_id);
        c->lease = s->lease_version;
        {
                const sbx_event_t *pl = itest_find(l, c->id, SBX_EV_PLACED);
                if (!pl)
                        pl = itest_find(l, c->id, SBX_EV_REUSE_CHOSEN);
                if (pl) {
                        snprintf(c->placed, sizeof(c->placed), "%s",
                                 sbx_event_str(pl, "sandbox_id"));
                        c->place_us = itest_find(l, c->id, SBX_EV_CLAIM_BOUND)
                                          ->occurred_at -
                                      pl->occurred_at;
                }
        }
}

static inline void itest_claim(itest_log_t *l,
                               itest_claim_t *c,
                               const char *session,
                               json_t *task)
{
        itest_claim_with(l, c, session, task, NULL);
}

/* Releases claim @p c; waits until its sandbox is IDLE and it RELEASED. */
static inline void itest_release(itest_log_t *l, const itest_claim_t *c)
{
        char rid[64];
        itest_send(
            c->session, c->sandbox, "sbx.Release",
            json_pack("{s:s, s:I, s:s}", "sandbox_id", c->sandbox,
                      "lease_version", (json_int_t)c->lease, "claim_id", c->id),
            rid);
        itest_wait_phase(l, c->sandbox, SBX_SB_IDLE, 60);
        itest_wait_phase(l, c->id, SBX_CLAIM_RELEASED, 60);
        itest_not_rejected(l, rid);
}

/* Destroys sandbox @p sbid (a sandbox of @p session); waits until it is
 * TERMINATED and its container gone from the node. */
static inline void itest_destroy(itest_log_t *l,
                                 const char *session,
                                 const char *sbid)
{
        sbx_sandbox_status_t st;
        int pid;
        itest_send(
            session, sbid, "sbx.Destroy",
            json_pack("{s:s, s:s}", "sandbox_id", sbid, "reason", "test over"),
            NULL);
        itest_wait_phase(l, sbid, SBX_SB_TERMINATED, 60);
        assert_int_equal(
            sbx_runtime_state(itest_node.rt, sbid, &st, &pid, NULL, 0),
            SBX_ERR_NOENT);
}

/* Asks for a snapshot of claim @p c's sandbox; returns its SnapshotTaken
 * (which must be a success). */
static inline const sbx_event_t *itest_snapshot(itest_log_t *l,
                                                const itest_claim_t *c)
{
        char rid[64];
        int before       = itest_count(l, c->sandbox, SBX_EV_SNAPSHOT_TAKEN, 1);
        int64_t deadline = sbx_mono_us() + 120 * 1000000LL;
        const sbx_event_t *ev = NULL;

        itest_send(c->session, c->sandbox, "sbx.Snapshot",
                   json_pack("{s:s, s:I}", "sandbox_id", c->sandbox,
                             "lease_version", (json_int_t)c->lease),
                   rid);
        while (sbx_mono_us() < deadline &&
               itest_count(l, c->sandbox, SBX_EV_SNAPSHOT_TAKEN, 1) == before) {
                itest_log_pump(l, 100);
                itest_not_rejected(l, rid);
        }
        for (size_t i = 0; i < l->n; i++)
                if (l->ev[i]->type == SBX_EV_SNAPSHOT_TAKEN &&
                    l->verdict[i] == SBX_FOLD_ACCEPTED &&
                    !strcmp(l->ev[i]->aggregate_id, c->sandbox))
                        ev = l->ev[i];
        if (!ev ||
            itest_count(l, c->sandbox, SBX_EV_SNAPSHOT_TAKEN, 1) == before)
                fail_msg("no SnapshotTaken of %s within 120 s", c->sandbox);
        if (sbx_event_str(ev, "error"))
                fail_msg("snapshot of %s failed: %s", c->sandbox,
                         sbx_event_str(ev, "error"));
        return ev;
}

/* ---- execs ----------------------------------------------------------------
 */

/* An exec request: argv (stolen), stdin (NULL: none), deadline. */
typedef struct itest_exec_s {
        const char *sandbox;
        int64_t lease;
        const char *session;
        const char *exec_id;
        json_t *argv;
        const void *in;
        size_t inlen;
        int64_t timeout_ms; /* 0: 30 s */
        char rid[64];       /* set by itest_exec_send */
} itest_exec_t;

static inline void itest_exec_send(itest_exec_t *x)
{
        json_t *body =
            json_pack("{s:s, s:I, s:s, s:o, s:I}", "sandbox_id", x->sandbox,
                      "lease_version", (json_int_t)x->lease, "exec_id",
                      x->exec_id, "argv", x->argv, "timeout_ms",
                      (json_int_t)(x->timeout_ms ? x->timeout_ms : 30000));
        x->argv = NULL;
        if (x->in)
                json_object_set_new(body, "stdin",
                                    sbx_codec_bytes(x->in, x->inlen));
        itest_send(x->session, x->sandbox, "sbx.Exec", body, x->rid);
}

/* The accepted ExecFinished of @p exec_id in @p sbid, or NULL. */
static inline const sbx_event_t *itest_exec_finished(itest_log_t *l,
                                                     const char *sbid,
                                                     const char *exec_id,
                                                     size_t *ret_index)
{
        size_t i;
        for (i = 0; i < l->n; i++)
                if (l->ev[i]->type == SBX_EV_EXEC_FINISHED &&
                    l->verdict[i] == SBX_FOLD_ACCEPTED &&
                    !strcmp(l->ev[i]->aggregate_id, sbid) &&
                    sbx_streq(sbx_event_str(l->ev[i], "exec_id"), exec_id)) {
                        if (ret_index)
                                *ret_index = i;
                        return l->ev[i];
                }
        return NULL;
}

/* Waits up to @p secs for the ExecFinished of @p x (sent). */
static inline const sbx_event_t *itest_exec_wait(itest_log_t *l,
                                                 const itest_exec_t *x,
                                                 int secs)
{
        int64_t deadline = sbx_mono_us() + secs * 1000000LL;
        const sbx_event_t *fin;
        while (sbx_mono_us() < deadline) {
                itest_log_pump(l, 50);
                if ((fin =
                         itest_exec_finished(l, x->sandbox, x->exec_id, NULL)))
                        return fin;
                itest_not_rejected(l, x->rid);
        }
        fail_msg("no ExecFinished for %s in %s within %d s", x->exec_id,
                 x->sandbox, secs);
        return NULL;
}

/* Runs @p argv (stolen) in claim @p c's sandbox; its ExecFinished. */
static inline const sbx_event_t *itest_run(itest_log_t *l,
                                           const itest_claim_t *c,
                                           const char *exec_id,
                                           json_t *argv)
{
        itest_exec_t x;
        memset(&x, 0, sizeof(x));
        x.sandbox = c->sandbox;
        x.lease   = c->lease;
        x.session = c->session;
        x.exec_id = exec_id;
        x.argv    = argv;
        itest_exec_send(&x);
        return itest_exec_wait(l, &x, 60);
}

/* A bytes field of an event's payload (codec JSON: ASCII stays ASCII). */
static inline const char *itest_bytes(const sbx_event_t *ev, const char *field)
{
        return json_string_value(json_object_get(ev->payload, field));
}

/* Runs `sh -c SCRIPT` under claim @p c, which must exit 0; its stdout
 * (static: the next call overwrites it). */
static inline const char *itest_sh(itest_log_t *l,
                                   itest_claim_t *c,
                                   const char *script)
{
        static char out[4096];
        char id[64], uuid[37];
        const sbx_event_t *fin;
        sbx_uuid(uuid);
        snprintf(id, sizeof(id), "x-%.12s", uuid);
        fin = itest_run(l, c, id, json_pack("[s,s,s]", "sh", "-c", script));
        if (sbx_event_int(fin, "exit_code", -1) != 0)
                fail_msg("`%s` in %s: exit %lld: %s", script, c->sandbox,
                         (long long)sbx_event_int(fin, "exit_code", -1),
                         itest_bytes(fin, "stderr"));
        snprintf(out, sizeof(out), "%s", itest_bytes(fin, "stdout"));
        return out;
}

static inline int64_t itest_usage(const sbx_event_t *fin, const char *field)
{
        return json_integer_value(
            json_object_get(json_object_get(fin->payload, "usage"), field));
}

static inline int itest_usage_bool(const sbx_event_t *fin, const char *field)
{
        return json_is_true(
            json_object_get(json_object_get(fin->payload, "usage"), field));
}

/* An exec's output as read from sbx.exec-output.v1. */
typedef struct itest_output_s {
        unsigned char *data[2]; /* stdout, stderr (owned) */
        size_t len[2];
        int chunks[2];
        int eof[2]; /* the last chunk of the stream had eof */
        int extra;  /* chunks after an eof, or out of order */
} itest_output_t;

/*
 * Reads the chunks of exec @p exec_id of sandbox @p sbid from the start
 * of sbx.exec-output.v1 until @p want of them (both streams) have come,
 * and one second more to catch any beyond that. Fails after 60 s.
 */
static inline void itest_read_output(const char *sbid,
                                     const char *exec_id,
                                     int want,
                                     itest_output_t *o)
{
        const char *topics[] = {SBX_TOPIC_OUTPUT, NULL};
        char err[512], group[256];
        sbx_kconsumer_t *k;
        int64_t deadline = sbx_mono_us() + 60 * 1000000LL, until = 0;

        memset(o, 0, sizeof(*o));
        snprintf(group, sizeof(group), "%s-out-%s", itest_prefix, exec_id);
        k = sbx_kconsumer_new(cfg, group, topics, err, sizeof(err));
        if (!k)
                fail_msg("consumer of %s: %s", SBX_TOPIC_OUTPUT, err);
        while (sbx_mono_us() < (until ? until : deadline)) {
                sbx_kmsg_t *m = NULL;
                const void *kb, *v;
                size_t ks, vs, n = 0;
                json_t *c        = NULL;
                unsigned char *d = NULL;
                int s;
                if (sbx_kconsumer_poll(k, 200, &m, err, sizeof(err)) || !m)
                        continue;
                kb = sbx_kmsg_key(m, &ks);
                v  = sbx_kmsg_value(m, &vs);
                if (ks != strlen(sbid) || memcmp(kb, sbid, ks) ||
                    sbx_codec_decode(codec, SBX_SCHEMA_EXEC_OUTPUT, v, vs, &c,
                                     err, sizeof(err))) {
                        sbx_kmsg_destroy(m);
                        continue;
                }
                sbx_kmsg_destroy(m);
                if (!sbx_streq(json_string_value(json_object_get(c, "exec_id")),
                               exec_id) ||
                    !sbx_streq(
                        json_string_value(json_object_get(c, "sandbox_id")),
                        sbid)) {
                        json_decref(c);
                        continue;
                }
                s = sbx_streq(json_string_value(json_object_get(c, "stream")),
                              "stderr");
                if (sbx_codec_bytes_value(json_object_get(c, "data"), &d, &n))
                        fail_msg("chunk of %s: data is not bytes", exec_id);
                if (o->eof[s] ||
                    json_integer_value(json_object_get(c, "seq")) !=
                        o->chunks[s] ||
                    json_integer_value(json_object_get(c, "offset")) !=
                        (json_int_t)o->len[s])
                        o->extra++;
                o->data[s] = sbx_realloc(o->data[s], o->len[s] + n + 1);
                memcpy(o->data[s] + o->len[s], d, n);
                o->len[s] += n;
                o->data[s][o->len[s]] = '\0';
                o->chunks[s]++;
                o->eof[s] = json_is_true(json_object_get(c, "eof"));
                free(d);
                json_decref(c);
                if (!until && o->chunks[0] + o->chunks[1] >= want)
                        until = sbx_mono_us() + 1000000;
        }
        sbx_kconsumer_destroy(k);
        if (o->chunks[0] + o->chunks[1] < want)
                fail_msg("%d of %d output chunks of %s came within 60 s",
                         o->chunks[0] + o->chunks[1], want, exec_id);
}

static inline void itest_output_free(itest_output_t *o)
{
        free(o->data[0]);
        free(o->data[1]);
}

/* ---- the node's runtime ----------------------------------------------------
 */

typedef struct itest_listed_s {
        char ids[64][128];
        sbx_sandbox_status_t status[64];
        int n;
} itest_listed_t;

static inline void itest_list_cb(const char *id,
                                 const char *runtime,
                                 sbx_sandbox_status_t status,
                                 int pid,
                                 void *opaque)
{
        itest_listed_t *l = opaque;
        (void)runtime;
        (void)pid;
        if (l->n < 64) {
                snprintf(l->ids[l->n], sizeof(l->ids[0]), "%s", id);
                l->status[l->n++] = status;
        }
}

/* What the runtimes have under the node's state root. */
static inline itest_listed_t itest_node_list(void)
{
        itest_listed_t l;
        char err[512];
        memset(&l, 0, sizeof(l));
        if (sbx_runtime_list(itest_node.rt, itest_list_cb, &l, err,
                             sizeof(err)))
                fail_msg("list %s: %s", itest_node.root, err);
        return l;
}

static inline int itest_listed(const itest_listed_t *l, const char *id)
{
        int i;
        for (i = 0; i < l->n; i++)
                if (!strcmp(l->ids[i], id))
                        return 1;
        return 0;
}

/*
 * Per-test teardown: stops every sbxd of the test, closes its log,
 * deletes any container
 * left under the node's state root (saying so: a passing test leaves
 * none) and removes the test's workspaces.
 */
static inline int itest_exec_teardown(void **state)
{
        itest_listed_t l;
        char err[512], ws[1400];
        int i;
        (void)state;
        itest_kill_all();
        if (itest_node.log_open) {
                itest_log_close(&itest_node.log);
                itest_node.log_open = 0;
        }
        memset(&l, 0, sizeof(l));
        if (itest_node.rt && !sbx_runtime_list(itest_node.rt, itest_list_cb, &l,
                                               err, sizeof(err)))
                for (i = 0; i < l.n; i++) {
                        fprintf(stderr,
                                "itest: teardown: deleting container %s left "
                                "on node %s\n",
                                l.ids[i], itest_node.id);
                        if (sbx_runtime_delete(itest_node.rt, l.ids[i], err,
                                               sizeof(err)))
                                fprintf(stderr, "itest: teardown: %s\n", err);
                }
        for (i = 0; i < itest_node.nsessions; i++)
                sbx_fs_rmtree(
                    itest_workspace(itest_node.sessions[i], ws, sizeof(ws)),
                    NULL, 0);
        itest_node.nsessions = 0;
        return 0;
}

/* Group teardown: the per-test one, then the node's state root goes. */
static inline int itest_exec_group_teardown(void **state)
{
        itest_exec_teardown(state);
        sbx_runtime_destroy(itest_node.rt);
        itest_node.rt = NULL;
        if (itest_node.root[0])
                sbx_fs_rmtree(itest_node.root, NULL, 0);
        if (itest_node.id[0]) { /* the node's snapshot store */
                char layers[1200];
                snprintf(layers, sizeof(layers), "%s/layers/%s", cfg->var_dir,
                         itest_node.id);
                sbx_fs_rmtree(layers, NULL, 0);
        }
        unlink(itest_node.conf);
        return itest_group_teardown(state);
}

/* main() of an executor test program: needs root and the sbxd path. */
static inline int itest_exec_main(int argc,
                                  char **argv,
                                  const char *node_prefix,
                                  const struct CMUnitTest *tests,
                                  size_t n)
{
        if (argc < 2) {
                fprintf(stderr, "usage: %s PATH/TO/sbxd\n", argv[0]);
                return 2;
        }
        if (geteuid() != 0) {
                fprintf(stderr, "%s: runs real sandboxes and needs root\n",
                        argv[0]);
                return 1;
        }
        itest_stack_init(argv[1]);
        itest_node_init(node_prefix);
        return _cmocka_run_group_tests(node_prefix, tests, n,
                                       itest_exec_group_setup,
                                       itest_exec_group_teardown);
}

#endif
