#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# does: compiles 40 small generated C files one by one at -O0 and links them
# task: compile the plugins in debug mode and link the host program
# tool: gcc -O0 -g -c plugins/*.c && gcc -o host *.o
# lang: c
# needs: /usr/bin/gcc
set -eu
mkdir -p /tmp/plug && cd /tmp/plug
for p in $(seq 40); do
  { echo "#include <string.h>"; for i in $(seq 30); do echo "int p${p}_$i(const char*s){return (int)strlen(s)*$i+$p;}"; done; } > p$p.c
  gcc -O0 -g -c p$p.c
done
echo 'int p1_1(const char*);int main(void){return p1_1("x")!=2;}' > host.c
gcc -o host host.c p*.o
./host && echo linked
