# SPDX-License-Identifier: Apache-2.0
# Shared settings of the local stack, sourced by the other scripts.
# Everything the stack writes lives under $SBX_VAR (default: <repo>/var).

SBX_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SBX_VAR=${SBX_VAR:-$SBX_ROOT/var}
SBX_BUILD=${SBX_BUILD:-$SBX_ROOT/build}

KAFKA_VERSION=4.4.0
KAFKA_HOME=$SBX_VAR/kafka
KAFKA_PORT=${SBX_KAFKA_PORT:-19092}
KAFKA_CONTROLLER_PORT=${SBX_KAFKA_CONTROLLER_PORT:-19093}
SBX_BROKERS=${SBX_BROKERS:-127.0.0.1:$KAFKA_PORT}

PG_PORT=${SBX_PG_PORT:-15432}
PG_DATA=$SBX_VAR/pg/data
PG_BIN=/usr/lib/postgresql/15/bin
SBX_PG=${SBX_PG:-host=127.0.0.1 port=$PG_PORT dbname=sbx user=sbx}

export SBX_ROOT SBX_VAR SBX_BUILD SBX_BROKERS SBX_PG

say() { printf '[%s] %s\n' "${SBX_SCRIPT:-sbx}" "$*"; }
die() { printf '[%s] error: %s\n' "${SBX_SCRIPT:-sbx}" "$*" >&2; exit 1; }

# port_busy PORT: true if something listens on 127.0.0.1:PORT.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
