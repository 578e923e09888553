#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# does: generates 8 C files of 150 functions, make -j2 (two gcc at once), links
# task: run make -j2 to build the libraries and the test binary
# tool: make -j2 all
# needs: /usr/bin/gcc
set -eu
mkdir -p /tmp/proj && cd /tmp/proj
for m in $(seq 8); do
  for i in $(seq 150); do echo "double m${m}_$i(double x){double s=x;for(int k=0;k<$i;k++)s=s*0.999+k/(x+$m.0);return s;}"; done > m$m.c
done
{ echo 'double m1_1(double);int main(void){return m1_1(2.0)<0;}'; } > main.c
printf 'OBJ=%s\nall: app\napp: $(OBJ) main.o\n\tgcc -o $@ $^\n%%.o: %%.c\n\tgcc -O2 -c $<\n' "$(echo m{1..8}.o)" > Makefile
make -s -j2 all
./app && echo built
