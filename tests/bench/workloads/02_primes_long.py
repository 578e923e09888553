#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# does: counts primes below 700k by trial division (CPU-bound, ~2 s)
# task: find how many primes there are below 700000, in python
# tool: python3 primes.py 700000
count = sum(1 for k in range(2, 700000)
            if all(k % d for d in range(2, int(k**0.5) + 1)))
print("primes", count)
