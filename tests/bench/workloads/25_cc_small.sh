#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# does: generates a C file of 300 small functions and builds it with gcc -O2
# task: compile the parser module and run its self test
# tool: gcc -O2 -o parser parser.c && ./parser --selftest
# lang: c
# needs: /usr/bin/gcc
set -eu
cd /tmp
{ for i in $(seq 300); do echo "int f$i(int x){int s=0;for(int k=0;k<x;k++)s+=k*$i^(s>>3);return s;}"; done
  echo 'int main(void){long t=0;'; for i in $(seq 300); do echo "t+=f$i(1000);"; done
  echo 'return t==42;}'; } > parser.c
gcc -O2 -o parser parser.c
./parser || echo "selftest ok"
