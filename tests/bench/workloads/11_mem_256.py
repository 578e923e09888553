#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# does: allocates and touches 256 MiB
# task: deduplicate the customer records in memory with a python script
# tool: python3 dedupe.py customers.txt

buf = bytearray(b"\x01") * (256 << 20)  # allocated and written: all resident
print("MiB", len(buf) >> 20, "sum", sum(buf[::1 << 20]))
