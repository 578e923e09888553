#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# does: allocates and touches 4.1 GiB (more than a fixed 4 GiB)
# task: load the 4 GB genome index into memory and align the reads with python
# tool: python3 align.py --index genome.idx
# data_mb: 4000
buf = bytearray(b"\x01") * (4200 << 20)  # allocated and written: all resident
print("MiB", len(buf) >> 20, "sum", sum(buf[::1 << 20]))
