#!/usr/bin/python3
"""A driver: two clients at once, each sending a few increments; every acknowledged one is
noted in /tmp/kv-acked (several of these drivers may run at once, too)."""
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from antithesis.assertions import sometimes  # noqa: E402
from antithesis.random import get_random  # noqa: E402
from helper_kv import ACKED, request  # noqa: E402

n = 5 + get_random() % 10
acked = []
lock = threading.Lock()


def client():
    for _ in range(n):
        status, text = request("POST", "/kv/counter/incr")
        if status == 200:
            with lock:
                acked.append(text)
                with open(ACKED, "a") as f:
                    f.write(text + "\n")


clients = [threading.Thread(target=client) for _ in range(2)]
for c in clients:
    c.start()
for c in clients:
    c.join()
print(f"kv driver: {len(acked)} of {2 * n} increments acknowledged", flush=True)
sometimes(len(acked) > 0, "an increment was acknowledged", {"ok": len(acked), "tried": 2 * n})
