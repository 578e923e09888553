#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# does: generates one C file of 800 functions with switch tables, gcc -O2
# task: build the generated protocol decoder with make
# tool: make decoder
# plan: run the code generator
# plan: compile decoder.c with gcc -O2
# needs: /usr/bin/gcc
set -eu
cd /tmp
{ echo '#include <stdio.h>'
  for i in $(seq 800); do
    echo "int d$i(int op,int v){switch(op){case 0:return v+$i;case 1:return v*$i;case 2:return v^$i;case 3:return (v<<3)-$i;default:return v%($i+1);}}"
  done
  echo 'int main(void){int v=1;'; for i in $(seq 800); do echo "v=d$i(v&7,v);"; done
  echo 'printf("%d\n",v);return 0;}'; } > decoder.c
printf 'decoder: decoder.c\n\tgcc -O2 -o $@ $<\n' > Makefile
make -s decoder
./decoder
