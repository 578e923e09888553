#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# does: allocates and touches 768 MiB
# task: build an in-memory search index of the documents in python
# tool: python3 build_index.py docs/

buf = bytearray(b"\x01") * (768 << 20)  # allocated and written: all resident
print("MiB", len(buf) >> 20, "sum", sum(buf[::1 << 20]))
