/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of intake's decision: every client command against the folded
 * state of its target. Requests are built as the codec decodes them (each
 * one is encoded and decoded with the real schemas first, so defaults are
 * filled as on the wire); every event intake appends must survive the
 * codec both ways and be accepted by the fold on the very state it was
 * decided on, so intake never writes an event the log would refuse.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/fold.h"
#include "core/util.h"
#include "stages/intake.h"

#define NOW    1789200000000000LL /* µs */
#define TENANT "acme"

#include "fixture.h"

/*
 * A request as intake receives it: @p body (stolen) under @p cmd
 * ("sbx.Exec", ...), encoded and decoded with the real codec.
 */
static json_t *request_as(const char *rid,
                          const char *tenant,
                          const char *session,
                          const char *cmd,
                          json_t *body)
{
        json_t *r, *back = NULL;
        unsigned char *buf = NULL;
        size_t len         = 0;
        char err[512]      = "";

        r = json_pack("{s:s, s:s, s:o, s:s, s:s, s:I, s:{s:o}}", "request_id",
                      rid, "tenant_id", tenant, "session_id",
                      session ? json_string(session) : json_null(), "user_id",
                      "u-7", "client", "test/1", "occurred_at", (json_int_t)NOW,
                      "command", cmd, body);
        assert_non_null(r);
        if (sbx_codec_encode(codec, SBX_SCHEMA_REQUEST, r, &buf, &len, err,
                             sizeof(err)))
                fail_msg("request does not encode: %s", err);
        if (sbx_codec_decode(codec, SBX_SCHEMA_REQUEST, buf, len, &back, err,
                             sizeof(err)))
                fail_msg("request does not decode: %s", err);
        free(buf);
        json_decref(r);
        return back;
}

static json_t *request(const char *rid, const char *cmd, json_t *body)
{
        return request_as(rid, TENANT, "s-1", cmd, body);
}

static json_t *task(const char *text)
{
        return json_pack("{s:s, s:[s,s], s:[s], s:[{s:s, s:s}], s:s}", "text",
                         text, "plan", "read sales.xlsx with pandas",
                         "total the sales column", "tool_calls",
                         "python3 total.py", "packages", "name", "pandas",
                         "constraint", "<3", "risk", "low");
}

static json_t *acquire_body(const char *claim)
{
        return json_pack("{s:s, s:o, s:I, s:I, s:s}", "claim_id", claim, "task",
                         task("read the Excel file and total sales"),
                         "ttl_seconds", (json_int_t)1800, "lease_seconds",
                         (json_int_t)300, "workspace_id", "ws-1");
}

static json_t *exec_body(const char *sb, int64_t lv, const char *exec_id)
{
        return json_pack("{s:s, s:I, s:s, s:[s,s,s], s:{s:s}, s:s, s:I}",
                         "sandbox_id", sb, "lease_version", (json_int_t)lv,
                         "exec_id", exec_id, "argv", "python3", "-c",
                         "print(1+1)", "env", "LANG", "C.UTF-8", "cwd",
                         "/workspace", "timeout_ms", (json_int_t)30000);
}

/* Appends one event of @p t to @p st as its writer would; must be accepted. */
static void put(sbx_state_t *st, sbx_evtype_t t, json_t *payload)
{
        sbx_event_t *ev = sbx_event_new(t, st->id, st->seq + 1, payload);
        sbx_verdict_t v;

        sbx_event_set(&ev->producer, "test/1");
        sbx_event_set(&ev->correlation_id, "c-1");
        sbx_event_set(&ev->tenant_id, st->seq ? st->tenant_id : TENANT);
        sbx_event_set(&ev->session_id, "s-1");
        if (sbx_evtype_fenced(t))
                ev->lease_version = st->lease_version;
        v = sbx_fold(st, ev);
        if (v != SBX_FOLD_ACCEPTED)
                fail_msg("setup: %s in %s: %s", sbx_evtype_name(t),
                         sbx_phase_name(st->aggregate, st->phase),
                         sbx_verdict_name(v));
        sbx_event_destroy(ev);
}

/* A sandbox of @p tenant leased to claim c-1 at lease version @p version
 * (after version - 1 earlier leases were released). */
static sbx_state_t *sandbox_of(const char *id,
                               const char *tenant,
                               int64_t version)
{
        sbx_state_t *st = sbx_state_new(SBX_AGG_SANDBOX, id);
        int64_t v;

        sbx_event_t *ev = sbx_event_new(
            SBX_EV_SANDBOX_CREATED, id, 1,
            json_pack("{s:s, s:s, s:s, s:s, s:s, s:f, s:I}", "origin", "claim",
                      "node_id", "n1", "resource_class", "python-small",
                      "template", "host", "runtime", "runc", "cpu", 1.0,
                      "memory_mb", (json_int_t)2048));
        sbx_event_set(&ev->tenant_id, tenant);
        sbx_event_set(&ev->correlation_id, "c-1");
        assert_int_equal(sbx_fold(st, ev), SBX_FOLD_ACCEPTED);
        sbx_event_destroy(ev);
        put(st, SBX_EV_PROVISIONED,
            json_pack("{s:s, s:I}", "runtime_instance", "sbx-1", "startup_us",
                      (json_int_t)47000));
        for (v = 1; v <= version; v++) {
                if (v > 1) {
                        put(st, SBX_EV_LEASE_RELEASED,
                            json_pack("{s:s}", "reason", "done"));
                        put(st, SBX_EV_SANITIZED, NULL);
                }
                put(st, SBX_EV_LEASE_GRANTED,
                    json_pack("{s:s, s:I, s:I}", "owner", "c-1",
                              "lease_version", (json_int_t)v, "expires_at",
                              (json_int_t)(NOW + 300 * 1000000LL)));
        }
        return st;
}

static sbx_state_t *sandbox(const char *id, int64_t version)
{
        return sandbox_of(id, TENANT, version);
}

static sbx_intake_verdict_t check(const json_t *req,
                                  const sbx_state_t *st,
                                  sbx_event_t **ret_ev,
                                  char *reason,
                                  size_t reason_size)
{
        *ret_ev   = NULL;
        reason[0] = '\0';
        return sbx_intake_check(req, st, 1, NOW, ret_ev, reason, reason_size);
}

static const char *verdict_name(sbx_intake_verdict_t v)
{
        switch (v) {
        case SBX_INTAKE_APPEND:
                return "APPEND";
        case SBX_INTAKE_REJECT:
                return "REJECT";
        case SBX_INTAKE_WAIT:
                return "WAIT";
        case SBX_INTAKE_IGNORE:
                return "IGNORE";
        }
        return "?";
}

/* Asserts @p req (stolen) is refused with a reason containing @p needle. */
static void expect_reject(json_t *req,
                          const sbx_state_t *st,
                          const char *needle)
{
        sbx_event_t *ev = NULL;
        char reason[512];
        sbx_intake_verdict_t v = check(req, st, &ev, reason, sizeof(reason));

        if (v != SBX_INTAKE_REJECT)
                fail_msg("expected REJECT (%s), got %s %s", needle,
                         verdict_name(v), ev ? sbx_evtype_name(ev->type) : "");
        assert_null(ev);
        if (!strstr(reason, needle))
                fail_msg("reason '%s' does not say '%s'", reason, needle);
        json_decref(req);
}

/* Asserts @p req (stolen) gets @p want (WAIT or IGNORE) and no event. */
static void expect_verdict(json_t *req,
                           const sbx_state_t *st,
                           sbx_intake_verdict_t want)
{
        sbx_event_t *ev = NULL;
        char reason[512];
        sbx_intake_verdict_t v = check(req, st, &ev, reason, sizeof(reason));

        if (v != want)
                fail_msg("expected %s, got %s (%s)", verdict_name(want),
                         verdict_name(v), reason);
        assert_null(ev);
        json_decref(req);
}

/*
 * Asserts @p req (stolen) is APPENDed; the event goes through the codec
 * both ways and the decoded event must be accepted by the fold on the
 * state it was decided on: @p st itself (which is advanced), or a fresh
 * state when intake saw none. Returns the event intake built.
 */
static sbx_event_t *expect_append(json_t *req, sbx_state_t *st)
{
        sbx_event_t *ev = NULL, *back = NULL;
        sbx_state_t *fresh = NULL;
        unsigned char *buf = NULL;
        size_t len         = 0;
        char reason[512], err[512] = "";
        sbx_intake_verdict_t v = check(req, st, &ev, reason, sizeof(reason));
        sbx_verdict_t fv;

        if (v != SBX_INTAKE_APPEND)
                fail_msg("expected APPEND, got %s: %s", verdict_name(v),
                         reason);
        assert_non_null(ev);
        if (sbx_event_encode(codec, ev, &buf, &len, err, sizeof(err)))
                fail_msg("%s does not encode: %s", sbx_evtype_name(ev->type),
                         err);
        if (sbx_event_decode(codec, buf, len, &back, err, sizeof(err)))
                fail_msg("%s does not decode: %s", sbx_evtype_name(ev->type),
                         err);
        if (!st)
                st = fresh = sbx_state_new(ev->aggregate, ev->aggregate_id);
        fv = sbx_fold(st, back);
        if (fv != SBX_FOLD_ACCEPTED)
                fail_msg("the fold refuses intake's %s: %s",
                         sbx_evtype_name(ev->type), sbx_verdict_name(fv));
        sbx_state_destroy(fresh);
        sbx_event_destroy(back);
        free(buf);
        json_decref(req);
        return ev;
}

static const json_t *field(const sbx_event_t *ev, const char *name)
{
        return json_object_get(ev->payload, name);
}

static char *repeat(char c, size_t n)
{
        char *s = sbx_calloc(1, n + 1);
        memset(s, c, n);
        return s;
}

/* ---- AcquireSandbox ---------------------------------------------------- */

static void test_acquire_appends_claim_requested(void **state)
{
        sbx_state_t *claim = sbx_state_new(SBX_AGG_CLAIM, "c-1");
        json_t *want_task  = task("read the Excel file and total sales");
        sbx_event_t *ev;
        (void)state;

        /* Intake may know nothing of the claim yet, or an empty state. */
        ev = expect_append(
            request("r-1", "sbx.AcquireSandbox", acquire_body("c-1")), NULL);
        sbx_event_destroy(ev);
        ev = expect_append(
            request("r-1", "sbx.AcquireSandbox", acquire_body("c-1")), claim);

        assert_int_equal(ev->type, SBX_EV_CLAIM_REQUESTED);
        assert_int_equal(ev->aggregate, SBX_AGG_CLAIM);
        assert_string_equal(ev->aggregate_id, "c-1");
        assert_int_equal(ev->seq, 1);
        assert_string_equal(ev->correlation_id, "c-1");
        assert_string_equal(ev->tenant_id, TENANT);
        assert_string_equal(ev->session_id, "s-1");
        assert_int_equal(ev->lease_version, SBX_NO_LEASE);
        assert_string_equal(sbx_event_str(ev, "request_id"), "r-1");
        assert_string_equal(sbx_event_str(ev, "user_id"), "u-7");
        assert_null(field(ev, "claim_id"));
        assert_int_equal(sbx_event_int(ev, "ttl_seconds", 0), 1800);
        assert_int_equal(sbx_event_int(ev, "lease_seconds", 0), 300);
        assert_string_equal(sbx_event_str(ev, "workspace_id"), "ws-1");
        /* The task reaches the planner as the agent wrote it. */
        assert_string_equal(
            json_string_value(json_object_get(field(ev, "task"), "text")),
            "read the Excel file and total sales");
        assert_true(json_equal(json_object_get(field(ev, "task"), "plan"),
                               json_object_get(want_task, "plan")));
        assert_string_equal(
            json_string_value(json_object_get(
                json_array_get(json_object_get(field(ev, "task"), "packages"),
                               0),
                "name")),
            "pandas");

        /* The folded claim is what the planner will see. */
        assert_int_equal(claim->phase, SBX_CLAIM_REQUESTED);
        assert_int_equal(claim->seq, 1);
        assert_string_equal(claim->request_id, "r-1");
        assert_string_equal(claim->user_id, "u-7");
        assert_string_equal(claim->tenant_id, TENANT);
        assert_string_equal(claim->session_id, "s-1");
        assert_int_equal(claim->ttl_seconds, 1800);

        json_decref(want_task);
        sbx_event_destroy(ev);
        sbx_state_destroy(claim);
}

static void test_acquire_resend_ignored_claim_id_reuse_rejected(void **state)
{
        sbx_state_t *claim = sbx_state_new(SBX_AGG_CLAIM, "c-1");
        (void)state;

        sbx_event_destroy(expect_append(
            request("r-1", "sbx.AcquireSandbox", acquire_body("c-1")), claim));
        /* The client resends after a timeout: nothing new happens. */
        expect_verdict(
            request("r-1", "sbx.AcquireSandbox", acquire_body("c-1")), claim,
            SBX_INTAKE_IGNORE);
        /* Still a no-op once the claim moved on. */
        put(claim, SBX_EV_PLAN_PROPOSED,
            json_pack("{s:s, s:s, s:s, s:{s:s, s:f, s:I, s:I}}", "planner",
                      "rules", "input_hash", "h", "signature", "sig", "intent",
                      "workload", "plain-script", "cpu", 1.0, "memory_mb",
                      (json_int_t)2048, "disk_gb", (json_int_t)10));
        expect_verdict(
            request("r-1", "sbx.AcquireSandbox", acquire_body("c-1")), claim,
            SBX_INTAKE_IGNORE);
        /* Another request may not take over the claim id. */
        expect_reject(request("r-2", "sbx.AcquireSandbox", acquire_body("c-1")),
                      claim, "claim_id c-1 is already used by request r-1");
        assert_int_equal(claim->seq, 2);
        sbx_state_destroy(claim);
}

static void test_unknown_tenant_rejected(void **state)
{
        json_t *req = request_as("r-1", "nobody", "s-1", "sbx.AcquireSandbox",
                                 acquire_body("c-1"));
        sbx_event_t *ev  = NULL;
        char reason[256] = "";
        (void)state;

        assert_int_equal(
            sbx_intake_check(req, NULL, 0, NOW, &ev, reason, sizeof(reason)),
            SBX_INTAKE_REJECT);
        assert_null(ev);
        assert_string_equal(reason, "unknown tenant 'nobody'");
        json_decref(req);
}

/* An AcquireSandbox for c-1 whose task field @p key is set to @p v. */
static json_t *acquire_with_task(const char *key, json_t *v)
{
        json_t *b = acquire_body("c-1");
        json_object_set_new(json_object_get(b, "task"), key, v);
        return request("r-1", "sbx.AcquireSandbox", b);
}

static json_t *acquire_with(const char *key, json_int_t v)
{
        json_t *b = acquire_body("c-1");
        json_object_set_new(b, key, json_integer(v));
        return request("r-1", "sbx.AcquireSandbox", b);
}

static json_t *strings(size_t n, size_t len)
{
        json_t *a = json_array();
        char *s   = repeat('x', len);
        size_t i;
        for (i = 0; i < n; i++)
                json_array_append_new(a, json_string(s));
        free(s);
        return a;
}

static json_t *packages(size_t n)
{
        json_t *a = json_array();
        size_t i;
        for (i = 0; i < n; i++)
                json_array_append_new(a, json_pack("{s:s}", "name", "numpy"));
        return a;
}

static void test_acquire_bounds(void **state)
{
        char *text;
        (void)state;

        /* task.text: 64 KiB is fine, one byte more is refused. */
        text = repeat('t', SBX_INTAKE_MAX_TEXT);
        sbx_event_destroy(
            expect_append(acquire_with_task("text", json_string(text)), NULL));
        free(text);
        text = repeat('t', SBX_INTAKE_MAX_TEXT + 1);
        expect_reject(acquire_with_task("text", json_string(text)), NULL,
                      "longer than 65536 bytes");
        free(text);

        /* Plan steps, tool calls, packages: 256 items of 4 KiB at most. */
        sbx_event_destroy(expect_append(
            acquire_with_task("plan", strings(SBX_INTAKE_MAX_ITEMS, 4096)),
            NULL));
        expect_reject(
            acquire_with_task("plan", strings(SBX_INTAKE_MAX_ITEMS + 1, 8)),
            NULL, "max 256 items");
        expect_reject(acquire_with_task("plan", strings(1, 4097)), NULL,
                      "max 256 items of 4 KiB");
        expect_reject(acquire_with_task("tool_calls",
                                        strings(SBX_INTAKE_MAX_ITEMS + 1, 8)),
                      NULL, "max 256 items");
        expect_reject(
            acquire_with_task("packages", packages(SBX_INTAKE_MAX_ITEMS + 1)),
            NULL, "max 256 items");
        sbx_event_destroy(expect_append(
            acquire_with_task("packages", packages(SBX_INTAKE_MAX_ITEMS)),
            NULL));

        /* ttl_seconds 1..86400, lease_seconds 5..3600. */
        expect_reject(acquire_with("ttl_seconds", 0), NULL, "1..86400");
        expect_reject(acquire_with("ttl_seconds", 86401), NULL, "1..86400");
        expect_reject(acquire_with("ttl_seconds", -5), NULL, "1..86400");
        sbx_event_destroy(
            expect_append(acquire_with("ttl_seconds", 86400), NULL));
        sbx_event_destroy(expect_append(acquire_with("ttl_seconds", 1), NULL));
        expect_reject(acquire_with("lease_seconds", 4), NULL, "5..3600");
        expect_reject(acquire_with("lease_seconds", 3601), NULL, "5..3600");
        sbx_event_destroy(
            expect_append(acquire_with("lease_seconds", 5), NULL));
        sbx_event_destroy(
            expect_append(acquire_with("lease_seconds", 3600), NULL));
}

static void test_bad_ids_rejected(void **state)
{
        const char *bad[3];
        char *long_id = repeat('a', 200), *max_id = repeat('b', 128);
        sbx_state_t *sb = sandbox("sb-1", 1);
        int i;
        (void)state;

        bad[0] = "has space";
        bad[1] = long_id;
        bad[2] = "";
        for (i = 0; i < 3; i++) {
                expect_reject(
                    request(bad[i], "sbx.AcquireSandbox", acquire_body("c-1")),
                    NULL, "request_id must be 1..128");
                expect_reject(
                    request("r-1", "sbx.AcquireSandbox", acquire_body(bad[i])),
                    NULL, "target id must be 1..128");
                expect_reject(
                    request("r-1", "sbx.Exec", exec_body(bad[i], 1, "e-1")),
                    NULL, "target id must be 1..128");
                expect_reject(
                    request("r-1", "sbx.Exec", exec_body("sb-1", 1, bad[i])),
                    sb, "exec_id must be 1..128");
        }
        expect_reject(
            request("r-1", "sbx.AcquireSandbox", acquire_body("c/../../etc")),
            NULL, "target id must be");
        /* 128 plain characters are an id. */
        sbx_event_destroy(expect_append(
            request(max_id, "sbx.AcquireSandbox", acquire_body(max_id)), NULL));
        assert_int_equal(sb->phase, SBX_SB_LEASED);
        free(long_id);
        free(max_id);
        sbx_state_destroy(sb);
}

/* A session id ends up in the envelope of every event of the claim;
 * one the log's readers refuse must not get that far. */
static void test_session_id_must_fit_the_envelope(void **state)
{
        char *long_session = repeat('s', 300);
        (void)state;

        expect_reject(request_as("r-1", TENANT, long_session,
                                 "sbx.AcquireSandbox", acquire_body("c-1")),
                      NULL, "session_id");
        free(long_session);
        /* No session at all is fine: session is an affinity. */
        sbx_event_destroy(
            expect_append(request_as("r-1", TENANT, NULL, "sbx.AcquireSandbox",
                                     acquire_body("c-1")),
                          NULL));
}

/* ---- Exec and file operations ------------------------------------------ */

static void test_exec_on_unknown_sandbox_waits(void **state)
{
        sbx_state_t *empty = sbx_state_new(SBX_AGG_SANDBOX, "sb-9");
        (void)state;
        expect_verdict(request("r-1", "sbx.Exec", exec_body("sb-9", 1, "e-1")),
                       NULL, SBX_INTAKE_WAIT);
        expect_verdict(request("r-1", "sbx.Exec", exec_body("sb-9", 1, "e-1")),
                       empty, SBX_INTAKE_WAIT);
        sbx_state_destroy(empty);
}

static void test_exec_lease_version_fencing(void **state)
{
        sbx_state_t *sb    = sandbox("sb-1", 2);
        sbx_state_t *ready = sandbox("sb-2", 0);
        (void)state;

        /* The worker that held lease 1 comes back after 2 was granted. */
        expect_reject(request("r-1", "sbx.Exec", exec_body("sb-1", 1, "e-1")),
                      sb, "stale lease: version 1, current 2");
        /* A version intake has not seen granted yet: wait for the log. */
        expect_verdict(request("r-1", "sbx.Exec", exec_body("sb-1", 3, "e-1")),
                       sb, SBX_INTAKE_WAIT);
        /* A sandbox nobody leased: not even version 0 runs anything. */
        expect_reject(request("r-1", "sbx.Exec", exec_body("sb-2", 0, "e-1")),
                      ready, "sb-2 is READY, not leased");
        assert_int_equal(sb->phase, SBX_SB_LEASED);
        sbx_state_destroy(sb);
        sbx_state_destroy(ready);
}

static void test_exec_from_another_tenant_rejected(void **state)
{
        sbx_state_t *sb = sandbox_of("sb-1", "globex", 1);
        (void)state;
        expect_reject(request("r-1", "sbx.Exec", exec_body("sb-1", 1, "e-1")),
                      sb, "sandbox sb-1 belongs to another tenant");
        expect_reject(request("r-1", "sbx.Renew",
                              json_pack("{s:s, s:I, s:I}", "sandbox_id", "sb-1",
                                        "lease_version", (json_int_t)1,
                                        "extend_seconds", (json_int_t)60)),
                      sb, "another tenant");
        expect_reject(request("r-1", "sbx.Release",
                              json_pack("{s:s, s:I, s:s}", "sandbox_id", "sb-1",
                                        "lease_version", (json_int_t)1,
                                        "claim_id", "c-1")),
                      sb, "another tenant");
        expect_reject(request("r-1", "sbx.Destroy",
                              json_pack("{s:s}", "sandbox_id", "sb-1")),
                      sb, "another tenant");
        assert_int_equal(sb->phase, SBX_SB_LEASED);
        sbx_state_destroy(sb);
}

static void test_exec_appends_fenced_exec_requested(void **state)
{
        sbx_state_t *sb = sandbox("sb-1", 2);
        int64_t seq     = sb->seq;
        sbx_event_t *ev;
        (void)state;

        ev = expect_append(
            request("r-1", "sbx.Exec", exec_body("sb-1", 2, "e-1")), sb);
        assert_int_equal(ev->type, SBX_EV_EXEC_REQUESTED);
        assert_string_equal(ev->aggregate_id, "sb-1");
        assert_int_equal(ev->seq, seq + 1);
        assert_int_equal(ev->lease_version, 2);
        assert_string_equal(ev->correlation_id, "c-1"); /* the lease owner */
        assert_string_equal(ev->tenant_id, TENANT);
        assert_string_equal(sbx_event_str(ev, "exec_id"), "e-1");
        assert_string_equal(sbx_event_str(ev, "request_id"), "r-1");
        assert_string_equal(sbx_event_str(ev, "op"), "exec");
        assert_int_equal(json_array_size(field(ev, "argv")), 3);
        assert_string_equal(
            json_string_value(json_array_get(field(ev, "argv"), 2)),
            "print(1+1)");
        assert_string_equal(
            json_string_value(json_object_get(field(ev, "env"), "LANG")),
            "C.UTF-8");
        assert_string_equal(sbx_event_str(ev, "cwd"), "/workspace");
        assert_int_equal(sbx_event_int(ev, "timeout_ms", 0), 30000);
        /* The executor sees the sandbox running this exec. */
        assert_int_equal(sb->phase, SBX_SB_RUNNING);
        assert_string_equal(sb->exec_id, "e-1");
        sbx_event_destroy(ev);
        sbx_state_destroy(sb);
}

static void test_exec_one_at_a_time(void **state)
{
        sbx_state_t *sb = sandbox("sb-1", 1);
        (void)state;

        sbx_event_destroy(expect_append(
            request("r-1", "sbx.Exec", exec_body("sb-1", 1, "e-1")), sb));
        assert_int_equal(sb->phase, SBX_SB_RUNNING);
        expect_reject(request("r-2", "sbx.Exec", exec_body("sb-1", 1, "e-2")),
                      sb, "running exec e-1: one at a time");
        expect_reject(
            request("r-3", "sbx.WriteFile",
                    json_pack("{s:s, s:I, s:s, s:s, s:s}", "sandbox_id", "sb-1",
                              "lease_version", (json_int_t)1, "exec_id", "e-3",
                              "path", "/workspace/a.py", "content", "x")),
            sb, "one at a time");
        /* Once it finished the next one may run. */
        put(sb, SBX_EV_EXEC_FINISHED,
            json_pack("{s:s, s:i}", "exec_id", "e-1", "exit_code", 0));
        sbx_event_destroy(expect_append(
            request("r-2", "sbx.Exec", exec_body("sb-1", 1, "e-2")), sb));
        assert_string_equal(sb->exec_id, "e-2");
        sbx_state_destroy(sb);
}

static json_t *exec_with(const char *key, json_t *v)
{
        json_t *b = exec_body("sb-1", 1, "e-1");
        json_object_set_new(b, key, v);
        return request("r-1", "sbx.Exec", b);
}

static void test_exec_bounds(void **state)
{
        sbx_state_t *sb = sandbox("sb-1", 1);
        json_t *env     = json_object();
        int i;
        (void)state;

        expect_reject(exec_with("argv", json_array()), sb, "argv is empty");
        expect_reject(exec_with("argv", strings(SBX_INTAKE_MAX_ITEMS + 1, 2)),
                      sb, "argv or env too large");
        expect_reject(exec_with("argv", strings(1, SBX_INTAKE_MAX_ARG + 1)), sb,
                      "argv or env too large");
        for (i = 0; i <= SBX_INTAKE_MAX_ITEMS; i++) {
                char k[16];
                sbx_fmt(k, sizeof(k), "V%d", i);
                json_object_set_new(env, k, json_string("1"));
        }
        expect_reject(exec_with("env", env), sb, "argv or env too large");
        expect_reject(exec_with("timeout_ms", json_integer(0)), sb,
                      "timeout_ms must be 1..3600000");
        expect_reject(exec_with("timeout_ms", json_integer(3600001)), sb,
                      "timeout_ms must be 1..3600000");
        assert_int_equal(sb->phase, SBX_SB_LEASED);
        sbx_state_destroy(sb);
}

static json_t *write_file(const char *path, json_t *content)
{
        return request(
            "r-1", "sbx.WriteFile",
            json_pack("{s:s, s:I, s:s, s:s, s:o, s:i}", "sandbox_id", "sb-1",
                      "lease_version", (json_int_t)1, "exec_id", "w-1", "path",
                      path, "content", content, "mode", 0600));
}

static void test_write_and_read_file(void **state)
{
        sbx_state_t *sb = sandbox("sb-1", 1);
        sbx_event_t *ev;
        char *big;
        (void)state;

        expect_reject(write_file("workspace/a.py", json_string("x")), sb,
                      "path must be absolute");
        expect_reject(write_file("", json_string("x")), sb,
                      "path must be absolute");

        ev = expect_append(
            write_file("/workspace/a.py", json_string("print(1)\n")), sb);
        assert_int_equal(ev->type, SBX_EV_EXEC_REQUESTED);
        assert_int_equal(ev->lease_version, 1);
        assert_string_equal(sbx_event_str(ev, "op"), "write_file");
        assert_string_equal(sbx_event_str(ev, "exec_id"), "w-1");
        assert_string_equal(sbx_event_str(ev, "path"), "/workspace/a.py");
        assert_string_equal(sbx_event_str(ev, "content"), "print(1)\n");
        assert_int_equal(sbx_event_int(ev, "mode", 0), 0600);
        sbx_event_destroy(ev);
        put(sb, SBX_EV_EXEC_FINISHED,
            json_pack("{s:s, s:i}", "exec_id", "w-1", "exit_code", 0));

        ev = expect_append(
            request("r-2", "sbx.ReadFile",
                    json_pack("{s:s, s:I, s:s, s:s}", "sandbox_id", "sb-1",
                              "lease_version", (json_int_t)1, "exec_id", "rd-1",
                              "path", "/workspace/out.csv")),
            sb);
        assert_string_equal(sbx_event_str(ev, "op"), "read_file");
        assert_string_equal(sbx_event_str(ev, "path"), "/workspace/out.csv");
        assert_false(json_is_string(field(ev, "content")));
        sbx_event_destroy(ev);
        put(sb, SBX_EV_EXEC_FINISHED,
            json_pack("{s:s, s:i}", "exec_id", "rd-1", "exit_code", 0));

        /* Files are bounded at 1 MiB, in bytes: the codec's JSON holds
         * bytes as code points, so 0xff takes two UTF-8 bytes and 'a'
         * one, and neither may change the limit. */
        big = repeat('a', SBX_INTAKE_MAX_FILE + 1);
        expect_reject(write_file("/workspace/big", json_string(big)), sb,
                      "file larger than 1048576 bytes");
        free(big);
        big = repeat('a', SBX_INTAKE_MAX_FILE);
        sbx_event_destroy(
            expect_append(write_file("/workspace/big", json_string(big)), sb));
        free(big);
        put(sb, SBX_EV_EXEC_FINISHED,
            json_pack("{s:s, s:i}", "exec_id", "w-1", "exit_code", 0));
        {
                /* 1 MiB of 0xff bytes: 2 MiB of UTF-8 in the JSON. */
                size_t i, n = SBX_INTAKE_MAX_FILE;
                char *ff = sbx_calloc(1, 2 * n + 1);
                for (i = 0; i < n; i++) {
                        ff[2 * i]     = (char)0xc3;
                        ff[2 * i + 1] = (char)0xbf;
                }
                sbx_event_destroy(expect_append(
                    write_file("/workspace/bin", json_string(ff)), sb));
                free(ff);
        }
        sbx_state_destroy(sb);
}

/* ---- Renew, Release, Destroy, Cancel ----------------------------------- */

static json_t *renew(int64_t lv, int64_t extend)
{
        return request(
            "r-1", "sbx.Renew",
            json_pack("{s:s, s:I, s:I}", "sandbox_id", "sb-1", "lease_version",
                      (json_int_t)lv, "extend_seconds", (json_int_t)extend));
}

static void test_renew(void **state)
{
        sbx_state_t *sb = sandbox("sb-1", 3);
        sbx_event_t *ev;
        (void)state;

        expect_reject(renew(3, 4), sb, "extend_seconds must be 5..3600");
        expect_reject(renew(3, 3601), sb, "extend_seconds must be 5..3600");
        expect_reject(renew(2, 60), sb, "stale lease");

        ev = expect_append(renew(3, 600), sb);
        assert_int_equal(ev->type, SBX_EV_LEASE_RENEWED);
        assert_int_equal(ev->lease_version, 3);
        assert_int_equal(sbx_event_int(ev, "expires_at", 0),
                         NOW + 600 * 1000000LL);
        assert_int_equal(sb->lease_expires_at, NOW + 600 * 1000000LL);
        sbx_event_destroy(ev);

        /* A running exec does not stop the holder from renewing. */
        sbx_event_destroy(expect_append(
            request("r-2", "sbx.Exec", exec_body("sb-1", 3, "e-1")), sb));
        sbx_event_destroy(expect_append(renew(3, 60), sb));
        assert_int_equal(sb->phase, SBX_SB_RUNNING);
        assert_int_equal(sb->lease_expires_at, NOW + 60 * 1000000LL);
        sbx_state_destroy(sb);
}

static json_t *release(int64_t lv)
{
        return request(
            "r-1", "sbx.Release",
            json_pack("{s:s, s:I, s:s}", "sandbox_id", "sb-1", "lease_version",
                      (json_int_t)lv, "claim_id", "c-1"));
}

static void test_release(void **state)
{
        sbx_state_t *sb = sandbox("sb-1", 2);
        sbx_event_t *ev;
        (void)state;

        expect_reject(release(1), sb, "stale lease: version 1, current 2");
        ev = expect_append(release(2), sb);
        assert_int_equal(ev->type, SBX_EV_LEASE_RELEASED);
        assert_int_equal(ev->lease_version, 2);
        assert_int_equal(ev->seq, sb->seq);
        sbx_event_destroy(ev);
        assert_int_equal(sb->phase, SBX_SB_SANITIZING);
        assert_null(sb->lease_owner);
        /* The lease is gone: neither a second release nor an exec. */
        expect_reject(release(2), sb, "SANITIZING, not leased");
        expect_reject(request("r-2", "sbx.Exec", exec_body("sb-1", 2, "e-1")),
                      sb, "not leased");
        sbx_state_destroy(sb);
}

static json_t *destroy(const char *sb)
{
        return request("r-1", "sbx.Destroy",
                       json_pack("{s:s, s:s}", "sandbox_id", sb, "reason",
                                 "agent is done"));
}

static void test_destroy(void **state)
{
        sbx_state_t *sb = sandbox("sb-1", 1);
        sbx_event_t *ev;
        (void)state;

        expect_verdict(destroy("sb-1"), NULL, SBX_INTAKE_WAIT);
        ev = expect_append(destroy("sb-1"), sb);
        assert_int_equal(ev->type, SBX_EV_RECYCLE_STARTED);
        assert_string_equal(sbx_event_str(ev, "level"), "destroy");
        assert_string_equal(sbx_event_str(ev, "reason"), "agent is done");
        sbx_event_destroy(ev);
        assert_int_equal(sb->phase, SBX_SB_RECYCLING);
        assert_string_equal(sb->recycle_level, "destroy");
        expect_reject(destroy("sb-1"), sb,
                      "sandbox sb-1 is RECYCLING: cannot destroy it");
        put(sb, SBX_EV_TERMINATED, json_pack("{s:s}", "reason", "destroyed"));
        expect_reject(destroy("sb-1"), sb,
                      "sandbox sb-1 is TERMINATED: cannot destroy it");
        sbx_state_destroy(sb);
}

static json_t *pause_or_resume(const char *cmd, int64_t version)
{
        return request("r-1", cmd,
                       json_pack("{s:s, s:I}", "sandbox_id", "sb-1",
                                 "lease_version", (json_int_t)version));
}

/* Pause freezes an idle sandbox (Hibernated) for the client that held
 * its last lease; Resume thaws it. A leased sandbox is released first. */
static void test_pause_resume(void **state)
{
        sbx_state_t *sb = sandbox("sb-1", 1);
        sbx_event_t *ev;
        (void)state;

        expect_reject(pause_or_resume("sbx.Pause", 1), sb,
                      "sandbox sb-1 is leased: release it, then pause it");
        put(sb, SBX_EV_LEASE_RELEASED, json_pack("{s:s}", "reason", "done"));
        put(sb, SBX_EV_SANITIZED, NULL);
        expect_reject(pause_or_resume("sbx.Pause", 0), sb,
                      "lease_version 0 is not the sandbox's last lease (1)");
        expect_reject(pause_or_resume("sbx.Resume", 1), sb,
                      "sandbox sb-1 is IDLE: cannot resume it");
        ev = expect_append(pause_or_resume("sbx.Pause", 1), sb);
        assert_int_equal(ev->type, SBX_EV_HIBERNATED);
        assert_string_equal(sbx_event_str(ev, "reason"), "paused by client");
        sbx_event_destroy(ev);
        assert_int_equal(sb->phase, SBX_SB_HIBERNATING);
        expect_reject(pause_or_resume("sbx.Pause", 1), sb,
                      "sandbox sb-1 is HIBERNATING: cannot pause it");
        ev = expect_append(pause_or_resume("sbx.Resume", 1), sb);
        assert_int_equal(ev->type, SBX_EV_RESUMED);
        sbx_event_destroy(ev);
        assert_int_equal(sb->phase, SBX_SB_IDLE);
        sbx_state_destroy(sb);
}

static void snapshot_taken(sbx_state_t *sb, const char *error)
{
        put(sb, SBX_EV_SNAPSHOT_TAKEN,
            json_pack("{s:s, s:s, s:I, s:I, s:s?}", "snapshot_id",
                      "snap-0123456789ab", "layer_digest", "sha256:x",
                      "size_bytes", (json_int_t)1, "duration_us", (json_int_t)1,
                      "error", error));
}

/* Snapshot: of a leased sandbox by its holder, of an idle one by its last
 * lease; fenced; never while an exec runs or another snapshot is
 * pending; a failed one is asked for again. */
static void test_snapshot(void **state)
{
        sbx_state_t *sb = sandbox("sb-1", 2);
        sbx_event_t *ev;
        (void)state;

        expect_reject(pause_or_resume("sbx.Snapshot", 1), sb,
                      "stale lease: version 1, current 2");
        ev = expect_append(pause_or_resume("sbx.Snapshot", 2), sb);
        assert_int_equal(ev->type, SBX_EV_SNAPSHOT_REQUESTED);
        assert_int_equal(ev->lease_version, 2);
        assert_string_equal(sbx_event_str(ev, "request_id"), "r-1");
        sbx_event_destroy(ev);
        assert_string_equal(sb->snapshot_pending, "r-1");
        expect_reject(pause_or_resume("sbx.Snapshot", 2), sb,
                      "is still being taken (request r-1)");
        snapshot_taken(sb, "disk full");
        assert_null(sb->snapshot_pending);
        assert_null(sb->last_snapshot);
        ev = expect_append(pause_or_resume("sbx.Snapshot", 2), sb);
        sbx_event_destroy(ev);
        snapshot_taken(sb, NULL);
        assert_string_equal(sb->last_snapshot, "snap-0123456789ab");
        put(sb, SBX_EV_LEASE_RELEASED, json_pack("{s:s}", "reason", "done"));
        expect_reject(pause_or_resume("sbx.Snapshot", 2), sb,
                      "sandbox sb-1 is SANITIZING: cannot snapshot it");
        put(sb, SBX_EV_SANITIZED, NULL);
        expect_reject(pause_or_resume("sbx.Snapshot", 1), sb,
                      "lease_version 1 is not the sandbox's last lease (2)");
        ev = expect_append(pause_or_resume("sbx.Snapshot", 2), sb);
        assert_int_equal(ev->type, SBX_EV_SNAPSHOT_REQUESTED);
        sbx_event_destroy(ev);
        sbx_state_destroy(sb);
}

static json_t *cancel(const char *claim)
{
        return request("r-9", "sbx.Cancel",
                       json_pack("{s:s, s:s}", "claim_id", claim, "reason",
                                 "user gave up"));
}

static void test_cancel(void **state)
{
        sbx_state_t *claim = sbx_state_new(SBX_AGG_CLAIM, "c-1");
        sbx_event_t *ev;
        (void)state;

        expect_verdict(cancel("c-1"), NULL, SBX_INTAKE_WAIT);
        sbx_event_destroy(expect_append(
            request("r-1", "sbx.AcquireSandbox", acquire_body("c-1")), claim));
        expect_reject(request_as("r-9", "globex", "s-1", "sbx.Cancel",
                                 json_pack("{s:s}", "claim_id", "c-1")),
                      claim, "claim c-1 belongs to another tenant");
        ev = expect_append(cancel("c-1"), claim);
        assert_int_equal(ev->type, SBX_EV_CLAIM_CANCELLED);
        assert_int_equal(ev->seq, 2);
        assert_string_equal(ev->correlation_id, "c-1");
        assert_string_equal(sbx_event_str(ev, "reason"), "user gave up");
        sbx_event_destroy(ev);
        assert_int_equal(claim->phase, SBX_CLAIM_CANCELLED);
        expect_reject(cancel("c-1"), claim,
                      "claim c-1 is CANCELLED: cannot cancel it");
        sbx_state_destroy(claim);
}

static void test_unsupported_commands_rejected(void **state)
{
        sbx_state_t *sb = sandbox("sb-1", 1);
        json_t *t       = task("fork it");
        (void)state;

        expect_reject(
            request("r-1", "sbx.Fork",
                    json_pack("{s:s, s:s, s:O}", "snapshot_id", "snap-1",
                              "claim_id", "c-2", "task", t)),
            NULL, "sbx.Fork is not supported");
        assert_int_equal(sb->phase, SBX_SB_LEASED);
        json_decref(t);
        sbx_state_destroy(sb);
}

/*
 * Claims and sandboxes share one id space in the log. A command that
 * names the wrong kind of aggregate (an Exec on a claim id, a Cancel on a
 * sandbox id) is the client's mistake and must be refused, not appended
 * as an event the fold supersedes as wrong_aggregate.
 */
static void test_command_on_the_wrong_kind_of_aggregate_rejected(void **state)
{
        sbx_state_t *claim = sbx_state_new(SBX_AGG_CLAIM, "c-1");
        sbx_state_t *sb    = sandbox("sb-1", 1);
        (void)state;

        sbx_event_destroy(expect_append(
            request("r-1", "sbx.AcquireSandbox", acquire_body("c-1")), claim));
        put(claim, SBX_EV_PLAN_PROPOSED,
            json_pack("{s:s, s:s, s:s, s:{s:s, s:f, s:I, s:I}}", "planner",
                      "rules", "input_hash", "h", "signature", "sig", "intent",
                      "workload", "plain-script", "cpu", 1.0, "memory_mb",
                      (json_int_t)2048, "disk_gb", (json_int_t)10));
        put(claim, SBX_EV_PLAN_APPROVED,
            json_pack("{s:s, s:f, s:I, s:I, s:s, s:s, s:s, s:I}",
                      "resource_class", "python-small", "cpu", 1.0, "memory_mb",
                      (json_int_t)2048, "disk_gb", (json_int_t)10,
                      "network_profile", "none", "template", "host", "runtime",
                      "runc", "ttl_seconds", (json_int_t)1800));
        assert_int_equal(claim->phase, SBX_CLAIM_APPROVED);

        expect_reject(request("r-2", "sbx.Exec", exec_body("c-1", 0, "e-1")),
                      claim, "not a sandbox");
        expect_reject(request("r-3", "sbx.Renew",
                              json_pack("{s:s, s:I}", "sandbox_id", "c-1",
                                        "lease_version", (json_int_t)0)),
                      claim, "not a sandbox");
        expect_reject(request("r-4", "sbx.Destroy",
                              json_pack("{s:s}", "sandbox_id", "c-1")),
                      claim, "not a sandbox");
        expect_reject(cancel("sb-1"), sb, "not a claim");
        assert_int_equal(claim->phase, SBX_CLAIM_APPROVED);
        assert_int_equal(sb->phase, SBX_SB_LEASED);
        sbx_state_destroy(claim);
        sbx_state_destroy(sb);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_acquire_appends_claim_requested),
            cmocka_unit_test(
                test_acquire_resend_ignored_claim_id_reuse_rejected),
            cmocka_unit_test(test_unknown_tenant_rejected),
            cmocka_unit_test(test_acquire_bounds),
            cmocka_unit_test(test_bad_ids_rejected),
            cmocka_unit_test(test_session_id_must_fit_the_envelope),
            cmocka_unit_test(test_exec_on_unknown_sandbox_waits),
            cmocka_unit_test(test_exec_lease_version_fencing),
            cmocka_unit_test(test_exec_from_another_tenant_rejected),
            cmocka_unit_test(test_exec_appends_fenced_exec_requested),
            cmocka_unit_test(test_exec_one_at_a_time),
            cmocka_unit_test(test_exec_bounds),
            cmocka_unit_test(test_write_and_read_file),
            cmocka_unit_test(test_renew),
            cmocka_unit_test(test_release),
            cmocka_unit_test(test_destroy),
            cmocka_unit_test(test_pause_resume),
            cmocka_unit_test(test_snapshot),
            cmocka_unit_test(test_cancel),
            cmocka_unit_test(test_unsupported_commands_rejected),
            cmocka_unit_test(
                test_command_on_the_wrong_kind_of_aggregate_rejected),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
