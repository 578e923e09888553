#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# does: aggregates 1.5M generated ledger rows per account in one awk pass
#       (an associative array of 100k keys)
# task: total the ledger per account and flag accounts over their limit
# tool: awk -F, '{s[$1]+=$2} END{for(a in s) print a, s[a]}' ledger.txt
set -eu
awk 'BEGIN{for(i=0;i<1500000;i++) print "acct" (i*7919)%100000 "," (i%500)-200}' |
  awk -F, '{s[$1]+=$2} END{n=0; for(a in s) if (s[a] > 1500) n++; print "over", n}'
