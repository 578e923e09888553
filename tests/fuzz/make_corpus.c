/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Writes the seed corpus of the codec fuzz harness into a directory
 * (tests/fuzz/corpus/codec/ is its checked-in output): valid messages of
 * each kind, made with the real encoder, in the harness's input format
 * (fuzz_codec.h): a selector byte, then the Avro body without its header,
 * and two whole messages behind a raw selector. The seeds cover every
 * Avro shape the schemas use: strings, bytes (all 256 values), longs,
 * ints, doubles, booleans, enums, nullable and named unions, arrays of
 * strings and of records, maps, nested records. Fixed ids and times keep
 * the output the same from run to run. Usage: make_corpus DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "codec/codec.h"
#include "core/event.h"
#include "fuzz_codec.h"

#define T0 1789192000000000LL /* µs */

static const char *out_dir;

static void die_if(int cond, const char *what)
{
        if (cond) {
                fprintf(stderr, "make_corpus: %s\n", what);
                exit(1);
        }
}

/* Avro's JSON form of bytes: one code point per byte. */
static json_t *bytes_json(const unsigned char *b, size_t n)
{
        char *u = malloc(2 * n + 1);
        size_t i, len = 0;
        json_t *s;

        die_if(!u, "out of memory");
        for (i = 0; i < n; i++) {
                if (b[i] < 0x80)
                        u[len++] = (char)b[i];
                else {
                        u[len++] = (char)(0xC0 | (b[i] >> 6));
                        u[len++] = (char)(0x80 | (b[i] & 0x3F));
                }
        }
        s = json_stringn(u, len);
        free(u);
        die_if(!s, "bytes_json");
        return s;
}

/* Writes @p selector and @p len bytes of @p body as file @p name. */
static void put(const char *name,
                uint8_t selector,
                const unsigned char *body,
                size_t len)
{
        char path[4096];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", out_dir, name);
        f = fopen(path, "wb");
        die_if(!f, path);
        die_if(fputc(selector, f) == EOF || fwrite(body, 1, len, f) != len ||
                   fclose(f),
               path);
        printf("%s (%zu bytes)\n", path, len + 1);
}

/* A framed message as a seed: body only, or whole behind a raw selector. */
static void put_message(const char *name,
                        sbx_schema_kind_t kind,
                        int raw,
                        const unsigned char *buf,
                        size_t len)
{
        die_if(len < SBX_FUZZ_HEADER_LEN, "short message");
        if (raw)
                put(name, (uint8_t)(SBX_FUZZ_RAW | kind), buf, len);
        else
                put(name, (uint8_t)kind, buf + SBX_FUZZ_HEADER_LEN,
                    len - SBX_FUZZ_HEADER_LEN);
}

/* Encodes an event of @p type (payload stolen) and writes it. */
static void put_event(const sbx_codec_t *c,
                      const char *name,
                      int raw,
                      sbx_evtype_t type,
                      const char *aggregate_id,
                      int64_t seq,
                      int64_t lease_version,
                      json_t *payload)
{
        sbx_event_t *ev;
        unsigned char *buf;
        size_t len;
        char err[512];

        die_if(!payload, name);
        ev = sbx_event_new(type, aggregate_id, seq, payload);
        sbx_event_set(&ev->event_id, "6f1c2a4e-1d2b-4c3d-9e8f-0a1b2c3d4e5f");
        sbx_event_set(&ev->producer, "executor/node-1");
        sbx_event_set(&ev->correlation_id, "claim-1");
        sbx_event_set(&ev->causation_id,
                      "0d9e8f7a-6b5c-4d3e-8f1a-2b3c4d5e6f70");
        sbx_event_set(&ev->tenant_id, "acme");
        sbx_event_set(&ev->session_id, "session-9");
        ev->occurred_at   = T0;
        ev->lease_version = lease_version;
        if (sbx_event_encode(c, ev, &buf, &len, err, sizeof(err))) {
                fprintf(stderr, "make_corpus: %s: %s\n", name, err);
                exit(1);
        }
        put_message(name, SBX_SCHEMA_EVENT, raw, buf, len);
        free(buf);
        sbx_event_destroy(ev);
}

/* Encodes @p value (stolen) as @p kind and writes it. */
static void put_value(const sbx_codec_t *c,
                      const char *name,
                      sbx_schema_kind_t kind,
                      int raw,
                      json_t *value)
{
        unsigned char *buf;
        size_t len;
        char err[512];

        die_if(!value, name);
        if (sbx_codec_encode(c, kind, value, &buf, &len, err, sizeof(err))) {
                fprintf(stderr, "make_corpus: %s: %s\n", name, err);
                exit(1);
        }
        put_message(name, kind, raw, buf, len);
        free(buf);
        json_decref(value);
}

static json_t *task(void)
{
        return json_pack(
            "{s:s, s:[s,s], s:[s], s:[s,s], s:[{s:s, s:s, s:s}, {s:s}],"
            " s:I, s:I, s:I, s:I, s:b, s:b, s:b, s:s, s:s}",
            "text", "fix the failing test in tests/test_parser.py", "plan",
            "read the test", "run pytest", "tool_calls", "pytest -x",
            "languages", "python", "c", "packages", "name", "pytest",
            "ecosystem", "pip", "constraint", ">=7", "name", "numpy",
            "repo_size_mb", (json_int_t)120, "data_size_mb", (json_int_t)0,
            "workspace_size_mb", (json_int_t)300, "expected_duration_s",
            (json_int_t)600, "needs_browser", 0, "needs_gpu", 0,
            "needs_compile", 1, "network", "pypi-readonly", "risk", "low");
}

static void events(const sbx_codec_t *c)
{
        unsigned char all[256];
        size_t i;

        for (i = 0; i < sizeof(all); i++)
                all[i] = (unsigned char)i;

        put_event(
            c, "event-lease-granted", 0, SBX_EV_LEASE_GRANTED, "sb-1028", 3, 42,
            json_pack("{s:s, s:I, s:I, s:b}", "owner", "session-9/tool-call-18",
                      "lease_version", (json_int_t)42, "expires_at",
                      (json_int_t)1789192300, "reuse", 1));
        put_event(
            c, "event-exec-finished-bytes", 0, SBX_EV_EXEC_FINISHED, "sb-1028",
            9, 42,
            json_pack(
                "{s:s, s:i, s:i, s:b, s:o, s:o, s:i,"
                " s:{s:I, s:I, s:I, s:I, s:I, s:b, s:i}, s:s}",
                "exec_id", "x-17", "exit_code", -1, "signal", 9, "timed_out", 1,
                "stdout", bytes_json(all, sizeof(all)), "stderr",
                bytes_json((const unsigned char *)"err\n\0\xff", 6),
                "output_chunks", 2, "usage", "wall_us", (json_int_t)1500000,
                "cpu_user_us", (json_int_t)900000, "cpu_sys_us",
                (json_int_t)100000, "peak_memory_bytes", (json_int_t)268435456,
                "max_rss_kb", (json_int_t)262144, "oom_killed", 1, "pids_peak",
                31, "error", "killed by the OOM killer"));
        put_event(c, "event-claim-requested-task", 0, SBX_EV_CLAIM_REQUESTED,
                  "claim-1", 1, SBX_NO_LEASE,
                  json_pack("{s:s, s:s, s:o, s:s, s:I, s:I, s:n, s:s}",
                            "request_id", "req-1", "user_id", "u-7", "task",
                            task(), "requested_class", "medium", "ttl_seconds",
                            (json_int_t)3600, "lease_seconds", (json_int_t)120,
                            "network_profile", "secret_scope", "none"));
        put_event(
            c, "event-environment-updated-map", 0, SBX_EV_ENVIRONMENT_UPDATED,
            "sb-1028", 12, SBX_NO_LEASE,
            json_pack("{s:{s:s, s:{s:s, s:s}, s:s, s:n, s:s,"
                      " s:[{s:s, s:s, s:s}], s:s, s:[s, s], s:i, s:s}}",
                      "manifest", "template_digest", "sha256:ab12", "runtimes",
                      "python", "3.11.2", "node", "20.11", "pip_lock_hash",
                      "c0ffee", "npm_lock_hash", "apt_state_hash", "apt-1",
                      "installed_capabilities", "name", "numpy", "version",
                      "1.26.4", "ecosystem", "pip", "workspace_id", "ws-3",
                      "dirty_paths", "/work/a.py", "/tmp/x", "dirty_level", 2,
                      "fingerprint", "fp-9"));
        put_event(
            c, "event-plan-proposed-doubles", 0, SBX_EV_PLAN_PROPOSED,
            "claim-1", 2, SBX_NO_LEASE,
            json_pack("{s:s, s:n, s:s, s:s, s:{s:s, s:s, s:f, s:I, s:I,"
                      " s:b, s:b, s:s, s:s, s:s, s:I, s:f, s:s}}",
                      "planner", "rules-v1", "fallback_reason", "input_hash",
                      "h1", "signature", "sig", "intent", "workload",
                      "python-test", "resource_class", "small", "cpu", 1.5,
                      "memory_mb", (json_int_t)2048, "disk_gb", (json_int_t)10,
                      "requires_browser", 0, "requires_gpu", 0,
                      "network_profile", "pypi-readonly", "template", "py311",
                      "runtime", "runc", "ttl_seconds", (json_int_t)1800,
                      "confidence", 0.75, "reason", "pytest in plan"));
        put_event(c, "event-terminated-union-record", 0, SBX_EV_TERMINATED,
                  "sb-1028", 20, SBX_NO_LEASE,
                  json_pack("{s:s, s:{s:I, s:b}}", "reason", "ttl", "usage",
                            "wall_us", (json_int_t)7, "oom_killed", 0));
        put_event(c, "event-request-rejected", 0, SBX_EV_REQUEST_REJECTED,
                  "req-2", 1, SBX_NO_LEASE,
                  json_pack("{s:s, s:s, s:[s, s], s:s}", "request_id", "req-2",
                            "command", "Exec", "reasons", "stale lease",
                            "no such sandbox", "target_id", "sb-9"));
        put_event(
            c, "raw-event-lease-granted", 1, SBX_EV_LEASE_GRANTED, "sb-1028", 4,
            43,
            json_pack("{s:s, s:I, s:I}", "owner", "claim-2", "lease_version",
                      (json_int_t)43, "expires_at", (json_int_t)1789192600));
}

static void requests(const sbx_codec_t *c)
{
        static const unsigned char script[] =
            "#!/bin/sh\necho \xc3\xa9\x00\xfe\n";

        put_value(c, "request-acquire-sandbox", SBX_SCHEMA_REQUEST, 0,
                  json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:{s:{s:s, s:o,"
                            " s:n, s:I}}}",
                            "request_id", "req-1", "tenant_id", "acme",
                            "session_id", "session-9", "user_id", "u-7",
                            "client", "sbx-py/0.1", "occurred_at",
                            (json_int_t)T0, "command", "sbx.AcquireSandbox",
                            "claim_id", "claim-1", "task", task(),
                            "requested_class", "ttl_seconds", (json_int_t)900));
        put_value(
            c, "request-exec-map-bytes", SBX_SCHEMA_REQUEST, 0,
            json_pack("{s:s, s:s, s:n, s:I, s:{s:{s:s, s:I, s:s,"
                      " s:[s, s, s], s:{s:s, s:s}, s:s, s:o, s:I}}}",
                      "request_id", "req-3", "tenant_id", "acme", "session_id",
                      "occurred_at", (json_int_t)T0, "command", "Exec",
                      "sandbox_id", "sb-1028", "lease_version", (json_int_t)42,
                      "exec_id", "x-18", "argv", "python", "-c", "print(1)",
                      "env", "PATH", "/usr/bin", "LANG", "C.UTF-8", "cwd",
                      "/work", "stdin",
                      bytes_json((const unsigned char *)"1\n\0", 3),
                      "timeout_ms", (json_int_t)30000));
        put_value(
            c, "request-write-file", SBX_SCHEMA_REQUEST, 0,
            json_pack("{s:s, s:s, s:I, s:{s:{s:s, s:I, s:s, s:s, s:o,"
                      " s:i}}}",
                      "request_id", "req-4", "tenant_id", "acme", "occurred_at",
                      (json_int_t)T0, "command", "sbx.WriteFile", "sandbox_id",
                      "sb-1028", "lease_version", (json_int_t)42, "exec_id",
                      "w-1", "path", "/work/run.sh", "content",
                      bytes_json(script, sizeof(script) - 1), "mode", 0755));
}

static void node_status(const sbx_codec_t *c)
{
        json_t *pool = json_pack(
            "{s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:i}", "pool",
            "py311-small", "runtime", "runc", "resource_class", "small",
            "template", "py311", "ready", 3, "provisioning", 1, "leased", 5,
            "pool_min", 2, "pool_max", 10, "buffer_min", 1, "buffer_max", 4);
        json_t *node = json_pack(
            "{s:s, s:I, s:b, s:b, s:f, s:I, s:I, s:i, s:f, s:I, s:i, s:[o, "
            "{s:s,"
            " s:s, s:s, s:s}], s:[s], s:[s, s], s:[s], s:i, s:I}",
            "node_id", "node-1", "at", (json_int_t)T0, "healthy", 1, "draining",
            0, "cpu_capacity", 16.0, "memory_mb_capacity", (json_int_t)65536,
            "disk_gb_capacity", (json_int_t)500, "max_sandboxes", 40,
            "cpu_committed", 6.25, "memory_mb_committed", (json_int_t)20480,
            "sandboxes", 9, "pools", pool, "pool", "node-gpu", "runtime",
            "runsc", "resource_class", "gpu", "template", "cuda12", "templates",
            "sha256:ab12", "snapshots", "snap-1", "snap-2", "runtimes", "runc",
            "recent_ooms", 1, "seq", (json_int_t)77);

        put_value(c, "node-status", SBX_SCHEMA_NODE_STATUS, 0, json_copy(node));
        put_value(c, "raw-node-status", SBX_SCHEMA_NODE_STATUS, 1, node);
}

int main(int argc, char **argv)
{
        sbx_codec_t *c;
        char err[512];

        if (argc != 2) {
                fprintf(stderr, "usage: %s DIR\n", argv[0]);
                return 2;
        }
        out_dir = argv[1];
        c       = sbx_codec_new(err, sizeof(err));
        if (!c) {
                fprintf(stderr, "make_corpus: %s\n", err);
                return 1;
        }
        events(c);
        requests(c);
        node_status(c);
        sbx_codec_destroy(c);
        return 0;
}
