/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the llm planner against a fake OpenAI-compatible server
 * (tests/unit/data/fake_llm.py, started here on 127.0.0.1 with an
 * ephemeral port): no real LLM exists on the test machine, so that script
 * and a bound-but-not-listening socket (connection refused) are the only
 * fakes. The server checks the shape of each request and answers by the
 * model name: a valid intent (used, planner "llm"), garbage, answers that
 * break the schema, HTTP errors, an oversized answer, or one that arrives
 * after the deadline. Every failure must fall back to the rules answer,
 * say exactly why, and the slow one must give up within the deadline.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"
#include "stages/planner/planner.h"

static sbx_codec_t *codec;
static pid_t server_pid = -1;
static int server_stdin = -1;
static int port;

/* Starts fake_llm.py; it prints its port and lives until stdin closes. */
static int setup(void **state)
{
        char err[256], line[32] = "";
        int in[2], out[2];
        size_t n = 0;
        (void)state;

        if (!(codec = sbx_codec_new(err, sizeof(err))))
                return -1;
        if (pipe(in) || pipe(out))
                return -1;
        server_pid = fork();
        if (server_pid < 0)
                return -1;
        if (server_pid == 0) {
                dup2(in[0], 0);
                dup2(out[1], 1);
                close(in[0]), close(in[1]), close(out[0]), close(out[1]);
                execlp("python3", "python3", SBX_TEST_DATA "/fake_llm.py",
                       (char *)NULL);
                _exit(127);
        }
        close(in[0]);
        close(out[1]);
        server_stdin = in[1];
        while (n < sizeof(line) - 1 && !strchr(line, '\n')) {
                struct pollfd pfd = {.fd = out[0], .events = POLLIN};
                ssize_t r;
                if (poll(&pfd, 1, 10000) != 1 ||
                    (r = read(out[0], line + n, sizeof(line) - 1 - n)) <= 0)
                        break;
                n += (size_t)r;
                line[n] = '\0';
        }
        close(out[0]);
        port = atoi(line);
        if (port <= 0) {
                fprintf(stderr, "fake_llm.py did not start (got '%s')\n", line);
                return -1;
        }
        return 0;
}

static int teardown(void **state)
{
        int i, status;
        (void)state;
        if (server_stdin >= 0)
                close(server_stdin);
        for (i = 0; server_pid > 0 && i < 100; i++) {
                if (waitpid(server_pid, &status, WNOHANG) == server_pid) {
                        server_pid = -1;
                        break;
                }
                usleep(50000);
        }
        if (server_pid > 0) {
                kill(server_pid, SIGKILL);
                waitpid(server_pid, &status, 0);
        }
        sbx_codec_destroy(codec);
        return 0;
}

static sbx_planner_t *planner_at(int at_port,
                                 const char *model,
                                 int timeout_ms,
                                 const char *key)
{
        char url[64], err[256];
        sbx_planner_conf_t conf = {.mode           = "llm",
                                   .llm_url        = url,
                                   .llm_model      = model,
                                   .llm_api_key    = key,
                                   .llm_timeout_ms = timeout_ms};
        sbx_planner_t *p;
        sbx_fmt(url, sizeof(url), "http://127.0.0.1:%d/v1/", at_port);
        p = sbx_planner_new(&conf, err, sizeof(err));
        if (!p)
                fail_msg("%s", err);
        return p;
}

static sbx_event_t *request(const char *risk)
{
        json_t *task    = json_pack("{s:s, s:[s], s:[{s:s}], s:s}", "text",
                                    "read the Excel file and total the sales",
                                    "plan", "pip install pandas openpyxl",
                                    "packages", "name", "pandas", "risk", risk);
        sbx_event_t *ev = sbx_event_new(
            SBX_EV_CLAIM_REQUESTED, "claim-1", 1,
            json_pack("{s:s, s:o}", "request_id", "r-1", "task", task));
        sbx_event_set(&ev->tenant_id, "acme");
        return ev;
}

/* Decides the standard request with @p p; checks the event encodes. */
static sbx_event_t *decide(sbx_planner_t *p, const char *risk)
{
        sbx_event_t *req   = request(risk), *ev;
        unsigned char *buf = NULL;
        size_t len;
        char err[512];

        ev = sbx_planner_decide(p, req, 2, "planner/test");
        assert_non_null(ev);
        if (sbx_event_encode(codec, ev, &buf, &len, err, sizeof(err)))
                fail_msg("PlanProposed does not encode: %s", err);
        free(buf);
        sbx_event_destroy(req);
        return ev;
}

static const json_t *intent(const sbx_event_t *ev)
{
        return json_object_get(ev->payload, "intent");
}

static const char *istr(const sbx_event_t *ev, const char *field)
{
        return json_string_value(json_object_get(intent(ev), field));
}

static void test_valid_answer_is_used(void **state)
{
        sbx_planner_t *p = planner_at(port, "valid+auth", 3000, "sk-test");
        sbx_event_t *ev  = decide(p, "medium");
        (void)state;

        assert_string_equal(sbx_event_str(ev, "planner"), "llm");
        assert_null(sbx_event_str(ev, "fallback_reason"));
        assert_string_equal(sbx_event_str(ev, "signature"), "python-data");
        assert_string_equal(istr(ev, "workload"), "python-data-analysis");
        assert_string_equal(istr(ev, "resource_class"), "python-ds");
        assert_true(json_number_value(json_object_get(intent(ev), "cpu")) == 3);
        assert_int_equal(
            json_integer_value(json_object_get(intent(ev), "memory_mb")), 6144);
        assert_int_equal(
            json_integer_value(json_object_get(intent(ev), "disk_gb")), 25);
        assert_int_equal(
            json_integer_value(json_object_get(intent(ev), "ttl_seconds")),
            900);
        assert_string_equal(istr(ev, "reason"),
                            "pandas on a medium spreadsheet");
        assert_int_equal(strlen(sbx_event_str(ev, "input_hash")), 64);
        sbx_event_destroy(ev);
        sbx_planner_destroy(p);

        /* The server wants the token: without one the call fails. */
        p  = planner_at(port, "valid+auth", 3000, NULL);
        ev = decide(p, "medium");
        assert_string_equal(sbx_event_str(ev, "planner"), "rules");
        assert_non_null(
            strstr(sbx_event_str(ev, "fallback_reason"), "llm HTTP 400"));
        sbx_event_destroy(ev);
        sbx_planner_destroy(p);
}

static void test_bad_answers_fall_back_with_the_reason(void **state)
{
        static const struct {
                const char *model, *reason;
        } cases[] = {
            {"garbage", "llm answer invalid: content is not JSON"},
            {"not-json", "llm answer invalid: not JSON"},
            {"no-memory", "llm answer invalid: memory_mb missing"},
            {"huge", "llm answer invalid: cpu 512 out of range 0.1..256"},
            {"extra", "llm answer invalid: unknown field 'privileged'"},
            {"http500", "llm HTTP 500"},
            {"big", "llm answer larger than 65536 bytes"},
        };
        sbx_planner_conf_t rconf = {.mode = "rules"};
        char err[256];
        sbx_planner_t *rules = sbx_planner_new(&rconf, err, sizeof(err));
        sbx_event_t *want    = decide(rules, "medium");
        size_t i;
        (void)state;

        for (i = 0; i < SBX_ARRAY_SIZE(cases); i++) {
                sbx_planner_t *p = planner_at(port, cases[i].model, 3000, NULL);
                sbx_event_t *ev  = decide(p, "medium");
                const char *why  = sbx_event_str(ev, "fallback_reason");

                assert_string_equal(sbx_event_str(ev, "planner"), "rules");
                if (!why ||
                    strncmp(why, cases[i].reason, strlen(cases[i].reason)))
                        fail_msg("%s: fallback_reason '%s', want '%s'",
                                 cases[i].model, why ? why : "(null)",
                                 cases[i].reason);
                /* The fallback is exactly the rules planner's answer. */
                assert_true(json_equal(intent(ev), intent(want)));
                assert_string_equal(sbx_event_str(ev, "input_hash"),
                                    sbx_event_str(want, "input_hash"));
                sbx_event_destroy(ev);
                sbx_planner_destroy(p);
        }
        sbx_event_destroy(want);
        sbx_planner_destroy(rules);
}

static void test_slow_llm_times_out_within_the_deadline(void **state)
{
        sbx_planner_t *p = planner_at(port, "sleep", 300, NULL);
        int64_t t0       = sbx_mono_us(), ms;
        sbx_event_t *ev  = decide(p, "medium");
        (void)state;

        ms = (sbx_mono_us() - t0) / 1000;
        assert_string_equal(sbx_event_str(ev, "planner"), "rules");
        assert_string_equal(sbx_event_str(ev, "fallback_reason"),
                            "llm timeout after 300 ms");
        if (ms < 250 || ms > 300 + 1500)
                fail_msg("decide took %lld ms with a 300 ms deadline",
                         (long long)ms);
        assert_string_equal(istr(ev, "resource_class"), "python-small");
        sbx_event_destroy(ev);
        sbx_planner_destroy(p);
}

static void test_connection_refused_falls_back(void **state)
{
        struct sockaddr_in a = {.sin_family = AF_INET};
        socklen_t alen       = sizeof(a);
        int fd               = socket(AF_INET, SOCK_STREAM, 0);
        sbx_planner_t *p;
        sbx_event_t *ev;
        (void)state;

        /* Bound, never listening: connecting is refused, and no one else
         * can take the port while we hold it. */
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        assert_true(fd >= 0);
        assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
        assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
        p  = planner_at(ntohs(a.sin_port), "valid", 3000, NULL);
        ev = decide(p, "medium");
        assert_string_equal(sbx_event_str(ev, "planner"), "rules");
        assert_non_null(sbx_event_str(ev, "fallback_reason"));
        assert_non_null(
            strstr(sbx_event_str(ev, "fallback_reason"), "llm unreachable"));
        assert_string_equal(sbx_event_str(ev, "signature"), "python-data");
        sbx_event_destroy(ev);
        sbx_planner_destroy(p);
        close(fd);
}

static void test_llm_cannot_weaken_isolation(void **state)
{
        sbx_planner_t *p = planner_at(port, "runc", 3000, NULL);
        sbx_event_t *ev  = decide(p, "high");
        (void)state;

        assert_string_equal(sbx_event_str(ev, "planner"), "llm");
        assert_string_equal(istr(ev, "runtime"), "runsc");
        assert_non_null(strstr(istr(ev, "reason"), "kept runsc"));
        sbx_event_destroy(ev);
        sbx_planner_destroy(p);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_valid_answer_is_used),
            cmocka_unit_test(test_bad_answers_fall_back_with_the_reason),
            cmocka_unit_test(test_slow_llm_times_out_within_the_deadline),
            cmocka_unit_test(test_connection_refused_falls_back),
            cmocka_unit_test(test_llm_cannot_weaken_isolation),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
