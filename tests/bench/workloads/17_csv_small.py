#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# does: writes a 6 MB sales CSV to /tmp, sums revenue per region with the csv
#       module (pandas is not on the host: csv stands in for read_csv)
# task: total the sales per region in sales.csv with pandas
# tool: python3 -c "import pandas as pd; pd.read_csv('sales.csv').groupby('region').sum()"
# lang: python
import collections
import csv

with open("/tmp/sales.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["id", "region", "product", "qty", "price"])
    w.writerows((i, "r%d" % (i % 12), "p%d" % (i % 400), i % 9 + 1, (i * 37) % 1000 / 10)
                for i in range(250000))
tot = collections.Counter()
with open("/tmp/sales.csv", newline="") as f:
    for row in csv.DictReader(f):
        tot[row["region"]] += int(row["qty"]) * float(row["price"])
print(tot.most_common(3))
