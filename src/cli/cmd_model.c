/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Commands about the event model: `sbx fsm` prints the transition tables
 * (the README's copy is this output), `sbx schema KIND` the bundled Avro
 * schema of a message kind, and `sbx codec encode|decode KIND` converts
 * between JSON and single-object Avro on stdin/stdout, so any tool can
 * produce or inspect sbx messages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "codec/codec.h"
#include "core/fsm.h"
#include "core/util.h"

static const char fsm_usage[] =
    "usage: sbx fsm\n"
    "Prints the claim, sandbox and request transition tables as Markdown "
    "(the\n"
    "README's copy); --json: one object per event type.\n";

static const char schema_usage[] =
    "usage: sbx schema event|request|node|output\n"
    "Prints the bundled Avro schema of a message kind; --json: with its "
    "CRC-64-AVRO\n"
    "fingerprint.\n";

static const char codec_usage[] =
    "usage: sbx codec encode|decode event|request|node|output\n"
    "Converts JSON on stdin to single-object Avro on stdout (encode), or "
    "back\n"
    "(decode).\n";

int sbx_cmd_fsm(sbx_cli_t *cli, int argc, char **argv)
{
        int a;
        if (sbx_cli_help(argc, argv, fsm_usage))
                return 0;
        if (argc > 0)
                return sbx_cli_fail("usage: sbx fsm");
        if (cli->json) {
                json_t *arr = json_array();
                char *s;
                int t, p;
                for (t = 0; t < SBX_EV__CNT; t++) {
                        sbx_aggregate_t ag =
                            sbx_evtype_aggregate((sbx_evtype_t)t);
                        json_t *from = json_array(), *to = json_object();
                        for (p = 0; p < sbx_phase_count(ag); p++) {
                                int n = sbx_fsm_next(ag, p, (sbx_evtype_t)t, 0);
                                if (n < 0)
                                        continue;
                                json_array_append_new(
                                    from, json_string(sbx_phase_name(ag, p)));
                                json_object_set_new(
                                    to, sbx_phase_name(ag, p),
                                    json_string(sbx_phase_name(ag, n)));
                        }
                        json_array_append_new(
                            arr, json_pack("{s:s, s:s, s:b, s:o, s:o}", "event",
                                           sbx_evtype_name((sbx_evtype_t)t),
                                           "aggregate", sbx_aggregate_name(ag),
                                           "fenced",
                                           sbx_evtype_fenced((sbx_evtype_t)t),
                                           "from", from, "to", to));
                }
                s = json_dumps(arr, JSON_INDENT(1));
                puts(s);
                free(s);
                json_decref(arr);
                return 0;
        }
        for (a = 0; a < SBX_AGG__CNT; a++) {
                char *md = sbx_fsm_markdown((sbx_aggregate_t)a);
                printf("<!-- fsm:%s -->\n%s<!-- /fsm -->\n\n",
                       sbx_aggregate_name((sbx_aggregate_t)a), md);
                free(md);
        }
        return 0;
}

static int kind_of(const char *s, sbx_schema_kind_t *ret)
{
        if (!strcmp(s, "event"))
                *ret = SBX_SCHEMA_EVENT;
        else if (!strcmp(s, "request"))
                *ret = SBX_SCHEMA_REQUEST;
        else if (!strcmp(s, "node"))
                *ret = SBX_SCHEMA_NODE_STATUS;
        else if (!strcmp(s, "output"))
                *ret = SBX_SCHEMA_EXEC_OUTPUT;
        else
                return -1;
        return 0;
}

static sbx_codec_t *new_codec(void)
{
        char err[512];
        sbx_codec_t *c = sbx_codec_new(err, sizeof(err));
        if (!c)
                sbx_cli_fail("codec: %s", err);
        return c;
}

int sbx_cmd_schema(sbx_cli_t *cli, int argc, char **argv)
{
        sbx_schema_kind_t kind;
        sbx_codec_t *c;

        if (sbx_cli_help(argc, argv, schema_usage))
                return 0;
        if (argc != 1 || kind_of(argv[0], &kind))
                return sbx_cli_fail(
                    "usage: sbx schema event|request|node|output");
        if (!(c = new_codec()))
                return 1;
        if (cli->json)
                printf("{\"fingerprint\":\"%016llx\",\"schema\":%s}\n",
                       (unsigned long long)sbx_codec_fingerprint(c, kind),
                       sbx_codec_schema_json(c, kind));
        else
                printf("%s\n", sbx_codec_schema_json(c, kind));
        sbx_codec_destroy(c);
        return 0;
}

static unsigned char *read_stdin(size_t max, size_t *ret_len)
{
        size_t cap = 65536, len = 0, n;
        unsigned char *buf = sbx_malloc(cap + 1);
        while ((n = fread(buf + len, 1, cap - len, stdin)) > 0) {
                len += n;
                if (len > max) {
                        free(buf);
                        return NULL;
                }
                if (len == cap) {
                        cap *= 2;
                        buf = sbx_realloc(buf, cap + 1);
                }
        }
        buf[len] = '\0';
        *ret_len = len;
        return buf;
}

int sbx_cmd_codec(sbx_cli_t *cli, int argc, char **argv)
{
        sbx_schema_kind_t kind;
        sbx_codec_t *c    = NULL;
        unsigned char *in = NULL, *out = NULL;
        size_t len = 0, outlen = 0;
        json_t *v = NULL;
        json_error_t jerr;
        char err[1024];
        int rc = 1;
        (void)cli;

        if (sbx_cli_help(argc, argv, codec_usage))
                return 0;
        if (argc != 2 || kind_of(argv[1], &kind) ||
            (strcmp(argv[0], "encode") && strcmp(argv[0], "decode")))
                return sbx_cli_fail(
                    "usage: sbx codec encode|decode "
                    "event|request|node|output  (stdin -> stdout)");
        if (!(c = new_codec()))
                return 1;
        in = read_stdin(2 * SBX_CODEC_MAX_MESSAGE, &len);
        if (!in) {
                rc = sbx_cli_fail("input larger than %d bytes",
                                  2 * SBX_CODEC_MAX_MESSAGE);
                goto done;
        }
        if (!strcmp(argv[0], "encode")) {
                v = json_loadb((const char *)in, len,
                               JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
                if (!v) {
                        rc = sbx_cli_fail("input is not JSON: %s (line %d)",
                                          jerr.text, jerr.line);
                        goto done;
                }
                if (sbx_codec_encode(c, kind, v, &out, &outlen, err,
                                     sizeof(err))) {
                        rc = sbx_cli_fail("encode: %s", err);
                        goto done;
                }
                fwrite(out, 1, outlen, stdout);
        } else {
                char *s;
                if (sbx_codec_decode(c, kind, in, len, &v, err, sizeof(err))) {
                        rc = sbx_cli_fail("decode: %s", err);
                        goto done;
                }
                s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
                puts(s);
                free(s);
        }
        rc = fflush(stdout) ? 1 : 0;
done:
        json_decref(v);
        free(in);
        free(out);
        sbx_codec_destroy(c);
        return rc;
}
