/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A main for fuzz harnesses built without libFuzzer (gcc, valgrind): runs
 * LLVMFuzzerTestOneInput once on every file named on the command line and
 * every regular file of every directory named there, in name order. A
 * harness reports a bug by aborting; this exits non-zero if an argument
 * cannot be read or if there was no input at all (a replay over nothing
 * would pass whatever the harness does).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_codec.h"

#define REPLAY_MAX_INPUT (64 * 1024 * 1024)

/* Runs the harness on the file at @p path; 0 or -1 with a message. */
static int run_file(const char *path)
{
        FILE *f            = fopen(path, "rb");
        unsigned char *buf = NULL;
        long size;
        int rc = -1;

        if (!f) {
                perror(path);
                return -1;
        }
        if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 ||
            size > REPLAY_MAX_INPUT || fseek(f, 0, SEEK_SET)) {
                fprintf(stderr, "%s: cannot size the file (or over %d bytes)\n",
                        path, REPLAY_MAX_INPUT);
                goto done;
        }
        /* Exact size (at least 1 for malloc), like libFuzzer's copy. */
        buf = malloc(size ? (size_t)size : 1);
        if (!buf)
                abort();
        if (fread(buf, 1, (size_t)size, f) != (size_t)size) {
                fprintf(stderr, "%s: short read\n", path);
                goto done;
        }
        LLVMFuzzerTestOneInput(buf, (size_t)size);
        rc = 0;
done:
        free(buf);
        fclose(f);
        return rc;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
        return strcmp((*a)->d_name, (*b)->d_name);
}

/* Runs every regular file of @p dir; adds to *ran. 0 or -1. */
static int run_dir(const char *dir, long *ran)
{
        struct dirent **ents = NULL;
        int n, i, rc = 0;

        n = scandir(dir, &ents, NULL, by_name);
        if (n < 0) {
                perror(dir);
                return -1;
        }
        for (i = 0; i < n; i++) {
                size_t len = strlen(dir) + strlen(ents[i]->d_name) + 2;
                char *path = malloc(len);
                struct stat st;
                if (!path)
                        abort();
                snprintf(path, len, "%s/%s", dir, ents[i]->d_name);
                if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                        if (run_file(path))
                                rc = -1;
                        else
                                (*ran)++;
                }
                free(path);
                free(ents[i]);
        }
        free(ents);
        return rc;
}

int main(int argc, char **argv)
{
        long ran = 0;
        int i, rc = 0;

        if (argc < 2) {
                fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
                return 2;
        }
        for (i = 1; i < argc; i++) {
                struct stat st;
                if (argv[i][0] == '-')
                        continue; /* a libFuzzer flag: meaningless here */
                if (stat(argv[i], &st)) {
                        perror(argv[i]);
                        rc = 1;
                } else if (S_ISDIR(st.st_mode)) {
                        if (run_dir(argv[i], &ran))
                                rc = 1;
                } else if (run_file(argv[i]))
                        rc = 1;
                else
                        ran++;
        }
        printf("replayed %ld inputs\n", ran);
        if (!ran) {
                fprintf(stderr, "no inputs: nothing was tested\n");
                return 1;
        }
        return rc;
}
