/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The client library without a broker: an acquire request built field by
 * field or from JSON is a Request the codec accepts (so intake can decode
 * it), bad fields and values are refused with the reason before anything
 * is sent, and a client without a tenant is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "client/client_int.h"
#include "core/util.h"

/* Encodes @p a as the command of a Request; 0 or the codec's error. */
static int encode(const sbx_acquire_t *a, char *err, size_t es)
{
        char e[512];
        sbx_codec_t *c = sbx_codec_new(e, sizeof(e));
        json_t *req;
        unsigned char *buf = NULL;
        size_t len;
        int rc;

        assert_non_null(c);
        req = json_pack("{s:s, s:s, s:I, s:{s:O}}", "request_id", "r-1",
                        "tenant_id", "acme", "occurred_at", (json_int_t)1,
                        "command", "sbx.AcquireSandbox", sbx_acquire_body(a));
        rc  = sbx_codec_encode(c, SBX_SCHEMA_REQUEST, req, &buf, &len, err, es);
        free(buf);
        json_decref(req);
        sbx_codec_destroy(c);
        return rc;
}

static const json_t *task_of(const sbx_acquire_t *a)
{
        return json_object_get(sbx_acquire_body(a), "task");
}

static void test_fields(void **state)
{
        sbx_acquire_t *a = sbx_acquire_new("total the sales");
        const json_t *pkgs;
        char err[512];
        (void)state;

        assert_int_equal(strncmp(sbx_acquire_claim_id(a), "claim-", 6), 0);
        assert_int_equal(
            sbx_acquire_set(a, "plan", "pip install pandas", err, sizeof(err)),
            SBX_OK);
        assert_int_equal(
            sbx_acquire_set(a, "plan", "python3 t.py", err, sizeof(err)),
            SBX_OK);
        assert_int_equal(
            sbx_acquire_set(a, "package", "pandas>=2", err, sizeof(err)),
            SBX_OK);
        assert_int_equal(
            sbx_acquire_set(a, "package", "npm:react@18", err, sizeof(err)),
            SBX_OK);
        assert_int_equal(
            sbx_acquire_set(a, "needs_browser", "true", err, sizeof(err)),
            SBX_OK);
        assert_int_equal(
            sbx_acquire_set(a, "lease_seconds", "60", err, sizeof(err)),
            SBX_OK);
        assert_int_equal(
            sbx_acquire_set(a, "class", "python-small", err, sizeof(err)),
            SBX_OK);
        assert_int_equal(
            sbx_acquire_set(a, "claim_id", "claim-7", err, sizeof(err)),
            SBX_OK);

        assert_string_equal(sbx_acquire_claim_id(a), "claim-7");
        assert_int_equal(json_array_size(json_object_get(task_of(a), "plan")),
                         2);
        pkgs = json_object_get(task_of(a), "packages");
        assert_string_equal(
            json_string_value(json_object_get(json_array_get(pkgs, 0), "name")),
            "pandas");
        assert_string_equal(json_string_value(json_object_get(
                                json_array_get(pkgs, 0), "constraint")),
                            ">=2");
        assert_string_equal(json_string_value(json_object_get(
                                json_array_get(pkgs, 1), "ecosystem")),
                            "npm");
        assert_true(json_is_true(json_object_get(task_of(a), "needs_browser")));
        assert_int_equal(json_integer_value(json_object_get(sbx_acquire_body(a),
                                                            "lease_seconds")),
                         60);
        assert_string_equal(json_string_value(json_object_get(
                                sbx_acquire_body(a), "requested_class")),
                            "python-small");
        assert_int_equal(encode(a, err, sizeof(err)), 0);
        sbx_acquire_destroy(a);
}

static void test_bad_fields_are_refused(void **state)
{
        sbx_acquire_t *a = sbx_acquire_new("x");
        char err[512];
        (void)state;

        assert_int_equal(sbx_acquire_set(a, "colour", "red", err, sizeof(err)),
                         SBX_ERR_INVALID);
        assert_non_null(strstr(err, "unknown acquire field 'colour'"));
        assert_int_equal(
            sbx_acquire_set(a, "lease_seconds", "5m", err, sizeof(err)),
            SBX_ERR_INVALID);
        assert_non_null(strstr(err, "want a whole number"));
        assert_int_equal(
            sbx_acquire_set(a, "needs_gpu", "maybe", err, sizeof(err)),
            SBX_ERR_INVALID);
        assert_int_equal(
            sbx_acquire_set(a, "package", "rpm:x", err, sizeof(err)),
            SBX_ERR_INVALID);
        assert_int_equal(sbx_acquire_set(a, "package", ">=1", err, sizeof(err)),
                         SBX_ERR_INVALID);
        /* Nothing of the refused values went in. */
        assert_null(json_object_get(task_of(a), "packages"));
        assert_int_equal(encode(a, err, sizeof(err)), 0);
        sbx_acquire_destroy(a);
}

static void test_json(void **state)
{
        sbx_acquire_t *a = sbx_acquire_new(NULL), *b = sbx_acquire_new(NULL);
        char err[512];
        (void)state;

        /* A Task... */
        assert_int_equal(sbx_acquire_set_json(a,
                                              "{\"text\": \"build it\", "
                                              "\"plan\": [\"make\"], "
                                              "\"needs_compile\": true}",
                                              err, sizeof(err)),
                         SBX_OK);
        assert_string_equal(
            json_string_value(json_object_get(task_of(a), "text")), "build it");
        assert_int_equal(encode(a, err, sizeof(err)), 0);
        /* ...or an AcquireSandbox; a later flag overrides the file. */
        assert_int_equal(sbx_acquire_set_json(b,
                                              "{\"task\": {\"text\": \"t\"}, "
                                              "\"requested_class\": \"c1\", "
                                              "\"lease_seconds\": 30}",
                                              err, sizeof(err)),
                         SBX_OK);
        assert_int_equal(sbx_acquire_set(b, "class", "c2", err, sizeof(err)),
                         SBX_OK);
        assert_string_equal(json_string_value(json_object_get(
                                sbx_acquire_body(b), "requested_class")),
                            "c2");
        assert_int_equal(encode(b, err, sizeof(err)), 0);

        assert_int_equal(sbx_acquire_set_json(a, "[1]", err, sizeof(err)),
                         SBX_ERR_INVALID);
        assert_int_equal(
            sbx_acquire_set_json(a, "{\"text\": ", err, sizeof(err)),
            SBX_ERR_INVALID);
        assert_non_null(strstr(err, "line 1"));
        /* A field the schema does not know is refused when encoded. */
        assert_int_equal(
            sbx_acquire_set_json(b, "{\"colour\": \"red\"}", err, sizeof(err)),
            SBX_OK);
        assert_int_not_equal(encode(b, err, sizeof(err)), 0);
        assert_non_null(strstr(err, "colour"));
        sbx_acquire_destroy(a);
        sbx_acquire_destroy(b);
}

static void test_no_tenant(void **state)
{
        char err[512];
        (void)state;
        unsetenv("SBX_TENANT");
        assert_null(sbx_client_new(NULL, NULL, err, sizeof(err)));
        assert_non_null(strstr(err, "no tenant"));
}

static void test_lease(void **state)
{
        sbx_lease_t *l = sbx_lease_new("sb-1", 42, NULL);
        (void)state;
        assert_string_equal(sbx_lease_sandbox_id(l), "sb-1");
        assert_int_equal(sbx_lease_version(l), 42);
        assert_null(sbx_lease_claim_id(l));
        assert_null(sbx_lease_node_id(l));
        sbx_lease_destroy(l);
        sbx_lease_destroy(NULL);
        sbx_acquire_destroy(NULL);
        sbx_run_destroy(NULL);
        sbx_result_destroy(NULL);
        sbx_client_destroy(NULL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_fields),
            cmocka_unit_test(test_bad_fields_are_refused),
            cmocka_unit_test(test_json),
            cmocka_unit_test(test_no_tenant),
            cmocka_unit_test(test_lease),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
