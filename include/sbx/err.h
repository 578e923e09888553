/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sbx error codes. Every sbx function that can fail returns sbx_err_t:
 * 0 is success, negative values are errors. Functions that face a human
 * (config, connect, validation) also fill a caller-provided errstr buffer.
 */
#ifndef SBX_ERR_H
#define SBX_ERR_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sbx_err_e {
        SBX_OK              = 0,
        SBX_ERR_INVALID     = -1,  /**< malformed input */
        SBX_ERR_IO          = -2,  /**< file or socket I/O failed */
        SBX_ERR_NOENT       = -3,  /**< no such file, topic, aggregate... */
        SBX_ERR_KAFKA       = -4,  /**< Kafka client or broker error */
        SBX_ERR_PG          = -5,  /**< PostgreSQL error */
        SBX_ERR_TIMEOUT     = -6,  /**< a deadline passed */
        SBX_ERR_CONFLICT    = -7,  /**< the target changed under us */
        SBX_ERR_TOOBIG      = -8,  /**< a size bound was exceeded */
        SBX_ERR_UNSUPPORTED = -9,  /**< known but not supported here */
        SBX_ERR_RUNTIME     = -10, /**< container runtime failure */
        SBX_ERR_REJECTED    = -11, /**< the control plane refused a request */
        SBX_ERR_FAILED      = -12, /**< a claim or sandbox failed or was lost */
} sbx_err_t;

/** Static description of @p err; never NULL. */
const char *sbx_err2str(sbx_err_t err);

#ifdef __cplusplus
}
#endif
#endif
