/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The scheduler's pure decisions. Reuse rests on a compatibility check of
 * the security context first (tenant, session, taint: never crossed),
 * then the runtime (template, runtime tier, class, network profile).
 * Placement filters feasible nodes (alive, healthy, not draining, the
 * runtime supported, room for the class after what was placed since the
 * last heartbeat), samples K of them and scores warm availability,
 * template locality, CPU and memory headroom and recent OOMs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "stages/deps.h"
#include "stages/scheduler.h"

static const char *s(const char *v)
{
        return v ? v : "";
}

static const char *pstr(const json_t *o, const char *k)
{
        return s(json_string_value(json_object_get(o, k)));
}

/* The names of "name==version,..." @p pkgs, comma-separated. */
static void names(const char *pkgs, char *out, size_t size)
{
        size_t n = 0;
        out[0]   = '\0';
        while (pkgs && *pkgs && n + 1 < size) {
                size_t nl = strcspn(pkgs, "=,");
                n += (size_t)snprintf(out + n, size - n, "%s%.*s", n ? "," : "",
                                      (int)nl, pkgs);
                pkgs = strchr(pkgs, ',');
                pkgs = pkgs ? pkgs + 1 : NULL;
        }
        if (n >= size)
                out[size - 1] = '\0';
}

/*
 * The dependencies: what the task needs (@p need, the claim's packages)
 * against what the sandbox has installed (stages/deps.h). Missing ones
 * are an incremental install, scored a little lower per package. A
 * version the constraint excludes is a conflict, never resolved in
 * place: one is a small change, served in an isolated venv above the
 * sandbox's packages (SBX_REUSE_VENV_MAX, scored lower still); more are
 * refused (the scheduler may fork a clean snapshot instead).
 */
static double deps_check(const sbx_state_t *sb,
                         const json_t *need,
                         char *reason,
                         size_t rs)
{
        char req[512] = "", missing[512] = "", existing[512], ver[130];
        char why[300];
        const json_t *pk;
        size_t i, nmiss = 0;
        int nconf = sbx_deps_conflict(sb->env_packages, need, why, sizeof(why));

        if (nconf > SBX_REUSE_VENV_MAX) {
                sbx_fmt(reason, rs, "dependency_conflict: %s (%d conflicts)",
                        why, nconf);
                return -1;
        }
        json_array_foreach(need, i, pk)
        {
                const char *name = pstr(pk, "name");
                const char *have = sbx_deps_installed(sb->env_packages, name,
                                                      ver, sizeof(ver));
                sbx_fmt(req + strlen(req), sizeof(req) - strlen(req), "%s%s",
                        i ? "," : "", name);
                if (!have) {
                        sbx_fmt(missing + strlen(missing),
                                sizeof(missing) - strlen(missing), "%s%s",
                                nmiss ? "," : "", name);
                        nmiss++;
                }
        }
        names(sb->env_packages, existing, sizeof(existing));
        sbx_fmt(reason, rs,
                "same_session=true health=ok required=%s existing=%s "
                "missing=%s dependency_conflict=%s%s%s; %lld lease(s) before",
                *req ? req : "-", *existing ? existing : "-",
                *missing ? missing : "-", nconf ? "true" : "false",
                nconf ? ": isolated venv, " : "", nconf ? why : "",
                (long long)sb->n_leases);
        /* Fewer installs to make, fewer prior leases and a cleaner
         * environment score higher (an install costs more than the
         * packages already there); a running one beats a frozen one. */
        return 1.0 - 0.15 * nconf - 0.05 * (double)(nmiss > 5 ? 5 : nmiss) -
               0.02 * (double)(sb->n_leases > 5 ? 5 : sb->n_leases) -
               0.02 * sb->dirty_level -
               (sb->phase == SBX_SB_HIBERNATING ? 0.01 : 0);
}

double sbx_reuse_check(const sbx_state_t *sb,
                       const sbx_state_t *claim,
                       const json_t *plan,
                       const char *now_digest,
                       char *reason,
                       size_t rs)
{
        const char *cls = pstr(plan, "resource_class");
        if (strcmp(s(sb->tenant_id), s(claim->tenant_id))) {
                sbx_fmt(reason, rs, "tenant_mismatch: never across tenants");
                return -1;
        }
        if (!claim->session_id ||
            strcmp(s(sb->session_id), claim->session_id)) {
                sbx_fmt(reason, rs,
                        "session_mismatch: only the same session reuses a "
                        "runtime");
                return -1;
        }
        if (sb->tainted) {
                sbx_fmt(reason, rs, "tainted: %s", s(sb->taint_reason));
                return -1;
        }
        /* A hibernating sandbox is resumed by the executor first. */
        if (sb->phase != SBX_SB_IDLE && sb->phase != SBX_SB_HIBERNATING) {
                sbx_fmt(reason, rs, "not_idle: %s",
                        sbx_phase_name(SBX_AGG_SANDBOX, sb->phase));
                return -1;
        }
        if (strcmp(s(sb->resource_class), cls) ||
            strcmp(s(sb->runtime), pstr(plan, "runtime"))) {
                sbx_fmt(reason, rs,
                        "runtime_capability_mismatch: sandbox is %s/%s, the "
                        "task needs %s/%s",
                        s(sb->resource_class), s(sb->runtime), cls,
                        pstr(plan, "runtime"));
                return -1;
        }
        if (now_digest && sb->template_digest &&
            strcmp(now_digest, sb->template_digest)) {
                sbx_fmt(reason, rs,
                        "runtime_version_change: the sandbox's template %s is "
                        "%.19s, its node's is now %.19s",
                        s(sb->template_name), sb->template_digest, now_digest);
                return -1;
        }
        if (strcmp(s(sb->template_name), pstr(plan, "template"))) {
                sbx_fmt(reason, rs, "template_mismatch: %s vs %s",
                        s(sb->template_name), pstr(plan, "template"));
                return -1;
        }
        if (strcmp(s(sb->network_profile), pstr(plan, "network_profile"))) {
                sbx_fmt(reason, rs, "network_profile_mismatch: %s vs %s",
                        s(sb->network_profile), pstr(plan, "network_profile"));
                return -1;
        }
        if (sb->dirty_level >= 3) {
                sbx_fmt(reason, rs, "unknown_pollution: dirty level %d",
                        sb->dirty_level);
                return -1;
        }
        return deps_check(sb, json_object_get(plan, "packages"), reason, rs);
}

/* The entry of node status @p st for template @p name ("name" or
 * "name@digest"), or NULL. */
static const char *listed_template(const json_t *st, const char *name)
{
        const json_t *ts = json_object_get(st, "templates");
        size_t i, nl = strlen(name);
        for (i = 0; i < json_array_size(ts); i++) {
                const char *t = s(json_string_value(json_array_get(ts, i)));
                if (!strncmp(t, name, nl) && (t[nl] == '\0' || t[nl] == '@'))
                        return t;
        }
        return NULL;
}

const char *sbx_node_template_digest(const sbx_node_t *n, const char *name)
{
        const char *t = n ? listed_template(n->status, name) : NULL;
        return t && t[strlen(name)] == '@' ? t + strlen(name) + 1 : NULL;
}

void sbx_pool_key(const json_t *plan, char *out, size_t out_size)
{
        sbx_fmt(out, out_size, "%s/%s/%s", pstr(plan, "runtime"),
                pstr(plan, "resource_class"), pstr(plan, "template"));
}

static int in_list(const json_t *arr, const char *v)
{
        size_t i;
        for (i = 0; i < json_array_size(arr); i++)
                if (!strcmp(s(json_string_value(json_array_get(arr, i))), v))
                        return 1;
        return 0;
}

static int ready_in_pool(const json_t *st, const char *pool)
{
        const json_t *pools = json_object_get(st, "pools");
        size_t i;
        for (i = 0; i < json_array_size(pools); i++) {
                const json_t *pl = json_array_get(pools, i);
                if (!strcmp(pstr(pl, "pool"), pool))
                        return (int)json_integer_value(
                            json_object_get(pl, "ready"));
        }
        return 0;
}

static uint64_t next_rand(uint64_t *x)
{
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        return *x;
}

int sbx_place(sbx_nodes_t *nodes,
              const json_t *plan,
              uint64_t seed,
              const char *const *refused,
              size_t nrefused,
              int64_t now_us,
              sbx_placement_t *out)
{
        size_t *feasible = sbx_calloc(nodes->n + 1, sizeof(size_t));
        size_t nf        = 0, i, j, k;
        double cpu       = json_number_value(json_object_get(plan, "cpu"));
        int64_t mem = json_integer_value(json_object_get(plan, "memory_mb"));
        const char *runtime = pstr(plan, "runtime");
        const char *only    = pstr(plan, "node");
        int alive           = 0;
        uint64_t rng        = seed | 1;

        memset(out, 0, sizeof(*out));
        sbx_pool_key(plan, out->pool, sizeof(out->pool));
        for (i = 0; i < nodes->n; i++) {
                const sbx_node_t *n = &nodes->v[i];
                const json_t *st    = n->status;
                double free_cpu;
                int64_t free_mem;
                int maxn, used;
                int skip = 0;

                for (j = 0; j < nrefused; j++)
                        if (!strcmp(refused[j], n->id))
                                skip = 1;
                if (*only && strcmp(only, n->id))
                        skip = 1; /* a fork: where its snapshot is */
                if (skip || !sbx_node_alive(n, now_us, SBX_NODE_GRACE_US) ||
                    json_is_true(json_object_get(st, "draining")))
                        continue;
                alive++;
                if (json_array_size(json_object_get(st, "runtimes")) &&
                    !in_list(json_object_get(st, "runtimes"), runtime))
                        continue;
                free_cpu =
                    json_number_value(json_object_get(st, "cpu_capacity")) -
                    json_number_value(json_object_get(st, "cpu_committed")) -
                    n->extra_cpu;
                free_mem = json_integer_value(
                               json_object_get(st, "memory_mb_capacity")) -
                           json_integer_value(
                               json_object_get(st, "memory_mb_committed")) -
                           n->extra_mem;
                maxn = (int)json_integer_value(
                    json_object_get(st, "max_sandboxes"));
                used =
                    (int)json_integer_value(json_object_get(st, "sandboxes")) +
                    n->extra_n;
                if (free_cpu + 1e-9 < cpu || free_mem < mem ||
                    (maxn > 0 && used >= maxn))
                        continue;
                feasible[nf++] = i;
        }
        out->candidates = (int)nf;
        if (!nf) {
                sbx_fmt(out->reason, sizeof(out->reason),
                        "no feasible node for %s (%.1f CPU, %lld MB): %d "
                        "node(s) alive, %zu refused",
                        out->pool, cpu, (long long)mem, alive, nrefused);
                free(feasible);
                return -1;
        }
        /* Sample K distinct feasible nodes (Fisher-Yates prefix). */
        for (k = 0; k < nf && k < SBX_SCHED_K; k++) {
                size_t r = k + (size_t)(next_rand(&rng) % (nf - k)), t;
                const sbx_node_t *n;
                const json_t *st;
                double cap_cpu, cap_mem, score;
                int warm;

                t           = feasible[k];
                feasible[k] = feasible[r];
                feasible[r] = t;
                n           = &nodes->v[feasible[k]];
                st          = n->status;
                cap_cpu     = fmax(1e-9, json_number_value(
                                             json_object_get(st, "cpu_capacity")));
                cap_mem = fmax(1.0, (double)json_integer_value(json_object_get(
                                        st, "memory_mb_capacity")));
                warm    = ready_in_pool(st, out->pool) > 0;
                score =
                    2.0 * warm +
                    0.5 *
                        (listed_template(st, pstr(plan, "template")) != NULL) +
                    1.0 * (1.0 - (json_number_value(
                                      json_object_get(st, "cpu_committed")) +
                                  n->extra_cpu) /
                                     cap_cpu) +
                    1.0 * (1.0 - ((double)json_integer_value(json_object_get(
                                      st, "memory_mb_committed")) +
                                  (double)n->extra_mem) /
                                     cap_mem) -
                    0.2 * (double)json_integer_value(
                              json_object_get(st, "recent_ooms"));
                if (!out->node || score > out->score) {
                        out->node  = n;
                        out->score = score;
                        out->warm  = warm;
                }
        }
        sbx_fmt(out->reason, sizeof(out->reason),
                "best of %d sampled of %zu feasible: %s%s score %.2f",
                (int)(nf < SBX_SCHED_K ? nf : SBX_SCHED_K), nf, out->node->id,
                out->warm ? " (warm)" : "", out->score);
        free(feasible);
        return 0;
}
