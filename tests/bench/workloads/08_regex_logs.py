#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# does: generates 300k access-log lines and parses them with a regex
# task: parse the web server access log with a python regex and count status codes
# tool: python3 parse_log.py access.log
import collections
import re

rx = re.compile(r'^(\S+) - - \[(\d+)/\w+/\d+\] "(\w+) (\S+) HTTP/1.1" (\d{3}) (\d+)$')
lines = ('10.0.%d.%d - - [%02d/Mar/2024] "GET /p/%d HTTP/1.1" %d %d'
         % (i % 250, i % 97, i % 28 + 1, i % 5000, (200, 404, 500, 301)[i % 4], i % 9000)
         for i in range(300000))
codes = collections.Counter(m.group(5) for m in map(rx.match, lines) if m)
print(sorted(codes.items()))
