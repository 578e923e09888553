#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs everything sbx needs on a fresh Debian 12 machine: build tools and
# -dev packages, PostgreSQL 15, runc/runsc, Java 17, the Kafka broker jars
# (into var/kafka/libs), Chromium for the browser tier's sandboxes
# (Playwright drives it there: they have no network to fetch a browser),
# a Python venv for the interop tests and the
# tenants' dependency caches (deploy/local/deps.sh).
# Idempotent: a second run checks, finds nothing to do, and says so.
set -euo pipefail
SBX_SCRIPT=install
source "$(dirname "$0")/env.sh"

APT_PACKAGES=(
	build-essential pkg-config meson ninja-build git
	librdkafka-dev libavro-dev libjansson-dev libcurl4-openssl-dev
	libcmocka-dev libpq-dev libseccomp-dev uuid-dev libssl-dev
	clang libclang-rt-14-dev clang-format valgrind
	postgresql-15 postgresql-client-15
	runc runsc bubblewrap debootstrap
	chromium
	openjdk-17-jre-headless maven
	python3 python3-venv
	ca-certificates procps iproute2
)

did=0

missing=()
for p in "${APT_PACKAGES[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
if ((${#missing[@]})); then
	say "installing ${#missing[@]} Debian packages: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# The Debian PostgreSQL package would start its own cluster on 5432;
	# sbx runs a private one, so keep the package from starting services.
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod +x /usr/sbin/policy-rc.d
	trap 'rm -f /usr/sbin/policy-rc.d' EXIT
	apt-get update -qq || die "apt-get update failed: check the network and /etc/apt/sources.list"
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
		die "apt-get install failed for: ${missing[*]}"
	did=1
fi

command -v java >/dev/null || die "java not found after install: install openjdk-17-jre-headless"
jv=$(java -XX:+IgnoreUnrecognizedVMOptions -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1)
if [ "${jv:-0}" -lt 17 ]; then
	die "java $jv is too old for Kafka $KAFKA_VERSION: put Java 17 or newer first on PATH"
fi

# Kafka broker jars, resolved through Maven into a project-local directory.
POM=$SBX_ROOT/deploy/local/kafka-pom.xml
stamp="$KAFKA_VERSION $(sha256sum "$POM" | cut -c1-16)"
if [ "$(cat "$KAFKA_HOME/libs/.stamp" 2>/dev/null)" != "$stamp" ]; then
	say "fetching Apache Kafka $KAFKA_VERSION broker jars through Maven"
	rm -rf "$KAFKA_HOME/libs"
	mkdir -p "$KAFKA_HOME/libs"
	mvn -q -B -Dstyle.color=never -f "$POM" dependency:copy-dependencies \
		-DincludeScope=runtime -DoutputDirectory="$KAFKA_HOME/libs" ||
		die "could not fetch the Kafka jars through Maven (org.apache.kafka:kafka_2.13:$KAFKA_VERSION); check that Maven can reach its repository"
	ls "$KAFKA_HOME/libs"/kafka_2.13-*.jar >/dev/null 2>&1 || die "Maven ran but no kafka_2.13 jar arrived"
	echo "$stamp" >"$KAFKA_HOME/libs/.stamp"
	did=1
fi

# Python venv for interop tests and the Python client example.
PY_REQ=$SBX_ROOT/deploy/local/requirements.txt
pystamp=$(sha256sum "$PY_REQ" | cut -c1-16)
if [ "$(cat "$SBX_VAR/venv/.stamp" 2>/dev/null)" != "$pystamp" ]; then
	say "creating the Python venv for interop tests"
	rm -rf "$SBX_VAR/venv"
	/usr/bin/python3 -m venv "$SBX_VAR/venv" || die "python3 -m venv failed: install python3-venv"
	"$SBX_VAR/venv/bin/pip" install -q -r "$PY_REQ" || die "pip could not install $PY_REQ"
	echo "$pystamp" >"$SBX_VAR/venv/.stamp"
	did=1
fi

# Tenants' dependency caches (wheels), fetched once on the host.
deps_before=$(cat "$SBX_VAR"/deps/*/pip/.stamp 2>/dev/null || true)
"$SBX_ROOT/deploy/local/deps.sh"
[ "$deps_before" = "$(cat "$SBX_VAR"/deps/*/pip/.stamp 2>/dev/null || true)" ] || did=1

if [ "$did" = 0 ]; then
	say "everything is already installed; nothing to do"
else
	say "done"
fi
