/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Metrics endpoint. One accept loop, one request per connection, a read
 * bounded by 4 KiB and a 2 s timeout: a slow or hostile scraper cannot hold
 * it. Every other path is a 404.
 */
#include "daemon/metrics.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "core/util.h"

struct sbx_metrics_s {
        sbx_proc_t *const *procs;
        int n, fd;
        volatile int stop;
        pthread_t thread;
};

char *sbx_metrics_render(sbx_proc_t *const *procs, int n)
{
        static const struct {
                const char *name, *type, *help;
                size_t off;
        } m[] = {
#define M(f, t, h) {"sbx_stage_" #f, t, h, offsetof(sbx_proc_stats_t, f)}
            M(consumed, "counter", "Messages consumed."),
            M(appended, "counter", "Events this stage appended."),
            M(won, "counter", "Appended events accepted by the fold."),
            M(superseded, "counter", "Appended events superseded by the fold."),
            M(dlq, "counter", "Messages sent to the DLQ."),
            M(decisions, "counter", "Decide calls."),
            M(lag, "gauge", "Lifecycle messages behind the high watermark."),
#undef M
        };
        size_t cap = 8192, len = 0, i;
        char *out = sbx_malloc(cap);
        int k;

        out[0] = '\0';
        for (i = 0; i < SBX_ARRAY_SIZE(m); i++) {
                len += (size_t)snprintf(out + len, cap - len,
                                        "# HELP %s %s\n# TYPE %s %s\n",
                                        m[i].name, m[i].help, m[i].name,
                                        m[i].type);
                for (k = 0; k < n; k++) {
                        sbx_proc_stats_t st;
                        sbx_proc_get_stats(procs[k], &st);
                        if (cap - len < 512) {
                                cap *= 2;
                                out = sbx_realloc(out, cap);
                        }
                        len += (size_t)snprintf(
                            out + len, cap - len, "%s{stage=\"%s\"} %lld\n",
                            m[i].name, sbx_proc_stage(procs[k])->name,
                            (long long)*(const int64_t *)((const char *)&st +
                                                          m[i].off));
                }
                if (cap - len < 1024) {
                        cap *= 2;
                        out = sbx_realloc(out, cap);
                }
        }
        return out;
}

static void serve(sbx_metrics_t *m, int c)
{
        char req[4096], head[256], *body;
        struct timeval tv = {2, 0};
        ssize_t r;
        size_t got = 0;
        int ok;

        setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        while (got < sizeof(req) - 1 &&
               (r = recv(c, req + got, sizeof(req) - 1 - got, 0)) > 0) {
                got += (size_t)r;
                req[got] = '\0';
                if (strstr(req, "\r\n\r\n"))
                        break;
        }
        req[got] = '\0';
        ok = !strncmp(req, "GET /metrics ", 13) || !strncmp(req, "GET / ", 6);
        body = ok ? sbx_metrics_render(m->procs, m->n)
                  : sbx_strdup("not found\n");
        snprintf(head, sizeof(head),
                 "HTTP/1.0 %s\r\nContent-Type: text/plain; version=0.0.4\r\n"
                 "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                 ok ? "200 OK" : "404 Not Found", strlen(body));
        if (send(c, head, strlen(head), MSG_NOSIGNAL) > 0)
                (void)!send(c, body, strlen(body), MSG_NOSIGNAL);
        free(body);
}

static void *loop(void *arg)
{
        sbx_metrics_t *m = arg;
        while (!m->stop) {
                struct pollfd pfd = {m->fd, POLLIN, 0};
                int c;
                if (poll(&pfd, 1, 200) <= 0)
                        continue;
                c = accept(m->fd, NULL, NULL);
                if (c < 0)
                        continue;
                serve(m, c);
                close(c);
        }
        return NULL;
}

sbx_metrics_t *sbx_metrics_start(sbx_proc_t *const *procs, int n, int port,
                                 char *errstr, size_t errstr_size)
{
        sbx_metrics_t *m = sbx_calloc(1, sizeof(*m));
        struct sockaddr_in a;
        int one = 1;
        const char *any = getenv("SBX_METRICS_ANY");

        m->procs = procs;
        m->n = n;
        m->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        memset(&a, 0, sizeof(a));
        a.sin_family = AF_INET;
        a.sin_port = htons((uint16_t)port);
        a.sin_addr.s_addr = htonl(any && !strcmp(any, "1") ? INADDR_ANY
                                                           : INADDR_LOOPBACK);
        setsockopt(m->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (m->fd < 0 || bind(m->fd, (struct sockaddr *)&a, sizeof(a)) ||
            listen(m->fd, 16)) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                           "metrics: cannot listen on port %d (in use? set "
                           "metrics_port, 0 turns it off)",
                           port);
                if (m->fd >= 0)
                        close(m->fd);
                free(m);
                return NULL;
        }
        pthread_create(&m->thread, NULL, loop, m);
        return m;
}

void sbx_metrics_stop(sbx_metrics_t *m)
{
        if (!m)
                return;
        m->stop = 1;
        pthread_join(m->thread, NULL);
        close(m->fd);
        free(m);
}
