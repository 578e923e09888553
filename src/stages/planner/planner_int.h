/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The planner's parts as they see each other: the ResourceIntent as a C
 * struct, the resource classes of the design origin, the rules planner
 * (signals -> signature -> base size), telemetry (the fold of usage per
 * signature and the sizing rule), the LLM client and SHA-256. Nothing here
 * is visible outside src/stages/planner/.
 */
#ifndef SBX_PLANNER_INT_H
#define SBX_PLANNER_INT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/event.h"
#include "stages/planner/planner.h"

/* Bounds on what the planner accepts, from the log or from an LLM. */
#define SBX_PLANNER_CPU_MIN  0.1
#define SBX_PLANNER_CPU_MAX  256.0
#define SBX_PLANNER_MEM_MIN  64
#define SBX_PLANNER_MEM_MAX  1048576 /* MB */
#define SBX_PLANNER_DISK_MAX 65536   /* GB */
#define SBX_PLANNER_TTL_MIN  60
#define SBX_PLANNER_TTL_MAX  86400
#define SBX_PLANNER_MEM_STEP 256   /* MB: memory is a multiple of this */
#define SBX_PLANNER_LLM_MAX  65536 /* bytes of an LLM answer */

/* The ResourceIntent record of schemas/ResourceIntent.avsc. */
typedef struct sbx_intent_s {
        char *workload;
        char *resource_class; /**< NULL: none suggested */
        double cpu;
        int64_t memory_mb;
        int64_t disk_gb;
        int requires_browser, requires_gpu;
        char *network_profile;
        char *template_name;
        char *runtime;
        int64_t ttl_seconds;
        double confidence;
        char *reason;
} sbx_intent_t;

/** Frees the strings of @p in and zeroes it. */
void sbx_intent_clear(sbx_intent_t *in);
/** A deep copy of @p src into @p dst (cleared first). */
void sbx_intent_copy(sbx_intent_t *dst, const sbx_intent_t *src);
/** The intent as a payload JSON object with exactly the schema's fields. */
json_t *sbx_intent_to_json(const sbx_intent_t *in);
/**
 * Reads an untrusted ResourceIntent (an LLM's answer) @p j into *ret,
 * strictly: only the schema's fields, with their types and sane ranges.
 * Fields the schema gives a default may be missing and are taken from
 * @p dflt. SBX_ERR_INVALID with "llm answer invalid: <why>" otherwise.
 */
sbx_err_t sbx_intent_from_json(const json_t *j,
                               const sbx_intent_t *dflt,
                               sbx_intent_t *ret,
                               char *errstr,
                               size_t errstr_size);

/** Is @p s a name later stages may use as an identifier: [a-z0-9._-]{1,max}? */
int sbx_planner_is_token(const char *s, size_t max);
#define SBX_PLANNER_TOKEN_MAX 64

/** Appends printf output to the heap string *s (NULL is ""). */
void sbx_planner_appendf(char **s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A resource class of the design origin (§四 4.4). */
typedef struct sbx_rclass_s {
        const char *name;
        double cpu;
        int64_t memory_mb;
        int64_t disk_gb;
} sbx_rclass_t;

/** The class called @p name, or NULL. */
const sbx_rclass_t *sbx_planner_class(const char *name);

/* What the rules planner found in a request. */
typedef struct sbx_rules_s {
        char *signature;     /**< e.g. "python-data", "node-browser-build" */
        int ladder;          /**< which classes the size may move between */
        int fixed_class;     /**< class index of a known requested_class that
                                  pins resource_class, or -1 */
        sbx_intent_t intent; /**< base answer: classes, no telemetry */
} sbx_rules_t;

/**
 * Runs the rules planner on a ClaimRequested payload @p claim (borrowed,
 * any JSON: missing or mistyped fields are treated as absent).
 */
void sbx_planner_rules(const json_t *claim, sbx_rules_t *ret);
void sbx_planner_rules_clear(sbx_rules_t *r);
/**
 * The smallest class of @p r's ladder that holds @p cpu and @p memory_mb
 * (the largest when none does); the requested class when pinned.
 */
const char *sbx_planner_rules_class(const sbx_rules_t *r,
                                    double cpu,
                                    int64_t memory_mb);

/* Telemetry: usage per signature, folded from the log. */
typedef struct sbx_tel_s sbx_tel_t;

typedef struct sbx_sizing_s {
        long samples;
        double p50_mem_mb, p95_mem_mb, p95_cpu, oom_rate;
        int64_t memory_mb; /**< 0: not enough samples, keep the base */
        double cpu;        /**< 0 likewise */
        double confidence;
        int64_t oom_alloc_mb; /**< largest allocation that OOMed, or 0 */
} sbx_sizing_t;

#define SBX_PLANNER_MIN_SAMPLES 5
#define SBX_PLANNER_WINDOW      256

sbx_tel_t *sbx_planner_tel_new(void);
void sbx_planner_tel_destroy(sbx_tel_t *t);
void sbx_planner_tel_observe(sbx_tel_t *t, const sbx_event_t *ev);
/**
 * Sizing of @p signature from its samples; 0 if it has none, else 1 with
 * *ret filled (memory_mb and cpu stay 0 below the minimum sample count
 * unless it OOMed).
 */
int sbx_planner_tel_sizing(const sbx_tel_t *t,
                           const char *signature,
                           sbx_sizing_t *ret);
size_t sbx_planner_tel_stats(const sbx_tel_t *t,
                             sbx_planner_stats_t *out,
                             size_t max);

/* The LLM client. */
typedef struct sbx_llm_s sbx_llm_t;

sbx_llm_t *sbx_planner_llm_new(const sbx_planner_conf_t *conf,
                               char *errstr,
                               size_t errstr_size);
void sbx_planner_llm_destroy(sbx_llm_t *l);
/**
 * Asks the LLM for an intent for @p claim (borrowed), telling it the
 * rules' answer @p rules and the signature's telemetry @p sz (may be
 * NULL). On success fills *ret (strictly validated) and returns SBX_OK;
 * otherwise a reason for the operator in @p errstr.
 */
sbx_err_t sbx_planner_llm_ask(sbx_llm_t *l,
                              const json_t *claim,
                              const sbx_rules_t *rules,
                              const sbx_sizing_t *sz,
                              sbx_intent_t *ret,
                              char *errstr,
                              size_t errstr_size);
/** SHA-256 of @p len bytes at @p data as 64 lowercase hex digits + NUL. */
void sbx_planner_sha256_hex(const void *data, size_t len, char out[65]);

#endif
