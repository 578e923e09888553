/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Topic convergence. For each spec it compares the broker's state with the
 * file: a missing topic is created with its configs; too few partitions
 * are added; any topic config that differs from the file, including one
 * set on the broker by hand and absent from the file, is reset to the
 * file's set with one AlterConfigs call (librdkafka 2.0.2 has no
 * incremental alter, and a full set is exactly "match the file"). All
 * checks run before the first change.
 */
#include "kafka/topics.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "core/util.h"
#include "kafka/kconf.h"

#define ADMIN_TIMEOUT_MS 30000

typedef struct plan_s {
        const sbx_topicspec_t *spec;
        int exists;
        int cur_partitions;
        int rf;
        int alter; /* configs differ */
} plan_t;

static rd_kafka_event_t *wait_result(rd_kafka_queue_t *q,
                                     rd_kafka_event_type_t type)
{
        for (;;) {
                rd_kafka_event_t *ev = rd_kafka_queue_poll(q, ADMIN_TIMEOUT_MS);
                if (!ev)
                        return NULL;
                if (rd_kafka_event_type(ev) == type)
                        return ev;
                rd_kafka_event_destroy(ev);
        }
}

/* Desired configs of a spec: its own, plus min.insync.replicas=2 when the
 * topic is replicated at least three times and the spec does not say. */
static size_t desired_configs(const plan_t *p, sbx_topic_config_t *out,
                              size_t max)
{
        size_t n = 0, i;
        for (i = 0; i < p->spec->nconfigs && n < max; i++)
                out[n++] = p->spec->configs[i];
        if (p->rf >= 3 && !sbx_topicspec_config(p->spec, "min.insync.replicas") &&
            n < max) {
                out[n].name = (char *)"min.insync.replicas";
                out[n].value = (char *)"2";
                n++;
        }
        return n;
}

static const char *find_cfg(const sbx_topic_config_t *c, size_t n,
                            const char *name)
{
        size_t i;
        for (i = 0; i < n; i++)
                if (!strcmp(c[i].name, name))
                        return c[i].value;
        return NULL;
}

static sbx_err_t diff_configs(rd_kafka_t *rk, plan_t *plans, size_t nplans,
                              sbx_topics_report_cb_t *report, void *opaque,
                              int *nchanges, char *errstr, size_t errstr_size)
{
        rd_kafka_ConfigResource_t **res = sbx_calloc(nplans, sizeof(*res));
        rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
        rd_kafka_event_t *ev = NULL;
        const rd_kafka_ConfigResource_t **rres;
        size_t nres = 0, i, j, k;
        sbx_err_t err = SBX_OK;
        char line[1024];

        for (i = 0; i < nplans; i++)
                if (plans[i].exists)
                        res[nres++] = rd_kafka_ConfigResource_new(
                            RD_KAFKA_RESOURCE_TOPIC, plans[i].spec->name);
        if (!nres)
                goto done;
        rd_kafka_DescribeConfigs(rk, res, nres, NULL, q);
        ev = wait_result(q, RD_KAFKA_EVENT_DESCRIBECONFIGS_RESULT);
        if (!ev || rd_kafka_event_error(ev)) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA,
                                 "DescribeConfigs: %s",
                                 ev ? rd_kafka_event_error_string(ev)
                                    : "timed out");
                goto done;
        }
        rres = rd_kafka_DescribeConfigs_result_resources(
            rd_kafka_event_DescribeConfigs_result(ev), &nres);
        for (i = 0; i < nres; i++) {
                const char *tname = rd_kafka_ConfigResource_name(rres[i]);
                const rd_kafka_ConfigEntry_t **entries;
                sbx_topic_config_t want[80];
                size_t nentries, nwant;
                plan_t *p = NULL;

                for (j = 0; j < nplans; j++)
                        if (plans[j].exists &&
                            !strcmp(plans[j].spec->name, tname))
                                p = &plans[j];
                if (!p)
                        continue;
                if (rd_kafka_ConfigResource_error(rres[i])) {
                        err = sbx_seterr(
                            errstr, errstr_size, SBX_ERR_KAFKA,
                            "DescribeConfigs %s: %s", tname,
                            rd_kafka_ConfigResource_error_string(rres[i]));
                        goto done;
                }
                nwant = desired_configs(p, want, SBX_ARRAY_SIZE(want));
                entries = rd_kafka_ConfigResource_configs(rres[i], &nentries);
                for (k = 0; k < nwant; k++) {
                        const char *cur = NULL;
                        for (j = 0; j < nentries; j++)
                                if (!strcmp(rd_kafka_ConfigEntry_name(entries[j]),
                                            want[k].name))
                                        cur = rd_kafka_ConfigEntry_value(
                                            entries[j]);
                        if (!cur || strcmp(cur, want[k].value)) {
                                p->alter = 1;
                                report(sbx_fmt(line, sizeof(line),
                                               "%s: %s %s -> %s", tname,
                                               want[k].name, cur ? cur : "?",
                                               want[k].value),
                                       opaque);
                                (*nchanges)++;
                        }
                }
                for (j = 0; j < nentries; j++) {
                        const char *name = rd_kafka_ConfigEntry_name(entries[j]);
                        if (rd_kafka_ConfigEntry_source(entries[j]) !=
                                RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG ||
                            find_cfg(want, nwant, name))
                                continue;
                        p->alter = 1;
                        report(sbx_fmt(line, sizeof(line),
                                       "%s: %s %s -> (broker default, not in "
                                       "%s)",
                                       tname, name,
                                       rd_kafka_ConfigEntry_value(entries[j]),
                                       p->spec->file),
                               opaque);
                        (*nchanges)++;
                }
        }
done:
        if (ev)
                rd_kafka_event_destroy(ev);
        for (i = 0; i < nplans; i++)
                if (res[i])
                        rd_kafka_ConfigResource_destroy(res[i]);
        free(res);
        rd_kafka_queue_destroy(q);
        return err;
}

static sbx_err_t check_topic_results(const rd_kafka_topic_result_t **tr,
                                     size_t n, const char *what, char *errstr,
                                     size_t errstr_size)
{
        size_t i;
        for (i = 0; i < n; i++)
                if (rd_kafka_topic_result_error(tr[i]) &&
                    rd_kafka_topic_result_error(tr[i]) !=
                        RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
                        return sbx_seterr(
                            errstr, errstr_size, SBX_ERR_KAFKA, "%s %s: %s",
                            what, rd_kafka_topic_result_name(tr[i]),
                            rd_kafka_topic_result_error_string(tr[i]));
        return SBX_OK;
}

static sbx_err_t do_create(rd_kafka_t *rk, plan_t *plans, size_t nplans,
                           char *errstr, size_t errstr_size)
{
        rd_kafka_NewTopic_t **nt = sbx_calloc(nplans, sizeof(*nt));
        rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
        rd_kafka_event_t *ev = NULL;
        const rd_kafka_topic_result_t **tr;
        size_t n = 0, i, k, ntr;
        sbx_err_t err = SBX_OK;
        char rderr[256];

        for (i = 0; i < nplans; i++) {
                sbx_topic_config_t want[80];
                size_t nwant;
                if (plans[i].exists)
                        continue;
                nt[n] = rd_kafka_NewTopic_new(plans[i].spec->name,
                                              plans[i].spec->partitions,
                                              plans[i].rf, rderr,
                                              sizeof(rderr));
                if (!nt[n]) {
                        err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                         "%s: %s", plans[i].spec->name, rderr);
                        goto done;
                }
                nwant = desired_configs(&plans[i], want, SBX_ARRAY_SIZE(want));
                for (k = 0; k < nwant; k++)
                        rd_kafka_NewTopic_set_config(nt[n], want[k].name,
                                                     want[k].value);
                n++;
        }
        if (!n)
                goto done;
        rd_kafka_CreateTopics(rk, nt, n, NULL, q);
        ev = wait_result(q, RD_KAFKA_EVENT_CREATETOPICS_RESULT);
        if (!ev || rd_kafka_event_error(ev)) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA,
                                 "CreateTopics: %s",
                                 ev ? rd_kafka_event_error_string(ev)
                                    : "timed out");
                goto done;
        }
        tr = rd_kafka_CreateTopics_result_topics(
            rd_kafka_event_CreateTopics_result(ev), &ntr);
        err = check_topic_results(tr, ntr, "create", errstr, errstr_size);
done:
        if (ev)
                rd_kafka_event_destroy(ev);
        for (i = 0; i < n; i++)
                rd_kafka_NewTopic_destroy(nt[i]);
        free(nt);
        rd_kafka_queue_destroy(q);
        return err;
}

static sbx_err_t do_partitions(rd_kafka_t *rk, plan_t *plans, size_t nplans,
                               char *errstr, size_t errstr_size)
{
        rd_kafka_NewPartitions_t **np = sbx_calloc(nplans, sizeof(*np));
        rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
        rd_kafka_event_t *ev = NULL;
        const rd_kafka_topic_result_t **tr;
        size_t n = 0, i, ntr;
        sbx_err_t err = SBX_OK;
        char rderr[256];

        for (i = 0; i < nplans; i++) {
                if (!plans[i].exists ||
                    plans[i].cur_partitions >= plans[i].spec->partitions)
                        continue;
                np[n] = rd_kafka_NewPartitions_new(plans[i].spec->name,
                                                   plans[i].spec->partitions,
                                                   rderr, sizeof(rderr));
                if (!np[n]) {
                        err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                         "%s: %s", plans[i].spec->name, rderr);
                        goto done;
                }
                n++;
        }
        if (!n)
                goto done;
        rd_kafka_CreatePartitions(rk, np, n, NULL, q);
        ev = wait_result(q, RD_KAFKA_EVENT_CREATEPARTITIONS_RESULT);
        if (!ev || rd_kafka_event_error(ev)) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA,
                                 "CreatePartitions: %s",
                                 ev ? rd_kafka_event_error_string(ev)
                                    : "timed out");
                goto done;
        }
        tr = rd_kafka_CreatePartitions_result_topics(
            rd_kafka_event_CreatePartitions_result(ev), &ntr);
        err = check_topic_results(tr, ntr, "add partitions to", errstr,
                                  errstr_size);
done:
        if (ev)
                rd_kafka_event_destroy(ev);
        for (i = 0; i < n; i++)
                rd_kafka_NewPartitions_destroy(np[i]);
        free(np);
        rd_kafka_queue_destroy(q);
        return err;
}

static sbx_err_t do_alter(rd_kafka_t *rk, plan_t *plans, size_t nplans,
                          char *errstr, size_t errstr_size)
{
        rd_kafka_ConfigResource_t **res = sbx_calloc(nplans, sizeof(*res));
        rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
        rd_kafka_event_t *ev = NULL;
        const rd_kafka_ConfigResource_t **rres;
        size_t n = 0, i, k, nres;
        sbx_err_t err = SBX_OK;

        for (i = 0; i < nplans; i++) {
                sbx_topic_config_t want[80];
                size_t nwant;
                if (!plans[i].alter)
                        continue;
                res[n] = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC,
                                                     plans[i].spec->name);
                nwant = desired_configs(&plans[i], want, SBX_ARRAY_SIZE(want));
                for (k = 0; k < nwant; k++)
                        rd_kafka_ConfigResource_set_config(
                            res[n], want[k].name, want[k].value);
                n++;
        }
        if (!n)
                goto done;
        rd_kafka_AlterConfigs(rk, res, n, NULL, q);
        ev = wait_result(q, RD_KAFKA_EVENT_ALTERCONFIGS_RESULT);
        if (!ev || rd_kafka_event_error(ev)) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA,
                                 "AlterConfigs: %s",
                                 ev ? rd_kafka_event_error_string(ev)
                                    : "timed out");
                goto done;
        }
        rres = rd_kafka_AlterConfigs_result_resources(
            rd_kafka_event_AlterConfigs_result(ev), &nres);
        for (i = 0; i < nres; i++)
                if (rd_kafka_ConfigResource_error(rres[i])) {
                        err = sbx_seterr(
                            errstr, errstr_size, SBX_ERR_KAFKA,
                            "AlterConfigs %s: %s",
                            rd_kafka_ConfigResource_name(rres[i]),
                            rd_kafka_ConfigResource_error_string(rres[i]));
                        break;
                }
done:
        if (ev)
                rd_kafka_event_destroy(ev);
        for (i = 0; i < n; i++)
                rd_kafka_ConfigResource_destroy(res[i]);
        free(res);
        rd_kafka_queue_destroy(q);
        return err;
}

/* Waits until metadata shows every planned topic with all its partitions
 * led: a create is acknowledged before the metadata says so, and a second
 * apply (or a consumer) right after must see what the first one made. */
static sbx_err_t wait_visible(rd_kafka_t *rk, const plan_t *plans,
                              size_t nplans, char *errstr, size_t errstr_size)
{
        int64_t deadline = sbx_mono_us() + 30 * 1000000LL;
        while (sbx_mono_us() < deadline) {
                const struct rd_kafka_metadata *md = NULL;
                size_t i, ok = 0;
                int t, q;
                if (rd_kafka_metadata(rk, 1, NULL, &md, 5000) == 0) {
                        for (i = 0; i < nplans; i++)
                                for (t = 0; t < md->topic_cnt; t++) {
                                        const struct rd_kafka_metadata_topic *mt =
                                            &md->topics[t];
                                        int led = 1;
                                        if (strcmp(mt->topic, plans[i].spec->name) ||
                                            mt->err ||
                                            mt->partition_cnt <
                                                plans[i].spec->partitions)
                                                continue;
                                        for (q = 0; q < mt->partition_cnt; q++)
                                                led &= mt->partitions[q].leader >= 0 &&
                                                       !mt->partitions[q].err;
                                        ok += led;
                                }
                        rd_kafka_metadata_destroy(md);
                        if (ok == nplans)
                                return SBX_OK;
                }
                usleep(200000);
        }
        return sbx_seterr(errstr, errstr_size, SBX_ERR_TIMEOUT,
                          "topics were changed but the metadata did not show "
                          "them within 30 s");
}

/* A client for the Admin API; NULL with *ret_err and errstr set. */
static rd_kafka_t *admin_new(const sbx_config_t *config,
                             sbx_err_t *ret_err,
                             char *errstr,
                             size_t errstr_size)
{
        rd_kafka_conf_t *conf =
            sbx_kconf_new(config, SBX_KCONF_ADMIN, NULL, errstr, errstr_size);
        rd_kafka_t *rk;
        char rderr[512];

        if (!conf) {
                *ret_err = SBX_ERR_INVALID;
                return NULL;
        }
        rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, rderr, sizeof(rderr));
        if (!rk) {
                rd_kafka_conf_destroy(conf);
                *ret_err =
                    sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA, "%s", rderr);
        }
        return rk;
}

sbx_err_t sbx_topics_apply(const sbx_config_t *config,
                           const sbx_topicspecs_t *specs, int dry_run,
                           sbx_topics_report_cb_t *report, void *opaque,
                           int *ret_nchanges, char *errstr, size_t errstr_size)
{
        rd_kafka_t *rk = NULL;
        const struct rd_kafka_metadata *md = NULL;
        plan_t *plans = sbx_calloc(specs->n, sizeof(*plans));
        rd_kafka_resp_err_t rerr;
        sbx_err_t err = SBX_OK;
        int nchanges = 0, i, nbrokers;
        size_t s;
        char line[1024];

        rk = admin_new(config, &err, errstr, errstr_size);
        if (!rk)
                goto done;
        rerr = rd_kafka_metadata(rk, 1, NULL, &md, 10000);
        if (rerr) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_KAFKA,
                                 "cannot read metadata from %s: %s",
                                 config->brokers, rd_kafka_err2str(rerr));
                goto done;
        }
        nbrokers = md->broker_cnt;

        /* Plan: nothing changes on the broker until every spec checks out. */
        for (s = 0; s < specs->n; s++) {
                plan_t *p = &plans[s];
                p->spec = specs->specs[s];
                p->rf = p->spec->replication_factor > 0
                            ? p->spec->replication_factor
                        : config->replication_factor > 0
                            ? config->replication_factor
                            : (nbrokers < 3 ? nbrokers : 3);
                for (i = 0; i < md->topic_cnt; i++)
                        if (!strcmp(md->topics[i].topic, p->spec->name) &&
                            md->topics[i].err !=
                                RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
                                p->exists = 1;
                                p->cur_partitions = md->topics[i].partition_cnt;
                        }
                if (p->rf > nbrokers) {
                        err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                         "%s: replication factor %d but the "
                                         "cluster has %d broker(s)",
                                         p->spec->file, p->rf, nbrokers);
                        goto done;
                }
                if (p->exists && p->cur_partitions > p->spec->partitions) {
                        err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                         "%s: topic %s has %d partitions, "
                                         "the spec asks for %d; Kafka cannot "
                                         "remove partitions",
                                         p->spec->file, p->spec->name,
                                         p->cur_partitions,
                                         p->spec->partitions);
                        goto done;
                }
                if (!p->exists) {
                        report(sbx_fmt(line, sizeof(line),
                                       "%s: create (%d partitions, "
                                       "replication factor %d)",
                                       p->spec->name, p->spec->partitions,
                                       p->rf),
                               opaque);
                        nchanges++;
                } else if (p->cur_partitions < p->spec->partitions) {
                        report(sbx_fmt(line, sizeof(line),
                                       "%s: partitions %d -> %d",
                                       p->spec->name, p->cur_partitions,
                                       p->spec->partitions),
                               opaque);
                        nchanges++;
                }
        }
        err = diff_configs(rk, plans, specs->n, report, opaque, &nchanges,
                           errstr, errstr_size);
        if (err || dry_run || !nchanges)
                goto done;

        err = do_create(rk, plans, specs->n, errstr, errstr_size);
        if (!err)
                err = do_partitions(rk, plans, specs->n, errstr, errstr_size);
        if (!err)
                err = do_alter(rk, plans, specs->n, errstr, errstr_size);
        if (!err)
                err = wait_visible(rk, plans, specs->n, errstr, errstr_size);
done:
        if (!err && ret_nchanges)
                *ret_nchanges = nchanges;
        if (md)
                rd_kafka_metadata_destroy(md);
        if (rk)
                rd_kafka_destroy(rk);
        free(plans);
        return err;
}

sbx_err_t sbx_topics_delete(const sbx_config_t *config,
                            const char *const *names,
                            size_t n,
                            char *errstr,
                            size_t errstr_size)
{
        sbx_err_t err  = SBX_OK;
        rd_kafka_t *rk = admin_new(config, &err, errstr, errstr_size);
        rd_kafka_DeleteTopic_t **dt = sbx_calloc(n ? n : 1, sizeof(*dt));
        rd_kafka_queue_t *q         = NULL;
        rd_kafka_event_t *ev        = NULL;
        const rd_kafka_topic_result_t **tr;
        size_t i, ntr;

        if (!rk)
                goto done;
        q = rd_kafka_queue_new(rk);
        for (i = 0; i < n; i++)
                dt[i] = rd_kafka_DeleteTopic_new(names[i]);
        rd_kafka_DeleteTopics(rk, dt, n, NULL, q);
        ev = wait_result(q, RD_KAFKA_EVENT_DELETETOPICS_RESULT);
        if (!ev || rd_kafka_event_error(ev)) {
                err = sbx_seterr(
                    errstr, errstr_size, SBX_ERR_KAFKA, "DeleteTopics: %s",
                    ev ? rd_kafka_event_error_string(ev) : "timed out");
                goto done;
        }
        tr = rd_kafka_DeleteTopics_result_topics(
            rd_kafka_event_DeleteTopics_result(ev), &ntr);
        err = check_topic_results(tr, ntr, "delete", errstr, errstr_size);
done:
        if (ev)
                rd_kafka_event_destroy(ev);
        for (i = 0; i < n; i++)
                if (dt[i])
                        rd_kafka_DeleteTopic_destroy(dt[i]);
        free(dt);
        if (q)
                rd_kafka_queue_destroy(q);
        if (rk)
                rd_kafka_destroy(rk);
        return err;
}
