/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The rules planner: finds signals in a task (keywords in its text, plan
 * steps and tool calls, package names and ecosystems, languages, sizes and
 * needs_* flags) and turns them into a workload signature such as
 * "python-data" or "node-browser-build" and a base ResourceIntent sized by
 * the design origin's resource classes. Keywords match whole words, case
 * folded; ambiguous English words ("make") count only where a command
 * starts in a tool call, never in prose or plan steps. The answer is a pure
 * function of the request: the same request always gets the same signature,
 * size and reason, whatever it contains.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/util.h"
#include "stages/planner/planner_int.h"

/* Bounds on how much of a task is scanned (a task may be megabytes). */
#define SCAN_MAX_BYTES 65536
#define SCAN_MAX_ITEMS 256
#define SIZE_MAX_MB    ((int64_t)1 << 40)

#define LARGE_REPO_MB   1024 /* repo_size_mb from which a repo is large */
#define DATA_TRIGGER_MB 1024 /* data_size_mb that is data work by itself */
#define DATA_SMALL_MB   256  /* up to this: python-small (origin §7.7) */
#define DATA_MEDIUM_MB  2048 /* up to this: python-ds; above: compute-large */

static const sbx_rclass_t classes[] = {
    {"python-small", 1, 2048, 10},   {"python-ds", 2, 4096, 20},
    {"build-medium", 4, 8192, 30},   {"browser-medium", 4, 8192, 30},
    {"compute-large", 8, 16384, 50},
};
enum { C_SMALL, C_DS, C_BUILD, C_BROWSER, C_LARGE };

/* Classes a signature may move between as telemetry resizes it. */
enum { LADDER_GENERAL, LADDER_BUILD, LADDER_BROWSER, LADDER_LARGE };
static const int ladders[][4] = {{C_SMALL, C_DS, C_LARGE, -1},
                                 {C_BUILD, C_LARGE, -1, -1},
                                 {C_BROWSER, C_LARGE, -1, -1},
                                 {C_LARGE, -1, -1, -1}};

enum {
        T_GPU        = 1,
        T_BROWSER    = 2,
        T_BUILD      = 4,
        T_DATA       = 8,
        T_LARGE_REPO = 16,
};
enum { L_NONE, L_PYTHON, L_NODE, L_JAVA, L_RUST, L_GO, L_C, L__CNT };
static const char *const lang_names[L__CNT] = {"",     "python", "node", "java",
                                               "rust", "go",     "c"};

#define KW_CMD  1 /* only where a command starts in a tool call */
#define KW_PYPI 2 /* fetches from PyPI */
#define KW_NPM  4 /* fetches from npm */

typedef struct kw_s {
        const char *word; /* lower case; ' ' matches a run of blanks */
        unsigned traits;
        int lang;
        unsigned flags;
} kw_t;

/* clang-format off */
static const kw_t kws[] = {
    {"playwright", T_BROWSER, L_NONE, 0}, {"chromium", T_BROWSER, L_NONE, 0},
    {"chrome", T_BROWSER, L_NONE, 0}, {"headless", T_BROWSER, L_NONE, 0},
    {"puppeteer", T_BROWSER, L_NODE, 0}, {"selenium", T_BROWSER, L_NONE, 0},
    {"webdriver", T_BROWSER, L_NONE, 0}, {"screenshot", T_BROWSER, L_NONE, 0},
    {"screenshots", T_BROWSER, L_NONE, 0},
    {"npm", T_BUILD, L_NODE, KW_NPM}, {"yarn", T_BUILD, L_NODE, KW_NPM},
    {"pnpm", T_BUILD, L_NODE, KW_NPM}, {"webpack", T_BUILD, L_NODE, 0},
    {"tsc", T_BUILD, L_NODE, 0}, {"gcc", T_BUILD, L_C, 0},
    {"g++", T_BUILD, L_C, 0}, {"clang", T_BUILD, L_C, 0},
    {"make", T_BUILD, L_C, KW_CMD}, {"cmake", T_BUILD, L_C, 0},
    {"ninja", T_BUILD, L_C, KW_CMD}, {"mvn", T_BUILD, L_JAVA, 0},
    {"maven", T_BUILD, L_JAVA, 0}, {"gradle", T_BUILD, L_JAVA, 0},
    {"gradlew", T_BUILD, L_JAVA, 0}, {"javac", T_BUILD, L_JAVA, 0},
    {"cargo", T_BUILD, L_RUST, 0}, {"rustc", T_BUILD, L_RUST, 0},
    {"go build", T_BUILD, L_GO, 0}, {"go test", T_BUILD, L_GO, 0},
    {"bazel", T_BUILD, L_NONE, 0}, {"dotnet build", T_BUILD, L_NONE, 0},
    {"msbuild", T_BUILD, L_NONE, 0}, {"compile", T_BUILD, L_NONE, 0},
    {"compiling", T_BUILD, L_NONE, 0},
    {"pandas", T_DATA, L_PYTHON, 0}, {"numpy", T_DATA, L_PYTHON, 0},
    {"read_csv", T_DATA, L_PYTHON, 0}, {"read_excel", T_DATA, L_PYTHON, 0},
    {"read_parquet", T_DATA, L_PYTHON, 0}, {"excel", T_DATA, L_NONE, 0},
    {"xlsx", T_DATA, L_NONE, 0}, {"csv", T_DATA, L_NONE, 0},
    {"parquet", T_DATA, L_NONE, 0}, {"dataframe", T_DATA, L_NONE, 0},
    {"openpyxl", T_DATA, L_PYTHON, 0}, {"matplotlib", T_DATA, L_PYTHON, 0},
    {"seaborn", T_DATA, L_PYTHON, 0}, {"plotly", T_DATA, L_NONE, 0},
    {"sklearn", T_DATA, L_PYTHON, 0}, {"scikit-learn", T_DATA, L_PYTHON, 0},
    {"scipy", T_DATA, L_PYTHON, 0}, {"polars", T_DATA, L_NONE, 0},
    {"dask", T_DATA, L_PYTHON, 0}, {"jupyter", T_DATA, L_PYTHON, 0},
    {"torch", T_DATA, L_PYTHON, 0}, {"tensorflow", T_DATA, L_PYTHON, 0},
    {"keras", T_DATA, L_PYTHON, 0},
    {"cuda", T_GPU, L_NONE, 0}, {"torch.cuda", T_GPU, L_PYTHON, 0},
    {"cupy", T_GPU, L_PYTHON, 0}, {"cudnn", T_GPU, L_NONE, 0},
    {"nvidia-smi", T_GPU, L_NONE, 0}, {"gpu", T_GPU, L_NONE, 0},
    {"python", 0, L_PYTHON, 0}, {"python3", 0, L_PYTHON, 0},
    {"pip", 0, L_PYTHON, KW_PYPI}, {"pip3", 0, L_PYTHON, KW_PYPI},
    {"conda", 0, L_PYTHON, KW_PYPI}, {"pytest", 0, L_PYTHON, 0},
    {"node", 0, L_NODE, 0}, {"nodejs", 0, L_NODE, 0},
    {"npx", 0, L_NODE, KW_NPM}, {"javascript", 0, L_NODE, 0},
    {"typescript", 0, L_NODE, 0}, {"package.json", 0, L_NODE, 0},
    {"java", 0, L_JAVA, 0}, {"kotlin", 0, L_JAVA, 0}, {"rust", 0, L_RUST, 0},
    {"golang", 0, L_GO, 0}, {"go run", 0, L_GO, 0}, {"go mod", 0, L_GO, 0},
};
/* clang-format on */
#define N_KWS SBX_ARRAY_SIZE(kws)

/* Everything found in one request. */
typedef struct scan_s {
        unsigned char found[N_KWS];
        unsigned flags; /* KW_PYPI | KW_NPM seen */
        int votes[L__CNT];
        int text_mb;  /* largest size written in the text, MB; 0 if none */
        int declared; /* the task declared a language we know */
} scan_t;

const sbx_rclass_t *sbx_planner_class(const char *name)
{
        size_t i;
        for (i = 0; name && i < SBX_ARRAY_SIZE(classes); i++)
                if (!strcmp(classes[i].name, name))
                        return &classes[i];
        return NULL;
}

static int is_word(int c)
{
        return isalnum(c) || c == '_';
}

/* End of @p kw matched at s[i] (case folded), or 0. */
static size_t match_at(const char *s, size_t n, size_t i, const char *kw)
{
        for (; *kw; kw++) {
                if (*kw == ' ') {
                        if (i >= n || (s[i] != ' ' && s[i] != '\t'))
                                return 0;
                        while (i < n && (s[i] == ' ' || s[i] == '\t'))
                                i++;
                        continue;
                }
                if (i >= n || tolower((unsigned char)s[i]) != *kw)
                        return 0;
                i++;
        }
        return i;
}

/* Does s[i] start a shell command (only blanks since a separator)? */
static int command_start(const char *s, size_t i)
{
        while (i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\t'))
                i--;
        return i == 0 || strchr(";&|(`\n$", s[i - 1]) != NULL;
}

static int contains(const char *s, size_t n, const kw_t *kw, int commands)
{
        size_t i, end;
        if ((kw->flags & KW_CMD) && !commands)
                return 0;
        for (i = 0; i < n; i++) {
                if (i > 0 && is_word((unsigned char)s[i - 1]))
                        continue;
                end = match_at(s, n, i, kw->word);
                if (!end || (end < n && is_word((unsigned char)s[end])))
                        continue;
                if (!(kw->flags & KW_CMD) || command_start(s, i))
                        return 1;
        }
        return 0;
}

static void mark(scan_t *sc, size_t k)
{
        if (sc->found[k])
                return;
        sc->found[k] = 1;
        sc->flags |= kws[k].flags & (KW_PYPI | KW_NPM);
        sc->votes[kws[k].lang]++;
}

/* The largest size written like "20GB" or "1.5 TB" in @p s, in MB. */
static int64_t size_in_text(const char *s, size_t n)
{
        static const struct {
                const char *unit;
                double mb;
        } units[]    = {{"tb", 1048576},  {"gb", 1024},  {"mb", 1},
                        {"tib", 1048576}, {"gib", 1024}, {"mib", 1}};
        int64_t best = 0;
        size_t i, u;

        for (i = 0; i < n; i++) {
                double v = 0, scale = 1;
                size_t j = i;
                if (!isdigit((unsigned char)s[i]) ||
                    (i > 0 &&
                     (is_word((unsigned char)s[i - 1]) || s[i - 1] == '.')))
                        continue;
                for (; j < n && j - i < 12 && isdigit((unsigned char)s[j]); j++)
                        v = v * 10 + (s[j] - '0');
                if (j < n && s[j] == '.')
                        for (j++; j < n && isdigit((unsigned char)s[j]); j++)
                                v += (s[j] - '0') * (scale /= 10);
                while (j < n && s[j] == ' ')
                        j++;
                for (u = 0; u < SBX_ARRAY_SIZE(units); u++) {
                        size_t end = match_at(s, n, j, units[u].unit);
                        if (end &&
                            (end >= n || !isalpha((unsigned char)s[end])) &&
                            v * units[u].mb > (double)best &&
                            v * units[u].mb < (double)SIZE_MAX_MB)
                                best = (int64_t)(v * units[u].mb);
                }
        }
        return best;
}

static void scan_string(scan_t *sc, const json_t *j, int commands)
{
        const char *s = json_string_value(j);
        size_t n      = json_string_length(j), k;
        int64_t mb;

        if (!s)
                return;
        if (n > SCAN_MAX_BYTES)
                n = SCAN_MAX_BYTES;
        for (k = 0; k < N_KWS; k++)
                if (!sc->found[k] && contains(s, n, &kws[k], commands))
                        mark(sc, k);
        mb = size_in_text(s, n);
        if (mb > sc->text_mb)
                sc->text_mb = (int)(mb > 0x7fffffff ? 0x7fffffff : mb);
}

static void scan_array(scan_t *sc, const json_t *a, int commands)
{
        size_t i;
        for (i = 0; i < json_array_size(a) && i < SCAN_MAX_ITEMS; i++)
                scan_string(sc, json_array_get(a, i), commands);
}

static void scan_packages(scan_t *sc, const json_t *a)
{
        size_t i, k;
        for (i = 0; i < json_array_size(a) && i < SCAN_MAX_ITEMS; i++) {
                const json_t *pkg = json_array_get(a, i);
                const char *name =
                    json_string_value(json_object_get(pkg, "name"));
                const char *eco =
                    json_string_value(json_object_get(pkg, "ecosystem"));
                if (!name)
                        continue;
                if (!eco || !strcasecmp(eco, "pip")) {
                        sc->flags |= KW_PYPI;
                        sc->votes[L_PYTHON] += !sc->votes[L_PYTHON];
                } else if (!strcasecmp(eco, "npm")) {
                        sc->flags |= KW_NPM;
                        sc->votes[L_NODE] += !sc->votes[L_NODE];
                }
                for (k = 0; k < N_KWS; k++)
                        if (!strcasecmp(name, kws[k].word))
                                mark(sc, k);
        }
}

/* The language family named by a Task.languages entry, or L_NONE. */
static int lang_of(const char *s)
{
        static const struct {
                const char *name;
                int lang;
        } names[] = {{"python", L_PYTHON}, {"python3", L_PYTHON},
                     {"py", L_PYTHON},     {"node", L_NODE},
                     {"nodejs", L_NODE},   {"javascript", L_NODE},
                     {"js", L_NODE},       {"typescript", L_NODE},
                     {"ts", L_NODE},       {"java", L_JAVA},
                     {"kotlin", L_JAVA},   {"scala", L_JAVA},
                     {"rust", L_RUST},     {"go", L_GO},
                     {"golang", L_GO},     {"c", L_C},
                     {"c++", L_C},         {"cpp", L_C}};
        size_t i;
        for (i = 0; s && i < SBX_ARRAY_SIZE(names); i++)
                if (!strcasecmp(s, names[i].name))
                        return names[i].lang;
        return L_NONE;
}

/*
 * The task's language family: the first declared one we know, else the
 * one most keywords point to (ties: the first in lang_names). Every
 * further family, declared or found, counts as a conflict (at most 2).
 */
static int choose_lang(const json_t *langs, scan_t *sc, int *ret_conflicts)
{
        unsigned families = 0;
        int lang = L_NONE, l, n = 0;
        size_t i;

        for (i = 0; i < json_array_size(langs) && i < SCAN_MAX_ITEMS; i++) {
                l = lang_of(json_string_value(json_array_get(langs, i)));
                if (l == L_NONE)
                        continue;
                if (lang == L_NONE)
                        lang = l;
                families |= 1u << l;
        }
        sc->declared = lang != L_NONE;
        for (l = 1; l < L__CNT; l++) {
                if (!sc->votes[l])
                        continue;
                families |= 1u << l;
                if (!sc->declared &&
                    (lang == L_NONE || sc->votes[l] > sc->votes[lang]))
                        lang = l;
        }
        for (l = 1; l < L__CNT; l++)
                n += (families >> l) & 1;
        *ret_conflicts = n > 3 ? 2 : n > 1 ? n - 1 : 0;
        return lang;
}

static int64_t size_field(const json_t *task, const char *name)
{
        json_int_t v = json_integer_value(json_object_get(task, name));
        return v < 0 ? 0 : v > SIZE_MAX_MB ? SIZE_MAX_MB : v;
}

static int64_t round_up(int64_t v, int64_t step)
{
        return (v + step - 1) / step * step;
}

const char *sbx_planner_rules_class(const sbx_rules_t *r,
                                    double cpu,
                                    int64_t memory_mb)
{
        const int *l = ladders[r->ladder];
        int i, last = l[0];
        if (r->fixed_class >= 0)
                return classes[r->fixed_class].name;
        for (i = 0; i < 4 && l[i] >= 0; i++) {
                last = l[i];
                if (classes[l[i]].cpu >= cpu &&
                    classes[l[i]].memory_mb >= memory_mb)
                        break;
        }
        return classes[last].name;
}

void sbx_planner_rules_clear(sbx_rules_t *r)
{
        free(r->signature);
        sbx_intent_clear(&r->intent);
        memset(r, 0, sizeof(*r));
}

/* Signature: language, then traits in a fixed order; "plain-script". */
static char *signature(int lang, unsigned traits, int64_t data_mb)
{
        char *sig = NULL;
        if (lang != L_NONE)
                sbx_planner_appendf(&sig, "%s", lang_names[lang]);
        if (traits & T_GPU)
                sbx_planner_appendf(&sig, "%sgpu", sig ? "-" : "");
        if (traits & T_BROWSER)
                sbx_planner_appendf(&sig, "%sbrowser", sig ? "-" : "");
        if (traits & T_BUILD)
                sbx_planner_appendf(&sig, "%sbuild", sig ? "-" : "");
        if (traits & T_DATA)
                sbx_planner_appendf(&sig, "%sdata%s", sig ? "-" : "",
                                    data_mb > DATA_MEDIUM_MB  ? "-large"
                                    : data_mb > DATA_SMALL_MB ? "-medium"
                                                              : "");
        if (traits & T_LARGE_REPO)
                sbx_planner_appendf(&sig, "%slarge-repo", sig ? "-" : "");
        if (!traits)
                sbx_planner_appendf(&sig, "%sscript", sig ? "-" : "plain-");
        return sig;
}

/*
 * Network profile: the client's requested one, else the task's if not
 * "none", else inferred from what the task will fetch: a browser or npm
 * needs "npm-github-web", pip/conda packages "pypi-readonly", otherwise
 * "none". The planner only recommends; the guard decides per tenant.
 */
static void network(const json_t *claim,
                    const json_t *task,
                    unsigned traits,
                    unsigned flags,
                    sbx_intent_t *in)
{
        const char *req =
            json_string_value(json_object_get(claim, "network_profile"));
        const char *net = json_string_value(json_object_get(task, "network"));
        const char *why = NULL, *np = "none";

        if (req && !sbx_planner_is_token(req, SBX_PLANNER_TOKEN_MAX)) {
                sbx_planner_appendf(&in->reason,
                                    "; requested network_profile "
                                    "is not a name, ignored");
                req = NULL;
        }
        if (net && !sbx_planner_is_token(net, SBX_PLANNER_TOKEN_MAX)) {
                sbx_planner_appendf(&in->reason,
                                    "; task network is not a name, ignored");
                net = NULL;
        }
        if (req)
                np = req, why = "requested";
        else if (net && strcmp(net, "none"))
                np = net, why = "task";
        else if (traits & T_BROWSER)
                np = "npm-github-web", why = "browser needs the web";
        else if (flags & KW_NPM)
                np = "npm-github-web", why = "npm packages";
        else if (flags & KW_PYPI)
                np = "pypi-readonly", why = "pip packages";
        in->network_profile = sbx_strdup(np);
        if (why)
                sbx_planner_appendf(&in->reason, "; network %s (%s)", np, why);
}

/*
 * Signature: [language-]traits, traits in the order gpu, browser, build,
 * data (data-medium above 256 MB of data, data-large above 2 GB),
 * large-repo (repo >= 1 GB); no trait: "<language>-script", or
 * "plain-script" with no language either. Base class: compute-large for
 * gpu, large-repo or data-large; else browser-medium, build-medium,
 * python-ds (data-medium), python-small. Data work asks for at least 1.5x
 * its data in memory; disk is the class's or 2x repo+data+workspace +
 * 5 GB; ttl is 2x expected_duration_s (else the claim's ttl) in
 * [60 s, 24 h]; risk high runs runsc. Confidence: 0.45 + 0.1 per signal
 * (up to 4), - 0.1 per conflicting language family and for an unknown
 * requested_class, in [0.1, 0.85]; 0.2 for an empty task.
 */
void sbx_planner_rules(const json_t *claim, sbx_rules_t *r)
{
        const json_t *task = json_object_get(claim, "task");
        const char *text   = json_string_value(json_object_get(task, "text"));
        const char *rc =
            json_string_value(json_object_get(claim, "requested_class"));
        const char *risk = json_string_value(json_object_get(task, "risk"));
        const sbx_rclass_t *cls, *want = sbx_planner_class(rc);
        sbx_intent_t *in = &r->intent;
        int64_t data_mb  = size_field(task, "data_size_mb");
        int64_t repo_mb  = size_field(task, "repo_size_mb");
        int64_t ws_mb    = size_field(task, "workspace_size_mb");
        int64_t dur      = size_field(task, "expected_duration_s");
        int64_t ttl = json_integer_value(json_object_get(claim, "ttl_seconds"));
        int64_t disk;
        unsigned traits = 0;
        int lang, nsig = 0, conflicts = 0, empty, base;
        size_t k;
        scan_t sc;

        memset(r, 0, sizeof(*r));
        memset(&sc, 0, sizeof(sc));
        r->fixed_class = -1;
        scan_string(&sc, json_object_get(task, "text"), 0);
        scan_array(&sc, json_object_get(task, "plan"), 0);
        scan_array(&sc, json_object_get(task, "tool_calls"), 1);
        scan_packages(&sc, json_object_get(task, "packages"));
        empty = (!text || !*text) &&
                !json_array_size(json_object_get(task, "plan")) &&
                !json_array_size(json_object_get(task, "tool_calls"));

        for (k = 0; k < N_KWS; k++) {
                if (!sc.found[k])
                        continue;
                traits |= kws[k].traits;
                sbx_planner_appendf(&in->reason, "%s%s",
                                    nsig++ ? ", " : "signals: ", kws[k].word);
        }
#define FLAG(name, trait)                                                      \
        if (json_is_true(json_object_get(task, name))) {                       \
                traits |= (trait);                                             \
                sbx_planner_appendf(&in->reason, "%s%s",                       \
                                    nsig++ ? ", " : "signals: ", name);        \
        }
        FLAG("needs_browser", T_BROWSER)
        FLAG("needs_gpu", T_GPU)
        FLAG("needs_compile", T_BUILD)
#undef FLAG
        if (!data_mb && (traits & T_DATA) && sc.text_mb) {
                data_mb = sc.text_mb;
                sbx_planner_appendf(
                    &in->reason, "%sdata ~%lld MB (from text)",
                    nsig++ ? ", " : "signals: ", (long long)data_mb);
        } else if (data_mb) {
                sbx_planner_appendf(
                    &in->reason, "%sdata %lld MB",
                    nsig++ ? ", " : "signals: ", (long long)data_mb);
        }
        if (data_mb >= DATA_TRIGGER_MB)
                traits |= T_DATA;
        if (repo_mb >= LARGE_REPO_MB) {
                traits |= T_LARGE_REPO;
                sbx_planner_appendf(
                    &in->reason, "%srepo %lld MB",
                    nsig++ ? ", " : "signals: ", (long long)repo_mb);
        }

        lang = choose_lang(json_object_get(task, "languages"), &sc, &conflicts);
        if (lang != L_NONE && sc.declared)
                sbx_planner_appendf(
                    &in->reason, "%slanguage %s",
                    nsig++ ? ", " : "signals: ", lang_names[lang]);

        r->signature = signature(lang, traits, data_mb);
        if ((traits & (T_GPU | T_LARGE_REPO)) ||
            ((traits & T_DATA) && data_mb > DATA_MEDIUM_MB))
                base = C_LARGE, r->ladder = LADDER_LARGE;
        else if (traits & T_BROWSER)
                base = C_BROWSER, r->ladder = LADDER_BROWSER;
        else if (traits & T_BUILD)
                base = C_BUILD, r->ladder = LADDER_BUILD;
        else if ((traits & T_DATA) && data_mb > DATA_SMALL_MB)
                base = C_DS, r->ladder = LADDER_GENERAL;
        else
                base = C_SMALL, r->ladder = LADDER_GENERAL;
        cls = &classes[base];
        if (want) {
                cls            = want;
                r->fixed_class = (int)(want - classes);
        }

        in->workload  = sbx_strdup(r->signature);
        in->cpu       = cls->cpu;
        in->memory_mb = cls->memory_mb;
        if (traits & T_DATA) {
                /* An in-memory frame takes about 1.5x its file. */
                int64_t need =
                    round_up(data_mb + data_mb / 2, SBX_PLANNER_MEM_STEP);
                if (need > in->memory_mb)
                        in->memory_mb = need > SBX_PLANNER_MEM_MAX / 2
                                            ? SBX_PLANNER_MEM_MAX / 2
                                            : need;
        }
        disk        = (repo_mb + data_mb + ws_mb) * 2 / 1024 + 5;
        in->disk_gb = disk > cls->disk_gb ? disk : cls->disk_gb;
        if (in->disk_gb > SBX_PLANNER_DISK_MAX / 32)
                in->disk_gb = SBX_PLANNER_DISK_MAX / 32;
        in->requires_browser = !!(traits & T_BROWSER);
        in->requires_gpu     = !!(traits & T_GPU);
        in->template_name    = sbx_strdup("host");
        in->runtime =
            sbx_strdup(risk && !strcasecmp(risk, "high") ? "runsc" : "runc");
        if (dur > 0)
                ttl = round_up(dur * 2, 60);
        else if (ttl <= 0)
                ttl = 1800;
        in->ttl_seconds = ttl < SBX_PLANNER_TTL_MIN   ? SBX_PLANNER_TTL_MIN
                          : ttl > SBX_PLANNER_TTL_MAX ? SBX_PLANNER_TTL_MAX
                                                      : ttl;

        if (!nsig)
                sbx_planner_appendf(&in->reason, "%s",
                                    empty ? "empty task" : "no signals");
        sbx_planner_appendf(&in->reason, " → %s: %s%s %g CPU %lld MB",
                            r->signature, want ? "requested " : "", cls->name,
                            in->cpu, (long long)in->memory_mb);
        if (rc && !want)
                sbx_planner_appendf(&in->reason,
                                    "; unknown requested_class ignored");
        if (conflicts)
                sbx_planner_appendf(&in->reason, "; %d conflicting languages",
                                    conflicts + 1);
        network(claim, task, traits, sc.flags, in);
        if (!strcmp(in->runtime, "runsc"))
                sbx_planner_appendf(&in->reason, "; runsc (risk high)");

        in->confidence = empty ? 0.2 : 0.45 + 0.1 * (nsig > 4 ? 4 : nsig);
        in->confidence -= 0.1 * conflicts + (rc && !want ? 0.1 : 0);
        if (in->confidence < 0.1)
                in->confidence = 0.1;
        in->confidence = round(in->confidence * 100) / 100;
        in->resource_class =
            sbx_strdup(sbx_planner_rules_class(r, in->cpu, in->memory_mb));
}
