#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# does: writes orders and customers CSVs (19 MB) and joins them through a dict
# task: join orders.csv with customers.csv and write the revenue per city to a new csv
# tool: python3 join.py orders.csv customers.csv > revenue.csv
# lang: python
import collections
import csv

with open("/tmp/cust.csv", "w") as f:
    f.write("".join("%d,city%d\n" % (i, i % 300) for i in range(200000)))
with open("/tmp/orders.csv", "w") as f:
    f.write("".join("%d,%d,%.2f\n" % (i, (i * 31) % 200000, i % 997 / 3) for i in range(800000)))
city = {r[0]: r[1] for r in csv.reader(open("/tmp/cust.csv"))}
rev = collections.defaultdict(float)
for oid, cid, amount in csv.reader(open("/tmp/orders.csv")):
    rev[city[cid]] += float(amount)
with open("/tmp/revenue.csv", "w", newline="") as f:
    csv.writer(f).writerows(sorted(rev.items()))
print("cities", len(rev))
