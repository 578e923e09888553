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

# One closing line over both runs: "N passed, N failed".
summary() {
	python3 - "$@" <<'PY'
import json, sys
ok = bad = 0
for path in sys.argv[1:]:
    try:
        for line in open(path):
            r = json.loads(line).get("result")
            if r in ("OK", "EXPECTEDFAIL"):
                ok += 1
            elif r != "SKIP":
                bad += 1
    except FileNotFoundError:
        pass
print(f"{ok} passed, {bad} failed")
PY
}

"$dir/install.sh"
"$dir/build.sh" asan
"$dir/stack.sh" start
rm -f "$SBX_ROOT/build-asan/meson-logs/testlog-asan.json" "$SBX_ROOT/build-fuzz/meson-logs/testlog.json"
rc=0
meson test -C "$SBX_ROOT/build-asan" --setup=asan --print-errorlogs "$@" || rc=$?

if [ "${SBX_SKIP_FUZZ:-}" = 1 ]; then
	say "SBX_SKIP_FUZZ=1: not fuzzing"
else
	"$dir/build.sh" fuzz
	meson test -C "$SBX_ROOT/build-fuzz" --suite fuzz --print-errorlogs || rc=$?
fi
summary "$SBX_ROOT/build-asan/meson-logs/testlog-asan.json" "$SBX_ROOT/build-fuzz/meson-logs/testlog.json"
exit $rc
