#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# does: writes 40 MB of text files to /tmp and archives them with tar | gzip -6
# task: archive the reports folder into a compressed tarball for the auditors
# tool: tar czf reports.tgz reports/
set -eu
mkdir -p /tmp/reports && cd /tmp/reports
for i in $(seq 20); do
  awk -v f=$i 'BEGIN{for(k=0;k<50000;k++) printf "line %d of report %d: total %d\n", k, f, k*f%977}' > r$i.txt
done
cd /tmp && tar cf - reports | gzip -6 > reports.tgz
ls -l reports.tgz | awk '{print "tgz", $5}'
