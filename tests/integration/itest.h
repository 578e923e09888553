/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers for integration tests against the local stack that
 * deploy/local/stack.sh starts. A test that cannot reach its service
 * fails with a message saying so; nothing is skipped.
 */
#ifndef SBX_ITEST_H
#define SBX_ITEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"

/** The stack's config (defaults + SBX_* environment); aborts on error. */
static inline sbx_config_t *itest_config(void)
{
        sbx_config_t *c = NULL;
        char err[512];
        if (sbx_config_load(NULL, &c, err, sizeof(err))) {
                fprintf(stderr, "itest: config: %s\n", err);
                abort();
        }
        return c;
}

/** A name unique to this run: "<prefix>-<pid>-<counter>". */
static inline const char *itest_unique(const char *prefix)
{
        static char buf[8][128];
        static int n;
        char *b = buf[n % 8];
        snprintf(b, sizeof(buf[0]), "%s-%ld-%d", prefix, (long)getpid(), n);
        n++;
        return b;
}

/** Makes a temporary directory; returns its path (static storage). */
static inline const char *itest_tmpdir(void)
{
        static char dir[64];
        strcpy(dir, "/tmp/sbx-itest-XXXXXX");
        if (!mkdtemp(dir))
                abort();
        return dir;
}

static inline void itest_write(const char *dir, const char *name,
                               const char *text)
{
        char p[512];
        FILE *f;
        snprintf(p, sizeof(p), "%s/%s", dir, name);
        f = fopen(p, "w");
        if (!f)
                abort();
        fputs(text, f);
        fclose(f);
}

#endif
