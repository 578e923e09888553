#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures (once) and builds sbx. build.sh [release|asan|fuzz]
#   release -> build/      (what run.sh uses)
#   asan    -> build-asan/ (address + undefined sanitizers; what test.sh uses)
#   fuzz    -> build-fuzz/ (clang, sanitizers and the libFuzzer harnesses of
#                           tests/fuzz/; test.sh runs its 'fuzz' suite)
set -euo pipefail
SBX_SCRIPT=build
source "$(dirname "$0")/env.sh"

kind=${1:-release}
case "$kind" in
release) dir=$SBX_ROOT/build; opts=() ;;
asan) dir=$SBX_ROOT/build-asan; opts=(-Db_sanitize=address,undefined -Db_lundef=false) ;;
# The fuzz build runs only the 'fuzz' suite: the cmocka suites are build-asan's.
fuzz) dir=$SBX_ROOT/build-fuzz; opts=(-Dfuzz=true -Dtests=disabled -Db_sanitize=address,undefined -Db_lundef=false) ;;
*) die "usage: $0 [release|asan|fuzz]" ;;
esac
if [ ! -f "$dir/build.ninja" ]; then
	# libFuzzer comes with clang, so the fuzz build is all clang.
	setup_env=()
	[ "$kind" = fuzz ] && setup_env=(CC=clang)
	env "${setup_env[@]}" meson setup "$dir" "$SBX_ROOT" "${opts[@]}" >/dev/null ||
		die "meson setup failed in $dir"
fi
ninja -C "$dir" >"$dir/ninja.log" 2>&1 || {
	tail -n 40 "$dir/ninja.log" >&2
	die "build failed (full log: $dir/ninja.log)"
}
say "built $kind in $dir"
