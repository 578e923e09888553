#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# does: writes a 28 MB event CSV and sorts all of it in memory (~350 MB peak)
# task: sort the 500 MB events.csv by timestamp with pandas and write the result
# tool: python3 -c "import pandas as pd; pd.read_csv('events.csv').sort_values('ts')"
# data_mb: 500
with open("/tmp/events.csv", "w") as f:
    f.write("".join("%d,user%d,click,%d\n" % ((i * 7919) % 1000003, i % 10000, i)
                    for i in range(700000)))
with open("/tmp/events.csv") as f:
    rows = [line.split(",") for line in f]
rows.sort(key=lambda r: int(r[0]))
with open("/tmp/sorted.csv", "w") as f:
    f.writelines(",".join(r) for r in rows)
print("rows", len(rows))
