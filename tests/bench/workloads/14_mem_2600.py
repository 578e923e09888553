#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# does: allocates and touches 2.6 GiB (more than python-small's 2 GiB)
# task: load the embedding table into RAM and answer nearest-neighbour queries in python
# tool: python3 knn.py --load-all

buf = bytearray(b"\x01") * (2600 << 20)  # allocated and written: all resident
print("MiB", len(buf) >> 20, "sum", sum(buf[::1 << 20]))
