/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The policy: which resource classes exist, which tenants may use which of
 * them up to what commitment, and which runtimes and network profiles each
 * risk level allows. Intake and the guard read the same file, in the kv
 * format ("key = value", '#' comments); a policy is validated whole and
 * any error refuses the whole file, with file:line and the reason.
 *
 * Keys (lists are comma-separated; "<name>" is letters, digits, '-', '_'):
 *
 *   templates = host, ...              known templates (default: host)
 *   network_profiles = none, ...       known network profiles (default:
 *                                      none; "none" is always known)
 *   runtimes = runc, runsc             known runtimes (default: both)
 *   default_ttl_seconds = 1800         ttl when neither plan nor claim
 *                                      gives one (default 1800)
 *   max_ttl_seconds = 14400            ttl ceiling (default 14400)
 *
 *   class.<name>.cpu = 1               required; > 0, may be fractional
 *   class.<name>.memory_mb = 2048      required
 *   class.<name>.disk_gb = 10          required
 *   class.<name>.pids = 512            pids limit (default 1024)
 *   class.<name>.gpus = 0              GPUs per sandbox (default 0)
 *   class.<name>.browser = false       true or false: can run a browser
 *                                      (default false)
 *   class.<name>.templates = host      allowed templates, the first is the
 *                                      class's default (default: the first
 *                                      of "templates")
 *   class.<name>.workloads = a, b      optional: workload signatures this
 *                                      class is meant for (a tie-break
 *                                      between classes of the same size)
 *
 *   tenant.<id>.classes = a, b         required; known classes
 *   tenant.<id>.max_cpu = 16           required; committed CPUs
 *   tenant.<id>.max_memory_mb = 32768  required; committed memory
 *   tenant.<id>.max_sandboxes = 20     required; live claims (0 disables)
 *   tenant.<id>.network_profiles = ... allowed profiles (default: none)
 *   tenant.<id>.max_risk = high        highest task risk (default high)
 *   tenant.<id>.max_ttl_seconds = ...  (default: max_ttl_seconds)
 *
 *   risk.<low|medium|high>.runtimes = runsc
 *                                      allowed runtimes, the first is the
 *                                      default (defaults: low and medium
 *                                      "runc, runsc", high "runsc")
 *   risk.<low|medium|high>.network_profiles = none
 *                                      allowed profiles (default: any)
 *
 * Numbers are plain decimals (no sign, exponent or unit). A key set
 * twice, an unknown key, a value out of bounds, a list naming an item
 * twice, a reference to an undeclared class, template, profile or
 * runtime, a missing required key, and a tenant whose quota cannot hold
 * even its smallest class are errors. Tenant ids in the policy are
 * names as above; a tenant_id of any other form is simply unknown.
 */
#ifndef SBX_POLICY_H
#define SBX_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "sbx/err.h"

typedef enum sbx_risk_e {
        SBX_RISK_LOW,
        SBX_RISK_MEDIUM,
        SBX_RISK_HIGH,
        SBX_RISK__CNT
} sbx_risk_t;

typedef struct sbx_policy_list_s {
        char **v;
        size_t n;
} sbx_policy_list_t;

typedef struct sbx_policy_class_s {
        char *name;
        double cpu;
        int64_t memory_mb;
        int64_t disk_gb;
        int64_t pids;
        int64_t gpus;
        int browser;
        sbx_policy_list_t templates; /**< never empty; [0] is the default */
        sbx_policy_list_t workloads;
        int line; /**< where the class is first mentioned */
} sbx_policy_class_t;

typedef struct sbx_policy_tenant_s {
        char *id;
        size_t index;                  /**< 0..sbx_policy_tenant_count()-1 */
        sbx_policy_list_t class_names; /**< as written in the file */
        /** Allowed classes, smallest first (sbx_policy_class_cmp()). */
        const sbx_policy_class_t **classes;
        size_t nclasses;
        double max_cpu;
        int64_t max_memory_mb;
        int64_t max_sandboxes;
        int64_t max_ttl_seconds;
        sbx_risk_t max_risk;
        sbx_policy_list_t network_profiles;
        int line;
} sbx_policy_tenant_t;

typedef struct sbx_policy_risk_s {
        sbx_policy_list_t runtimes;         /**< never empty; [0] default */
        sbx_policy_list_t network_profiles; /**< empty: any */
} sbx_policy_risk_t;

typedef struct sbx_policy_s sbx_policy_t;

/**
 * Parses policy @p text; @p name (e.g. the path) prefixes errors as
 * "name:line: reason". NULL on any error, with the reason in @p errstr.
 */
sbx_policy_t *sbx_policy_parse(const char *name,
                               const char *text,
                               char *errstr,
                               size_t errstr_size);
/** Reads and parses the policy file @p path (at most 1 MiB). */
sbx_policy_t *sbx_policy_load(const char *path,
                              char *errstr,
                              size_t errstr_size);
/** Frees @p p; NULL is fine. */
void sbx_policy_destroy(sbx_policy_t *p);

/** The class called @p name (borrowed from @p p), or NULL. */
const sbx_policy_class_t *sbx_policy_class(const sbx_policy_t *p,
                                           const char *name);
/** Every class, in file order; *ret_n gets the count. */
const sbx_policy_class_t *const *sbx_policy_classes(const sbx_policy_t *p,
                                                    size_t *ret_n);

/** The tenant @p id (borrowed from @p p), or NULL for an unknown one. */
const sbx_policy_tenant_t *sbx_policy_tenant(const sbx_policy_t *p,
                                             const char *id);
int sbx_policy_tenant_known(const sbx_policy_t *p, const char *id);
size_t sbx_policy_tenant_count(const sbx_policy_t *p);
/**
 * The classes tenant @p id may use, smallest first, borrowed from @p p;
 * NULL with *ret_n = 0 for an unknown tenant.
 */
const sbx_policy_class_t *const *
sbx_policy_tenant_classes(const sbx_policy_t *p, const char *id, size_t *ret_n);
/** May tenant @p t use class @p name / network profile @p profile? */
int sbx_policy_tenant_allows_class(const sbx_policy_tenant_t *t,
                                   const char *name);
int sbx_policy_tenant_allows_network(const sbx_policy_tenant_t *t,
                                     const char *profile);

/** What risk level @p r allows (r < SBX_RISK__CNT). */
const sbx_policy_risk_t *sbx_policy_risk(const sbx_policy_t *p, sbx_risk_t r);
int sbx_policy_network_known(const sbx_policy_t *p, const char *profile);
int64_t sbx_policy_default_ttl(const sbx_policy_t *p);

/** Is @p item in @p list? */
int sbx_policy_list_has(const sbx_policy_list_t *list, const char *item);

/**
 * Size order of classes: CPU, then memory, disk, GPUs, non-browser before
 * browser, then name. Negative, 0 or positive like strcmp.
 */
int sbx_policy_class_cmp(const sbx_policy_class_t *a,
                         const sbx_policy_class_t *b);
/** "low", "medium", "high" to a level; -1 if unknown. */
int sbx_risk_by_name(const char *name);
const char *sbx_risk_name(sbx_risk_t r);

#endif
