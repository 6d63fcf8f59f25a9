#!/usr/bin/python3
"""wio-kv: a small HTTP key-value service on redis, instrumented with the Antithesis SDK.

    GET  /kv/KEY          the value (404 when there is none)
    PUT  /kv/KEY          sets it to the request's body
    POST /kv/KEY/incr     adds one to an integer value and answers the new value
    GET  /health          "ok" once redis answers

Each request is one redis command on its own connection (RESP, no client library). The
service declares its setup complete (the SDK's setup_complete) once redis answers PING:
from then on wio's test composer runs the workload's commands.

KV_BUG=lost-update plants a real defect: an increment reads the value and writes it back
plus one (two commands) instead of redis's atomic INCR, so two increments at once may
both read the same value and one of them is lost although both were acknowledged.
"""

import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from antithesis.assertions import reachable
from antithesis.lifecycle import setup_complete

REDIS = (os.environ.get("KV_REDIS", "redis"), 6379)
PORT = int(os.environ.get("KV_PORT", "8080"))
BUG = os.environ.get("KV_BUG", "none")


def redis(*cmd, timeout=1.0):
    """One redis command; returns a bulk string (None for nil), an integer or a status."""
    with socket.create_connection(REDIS, timeout=timeout) as s:
        s.settimeout(timeout)
        out = f"*{len(cmd)}\r\n".encode()
        for part in cmd:
            b = str(part).encode()
            out += f"${len(b)}\r\n".encode() + b + b"\r\n"
        s.sendall(out)
        buf = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                raise ConnectionError("redis closed the connection")
            buf += chunk
            head, sep, rest = buf.partition(b"\r\n")
            if not sep:
                continue
            kind, body = head[:1], head[1:].decode()
            if kind == b"-":
                raise ConnectionError("redis: " + body)
            if kind in (b"+", b":"):
                return int(body) if kind == b":" else body
            if kind == b"$":
                n = int(body)
                if n < 0:
                    return None
                if len(rest) >= n + 2:
                    return rest[:n].decode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def answer(self, code, text):
        body = (text + "\n").encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def key(self):
        parts = self.path.split("/")
        return parts[2] if len(parts) >= 3 and parts[1] == "kv" and parts[2] else None

    def do_GET(self):
        try:
            if self.path == "/health":
                redis("PING")
                return self.answer(200, "ok")
            key = self.key()
            if key is None:
                return self.answer(404, "no such path")
            value = redis("GET", key)
            return self.answer(404, "no such key") if value is None else self.answer(200, value)
        except OSError as e:
            return self.answer(503, f"redis unavailable: {type(e).__name__}")

    def do_PUT(self):
        key = self.key()
        if key is None:
            return self.answer(404, "no such path")
        n = int(self.headers.get("Content-Length") or 0)
        value = self.rfile.read(n).decode()
        try:
            redis("SET", key, value)
            return self.answer(200, value)
        except OSError as e:
            return self.answer(503, f"redis unavailable: {type(e).__name__}")

    def do_POST(self):
        key = self.key()
        if key is None or not self.path.endswith("/incr"):
            return self.answer(404, "no such path")
        try:
            if BUG == "lost-update":
                # The defect: read, then write back plus one (not atomic).
                value = int(redis("GET", key) or 0) + 1
                redis("SET", key, value)
                reachable("an increment was read and written back", {"key": key})
            else:
                value = redis("INCR", key)
            return self.answer(200, str(value))
        except (OSError, ValueError) as e:
            return self.answer(503, f"increment failed: {type(e).__name__}")


def main():
    print(f"wio-kv: listening on {PORT}, redis at {REDIS[0]}, bug {BUG}", flush=True)
    server = ThreadingHTTPServer(("0.0.0.0", PORT), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    while True:
        try:
            redis("PING")
            break
        except OSError:
            time.sleep(0.2)
    print("wio-kv: redis answers; setup complete", flush=True)
    setup_complete({"service": "wio-kv", "bug": BUG})
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    sys.exit(main())
