#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# does: streams 2M generated CSV rows into a set of keys to drop duplicates
# task: drop the duplicate rows of the 800 MB clicks.csv with pandas drop_duplicates
# tool: python3 -c "import pandas as pd; pd.read_csv('clicks.csv').drop_duplicates()"
# data_mb: 800
seen, dup = set(), 0
for i in range(2000000):
    key = "%d,%d,%d" % (i % 1300000, i % 7, i % 1300000 % 11)
    if key in seen:
        dup += 1
    else:
        seen.add(key)
print("unique", len(seen), "dup", dup)
