#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job on the local stack: install what is missing, build, start
# Kafka and PostgreSQL, start sbxd (the control plane, an executor with
# real runc sandboxes and the projector), then play the design origin's
# three-turn conversation through the sbx command (scenario.sh) and show
# what the audit projections say of it.
set -euo pipefail
SBX_SCRIPT=run
dir=$(cd "$(dirname "$0")" && pwd)
source "$dir/env.sh"

"$dir/install.sh"
"$dir/build.sh" release
"$dir/stack.sh" start
"$dir/sbxd.sh" start

# The design origin's three-turn conversation, end to end.
SBX_SCRIPT=demo "$dir/scenario.sh"

say "sbxd keeps running (log: $SBX_VAR/sbxd.log, metrics: http://127.0.0.1:9464/metrics);"
say "query the audit views with: psql \"$SBX_PG\" -c 'SELECT * FROM audit_sandbox_installs'"
say "stop everything with deploy/local/stack.sh stop"
