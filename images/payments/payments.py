"""The payment scenario's services, instrumented with the Antithesis Python SDK.

    payments.py bank                  the bank's API: accounts, charges, its ledger
    payments.py payments BANK REDIS   takes payments, charges the bank, writes receipts
    payments.py client BANK PAY REDIS issues payments with retries, then audits

Four machines of a `wio sim` world (images/payments/world.toml): `bank`, `payments`,
`receipts` (Debian's unmodified redis-server, append-only file fsynced on every write, on
its virtio-blk disk) and `client`. The protocol between our services is one JSON object per
line over TCP, one request per connection: small enough for an interpreted guest, and a
timeout or a refused connection is exactly what the caller sees when the network fails.

The bank is honest but unreliable: seeded by wio (the SDK's random numbers), it is
sometimes slow (before or after applying a charge: the caller may time out on a charge that
was applied) and sometimes refuses (busy). The payment service retries a charge with the
payment's idempotency key until the bank answers, then writes the receipt to redis,
retrying until it is written, then answers the client.

`wio.bug=...` on a node's kernel command line (WIO_BUG) selects a real defect of the
payment service's code:

    receipt-no-retry   the receipt is written once; if redis cannot be reached the error
                       is logged and the payment still succeeds (a charge without receipt)
    no-idempotency     retries of a charge carry no idempotency key (a charge whose
                       response was lost is applied again)

Promises (checked by the client's audit after the faults stop, and along the way):
always: every customer debit has a merchant credit; always: no payment is charged twice;
always: every successful charge has its receipt; sometimes: a payment succeeded after a
retry; sometimes: the bank was unreachable during a payment.
"""

import json
import os
import socket
import sys
import threading
import time

from antithesis.assertions import always, reachable, sometimes
from antithesis.lifecycle import setup_complete
from antithesis.random import get_random

BANK_PORT = 7000
PAY_PORT = 7001
REDIS_PORT = 6379
CUSTOMERS = 4
OPENING = 1000
BUG = os.environ.get("WIO_BUG", "none")


def log(*args):
    print(*args, flush=True)


def uptime():
    with open("/proc/uptime") as f:
        return float(f.read().split()[0])


def call(host, port, req, timeout):
    """One request, one JSON line back; raises OSError (timeouts included) on failure."""
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.settimeout(timeout)
        s.sendall((json.dumps(req) + "\n").encode())
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(4096)
            if not chunk:
                raise ConnectionError("connection closed before the answer")
            buf += chunk
        return json.loads(buf)


def serve(port, handle):
    """Answers each connection's one JSON line in its own thread."""
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", port))
    srv.listen(64)

    def one(conn):
        with conn:
            try:
                conn.settimeout(30)
                f = conn.makefile("rb")
                line = f.readline()
                if not line:
                    return
                answer = handle(json.loads(line))
                conn.sendall((json.dumps(answer) + "\n").encode())
            except (OSError, ValueError) as e:
                log("serve: connection dropped:", type(e).__name__)

    while True:
        conn, _ = srv.accept()
        threading.Thread(target=one, args=(conn,), daemon=True).start()


def redis(host, cmd, timeout=0.5):
    """One redis command (RESP) on its own connection; returns the first reply line."""
    with socket.create_connection((host, REDIS_PORT), timeout=timeout) as s:
        s.settimeout(timeout)
        out = f"*{len(cmd)}\r\n".encode()
        for part in cmd:
            b = part.encode()
            out += f"${len(b)}\r\n".encode() + b + b"\r\n"
        s.sendall(out)
        buf = b""
        while b"\r\n" not in buf:
            chunk = s.recv(65536)
            if not chunk:
                raise ConnectionError("redis closed the connection")
            buf += chunk
        if buf.startswith(b"*"):
            # An array of bulk strings (KEYS): read it whole.
            while True:
                try:
                    return parse_array(buf)
                except IndexError:
                    chunk = s.recv(65536)
                    if not chunk:
                        raise ConnectionError("redis closed the connection")
                    buf += chunk
        line = buf.split(b"\r\n", 1)[0].decode()
        if line.startswith("-"):
            raise ConnectionError("redis error: " + line)
        return line


def parse_array(buf):
    """A RESP array of bulk strings; IndexError while it is incomplete."""
    lines = buf.split(b"\r\n")
    n = int(lines[0][1:])
    out = []
    i = 1
    for _ in range(n):
        if i + 1 >= len(lines) or not lines[i].startswith(b"$"):
            raise IndexError
        out.append(lines[i + 1].decode())
        i += 2
    if len(lines) <= i:
        raise IndexError
    return out


# ---- the bank -------------------------------------------------------------------------

def bank():
    accounts = {f"c{i}": OPENING for i in range(CUSTOMERS)}
    accounts["merchant"] = 0
    total = sum(accounts.values())
    ledger = []
    by_key = {}
    lock = threading.Lock()

    def handle(req):
        op = req.get("op")
        if op == "ping":
            return {"ok": True}
        if op == "ledger":
            with lock:
                return {"ok": True, "ledger": list(ledger), "accounts": dict(accounts)}
        if op != "charge":
            return {"ok": False, "error": "unknown op"}
        r = get_random() % 100
        if r < 5:
            return {"ok": False, "busy": True, "error": "busy, try again"}
        if r < 20:
            time.sleep(0.3 + (get_random() % 1500) / 1000)  # slow before applying
        key = req.get("key")
        with lock:
            if key is not None and key in by_key:
                return dict(by_key[key], replayed=True)
            customer, amount = req["customer"], int(req["amount"])
            if accounts.get(customer, 0) < amount:
                return {"ok": False, "error": "insufficient funds"}
            accounts[customer] -= amount
            accounts["merchant"] += amount
            entry = {"id": len(ledger) + 1, "ref": req["ref"], "key": key, "customer": customer,
                     "debit": amount, "credit": amount}
            ledger.append(entry)
            always(sum(accounts.values()) == total,
                   "every customer debit has a merchant credit",
                   {"where": "bank", "charge": entry["id"]})
            answer = {"ok": True, "charge": entry["id"]}
            if key is not None:
                by_key[key] = answer
        if 20 <= r < 35:
            time.sleep(0.3 + (get_random() % 1500) / 1000)  # slow after applying
        return answer

    log("bank: listening on", BANK_PORT)
    serve(BANK_PORT, handle)


# ---- the payment service --------------------------------------------------------------

def payments(bank_host, redis_host):
    done = {}
    inflight = {}
    lock = threading.Lock()

    def charge(req):
        """Charges the bank until it answers; returns its answer."""
        attempt = 0
        while True:
            attempt += 1
            key = None if (BUG == "no-idempotency" and attempt > 1) else req["payment"]
            try:
                a = call(bank_host, BANK_PORT, {"op": "charge", "key": key,
                                                "ref": req["payment"],
                                                "customer": req["customer"],
                                                "amount": req["amount"]}, timeout=1.0)
            except OSError as e:
                sometimes(True, "the bank was unreachable during a payment",
                          {"payment": req["payment"], "attempt": attempt,
                           "error": type(e).__name__})
                log(f"payments: {req['payment']}: bank attempt {attempt}: {type(e).__name__}")
                time.sleep(min(0.2 * attempt, 1.0))
                continue
            if a.get("busy"):
                time.sleep(0.1)
                continue
            if a.get("ok"):
                sometimes(attempt > 1, "a payment succeeded after a retry",
                          {"payment": req["payment"], "attempts": attempt})
            return a

    def receipt(pid, a):
        """Writes the receipt; True when redis has it."""
        value = json.dumps({"payment": pid, "charge": a["charge"]})
        attempt = 0
        while True:
            attempt += 1
            try:
                redis(redis_host, ["SET", "receipt:" + pid, value])
                return True
            except OSError as e:
                log(f"payments: {pid}: receipt attempt {attempt}: {type(e).__name__}")
                if BUG == "receipt-no-retry":
                    return False  # the defect: logged and forgotten
                time.sleep(min(0.2 * attempt, 1.0))

    def process(req):
        pid = req["payment"]
        a = charge(req)
        if a.get("ok"):
            receipt(pid, a)
            answer = {"ok": True, "charge": a["charge"]}
        else:
            answer = {"ok": False, "error": a.get("error")}
        with lock:
            done[pid] = answer
            inflight.pop(pid).set()
        return answer

    def handle(req):
        if req.get("op") == "ping":
            return {"ok": True}
        pid = req["payment"]
        with lock:
            if pid in done:
                return done[pid]
            ev = inflight.get(pid)
            if ev is None:
                inflight[pid] = threading.Event()
        if ev is not None:
            # The same payment again (a client retry): wait for the first to finish.
            ev.wait(20)
            with lock:
                return done.get(pid, {"ok": False, "error": "in progress"})
        return process(req)

    log(f"payments: listening on {PAY_PORT} (bug: {BUG})")
    serve(PAY_PORT, handle)


# ---- the client and the audit ---------------------------------------------------------

def client(bank_host, pay_host, redis_host, count, audit_at):
    for host, port, what in ((bank_host, BANK_PORT, "bank"), (pay_host, PAY_PORT, "payments")):
        while True:
            try:
                call(host, port, {"op": "ping"}, timeout=1.0)
                break
            except OSError:
                time.sleep(0.1)
        log("client:", what, "is up")
    while True:
        try:
            redis(redis_host, ["PING"])
            break
        except OSError:
            time.sleep(0.1)
    log("client: receipts is up")
    setup_complete({"payments": count})
    outcomes = {}
    for i in range(count):
        pid = f"p{i}"
        req = {"payment": pid, "customer": f"c{i % CUSTOMERS}", "amount": 10 + i}
        for attempt in range(1, 9):
            try:
                a = call(pay_host, PAY_PORT, req, timeout=2.5)
            except OSError:
                time.sleep(0.3)
                continue
            outcomes[pid] = a
            if a.get("error") != "in progress":
                break
        log(f"client: {pid}: {outcomes.get(pid)}")
        time.sleep(0.1)
    # The audit, once the faults have stopped and retries have drained.
    while uptime() < audit_at:
        time.sleep(0.5)
    ledger = None
    while ledger is None:
        try:
            ledger = call(bank_host, BANK_PORT, {"op": "ledger"}, timeout=2.0)
        except OSError:
            time.sleep(0.5)
    receipts = None
    while receipts is None:
        try:
            receipts = {k[len("receipt:"):] for k in redis(redis_host, ["KEYS", "receipt:*"], 2.0)}
        except OSError:
            time.sleep(0.5)
    entries = ledger["ledger"]
    balanced = all(e["debit"] == e["credit"] for e in entries) and \
        sum(ledger["accounts"].values()) == OPENING * CUSTOMERS
    always(balanced, "every customer debit has a merchant credit",
           {"where": "audit", "charges": len(entries)})
    per_ref = {}
    for e in entries:
        per_ref[e["ref"]] = per_ref.get(e["ref"], 0) + 1
    twice = sorted(r for r, n in per_ref.items() if n > 1)
    always(not twice, "no payment is charged twice", {"payments": twice})
    missing = sorted(r for r in per_ref if r not in receipts)
    always(not missing, "every successful charge has its receipt", {"payments": missing})
    reachable("the audit ran", {"charges": len(entries)})
    log(f"audit: charges={len(entries)} receipts={len(receipts)} "
        f"charged-twice={','.join(twice) or '-'} without-receipt={','.join(missing) or '-'}")
    return 0


def main():
    role = sys.argv[1] if len(sys.argv) > 1 else ""
    if role == "bank":
        bank()
    elif role == "payments":
        payments(sys.argv[2], sys.argv[3])
    elif role == "client":
        count = int(os.environ.get("WIO_PAYMENTS", "12"))
        audit_at = float(os.environ.get("WIO_AUDIT_AT", "20"))
        return client(sys.argv[2], sys.argv[3], sys.argv[4], count, audit_at)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
