#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# does: searches the host's /usr/share/doc and /usr/include trees (read-only
#       template) for licence and TODO markers: I/O and page cache, little CPU
# task: find every file that mentions a licence or a TODO in the vendored sources
# tool: grep -rlI -e TODO -e License vendor/ | wc -l
set -u
grep -rlI -e TODO -e License /usr/share/doc /usr/include 2>/dev/null | wc -l
find /usr/include -name '*.h' | xargs cat 2>/dev/null | wc -c
