#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A fake OpenAI-compatible chat-completions server for test_planner_llm.

No real LLM exists on the test machine, so this stands in for one. It
listens on 127.0.0.1 on an ephemeral port, prints the port on stdout, and
exits when its stdin closes (the test holds the other end). The request's
"model" picks the behaviour; every request is first checked for the shape
the planner must send (model, system + user messages, the user content
being JSON with the task, response_format json_schema "ResourceIntent",
and the bearer token if the model name ends in "+auth"), and a malformed
request gets HTTP 400, so a passing "valid" test also proves the request.
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

INTENT = {
    "workload": "python-data-analysis",
    "resource_class": "python-ds",
    "cpu": 3,
    "memory_mb": 6144,
    "disk_gb": 25,
    "requires_browser": False,
    "requires_gpu": False,
    "network_profile": "pypi-readonly",
    "template": "host",
    "runtime": "runc",
    "ttl_seconds": 900,
    "confidence": 0.8,
    "reason": "pandas on a medium spreadsheet",
}


def request_problem(req, headers):
    if not isinstance(req.get("model"), str):
        return "model missing"
    msgs = req.get("messages")
    if not isinstance(msgs, list) or len(msgs) != 2:
        return "want a system and a user message"
    if msgs[0].get("role") != "system" or msgs[1].get("role") != "user":
        return "roles"
    try:
        user = json.loads(msgs[1]["content"])
    except (ValueError, TypeError):
        return "user content is not JSON"
    if "task" not in user or "text" not in user["task"]:
        return "user content has no task"
    rf = req.get("response_format", {})
    js = rf.get("json_schema", {})
    if rf.get("type") != "json_schema" or js.get("name") != "ResourceIntent":
        return "response_format"
    props = js.get("schema", {}).get("properties", {})
    if "memory_mb" not in props or "cpu" not in props:
        return "schema lacks fields"
    if req["model"].endswith("+auth") and \
            headers.get("Authorization") != "Bearer sk-test":
        return "missing bearer token"
    return None


def completion(content):
    return {"id": "x", "object": "chat.completion", "model": "fake",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant",
                                     "content": content}}]}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except OSError:
            pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        try:
            req = json.loads(self.rfile.read(n))
        except ValueError:
            return self.reply(400, {"error": "body is not JSON"})
        if self.path != "/v1/chat/completions":
            return self.reply(404, {"error": "path " + self.path})
        problem = request_problem(req, self.headers)
        if problem:
            return self.reply(400, {"error": problem})
        model = req["model"].split("+")[0]
        intent = dict(INTENT)
        if model == "valid":
            return self.reply(200, completion(json.dumps(intent)))
        if model == "runc":
            intent["runtime"] = "runc"
            return self.reply(200, completion(json.dumps(intent)))
        if model == "garbage":
            return self.reply(200, completion("sure! here is {a plan"))
        if model == "not-json":
            return self.reply(200, b"<html>oops</html>")
        if model == "no-memory":
            del intent["memory_mb"]
            return self.reply(200, completion(json.dumps(intent)))
        if model == "huge":
            intent["cpu"] = 512
            return self.reply(200, completion(json.dumps(intent)))
        if model == "extra":
            intent["privileged"] = True
            return self.reply(200, completion(json.dumps(intent)))
        if model == "http500":
            return self.reply(500, {"error": "overloaded"})
        if model == "big":
            return self.reply(200, completion("x" * 200000))
        if model == "sleep":
            time.sleep(5)
            return self.reply(200, completion(json.dumps(intent)))
        return self.reply(400, {"error": "unknown model " + model})


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(server.server_address[1], flush=True)
    sys.stdin.read()  # until the test closes our stdin
    server.shutdown()


if __name__ == "__main__":
    main()
