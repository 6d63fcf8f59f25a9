#!/usr/bin/python3
"""Any time: a read while the drivers write."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from antithesis.assertions import sometimes  # noqa: E402
from helper_kv import request  # noqa: E402

status, text = request("GET", "/kv/counter")
sometimes(status == 200, "the counter was read while the drivers ran", {"status": status})
