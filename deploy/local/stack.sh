#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole local stack (Kafka + PostgreSQL; stop also stops sbxd):
#   stack.sh start | stop | status
set -euo pipefail
dir=$(dirname "$0")
case "${1:-}" in
start) "$dir/kafka.sh" start && "$dir/pg.sh" start ;;
stop) "$dir/sbxd.sh" stop; "$dir/kafka.sh" stop; "$dir/pg.sh" stop ;;
status) rc=0; "$dir/kafka.sh" status || rc=1; "$dir/pg.sh" status || rc=1; exit $rc ;;
*) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
