#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite: install what is missing, build with the address and
# undefined-behaviour sanitizers, start the local stack, run every test
# (unit and integration) under the asan setup, then build with clang and
# libFuzzer and fuzz every decoder of untrusted bytes for a bounded time
# (the 'fuzz' suite of build-fuzz/, about a minute per harness), and last
# the benchmark suite in its smoke size (tests/bench/run --smoke, a few
# minutes), so that no benchmark rots; it counts as one test. Extra
# arguments go to the first `meson test` (e.g. --suite unit).
#
# SBX_SKIP_FUZZ=1 skips the fuzzing run and SBX_SKIP_BENCH=1 the
# benchmarks, and only that value does; they are for a quick local
# iteration, never for CI, which runs everything.
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
bench_log=$SBX_VAR/bench-smoke.json
rm -f "$bench_log"
if [ "${SBX_SKIP_BENCH:-}" = 1 ]; then
	say "SBX_SKIP_BENCH=1: not running the benchmarks"
elif SBX_BENCH_OUT=$SBX_VAR/bench-smoke "$SBX_ROOT/tests/bench/run" --smoke >"$SBX_VAR/bench-smoke.log" 2>&1; then
	say "bench smoke: every benchmark ran (tables in $SBX_VAR/bench-smoke/summary.md)"
	echo '{"name": "bench smoke", "result": "OK"}' >"$bench_log"
else
	rc=1
	tail -n 40 "$SBX_VAR/bench-smoke.log" >&2
	say "bench smoke FAILED (log: $SBX_VAR/bench-smoke.log)"
	echo '{"name": "bench smoke", "result": "FAIL"}' >"$bench_log"
fi
summary "$SBX_ROOT/build-asan/meson-logs/testlog-asan.json" "$SBX_ROOT/build-fuzz/meson-logs/testlog.json" "$bench_log"
exit $rc
