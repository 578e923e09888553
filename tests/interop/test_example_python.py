#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Python client example (examples/python/acquire_exec.py) against the
local stack, as a user runs it: with a control plane and a real executor
node of this test's own (unique ids, so other runs on the broker do not
interfere), it acquires a sandbox, runs python3 -c 'print(1+1)' in it,
prints 2, releases it and exits 0. Then the sandbox is destroyed and the
node's state is removed. Needs root (real sandboxes).

usage: test_example_python.py PATH/TO/sbx PATH/TO/sbxd
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

from checks import check, summary

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "python", "acquire_exec.py")
VAR = os.environ.get("SBX_VAR", os.path.join(ROOT, "var"))
PYTHON = os.path.join(VAR, "venv", "bin", "python")
TENANT = "demo"
# A task only a browser class fits: no warm pool of another node serves it
# (see tests/integration/itest_exec.h).
TASK = "take a screenshot of the page in python"

SBX, SBXD = sys.argv[1], sys.argv[2]
RUN = f"pyex-{os.getpid()}-{int(time.time()) % 100000}"
NODE = f"itest-{RUN}"
SESSION = f"s-{RUN}"


def sbx(*args):
    return subprocess.run([SBX, *args], capture_output=True, text=True,
                          env=dict(os.environ, SBX_TENANT=TENANT))


def start(name, stages, node=None, config=None):
    """sbxd with this run's groups, once it says it is ready."""
    env = dict(os.environ, SBX_GROUP_PREFIX=f"sbx-{RUN}",
               SBX_INSTANCE=f"{RUN}-{name}", SBX_METRICS_PORT="0")
    if config:
        env["SBX_CONFIG"] = config
    cmd = [SBXD, "--no-setup", "--stage", stages] + (["--node-id", node] if node else [])
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    for line in p.stdout:
        if "sbxd ready" in line:
            p.stdout.close()  # as itest_sbxd: nothing more is read
            return p
        if time.monotonic() > deadline:
            break
    p.kill()
    sys.exit(f"sbxd {name} did not start")


def clean_node(conf):
    """Destroys what is still alive on the node, then its state goes."""
    out = sbx("--json", "ls", "--tenant", TENANT)
    for s in json.loads(out.stdout or "[]"):
        if s["aggregate"] == "sandbox" and s["node_id"] == NODE:
            r = sbx("destroy", s["id"], "--reason", "test over")
            check(f"sandbox {s['id']} on the node is destroyed", r.returncode == 0,
                  r.stderr.strip())
    root = os.path.join(VAR, "run", NODE)
    with open("/proc/mounts") as f:
        mounted = [line.split()[1] for line in f if line.split()[1].startswith(root + "/")]
    check("nothing of the node is still mounted", not mounted, str(mounted))
    if not mounted:
        shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(os.path.join(VAR, "workspaces", TENANT, SESSION), ignore_errors=True)
    os.unlink(conf)


def main():
    if os.geteuid() != 0:
        sys.exit("test_example_python: runs a real sandbox and needs root")
    if not os.path.exists(PYTHON):
        sys.exit(f"{PYTHON} is missing: run deploy/local/install.sh")
    conf = f"/tmp/sbx-{NODE}.conf"
    with open(conf, "w") as f:
        # Large, so that schedulers place this test's claim here.
        f.write("node.cpu = 10000\nnode.memory_mb = 100000000\nnode.max_sandboxes = 4\n")
    procs = []
    try:
        procs.append(start("executor", "executor", NODE, conf))
        procs.append(start("cp", "intake,planner,guard,scheduler,keeper"))
        t0 = time.monotonic()
        p = subprocess.run([PYTHON, EXAMPLE, "--tenant", TENANT, "--session", SESSION,
                            "--task", TASK, "--sbx", SBX],
                           capture_output=True, text=True, timeout=240)
        print(f"example ran in {time.monotonic() - t0:.1f} s; stderr:\n{p.stderr}")
        check("the example exits 0", p.returncode == 0, str(p.returncode))
        check("it prints what the command printed: 2", p.stdout == "2\n", repr(p.stdout))
        m = re.search(r"sandbox (\S+) lease (\d+)", p.stderr)
        check("it says which sandbox and lease it got", m is not None)
        check("it released the sandbox", m is not None and f"released {m.group(1)}" in p.stderr)
        if m:
            r = sbx("--json", "show", m.group(1))
            state = json.loads(r.stdout) if r.returncode == 0 else {}
            check("the sandbox ran on this test's node", state.get("node_id") == NODE,
                  str(state.get("node_id")))
            check("the release reached the log: the lease is over",
                  state.get("phase") in ("SANITIZING", "IDLE") and not state.get("lease_owner"),
                  f"{state.get('phase')} {state.get('lease_owner')}")
    finally:
        try:
            clean_node(conf)
        finally:
            for p in procs:
                p.terminate()
                p.wait(30)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
