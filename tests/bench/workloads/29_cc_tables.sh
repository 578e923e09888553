#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# does: compiles a generated 120k-entry initialised struct table (gcc memory-heavy)
# task: rebuild the unicode tables with gcc after regenerating them
# tool: ./gen_tables > tables.c
# tool: gcc -O1 -c tables.c
# needs: /usr/bin/gcc
set -eu
cd /tmp
{ echo 'struct e{int cp;const char*n;short w;};const struct e T[]={'
  seq 120000 | awk '{printf "{%d,\"N%x\",%d},\n",$1,$1*7,$1%3}'
  echo '};int tsize(void){return sizeof T/sizeof T[0];}'; } > tables.c
gcc -O1 -c tables.c
ls -l tables.o | awk '{print "object", $5}'
