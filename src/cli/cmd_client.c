/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Client commands over Kafka: `sbx acquire` publishes an AcquireSandbox
 * and, with --wait, follows the claim's chain through the phases until it
 * is bound (printing the sandbox id and lease version) or refused;
 * `sbx exec` runs a command under a lease and exits with its status;
 * `sbx release` gives the sandbox back. Everything they learn comes from
 * the log, exactly as any other client would learn it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "codec/codec.h"
#include "core/aggstore.h"
#include "core/util.h"
#include "kafka/kclient.h"
#include "kafka/logreader.h"
#include "kafka/processor.h"

typedef struct client_s {
        sbx_config_t *config;
        sbx_codec_t *codec;
        sbx_kproducer_t *prod;
        sbx_logreader_t *log;
        sbx_aggstore_t *store;
} client_t;

static int client_open(client_t *c, const sbx_cli_t *cli)
{
        char err[1024];
        memset(c, 0, sizeof(*c));
        if (!(c->config = sbx_cli_config(cli)))
                return -1;
        if (!(c->codec = sbx_codec_new(err, sizeof(err))) ||
            !(c->prod = sbx_kproducer_new(c->config, err, sizeof(err))) ||
            sbx_kproducer_prepare(c->prod, SBX_TOPIC_REQUESTS, err,
                                  sizeof(err)) ||
            !(c->log = sbx_logreader_new(c->config, c->codec, 1, err,
                                         sizeof(err)))) {
                sbx_cli_fail("%s", err);
                return -1;
        }
        c->store = sbx_aggstore_new();
        return 0;
}

static void client_close(client_t *c)
{
        sbx_logreader_destroy(c->log);
        sbx_kproducer_destroy(c->prod);
        sbx_aggstore_destroy(c->store);
        sbx_codec_destroy(c->codec);
        sbx_config_destroy(c->config);
}

static int publish(client_t *c, json_t *req, const char *key)
{
        unsigned char *buf = NULL;
        size_t len = 0;
        char err[1024];
        int rc = 0;
        if (sbx_codec_encode(c->codec, SBX_SCHEMA_REQUEST, req, &buf, &len, err,
                             sizeof(err)) ||
            sbx_kproducer_send_sync(c->prod, SBX_TOPIC_REQUESTS, key,
                                    strlen(key), buf, len, NULL, 0, 30000, NULL,
                                    NULL, err, sizeof(err)))
                rc = sbx_cli_fail("%s", err);
        free(buf);
        return rc;
}

static json_t *request(const char *tenant, const char *session,
                       const char *command, json_t *body)
{
        char rid[64], uuid[37];
        sbx_uuid(uuid);
        sbx_fmt(rid, sizeof(rid), "req-%s", uuid);
        return json_pack("{s:s, s:s, s:s?, s:s, s:I, s:{s:o}}", "request_id",
                         rid, "tenant_id", tenant, "session_id", session,
                         "client", "sbx-cli/" SBX_VERSION, "occurred_at",
                         (json_int_t)sbx_now_us(), "command", command, body);
}

/* Folds the log until @p done says stop (1) or fail (-1), or a timeout. */
static int follow(client_t *c, int timeout_s,
                  int (*done)(const sbx_event_t *ev, sbx_verdict_t v,
                              const sbx_state_t *s, void *opaque),
                  void *opaque)
{
        int64_t deadline = sbx_mono_us() + timeout_s * 1000000LL;
        while (sbx_mono_us() < deadline) {
                sbx_event_t *ev = sbx_logreader_next(c->log, 200);
                sbx_aggentry_t *e;
                sbx_verdict_t v;
                int32_t part;
                int64_t off;
                int r;
                if (!ev)
                        continue;
                sbx_logreader_position(c->log, &part, &off);
                v = sbx_aggstore_fold(c->store, ev, part, &e);
                r = done(ev, v, e->state, opaque);
                sbx_event_destroy(ev);
                if (r)
                        return r;
        }
        return 0;
}

typedef struct acq_s {
        const char *claim, *rid;
        int json, quiet;
        int64_t t0;
        char sandbox[160];
        int64_t lease;
        char why[512];
} acq_t;

static int acquire_done(const sbx_event_t *ev, sbx_verdict_t v,
                        const sbx_state_t *s, void *opaque)
{
        acq_t *a = opaque;
        if (!strcmp(ev->aggregate_id, a->rid) &&
            ev->type == SBX_EV_REQUEST_REJECTED) {
                char *r = json_dumps(json_object_get(ev->payload, "reasons"),
                                     JSON_COMPACT);
                sbx_fmt(a->why, sizeof(a->why), "rejected: %s", r);
                free(r);
                return -1;
        }
        if (strcmp(ev->aggregate_id, a->claim) || v != SBX_FOLD_ACCEPTED)
                return 0;
        if (!a->json && !a->quiet)
                fprintf(stderr, "  %7.1f ms  %-10s %-16s by %s\n",
                        (double)(sbx_mono_us() - a->t0) / 1000.0,
                        sbx_phase_name(SBX_AGG_CLAIM, s->phase),
                        sbx_evtype_name(ev->type), ev->producer);
        if (s->phase == SBX_CLAIM_BOUND) {
                sbx_fmt(a->sandbox, sizeof(a->sandbox), "%s", s->sandbox_id);
                a->lease = s->lease_version;
                return 1;
        }
        if (sbx_phase_terminal(SBX_AGG_CLAIM, s->phase)) {
                sbx_fmt(a->why, sizeof(a->why), "%s: %s",
                        sbx_phase_name(SBX_AGG_CLAIM, s->phase),
                        s->reason ? s->reason : "");
                return -1;
        }
        return 0;
}

static const char acquire_usage[] =
    "usage: sbx acquire --tenant T [--session S] --task TEXT [--plan STEP]...\n"
    "                   [--package NAME[CONSTRAINT]]... [--browser] [--risk "
    "low|medium|high]\n"
    "                   [--class C] [--lease SECONDS] [--claim ID] [--wait] "
    "[--timeout S]\n";

int sbx_cmd_acquire(sbx_cli_t *cli, int argc, char **argv)
{
        const char *tenant = NULL, *session = NULL, *cls = NULL, *risk = "low";
        json_t *plan = json_array(), *pkgs = json_array(), *task, *req;
        char claim[64], uuid[37];
        int i, wait = 0, browser = 0, timeout = 120, rc = 1;
        long lease = 300;
        client_t c;
        acq_t a;

        memset(&a, 0, sizeof(a));
        sbx_uuid(uuid);
        sbx_fmt(claim, sizeof(claim), "claim-%s", uuid);
        task = json_object();
        for (i = 0; i < argc; i++) {
                const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                if (!strcmp(o, "--wait"))
                        wait = 1;
                else if (!strcmp(o, "--browser"))
                        browser = 1;
                else if (!v)
                        goto usage;
                else if (!strcmp(o, "--tenant"))
                        tenant = argv[++i];
                else if (!strcmp(o, "--session"))
                        session = argv[++i];
                else if (!strcmp(o, "--task"))
                        json_object_set_new(task, "text", json_string(argv[++i]));
                else if (!strcmp(o, "--plan"))
                        json_array_append_new(plan, json_string(argv[++i]));
                else if (!strcmp(o, "--package")) {
                        const char *n = argv[++i];
                        size_t k = strcspn(n, "=<>!~");
                        json_array_append_new(
                            pkgs, json_pack("{s:s%, s:s}", "name", n, k,
                                            "constraint", n + k));
                } else if (!strcmp(o, "--class"))
                        cls = argv[++i];
                else if (!strcmp(o, "--risk"))
                        risk = argv[++i];
                else if (!strcmp(o, "--claim"))
                        sbx_fmt(claim, sizeof(claim), "%s", argv[++i]);
                else if (!strcmp(o, "--lease"))
                        lease = atol(argv[++i]);
                else if (!strcmp(o, "--timeout"))
                        timeout = atoi(argv[++i]);
                else
                        goto usage;
        }
        if (!tenant || !json_object_get(task, "text"))
                goto usage;
        json_object_set_new(task, "plan", plan);
        json_object_set_new(task, "packages", pkgs);
        json_object_set_new(task, "needs_browser", json_boolean(browser));
        json_object_set_new(task, "risk", json_string(risk));
        plan = pkgs = NULL;
        if (client_open(&c, cli))
                goto done_task;
        req = request(tenant, session, "sbx.AcquireSandbox",
                      json_pack("{s:s, s:o, s:s?, s:I}", "claim_id", claim,
                                "task", task, "requested_class", cls,
                                "lease_seconds", (json_int_t)lease));
        task = NULL;
        a.claim = claim;
        a.rid = json_string_value(json_object_get(req, "request_id"));
        a.json = cli->json;
        a.t0 = sbx_mono_us();
        if (publish(&c, req, claim)) {
                json_decref(req);
                goto done;
        }
        if (!wait) {
                printf(cli->json ? "{\"claim_id\":\"%s\"}\n" : "%s\n", claim);
                rc = 0;
        } else {
                int r = follow(&c, timeout, acquire_done, &a);
                if (r == 1) {
                        if (cli->json)
                                printf("{\"claim_id\":\"%s\",\"sandbox_id\":\"%s\","
                                       "\"lease_version\":%lld,\"ms\":%.1f}\n",
                                       claim, a.sandbox, (long long)a.lease,
                                       (double)(sbx_mono_us() - a.t0) / 1000.0);
                        else
                                printf("%s %lld\n", a.sandbox,
                                       (long long)a.lease);
                        rc = 0;
                } else
                        rc = sbx_cli_fail("claim %s %s", claim,
                                          r ? a.why : "timed out");
        }
        json_decref(req);
done:
        client_close(&c);
done_task:
        json_decref(task);
        json_decref(plan);
        json_decref(pkgs);
        return rc;
usage:
        json_decref(task);
        json_decref(plan);
        json_decref(pkgs);
        fputs(acquire_usage, stderr);
        return 2;
}

typedef struct exec_wait_s {
        const char *sandbox, *exec_id, *rid;
        int exit_code, done;
        char why[512];
} exec_wait_t;

static int exec_done(const sbx_event_t *ev, sbx_verdict_t v,
                     const sbx_state_t *s, void *opaque)
{
        exec_wait_t *w = opaque;
        (void)s;
        if (!strcmp(ev->aggregate_id, w->rid) &&
            ev->type == SBX_EV_REQUEST_REJECTED) {
                char *r = json_dumps(json_object_get(ev->payload, "reasons"),
                                     JSON_COMPACT);
                sbx_fmt(w->why, sizeof(w->why), "rejected: %s", r);
                free(r);
                return -1;
        }
        /* Following from now, this reader has not seen the sandbox's
         * history: its events arrive as a gap, not as stale or refused. */
        if ((v != SBX_FOLD_ACCEPTED && v != SBX_FOLD_SEQ_GAP) ||
            strcmp(ev->aggregate_id, w->sandbox) ||
            ev->type != SBX_EV_EXEC_FINISHED ||
            strcmp(sbx_event_str(ev, "exec_id"), w->exec_id))
                return 0;
        {
                unsigned char *b = NULL;
                size_t n = 0;
                if (!sbx_codec_bytes_value(json_object_get(ev->payload, "stdout"),
                                           &b, &n)) {
                        fwrite(b, 1, n, stdout);
                        free(b);
                }
                if (!sbx_codec_bytes_value(json_object_get(ev->payload, "stderr"),
                                           &b, &n)) {
                        fwrite(b, 1, n, stderr);
                        free(b);
                }
        }
        if (sbx_event_str(ev, "error"))
                fprintf(stderr, "sbx: %s\n", sbx_event_str(ev, "error"));
        w->exit_code = (int)sbx_event_int(ev, "exit_code", 1);
        w->done = 1;
        return 1;
}

int sbx_cmd_exec(sbx_cli_t *cli, int argc, char **argv)
{
        const char *tenant = "acme", *session = NULL, *sandbox = NULL;
        long long lease = -1, timeout_ms = 60000;
        json_t *args = json_array(), *req;
        char exec_id[64], uuid[37];
        exec_wait_t w;
        client_t c;
        int i, rc = 1, r;

        for (i = 0; i < argc; i++) {
                if (!strcmp(argv[i], "--")) {
                        for (i++; i < argc; i++)
                                json_array_append_new(args,
                                                      json_string(argv[i]));
                        break;
                } else if (!strcmp(argv[i], "--tenant") && i + 1 < argc)
                        tenant = argv[++i];
                else if (!strcmp(argv[i], "--session") && i + 1 < argc)
                        session = argv[++i];
                else if (!strcmp(argv[i], "--lease") && i + 1 < argc)
                        lease = atoll(argv[++i]);
                else if (!strcmp(argv[i], "--timeout-ms") && i + 1 < argc)
                        timeout_ms = atoll(argv[++i]);
                else if (!sandbox && argv[i][0] != '-')
                        sandbox = argv[i];
                else {
                        json_decref(args);
                        goto usage;
                }
        }
        if (!sandbox || lease < 0 || !json_array_size(args)) {
                json_decref(args);
                goto usage;
        }
        if (client_open(&c, cli)) {
                json_decref(args);
                return 1;
        }
        sbx_uuid(uuid);
        sbx_fmt(exec_id, sizeof(exec_id), "ex-%.13s", uuid);
        req = request(tenant, session, "sbx.Exec",
                      json_pack("{s:s, s:I, s:s, s:o, s:I}", "sandbox_id",
                                sandbox, "lease_version", (json_int_t)lease,
                                "exec_id", exec_id, "argv", args, "timeout_ms",
                                (json_int_t)timeout_ms));
        memset(&w, 0, sizeof(w));
        w.sandbox = sandbox;
        w.exec_id = exec_id;
        w.rid = json_string_value(json_object_get(req, "request_id"));
        if (!publish(&c, req, sandbox)) {
                r = follow(&c, (int)(timeout_ms / 1000) + 30, exec_done, &w);
                if (r == 1)
                        rc = w.exit_code;
                else
                        rc = sbx_cli_fail("exec %s: %s", exec_id,
                                          r ? w.why : "timed out");
        }
        json_decref(req);
        client_close(&c);
        (void)cli;
        return rc;
usage:
        fputs("usage: sbx exec SANDBOX --lease N [--tenant T] [--session S] "
              "[--timeout-ms MS] -- CMD [ARG...]\n",
              stderr);
        return 2;
}
