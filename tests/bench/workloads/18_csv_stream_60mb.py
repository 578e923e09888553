#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# does: writes a 50 MB sensor CSV to /tmp and streams it for per-sensor min/max
#       (csv module; pandas is not on the host)
# task: find each sensor's min and max reading in the 60 MB readings.csv with pandas
# tool: python3 -c "import pandas as pd; df = pd.read_csv('readings.csv')"
# data_mb: 60
with open("/tmp/readings.csv", "w") as f:
    f.write("ts,sensor,value\n")
    for k in range(60):
        f.write("".join("%d,s%d,%.2f\n" % (k * 50000 + i, i % 64, (i * k) % 997 / 7)
                        for i in range(50000)))
lo, hi = {}, {}
with open("/tmp/readings.csv") as f:
    next(f)
    for line in f:
        _, s, v = line.split(",")
        v = float(v)
        if v < lo.get(s, 1e9): lo[s] = v
        if v > hi.get(s, -1e9): hi[s] = v
print("sensors", len(lo), "span", max(hi.values()) - min(lo.values()))
