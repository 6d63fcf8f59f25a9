#!/usr/bin/python3
"""Once, before the drivers: the counter starts at 0 (retried until the service answers)."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from helper_kv import ACKED, request  # noqa: E402

open(ACKED, "w").close()
while request("PUT", "/kv/counter", body="0")[0] != 200:
    time.sleep(0.5)
print("kv first: counter reset", flush=True)
