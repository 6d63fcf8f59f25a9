"""What the kv template's commands share (helper_: never run by the test composer)."""

import http.client
import os
import time

KV = ("kv", 8080)
# Every acknowledged increment of this node's drivers, one line each.
ACKED = "/tmp/kv-acked"


def request(method, path, body=None, timeout=2.0):
    """(status, text), or (None, error name) when the service could not be reached."""
    conn = http.client.HTTPConnection(*KV, timeout=timeout)
    try:
        conn.request(method, path, body=body)
        r = conn.getresponse()
        return r.status, r.read().decode().strip()
    except OSError as e:
        return None, type(e).__name__
    finally:
        conn.close()


def acked():
    try:
        with open(ACKED) as f:
            return sum(1 for _ in f)
    except FileNotFoundError:
        return 0


def read_counter(deadline_s):
    """The counter, retried until the service answers or the deadline passes."""
    end = time.monotonic() + deadline_s
    while True:
        status, text = request("GET", "/kv/counter")
        if status == 200:
            return int(text)
        if time.monotonic() > end:
            return None
        time.sleep(0.5)


def check_no_lost_increment(moment):
    """The promise: the counter holds every increment the service acknowledged."""
    from antithesis.assertions import always, reachable

    value = read_counter(30)
    n = acked()
    if value is None:
        reachable(f"{moment}: the service did not answer", {"acked": n})
        return 0
    print(f"kv {moment}: counter={value} acknowledged={n}", flush=True)
    always(value >= n, "no acknowledged increment is lost", {"counter": value, "acknowledged": n, "at": moment})
    return 0
