"""The payment scenario's bank as a process on the host, for a recorded run of simbank.toml.

    python3 images/payments/hostbank.py [PORT]        (default 7000, on 127.0.0.1)

It serves the HTTP API that simbank.toml's simulated bank ([[dependency]] bank) serves, with
its charges in memory:

    GET  /ping                  {"ok": true}
    PUT  /charges/REF/KEY       stores the charge's body under REF/KEY: {"ok": true, "charge": "REF/KEY"}
    GET  /charges/              every REF/KEY, one per line
    GET  /charges/REF/KEY       the charge's body (404 when there is none)

Record a run against it, then replay it without it (the tape holds everything the bank
answered; see docs/worlds.md, "A simulated dependency standing in for the host"):

    wio sim images/payments/simbank.toml --seed 4 --net host \\
        --allow bank=127.0.0.1:7000 --record bank.tape
    wio sim images/payments/simbank.toml --replay bank.tape

Its answers carry no date and no server name, so the same requests get the same bytes.
"""

import http.server
import sys
import threading


class Bank(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    charges = {}
    lock = threading.Lock()

    def answer(self, status, body, content_type="text/plain"):
        body = body.encode() if isinstance(body, str) else body
        self.send_response_only(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True

    def do_GET(self):
        if self.path == "/ping":
            return self.answer(200, '{"ok": true}', "application/json")
        if self.path == "/charges/":
            with self.lock:
                keys = sorted(self.charges)
            return self.answer(200, "".join(k + "\n" for k in keys))
        if self.path.startswith("/charges/"):
            with self.lock:
                value = self.charges.get(self.path[len("/charges/"):])
            if value is None:
                return self.answer(404, "no such charge\n")
            return self.answer(200, value, "application/json")
        return self.answer(404, "no route\n")

    def do_PUT(self):
        if not self.path.startswith("/charges/") or self.path == "/charges/":
            return self.answer(404, "no route\n")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        key = self.path[len("/charges/"):]
        with self.lock:
            self.charges[key] = body
        return self.answer(200, '{"ok": true, "charge": "%s"}' % key, "application/json")

    def log_message(self, fmt, *args):
        sys.stderr.write("hostbank: " + (fmt % args) + "\n")


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 7000
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Bank)
    print(f"hostbank: serving on 127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
