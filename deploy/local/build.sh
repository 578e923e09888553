#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures (once) and builds sbx. build.sh [release|asan]
#   release -> build/      (what run.sh uses)
#   asan    -> build-asan/ (address + undefined sanitizers; what test.sh uses)
set -euo pipefail
SBX_SCRIPT=build
source "$(dirname "$0")/env.sh"

kind=${1:-release}
case "$kind" in
release) dir=$SBX_ROOT/build; opts=() ;;
asan) dir=$SBX_ROOT/build-asan; opts=(-Db_sanitize=address,undefined -Db_lundef=false) ;;
*) die "usage: $0 [release|asan]" ;;
esac
if [ ! -f "$dir/build.ninja" ]; then
	meson setup "$dir" "$SBX_ROOT" "${opts[@]}" >/dev/null || die "meson setup failed in $dir"
fi
ninja -C "$dir" >"$dir/ninja.log" 2>&1 || {
	tail -n 40 "$dir/ninja.log" >&2
	die "build failed (full log: $dir/ninja.log)"
}
say "built $kind in $dir"
