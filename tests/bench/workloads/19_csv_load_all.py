#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# does: writes a 27 MB customer CSV and loads all of it as a list of dicts
#       (~10x the file in Python objects), then sorts it
# task: load customers.csv into a dataframe, sort by lifetime value, show the top 10
# tool: python3 -c "import pandas as pd; pd.read_csv('customers.csv').nlargest(10, 'ltv')"
# data_mb: 35
import csv

with open("/tmp/customers.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["id", "name", "city", "ltv", "signup"])
    w.writerows((i, "name%d" % i, "city%d" % (i % 900), (i * 7919) % 100000 / 100, "2023-%02d-01" % (i % 12 + 1))
                for i in range(600000))
with open("/tmp/customers.csv", newline="") as f:
    rows = list(csv.DictReader(f))
rows.sort(key=lambda r: float(r["ltv"]), reverse=True)
print([r["id"] for r in rows[:10]])
