#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fills the tenants' dependency caches: for each deploy/deps/<tenant>.txt
# (pinned pip requirements), downloads the wheels once, on the host, into
# $SBX_VAR/deps/<tenant>/pip. The executor mounts a tenant's cache
# read-only at /deps in that tenant's sandboxes; nothing else of the host
# is reachable from them. Idempotent: a cache whose list did not change is
# left alone.
set -euo pipefail
SBX_SCRIPT=deps
source "$(dirname "$0")/env.sh"

pip=$SBX_VAR/venv/bin/pip
[ -x "$pip" ] || die "no Python venv at $SBX_VAR/venv: run deploy/local/install.sh"
for list in "$SBX_ROOT"/deploy/deps/*.txt; do
	[ -e "$list" ] || continue
	tenant=$(basename "$list" .txt)
	dest=$SBX_VAR/deps/$tenant/pip
	stamp=$(sha256sum "$list" | cut -c1-16)
	[ "$(cat "$dest/.stamp" 2>/dev/null)" = "$stamp" ] && continue
	say "fetching the wheels of tenant $tenant's dependency cache"
	rm -rf "$dest.tmp"
	mkdir -p "$dest.tmp"
	"$pip" download -q --disable-pip-version-check --no-deps \
		--only-binary=:all: -d "$dest.tmp" -r "$list" ||
		die "pip could not download the wheels of $list"
	echo "$stamp" >"$dest.tmp/.stamp"
	chmod -R a+rX "$dest.tmp"
	rm -rf "$dest"
	mv "$dest.tmp" "$dest"
done
