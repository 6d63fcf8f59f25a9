"""A small Python program instrumented with the Antithesis SDK (PyPI package `antithesis`),
run unchanged in wio's --python root disk (`wio.pysdk=1` on the kernel command line).

A key-value store with a primary and a replica: a seeded workload of puts, deletes and
syncs, with promises about it. The SDK loads /usr/lib/libvoidstar.so, so its assertions go
to wio's promise channel and its random numbers come from the run's seed.

    antithesis_demo.py [ok|bug]     bug: a sync loses the newest write (an `always` breaks)
"""

import sys

import antithesis._internal
from antithesis.assertions import always, reachable, sometimes, unreachable
from antithesis.lifecycle import send_event, setup_complete
from antithesis.random import get_random, random_choice

KEYS = ("a", "b", "c", "d")
OPS = 24


def main() -> int:
    bug = len(sys.argv) > 1 and sys.argv[1] == "bug"
    # Which handler the SDK chose: VoidstarHandler when it loaded libvoidstar.so.
    print("pysdk: handler:", type(antithesis._internal._HANDLER).__name__, flush=True)
    primary = {k: 0 for k in KEYS}
    replica = dict(primary)
    setup_complete({"keys": len(KEYS)})

    draws = [get_random() for _ in range(4)]
    print("pysdk: random:", " ".join(f"{d:016x}" for d in draws), flush=True)

    ops = []
    pending = []  # writes the replica has not seen
    deleted = 0
    for step in range(OPS):
        op = random_choice(["put", "put", "delete", "sync"])
        key = random_choice(list(KEYS))
        ops.append(op)
        if op == "put":
            primary[key] = get_random() % 1000
            pending.append(key)
        elif op == "delete":
            existed = key in primary
            primary.pop(key, None)
            pending.append(key)
            deleted += existed
            sometimes(existed, "a delete removed a key", {"key": key, "step": step})
        else:
            sync(primary, replica, pending, bug)
            always(replica == primary, "the replica matches the primary after a sync",
                   {"step": step, "primary": primary, "replica": replica})
    sync(primary, replica, pending, bug)
    always(replica == primary, "the replica matches the primary after a sync",
           {"step": OPS, "primary": primary, "replica": replica})
    if any(k not in KEYS for k in replica):
        unreachable("the replica holds a key nobody wrote", {"replica": replica})
    reachable("the workload finished", {"ops": OPS, "deleted": deleted})
    send_event("pysdk_demo", {"ops": " ".join(ops)})
    print("pysdk: ops:", " ".join(ops), flush=True)
    print("pysdk: done", flush=True)
    return 0


def sync(primary: dict, replica: dict, pending: list, bug: bool) -> None:
    """Copies the pending writes to the replica (with the bug: all but the newest)."""
    todo = pending[:-1] if bug and pending else pending
    for key in todo:
        if key in primary:
            replica[key] = primary[key]
        else:
            replica.pop(key, None)
    pending.clear()


if __name__ == "__main__":
    sys.exit(main())
