#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Private PostgreSQL 15 cluster for the local stack: its own data directory
# (var/pg/data), its own port, owned by the postgres user (initdb refuses
# root). Creates role and database "sbx" once.
#   pg.sh start | stop | status
set -euo pipefail
SBX_SCRIPT=pg
source "$(dirname "$0")/env.sh"

as_pg() { runuser -u postgres -- "$@"; }

# postgres resolves the data directory itself: hand it the real path.
[ -L "$PG_DATA" ] && PG_DATA=$(readlink -f "$PG_DATA")

running() { [ -f "$PG_DATA/postmaster.pid" ] && as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; }

init_once() {
	[ -f "$PG_DATA/PG_VERSION" ] && return 0
	[ -x "$PG_BIN/initdb" ] || die "PostgreSQL 15 is not installed: run deploy/local/install.sh"
	id postgres >/dev/null 2>&1 || die "no postgres user: run deploy/local/install.sh"
	mkdir -p "$SBX_VAR/pg"
	chown postgres: "$SBX_VAR/pg"
	if ! as_pg test -x "$SBX_VAR/pg"; then
		# The checkout sits below a directory the postgres user cannot
		# traverse (e.g. /root): keep the cluster in postgres's home and
		# link it into var/ so every script still finds it there.
		local real
		real=/var/lib/postgresql/sbx-$(echo "$SBX_ROOT" | sha256sum | cut -c1-12)
		say "postgres cannot reach $SBX_VAR/pg; keeping the cluster in $real (linked as $PG_DATA)"
		mkdir -p "$real"
		chown postgres: "$real"
		ln -sfn "$real" "$PG_DATA"
		PG_DATA=$real
	fi
	say "initialising a private cluster in $PG_DATA"
	as_pg "$PG_BIN/initdb" -D "$PG_DATA" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$SBX_VAR/pg/initdb.log" 2>&1 ||
		die "initdb failed, see $SBX_VAR/pg/initdb.log"
}

start() {
	init_once
	if running; then
		say "already running on 127.0.0.1:$PG_PORT"
	else
		port_busy "$PG_PORT" && die "port $PG_PORT is already in use: stop what listens there or set SBX_PG_PORT"
		as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_DATA/server.log" -w -t 60 \
			-o "-p $PG_PORT -k /tmp -c listen_addresses=127.0.0.1 -c fsync=on -c max_connections=200" \
			start >/dev/null || die "PostgreSQL did not start, see $PG_DATA/server.log"
	fi
	for _ in $(seq 1 60); do
		as_pg "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" && break
		sleep 0.5
	done
	as_pg "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" || die "PostgreSQL does not answer on 127.0.0.1:$PG_PORT"
	local psql=(as_pg psql -X -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1)
	if [ "$("${psql[@]}" -tAc "select 1 from pg_roles where rolname='sbx'")" != 1 ]; then
		"${psql[@]}" -c "create role sbx login createdb"
	fi
	if [ "$("${psql[@]}" -tAc "select 1 from pg_database where datname='sbx'")" != 1 ]; then
		"${psql[@]}" -c "create database sbx owner sbx"
	fi
	say "ready on 127.0.0.1:$PG_PORT (database sbx, data in $PG_DATA)"
}

stop() {
	if ! running; then
		say "not running"
		return 0
	fi
	as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w stop >/dev/null
	say "stopped"
}

status() {
	if running; then
		say "running on 127.0.0.1:$PG_PORT"
	else
		say "not running"
		return 1
	fi
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status) status ;;
*) die "usage: $0 start|stop|status" ;;
esac
