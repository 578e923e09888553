/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SHA-256 for the runtime's content addressing (runtime/layers.h), from
 * OpenSSL's libcrypto (EVP), which every sbx binary already loads through
 * libpq and libcurl: no hand-written crypto. libcrypto appears in this
 * file only. A context is reusable: sbx_sha256_hex_final resets it.
 */
#ifndef SBX_RUNTIME_SHA256_H
#define SBX_RUNTIME_SHA256_H

#include <stddef.h>

#define SBX_SHA256_HEX_LEN 64

typedef struct sbx_sha256_s sbx_sha256_t;

/** A context ready for data (aborts if libcrypto cannot make one). */
sbx_sha256_t *sbx_sha256_new(void);
void sbx_sha256_destroy(sbx_sha256_t *h);

void sbx_sha256_update(sbx_sha256_t *h, const void *data, size_t len);

/** Writes the digest of everything since the last reset as 64 lowercase
 *  hex digits and a NUL to @p out, and resets @p h. */
void sbx_sha256_hex_final(sbx_sha256_t *h, char out[SBX_SHA256_HEX_LEN + 1]);

/** One shot over @p len bytes at @p data. */
void sbx_sha256_hex(const void *data,
                    size_t len,
                    char out[SBX_SHA256_HEX_LEN + 1]);

#endif
