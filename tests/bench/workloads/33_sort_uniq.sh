#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# does: generates 1.2M access-log lines with awk, sort | uniq -c | sort -n (sort
#       buffers in memory: ~100 MB)
# task: count the unique visitor addresses in the access log and list the busiest ones
# tool: cut -d' ' -f1 access.log | sort | uniq -c | sort -rn | head
set -eu
awk 'BEGIN{for(i=0;i<1200000;i++) printf "10.%d.%d.%d GET /x\n", i%7, (i*13)%251, (i*31)%199}' |
  cut -d' ' -f1 | sort -S 100M | uniq -c | sort -rn | head -3
