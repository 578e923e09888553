/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Names of sbx error codes. Every value of sbx_err_t has a string; an
 * unknown value maps to a generic one, so sbx_err2str never returns NULL.
 */
#include "sbx/err.h"

const char *sbx_err2str(sbx_err_t err)
{
        switch (err) {
        case SBX_OK:
                return "success";
        case SBX_ERR_INVALID:
                return "invalid input";
        case SBX_ERR_IO:
                return "I/O error";
        case SBX_ERR_NOENT:
                return "not found";
        case SBX_ERR_KAFKA:
                return "Kafka error";
        case SBX_ERR_PG:
                return "PostgreSQL error";
        case SBX_ERR_TIMEOUT:
                return "timed out";
        case SBX_ERR_CONFLICT:
                return "conflict";
        case SBX_ERR_TOOBIG:
                return "too big";
        case SBX_ERR_UNSUPPORTED:
                return "unsupported";
        case SBX_ERR_RUNTIME:
                return "container runtime error";
        case SBX_ERR_REJECTED:
                return "rejected";
        case SBX_ERR_FAILED:
                return "failed";
        }
        return "unknown error";
}
