#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# does: grows a dict of 2M small tuples (~450 MB of Python objects), then frees it
# task: count the word pairs of the corpus in a python dict
# tool: python3 bigrams.py corpus.txt
pairs = {}
for i in range(2000000):
    pairs[(i % 50021, i % 60013)] = i
print("pairs", len(pairs))
