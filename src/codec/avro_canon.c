/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Parsing Canonical Form and CRC-64-AVRO fingerprints of Avro schemas, per
 * the Avro specification. The schema JSON is walked once, depth first and
 * left to right, the order in which the specification defines names: each
 * record, enum and fixed is registered under its fullname before its body,
 * so recursive and later references resolve to it, and a reference to a name
 * not yet defined is an error. The canonical form is written during the walk
 * and holds only name, type, fields, symbols, items, values and size, in
 * that order, with fullnames and no white space; it is handed out only if
 * the whole schema was valid.
 */
#include "codec/avro_canon.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

/*
 * Bound on the canonical form. Fullnames make it longer than its input
 * (each short reference gains its namespace), so without one a small schema
 * could ask for gigabytes.
 */
#define CANON_MAX_SIZE (16 * 1024 * 1024)

/*
 * fp_table[i] is byte i run through the spec's initFPTable() loop:
 * for 8 rounds, fp = (fp >> 1) ^ (SBX_AVRO_CRC64_EMPTY & -(fp & 1)).
 */
static const uint64_t fp_table[256] = {
    0x0000000000000000ULL, 0x2cf1cba6b75351faULL, 0x59e3974d6ea6a3f4ULL,
    0x75125cebd9f5f20eULL, 0xb3c72e9add4d47e8ULL, 0x9f36e53c6a1e1612ULL,
    0xea24b9d7b3ebe41cULL, 0xc6d5727104b8b5e6ULL, 0xe5341f40f335c0fbULL,
    0xc9c5d4e644669101ULL, 0xbcd7880d9d93630fULL, 0x902643ab2ac032f5ULL,
    0x56f331da2e788713ULL, 0x7a02fa7c992bd6e9ULL, 0x0f10a69740de24e7ULL,
    0x23e16d31f78d751dULL, 0x48d27cf4afc4ceddULL, 0x6423b75218979f27ULL,
    0x1131ebb9c1626d29ULL, 0x3dc0201f76313cd3ULL, 0xfb15526e72898935ULL,
    0xd7e499c8c5dad8cfULL, 0xa2f6c5231c2f2ac1ULL, 0x8e070e85ab7c7b3bULL,
    0xade663b45cf10e26ULL, 0x8117a812eba25fdcULL, 0xf405f4f93257add2ULL,
    0xd8f43f5f8504fc28ULL, 0x1e214d2e81bc49ceULL, 0x32d0868836ef1834ULL,
    0x47c2da63ef1aea3aULL, 0x6b3311c55849bbc0ULL, 0x91a4f9e95f899dbaULL,
    0xbd55324fe8dacc40ULL, 0xc8476ea4312f3e4eULL, 0xe4b6a502867c6fb4ULL,
    0x2263d77382c4da52ULL, 0x0e921cd535978ba8ULL, 0x7b80403eec6279a6ULL,
    0x57718b985b31285cULL, 0x7490e6a9acbc5d41ULL, 0x58612d0f1bef0cbbULL,
    0x2d7371e4c21afeb5ULL, 0x0182ba427549af4fULL, 0xc757c83371f11aa9ULL,
    0xeba60395c6a24b53ULL, 0x9eb45f7e1f57b95dULL, 0xb24594d8a804e8a7ULL,
    0xd976851df04d5367ULL, 0xf5874ebb471e029dULL, 0x809512509eebf093ULL,
    0xac64d9f629b8a169ULL, 0x6ab1ab872d00148fULL, 0x464060219a534575ULL,
    0x33523cca43a6b77bULL, 0x1fa3f76cf4f5e681ULL, 0x3c429a5d0378939cULL,
    0x10b351fbb42bc266ULL, 0x65a10d106dde3068ULL, 0x4950c6b6da8d6192ULL,
    0x8f85b4c7de35d474ULL, 0xa3747f616966858eULL, 0xd666238ab0937780ULL,
    0xfa97e82c07c0267aULL, 0xa1f3b1a7f6bc745fULL, 0x8d027a0141ef25a5ULL,
    0xf81026ea981ad7abULL, 0xd4e1ed4c2f498651ULL, 0x12349f3d2bf133b7ULL,
    0x3ec5549b9ca2624dULL, 0x4bd7087045579043ULL, 0x6726c3d6f204c1b9ULL,
    0x44c7aee70589b4a4ULL, 0x68366541b2dae55eULL, 0x1d2439aa6b2f1750ULL,
    0x31d5f20cdc7c46aaULL, 0xf700807dd8c4f34cULL, 0xdbf14bdb6f97a2b6ULL,
    0xaee31730b66250b8ULL, 0x8212dc9601310142ULL, 0xe921cd535978ba82ULL,
    0xc5d006f5ee2beb78ULL, 0xb0c25a1e37de1976ULL, 0x9c3391b8808d488cULL,
    0x5ae6e3c98435fd6aULL, 0x7617286f3366ac90ULL, 0x03057484ea935e9eULL,
    0x2ff4bf225dc00f64ULL, 0x0c15d213aa4d7a79ULL, 0x20e419b51d1e2b83ULL,
    0x55f6455ec4ebd98dULL, 0x79078ef873b88877ULL, 0xbfd2fc8977003d91ULL,
    0x9323372fc0536c6bULL, 0xe6316bc419a69e65ULL, 0xcac0a062aef5cf9fULL,
    0x3057484ea935e9e5ULL, 0x1ca683e81e66b81fULL, 0x69b4df03c7934a11ULL,
    0x454514a570c01bebULL, 0x839066d47478ae0dULL, 0xaf61ad72c32bfff7ULL,
    0xda73f1991ade0df9ULL, 0xf6823a3fad8d5c03ULL, 0xd563570e5a00291eULL,
    0xf9929ca8ed5378e4ULL, 0x8c80c04334a68aeaULL, 0xa0710be583f5db10ULL,
    0x66a47994874d6ef6ULL, 0x4a55b232301e3f0cULL, 0x3f47eed9e9ebcd02ULL,
    0x13b6257f5eb89cf8ULL, 0x788534ba06f12738ULL, 0x5474ff1cb1a276c2ULL,
    0x2166a3f7685784ccULL, 0x0d976851df04d536ULL, 0xcb421a20dbbc60d0ULL,
    0xe7b3d1866cef312aULL, 0x92a18d6db51ac324ULL, 0xbe5046cb024992deULL,
    0x9db12bfaf5c4e7c3ULL, 0xb140e05c4297b639ULL, 0xc452bcb79b624437ULL,
    0xe8a377112c3115cdULL, 0x2e7605602889a02bULL, 0x0287cec69fdaf1d1ULL,
    0x7795922d462f03dfULL, 0x5b64598bf17c5225ULL, 0xc15d213aa4d7a795ULL,
    0xedacea9c1384f66fULL, 0x98beb677ca710461ULL, 0xb44f7dd17d22559bULL,
    0x729a0fa0799ae07dULL, 0x5e6bc406cec9b187ULL, 0x2b7998ed173c4389ULL,
    0x0788534ba06f1273ULL, 0x24693e7a57e2676eULL, 0x0898f5dce0b13694ULL,
    0x7d8aa9373944c49aULL, 0x517b62918e179560ULL, 0x97ae10e08aaf2086ULL,
    0xbb5fdb463dfc717cULL, 0xce4d87ade4098372ULL, 0xe2bc4c0b535ad288ULL,
    0x898f5dce0b136948ULL, 0xa57e9668bc4038b2ULL, 0xd06cca8365b5cabcULL,
    0xfc9d0125d2e69b46ULL, 0x3a487354d65e2ea0ULL, 0x16b9b8f2610d7f5aULL,
    0x63abe419b8f88d54ULL, 0x4f5a2fbf0fabdcaeULL, 0x6cbb428ef826a9b3ULL,
    0x404a89284f75f849ULL, 0x3558d5c396800a47ULL, 0x19a91e6521d35bbdULL,
    0xdf7c6c14256bee5bULL, 0xf38da7b29238bfa1ULL, 0x869ffb594bcd4dafULL,
    0xaa6e30fffc9e1c55ULL, 0x50f9d8d3fb5e3a2fULL, 0x7c0813754c0d6bd5ULL,
    0x091a4f9e95f899dbULL, 0x25eb843822abc821ULL, 0xe33ef64926137dc7ULL,
    0xcfcf3def91402c3dULL, 0xbadd610448b5de33ULL, 0x962caaa2ffe68fc9ULL,
    0xb5cdc793086bfad4ULL, 0x993c0c35bf38ab2eULL, 0xec2e50de66cd5920ULL,
    0xc0df9b78d19e08daULL, 0x060ae909d526bd3cULL, 0x2afb22af6275ecc6ULL,
    0x5fe97e44bb801ec8ULL, 0x7318b5e20cd34f32ULL, 0x182ba427549af4f2ULL,
    0x34da6f81e3c9a508ULL, 0x41c8336a3a3c5706ULL, 0x6d39f8cc8d6f06fcULL,
    0xabec8abd89d7b31aULL, 0x871d411b3e84e2e0ULL, 0xf20f1df0e77110eeULL,
    0xdefed65650224114ULL, 0xfd1fbb67a7af3409ULL, 0xd1ee70c110fc65f3ULL,
    0xa4fc2c2ac90997fdULL, 0x880de78c7e5ac607ULL, 0x4ed895fd7ae273e1ULL,
    0x62295e5bcdb1221bULL, 0x173b02b01444d015ULL, 0x3bcac916a31781efULL,
    0x60ae909d526bd3caULL, 0x4c5f5b3be5388230ULL, 0x394d07d03ccd703eULL,
    0x15bccc768b9e21c4ULL, 0xd369be078f269422ULL, 0xff9875a13875c5d8ULL,
    0x8a8a294ae18037d6ULL, 0xa67be2ec56d3662cULL, 0x859a8fdda15e1331ULL,
    0xa96b447b160d42cbULL, 0xdc791890cff8b0c5ULL, 0xf088d33678abe13fULL,
    0x365da1477c1354d9ULL, 0x1aac6ae1cb400523ULL, 0x6fbe360a12b5f72dULL,
    0x434ffdaca5e6a6d7ULL, 0x287cec69fdaf1d17ULL, 0x048d27cf4afc4cedULL,
    0x719f7b249309bee3ULL, 0x5d6eb082245aef19ULL, 0x9bbbc2f320e25affULL,
    0xb74a095597b10b05ULL, 0xc25855be4e44f90bULL, 0xeea99e18f917a8f1ULL,
    0xcd48f3290e9addecULL, 0xe1b9388fb9c98c16ULL, 0x94ab6464603c7e18ULL,
    0xb85aafc2d76f2fe2ULL, 0x7e8fddb3d3d79a04ULL, 0x527e16156484cbfeULL,
    0x276c4afebd7139f0ULL, 0x0b9d81580a22680aULL, 0xf10a69740de24e70ULL,
    0xddfba2d2bab11f8aULL, 0xa8e9fe396344ed84ULL, 0x8418359fd417bc7eULL,
    0x42cd47eed0af0998ULL, 0x6e3c8c4867fc5862ULL, 0x1b2ed0a3be09aa6cULL,
    0x37df1b05095afb96ULL, 0x143e7634fed78e8bULL, 0x38cfbd924984df71ULL,
    0x4ddde17990712d7fULL, 0x612c2adf27227c85ULL, 0xa7f958ae239ac963ULL,
    0x8b08930894c99899ULL, 0xfe1acfe34d3c6a97ULL, 0xd2eb0445fa6f3b6dULL,
    0xb9d81580a22680adULL, 0x9529de261575d157ULL, 0xe03b82cdcc802359ULL,
    0xccca496b7bd372a3ULL, 0x0a1f3b1a7f6bc745ULL, 0x26eef0bcc83896bfULL,
    0x53fcac5711cd64b1ULL, 0x7f0d67f1a69e354bULL, 0x5cec0ac051134056ULL,
    0x701dc166e64011acULL, 0x050f9d8d3fb5e3a2ULL, 0x29fe562b88e6b258ULL,
    0xef2b245a8c5e07beULL, 0xc3daeffc3b0d5644ULL, 0xb6c8b317e2f8a44aULL,
    0x9a3978b155abf5b0ULL,
};

uint64_t sbx_avro_crc64(const void *buf, size_t len)
{
        const unsigned char *p = buf;
        uint64_t fp            = SBX_AVRO_CRC64_EMPTY;
        size_t i;

        for (i = 0; i < len; i++)
                fp = (fp >> 8) ^ fp_table[(fp ^ p[i]) & 0xff];
        return fp;
}

/* A growing NUL-terminated string. */
struct strbuf {
        char *p;
        size_t len;
        size_t cap;
};

static void strbuf_putn(struct strbuf *b, const char *s, size_t n)
{
        if (b->cap - b->len <= n) {
                size_t cap = b->cap ? b->cap : 256;
                while (cap - b->len <= n) {
                        sbx_assert(cap < SIZE_MAX / 2);
                        cap *= 2;
                }
                b->p   = sbx_realloc(b->p, cap);
                b->cap = cap;
        }
        memcpy(b->p + b->len, s, n);
        b->len += n;
        b->p[b->len] = '\0';
}

static void strbuf_puts(struct strbuf *b, const char *s)
{
        strbuf_putn(b, s, strlen(s));
}

/* Cuts @p b back to @p len bytes (a length it had before). */
static void strbuf_truncate(struct strbuf *b, size_t len)
{
        if (b->p) {
                b->p[len] = '\0';
                b->len    = len;
        }
}

/*
 * One canonicalisation: the output, the fullnames defined so far (a JSON
 * object used as a set), and the JSON pointer of the schema being walked,
 * which error messages quote.
 */
struct canon {
        struct strbuf out;
        struct strbuf path;
        json_t *names;
        char *errstr;
        size_t errstr_size;
};

static sbx_err_t canon_fail(struct canon *c,
                            sbx_err_t err,
                            const char *fmt,
                            ...) __attribute__((format(printf, 3, 4)));

/* Writes the reason and, below the top level, where it happened. */
static sbx_err_t canon_fail(struct canon *c,
                            sbx_err_t err,
                            const char *fmt,
                            ...)
{
        va_list ap;
        size_t n;

        if (!c->errstr || !c->errstr_size)
                return err;
        va_start(ap, fmt);
        vsnprintf(c->errstr, c->errstr_size, fmt, ap);
        va_end(ap);
        n = strlen(c->errstr);
        if (c->path.len && n + 1 < c->errstr_size)
                snprintf(c->errstr + n, c->errstr_size - n, " (at %s)",
                         c->path.p);
        return err;
}

/*
 * Appends "/seg", "/seg/index" or "/index" (no @p seg) to the path; returns
 * the length to restore with strbuf_truncate() on the way back out.
 */
static size_t path_push(struct canon *c, const char *seg, long index)
{
        size_t len = c->path.len;
        char num[32];

        if (seg) {
                strbuf_puts(&c->path, "/");
                strbuf_puts(&c->path, seg);
        }
        if (index >= 0) {
                sbx_fmt(num, sizeof(num), "/%ld", index);
                strbuf_puts(&c->path, num);
        }
        return len;
}

/*
 * Writes @p s as a JSON string literal. [STRINGS]: escapes were decoded by
 * the parser and characters are written as UTF-8; only what JSON cannot hold
 * raw (quote, backslash, control characters) is escaped.
 */
static void out_string(struct canon *c, const char *s)
{
        const char *run = s;
        char esc[8];

        strbuf_putn(&c->out, "\"", 1);
        for (; *s; s++) {
                unsigned char ch = (unsigned char)*s;
                if (ch >= 0x20 && ch != '"' && ch != '\\')
                        continue;
                strbuf_putn(&c->out, run, (size_t)(s - run));
                if (ch == '"' || ch == '\\')
                        sbx_fmt(esc, sizeof(esc), "\\%c", ch);
                else
                        sbx_fmt(esc, sizeof(esc), "\\u%04x", ch);
                strbuf_puts(&c->out, esc);
                run = s + 1;
        }
        strbuf_putn(&c->out, run, (size_t)(s - run));
        strbuf_putn(&c->out, "\"", 1);
}

static int is_primitive(const char *s)
{
        static const char *const prims[] = {"null",  "boolean", "int",
                                            "long",  "float",   "double",
                                            "bytes", "string"};
        size_t i;

        for (i = 0; i < SBX_ARRAY_SIZE(prims); i++)
                if (!strcmp(s, prims[i]))
                        return 1;
        return 0;
}

/* The spec's name grammar, [A-Za-z_][A-Za-z0-9_]*, on s[0..n). */
static int name_ok(const char *s, size_t n)
{
        size_t i;

        if (!n || !((s[0] >= 'A' && s[0] <= 'Z') ||
                    (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
                return 0;
        for (i = 1; i < n; i++)
                if (!((s[i] >= 'A' && s[i] <= 'Z') ||
                      (s[i] >= 'a' && s[i] <= 'z') ||
                      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
                        return 0;
        return 1;
}

/* A non-empty dot-separated sequence of names (a fullname or namespace). */
static int dotted_ok(const char *s)
{
        const char *dot;

        for (;;) {
                dot = strchr(s, '.');
                if (!name_ok(s, dot ? (size_t)(dot - s) : strlen(s)))
                        return 0;
                if (!dot)
                        return 1;
                s = dot + 1;
        }
}

/* "ns.name", or "name" in the null namespace; caller frees. */
static char *join_name(const char *ns, const char *name)
{
        size_t nl = strlen(ns), ml = strlen(name);
        char *full;

        if (!nl)
                return sbx_strdup(name);
        full = sbx_malloc(nl + 1 + ml + 1);
        memcpy(full, ns, nl);
        full[nl] = '.';
        memcpy(full + nl + 1, name, ml + 1);
        return full;
}

/* Adds @p key to the JSON object @p set; 0 if it was there already. */
static int set_add(json_t *set, const char *key)
{
        int rc;

        if (json_object_get(set, key))
                return 0;
        rc = json_object_set_new(set, key, json_true());
        sbx_assert(rc == 0);
        return 1;
}

static sbx_err_t canon_schema(struct canon *c,
                              const json_t *s,
                              const char *ns,
                              int depth,
                              char **ret_key);

/*
 * Writes a reference to a defined type, given as a primitive name or a
 * (full or short) name. *ret_key, if asked for, gets what the reference
 * names, for spotting duplicate union branches.
 */
static sbx_err_t canon_ref(struct canon *c,
                           const char *name,
                           const char *ns,
                           char **ret_key)
{
        char *full;

        if (is_primitive(name)) {
                out_string(c, name);
                if (ret_key)
                        *ret_key = sbx_strdup(name);
                return SBX_OK;
        }
        full = strchr(name, '.') ? sbx_strdup(name) : join_name(ns, name);
        /* Like the Java implementation, fall back to the null namespace. */
        if (!json_object_get(c->names, full) && *ns && !strchr(name, '.') &&
            json_object_get(c->names, name)) {
                free(full);
                full = sbx_strdup(name);
        }
        if (!json_object_get(c->names, full)) {
                sbx_err_t err = canon_fail(
                    c, SBX_ERR_INVALID,
                    "unknown type name '%s' (not a primitive and not "
                    "defined before this point as '%s')",
                    name, full);
                free(full);
                return err;
        }
        out_string(c, full);
        if (ret_key)
                *ret_key = full;
        else
                free(full);
        return SBX_OK;
}

/* A record's fields: [{"name":...,"type":...},...]. */
static sbx_err_t canon_fields(struct canon *c,
                              const json_t *fields,
                              const char *ns,
                              int depth)
{
        json_t *seen = json_object();
        const json_t *f;
        sbx_err_t err = SBX_OK;
        size_t i, mark;

        sbx_assert(seen);
        strbuf_puts(&c->out, "[");
        json_array_foreach(fields, i, f)
        {
                const json_t *name = json_object_get(f, "name");
                const json_t *type = json_object_get(f, "type");
                mark               = path_push(c, "fields", (long)i);
                if (!json_is_object(f)) {
                        err = canon_fail(c, SBX_ERR_INVALID,
                                         "a field must be a JSON object");
                        goto done;
                }
                if (!json_is_string(name) ||
                    !name_ok(json_string_value(name),
                             strlen(json_string_value(name)))) {
                        err = canon_fail(c, SBX_ERR_INVALID,
                                         "a field needs a \"name\" matching "
                                         "[A-Za-z_][A-Za-z0-9_]*");
                        goto done;
                }
                if (!set_add(seen, json_string_value(name))) {
                        err = canon_fail(c, SBX_ERR_INVALID,
                                         "duplicate field name '%s'",
                                         json_string_value(name));
                        goto done;
                }
                if (!type) {
                        err = canon_fail(c, SBX_ERR_INVALID,
                                         "field '%s' has no \"type\"",
                                         json_string_value(name));
                        goto done;
                }
                strbuf_puts(&c->out, i ? ",{\"name\":" : "{\"name\":");
                out_string(c, json_string_value(name));
                strbuf_puts(&c->out, ",\"type\":");
                path_push(c, "type", -1);
                err = canon_schema(c, type, ns, depth + 1, NULL);
                if (err)
                        goto done;
                strbuf_truncate(&c->path, mark);
                strbuf_puts(&c->out, "}");
        }
        strbuf_puts(&c->out, "]");
done:
        json_decref(seen);
        return err;
}

/* An enum's symbols: distinct names, as a JSON array. */
static sbx_err_t canon_symbols(struct canon *c, const json_t *symbols)
{
        json_t *seen = json_object();
        const json_t *sym;
        sbx_err_t err = SBX_OK;
        size_t i, mark;

        sbx_assert(seen);
        strbuf_puts(&c->out, "[");
        json_array_foreach(symbols, i, sym)
        {
                const char *v = json_string_value(sym);
                mark          = path_push(c, "symbols", (long)i);
                if (!v || !name_ok(v, strlen(v))) {
                        err = canon_fail(c, SBX_ERR_INVALID,
                                         "an enum symbol must be a string "
                                         "matching [A-Za-z_][A-Za-z0-9_]*");
                        goto done;
                }
                if (!set_add(seen, v)) {
                        err = canon_fail(c, SBX_ERR_INVALID,
                                         "duplicate enum symbol '%s'", v);
                        goto done;
                }
                strbuf_truncate(&c->path, mark);
                if (i)
                        strbuf_puts(&c->out, ",");
                out_string(c, v);
        }
        strbuf_puts(&c->out, "]");
done:
        json_decref(seen);
        return err;
}

/*
 * A fixed's size: a non-negative JSON integer or, as [INTEGERS] allows, a
 * string of decimal digits; written without quotes or leading zeros.
 */
static sbx_err_t canon_size(struct canon *c, const json_t *size)
{
        long long v = -1;
        char num[32];

        if (json_is_integer(size)) {
                v = json_integer_value(size);
        } else if (json_is_string(size)) {
                const char *s = json_string_value(size);
                char *end;
                if (*s >= '0' && *s <= '9') {
                        errno = 0;
                        v     = strtoll(s, &end, 10);
                        if (errno || *end)
                                v = -1;
                }
        }
        if (v < 0)
                return canon_fail(c, SBX_ERR_INVALID,
                                  "a fixed needs a \"size\" that is a "
                                  "non-negative integer");
        strbuf_puts(&c->out, sbx_fmt(num, sizeof(num), "%lld", v));
        return SBX_OK;
}

/*
 * A record, enum or fixed: works out its fullname (a dotted name is already
 * one; else the "namespace" attribute, else the enclosing namespace),
 * defines it, then writes the body, whose own short names default to this
 * type's namespace.
 */
static sbx_err_t canon_named(struct canon *c,
                             const json_t *s,
                             const char *type,
                             const char *ns,
                             int depth,
                             char **ret_key)
{
        const json_t *jname = json_object_get(s, "name");
        const json_t *jns   = json_object_get(s, "namespace");
        const json_t *body;
        const char *name, *dot, *last;
        char *full = NULL, *own_ns = NULL;
        sbx_err_t err = SBX_OK;
        size_t mark;

        if (!json_is_string(jname))
                return canon_fail(c, SBX_ERR_INVALID,
                                  "a %s needs a string \"name\"", type);
        name = json_string_value(jname);
        dot  = strrchr(name, '.');
        if (dot) {
                full   = sbx_strdup(name);
                own_ns = sbx_strndup(name, (size_t)(dot - name));
        } else {
                if (jns && !json_is_null(jns)) {
                        if (!json_is_string(jns) ||
                            (*json_string_value(jns) &&
                             !dotted_ok(json_string_value(jns)))) {
                                err = canon_fail(
                                    c, SBX_ERR_INVALID,
                                    "%s '%s': \"namespace\" must be a "
                                    "string of dot-separated names",
                                    type, name);
                                goto done;
                        }
                        ns = json_string_value(jns);
                }
                full   = join_name(ns, name);
                own_ns = sbx_strdup(ns);
        }
        last = dot ? dot + 1 : name;
        if (!dotted_ok(full)) {
                err = canon_fail(c, SBX_ERR_INVALID,
                                 "bad %s name '%s': each dot-separated part "
                                 "must match [A-Za-z_][A-Za-z0-9_]*",
                                 type, full);
                goto done;
        }
        if (is_primitive(last)) {
                err = canon_fail(c, SBX_ERR_INVALID,
                                 "%s '%s' redefines the primitive type '%s'",
                                 type, full, last);
                goto done;
        }
        if (!set_add(c->names, full)) {
                err = canon_fail(c, SBX_ERR_INVALID, "'%s' is defined twice",
                                 full);
                goto done;
        }

        strbuf_puts(&c->out, "{\"name\":");
        out_string(c, full);
        strbuf_puts(&c->out, ",\"type\":");
        out_string(c, type);
        if (!strcmp(type, "record")) {
                body = json_object_get(s, "fields");
                if (!json_is_array(body)) {
                        err = canon_fail(c, SBX_ERR_INVALID,
                                         "record '%s' needs a \"fields\" "
                                         "array",
                                         full);
                        goto done;
                }
                strbuf_puts(&c->out, ",\"fields\":");
                err = canon_fields(c, body, own_ns, depth);
        } else if (!strcmp(type, "enum")) {
                body = json_object_get(s, "symbols");
                if (!json_is_array(body)) {
                        err = canon_fail(c, SBX_ERR_INVALID,
                                         "enum '%s' needs a \"symbols\" "
                                         "array",
                                         full);
                        goto done;
                }
                strbuf_puts(&c->out, ",\"symbols\":");
                err = canon_symbols(c, body);
        } else {
                mark = path_push(c, "size", -1);
                strbuf_puts(&c->out, ",\"size\":");
                err = canon_size(c, json_object_get(s, "size"));
                strbuf_truncate(&c->path, mark);
        }
        if (err)
                goto done;
        strbuf_puts(&c->out, "}");
        if (ret_key) {
                *ret_key = full;
                full     = NULL;
        }
done:
        free(full);
        free(own_ns);
        return err;
}

/* An array or map: {"type":...,"items"|"values":schema}. */
static sbx_err_t canon_container(struct canon *c,
                                 const json_t *s,
                                 const char *type,
                                 const char *attr,
                                 const char *ns,
                                 int depth,
                                 char **ret_key)
{
        const json_t *inner = json_object_get(s, attr);
        sbx_err_t err;
        size_t mark;

        if (!inner)
                return canon_fail(c, SBX_ERR_INVALID, "%s needs \"%s\"", type,
                                  attr);
        strbuf_puts(&c->out, "{\"type\":");
        out_string(c, type);
        strbuf_puts(&c->out, ",\"");
        strbuf_puts(&c->out, attr);
        strbuf_puts(&c->out, "\":");
        mark = path_push(c, attr, -1);
        err  = canon_schema(c, inner, ns, depth + 1, NULL);
        if (err)
                return err;
        strbuf_truncate(&c->path, mark);
        strbuf_puts(&c->out, "}");
        if (ret_key)
                *ret_key =
                    sbx_strdup(!strcmp(type, "array") ? "{array}" : "{map}");
        return SBX_OK;
}

/*
 * A union: its branches in order. The spec forbids a union directly in a
 * union, and two branches of the same type unless both are named types
 * with different fullnames.
 */
static sbx_err_t canon_union(struct canon *c,
                             const json_t *s,
                             const char *ns,
                             int depth)
{
        json_t *seen = json_object();
        const json_t *branch;
        sbx_err_t err = SBX_OK;
        char *key     = NULL;
        size_t i, mark;

        sbx_assert(seen);
        strbuf_puts(&c->out, "[");
        json_array_foreach(s, i, branch)
        {
                mark = path_push(c, NULL, (long)i);
                if (json_is_array(branch)) {
                        err = canon_fail(c, SBX_ERR_INVALID,
                                         "a union cannot hold a union");
                        goto done;
                }
                if (i)
                        strbuf_puts(&c->out, ",");
                err = canon_schema(c, branch, ns, depth + 1, &key);
                if (err)
                        goto done;
                if (!set_add(seen, key)) {
                        err = canon_fail(c, SBX_ERR_INVALID,
                                         "the union has two branches of "
                                         "type '%s'",
                                         key[0] == '{'
                                             ? (key[1] == 'a' ? "array" : "map")
                                             : key);
                        goto done;
                }
                free(key);
                key = NULL;
                strbuf_truncate(&c->path, mark);
        }
        strbuf_puts(&c->out, "]");
done:
        free(key);
        json_decref(seen);
        return err;
}

/*
 * Writes the canonical form of schema @p s, found inside namespace @p ns at
 * nesting level @p depth (1 at the top). *ret_key, if asked for, gets what
 * a union tells its branches apart by: the primitive name, the fullname of
 * a named type, or "{array}" / "{map}" (no fullname holds a brace).
 */
static sbx_err_t canon_schema(struct canon *c,
                              const json_t *s,
                              const char *ns,
                              int depth,
                              char **ret_key)
{
        const json_t *jtype;
        const char *type;

        if (depth > SBX_AVRO_MAX_DEPTH)
                return canon_fail(c, SBX_ERR_TOOBIG,
                                  "schema nested deeper than %d levels",
                                  SBX_AVRO_MAX_DEPTH);
        if (c->out.len > CANON_MAX_SIZE)
                return canon_fail(c, SBX_ERR_TOOBIG,
                                  "canonical form longer than %d bytes",
                                  CANON_MAX_SIZE);

        if (json_is_string(s))
                return canon_ref(c, json_string_value(s), ns, ret_key);
        if (json_is_array(s)) {
                sbx_assert(!ret_key); /* canon_union() refused it */
                return canon_union(c, s, ns, depth);
        }
        if (!json_is_object(s))
                return canon_fail(c, SBX_ERR_INVALID,
                                  "a schema must be a JSON string, object "
                                  "or array, not %s",
                                  json_is_null(s)      ? "null"
                                  : json_is_boolean(s) ? "a boolean"
                                                       : "a number");

        jtype = json_object_get(s, "type");
        if (!json_is_string(jtype))
                return canon_fail(c, SBX_ERR_INVALID,
                                  "a schema object needs a string \"type\"");
        type = json_string_value(jtype);
        if (!strcmp(type, "record") || !strcmp(type, "enum") ||
            !strcmp(type, "fixed"))
                return canon_named(c, s, type, ns, depth, ret_key);
        if (!strcmp(type, "array"))
                return canon_container(c, s, type, "items", ns, depth, ret_key);
        if (!strcmp(type, "map"))
                return canon_container(c, s, type, "values", ns, depth,
                                       ret_key);
        /* [PRIMITIVES]: {"type":"int",...} is "int"; {"type":"X"} is a
         * reference to the named type X. */
        return canon_ref(c, type, ns, ret_key);
}

sbx_err_t sbx_avro_canonical_form(const char *schema_json,
                                  char **ret_pcf,
                                  char *errstr,
                                  size_t errstr_size)
{
        struct canon c = {.errstr = errstr, .errstr_size = errstr_size};
        json_error_t jerr;
        json_t *root;
        sbx_err_t err;

        sbx_assert(schema_json && ret_pcf);
        root = json_loads(schema_json, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES,
                          &jerr);
        if (!root)
                return sbx_seterr(
                    errstr, errstr_size,
                    json_error_code(&jerr) == json_error_stack_overflow
                        ? SBX_ERR_TOOBIG
                        : SBX_ERR_INVALID,
                    "schema is not valid JSON: %s (line %d, column %d)",
                    jerr.text, jerr.line, jerr.column);

        c.names = json_object();
        sbx_assert(c.names);
        err = canon_schema(&c, root, "", 1, NULL);
        if (!err && c.out.len > CANON_MAX_SIZE)
                err = canon_fail(&c, SBX_ERR_TOOBIG,
                                 "canonical form longer than %d bytes",
                                 CANON_MAX_SIZE);
        json_decref(c.names);
        json_decref(root);
        free(c.path.p);
        sbx_assert(err || c.out.p);
        if (err) {
                free(c.out.p);
                return err;
        }
        *ret_pcf = c.out.p;
        return SBX_OK;
}

sbx_err_t sbx_avro_fingerprint(const char *schema_json,
                               uint64_t *ret_fp,
                               char *errstr,
                               size_t errstr_size)
{
        char *pcf;
        sbx_err_t err;

        sbx_assert(ret_fp);
        err = sbx_avro_canonical_form(schema_json, &pcf, errstr, errstr_size);
        if (err)
                return err;
        *ret_fp = sbx_avro_crc64(pcf, strlen(pcf));
        free(pcf);
        return SBX_OK;
}
