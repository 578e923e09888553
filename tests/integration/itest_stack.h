/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers to drive sbx end to end in integration tests: start and kill
 * sbxd processes (each test run in consumer groups of its own, so other
 * sbxd processes on the machine do not interfere), publish client
 * requests, and follow the log until a condition holds.
 */
#ifndef SBX_ITEST_STACK_H
#define SBX_ITEST_STACK_H

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codec/codec.h"
#include "core/aggstore.h"
#include "core/util.h"
#include "itest.h"
#include "kafka/kclient.h"
#include "kafka/logreader.h"
#include "kafka/processor.h"

static char itest_sbxd_path[1024];
static char itest_prefix[128];
static pid_t itest_children[32];

/* Kills every sbxd this test started and has not stopped (a failed
 * assertion jumps past the test's own clean-up). */
static inline void itest_kill_all(void)
{
        size_t i;
        int64_t deadline = sbx_mono_us() + 10 * 1000000LL;
        /* SIGTERM first: a node then says it is draining. */
        for (i = 0; i < sizeof(itest_children) / sizeof(itest_children[0]); i++)
                if (itest_children[i] > 0)
                        kill(itest_children[i], SIGTERM);
        for (i = 0; i < sizeof(itest_children) / sizeof(itest_children[0]); i++)
                if (itest_children[i] > 0) {
                        int status;
                        while (waitpid(itest_children[i], &status, WNOHANG) ==
                               0) {
                                if (sbx_mono_us() > deadline)
                                        kill(itest_children[i], SIGKILL);
                                usleep(20000);
                        }
                        itest_children[i] = 0;
                }
}

/* Call once: the sbxd binary and this run's consumer group prefix. */
static inline void itest_stack_init(const char *sbxd)
{
        snprintf(itest_sbxd_path, sizeof(itest_sbxd_path), "%s", sbxd);
        atexit(itest_kill_all);
        snprintf(itest_prefix, sizeof(itest_prefix), "sbx-itest-%ld-%lld",
                 (long)getpid(), (long long)(sbx_now_us() % 100000000));
}

typedef struct itest_proc_s {
        pid_t pid;
        char name[64];
} itest_proc_t;

/*
 * Starts `sbxd --no-setup --stage STAGES [--node-id NODE]` as instance
 * NAME and waits until it prints "sbxd ready" (fails the test after 60 s).
 */
static int itest_metrics_port; /* the next itest_sbxd serves metrics here */

static inline itest_proc_t itest_sbxd(const char *name,
                                      const char *stages,
                                      const char *node)
{
        itest_proc_t p;
        int fds[2];
        char line[512];
        size_t n         = 0;
        int64_t deadline = sbx_mono_us() + 60 * 1000000LL;

        memset(&p, 0, sizeof(p));
        snprintf(p.name, sizeof(p.name), "%s", name);
        if (pipe(fds))
                abort();
        p.pid = fork();
        if (p.pid == 0) {
                char inst[256];
                /* A test that dies without its clean-up (a sanitizer's
                 * abort, a timeout) takes its sbxd processes with it. */
                prctl(PR_SET_PDEATHSIG, SIGTERM);
                snprintf(inst, sizeof(inst), "%s-%s", itest_prefix, name);
                dup2(fds[1], 1);
                close(fds[0]);
                setenv("SBX_INSTANCE", inst, 1);
                setenv("SBX_GROUP_PREFIX", itest_prefix, 1);
                {
                        char port[16];
                        snprintf(port, sizeof(port), "%d", itest_metrics_port);
                        setenv("SBX_METRICS_PORT", port, 1);
                }
                if (node)
                        execl(itest_sbxd_path, "sbxd", "--no-setup", "--stage",
                              stages, "--node-id", node, (char *)NULL);
                else
                        execl(itest_sbxd_path, "sbxd", "--no-setup", "--stage",
                              stages, (char *)NULL);
                _exit(127);
        }
        close(fds[1]);
        {
                size_t i;
                for (i = 0; i < sizeof(itest_children) / sizeof(pid_t); i++)
                        if (itest_children[i] <= 0) {
                                itest_children[i] = p.pid;
                                break;
                        }
        }
        fcntl(fds[0], F_SETFL, O_NONBLOCK);
        while (sbx_mono_us() < deadline) {
                char c;
                ssize_t r = read(fds[0], &c, 1);
                if (r == 1) {
                        if (c == '\n') {
                                line[n] = '\0';
                                if (strstr(line, "sbxd ready"))
                                        break;
                                n = 0;
                        } else if (n < sizeof(line) - 1)
                                line[n++] = c;
                } else if (r == 0) {
                        fail_msg("sbxd %s exited during start-up", name);
                } else
                        usleep(10000);
        }
        close(fds[0]);
        itest_metrics_port = 0;
        if (sbx_mono_us() >= deadline)
                fail_msg("sbxd %s not ready within 60 s", name);
        return p;
}

static inline void itest_kill(itest_proc_t *p, int sig)
{
        int status;
        if (p->pid <= 0)
                return;
        kill(p->pid, sig);
        waitpid(p->pid, &status, 0);
        {
                size_t i;
                for (i = 0; i < sizeof(itest_children) / sizeof(pid_t); i++)
                        if (itest_children[i] == p->pid)
                                itest_children[i] = 0;
        }
        p->pid = 0;
}

/* What every end-to-end test uses: the stack's config, a codec and a
 * producer for requests, made by the group setup below. */
static sbx_config_t *cfg;
static sbx_codec_t *codec;
static sbx_kproducer_t *prod;

static inline int itest_group_setup(void **state)
{
        char err[512];
        (void)state;
        cfg   = itest_config();
        codec = sbx_codec_new(err, sizeof(err));
        prod  = codec ? sbx_kproducer_new(cfg, err, sizeof(err)) : NULL;
        if (!prod ||
            sbx_kproducer_prepare(prod, SBX_TOPIC_REQUESTS, err, sizeof(err))) {
                fprintf(stderr, "itest: %s\n", err);
                return -1;
        }
        return 0;
}

static inline void itest_cancel_claims(void);

static inline int itest_group_teardown(void **state)
{
        (void)state;
        itest_kill_all();
        itest_cancel_claims();
        sbx_kproducer_destroy(prod);
        sbx_codec_destroy(codec);
        sbx_config_destroy(cfg);
        return 0;
}

/* Per-test teardown: no sbxd outlives its test, even a failed one. */
static inline int itest_stop_children(void **state)
{
        (void)state;
        itest_kill_all();
        return 0;
}

/* The claims this program asked for: cancelled when it ends, so that no
 * claim of it stays BOUND to a sandbox of a node that is going away (the
 * keeper of a later test would place it again, on that test's node). */
static json_t *itest_claims;

static inline void itest_remember_claim(const json_t *req)
{
        const json_t *acq = json_object_get(json_object_get(req, "command"),
                                            "sbx.AcquireSandbox");
        if (!acq)
                return;
        if (!itest_claims)
                itest_claims = json_array();
        json_array_append_new(
            itest_claims,
            json_pack("{s:O, s:O, s:O?}", "claim_id",
                      json_object_get(acq, "claim_id"), "tenant_id",
                      json_object_get(req, "tenant_id"), "session_id",
                      json_object_get(req, "session_id")));
}

/* Publishes a Request (codec JSON, borrowed) keyed by its target. */
static inline void itest_request(sbx_kproducer_t *producer,
                                 const sbx_codec_t *c,
                                 const json_t *req,
                                 const char *key)
{
        unsigned char *buf;
        size_t len;
        char err[512];
        itest_remember_claim(req);
        if (sbx_codec_encode(c, SBX_SCHEMA_REQUEST, req, &buf, &len, err,
                             sizeof(err)))
                fail_msg("encode request: %s", err);
        if (sbx_kproducer_send_sync(producer, SBX_TOPIC_REQUESTS, key,
                                    strlen(key), buf, len, NULL, 0, 30000, NULL,
                                    NULL, err, sizeof(err)))
                fail_msg("publish request: %s", err);
        free(buf);
}

static inline json_t *itest_acquire(const char *claim,
                                    const char *tenant,
                                    const char *session,
                                    const char *text)
{
        char rid[64], uuid[37];
        sbx_uuid(uuid);
        snprintf(rid, sizeof(rid), "req-%s", uuid);
        return json_pack(
            "{s:s, s:s, s:s, s:s, s:I, s:{s:{s:s, s:{s:s}}}}", "request_id",
            rid, "tenant_id", tenant, "session_id", session, "client", "itest",
            "occurred_at", (json_int_t)sbx_now_us(), "command",
            "sbx.AcquireSandbox", "claim_id", claim, "task", "text", text);
}

/* Cancels every claim this program asked for (one that has ended already
 * is rejected, which is harmless). */
static inline void itest_cancel_claims(void)
{
        size_t i;
        const json_t *cl;
        json_t *all  = itest_claims;
        itest_claims = NULL;
        json_array_foreach(all, i, cl)
        {
                char rid[64], uuid[37];
                json_t *req;
                sbx_uuid(uuid);
                snprintf(rid, sizeof(rid), "req-%s", uuid);
                req = json_pack(
                    "{s:s, s:O, s:O?, s:s, s:I, s:{s:{s:O, s:s}}}", "request_id",
                    rid, "tenant_id", json_object_get(cl, "tenant_id"),
                    "session_id", json_object_get(cl, "session_id"), "client",
                    "itest", "occurred_at", (json_int_t)sbx_now_us(), "command",
                    "sbx.Cancel", "claim_id", json_object_get(cl, "claim_id"),
                    "reason", "test over");
                itest_request(
                    prod, codec, req,
                    json_string_value(json_object_get(cl, "claim_id")));
                json_decref(req);
        }
        json_decref(all);
}

/* Folds the whole log as it arrives; the tests read states and events. */
typedef struct itest_log_s {
        sbx_logreader_t *r;
        sbx_aggstore_t *store;
        sbx_event_t **ev;
        sbx_verdict_t *verdict;
        size_t n, cap;
} itest_log_t;

static inline void itest_log_open(itest_log_t *l,
                                  const sbx_config_t *c,
                                  const sbx_codec_t *k)
{
        char err[512];
        memset(l, 0, sizeof(*l));
        l->r = sbx_logreader_new(c, k, 0, err, sizeof(err));
        if (!l->r)
                fail_msg("log reader: %s", err);
        l->store = sbx_aggstore_new();
}

static inline void itest_log_pump(itest_log_t *l, int timeout_ms)
{
        sbx_event_t *ev;
        while ((ev = sbx_logreader_next(l->r, timeout_ms))) {
                int32_t part;
                int64_t off;
                sbx_logreader_position(l->r, &part, &off);
                if (l->n == l->cap) {
                        l->cap = l->cap ? l->cap * 2 : 1024;
                        l->ev  = sbx_realloc(l->ev, l->cap * sizeof(*l->ev));
                        l->verdict = sbx_realloc(l->verdict,
                                                 l->cap * sizeof(*l->verdict));
                }
                l->verdict[l->n] = sbx_aggstore_fold(l->store, ev, part, NULL);
                l->ev[l->n++]    = ev;
                timeout_ms       = 0;
        }
}

static inline const sbx_state_t *itest_state(itest_log_t *l, const char *id)
{
        sbx_aggentry_t *e = sbx_aggstore_get(l->store, id);
        return e ? e->state : NULL;
}

/* Waits until aggregate @p id reaches @p phase (fails after @p secs). */
static inline const sbx_state_t *itest_wait_phase(itest_log_t *l,
                                                  const char *id,
                                                  int phase,
                                                  int secs)
{
        int64_t deadline     = sbx_mono_us() + secs * 1000000LL;
        const sbx_state_t *s = NULL;
        while (sbx_mono_us() < deadline) {
                itest_log_pump(l, 100);
                s = itest_state(l, id);
                if (s && s->phase == phase)
                        return s;
        }
        fail_msg("%s did not reach phase %s within %d s (it is %s: %s)", id,
                 sbx_phase_name(s ? s->aggregate : SBX_AGG_CLAIM, phase), secs,
                 s ? sbx_phase_name(s->aggregate, s->phase) : "unknown",
                 s && s->reason ? s->reason : "");
        return NULL;
}

/* Accepted events of type @p t for aggregate @p id. */
static inline int itest_count(itest_log_t *l,
                              const char *id,
                              sbx_evtype_t t,
                              int accepted_only)
{
        size_t i;
        int n = 0;
        for (i = 0; i < l->n; i++)
                if (l->ev[i]->type == t &&
                    !strcmp(l->ev[i]->aggregate_id, id) &&
                    (!accepted_only || l->verdict[i] == SBX_FOLD_ACCEPTED))
                        n++;
        return n;
}

/* The accepted event of type @p t for @p id, or NULL. */
static inline const sbx_event_t *itest_find(itest_log_t *l,
                                            const char *id,
                                            sbx_evtype_t t)
{
        size_t i;
        for (i = 0; i < l->n; i++)
                if (l->ev[i]->type == t &&
                    !strcmp(l->ev[i]->aggregate_id, id) &&
                    l->verdict[i] == SBX_FOLD_ACCEPTED)
                        return l->ev[i];
        return NULL;
}

static inline void itest_log_close(itest_log_t *l)
{
        size_t i;
        for (i = 0; i < l->n; i++)
                sbx_event_destroy(l->ev[i]);
        free(l->ev);
        free(l->verdict);
        sbx_aggstore_destroy(l->store);
        sbx_logreader_destroy(l->r);
}

#endif
