#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""An sbx client in Python: acquire a sandbox, run a command in it, print
its output, release it. Only Kafka (confluent-kafka) and Avro (fastavro):
requests go to sbx.requests.v1, keyed by the claim or sandbox id, and what
happened is read from sbx.lifecycle.v1 and sbx.exec-output.v1, from the end
of every partition as it was just before publishing.

  usage: acquire_exec.py [--tenant T] [--session S] [--task TEXT]
                         [--brokers HOST:PORT] [--sbx PATH] [-- CMD ARG...]

The default command is python3 -c 'print(1+1)'. The schemas come from
`sbx --json schema KIND` (the ones sbx bundles); messages are Avro
single-object encoded: C3 01, the schema's CRC-64-AVRO fingerprint
(little-endian), the body. The producer partitions keys like the Java
client (murmur2), as every sbx producer must. Progress goes to stderr; the
command's stdout and stderr to ours; the exit status is the command's.
"""
import argparse
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import time
import uuid

try:
    import fastavro
    from confluent_kafka import Consumer, Producer, TopicPartition
except ImportError:
    sys.exit("acquire_exec: needs confluent-kafka and fastavro: pip install -r "
             "deploy/local/requirements.txt (deploy/local/install.sh puts them in "
             "var/venv: run var/venv/bin/python acquire_exec.py)")

REQUESTS, LIFECYCLE, OUTPUT = "sbx.requests.v1", "sbx.lifecycle.v1", "sbx.exec-output.v1"


class Fail(Exception):
    pass


def say(*words):
    print("acquire_exec:", *words, file=sys.stderr, flush=True)


class Codec:
    """Single-object Avro for one message kind, with sbx's bundled schema."""

    def __init__(self, sbx, kind):
        out = json.loads(subprocess.run([sbx, "--json", "schema", kind], check=True,
                                        capture_output=True).stdout)
        self.schema = fastavro.parse_schema(out["schema"])
        self.header = b"\xc3\x01" + struct.pack("<Q", int(out["fingerprint"], 16))

    def encode(self, datum):
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, self.schema, datum)
        return self.header + buf.getvalue()

    def decode(self, msg):
        """The datum, or None if another schema (version) wrote it."""
        if not msg or msg[:10] != self.header:
            return None
        return fastavro.schemaless_reader(io.BytesIO(msg[10:]), self.schema,
                                          return_record_name=True)


class Client:
    def __init__(self, args):
        self.args = args
        self.request_codec = Codec(args.sbx, "request")
        self.event_codec = Codec(args.sbx, "event")
        self.output_codec = Codec(args.sbx, "output")
        self.producer = Producer({"bootstrap.servers": args.brokers,
                                  "partitioner": "murmur2_random",
                                  "enable.idempotence": True, "acks": "all"})
        self.consumer = None

    def close(self):
        if self.consumer:
            self.consumer.close()

    def listen(self):
        """Reads every partition of the topics from its end, as it is now."""
        if self.consumer:
            self.consumer.close()
        self.consumer = Consumer({"bootstrap.servers": self.args.brokers,
                                  "group.id": f"sbx-example-{uuid.uuid4()}",
                                  "enable.auto.commit": False})
        parts = []
        for topic in (LIFECYCLE, OUTPUT):
            md = self.consumer.list_topics(topic, timeout=10).topics[topic]
            for p in md.partitions:
                _, high = self.consumer.get_watermark_offsets(
                    TopicPartition(topic, p), timeout=10)
                parts.append(TopicPartition(topic, p, high))
        self.consumer.assign(parts)

    def send(self, key, command, body):
        """Publishes a Request; returns its request id."""
        rid = f"req-{uuid.uuid4()}"
        self.listen()
        self.producer.produce(REQUESTS, key=key.encode(), value=self.request_codec.encode({
            "request_id": rid, "tenant_id": self.args.tenant,
            "session_id": self.args.session, "client": "python-example/1",
            "occurred_at": int(time.time() * 1e6), "command": (command, body)}))
        if self.producer.flush(30):
            raise Fail(f"could not publish {command} to {REQUESTS}")
        return rid

    def messages(self, timeout):
        """(topic, datum) of what comes, (None, None) when nothing does,
        until the timeout passes."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = self.consumer.poll(0.2)
            if m is None or m.error():
                yield None, None
                continue
            codec = self.event_codec if m.topic() == LIFECYCLE else self.output_codec
            datum = codec.decode(m.value())
            if datum is not None:
                yield m.topic(), datum
        raise Fail(f"no answer within {timeout} s: is the control plane running?")

    def wait(self, rid, timeout, handle, took_effect):
        """Hands what comes to handle(topic, datum) until it returns a result.
        A rejection of request rid is final unless took_effect(event) sees
        the request's own effect within 2 s: another intake (a redelivered
        request, another control plane) may refuse what the first one did."""
        refused, effect = None, False
        for topic, m in self.messages(timeout):
            if topic == LIFECYCLE and m["aggregate_id"] == rid \
                    and m["type"] == "RequestRejected":
                refused = refused or (time.monotonic() + 2, m["payload"][1]["reasons"])
            elif topic:
                effect = effect or (topic == LIFECYCLE and took_effect(m))
                result = handle(topic, m)
                if result is not None:
                    return result
            if refused and not effect and time.monotonic() > refused[0]:
                raise Fail("rejected: " + "; ".join(refused[1]))


def acquire(c):
    claim = f"claim-{uuid.uuid4()}"
    rid = c.send(claim, "sbx.AcquireSandbox", {
        "claim_id": claim, "task": {"text": c.args.task}})

    def handle(topic, ev):
        if topic != LIFECYCLE or ev["aggregate_id"] != claim:
            return None
        name, payload = ev["payload"]
        say(f"{ev['type']:<16} by {ev['producer']}")
        if ev["type"] == "ClaimBound":
            return payload["sandbox_id"], payload["lease_version"]
        if ev["type"] in ("PlanRejected", "ClaimFailed", "ClaimCancelled"):
            raise Fail(f"claim {claim}: {ev['type']}: "
                       f"{payload.get('reason') or '; '.join(payload.get('reasons', []))}")
        return None

    return c.wait(rid, 120, handle, lambda ev: ev["aggregate_id"] == claim
                  and ev["payload"][1].get("request_id") == rid)


def execute(c, sandbox, lease, argv):
    """Runs argv, streaming its output; returns its exit status."""
    exec_id = f"ex-{uuid.uuid4()}"
    rid = c.send(sandbox, "sbx.Exec", {"sandbox_id": sandbox, "lease_version": lease,
                                       "exec_id": exec_id, "argv": argv})
    got = {"chunks": 0, "expected": None, "code": None}

    def handle(topic, m):
        if topic == OUTPUT and m["exec_id"] == exec_id:
            out = sys.stdout if m["stream"] == "stdout" else sys.stderr
            out.buffer.write(m["data"])
            out.flush()
            got["chunks"] += 1
        elif topic == LIFECYCLE and m["aggregate_id"] == sandbox \
                and m["type"] == "ExecFinished" and m["payload"][1]["exec_id"] == exec_id:
            fin = m["payload"][1]
            got["code"] = 128 + fin["signal"] if fin["signal"] else fin["exit_code"]
            got["expected"] = fin["output_chunks"]
            if fin["error"]:
                say(fin["error"])
            if fin["output_chunks"] == 0:  # nothing went out in chunks: all is inline
                sys.stdout.buffer.write(fin["stdout"])
                sys.stderr.buffer.write(fin["stderr"])
                sys.stdout.flush()
        if got["expected"] is not None and got["chunks"] >= got["expected"]:
            return got["code"]
        return None

    return c.wait(rid, 90, handle, lambda ev: ev["type"] == "ExecRequested"
                  and ev["payload"][1]["exec_id"] == exec_id)


def release(c, sandbox, lease):
    rid = c.send(sandbox, "sbx.Release", {"sandbox_id": sandbox, "lease_version": lease,
                                          "claim_id": ""})

    def released(ev):
        return ev["aggregate_id"] == sandbox and ev["type"] == "LeaseReleased"

    c.wait(rid, 30, lambda topic, ev: topic == LIFECYCLE and released(ev) or None,
           released)


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tenant", default=os.environ.get("SBX_TENANT", "demo"))
    p.add_argument("--session", default=None)
    p.add_argument("--task", default="print(1+1) in python")
    p.add_argument("--brokers", default=os.environ.get("SBX_BROKERS", "127.0.0.1:19092"))
    p.add_argument("--sbx", default=shutil.which("sbx") or os.path.join(root, "build", "src", "sbx"))
    p.add_argument("cmd", nargs="*", default=["python3", "-c", "print(1+1)"])
    args = p.parse_args()
    c = Client(args)
    try:
        sandbox, lease = acquire(c)
        say(f"sandbox {sandbox} lease {lease}")
        try:
            code = execute(c, sandbox, lease, args.cmd)
        finally:
            release(c, sandbox, lease)
            say(f"released {sandbox}")
        return code
    except Fail as e:
        say(e)
        return 1
    finally:
        c.close()


if __name__ == "__main__":
    sys.exit(main())
