#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# does: builds a 400k-row table in memory and pivots it (month x product)
# task: make a pivot table of units per month and product from the sales csv
# tool: python3 pivot.py sales.csv
import collections
import csv
import io

buf = io.StringIO()
csv.writer(buf).writerows((i % 12 + 1, "p%d" % (i % 250), i % 17) for i in range(400000))
pivot = collections.defaultdict(lambda: collections.defaultdict(int))
for month, prod, units in csv.reader(io.StringIO(buf.getvalue())):
    pivot[month][prod] += int(units)
print("cells", sum(len(v) for v in pivot.values()))
