/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `sbx topics apply`: converges the broker's topics to the specs of
 * topics/ through the Kafka Admin API, and reports each change.
 */
#ifndef SBX_TOPICS_H
#define SBX_TOPICS_H

#include "core/config.h"
#include "core/topicspec.h"

/** Receives one human-readable line per change (or planned change). */
typedef void(sbx_topics_report_cb_t)(const char *line, void *opaque);

/**
 * Plans every change first (create, add partitions, alter configs) and
 * refuses the whole set if any change is impossible (e.g. shrinking
 * partitions), so an error changes nothing. With @p dry_run only reports
 * the plan. *ret_nchanges (may be NULL) is the number of changes.
 */
sbx_err_t sbx_topics_apply(const sbx_config_t *config,
                           const sbx_topicspecs_t *specs, int dry_run,
                           sbx_topics_report_cb_t *report, void *opaque,
                           int *ret_nchanges, char *errstr,
                           size_t errstr_size);

/**
 * Deletes the @p n topics named in @p names (borrowed), e.g. those a
 * benchmark made. SBX_ERR_KAFKA with the first topic's reason if any
 * deletion failed.
 */
sbx_err_t sbx_topics_delete(const sbx_config_t *config,
                            const char *const *names,
                            size_t n,
                            char *errstr,
                            size_t errstr_size);

#endif
