/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the rules planner: the design origin's three turns (Excel with
 * pandas, a bar chart, Playwright), the smallest and the largest tasks,
 * builds, word-aware keyword matching, garbage input, the PlanProposed
 * envelope and its other fields, and the input hash. Every decided event
 * is encoded with the real codec, so a payload the schema would refuse
 * fails here. Learning from telemetry is in test_planner_telemetry.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/util.h"
#include "stages/planner/planner.h"
#include "stages/planner/planner_int.h"

#include "fixture.h"

#include "planner_fixture.h"

static void test_origin_three_turns(void **state)
{
        sbx_planner_t *p = rules_planner();
        sbx_event_t *t1, *t2, *t3;
        (void)state;

        t1 = decide(p, turn1());
        assert_string_equal(sbx_event_str(t1, "planner"), "rules");
        assert_null(sbx_event_str(t1, "fallback_reason"));
        assert_string_equal(sig_of(t1), "python-data");
        assert_string_equal(istr(t1, "resource_class"), "python-small");
        assert_true(cpu_of(t1) == 1.0);
        assert_int_equal(mem_of(t1), 2048);
        assert_string_equal(istr(t1, "network_profile"), "pypi-readonly");
        assert_string_equal(istr(t1, "runtime"), "runc");
        assert_non_null(strstr(istr(t1, "reason"), "pandas"));
        assert_non_null(strstr(istr(t1, "reason"), "openpyxl"));
        assert_non_null(strstr(istr(t1, "reason"), "excel"));
        assert_true(json_number_value(
                        json_object_get(intent(t1), "confidence")) >= 0.7);

        /* The chart reuses the same family: the reuse check can say yes. */
        t2 = decide(p, turn2());
        assert_string_equal(sig_of(t2), sig_of(t1));
        assert_string_equal(istr(t2, "resource_class"), "python-small");

        /* Playwright is another workload, sized as browser-medium. */
        t3 = decide(p, turn3());
        assert_non_null(strstr(sig_of(t3), "browser"));
        assert_string_not_equal(sig_of(t3), sig_of(t1));
        assert_string_equal(istr(t3, "resource_class"), "browser-medium");
        assert_true(cpu_of(t3) == 4.0);
        assert_int_equal(mem_of(t3), 8192);
        assert_int_equal(
            json_integer_value(json_object_get(intent(t3), "disk_gb")), 30);
        assert_true(
            json_is_true(json_object_get(intent(t3), "requires_browser")));
        assert_string_equal(istr(t3, "network_profile"), "npm-github-web");
        sbx_event_destroy(t1);
        sbx_event_destroy(t2);
        sbx_event_destroy(t3);
        sbx_planner_destroy(p);
}

static void test_hello_is_smallest_and_20gb_csv_is_large(void **state)
{
        sbx_planner_t *p = rules_planner();
        sbx_event_t *hello, *big, *big_text, *py;
        (void)state;

        hello = decide(p, json_pack("{s:s}", "text", "print(\"hello\")"));
        assert_string_equal(sig_of(hello), "plain-script");
        assert_string_equal(istr(hello, "resource_class"), "python-small");
        assert_true(cpu_of(hello) == 1.0);
        assert_int_equal(mem_of(hello), 2048);
        assert_string_equal(istr(hello, "network_profile"), "none");

        py = decide(p, json_pack("{s:s, s:[s]}", "text", "print(1 + 1)",
                                 "languages", "Python"));
        assert_string_equal(sig_of(py), "python-script");
        assert_int_equal(mem_of(py), 2048);

        /* The origin's pd.read_csv("20GB.csv"), as a size field... */
        big = decide(
            p, json_pack("{s:s, s:[s], s:I}", "text",
                         "load the click log and count sessions", "tool_calls",
                         "python3 -c 'import pandas as pd; "
                         "pd.read_csv(\"clicks.csv\")'",
                         "data_size_mb", (json_int_t)20480));
        assert_string_equal(sig_of(big), "python-data-large");
        assert_string_equal(istr(big, "resource_class"), "compute-large");
        assert_true(mem_of(big) >= 20480);
        assert_true(cpu_of(big) >= 8.0);
        assert_true(
            json_integer_value(json_object_get(intent(big), "disk_gb")) >= 50);
        /* ...and as the text says it. */
        big_text = decide(p, json_pack("{s:s}", "text",
                                       "import pandas as pd\n"
                                       "df = pd.read_csv(\"20GB.csv\")"));
        assert_string_equal(sig_of(big_text), "python-data-large");
        assert_int_equal(mem_of(big_text), mem_of(big));
        assert_non_null(strstr(istr(big_text, "reason"), "20480 MB"));

        assert_true(mem_of(hello) < mem_of(big));
        sbx_event_destroy(hello);
        sbx_event_destroy(py);
        sbx_event_destroy(big);
        sbx_event_destroy(big_text);
        sbx_planner_destroy(p);
}

static void test_builds(void **state)
{
        sbx_planner_t *p = rules_planner();
        sbx_event_t *c, *java, *web;
        (void)state;

        c = decide(
            p, json_pack("{s:s, s:[s,s,s]}", "text",
                         "build the C project and run its tests", "tool_calls",
                         "./configure --prefix=/usr", "make -j4 && make check",
                         "gcc -O2 -o tool tool.c"));
        assert_string_equal(sig_of(c), "c-build");
        assert_string_equal(istr(c, "resource_class"), "build-medium");
        assert_true(cpu_of(c) == 4.0);
        assert_int_equal(mem_of(c), 8192);

        java = decide(p, json_pack("{s:s, s:[s], s:[s], s:I}", "text",
                                   "package the service", "tool_calls",
                                   "mvn -q package", "languages", "java",
                                   "repo_size_mb", (json_int_t)3000));
        assert_string_equal(sig_of(java), "java-build-large-repo");
        assert_string_equal(istr(java, "resource_class"), "compute-large");

        /* The origin's browser build: clone, npm, playwright, screenshot. */
        web = decide(
            p, json_pack("{s:s, s:[s,s,s,s,s,s]}", "text",
                         "check the frontend renders", "plan", "clone repo",
                         "npm install", "install playwright", "build frontend",
                         "run chromium", "capture screenshot"));
        assert_string_equal(sig_of(web), "node-browser-build");
        assert_string_equal(istr(web, "resource_class"), "browser-medium");
        assert_string_equal(istr(web, "network_profile"), "npm-github-web");
        sbx_event_destroy(c);
        sbx_event_destroy(java);
        sbx_event_destroy(web);
        sbx_planner_destroy(p);
}

static void test_keywords_are_whole_words_and_case_blind(void **state)
{
        sbx_planner_t *p = rules_planner();
        sbx_event_t *ev;
        (void)state;

        /* "make" in prose, "pandasql", "webgpu", "chromeless": no signals. */
        ev = decide(p, json_pack("{s:s, s:[s]}", "text",
                                 "make a summary; try pandasql, the webgpu "
                                 "demo, npmx and chromeless",
                                 "plan", "make sure the summary is short"));
        assert_string_equal(sig_of(ev), "plain-script");
        sbx_event_destroy(ev);

        ev = decide(p, json_pack("{s:s}", "text", "Run PLAYWRIGHT tests"));
        assert_string_equal(sig_of(ev), "browser");
        sbx_event_destroy(ev);

        ev = decide(
            p, json_pack("{s:s}", "text", "x = torch.cuda.is_available()"));
        assert_non_null(strstr(sig_of(ev), "gpu"));
        assert_true(json_is_true(json_object_get(intent(ev), "requires_gpu")));
        assert_string_equal(istr(ev, "resource_class"), "compute-large");
        sbx_event_destroy(ev);

        ev = decide(p, json_pack("{s:s, s:[s]}", "text", "ship it",
                                 "tool_calls", "cd app &&  go   build ./..."));
        assert_string_equal(sig_of(ev), "go-build");
        sbx_event_destroy(ev);
        sbx_planner_destroy(p);
}

static void test_garbage_gets_a_small_low_confidence_plan(void **state)
{
        sbx_planner_t *p   = rules_planner();
        json_t *payloads[] = {
            json_object(),
            json_pack("{s:i}", "task", 7),
            json_pack("{s:{s:i, s:s, s:[i, {s:i}], s:I, s:[n]}, s:i}", "task",
                      "text", 42, "plan", "not a list", "packages", 1, "name",
                      3, "data_size_mb", (json_int_t)-5, "languages",
                      "requested_class", 9),
        };
        size_t i;
        (void)state;

        for (i = 0; i < SBX_ARRAY_SIZE(payloads); i++) {
                sbx_event_t *req = sbx_event_new(SBX_EV_CLAIM_REQUESTED, "c-g",
                                                 1, payloads[i]);
                sbx_event_t *ev = sbx_planner_decide(p, req, 2, "planner/test");
                unsigned char *buf = NULL;
                size_t len;
                char err[512];

                assert_non_null(ev);
                if (sbx_event_encode(codec, ev, &buf, &len, err, sizeof(err)))
                        fail_msg("garbage %zu: %s", i, err);
                free(buf);
                assert_string_equal(istr(ev, "resource_class"), "python-small");
                assert_int_equal(mem_of(ev), 2048);
                assert_true(json_number_value(json_object_get(
                                intent(ev), "confidence")) <= 0.3);
                assert_non_null(strstr(istr(ev, "reason"), "empty task"));
                sbx_event_destroy(ev);
                sbx_event_destroy(req);
        }
        sbx_planner_destroy(p);
}

static void test_envelope_and_other_fields(void **state)
{
        sbx_planner_t *p = rules_planner();
        sbx_event_t *req, *ev, *back = NULL;
        unsigned char *buf = NULL;
        size_t len;
        char err[512];
        (void)state;

        req = claim_with(
            "claim-42",
            json_pack("{s:s, s:s, s:I}", "text", "run the script", "risk",
                      "high", "expected_duration_s", (json_int_t)1200),
            json_pack("{s:s}", "network_profile", "pypi-readonly"));
        ev = sbx_planner_decide(p, req, 7, "planner/3");
        assert_int_equal(ev->type, SBX_EV_PLAN_PROPOSED);
        assert_string_equal(ev->aggregate_id, "claim-42");
        assert_int_equal(ev->seq, 7);
        assert_string_equal(ev->producer, "planner/3");
        assert_string_equal(ev->tenant_id, "acme");
        assert_string_equal(ev->session_id, "sess-1");
        assert_string_equal(ev->correlation_id, "claim-42");
        assert_string_equal(ev->causation_id, req->event_id);
        assert_int_equal(ev->lease_version, SBX_NO_LEASE);
        assert_string_equal(istr(ev, "runtime"), "runsc");
        assert_int_equal(
            json_integer_value(json_object_get(intent(ev), "ttl_seconds")),
            2400);
        assert_string_equal(istr(ev, "network_profile"), "pypi-readonly");
        assert_string_equal(istr(ev, "template"), "host");

        /* Through the codec and back, unchanged. */
        if (sbx_event_encode(codec, ev, &buf, &len, err, sizeof(err)) ||
            sbx_event_decode(codec, buf, len, &back, err, sizeof(err)))
                fail_msg("%s", err);
        assert_true(json_equal(back->payload, ev->payload));
        free(buf);
        sbx_event_destroy(back);
        sbx_event_destroy(ev);
        sbx_event_destroy(req);

        /* A requested class pins the class; an unknown one lowers confidence.
         */
        ev = decide_as(p, "c-2", turn1(),
                       json_pack("{s:s}", "requested_class", "build-medium"));
        assert_string_equal(istr(ev, "resource_class"), "build-medium");
        assert_int_equal(mem_of(ev), 8192);
        sbx_event_destroy(ev);
        ev = decide_as(p, "c-3", turn1(),
                       json_pack("{s:s}", "requested_class", "gigantic"));
        assert_string_equal(istr(ev, "resource_class"), "python-small");
        assert_non_null(strstr(istr(ev, "reason"), "unknown requested_class"));
        sbx_event_destroy(ev);
        sbx_planner_destroy(p);
}

static const char *hash_of(sbx_planner_t *p,
                           json_t *task,
                           json_t *extra,
                           char out[65])
{
        sbx_event_t *ev = decide_as(p, "c-h", task, extra);
        const char *h   = sbx_event_str(ev, "input_hash");
        assert_non_null(h);
        assert_int_equal(strlen(h), 64);
        strcpy(out, h);
        sbx_event_destroy(ev);
        return out;
}

static void test_input_hash_is_stable_and_sensitive(void **state)
{
        sbx_planner_t *p = rules_planner();
        char a[65], b[65], c[65];
        char full[65];
        (void)state;

        /* SHA-256 itself: FIPS 180-4 examples. */
        sbx_planner_sha256_hex("abc", 3, full);
        assert_string_equal(full,
                            "ba7816bf8f01cfea414140de5dae2223"
                            "b00361a396177a9cb410ff61f20015ad");
        sbx_planner_sha256_hex("", 0, full);
        assert_string_equal(full,
                            "e3b0c44298fc1c149afbf4c8996fb924"
                            "27ae41e4649b934ca495991b7852b855");
        sbx_planner_sha256_hex(
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
            full);
        assert_string_equal(full,
                            "248d6a61d20638b8e5c026930c3e6039"
                            "a33ce45964ff2167f6ecedd419db06c1");

        hash_of(p, turn1(), NULL, a);
        hash_of(p, turn1(), NULL, b);
        assert_string_equal(a, b);
        /* Defaults spelled out or left out: the same request. */
        hash_of(
            p,
            json_pack("{s:s, s:[s,s,s], s:[{s:s, s:s, s:s}, {s:s}], s:s, "
                      "s:I, s:b}",
                      "text", "read the Excel file and total the sales", "plan",
                      "pip install pandas openpyxl",
                      "load sales.xlsx with pandas", "sum the sales column",
                      "packages", "name", "pandas", "ecosystem", "pip",
                      "constraint", "", "name", "openpyxl", "risk", "medium",
                      "repo_size_mb", (json_int_t)0, "needs_gpu", 0),
            json_pack("{s:n}", "requested_class"), c);
        assert_string_equal(a, c);

        hash_of(p,
                json_pack("{s:s}", "text",
                          "read the Excel file and total "
                          "the sales!"),
                NULL, c);
        assert_string_not_equal(a, c);
        hash_of(p, turn1(), json_pack("{s:s}", "requested_class", "python-ds"),
                c);
        assert_string_not_equal(a, c);
        hash_of(p, turn1(), json_pack("{s:s}", "network_profile", "none"), c);
        assert_string_not_equal(a, c);
        sbx_planner_destroy(p);
}

static double conf_of(const sbx_event_t *ev)
{
        return json_number_value(json_object_get(intent(ev), "confidence"));
}

static void test_confidence_follows_the_signals(void **state)
{
        sbx_planner_t *p = rules_planner();
        sbx_event_t *none, *many, *mixed;
        (void)state;

        none  = decide(p, json_pack("{s:s}", "text", "print(1)"));
        many  = decide(p, turn1());
        mixed = decide(p, json_pack("{s:s, s:[s], s:[s,s]}", "text", "build it",
                                    "languages", "python", "tool_calls",
                                    "mvn package", "npm run build"));
        assert_true(conf_of(none) < conf_of(many));
        assert_true(conf_of(mixed) < conf_of(many));
        assert_true(conf_of(none) > 0 && conf_of(many) <= 1);
        assert_non_null(strstr(istr(none, "reason"), "no signals"));
        assert_non_null(strstr(istr(mixed, "reason"), "conflicting languages"));
        /* The declared language names the signature. */
        assert_string_equal(sig_of(mixed), "python-build");
        sbx_event_destroy(none);
        sbx_event_destroy(many);
        sbx_event_destroy(mixed);
        sbx_planner_destroy(p);
}

static void test_bad_configuration_is_refused(void **state)
{
        char err[256]               = "";
        sbx_planner_conf_t bad_mode = {.mode = "oracle"};
        sbx_planner_conf_t no_url   = {.mode = "llm", .llm_model = "m"};
        sbx_planner_conf_t no_model = {.mode    = "llm",
                                       .llm_url = "http://127.0.0.1:1/v1"};
        sbx_planner_t *p;
        (void)state;

        assert_null(sbx_planner_new(&bad_mode, err, sizeof(err)));
        assert_non_null(strstr(err, "oracle"));
        assert_null(sbx_planner_new(&no_url, err, sizeof(err)));
        assert_non_null(strstr(err, "llm_url"));
        assert_null(sbx_planner_new(&no_model, err, sizeof(err)));
        assert_non_null(strstr(err, "llm_model"));
        p = sbx_planner_new(NULL, err, sizeof(err)); /* rules by default */
        assert_non_null(p);
        sbx_planner_destroy(p);
}


int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_origin_three_turns),
            cmocka_unit_test(test_hello_is_smallest_and_20gb_csv_is_large),
            cmocka_unit_test(test_builds),
            cmocka_unit_test(test_keywords_are_whole_words_and_case_blind),
            cmocka_unit_test(test_garbage_gets_a_small_low_confidence_plan),
            cmocka_unit_test(test_envelope_and_other_fields),
            cmocka_unit_test(test_input_hash_is_stable_and_sensitive),
            cmocka_unit_test(test_confidence_follows_the_signals),
            cmocka_unit_test(test_bad_configuration_is_refused),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
