#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""summary.md of a bench-results directory: the machine and commit, each
benchmark's printed tables in the suite's order, and the ratios across
benchmarks of one run (claim -> bound through Kafka against a bare cold
`runc run` / `runsc run` of the same bundle). Prints to stdout."""
import json
import os
import subprocess
import sys

ORDER = [
    ("exec", "1. Exec round trip (runtime level)"),
    ("exec_kafka", "1. Exec round trip through Kafka"),
    ("cold", "2. Cold start, baselines"),
    ("claim_warm", "2. Claim -> bound, warm pool"),
    ("claim_cold", "2. Claim -> bound, cold"),
    ("burst", "3. Burst"),
    ("hollow_1", "4. Control-plane throughput, 1 replica per stage"),
    ("hollow_2", "4. Control-plane throughput, 2 replicas per stage"),
    ("projector", "5. Projector"),
    ("density", "6. Density"),
    ("planner_fit", "7. Planner fit"),
]


def tables(obj):
    """Every {"title", "rows"} table in a benchmark's JSON."""
    if isinstance(obj, dict):
        if "rows" in obj and "title" in obj:
            yield obj
        for v in obj.values():
            yield from tables(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from tables(v)


def load(out, name):
    try:
        with open(os.path.join(out, name + ".json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def p50(out, name, starts):
    for t in tables(load(out, name)):
        for r in t["rows"]:
            if r.get("name", "").startswith(starts) and r.get("count"):
                return r["p50_ms"]
    return None


def sh(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True,
                              check=False).stdout.strip()
    except OSError:
        return "?"


def main():
    out = sys.argv[1]
    mem = sh("sh", "-c", "grep MemTotal /proc/meminfo | tr -s ' '")
    print("# sbx benchmarks\n")
    print(f"- commit: {sh('git', '-C', out, 'rev-parse', '--short', 'HEAD')}")
    print(f"- date: {sh('date', '-u', '+%Y-%m-%d %H:%M UTC')}")
    print(f"- machine: {os.cpu_count()} CPUs, {mem}; load average at the "
          f"end: {sh('cut', '-d', ' ', '-f', '1-3', '/proc/loadavg')}")
    print("- every benchmark runs its baselines in the same run, "
          "interleaved where it can; ratios are of p50s\n")
    for name, title in ORDER:
        path = os.path.join(out, name + ".md")
        if not os.path.exists(path):
            continue
        print(f"## {title}\n")
        with open(path) as f:
            print(f.read().rstrip() + "\n")
    base = {
        "bare runc run": p50(out, "cold", "runc run -d -> agent"),
        "bare runsc run": p50(out, "cold", "runsc run -d -> agent"),
    }
    rows = [(lbl, p50(out, n, "claim")) for n, lbl in
            (("claim_warm", "claim -> bound, warm pool"),
             ("claim_cold", "claim -> bound, cold"))]
    if any(v for _, v in rows) and any(base.values()):
        print("## Claim -> bound against a bare cold start (p50)\n")
        print("| | p50 ms | " + " | ".join(f"vs {k}" for k in base) + " |")
        print("|---|---|" + "---|" * len(base))
        for lbl, v in rows:
            if v is None:
                continue
            cells = [f"{v / b:.2f}x" if b else "-" for b in base.values()]
            print(f"| {lbl} | {v:.1f} | " + " | ".join(cells) + " |")
        for k, b in base.items():
            if b:
                print(f"| {k} | {b:.1f} |" + " |" * len(base))
        print()


if __name__ == "__main__":
    main()
