#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The design origin's three-turn conversation, driven through the sbx
# command the way an agent platform would, against a running stack:
#
#   turn 1 "read the Excel file and total the sales": python-small, a
#          sandbox from the warm pool; pip installs pandas and openpyxl
#          inside it from the tenant's dependency cache (it has no
#          network), and the agent's code totals the spreadsheet.
#   turn 2 "draw a bar chart of that data", same session: the reuse check
#          accepts the same sandbox (its score and reason are in the log);
#          matplotlib is added and the chart drawn.
#   turn 3 "start Playwright and check a web page": browser-medium; reuse
#          is refused (runtime_capability_mismatch) and a different
#          sandbox runs Playwright against the page turn 2 made.
#
# Then `sbx audit` answers who created each sandbox and why, how it was
# sized, who reused it and what it installed, from PostgreSQL.
# Every step is checked: a turn that goes otherwise stops the script
# with a non-zero status.
#
# Environment: SBX_CLI (the sbx binary; default $SBX_BUILD/src/sbx),
# SBX_TENANT (default acme, whose cache deploy/deps/acme.txt fills),
# SBX_SESSION (default a new one).
set -euo pipefail
SBX_SCRIPT=${SBX_SCRIPT:-scenario}
dir=$(cd "$(dirname "$0")" && pwd)
source "$dir/env.sh"
demo=$SBX_ROOT/deploy/demo

sbx=${SBX_CLI:-$SBX_BUILD/src/sbx}
export SBX_TENANT=${SBX_TENANT:-acme}
session=${SBX_SESSION:-demo-$(date +%H%M%S)-$$}
[ -x "$sbx" ] || die "no sbx at $sbx: build first (deploy/local/build.sh)"

field() { python3 -c 'import json,sys; print(json.load(sys.stdin).get(sys.argv[1]) or "")' "$1"; }
# event CLAIM TYPE: the payload of the claim's accepted TYPE event, as
# "score S: reason" (or just the reason).
event() {
	"$sbx" --json events "$1" | python3 -c 'import json,sys
for line in sys.stdin:
    e = json.loads(line)
    if e["type"] == sys.argv[1] and e["verdict"] == "accepted":
        p = next(iter(e["payload"].values()))
        print(("score %.2f: " % p["score"] if p.get("score") is not None else "") + p["reason"])' "$2"
}
turn() { printf '\n[%s] ── turn %s: "%s"\n' "$SBX_SCRIPT" "$1" "$2"; }

# acquire TASK ARGS...: claims a sandbox for the session (its phases are
# shown as they pass); sets claim, sandbox and lease.
acquire() {
	local task=$1 out
	shift
	out=$("$sbx" --json acquire --session "$session" --network-profile none \
		--task "$task" "$@" --wait) || die "acquire failed for '$task'"
	claim=$(field claim_id <<<"$out")
	sandbox=$(field sandbox_id <<<"$out")
	lease=$(field lease_version <<<"$out")
	say "bound: sandbox $sandbox, lease $lease (claim $claim)"
}

# run ARGS...: a command in the sandbox under the lease, output shown.
run() {
	"$sbx" exec "$sandbox" --lease "$lease" --session "$session" \
		--timeout-ms 300000 "$@" 2>&1 | sed 's/^/    /'
	return "${PIPESTATUS[0]}"
}

release() {
	"$sbx" release "$sandbox" --lease "$lease" --claim "$claim" >/dev/null
	say "released $sandbox"
}

say "tenant $SBX_TENANT, session $session"

turn 1 "read the Excel file and total the sales"
acquire "read the Excel file and total the sales" --package pandas --package openpyxl
first=$sandbox
plan=$("$sbx" --json show "$claim")
[ "$(field resource_class <<<"$plan")" = python-small ] ||
	die "turn 1 should be python-small, got $(field resource_class <<<"$plan")"
say "the user's spreadsheet goes into the session's workspace"
python3 "$demo/sales_xlsx.py" >"${TMPDIR:-/tmp}/sbx-sales.$$.xlsx"
run --stdin "${TMPDIR:-/tmp}/sbx-sales.$$.xlsx" -- sh -c 'cat > sales.xlsx'
rm -f "${TMPDIR:-/tmp}/sbx-sales.$$.xlsx"
say "\$ pip install pandas openpyxl   (offline: from the tenant's cache at /deps)"
run -- pip install pandas openpyxl | grep -E '^    (Looking in links|Successfully)' || die "pip install failed"
say "\$ python3 total_sales.py"
out=$(run --stdin "$demo/total_sales.py" -- python3 -) || die "turn 1's code failed: $out"
echo "$out"
grep -q 'total sales: 48230.50' <<<"$out" || die "turn 1 did not total 48230.50"
release

turn 2 "draw a bar chart of that data"
acquire "draw a bar chart of that data" --package pandas --package matplotlib
[ "$sandbox" = "$first" ] || die "turn 2 should reuse $first, got $sandbox"
say "reused $sandbox, $(event "$claim" ReuseChosen)"
say "\$ pip install matplotlib   (pandas is already there)"
run -- pip install matplotlib | grep -E '^    Successfully' || die "pip install matplotlib failed"
say "\$ python3 bar_chart.py"
run --stdin "$demo/bar_chart.py" -- python3 - || die "turn 2's code failed"
release

turn 3 "start Playwright and check a web page"
acquire "start Playwright and check a web page"
[ "$sandbox" != "$first" ] || die "turn 3 must not reuse the python sandbox $first"
why=$(event "$claim" Placed)
grep -q 'reuse=false.*runtime_capability_mismatch' <<<"$why" ||
	die "turn 3's placement does not say why reuse was refused: $why"
say "reuse refused: ${why#*; }"
say "\$ pip install playwright"
run -- pip install playwright | grep -E '^    Successfully' || die "pip install playwright failed"
say "\$ python3 check_page.py"
run --stdin "$demo/check_page.py" -- python3 - || die "turn 3's check failed"
release
third=$sandbox

printf '\n[%s] ── the audit trail, from PostgreSQL\n' "$SBX_SCRIPT"
# The projector follows the log; wait until it has turn 3's release.
for _ in $(seq 1 60); do
	"$sbx" audit "$third" 2>/dev/null | grep -q 'released by client' && break
	sleep 0.5
done
for sb in "$first" "$third"; do
	say "sbx audit $sb"
	"$sbx" audit "$sb" | sed 's/^/    /'
done
say "the three turns ran as the design says: one python sandbox reused, one browser sandbox apart"
