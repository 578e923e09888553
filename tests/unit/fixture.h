/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared by the unit tests that need the real codec: one per test
 * executable, created by the group setup and destroyed by its teardown.
 */
#ifndef SBX_TEST_FIXTURE_H
#define SBX_TEST_FIXTURE_H

#include "codec/codec.h"

static sbx_codec_t *codec;

static inline int setup(void **state)
{
        char err[256];
        (void)state;
        codec = sbx_codec_new(err, sizeof(err));
        return codec ? 0 : -1;
}

static inline int teardown(void **state)
{
        (void)state;
        sbx_codec_destroy(codec);
        return 0;
}

#endif
