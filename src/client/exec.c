/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Running a command under a lease, with its output streamed. The reader
 * starts at the end of sbx.lifecycle.v1 and sbx.exec-output.v1 before the
 * Exec is published, so every chunk of the exec is seen: chunks are
 * handed on as they come, in order per stream (a chunk seen twice is
 * dropped, a missing one is an error), and after ExecFinished the call
 * keeps reading until the output_chunks it announces have all arrived,
 * the last of each stream marked eof. An exec whose output was not
 * published in chunks (output_chunks 0) has all of it inline in
 * ExecFinished.
 */
#include <stdlib.h>
#include <string.h>

#include "client/client_int.h"
#include "core/util.h"
#include "kafka/processor.h"

#define EXEC_TIMEOUT_MS 60000
#define GRACE_US        (30 * 1000000LL) /* for the chunks after the end */

struct sbx_run_s {
        json_t *argv, *env;
        char *cwd;
        json_t *stdin_bytes; /* codec bytes, or NULL */
        int64_t timeout_ms;
        sbx_output_cb_t cb;
        void *opaque;
};

struct sbx_result_s {
        char *exec_id, *error, *json;
        int exit_code, signal, timed_out;
        char *out[2];
        size_t len[2];
};

typedef struct exec_s {
        const sbx_run_t *run;
        sbx_result_t *res;
        int64_t lease;
        int finished, expect, got;
        int next_seq[2], eof[2];
} exec_t;

/* Has all the output come: the chunks ExecFinished announced, and the
 * last of each stream that had any? */
static int complete(const exec_t *x)
{
        return x->finished && x->got >= x->expect &&
               (!x->next_seq[0] || x->eof[0]) && (!x->next_seq[1] || x->eof[1]);
}

sbx_run_t *sbx_run_new(const char *const *argv)
{
        sbx_run_t *r = sbx_calloc(1, sizeof(*r));
        r->argv      = json_array();
        r->env       = json_object();
        for (; argv && *argv; argv++)
                json_array_append_new(r->argv, json_string(*argv));
        r->timeout_ms = EXEC_TIMEOUT_MS;
        return r;
}

void sbx_run_destroy(sbx_run_t *r)
{
        if (!r)
                return;
        json_decref(r->argv);
        json_decref(r->env);
        json_decref(r->stdin_bytes);
        free(r->cwd);
        free(r);
}

void sbx_run_set_env(sbx_run_t *r, const char *name, const char *value)
{
        json_object_set_new(r->env, name, json_string(value));
}

void sbx_run_set_cwd(sbx_run_t *r, const char *cwd)
{
        free(r->cwd);
        r->cwd = cwd ? sbx_strdup(cwd) : NULL;
}

void sbx_run_set_stdin(sbx_run_t *r, const void *data, size_t len)
{
        json_decref(r->stdin_bytes);
        r->stdin_bytes = data ? sbx_codec_bytes(data, len) : NULL;
}

void sbx_run_set_timeout_ms(sbx_run_t *r, int64_t timeout_ms)
{
        r->timeout_ms = timeout_ms;
}

void sbx_run_set_output(sbx_run_t *r, sbx_output_cb_t cb, void *opaque)
{
        r->cb     = cb;
        r->opaque = opaque;
}

void sbx_result_destroy(sbx_result_t *r)
{
        if (!r)
                return;
        free(r->exec_id);
        free(r->error);
        free(r->json);
        free(r->out[0]);
        free(r->out[1]);
        free(r);
}

const char *sbx_result_exec_id(const sbx_result_t *r)
{
        return r->exec_id;
}

int sbx_result_exit_code(const sbx_result_t *r)
{
        return r->exit_code;
}

int sbx_result_signal(const sbx_result_t *r)
{
        return r->signal;
}

int sbx_result_timed_out(const sbx_result_t *r)
{
        return r->timed_out;
}

const char *sbx_result_error(const sbx_result_t *r)
{
        return r->error;
}

const char *sbx_result_stdout(const sbx_result_t *r, size_t *ret_len)
{
        *ret_len = r->len[0];
        return r->out[0] ? r->out[0] : "";
}

const char *sbx_result_stderr(const sbx_result_t *r, size_t *ret_len)
{
        *ret_len = r->len[1];
        return r->out[1] ? r->out[1] : "";
}

const char *sbx_result_json(const sbx_result_t *r)
{
        return r->json;
}

/* Hands @p n bytes of stream @p s (0 stdout, 1 stderr) on. */
static void deliver(exec_t *x, int s, const unsigned char *d, size_t n)
{
        sbx_result_t *r = x->res;
        if (x->run->cb) {
                x->run->cb(x->run->opaque, s ? SBX_STDERR : SBX_STDOUT, d, n);
                return;
        }
        r->out[s] = sbx_realloc(r->out[s], r->len[s] + n + 1);
        memcpy(r->out[s] + r->len[s], d, n);
        r->len[s] += n;
        r->out[s][r->len[s]] = '\0';
}

/* Hands a codec bytes value on; 0, or -1 if it is not bytes. */
static int deliver_bytes(exec_t *x, int s, const json_t *v)
{
        unsigned char *d = NULL;
        size_t n         = 0;
        if (sbx_codec_bytes_value(v, &d, &n))
                return -1;
        if (n)
                deliver(x, s, d, n);
        free(d);
        return 0;
}

static int finished(sbx_wait_t *w, exec_t *x, const sbx_event_t *ev)
{
        sbx_result_t *r = x->res;
        json_t *j       = json_deep_copy(ev->payload);
        const char *e   = sbx_event_str(ev, "error");

        r->exit_code = (int)sbx_event_int(ev, "exit_code", -1);
        r->signal    = (int)sbx_event_int(ev, "signal", 0);
        r->timed_out = sbx_event_bool(ev, "timed_out");
        r->error     = e ? sbx_strdup(e) : NULL;
        json_object_del(j, "stdout");
        json_object_del(j, "stderr");
        r->json = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        x->finished = 1;
        x->expect   = (int)sbx_event_int(ev, "output_chunks", 0);
        if (x->expect == 0) {
                deliver_bytes(x, 0, json_object_get(ev->payload, "stdout"));
                deliver_bytes(x, 1, json_object_get(ev->payload, "stderr"));
                return 1;
        }
        if (complete(x))
                return 1;
        w->deadline = sbx_mono_us() + GRACE_US;
        return 0;
}

static int exec_event(sbx_wait_t *w,
                      const sbx_event_t *ev,
                      const sbx_state_t *s)
{
        exec_t *x = w->opaque;
        (void)s;
        if (x->finished)
                return 0;
        switch (ev->type) {
        case SBX_EV_EXEC_REQUESTED:
                if (sbx_streq(sbx_event_str(ev, "exec_id"), x->res->exec_id))
                        w->accepted = 1;
                return 0;
        case SBX_EV_EXEC_FINISHED:
                if (!sbx_streq(sbx_event_str(ev, "exec_id"), x->res->exec_id))
                        return 0;
                return finished(w, x, ev);
        case SBX_EV_SANDBOX_FAILED:
        case SBX_EV_SANDBOX_LOST:
        case SBX_EV_RECYCLE_STARTED:
                return sbx_seterr(w->errstr, w->errstr_size, SBX_ERR_FAILED,
                                  "sandbox %s: %s (%s) before exec %s "
                                  "finished",
                                  w->target, sbx_evtype_name(ev->type),
                                  sbx_event_str(ev, "reason")
                                      ? sbx_event_str(ev, "reason")
                                      : "no reason given",
                                  x->res->exec_id);
        case SBX_EV_LEASE_EXPIRED:
        case SBX_EV_LEASE_RELEASED:
                if (ev->lease_version != x->lease)
                        return 0;
                return sbx_seterr(w->errstr, w->errstr_size, SBX_ERR_FAILED,
                                  "sandbox %s: lease %lld ended (%s) before "
                                  "exec %s finished",
                                  w->target, (long long)x->lease,
                                  sbx_evtype_name(ev->type), x->res->exec_id);
        default:
                return 0;
        }
}

static int exec_output(sbx_wait_t *w,
                       const char *topic,
                       const void *v,
                       size_t len)
{
        exec_t *x = w->opaque;
        json_t *c = NULL;
        int rc    = 0, s, seq;
        (void)topic;

        if (sbx_codec_decode(w->c->codec, SBX_SCHEMA_EXEC_OUTPUT, v, len, &c,
                             NULL, 0))
                return 0;
        if (!sbx_streq(json_string_value(json_object_get(c, "exec_id")),
                       x->res->exec_id) ||
            !sbx_streq(json_string_value(json_object_get(c, "sandbox_id")),
                       w->target))
                goto done;
        s   = sbx_streq(json_string_value(json_object_get(c, "stream")),
                        "stderr");
        seq = (int)json_integer_value(json_object_get(c, "seq"));
        if (seq < x->next_seq[s])
                goto done; /* seen before */
        if (seq > x->next_seq[s] ||
            deliver_bytes(x, s, json_object_get(c, "data"))) {
                rc = sbx_seterr(w->errstr, w->errstr_size, SBX_ERR_IO,
                                "output of exec %s: %s chunk %d came where "
                                "chunk %d was due",
                                x->res->exec_id, s ? "stderr" : "stdout", seq,
                                x->next_seq[s]);
                goto done;
        }
        x->next_seq[s]++;
        x->got++;
        x->eof[s] = json_is_true(json_object_get(c, "eof"));
        if (complete(x))
                rc = 1;
done:
        json_decref(c);
        return rc;
}

sbx_err_t sbx_client_exec(sbx_client_t *c,
                          const sbx_lease_t *l,
                          const sbx_run_t *r,
                          sbx_result_t **ret_result,
                          char *errstr,
                          size_t errstr_size)
{
        sbx_result_t *res = sbx_calloc(1, sizeof(*res));
        exec_t x;
        sbx_wait_t w;
        json_t *body;
        char uuid[37], id[64], what[256];
        sbx_err_t rc;

        if (!json_array_size(r->argv)) {
                sbx_result_destroy(res);
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "exec: no command");
        }
        sbx_uuid(uuid);
        sbx_fmt(id, sizeof(id), "ex-%s", uuid);
        res->exec_id = sbx_strdup(id);
        memset(&x, 0, sizeof(x));
        x.run   = r;
        x.res   = res;
        x.lease = l->version;
        memset(&w, 0, sizeof(w));
        sbx_fmt(what, sizeof(what), "exec %s in sandbox %s to finish", id,
                l->sandbox_id);
        w.c           = c;
        w.target      = l->sandbox_id;
        w.what        = what;
        w.on_event    = exec_event;
        w.on_msg      = exec_output;
        w.opaque      = &x;
        w.errstr      = errstr;
        w.errstr_size = errstr_size;
        body = json_pack("{s:s, s:I, s:s, s:O, s:O, s:s?, s:I}", "sandbox_id",
                         l->sandbox_id, "lease_version", (json_int_t)l->version,
                         "exec_id", id, "argv", r->argv, "env", r->env, "cwd",
                         r->cwd, "timeout_ms", (json_int_t)r->timeout_ms);
        if (r->stdin_bytes)
                json_object_set(body, "stdin", r->stdin_bytes);
        rc = sbx_client_call(&w, "sbx.Exec", body, SBX_TOPIC_OUTPUT,
                             (int)(r->timeout_ms + GRACE_US / 1000));
        if (rc == SBX_ERR_TIMEOUT && x.finished)
                sbx_seterr(errstr, errstr_size, rc,
                           "exec %s ended (exit %d) but only %d of its %d "
                           "output chunks came%s%s",
                           id, res->exit_code, x.got, x.expect,
                           res->error ? ": " : "",
                           res->error ? res->error : "");
        if (rc) {
                sbx_result_destroy(res);
                return rc;
        }
        *ret_result = res;
        return SBX_OK;
}
