#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job on the local stack: install what is missing, build, start
# Kafka and PostgreSQL, then run sbxd (which converges topics and
# migrations and reports that it is ready).
set -euo pipefail
SBX_SCRIPT=run
dir=$(cd "$(dirname "$0")" && pwd)
source "$dir/env.sh"

"$dir/install.sh"
"$dir/build.sh" release
"$dir/stack.sh" start
"$SBX_BUILD/src/sbxd" --exit-when-ready "$@"
say "the stack keeps running; stop it with deploy/local/stack.sh stop"
