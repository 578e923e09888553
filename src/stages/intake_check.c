/* SPDX-License-Identifier: Apache-2.0 */
/*
 * intake's pure decision: a client command against the folded state of
 * the aggregate it names. Everything a client sends is untrusted: sizes
 * are bounded, ids are plain, a sandbox is only touched by its own tenant
 * and with the current lease version. A state that looks too old to judge
 * (unknown sandbox, lease version from the future) answers WAIT, so a
 * client that saw an event before intake did is not refused for it.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "stages/intake.h"

static int id_ok(const char *s)
{
        size_t n = 0;
        if (!s || !*s)
                return 0;
        for (; *s; s++, n++)
                if (!isalnum((unsigned char)*s) && !strchr("._:-", *s))
                        return 0;
        return n <= 128;
}

static const char *str(const json_t *o, const char *k)
{
        return json_string_value(json_object_get(o, k));
}

static json_int_t num(const json_t *o, const char *k)
{
        return json_integer_value(json_object_get(o, k));
}

/* The length of a codec "bytes" value: its code points (U+0000..U+00FF),
 * not the one or two bytes each takes in UTF-8. */
static size_t bytes_len(const json_t *v)
{
        const char *p = json_string_value(v);
        size_t i, n = 0, len = json_string_length(v);
        for (i = 0; p && i < len; i++)
                n += ((unsigned char)p[i] & 0xc0) != 0x80;
        return n;
}

/* Checks an array of strings: count and each length. */
static int strings_ok(const json_t *a, size_t max_items, size_t max_len)
{
        size_t i;
        if (json_array_size(a) > max_items)
                return 0;
        for (i = 0; i < json_array_size(a); i++)
                if (json_string_length(json_array_get(a, i)) > max_len)
                        return 0;
        return 1;
}

const char *sbx_intake_target(const json_t *req)
{
        const json_t *cmd = json_object_get(req, "command"), *body;
        const char *name;
        json_object_foreach((json_t *)cmd, name, body)
        {
                if (!strcmp(name, "sbx.AcquireSandbox") ||
                    !strcmp(name, "sbx.Cancel") || !strcmp(name, "sbx.Fork"))
                        return str(body, "claim_id");
                return str(body, "sandbox_id");
        }
        return NULL;
}

static sbx_intake_verdict_t reject(char *reason,
                                   size_t size,
                                   const char *fmt,
                                   ...) __attribute__((format(printf, 3, 4)));

static sbx_intake_verdict_t reject(char *reason,
                                   size_t size,
                                   const char *fmt,
                                   ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(reason, size, fmt, ap);
        va_end(ap);
        return SBX_INTAKE_REJECT;
}

static sbx_event_t *new_event(const json_t *req,
                              sbx_evtype_t t,
                              const char *id,
                              int64_t seq,
                              json_t *payload)
{
        sbx_event_t *ev     = sbx_event_new(t, id, seq, payload);
        const char *session = str(req, "session_id");
        sbx_event_set(&ev->tenant_id, str(req, "tenant_id"));
        sbx_event_set(&ev->session_id, session);
        return ev;
}

static sbx_intake_verdict_t acquire(const json_t *req,
                                    const json_t *c,
                                    const sbx_state_t *st,
                                    char *reason,
                                    size_t rs,
                                    sbx_event_t **ret)
{
        const json_t *task = json_object_get(c, "task");
        const char *claim  = str(c, "claim_id");
        json_t *p;
        sbx_event_t *ev;

        if (json_string_length(json_object_get(task, "text")) >
            SBX_INTAKE_MAX_TEXT)
                return reject(reason, rs, "task.text longer than %d bytes",
                              SBX_INTAKE_MAX_TEXT);
        if (!strings_ok(json_object_get(task, "plan"), SBX_INTAKE_MAX_ITEMS,
                        4096) ||
            !strings_ok(json_object_get(task, "tool_calls"),
                        SBX_INTAKE_MAX_ITEMS, 4096) ||
            json_array_size(json_object_get(task, "packages")) >
                SBX_INTAKE_MAX_ITEMS)
                return reject(reason, rs,
                              "task.plan, tool_calls or packages too large "
                              "(max %d items of 4 KiB)",
                              SBX_INTAKE_MAX_ITEMS);
        if (num(c, "ttl_seconds") < 1 || num(c, "ttl_seconds") > 86400)
                return reject(reason, rs, "ttl_seconds must be 1..86400");
        if (num(c, "lease_seconds") < 5 || num(c, "lease_seconds") > 3600)
                return reject(reason, rs, "lease_seconds must be 5..3600");
        if (st && st->seq > 0) {
                if (st->request_id &&
                    !strcmp(st->request_id, str(req, "request_id")))
                        return SBX_INTAKE_IGNORE; /* a resend */
                return reject(reason, rs,
                              "claim_id %s is already used by request %s",
                              claim, st->request_id ? st->request_id : "?");
        }
        p = json_deep_copy(c);
        json_object_del(p, "claim_id");
        json_object_set_new(p, "request_id",
                            json_string(str(req, "request_id")));
        json_object_set_new(p, "user_id", json_string(str(req, "user_id")));
        ev = new_event(req, SBX_EV_CLAIM_REQUESTED, claim, 1, p);
        sbx_event_set(&ev->correlation_id, claim);
        *ret = ev;
        return SBX_INTAKE_APPEND;
}

/* Common checks of a command on a leased sandbox. */
static sbx_intake_verdict_t leased(const json_t *req,
                                   const json_t *c,
                                   const sbx_state_t *st,
                                   int running_ok,
                                   char *reason,
                                   size_t rs)
{
        int64_t lv = num(c, "lease_version");
        if (!st || st->seq == 0)
                return SBX_INTAKE_WAIT;
        if (strcmp(st->tenant_id ? st->tenant_id : "", str(req, "tenant_id")))
                return reject(reason, rs,
                              "sandbox %s belongs to another tenant", st->id);
        if (st->aggregate != SBX_AGG_SANDBOX)
                return reject(reason, rs, "%s is not a sandbox", st->id);
        if (lv > st->lease_version)
                return SBX_INTAKE_WAIT; /* intake has not seen that grant yet */
        if (lv < st->lease_version)
                return reject(reason, rs,
                              "stale lease: version %lld, current %lld",
                              (long long)lv, (long long)st->lease_version);
        if (st->phase == SBX_SB_RUNNING && !running_ok)
                return reject(reason, rs,
                              "sandbox %s is running exec %s: one at a time",
                              st->id, st->exec_id ? st->exec_id : "?");
        if (st->phase != SBX_SB_LEASED && st->phase != SBX_SB_RUNNING)
                return reject(reason, rs, "sandbox %s is %s, not leased",
                              st->id,
                              sbx_phase_name(SBX_AGG_SANDBOX, st->phase));
        return SBX_INTAKE_APPEND;
}

static sbx_event_t *fenced(const json_t *req,
                           const sbx_state_t *st,
                           sbx_evtype_t t,
                           json_t *payload)
{
        sbx_event_t *ev   = new_event(req, t, st->id, st->seq + 1, payload);
        ev->lease_version = st->lease_version;
        sbx_event_set(&ev->correlation_id,
                      st->lease_owner ? st->lease_owner : st->id);
        return ev;
}

static sbx_intake_verdict_t exec(const json_t *req,
                                 const char *cmd,
                                 const json_t *c,
                                 const sbx_state_t *st,
                                 char *reason,
                                 size_t rs,
                                 sbx_event_t **ret)
{
        sbx_intake_verdict_t v;
        const char *exec_id = str(c, "exec_id");
        json_t *p;

        if (!id_ok(exec_id))
                return reject(reason, rs,
                              "exec_id must be 1..128 of "
                              "[A-Za-z0-9._:-]");
        if (!strcmp(cmd, "sbx.Exec")) {
                const json_t *argv = json_object_get(c, "argv");
                if (json_array_size(argv) == 0)
                        return reject(reason, rs, "argv is empty");
                if (!strings_ok(argv, SBX_INTAKE_MAX_ITEMS,
                                SBX_INTAKE_MAX_ARG) ||
                    json_object_size(json_object_get(c, "env")) >
                        SBX_INTAKE_MAX_ITEMS)
                        return reject(reason, rs,
                                      "argv or env too large (max %d items "
                                      "of %d bytes)",
                                      SBX_INTAKE_MAX_ITEMS, SBX_INTAKE_MAX_ARG);
                if (num(c, "timeout_ms") < 1 || num(c, "timeout_ms") > 3600000)
                        return reject(reason, rs,
                                      "timeout_ms must be 1..3600000");
        } else {
                const char *path = str(c, "path");
                if (!path || path[0] != '/' || strlen(path) > 4096)
                        return reject(reason, rs,
                                      "path must be absolute, at most 4096 "
                                      "bytes");
                if (bytes_len(json_object_get(c, "content")) >
                    SBX_INTAKE_MAX_FILE)
                        return reject(reason, rs, "file larger than %d bytes",
                                      SBX_INTAKE_MAX_FILE);
        }
        v = leased(req, c, st, 0, reason, rs);
        if (v != SBX_INTAKE_APPEND)
                return v;
        p = json_pack("{s:s, s:s}", "exec_id", exec_id, "request_id",
                      str(req, "request_id"));
        if (!strcmp(cmd, "sbx.Exec")) {
                json_object_set_new(p, "op", json_string("exec"));
                json_object_set(p, "argv", json_object_get(c, "argv"));
                json_object_set(p, "env", json_object_get(c, "env"));
                json_object_set(p, "cwd", json_object_get(c, "cwd"));
                json_object_set(p, "stdin", json_object_get(c, "stdin"));
                json_object_set(p, "timeout_ms",
                                json_object_get(c, "timeout_ms"));
        } else {
                int write = !strcmp(cmd, "sbx.WriteFile");
                json_object_set_new(
                    p, "op", json_string(write ? "write_file" : "read_file"));
                json_object_set(p, "path", json_object_get(c, "path"));
                if (write) {
                        json_object_set(p, "content",
                                        json_object_get(c, "content"));
                        json_object_set(p, "mode", json_object_get(c, "mode"));
                }
        }
        *ret = fenced(req, st, SBX_EV_EXEC_REQUESTED, p);
        return SBX_INTAKE_APPEND;
}

/* A command that moves an aggregate of the tenant's (@p st) with event
 * @p t: it waits until the aggregate exists, then refuses another
 * tenant's, another kind's, or a move its phase does not allow (@p verb
 * says what the client asked, for the reason).
 * @p payload is stolen. */
static sbx_intake_verdict_t owned_move(const json_t *req,
                                       const sbx_state_t *st,
                                       sbx_aggregate_t agg,
                                       sbx_evtype_t t,
                                       const char *verb,
                                       json_t *payload,
                                       char *reason,
                                       size_t rs,
                                       sbx_event_t **ret)
{
        const char *what       = agg == SBX_AGG_CLAIM ? "claim" : "sandbox";
        sbx_intake_verdict_t v = SBX_INTAKE_APPEND;

        if (!st || st->seq == 0)
                v = SBX_INTAKE_WAIT;
        else if (strcmp(st->tenant_id ? st->tenant_id : "",
                        str(req, "tenant_id")))
                v = reject(reason, rs, "%s %s belongs to another tenant", what,
                           st->id);
        else if (st->aggregate != agg)
                v = reject(reason, rs, "%s is not a %s", st->id, what);
        else if (sbx_fsm_next(agg, st->phase, t, 0) < 0)
                v = reject(reason, rs, "%s %s is %s: cannot %s it", what,
                           st->id, sbx_phase_name(agg, st->phase), verb);
        if (v != SBX_INTAKE_APPEND) {
                json_decref(payload);
                return v;
        }
        *ret = new_event(req, t, st->id, st->seq + 1, payload);
        sbx_event_set(&(*ret)->correlation_id,
                      agg == SBX_AGG_CLAIM ? st->id : st->correlation_id);
        return SBX_INTAKE_APPEND;
}

/* An idle sandbox's command names its last lease: 0 (and @p reason)
 * if @p c's lease_version is another. A state not seen yet passes. */
static int last_lease(const json_t *c,
                      const sbx_state_t *st,
                      char *reason,
                      size_t rs)
{
        if (!st || st->seq == 0 || st->aggregate != SBX_AGG_SANDBOX ||
            num(c, "lease_version") == st->lease_version)
                return 1;
        reject(reason, rs,
               "lease_version %lld is not the sandbox's last lease "
               "(%lld)",
               (long long)num(c, "lease_version"),
               (long long)st->lease_version);
        return 0;
}

/*
 * sbx.Snapshot of a sandbox that is leased (by the holder's lease) or
 * idle (by its last lease, as pause): SnapshotRequested, fenced, naming
 * the request. One at a time, and not while an exec runs.
 */
static sbx_intake_verdict_t snapshot(const json_t *req,
                                     const json_t *c,
                                     const sbx_state_t *st,
                                     char *reason,
                                     size_t rs,
                                     sbx_event_t **ret)
{
        sbx_intake_verdict_t v;

        if (st && st->phase == SBX_SB_IDLE && !last_lease(c, st, reason, rs))
                return SBX_INTAKE_REJECT;
        if (st && st->snapshot_pending)
                return reject(reason, rs,
                              "a snapshot of %s is still being taken (request "
                              "%s)",
                              st->id, st->snapshot_pending);
        if (st && st->seq > 0 && st->phase == SBX_SB_RUNNING)
                return reject(reason, rs,
                              "sandbox %s is running exec %s: snapshot it "
                              "when the exec is done",
                              st->id, st->exec_id ? st->exec_id : "?");
        if (st && st->seq > 0 && st->phase == SBX_SB_LEASED &&
            (v = leased(req, c, st, 0, reason, rs)) != SBX_INTAKE_APPEND)
                return v;
        v = owned_move(
            req, st, SBX_AGG_SANDBOX, SBX_EV_SNAPSHOT_REQUESTED, "snapshot",
            json_pack("{s:s, s:s}", "request_id", str(req, "request_id"),
                      "reason", "snapshot by client"),
            reason, rs, ret);
        if (v == SBX_INTAKE_APPEND)
                (*ret)->lease_version = st->lease_version;
        return v;
}

sbx_intake_verdict_t sbx_intake_check(const json_t *req,
                                      const sbx_state_t *st,
                                      int tenant_known,
                                      int64_t now_us,
                                      sbx_event_t **ret,
                                      char *reason,
                                      size_t rs)
{
        const json_t *cmd = json_object_get(req, "command"), *c = NULL;
        const json_t *session;
        const char *name = NULL, *target = sbx_intake_target(req);
        sbx_intake_verdict_t v;

        json_object_foreach((json_t *)cmd, name, c) break;
        if (!name || !json_is_object(c))
                return reject(reason, rs, "no command");
        if (!id_ok(str(req, "request_id")))
                return reject(reason, rs,
                              "request_id must be 1..128 of "
                              "[A-Za-z0-9._:-]");
        if (!tenant_known)
                return reject(reason, rs, "unknown tenant '%s'",
                              str(req, "tenant_id"));
        if (!id_ok(target))
                return reject(reason, rs,
                              "target id must be 1..128 of "
                              "[A-Za-z0-9._:-]");
        /* The session goes into every event's envelope, where readers
         * refuse ids over SBX_MAX_ID_LEN; and "" would be one session
         * shared by every client that sends it. */
        session = json_object_get(req, "session_id");
        if (session && !json_is_null(session) &&
            !id_ok(json_string_value(session)))
                return reject(reason, rs,
                              "session_id must be null or 1..128 "
                              "of [A-Za-z0-9._:-]");
        if (!strcmp(name, "sbx.AcquireSandbox"))
                return acquire(req, c, st, reason, rs, ret);
        if (!strcmp(name, "sbx.Exec") || !strcmp(name, "sbx.WriteFile") ||
            !strcmp(name, "sbx.ReadFile"))
                return exec(req, name, c, st, reason, rs, ret);
        if (!strcmp(name, "sbx.Renew")) {
                int64_t ext = num(c, "extend_seconds");
                if (ext < 5 || ext > 3600)
                        return reject(reason, rs,
                                      "extend_seconds must be 5..3600");
                if ((v = leased(req, c, st, 1, reason, rs)) !=
                    SBX_INTAKE_APPEND)
                        return v;
                *ret = fenced(req, st, SBX_EV_LEASE_RENEWED,
                              json_pack("{s:I}", "expires_at",
                                        (json_int_t)(now_us + ext * 1000000)));
                return SBX_INTAKE_APPEND;
        }
        if (!strcmp(name, "sbx.Release")) {
                if ((v = leased(req, c, st, 1, reason, rs)) !=
                    SBX_INTAKE_APPEND)
                        return v;
                *ret =
                    fenced(req, st, SBX_EV_LEASE_RELEASED,
                           json_pack("{s:s}", "reason", "released by client"));
                return SBX_INTAKE_APPEND;
        }
        if (!strcmp(name, "sbx.Destroy"))
                return owned_move(req, st, SBX_AGG_SANDBOX,
                                  SBX_EV_RECYCLE_STARTED, "destroy",
                                  json_pack("{s:s, s:s}", "level", "destroy",
                                            "reason", str(c, "reason")),
                                  reason, rs, ret);
        if (!strcmp(name, "sbx.Cancel"))
                return owned_move(
                    req, st, SBX_AGG_CLAIM, SBX_EV_CLAIM_CANCELLED, "cancel",
                    json_pack("{s:s}", "reason", str(c, "reason")), reason, rs,
                    ret);
        if (!strcmp(name, "sbx.Pause") || !strcmp(name, "sbx.Resume")) {
                int pause = !strcmp(name, "sbx.Pause");
                if (!last_lease(c, st, reason, rs))
                        return SBX_INTAKE_REJECT;
                if (pause && st && st->seq > 0 &&
                    (st->phase == SBX_SB_LEASED || st->phase == SBX_SB_RUNNING))
                        return reject(reason, rs,
                                      "sandbox %s is leased: release it, "
                                      "then pause it",
                                      st->id);
                return owned_move(
                    req, st, SBX_AGG_SANDBOX,
                    pause ? SBX_EV_HIBERNATED : SBX_EV_RESUMED,
                    pause ? "pause" : "resume",
                    json_pack("{s:s}", "reason",
                              pause ? "paused by client" : "resumed by client"),
                    reason, rs, ret);
        }
        if (!strcmp(name, "sbx.Snapshot"))
                return snapshot(req, c, st, reason, rs, ret);
        return reject(reason, rs,
                      "%s is not supported by this version of sbx yet", name);
}
