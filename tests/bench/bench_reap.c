/* SPDX-License-Identifier: Apache-2.0 */
/*
 * After a benchmark node's sbxd stopped: deletes every sandbox left under
 * the node's state root (its warm pool, what a benchmark leased) through
 * the runtime, as the executor would, then the root itself. The log
 * still names them; their node is gone for good, so the keeper records
 * them lost and terminated. Not a benchmark: tests/bench/run cleans up
 * with it.
 *
 * usage: bench_reap VAR_DIR NODE_ID
 */
#include <stdio.h>
#include <string.h>

#include "core/util.h"
#include "runtime/fsutil.h"
#include "runtime/runtime.h"

typedef struct ids_s {
        char id[512][128];
        int n;
} ids_t;

static void listed(const char *id,
                   const char *runtime,
                   sbx_sandbox_status_t status,
                   int pid,
                   void *opaque)
{
        ids_t *l = opaque;
        (void)runtime;
        (void)status;
        (void)pid;
        if (l->n < 512)
                sbx_fmt(l->id[l->n++], sizeof(l->id[0]), "%s", id);
}

int main(int argc, char **argv)
{
        static ids_t l;
        char root[2048], err[512];
        sbx_runtime_t *rt;
        int i, failed = 0;

        if (argc != 3 || strchr(argv[2], '/') || argv[2][0] == '.') {
                fprintf(stderr, "usage: bench_reap VAR_DIR NODE_ID\n");
                return 2;
        }
        sbx_fmt(root, sizeof(root), "%s/run/%s", argv[1], argv[2]);
        rt = sbx_runtime_new(root, err, sizeof(err));
        if (!rt || sbx_runtime_list(rt, listed, &l, err, sizeof(err))) {
                fprintf(stderr, "bench_reap: %s: %s\n", root, err);
                return 1;
        }
        for (i = 0; i < l.n; i++)
                if (sbx_runtime_delete(rt, l.id[i], err, sizeof(err))) {
                        fprintf(stderr, "bench_reap: %s: %s\n", l.id[i], err);
                        failed++;
                }
        sbx_runtime_destroy(rt);
        if (!failed && sbx_fs_rmtree(root, err, sizeof(err)))
                fprintf(stderr, "bench_reap: %s: %s\n", root, err);
        printf("bench_reap: node %s: %d sandbox(es) deleted\n", argv[2],
               l.n - failed);
        return failed ? 1 : 0;
}
