/* SPDX-License-Identifier: Apache-2.0 */
#include "stages/deps.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

/* The next dot-separated segment of *p (advanced past it), into
 * @p seg; "0" once the version is over. */
static void segment(const char **p, char *seg, size_t size)
{
        size_t n = strcspn(*p, ".");
        if (!**p)
                sbx_fmt(seg, size, "0");
        else
                sbx_fmt(seg, size, "%.*s", (int)n, *p);
        *p += n;
        if (**p == '.')
                (*p)++;
}

static int numeric(const char *s)
{
        if (!*s)
                return 0;
        for (; *s; s++)
                if (!isdigit((unsigned char)*s))
                        return 0;
        return 1;
}

/* <0, 0, >0 as version @p a sorts before, with or after @p b: segment by
 * segment, numbers as numbers, a missing segment as 0 (1.5 == 1.5.0). */
static int vcmp(const char *a, const char *b)
{
        char x[64], y[64];
        while (*a || *b) {
                segment(&a, x, sizeof(x));
                segment(&b, y, sizeof(y));
                if (numeric(x) && numeric(y)) {
                        unsigned long long u = strtoull(x, NULL, 10);
                        unsigned long long w = strtoull(y, NULL, 10);
                        if (u != w)
                                return u < w ? -1 : 1;
                } else if (strcmp(x, y))
                        return strcmp(x, y) < 0 ? -1 : 1;
        }
        return 0;
}

static int one(const char *version, const char *spec, size_t len)
{
        static const char *const ops[] = {"==", "!=", "<=", ">=", "<", ">"};
        char v[128];
        size_t i, ol = 0;
        int c;

        while (len && isspace((unsigned char)*spec))
                spec++, len--;
        for (i = 0; i < SBX_ARRAY_SIZE(ops); i++)
                if (!strncmp(spec, ops[i], strlen(ops[i]))) {
                        ol = strlen(ops[i]);
                        break;
                }
        if (!ol || len - ol >= sizeof(v) || len == ol)
                return 0;
        sbx_fmt(v, sizeof(v), "%.*s", (int)(len - ol), spec + ol);
        sbx_strtrim(v);
        if (i <= 1 && strlen(v) > 2 && !strcmp(v + strlen(v) - 2, ".*")) {
                /* ==1.5.*: the release starts with 1.5 */
                size_t pl = strlen(v) - 2;
                int match = !strncmp(version, v, pl) &&
                            (version[pl] == '.' || version[pl] == '\0');
                return i == 0 ? match : !match;
        }
        c = vcmp(version, v);
        switch (i) {
        case 0:
                return c == 0;
        case 1:
                return c != 0;
        case 2:
                return c <= 0;
        case 3:
                return c >= 0;
        case 4:
                return c < 0;
        default:
                return c > 0;
        }
}

int sbx_deps_satisfies(const char *version, const char *constraint)
{
        const char *p = constraint;
        if (!p)
                return 1;
        while (*p) {
                size_t n = strcspn(p, ",");
                size_t k = 0;
                while (k < n && isspace((unsigned char)p[k]))
                        k++;
                if (k < n && !one(version, p, n))
                        return 0;
                p += n;
                if (*p == ',')
                        p++;
        }
        return 1;
}

const char *sbx_deps_installed(const char *installed,
                               const char *name,
                               char *buf,
                               size_t size)
{
        size_t nl = strlen(name);
        const char *p;
        for (p = installed; p && *p;
             p = strchr(p, ',') ? strchr(p, ',') + 1 : "")
                if (!strncmp(p, name, nl) && !strncmp(p + nl, "==", 2)) {
                        size_t vl = strcspn(p + nl + 2, ",");
                        sbx_fmt(buf, size, "%.*s", (int)vl, p + nl + 2);
                        return buf;
                }
        return NULL;
}

int sbx_deps_conflict(const char *installed,
                      const json_t *need,
                      char *why,
                      size_t why_size)
{
        const json_t *pk;
        size_t i;
        int n = 0;
        char ver[130];

        json_array_foreach(need, i, pk)
        {
                const char *name =
                    json_string_value(json_object_get(pk, "name"));
                const char *con =
                    json_string_value(json_object_get(pk, "constraint"));
                const char *have =
                    name ? sbx_deps_installed(installed, name, ver, sizeof(ver))
                         : NULL;
                if (have && con && *con && !sbx_deps_satisfies(have, con) &&
                    !n++)
                        sbx_fmt(why, why_size,
                                "the task needs %s%s, %s is "
                                "installed",
                                name, con, have);
        }
        return n;
}
