/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runtime/sha256.h over EVP. libcrypto fails only on allocation or on a
 * broken installation; both are treated like a failed malloc.
 */
#include "runtime/sha256.h"

#include <stdlib.h>

#include <openssl/evp.h>

#include "core/util.h"

struct sbx_sha256_s {
        EVP_MD_CTX *ctx;
};

static void reset(sbx_sha256_t *h)
{
        sbx_assert(EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) == 1);
}

sbx_sha256_t *sbx_sha256_new(void)
{
        sbx_sha256_t *h = sbx_calloc(1, sizeof(*h));
        h->ctx          = EVP_MD_CTX_new();
        sbx_assert(h->ctx != NULL);
        reset(h);
        return h;
}

void sbx_sha256_destroy(sbx_sha256_t *h)
{
        if (!h)
                return;
        EVP_MD_CTX_free(h->ctx);
        free(h);
}

void sbx_sha256_update(sbx_sha256_t *h, const void *data, size_t len)
{
        sbx_assert(EVP_DigestUpdate(h->ctx, data, len) == 1);
}

void sbx_sha256_hex_final(sbx_sha256_t *h, char out[SBX_SHA256_HEX_LEN + 1])
{
        static const char hex[] = "0123456789abcdef";
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int n = 0;

        sbx_assert(EVP_DigestFinal_ex(h->ctx, md, &n) == 1 && n == 32);
        for (unsigned int i = 0; i < n; i++) {
                out[2 * i]     = hex[md[i] >> 4];
                out[2 * i + 1] = hex[md[i] & 15];
        }
        out[SBX_SHA256_HEX_LEN] = '\0';
        reset(h);
}

void sbx_sha256_hex(const void *data,
                    size_t len,
                    char out[SBX_SHA256_HEX_LEN + 1])
{
        sbx_sha256_t *h = sbx_sha256_new();
        sbx_sha256_update(h, data, len);
        sbx_sha256_hex_final(h, out);
        sbx_sha256_destroy(h);
}
