#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job on the local stack: install what is missing, build, start
# Kafka and PostgreSQL, start sbxd (the control plane and an executor with
# real runc sandboxes), then ask for a sandbox the way a client does, run
# python in it, and show the chain of events that served it.
set -euo pipefail
SBX_SCRIPT=run
dir=$(cd "$(dirname "$0")" && pwd)
source "$dir/env.sh"

"$dir/install.sh"
"$dir/build.sh" release
"$dir/stack.sh" start
"$dir/sbxd.sh" start

sbx=$SBX_BUILD/src/sbx
say "asking for a sandbox: 'read the Excel file and total the sales'"
out=$("$sbx" --json acquire --tenant acme --session demo-session \
	--task "read the Excel file and total the sales" \
	--plan "pip install pandas openpyxl" --plan "python3 total.py sales.xlsx" \
	--package pandas --package openpyxl --wait)
claim=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["claim_id"])' <<<"$out")
sandbox=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["sandbox_id"])' <<<"$out")
lease=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["lease_version"])' <<<"$out")
say "bound: $out"
say "running python3 -c 'print(1+1)' in $sandbox under lease $lease:"
"$sbx" exec "$sandbox" --lease "$lease" --tenant acme --session demo-session -- python3 -c 'print(1+1)'
say "the claim's chain, as every reader folds it:"
"$sbx" events "$claim"
say "sbxd keeps running (log: $SBX_VAR/sbxd.log, metrics: http://127.0.0.1:9464/metrics);"
say "stop everything with deploy/local/stack.sh stop"
