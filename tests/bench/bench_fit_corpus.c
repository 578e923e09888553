/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The planner-fit corpus and sandbox box of bench_fit.h. A workload file
 * is a script with a #! line and a comment header ("# key: value", or
 * "// key: value" for JavaScript) of keys does, task (required), tool,
 * plan, lang (repeatable), data_mb, duration_s and needs (a host path the
 * workload cannot run without); an indented comment line continues the
 * previous value. The box writes the script into the sandbox's /tmp the
 * way the executor's write_file op does (dd, the content on stdin), then
 * runs it with its interpreter; nothing of the host but the read-only
 * template is visible to it.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/client.h"
#include "bench_fit.h"
#include "core/util.h"
#include "runtime/runtime.h"
#include "runtime/template.h"

#define FILE_MAX    (64 * 1024)
#define DEADLINE_MS 120000
#define TMP_MB      1024 /* /tmp is tmpfs: what lands there is charged */
#define ID_PREFIX   "fit-"

struct fit_box_s {
        sbx_runtime_t *rt;
        sbx_template_t *tmpl;
        char *state, *agent;
        long next;
};

static int hdr_line(const char *s, const char **ret_text)
{
        if (!strncmp(s, "//", 2))
                s += 2;
        else if (*s == '#')
                s++;
        else
                return 0;
        *ret_text = s;
        return 1;
}

/* Applies one "key: value" of a header to @p w; -1 for an unknown key. */
static int hdr_apply(fit_workload_t *w, const char *key, const char *val)
{
        static const char *const lists[][2] = {
            {"tool", "tool_calls"}, {"plan", "plan"}, {"lang", "languages"}};
        size_t i;

        for (i = 0; i < SBX_ARRAY_SIZE(lists); i++) {
                if (strcmp(key, lists[i][0]))
                        continue;
                if (!json_object_get(w->task, lists[i][1]))
                        json_object_set_new(w->task, lists[i][1], json_array());
                json_array_append_new(json_object_get(w->task, lists[i][1]),
                                      json_string(val));
                return 0;
        }
        if (!strcmp(key, "task"))
                json_object_set_new(w->task, "text", json_string(val));
        else if (!strcmp(key, "data_mb"))
                json_object_set_new(w->task, "data_size_mb",
                                    json_integer(atoll(val)));
        else if (!strcmp(key, "duration_s"))
                json_object_set_new(w->task, "expected_duration_s",
                                    json_integer(atoll(val)));
        else if (!strcmp(key, "does"))
                w->does = sbx_strdup(val);
        else if (!strcmp(key, "needs"))
                return access(val, X_OK) == 0 ? 0 : -2;
        else
                return -1;
        return 0;
}

/* Parses @p w->body's header; 0, or -1 with the reason in @p why. */
static int parse_header(fit_workload_t *w, char *why, size_t ws)
{
        char *text = sbx_strdup(w->body), *line, *save = NULL, *nl;
        char key[32] = "", *val = NULL;
        const char *t;
        int rc = -1, r;

        if (strncmp(text, "#!/", 3) || !(nl = strchr(text, '\n'))) {
                sbx_fmt(why, ws, "no #! line");
                goto done;
        }
        *nl       = '\0';
        w->interp = sbx_strdup(sbx_strtrim(text + 2));
        w->task   = json_object();
        for (line = strtok_r(nl + 1, "\n", &save); line;
             line = strtok_r(NULL, "\n", &save)) {
                int indented;
                size_t klen;
                if (!hdr_line(line, &t))
                        break;
                indented = t[0] == ' ' && t[1] == ' ';
                t += strspn(t, " ");
                klen = strspn(t, "abcdefghijklmnopqrstuvwxyz_");
                if (!indented && klen && klen < sizeof(key) && t[klen] == ':') {
                        if (val && (r = hdr_apply(w, key, val)))
                                goto bad_key;
                        free(val);
                        sbx_fmt(key, sizeof(key), "%.*s", (int)klen, t);
                        val = sbx_strdup(sbx_strtrim((char *)t + klen + 1));
                } else if (val && indented && *t) {
                        char *more = NULL;
                        if (asprintf(&more, "%s %s", val, t) < 0)
                                abort();
                        free(val);
                        val = more;
                }
        }
        if (val && (r = hdr_apply(w, key, val)))
                goto bad_key;
        if (!json_is_string(json_object_get(w->task, "text")))
                sbx_fmt(why, ws, "no 'task:' in its header");
        else if (access(w->interp, X_OK))
                sbx_fmt(why, ws, "interpreter %s not on this host", w->interp);
        else
                rc = 0;
        goto done;
bad_key:
        sbx_fmt(why, ws,
                r == -2 ? "needs %.200s, not on this host"
                        : "unknown header key '%s'",
                r == -2 ? val : key);
done:
        free(val);
        free(text);
        return rc;
}

static void workload_clear(fit_workload_t *w)
{
        free(w->name);
        free(w->interp);
        free(w->dest);
        free(w->body);
        free(w->does);
        json_decref(w->task);
        memset(w, 0, sizeof(*w));
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
        return strcmp((*a)->d_name, (*b)->d_name);
}

sbx_err_t fit_corpus_load(const char *dir,
                          fit_corpus_t *ret,
                          char *errstr,
                          size_t errstr_size)
{
        struct dirent **ents = NULL;
        char path[4096], why[300];
        int n          = scandir(dir, &ents, NULL, by_name), i;
        fit_corpus_t c = {0};
        struct stat st;

        if (n < 0)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                  "corpus %s: %s", dir, strerror(errno));
        c.v = sbx_calloc((size_t)n + 1, sizeof(*c.v));
        for (i = 0; i < n; i++) {
                fit_workload_t *w = &c.v[c.n];
                const char *dot   = strrchr(ents[i]->d_name, '.');
                sbx_fmt(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
                if (ents[i]->d_name[0] == '.' || stat(path, &st) ||
                    !S_ISREG(st.st_mode))
                        continue;
                w->name = sbx_strndup(ents[i]->d_name,
                                      dot ? (size_t)(dot - ents[i]->d_name)
                                          : strlen(ents[i]->d_name));
                if (asprintf(&w->dest, "/tmp/fit-%s", ents[i]->d_name) < 0)
                        abort();
                if (sbx_read_file(path, FILE_MAX, &w->body, &w->len, why,
                                  sizeof(why)) ||
                    parse_header(w, why, sizeof(why))) {
                        fprintf(stderr, "corpus: skipping %s: %s\n",
                                ents[i]->d_name, why);
                        workload_clear(w);
                        continue;
                }
                c.n++;
        }
        for (i = 0; i < n; i++)
                free(ents[i]);
        free(ents);
        if (!c.n) {
                fit_corpus_clear(&c);
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "corpus %s: no usable workload", dir);
        }
        *ret = c;
        return SBX_OK;
}

void fit_corpus_clear(fit_corpus_t *c)
{
        size_t i;
        for (i = 0; c->v && i < c->n; i++)
                workload_clear(&c->v[i]);
        free(c->v);
        memset(c, 0, sizeof(*c));
}

static char *sock_dir(const fit_box_t *b, const char *id, char *buf, size_t n)
{
        return sbx_fmt(buf, n, "%s/sock-%s", b->state, id);
}

/* Deletes sandbox @p id and its socket directory. */
static void box_delete(fit_box_t *b, const char *id)
{
        char dir[4200], sock[4300], err[512];

        if (sbx_runtime_delete(b->rt, id, err, sizeof(err)))
                fprintf(stderr, "fit: delete %s: %s\n", id, err);
        sock_dir(b, id, dir, sizeof(dir));
        unlink(sbx_fmt(sock, sizeof(sock), "%s/agent.sock", dir));
        rmdir(dir);
}

typedef struct stale_s {
        char ids[64][SBX_SANDBOX_ID_MAX + 1];
        int n;
} stale_t;

/* Is process @p pid running (a zombie is not)? */
static int alive(long pid)
{
        char path[64], buf[512], *close;
        FILE *fp =
            fopen(sbx_fmt(path, sizeof(path), "/proc/%ld/stat", pid), "r");
        size_t n = fp ? fread(buf, 1, sizeof(buf) - 1, fp) : 0;

        if (fp)
                fclose(fp);
        buf[n] = '\0';
        close  = strrchr(buf, ')');
        return close && close[1] == ' ' && close[2] != 'Z' && close[2] != 'X';
}

/* Ours ("fit-<pid>-<n>") and its process is gone. */
static void on_listed(const char *id,
                      const char *runtime,
                      sbx_sandbox_status_t status,
                      int pid,
                      void *opaque)
{
        stale_t *s = opaque;
        long owner;
        (void)runtime;
        (void)status;
        (void)pid;
        if (strncmp(id, ID_PREFIX, strlen(ID_PREFIX)) ||
            s->n == (int)SBX_ARRAY_SIZE(s->ids))
                return;
        owner = strtol(id + strlen(ID_PREFIX), NULL, 10);
        if (owner > 0 && !alive(owner))
                sbx_fmt(s->ids[s->n++], sizeof(s->ids[0]), "%s", id);
}

fit_box_t *fit_box_new(const char *var_dir,
                       const char *agent,
                       char *errstr,
                       size_t errstr_size)
{
        fit_box_t *b = sbx_calloc(1, sizeof(*b));
        char path[4096];
        stale_t stale = {.n = 0};
        int i;

        if (asprintf(&b->state, "%s/run/fit", var_dir) < 0)
                abort();
        b->agent = sbx_strdup(agent);
        if (access(agent, X_OK)) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_NOENT, "agent %s: %s",
                           agent, strerror(errno));
                goto fail;
        }
        if (!(b->rt = sbx_runtime_new(b->state, errstr, errstr_size)) ||
            !(b->tmpl = sbx_template_host_new(
                  sbx_fmt(path, sizeof(path), "%s/templates/host", var_dir),
                  errstr, errstr_size)))
                goto fail;
        if (sbx_runtime_list(b->rt, on_listed, &stale, errstr, errstr_size))
                fprintf(stderr, "fit: listing sandboxes: %s\n", errstr);
        for (i = 0; i < stale.n; i++) {
                fprintf(stderr, "fit: deleting %s, left by a dead run\n",
                        stale.ids[i]);
                box_delete(b, stale.ids[i]);
        }
        return b;
fail:
        fit_box_destroy(b);
        return NULL;
}

void fit_box_destroy(fit_box_t *b)
{
        if (!b)
                return;
        sbx_template_destroy(b->tmpl);
        sbx_runtime_destroy(b->rt);
        free(b->state);
        free(b->agent);
        free(b);
}

/* The last bytes a workload printed (stdout and stderr). */
typedef struct tail_s {
        char b[256];
        size_t n;
} tail_t;

static int on_output(void *opaque, const uint8_t *d, size_t n)
{
        tail_t *t = opaque;
        if (n >= sizeof(t->b)) {
                d += n - sizeof(t->b);
                n = sizeof(t->b);
        }
        if (t->n + n > sizeof(t->b)) {
                size_t drop = t->n + n - sizeof(t->b);
                memmove(t->b, t->b + drop, t->n - drop);
                t->n -= drop;
        }
        memcpy(t->b + t->n, d, n);
        t->n += n;
        return 0;
}

/* The last non-empty line of @p t into @p out, as printable ASCII. */
static void last_line(const tail_t *t, char *out, size_t size)
{
        size_t end = t->n, start, i, k = 0;

        while (end > 0 && (t->b[end - 1] == '\n' || t->b[end - 1] == '\r'))
                end--;
        for (start = end; start > 0 && t->b[start - 1] != '\n'; start--)
                ;
        for (i = start; i < end && k + 1 < size; i++)
                out[k++] = t->b[i] >= 0x20 && t->b[i] < 0x7f ? t->b[i] : '?';
        out[k] = '\0';
}

static const char *const env[] = {"PATH=/usr/local/bin:/usr/bin:/bin",
                                  "HOME=/tmp", "TMPDIR=/tmp", "LC_ALL=C.UTF-8",
                                  NULL};

/* Writes the script with dd, then runs it measured like the executor. */
static sbx_err_t run_in(fit_box_t *b,
                        const char *id,
                        const fit_workload_t *w,
                        fit_result_t *r,
                        char *errstr,
                        size_t errstr_size)
{
        char dir[4200], sock[4300], of[4200];
        const char *dd[]       = {"/usr/bin/dd", of, "status=none", NULL};
        const char *argv[]     = {w->interp, w->dest, NULL};
        tail_t tail            = {.n = 0};
        sbx_agent_exec_cb_t cb = {
            .on_stdout = on_output, .on_stderr = on_output, .opaque = &tail};
        sbx_agent_exec_req_t req;
        sbx_agent_exit_t ex;
        sbx_usage_t u0, u;
        sbx_agent_conn_t *c;
        sbx_sandbox_status_t st = SBX_SANDBOX_ABSENT;
        sbx_err_t err;
        int pid, died = 0;

        sock_dir(b, id, dir, sizeof(dir));
        c = sbx_agent_connect(sbx_fmt(sock, sizeof(sock), "%s/agent.sock", dir),
                              10000, errstr, errstr_size);
        if (!c)
                return SBX_ERR_IO;
        memset(&req, 0, sizeof(req));
        memset(&ex, 0, sizeof(ex));
        sbx_fmt(of, sizeof(of), "of=%s", w->dest);
        req.argv        = dd;
        req.envp        = env;
        req.cwd         = "/tmp";
        req.deadline_ms = 10000;
        req.stdin_data  = (const uint8_t *)w->body;
        req.stdin_len   = w->len;
        if ((err = sbx_agent_exec(c, &req, NULL, &ex, errstr, errstr_size)))
                goto done;
        if (ex.exit_code) {
                err =
                    sbx_seterr(errstr, errstr_size, SBX_ERR_RUNTIME,
                               "writing %s: dd exit %d", w->dest, ex.exit_code);
                goto done;
        }
        memset(&u0, 0, sizeof(u0));
        memset(&u, 0, sizeof(u));
        memset(&ex, 0, sizeof(ex));
        sbx_runtime_usage(b->rt, id, &u0, NULL, 0);
        sbx_runtime_usage_reset(b->rt, id, NULL, 0);
        req.argv        = argv;
        req.stdin_data  = NULL;
        req.stdin_len   = 0;
        req.deadline_ms = DEADLINE_MS;
        if (sbx_agent_exec(c, &req, &cb, &ex, errstr, errstr_size)) {
                /* The agent went away: the sandbox may have died. */
                died = sbx_runtime_state(b->rt, id, &st, &pid, NULL, 0) ||
                       (st != SBX_SANDBOX_RUNNING && st != SBX_SANDBOX_PAUSED);
                if (!died) {
                        err = SBX_ERR_IO;
                        goto done;
                }
                ex.signal = 9;
        }
        sbx_runtime_usage(b->rt, id, &u, NULL, 0);
        r->exit_code =
            ex.exit_code < 0 || died ? 128 + ex.signal : ex.exit_code;
        r->timed_out  = ex.timed_out;
        r->oom        = u.oom_kills > u0.oom_kills && (ex.signal == 9 || died);
        r->peak_bytes = u.memory_peak;
        r->peak_mb    = (double)u.memory_peak / (1024.0 * 1024.0);
        r->maxrss_kb  = ex.maxrss_kb;
        r->wall_us    = (int64_t)ex.wall_us;
        r->user_us    = (int64_t)ex.user_us;
        r->sys_us     = (int64_t)ex.sys_us;
        r->cpu        = r->wall_us > 0
                            ? (double)(r->user_us + r->sys_us) / (double)r->wall_us
                            : 0;
        last_line(&tail, r->tail, sizeof(r->tail));
        err = SBX_OK;
done:
        sbx_agent_close(c);
        return err;
}

sbx_err_t fit_box_run(fit_box_t *b,
                      const fit_workload_t *w,
                      int64_t memory_mb,
                      double cpu,
                      fit_result_t *ret,
                      char *errstr,
                      size_t errstr_size)
{
        const char *init[] = {SBX_AGENT_PATH, "--socket",
                              SBX_AGENT_SOCKET_DIR "/agent.sock", NULL};
        char id[SBX_SANDBOX_ID_MAX + 1], dir[4200];
        sbx_sandbox_spec_t spec;
        fit_result_t r;
        sbx_err_t err;

        memset(&r, 0, sizeof(r));
        r.exit_code = -1;
        sbx_fmt(id, sizeof(id), ID_PREFIX "%ld-%ld", (long)getpid(), ++b->next);
        memset(&spec, 0, sizeof(spec));
        spec.id           = id;
        spec.tmpl         = b->tmpl;
        spec.cpu_quota_us = (int64_t)(cpu * 100000);
        spec.memory_mb    = memory_mb;
        spec.pids_max     = 512;
        spec.disk_mb      = 2048;
        spec.tmp_mb       = TMP_MB;
        spec.agent_path   = b->agent;
        spec.socket_dir   = sock_dir(b, id, dir, sizeof(dir));
        spec.argv         = init;
        if ((err = sbx_runtime_create(b->rt, &spec, errstr, errstr_size))) {
                rmdir(dir);
                return err;
        }
        err = run_in(b, id, w, &r, errstr, errstr_size);
        box_delete(b, id);
        if (!err)
                *ret = r;
        return err;
}
