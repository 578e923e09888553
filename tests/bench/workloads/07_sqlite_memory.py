#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# does: loads 400k rows into an in-memory SQLite database, indexes and groups them
# task: use sqlite3 from python to answer which stores sold most last month
# tool: python3 -c "import sqlite3"
# tool: python3 report.py
import sqlite3

db = sqlite3.connect(":memory:")
db.execute("create table sales(store int, day int, amount real, note text)")
db.executemany("insert into sales values (?,?,?,?)",
               ((i % 317, i % 31, (i * 7919) % 1000 / 10, "n%d" % i) for i in range(400000)))
db.execute("create index s on sales(store, day)")
top = db.execute("select store, sum(amount) t from sales group by store order by t desc limit 3").fetchall()
print("top", top)
