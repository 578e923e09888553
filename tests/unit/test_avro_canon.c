/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of Avro Parsing Canonical Form and CRC-64-AVRO: the Apache Avro
 * project's published vectors (share/test/data/schema-tests.txt), the
 * specification's own examples and rules, and malformed or hostile schemas,
 * which must be refused with a reason and no output.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codec/avro_canon.h"

struct vector {
        const char *id;
        const char *input;
        const char *canonical;
        int64_t fingerprint; /* as the file prints it: signed decimal */
};

/*
 * Every entry of the Avro project's share/test/data/schema-tests.txt.
 * Entries 001-015 (odd) carry no fingerprint line there; their canonical
 * form is that of the entry before them, whose fingerprint they repeat.
 */
static const struct vector spec_vectors[] = {
    {"000", "\"null\"", "\"null\"", 7195948357588979594},
    {"001", "{\"type\":\"null\"}", "\"null\"", 7195948357588979594},
    {"002", "\"boolean\"", "\"boolean\"", -6970731678124411036},
    {"003", "{\"type\":\"boolean\"}", "\"boolean\"", -6970731678124411036},
    {"004", "\"int\"", "\"int\"", 8247732601305521295},
    {"005", "{\"type\":\"int\"}", "\"int\"", 8247732601305521295},
    {"006", "\"long\"", "\"long\"", -3434872931120570953},
    {"007", "{\"type\":\"long\"}", "\"long\"", -3434872931120570953},
    {"008", "\"float\"", "\"float\"", 5583340709985441680},
    {"009", "{\"type\":\"float\"}", "\"float\"", 5583340709985441680},
    {"010", "\"double\"", "\"double\"", -8181574048448539266},
    {"011", "{\"type\":\"double\"}", "\"double\"", -8181574048448539266},
    {"012", "\"bytes\"", "\"bytes\"", 5746618253357095269},
    {"013", "{\"type\":\"bytes\"}", "\"bytes\"", 5746618253357095269},
    {"014", "\"string\"", "\"string\"", -8142146995180207161},
    {"015", "{\"type\":\"string\"}", "\"string\"", -8142146995180207161},
    {"016", "[  ]", "[]", -1241056759729112623},
    {"017", "[ \"int\"  ]", "[\"int\"]", -5232228896498058493},
    {"018", "[ \"int\" , {\"type\":\"boolean\"} ]", "[\"int\",\"boolean\"]",
     5392556393470105090},
    {"019", "{\"fields\":[], \"type\":\"record\", \"name\":\"foo\"}",
     "{\"name\":\"foo\",\"type\":\"record\",\"fields\":[]}",
     -4824392279771201922},
    {"020",
     "{\"fields\":[], \"type\":\"record\", \"name\":\"foo\", "
     "\"namespace\":\"x.y\"}",
     "{\"name\":\"x.y.foo\",\"type\":\"record\",\"fields\":[]}",
     5916914534497305771},
    {"021",
     "{\"fields\":[], \"type\":\"record\", \"name\":\"a.b.foo\", "
     "\"namespace\":\"x.y\"}",
     "{\"name\":\"a.b.foo\",\"type\":\"record\",\"fields\":[]}",
     -4616218487480524110},
    {"022",
     "{\"fields\":[], \"type\":\"record\", \"name\":\"foo\", "
     "\"doc\":\"Useful info\"}",
     "{\"name\":\"foo\",\"type\":\"record\",\"fields\":[]}",
     -4824392279771201922},
    {"023",
     "{\"fields\":[], \"type\":\"record\", \"name\":\"foo\", "
     "\"aliases\":[\"foo\",\"bar\"]}",
     "{\"name\":\"foo\",\"type\":\"record\",\"fields\":[]}",
     -4824392279771201922},
    {"024",
     "{\"fields\":[], \"type\":\"record\", \"name\":\"foo\", \"doc\":\"foo\", "
     "\"aliases\":[\"foo\",\"bar\"]}",
     "{\"name\":\"foo\",\"type\":\"record\",\"fields\":[]}",
     -4824392279771201922},
    {"025",
     "{\"fields\":[{\"type\":{\"type\":\"boolean\"}, \"name\":\"f1\"}], "
     "\"type\":\"record\", \"name\":\"foo\"}",
     "{\"name\":\"foo\",\"type\":\"record\",\"fields\":[{\"name\":\"f1\","
     "\"type\":\"boolean\"}]}",
     7843277075252814651},
    {"026",
     "{ \"fields\":[{\"type\":\"boolean\", \"aliases\":[], \"name\":\"f1\", "
     "\"default\":\"true\"},\n"
     "            {\"order\":\"descending\",\"name\":\"f2\",\"doc\":\"Hello\","
     "\"type\":\"int\"}],\n"
     "  \"type\":\"record\", \"name\":\"foo\"\n"
     "}",
     "{\"name\":\"foo\",\"type\":\"record\",\"fields\":[{\"name\":\"f1\","
     "\"type\":\"boolean\"},{\"name\":\"f2\",\"type\":\"int\"}]}",
     -4860222112080293046},
    {"027", "{\"type\":\"enum\", \"name\":\"foo\", \"symbols\":[\"A1\"]}",
     "{\"name\":\"foo\",\"type\":\"enum\",\"symbols\":[\"A1\"]}",
     -6342190197741309591},
    {"028",
     "{\"namespace\":\"x.y.z\", \"type\":\"enum\", \"name\":\"foo\", "
     "\"doc\":\"foo bar\", \"symbols\":[\"A1\", \"A2\"]}",
     "{\"name\":\"x.y.z.foo\",\"type\":\"enum\",\"symbols\":[\"A1\",\"A2\"]}",
     -4448647247586288245},
    {"029", "{\"name\":\"foo\",\"type\":\"fixed\",\"size\":15}",
     "{\"name\":\"foo\",\"type\":\"fixed\",\"size\":15}", 1756455273707447556},
    {"030",
     "{\"namespace\":\"x.y.z\", \"type\":\"fixed\", \"name\":\"foo\", "
     "\"doc\":\"foo bar\", \"size\":32}",
     "{\"name\":\"x.y.z.foo\",\"type\":\"fixed\",\"size\":32}",
     -3064184465700546786},
    {"031", "{ \"items\":{\"type\":\"null\"}, \"type\":\"array\"}",
     "{\"type\":\"array\",\"items\":\"null\"}", -589620603366471059},
    {"032", "{ \"values\":\"string\", \"type\":\"map\"}",
     "{\"type\":\"map\",\"values\":\"string\"}", -8732877298790414990},
    {"033",
     "  {\"name\":\"PigValue\",\"type\":\"record\",\n"
     "   \"fields\":[{\"name\":\"value\", \"type\":[\"null\", \"int\", "
     "\"long\", \"PigValue\"]}]}",
     "{\"name\":\"PigValue\",\"type\":\"record\",\"fields\":[{\"name\":"
     "\"value\",\"type\":[\"null\",\"int\",\"long\",\"PigValue\"]}]}",
     -1759257747318642341},
};

/*
 * Cases the published file does not cover, worked out by hand from the
 * specification's rules. The canonical forms and fingerprints agree with
 * the Java implementation (SchemaNormalization in Apache Avro 1.11.3),
 * except "quoted-size": Java refuses a quoted size that [INTEGERS] allows,
 * so 0 there means only the canonical form is checked.
 */
static const struct vector rule_vectors[] = {
    /* The specification's own example in "Names". */
    {"names-example",
     "{\"type\":\"record\",\"name\":\"Example\",\"doc\":\"d\",\"fields\":["
     "{\"name\":\"inheritNull\",\"type\":{\"type\":\"enum\",\"name\":"
     "\"Simple\",\"symbols\":[\"a\",\"b\"]}},"
     "{\"name\":\"explicitNamespace\",\"type\":{\"type\":\"fixed\",\"name\":"
     "\"Simple\",\"namespace\":\"explicit\",\"size\":12}},"
     "{\"name\":\"fullName\",\"type\":{\"type\":\"record\",\"name\":"
     "\"a.full.Name\",\"namespace\":\"ignored\",\"fields\":["
     "{\"name\":\"inheritNamespace\",\"type\":{\"type\":\"enum\",\"name\":"
     "\"Understanding\",\"symbols\":[\"d\",\"e\"]}}]}}]}",
     "{\"name\":\"Example\",\"type\":\"record\",\"fields\":["
     "{\"name\":\"inheritNull\",\"type\":{\"name\":\"Simple\",\"type\":"
     "\"enum\",\"symbols\":[\"a\",\"b\"]}},"
     "{\"name\":\"explicitNamespace\",\"type\":{\"name\":\"explicit.Simple\","
     "\"type\":\"fixed\",\"size\":12}},"
     "{\"name\":\"fullName\",\"type\":{\"name\":\"a.full.Name\",\"type\":"
     "\"record\",\"fields\":[{\"name\":\"inheritNamespace\",\"type\":{"
     "\"name\":\"a.full.Understanding\",\"type\":\"enum\",\"symbols\":[\"d\","
     "\"e\"]}}]}}]}",
     -1364572121179870628},
    /* Short, full and object-form references; a namespace inherited by a
     * nested record and overridden by another of the same short name. */
    {"references",
     "{\"type\":\"record\",\"name\":\"Outer\",\"namespace\":\"ns1\","
     "\"fields\":["
     "{\"name\":\"in\",\"type\":{\"type\":\"record\",\"name\":\"Inner\","
     "\"fields\":[{\"name\":\"up\",\"type\":[\"null\",\"Outer\"]}]}},"
     "{\"name\":\"in2\",\"type\":\"ns1.Inner\"},"
     "{\"name\":\"in3\",\"type\":{\"type\":\"Inner\",\"doc\":\"x\"}},"
     "{\"name\":\"other\",\"type\":{\"type\":\"record\",\"name\":\"Inner\","
     "\"namespace\":\"ns2\",\"fields\":[]}},"
     "{\"name\":\"u\",\"type\":[\"Inner\",\"ns2.Inner\"]}]}",
     "{\"name\":\"ns1.Outer\",\"type\":\"record\",\"fields\":["
     "{\"name\":\"in\",\"type\":{\"name\":\"ns1.Inner\",\"type\":\"record\","
     "\"fields\":[{\"name\":\"up\",\"type\":[\"null\",\"ns1.Outer\"]}]}},"
     "{\"name\":\"in2\",\"type\":\"ns1.Inner\"},"
     "{\"name\":\"in3\",\"type\":\"ns1.Inner\"},"
     "{\"name\":\"other\",\"type\":{\"name\":\"ns2.Inner\",\"type\":"
     "\"record\",\"fields\":[]}},"
     "{\"name\":\"u\",\"type\":[\"ns1.Inner\",\"ns2.Inner\"]}]}",
     8176623768942844126},
    /* Names in maps of arrays of unions keep the enclosing namespace. */
    {"containers",
     "{\"type\":\"record\",\"name\":\"R\",\"namespace\":\"a.b\",\"fields\":["
     "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\","
     "\"symbols\":[\"X\",\"Y\"],\"default\":\"X\"}},"
     "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":{\"type\":"
     "\"array\",\"items\":[\"null\",\"E\",{\"type\":\"fixed\",\"name\":\"F\","
     "\"size\":4}]}}},"
     "{\"name\":\"f\",\"type\":\"a.b.F\",\"default\":\"abcd\"}]}",
     "{\"name\":\"a.b.R\",\"type\":\"record\",\"fields\":["
     "{\"name\":\"e\",\"type\":{\"name\":\"a.b.E\",\"type\":\"enum\","
     "\"symbols\":[\"X\",\"Y\"]}},"
     "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":{\"type\":"
     "\"array\",\"items\":[\"null\",\"a.b.E\",{\"name\":\"a.b.F\",\"type\":"
     "\"fixed\",\"size\":4}]}}},"
     "{\"name\":\"f\",\"type\":\"a.b.F\"}]}",
     -5806754019390403483},
    /* [STRINGS]: escapes are decoded; [STRIP]: logical types go. */
    {"escapes-logical",
     "{\"type\":\"\\u0072ecord\",\"name\":\"\\u0052\",\"fields\":["
     "{\"name\":\"d\",\"type\":{\"type\":\"\\u0069nt\",\"logicalType\":"
     "\"date\"}},"
     "{\"name\":\"ts\",\"type\":{\"type\":\"long\",\"logicalType\":"
     "\"timestamp-millis\"}},"
     "{\"name\":\"dec\",\"type\":{\"type\":\"fixed\",\"name\":\"D\","
     "\"size\":16,\"logicalType\":\"decimal\",\"precision\":10,"
     "\"scale\":2}}]}",
     "{\"name\":\"R\",\"type\":\"record\",\"fields\":["
     "{\"name\":\"d\",\"type\":\"int\"},{\"name\":\"ts\",\"type\":\"long\"},"
     "{\"name\":\"dec\",\"type\":{\"name\":\"D\",\"type\":\"fixed\","
     "\"size\":16}}]}",
     -4195352271524419221},
    /* An empty namespace attribute puts a type in the null namespace. */
    {"null-namespace",
     "{\"type\":\"record\",\"name\":\"R\",\"namespace\":\"x\",\"fields\":["
     "{\"name\":\"a\",\"type\":{\"type\":\"enum\",\"name\":\"E\","
     "\"namespace\":\"\",\"symbols\":[]}}]}",
     "{\"name\":\"x.R\",\"type\":\"record\",\"fields\":["
     "{\"name\":\"a\",\"type\":{\"name\":\"E\",\"type\":\"enum\","
     "\"symbols\":[]}}]}",
     -808252578176175711},
    /* [INTEGERS]: quotes and leading zeros of a size go. */
    {"quoted-size", "{\"type\":\"fixed\",\"name\":\"F\",\"size\":\"0016\"}",
     "{\"name\":\"F\",\"type\":\"fixed\",\"size\":16}", 0},
    /* A short reference not defined in the enclosing namespace falls back
     * to the null namespace, as in the Java implementation. */
    {"null-namespace-fallback",
     "{\"type\":\"record\",\"name\":\"R\",\"namespace\":\"x\",\"fields\":["
     "{\"name\":\"a\",\"type\":{\"type\":\"fixed\",\"name\":\"F\","
     "\"namespace\":\"\",\"size\":1}},{\"name\":\"b\",\"type\":\"F\"}]}",
     "{\"name\":\"x.R\",\"type\":\"record\",\"fields\":["
     "{\"name\":\"a\",\"type\":{\"name\":\"F\",\"type\":\"fixed\","
     "\"size\":1}},{\"name\":\"b\",\"type\":\"F\"}]}",
     -292406147054926883},
};

static void check_vector(const struct vector *v)
{
        char err[256] = "", *pcf = NULL;
        uint64_t fp = 0;

        if (sbx_avro_canonical_form(v->input, &pcf, err, sizeof(err)))
                fail_msg("vector %s: %s", v->id, err);
        if (strcmp(pcf, v->canonical))
                fail_msg("vector %s:\n got  %s\n want %s", v->id, pcf,
                         v->canonical);
        free(pcf);
        assert_int_equal(sbx_avro_fingerprint(v->input, &fp, err, sizeof(err)),
                         SBX_OK);
        if (v->fingerprint && fp != (uint64_t)v->fingerprint)
                fail_msg("vector %s: fingerprint %" PRId64 ", want %" PRId64,
                         v->id, (int64_t)fp, v->fingerprint);
        /* The fingerprint is that of the canonical text, byte for byte. */
        assert_true(fp == sbx_avro_crc64(v->canonical, strlen(v->canonical)));
}

static void test_published_vectors(void **state)
{
        size_t i;
        (void)state;
        for (i = 0; i < sizeof(spec_vectors) / sizeof(spec_vectors[0]); i++)
                check_vector(&spec_vectors[i]);
}

static void test_rule_vectors(void **state)
{
        size_t i;
        (void)state;
        for (i = 0; i < sizeof(rule_vectors) / sizeof(rule_vectors[0]); i++)
                check_vector(&rule_vectors[i]);
}

/* The specification's fingerprint64() without the table, bit by bit. */
static uint64_t crc64_bitwise(const unsigned char *p, size_t n)
{
        uint64_t fp = SBX_AVRO_CRC64_EMPTY;
        size_t i;
        int j;

        for (i = 0; i < n; i++) {
                fp ^= p[i];
                for (j = 0; j < 8; j++)
                        fp =
                            (fp >> 1) ^ (SBX_AVRO_CRC64_EMPTY & (0 - (fp & 1)));
        }
        return fp;
}

static void test_crc64(void **state)
{
        unsigned char buf[1024];
        uint64_t x = 88172645463325252u;
        size_t i;
        (void)state;

        /* The specification's example and its empty-input seed. */
        assert_true(sbx_avro_crc64("\"null\"", 6) ==
                    UINT64_C(0x63dd24e7cc258f8a));
        assert_true(sbx_avro_crc64(NULL, 0) == SBX_AVRO_CRC64_EMPTY);
        assert_true(sbx_avro_crc64("", 0) == UINT64_C(0xc15d213aa4d7a795));

        /* The table agrees with the bitwise definition on every byte value
         * and on pseudo-random buffers of every length up to 1 KiB. */
        for (i = 0; i < sizeof(buf); i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                buf[i] = i < 256 ? (unsigned char)i : (unsigned char)x;
        }
        for (i = 0; i <= sizeof(buf); i += (i < 300 ? 1 : 37))
                assert_true(sbx_avro_crc64(buf, i) == crc64_bitwise(buf, i));
}

static void test_wire_bytes_little_endian(void **state)
{
        /* Single-object encoding puts the fingerprint after C3 01, least
         * significant byte first: "null" gives 8a 8f 25 cc e7 24 dd 63. */
        static const unsigned char want[8] = {0x8a, 0x8f, 0x25, 0xcc,
                                              0xe7, 0x24, 0xdd, 0x63};
        uint64_t fp                        = 0;
        int i;
        (void)state;
        assert_int_equal(sbx_avro_fingerprint("\"null\"", &fp, NULL, 0),
                         SBX_OK);
        for (i = 0; i < 8; i++)
                assert_int_equal((fp >> (8 * i)) & 0xff, want[i]);
}

/* Expects @p input to be refused with @p code and a reason holding
 * @p reason, leaving the outputs untouched. */
static void check_refused(const char *input, sbx_err_t code, const char *reason)
{
        char err[512] = "", *pcf = (char *)"untouched";
        uint64_t fp = 42;

        assert_int_equal(sbx_avro_canonical_form(input, &pcf, err, sizeof(err)),
                         code);
        assert_string_equal(pcf, "untouched");
        if (!strstr(err, reason))
                fail_msg("input %.80s: error '%s' lacks '%s'", input, err,
                         reason);
        assert_int_equal(sbx_avro_fingerprint(input, &fp, err, sizeof(err)),
                         code);
        assert_true(fp == 42);
        /* No error buffer, or a tiny one, is fine too. */
        assert_int_equal(sbx_avro_canonical_form(input, &pcf, NULL, 0), code);
        assert_int_equal(sbx_avro_canonical_form(input, &pcf, err, 1), code);
        assert_string_equal(err, "");
}

static void test_malformed(void **state)
{
        (void)state;
        check_refused("", SBX_ERR_INVALID, "not valid JSON");
        check_refused("{", SBX_ERR_INVALID, "not valid JSON");
        check_refused("\"int\" x", SBX_ERR_INVALID, "not valid JSON");
        check_refused("{\"type\":\"int\",\"type\":\"long\"}", SBX_ERR_INVALID,
                      "not valid JSON");
        check_refused("null", SBX_ERR_INVALID, "not null");
        check_refused("42", SBX_ERR_INVALID, "not a number");
        check_refused("{}", SBX_ERR_INVALID, "needs a string \"type\"");
        check_refused("{\"type\":[\"int\"]}", SBX_ERR_INVALID,
                      "needs a string \"type\"");
        check_refused("{\"type\":\"record\"}", SBX_ERR_INVALID,
                      "a record needs a string \"name\"");
        check_refused("{\"type\":\"record\",\"name\":\"R\"}", SBX_ERR_INVALID,
                      "record 'R' needs a \"fields\" array");
        check_refused("{\"type\":\"record\",\"name\":\"R\",\"fields\":{}}",
                      SBX_ERR_INVALID, "record 'R' needs a \"fields\" array");
        check_refused("\"Foo\"", SBX_ERR_INVALID, "unknown type name 'Foo'");
        check_refused("\"record\"", SBX_ERR_INVALID,
                      "unknown type name 'record'");
        check_refused("{\"type\":\"integer\"}", SBX_ERR_INVALID,
                      "unknown type name 'integer'");
        check_refused("{\"type\":\"enum\",\"name\":\"E\"}", SBX_ERR_INVALID,
                      "needs a \"symbols\" array");
        check_refused("{\"type\":\"fixed\",\"name\":\"F\"}", SBX_ERR_INVALID,
                      "non-negative integer");
        check_refused("{\"type\":\"fixed\",\"name\":\"F\",\"size\":-1}",
                      SBX_ERR_INVALID, "non-negative integer (at /size)");
        check_refused("{\"type\":\"fixed\",\"name\":\"F\",\"size\":1.5}",
                      SBX_ERR_INVALID, "non-negative integer");
        check_refused("{\"type\":\"fixed\",\"name\":\"F\",\"size\":\"+1\"}",
                      SBX_ERR_INVALID, "non-negative integer");
        check_refused("{\"type\":\"array\"}", SBX_ERR_INVALID,
                      "array needs \"items\"");
        check_refused("{\"type\":\"map\",\"items\":\"int\"}", SBX_ERR_INVALID,
                      "map needs \"values\"");
}

static void test_invalid_schemas(void **state)
{
        (void)state;
        /* Where in the input the fault is, as a JSON pointer. */
        check_refused(
            "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
            "{\"name\":\"a\",\"type\":\"int\"},"
            "{\"name\":\"b\",\"type\":{\"type\":\"array\","
            "\"items\":\"Nope\"}}]}",
            SBX_ERR_INVALID,
            "unknown type name 'Nope' (not a primitive and not "
            "defined before this point as 'Nope') "
            "(at /fields/1/type/items)");
        check_refused(
            "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
            "{\"name\":\"a\"}]}",
            SBX_ERR_INVALID, "field 'a' has no \"type\"");
        check_refused("{\"type\":\"record\",\"name\":\"R\",\"fields\":[1]}",
                      SBX_ERR_INVALID, "a field must be a JSON object");
        check_refused(
            "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
            "{\"name\":\"a\",\"type\":\"int\"},"
            "{\"name\":\"a\",\"type\":\"long\"}]}",
            SBX_ERR_INVALID, "duplicate field name 'a'");
        check_refused(
            "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
            "{\"name\":\"a-b\",\"type\":\"int\"}]}",
            SBX_ERR_INVALID, "needs a \"name\" matching");
        check_refused(
            "{\"type\":\"enum\",\"name\":\"E\",\"symbols\":"
            "[\"A\",\"A\"]}",
            SBX_ERR_INVALID, "duplicate enum symbol 'A'");
        check_refused(
            "{\"type\":\"enum\",\"name\":\"E\",\"symbols\":"
            "[\"A\",\"1B\"]}",
            SBX_ERR_INVALID, "(at /symbols/1)");
        check_refused("{\"type\":\"enum\",\"name\":\"1E\",\"symbols\":[]}",
                      SBX_ERR_INVALID, "bad enum name '1E'");
        check_refused("{\"type\":\"enum\",\"name\":\"a..E\",\"symbols\":[]}",
                      SBX_ERR_INVALID, "bad enum name 'a..E'");
        check_refused(
            "{\"type\":\"enum\",\"name\":\"E\",\"namespace\":"
            "\"x.\",\"symbols\":[]}",
            SBX_ERR_INVALID, "\"namespace\" must be");
        check_refused(
            "{\"type\":\"fixed\",\"name\":\"F\",\"namespace\":5,"
            "\"size\":1}",
            SBX_ERR_INVALID, "\"namespace\" must be");
        check_refused("{\"type\":\"fixed\",\"name\":\"x.int\",\"size\":1}",
                      SBX_ERR_INVALID, "redefines the primitive type 'int'");
        check_refused(
            "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
            "{\"name\":\"a\",\"type\":{\"type\":\"record\","
            "\"name\":\"R\",\"fields\":[]}}]}",
            SBX_ERR_INVALID, "'R' is defined twice");
        /* A name is defined before its use, depth first, left to right. */
        check_refused(
            "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
            "{\"name\":\"a\",\"type\":\"S\"},"
            "{\"name\":\"b\",\"type\":{\"type\":\"enum\","
            "\"name\":\"S\",\"symbols\":[]}}]}",
            SBX_ERR_INVALID, "unknown type name 'S'");
        /* A short reference resolves in the enclosing namespace first. */
        check_refused(
            "{\"type\":\"record\",\"name\":\"a.R\",\"fields\":["
            "{\"name\":\"x\",\"type\":{\"type\":\"enum\",\"name\":"
            "\"b.E\",\"symbols\":[]}},{\"name\":\"y\",\"type\":"
            "\"E\"}]}",
            SBX_ERR_INVALID, "as 'a.E'");
        check_refused("[\"int\",[\"null\"]]", SBX_ERR_INVALID,
                      "a union cannot hold a union (at /1)");
        check_refused("[\"int\",{\"type\":\"int\",\"logicalType\":\"date\"}]",
                      SBX_ERR_INVALID, "two branches of type 'int'");
        check_refused(
            "[{\"type\":\"array\",\"items\":\"int\"},"
            "{\"type\":\"array\",\"items\":\"long\"}]",
            SBX_ERR_INVALID, "two branches of type 'array'");
        check_refused(
            "[{\"type\":\"map\",\"values\":\"int\"},"
            "{\"type\":\"map\",\"values\":\"long\"}]",
            SBX_ERR_INVALID, "two branches of type 'map'");
        check_refused(
            "[{\"type\":\"fixed\",\"name\":\"F\",\"size\":1},"
            "\"F\"]",
            SBX_ERR_INVALID, "two branches of type 'F'");
}

/* "{"type":"array","items":" n times around "int". */
static char *nested_arrays(size_t n)
{
        static const char open[] = "{\"type\":\"array\",\"items\":";
        size_t ol                = sizeof(open) - 1, i;
        char *s                  = malloc(n * (ol + 1) + 6), *p;

        assert_non_null(s);
        p = s;
        for (i = 0; i < n; i++, p += ol)
                memcpy(p, open, ol);
        memcpy(p, "\"int\"", 5);
        p += 5;
        for (i = 0; i < n; i++)
                *p++ = '}';
        *p = '\0';
        return s;
}

static void test_depth_limit(void **state)
{
        char err[256], *pcf = NULL, *s, *u;
        size_t i;
        (void)state;

        /* The top level is level 1: 63 arrays around "int" make 64. */
        s = nested_arrays(SBX_AVRO_MAX_DEPTH - 1);
        assert_int_equal(sbx_avro_canonical_form(s, &pcf, err, sizeof(err)),
                         SBX_OK);
        assert_true(strlen(pcf) == strlen(s));
        free(pcf);
        free(s);

        s = nested_arrays(SBX_AVRO_MAX_DEPTH);
        check_refused(s, SBX_ERR_TOOBIG, "nested deeper than 64 levels");
        free(s);

        /* Far past the JSON parser's own bound: refused, no stack overflow. */
        s = nested_arrays(10000);
        check_refused(s, SBX_ERR_TOOBIG, "not valid JSON");
        free(s);
        u = malloc(20001);
        assert_non_null(u);
        for (i = 0; i < 10000; i++) {
                u[i]         = '[';
                u[10000 + i] = ']';
        }
        u[20000] = '\0';
        check_refused(u, SBX_ERR_TOOBIG, "not valid JSON");
        free(u);
}

static void test_output_bound(void **state)
{
        /* A long namespace and many short references to a type in it
         * would make a canonical form of about 18 MB from 70 kB. */
        const size_t nslen = 60000, refs = 300;
        char *s = malloc(nslen + refs * 40 + 200), *p;
        size_t i;
        (void)state;

        assert_non_null(s);
        p = s + sprintf(s,
                        "{\"type\":\"record\",\"name\":\"R\","
                        "\"namespace\":\"");
        memset(p, 'n', nslen);
        p += nslen;
        p += sprintf(p,
                     "\",\"fields\":[{\"name\":\"f\",\"type\":{\"type\":"
                     "\"fixed\",\"name\":\"F\",\"size\":1}}");
        for (i = 0; i < refs; i++)
                p += sprintf(p, ",{\"name\":\"r%zu\",\"type\":\"F\"}", i);
        strcpy(p, "]}");
        check_refused(s, SBX_ERR_TOOBIG, "canonical form longer than");
        free(s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_crc64),
            cmocka_unit_test(test_wire_bytes_little_endian),
            cmocka_unit_test(test_published_vectors),
            cmocka_unit_test(test_rule_vectors),
            cmocka_unit_test(test_malformed),
            cmocka_unit_test(test_invalid_schemas),
            cmocka_unit_test(test_depth_limit),
            cmocka_unit_test(test_output_bound),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
