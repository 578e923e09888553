#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Single-node KRaft Kafka broker for the local stack.
#   kafka.sh start | stop | status
# Storage is formatted once under var/kafka/data; restarting keeps the data.
set -euo pipefail
SBX_SCRIPT=kafka
source "$(dirname "$0")/env.sh"

CONF=$KAFKA_HOME/server.properties
PIDFILE=$KAFKA_HOME/broker.pid
LOG=$KAFKA_HOME/logs/server.log

running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

classpath() {
	ls "$KAFKA_HOME/libs"/kafka_2.13-*.jar >/dev/null 2>&1 ||
		die "Kafka jars are missing in $KAFKA_HOME/libs: run deploy/local/install.sh"
	echo "$KAFKA_HOME/libs/*"
}

write_config() {
	mkdir -p "$KAFKA_HOME/data" "$KAFKA_HOME/logs"
	cat >"$CONF" <<CONF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$KAFKA_HOME/data
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=12
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
log.retention.check.interval.ms=60000
CONF
	cat >"$KAFKA_HOME/log4j2.properties" <<CONF
appender.file.type=File
appender.file.name=file
appender.file.fileName=$LOG
appender.file.layout.type=PatternLayout
appender.file.layout.pattern=[%d] %p %m (%c)%n
rootLogger.level=INFO
rootLogger.appenderRef.file.ref=file
logger.kafka.name=kafka
logger.kafka.level=INFO
logger.state.name=state.change.logger
logger.state.level=WARN
CONF
}

java_run() {
	java -Xms256m -Xmx1g -XX:+UseG1GC -Djava.awt.headless=true \
		-Dlog4j2.configurationFile="$KAFKA_HOME/log4j2.properties" \
		-cp "$(classpath)" "$@"
}

format_once() {
	[ -f "$KAFKA_HOME/data/meta.properties" ] && return 0
	local id
	id=$(java_run kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n1)
	[ -n "$id" ] || die "could not generate a cluster id (see $LOG)"
	say "formatting storage in $KAFKA_HOME/data (cluster $id)"
	java_run kafka.tools.StorageTool format -t "$id" -c "$CONF" >"$KAFKA_HOME/logs/format.log" 2>&1 ||
		die "formatting failed, see $KAFKA_HOME/logs/format.log"
}

start() {
	if running; then
		say "already running (pid $(cat "$PIDFILE")) on $SBX_BROKERS"
		return 0
	fi
	command -v java >/dev/null || die "java not found: run deploy/local/install.sh (needs Java 17)"
	for p in "$KAFKA_PORT" "$KAFKA_CONTROLLER_PORT"; do
		port_busy "$p" && die "port $p is already in use: stop what listens there or set SBX_KAFKA_PORT / SBX_KAFKA_CONTROLLER_PORT"
	done
	write_config
	format_once
	: >"$LOG"
	nohup bash -c 'exec "$@"' _ java -Xms256m -Xmx1g -XX:+UseG1GC -Djava.awt.headless=true \
		-Dlog4j2.configurationFile="$KAFKA_HOME/log4j2.properties" \
		-cp "$(classpath)" kafka.Kafka "$CONF" >"$KAFKA_HOME/logs/stdout.log" 2>&1 &
	echo $! >"$PIDFILE"
	local i
	for i in $(seq 1 120); do
		if ! running; then
			tail -n 30 "$KAFKA_HOME/logs/stdout.log" "$LOG" >&2 || true
			die "broker exited during start-up (logs above, full log in $LOG)"
		fi
		if grep -q 'Kafka Server started' "$LOG" 2>/dev/null && port_busy "$KAFKA_PORT"; then
			say "ready on $SBX_BROKERS (pid $(cat "$PIDFILE"), data in $KAFKA_HOME/data)"
			return 0
		fi
		sleep 0.5
	done
	die "broker did not answer within 60 s, see $LOG"
}

stop() {
	if ! running; then
		say "not running"
		rm -f "$PIDFILE"
		return 0
	fi
	local pid
	pid=$(cat "$PIDFILE")
	kill -TERM "$pid"
	for _ in $(seq 1 60); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	if kill -0 "$pid" 2>/dev/null; then
		say "broker did not stop in 30 s; killing it"
		kill -KILL "$pid" || true
	fi
	rm -f "$PIDFILE"
	say "stopped"
}

status() {
	if running && port_busy "$KAFKA_PORT"; then
		say "running (pid $(cat "$PIDFILE")) on $SBX_BROKERS"
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
