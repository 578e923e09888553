#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite: install what is missing, build with the address and
# undefined-behaviour sanitizers, start the local stack, run every test
# (unit and integration) under the asan setup. Extra arguments go to
# `meson test` (e.g. --suite unit).
set -euo pipefail
SBX_SCRIPT=test
dir=$(cd "$(dirname "$0")" && pwd)
source "$dir/env.sh"

"$dir/install.sh"
"$dir/build.sh" asan
"$dir/stack.sh" start
meson test -C "$SBX_ROOT/build-asan" --setup=asan --print-errorlogs "$@"
