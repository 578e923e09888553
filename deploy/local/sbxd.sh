#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# sbxd on the local stack, in the background: sbxd.sh start | stop | status
# It runs every control-plane stage, the projector (the log into the
# PostgreSQL of SBX_PG) and an executor (node id "local") whose sandboxes
# are real runc containers with sbx-agent as PID 1.
# The node keeps the warm pools of deploy/pools/local.conf (SBX_POOLS
# names another file; SBX_POOLS= with nothing turns them off).
# SBX_STAGES overrides the stage list (e.g. ...,hollow for a node that
# binds without containers).
set -euo pipefail
SBX_SCRIPT=sbxd
source "$(dirname "$0")/env.sh"

PIDFILE=$SBX_VAR/sbxd.pid
LOG=$SBX_VAR/sbxd.log
STAGES=${SBX_STAGES:-intake,planner,guard,scheduler,keeper,executor,projector}
export SBX_POOLS=${SBX_POOLS-$SBX_ROOT/deploy/pools/local.conf}

running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

case "${1:-}" in
start)
	if running; then
		say "already running (pid $(cat "$PIDFILE"))"
		exit 0
	fi
	[ -x "$SBX_BUILD/src/sbxd" ] || die "no sbxd in $SBX_BUILD: run deploy/local/build.sh"
	mkdir -p "$SBX_VAR"
	: >"$LOG"
	nohup "$SBX_BUILD/src/sbxd" --stage "$STAGES" --node-id local >"$LOG" 2>&1 &
	echo $! >"$PIDFILE"
	for _ in $(seq 1 120); do
		grep -q 'sbxd ready' "$LOG" && { say "$(grep 'sbxd ready' "$LOG")"; exit 0; }
		running || { tail -n 20 "$LOG" >&2; die "sbxd exited during start-up (log: $LOG)"; }
		sleep 0.5
	done
	die "sbxd not ready within 60 s (log: $LOG)"
	;;
stop)
	if running; then
		kill -TERM "$(cat "$PIDFILE")"
		for _ in $(seq 1 40); do running || break; sleep 0.25; done
		running && kill -KILL "$(cat "$PIDFILE")"
		say "stopped"
	else
		say "not running"
	fi
	rm -f "$PIDFILE"
	;;
status)
	if running; then say "running (pid $(cat "$PIDFILE"))"; else say "not running"; exit 1; fi
	;;
*) die "usage: $0 start|stop|status" ;;
esac
