#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# does: writes a 150 MB transactions CSV to /tmp (tmpfs: 150 MB charged) and
#       scans it line by line for totals per account bucket
# task: summarise the 300 MB transactions.csv export with pandas (totals per account)
# tool: python3 -c "import pandas as pd; pd.read_csv('transactions.csv', chunksize=100000)"
# data_mb: 300
block = "".join("%d,acct%04d,%.2f,EUR,ok\n" % (i, i % 5000, (i * 13) % 10000 / 100)
                for i in range(100000)).encode()
with open("/tmp/tx.csv", "wb") as f:
    for _ in range(150 * 1024 * 1024 // len(block)):
        f.write(block)
tot, n = [0.0] * 16, 0
with open("/tmp/tx.csv", "rb") as f:
    for line in f:
        parts = line.split(b",", 3)
        tot[int(parts[1][4:]) % 16] += float(parts[2])
        n += 1
print("rows", n, "max %.0f" % max(tot))
