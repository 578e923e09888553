#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# does: streams 120 MB of generated text through zlib level 6 (CPU, little memory)
# task: compress the nightly backup stream with python's zlib and report the ratio
# tool: python3 backup.py --compress
import zlib

c, raw, out = zlib.compressobj(6), 0, 0
block = b"".join(b"record %08d value %d\n" % (i, i * i % 1000) for i in range(40000))
for k in range(120):
    data = block[k:] + block[:k]
    raw += len(data)
    out += len(c.compress(data))
out += len(c.flush())
print("ratio %.3f" % (out / raw))
