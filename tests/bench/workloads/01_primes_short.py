#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# does: counts primes below 150k by trial division (CPU-bound, ~0.3 s)
# task: write a python script that counts the primes below 150000
# tool: python3 primes.py
count = sum(1 for k in range(2, 150000) if all(k % d for d in range(2, int(k**0.5) + 1)))
print("primes", count)
