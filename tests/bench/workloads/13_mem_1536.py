#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# does: allocates and touches 1.5 GiB
# task: cache the whole tile map in memory and serve it from a python script
# tool: python3 tiles.py --preload

buf = bytearray(b"\x01") * (1536 << 20)  # allocated and written: all resident
print("MiB", len(buf) >> 20, "sum", sum(buf[::1 << 20]))
