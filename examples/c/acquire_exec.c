/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sbx client library in a few lines: acquire a sandbox for a task,
 * run a command in it with its output streamed to this process's stdout
 * and stderr, and give the sandbox back.
 *
 *     SBX_TENANT=demo build/examples/acquire_exec [TASK] [-- CMD ARG...]
 *
 * Default command: python3 -c 'print(1+1)'. The broker is the local
 * stack's unless SBX_BROKERS or SBX_CONFIG says otherwise. Exits with the
 * command's status.
 */
#include <stdio.h>
#include <string.h>

#include <sbx/client.h>

static void print_output(void *opaque, int stream, const void *d, size_t n)
{
        (void)opaque;
        fwrite(d, 1, n, stream == SBX_STDERR ? stderr : stdout);
}

int main(int argc, char **argv)
{
        static const char *const py[] = {"python3", "-c", "print(1+1)", NULL};
        const char *task              = argc > 1 && strcmp(argv[1], "--")
                                            ? argv[1]
                                            : "print(1+1) in python";
        const char *const *cmd        = py;
        sbx_client_t *c;
        sbx_acquire_t *a;
        sbx_lease_t *lease = NULL;
        sbx_run_t *run;
        sbx_result_t *res = NULL;
        char err[512];
        int i, status = 1;

        for (i = 1; i < argc; i++)
                if (!strcmp(argv[i], "--") && i + 1 < argc)
                        cmd = (const char *const *)argv + i + 1;
        c = sbx_client_new(NULL, NULL, err, sizeof(err));
        if (!c) {
                fprintf(stderr, "acquire_exec: %s\n", err);
                return 1;
        }
        a   = sbx_acquire_new(task);
        run = sbx_run_new(cmd);
        sbx_run_set_output(run, print_output, NULL);
        if (sbx_client_acquire(c, a, 0, &lease, err, sizeof(err)) ||
            sbx_client_exec(c, lease, run, &res, err, sizeof(err)))
                fprintf(stderr, "acquire_exec: %s\n", err);
        else
                status = sbx_result_exit_code(res);
        if (lease && sbx_client_release(c, lease, 0, err, sizeof(err)))
                fprintf(stderr, "acquire_exec: release: %s\n", err);
        sbx_result_destroy(res);
        sbx_run_destroy(run);
        sbx_lease_destroy(lease);
        sbx_acquire_destroy(a);
        sbx_client_destroy(c);
        return status;
}
