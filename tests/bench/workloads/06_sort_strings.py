#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# does: sorts 1M pseudo-random 16-char strings and counts duplicates (~200 MB)
# task: sort the list of one million product codes and report duplicates in python
# tool: python3 codes.py sort
import hashlib

codes = [hashlib.md5(b"%d" % (i % 900000)).hexdigest()[:16] for i in range(1000000)]
codes.sort()
print("dups", sum(1 for a, b in zip(codes, codes[1:]) if a == b))
