/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The input format of the codec fuzz harness, shared by the harness, its
 * replay main and the seed generator. Byte 0 selects what the rest is:
 * its low two bits the message kind (0 event, 1 request, 2 node status,
 * 3 event again: events are the richest schema), and a selector of
 * SBX_FUZZ_RAW or more means the rest is a whole message, header included,
 * fed unchanged to every decoder. Any other selector means the rest is an
 * Avro body, and the harness puts the current schema's single-object
 * header (C3 01 + fingerprint) in front of it: random bytes almost never
 * carry a known fingerprint, and this is how the fuzzer reaches the body
 * decoder.
 */
#ifndef SBX_FUZZ_CODEC_H
#define SBX_FUZZ_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "codec/codec.h"

#define SBX_FUZZ_RAW        0xE0 /* selectors 0xE0..0xFF: 1 input in 8 */
#define SBX_FUZZ_HEADER_LEN 10

/* The kind a selector byte names. */
static inline sbx_schema_kind_t sbx_fuzz_kind(uint8_t selector)
{
        switch (selector & 0x03) {
        case 1:
                return SBX_SCHEMA_REQUEST;
        case 2:
                return SBX_SCHEMA_NODE_STATUS;
        default:
                return SBX_SCHEMA_EVENT;
        }
}

/** libFuzzer's entry point; @p data is borrowed. Always returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
