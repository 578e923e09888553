#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Interop: an independent Avro implementation (fastavro) and sbx read each
other's single-object messages.

  sbx -> fastavro: `sbx codec encode` writes C3 01 + fingerprint + body;
                   fastavro computes the fingerprint of the schema itself and
                   decodes the body.
  fastavro -> sbx: fastavro writes the body, the header is built from
                   fastavro's fingerprint, `sbx codec decode` reads it.

usage: test_fastavro.py PATH/TO/sbx
"""
import io
import json
import os
import struct
import subprocess
import sys

try:
    import fastavro
    from fastavro.schema import fingerprint, to_parsing_canonical_form
except ImportError:
    # Run by the system python: move into the project's venv.
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    venv = os.path.join(os.environ.get("SBX_VAR", os.path.join(root, "var")),
                        "venv", "bin", "python")
    if os.path.exists(venv) and os.path.realpath(sys.executable) != os.path.realpath(venv):
        os.execv(venv, [venv] + sys.argv)
    sys.exit("fastavro is not installed: run deploy/local/install.sh "
             "(it creates var/venv)")

from checks import check, summary

SBX = sys.argv[1]


def sbx(*args, data=b""):
    p = subprocess.run([SBX, *args], input=data, capture_output=True)
    if p.returncode != 0:
        raise RuntimeError(f"sbx {' '.join(args)}: {p.stderr.decode().strip()}")
    return p.stdout


def schema(kind):
    out = json.loads(sbx("--json", "schema", kind))
    return out["fingerprint"], fastavro.parse_schema(out["schema"]), out["schema"]


def header(parsed):
    """fastavro gives the fingerprint as the hex of its 8 wire bytes
    (little-endian); sbx prints the 64-bit value."""
    wire = bytes.fromhex(fingerprint(to_parsing_canonical_form(parsed),
                                     "CRC-64-AVRO"))
    return b"\xc3\x01" + wire, struct.unpack("<Q", wire)[0]


EVENT = {
    "event_id": "6f1c2a4e-1d2b-4c3d-9e8f-0a1b2c3d4e5f",
    "aggregate": "sandbox",
    "aggregate_id": "sb-1028",
    "seq": 3,
    "type": "ExecFinished",
    "occurred_at": 1789192000000000,
    "producer": "executor/node-1",
    "correlation_id": "claim-1",
    "causation_id": None,
    "tenant_id": "acme",
    "session_id": "session-9",
    "lease_version": 81,
    "payload": {"sbx.ExecFinished": {
        "exec_id": "e-1", "exit_code": 0, "signal": 0, "timed_out": False,
        "stdout": "2\n\u00ff\u0000", "stderr": "", "output_chunks": 0,
        "usage": {"wall_us": 1200, "cpu_user_us": 800, "cpu_sys_us": 100,
                  "peak_memory_bytes": 12582912, "max_rss_kb": 9000,
                  "oom_killed": False, "pids_peak": 1},
        "error": None}},
}

# ---- sbx -> fastavro -------------------------------------------------------
fp_hex, ev_schema, _ = schema("event")
hdr, fp = header(ev_schema)
check("fingerprint: sbx and fastavro agree on the Event schema",
      f"{fp:016x}" == fp_hex, f"sbx {fp_hex} fastavro {fp:016x}")

wire = sbx("codec", "encode", "event", data=json.dumps(EVENT).encode())
check("sbx frames with C3 01 + fastavro's fingerprint", wire[:10] == hdr)
rec = fastavro.schemaless_reader(io.BytesIO(wire[10:]), ev_schema,
                                 return_record_name=True)
check("fastavro reads the envelope", rec["aggregate_id"] == "sb-1028"
      and rec["seq"] == 3 and rec["lease_version"] == 81)
name, payload = rec["payload"]
check("fastavro sees the payload union branch", name == "sbx.ExecFinished", name)
check("bytes survive", payload["stdout"] == b"2\n\xff\x00", repr(payload["stdout"]))
check("nested record", payload["usage"]["peak_memory_bytes"] == 12582912)

# ---- fastavro -> sbx -------------------------------------------------------
datum = dict(EVENT)
datum["seq"] = 4
datum["type"] = "LeaseGranted"
datum["payload"] = ("sbx.LeaseGranted", {"owner": "session-9/tool-call-18",
                                         "lease_version": 82,
                                         "expires_at": 1789192000,
                                         "reuse": True})
buf = io.BytesIO()
fastavro.schemaless_writer(buf, ev_schema, datum)
back = json.loads(sbx("codec", "decode", "event", data=hdr + buf.getvalue()))
check("sbx reads fastavro's event", back["seq"] == 4
      and back["payload"]["sbx.LeaseGranted"]["lease_version"] == 82
      and back["payload"]["sbx.LeaseGranted"]["reuse"] is True, json.dumps(back))

# ---- a request and a node status, both ways ---------------------------------
_, req_schema, _ = schema("request")
rhdr, _ = header(req_schema)
request = {"request_id": "r-1", "tenant_id": "acme", "session_id": "s-1",
           "user_id": "u-1", "client": "python-example/1",
           "occurred_at": 1789192000000000,
           "command": ("sbx.AcquireSandbox", {
               "claim_id": "c-1",
               "task": {"text": "read the Excel file and total the sales",
                        "plan": ["pip install pandas openpyxl"],
                        "tool_calls": [], "languages": ["python"],
                        "packages": [{"name": "pandas", "ecosystem": "pip",
                                      "constraint": ""}],
                        "repo_size_mb": 0, "data_size_mb": 1,
                        "workspace_size_mb": 0, "expected_duration_s": 30,
                        "needs_browser": False, "needs_gpu": False,
                        "needs_compile": False, "network": "none",
                        "risk": "low"},
               "requested_class": None, "ttl_seconds": 1800,
               "lease_seconds": 300, "network_profile": None,
               "secret_scope": None, "workspace_id": "ws-392",
               "project_id": None, "snapshot_id": None})}
buf = io.BytesIO()
fastavro.schemaless_writer(buf, req_schema, request)
back = json.loads(sbx("codec", "decode", "request", data=rhdr + buf.getvalue()))
acq = back["command"]["sbx.AcquireSandbox"]
check("sbx reads fastavro's request", acq["claim_id"] == "c-1"
      and acq["task"]["packages"][0]["name"] == "pandas")
wire = sbx("codec", "encode", "request", data=json.dumps(back).encode())
again = fastavro.schemaless_reader(io.BytesIO(wire[10:]), req_schema,
                                   return_record_name=True)
# fastavro turns timestamp-micros into a datetime; compare it as µs.
when = again.pop("occurred_at")
want = dict(request)
check("fastavro reads sbx's re-encoding of it",
      round(when.timestamp() * 1e6) == want.pop("occurred_at") and again == want,
      f"{again} != {want}")

_, node_schema, _ = schema("node")
nhdr, _ = header(node_schema)
wire = sbx("codec", "encode", "node", data=json.dumps(
    {"node_id": "node-1", "at": 5, "cpu_capacity": 2.0,
     "memory_mb_capacity": 24576}).encode())
node = fastavro.schemaless_reader(io.BytesIO(wire[10:]), node_schema)
check("fastavro reads a node status with defaults", wire[:10] == nhdr
      and node["healthy"] is True and node["pools"] == [])

# ---- bad input is refused with a reason --------------------------------------
p = subprocess.run([SBX, "codec", "decode", "event"], input=hdr + b"\x02",
                   capture_output=True)
check("a truncated message is refused with one line", p.returncode == 1
      and p.stderr.count(b"\n") == 1 and b"truncated" in p.stderr,
      p.stderr.decode())

sys.exit(summary())
