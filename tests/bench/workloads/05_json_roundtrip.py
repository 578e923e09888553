#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# does: builds 200k order records, JSON-encodes and decodes them (~150 MB)
# task: convert the orders export to JSON and validate it with python
# tool: python3 export_orders.py --format json
import json

orders = [{"id": i, "customer": "c%05d" % (i % 9973), "items": [i % 7, i % 11, i % 13],
           "total": round(i * 1.37 % 500, 2), "status": ("new", "paid", "sent")[i % 3]}
          for i in range(200000)]
text = json.dumps(orders)
back = json.loads(text)
print("bytes", len(text), "paid", sum(1 for o in back if o["status"] == "paid"))
