#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite: install what is missing, build with the address and
# undefined-behaviour sanitizers, start the local stack, run every test
# (unit and integration) under the asan setup, then build with clang and
# libFuzzer and fuzz every decoder of untrusted bytes for a bounded time
# (the 'fuzz' suite of build-fuzz/, about a minute per harness). Extra
# arguments go to the first `meson test` (e.g. --suite unit).
#
# SBX_SKIP_FUZZ=1 skips the fuzzing run, and only that value does; it is
# for a quick local iteration, never for CI, which runs everything.
set -euo pipefail
SBX_SCRIPT=test
dir=$(cd "$(dirname "$0")" && pwd)
source "$dir/env.sh"

"$dir/install.sh"
"$dir/build.sh" asan
"$dir/stack.sh" start
meson test -C "$SBX_ROOT/build-asan" --setup=asan --print-errorlogs "$@"

if [ "${SBX_SKIP_FUZZ:-}" = 1 ]; then
	say "SBX_SKIP_FUZZ=1: not fuzzing"
	exit 0
fi
"$dir/build.sh" fuzz
meson test -C "$SBX_ROOT/build-fuzz" --suite fuzz --print-errorlogs
