"""The payment scenario's services against a simulated bank (images/payments/simbank.toml).

    python3 simbank.py payments BANK REDIS
    python3 simbank.py client BANK PAY REDIS

Runs payments.py (the image's /usr/share/wio/payments.py, unchanged: the same payment service,
with the same planted bugs) with its calls to the bank made over HTTP to a dependency that
wio itself serves ([[dependency]] bank in the world file) instead of the Python bank:

    GET  /ping                  the bank is up
    PUT  /charges/REF/KEY       a charge; the same KEY again is the same charge (idempotent),
                                so a retry without the payment's key is a second charge
    GET  /charges/              the charges' REF/KEY, one per line (the audit's ledger)
    GET  /charges/REF/KEY       one charge: {"customer": ..., "amount": ...}

A charge the bank does not answer (a timeout, before or after applying), a refused or
reset connection raise OSError as the Python bank's would; an error status is "busy, try
again". `wio.bug=...` on the node's kernel command line selects the service's defect, as
with the Python bank.
"""

import http.client
import importlib.machinery
import importlib.util
import json
import os
import sys

SERVICE = "/usr/share/wio/payments.py"
# What /usr/bin/wio-payments sets before it runs the service: the SDK's promise catalog.
os.environ.setdefault("ANTITHESIS_ASSERTION_CATALOG", "/usr/share/wio/payments.catalog.json")


def bug_from_cmdline():
    """WIO_BUG from `wio.bug=` on the kernel command line (a world's --node-args)."""
    try:
        with open("/proc/cmdline") as f:
            for word in f.read().split():
                if word.startswith("wio.bug="):
                    os.environ["WIO_BUG"] = word[len("wio.bug="):]
    except OSError:
        pass


def load_service():
    loader = importlib.machinery.SourceFileLoader("payments", SERVICE)
    spec = importlib.util.spec_from_loader("payments", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def http_call(host, port, method, path, body, timeout):
    """One HTTP request; (status, body bytes). OSError on a refused, reset or silent bank."""
    c = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        c.request(method, path, body=body, headers=headers)
        r = c.getresponse()
        return r.status, r.read()
    except http.client.HTTPException as e:
        raise ConnectionError(f"bad answer from the bank: {type(e).__name__}") from e
    finally:
        c.close()


def bank_call(p, host, port, req, timeout):
    op = req.get("op")
    if op == "ping":
        status, _ = http_call(host, port, "GET", "/ping", None, timeout)
        return {"ok": status == 200}
    if op == "charge":
        # No key (the no-idempotency defect): a charge of its own, as the Python bank
        # applies a keyless retry again.
        key = req.get("key") or "n%d" % (p.get_random() % 10**12)
        body = json.dumps({"customer": req["customer"], "amount": int(req["amount"])})
        status, answer = http_call(host, port, "PUT", f"/charges/{req['ref']}/{key}", body, timeout)
        if status >= 300:
            return {"ok": False, "busy": True, "error": f"bank status {status}"}
        return json.loads(answer)
    if op == "ledger":
        status, listing = http_call(host, port, "GET", "/charges/", None, timeout)
        if status != 200:
            raise ConnectionError(f"bank status {status}")
        entries = []
        accounts = {f"c{i}": p.OPENING for i in range(p.CUSTOMERS)}
        accounts["merchant"] = 0
        for line in listing.decode().split("\n"):
            if not line:
                continue
            status, value = http_call(host, port, "GET", f"/charges/{line}", None, timeout)
            if status != 200:
                raise ConnectionError(f"bank status {status}")
            charge = json.loads(value)
            ref, key = line.split("/", 1)
            entries.append({"id": len(entries) + 1, "ref": ref, "key": key,
                            "customer": charge["customer"], "debit": charge["amount"],
                            "credit": charge["amount"]})
            accounts[charge["customer"]] -= charge["amount"]
            accounts["merchant"] += charge["amount"]
        return {"ok": True, "ledger": entries, "accounts": accounts}
    return {"ok": False, "error": "unknown op"}


def main():
    bug_from_cmdline()
    p = load_service()
    line_call = p.call

    def call(host, port, req, timeout):
        if port == p.BANK_PORT:
            return bank_call(p, host, port, req, timeout)
        return line_call(host, port, req, timeout)

    p.call = call
    sys.argv = [SERVICE] + sys.argv[1:]
    return p.main()


if __name__ == "__main__":
    sys.exit(main())
