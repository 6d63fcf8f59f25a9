#!/usr/bin/env python3
"""Exploration throughput of two wio binaries, side by side in one run.

For each binary (this build and a baseline, e.g. one built from the revision an issue
started from by ci/bench_explore.sh) it takes its own snapshots with the same commands,
then times `wio explore --jobs J` from them, the two binaries in turn each round:

  - idle-heavy: the small riscv64 guest booted with wio.idle=1, branches from
    "workload: idle start" to "workload: idle done" (a one-second sleep: little guest work
    per branch, so the fixed cost of a branch dominates);
  - compute-heavy: the same guest from "workload: date" to "workload: worker B step 1"
    (busy loops: the engine's speed inside a branch);
  - payments: the payment world (images/payments/world.toml, seed 1) from its
    setup-complete snapshot, each branch to the world's end (4 nodes, about 25 virtual s).

It prints branches per minute for each binary, the ratio (this / baseline, above 1:
faster), the median over --rounds, and whether both binaries gave every seed the same trace
hash (they must, unless the baseline predates a change of guest-visible behaviour).

Usage: ci/bench_explore.py --wio PATH --baseline PATH [--rounds N] [--jobs J]
                           [--cases idle,compute,payments] [--idle-branches N]
                           [--compute-branches N] [--payments-branches N] [--json FILE]
Needs the riscv64 guests (images/build-all-riscv64.sh) and, for payments, the payments
root disk ($WIO_CACHE/riscv64-guests.env names both).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CMDLINE = ("console=ttyS0 earlycon=sbi kfence.sample_interval=0 panic=-1 "
           "random.trust_cpu=off wio.idle=1")
HERE = os.path.dirname(os.path.abspath(__file__))
WORLD = os.path.join(HERE, "..", "images", "payments", "world.toml")


def guests_env():
    """The guest artifacts' environment ($WIO_CACHE/riscv64-guests.env) over ours."""
    cache = os.environ.get("WIO_CACHE", os.path.expanduser("~/.cache/wio"))
    path = os.path.join(cache, "riscv64-guests.env")
    env = dict(os.environ)
    if not os.path.exists(path):
        sys.exit(f"bench_explore: {path} is missing: build the guests with "
                 "images/build-all-riscv64.sh first")
    with open(path) as f:
        for line in f:
            if "=" in line:
                k, v = line.strip().split("=", 1)
                env.setdefault(k, v)
    return env


def run(cmd, env, cwd, what):
    """Runs cmd quietly; exits naming `what` and the output's tail when it fails."""
    p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        tail = "\n".join(p.stdout.splitlines()[-15:])
        sys.exit(f"bench_explore: {what} failed (exit {p.returncode}): {' '.join(cmd)}\n{tail}")
    return p.stdout


def snapshots(wio, tag, env, work):
    """The three snapshots `wio` takes for the cases: {case: path}."""
    snaps = {}
    for case, at in (("idle", "workload: idle start"), ("compute", "workload: date")):
        path = os.path.join(work, f"{case}-{tag}.snap")
        run([wio, "run", "--arch", "riscv64", "--seed", "1", "--cmdline", CMDLINE,
             "--snapshot-at", f"console:{at}", "--snapshot-out", path,
             "--until", f"console:{at}"], env, work, f"{tag}: the {case} snapshot")
        snaps[case] = path
    if env.get("RISCV64_PAYMENTS_ROOTFS"):
        path = os.path.join(work, f"payments-{tag}.snap")
        run([wio, "sim", WORLD, "--seed", "1", "--quiet", "--snapshot-at", "setup-complete",
             "--snapshot-out", path, "--until", "console:client: p0:"], env, work,
            f"{tag}: the payments snapshot")
        snaps["payments"] = path
    return snaps


UNTIL = {"idle": "console:workload: idle done",
         "compute": "console:workload: worker B step 1",
         "payments": None}


def explore(wio, snap, case, branches, jobs, env, work, tag):
    """Branches per minute of one exploration, and each seed's trace hash."""
    report = os.path.join(work, f"report-{case}-{tag}.json")
    cmd = [wio, "explore", "--from", snap, "--seeds", f"0..{branches}", "--jobs", str(jobs),
           "--report", report]
    if UNTIL[case]:
        cmd += ["--until", UNTIL[case]]
    t = time.monotonic()
    p = subprocess.run(cmd, env=env, cwd=work, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    secs = time.monotonic() - t
    # 1: some seed failed a promise or a check; the timing still stands.
    if p.returncode not in (0, 1):
        tail = "\n".join(p.stdout.splitlines()[-15:])
        sys.exit(f"bench_explore: {tag} {case} exploration failed (exit {p.returncode})\n{tail}")
    with open(report) as f:
        results = json.load(f)["results"]
    hashes = {r["seed"]: r["trace_hash"] for r in results}
    return branches / secs * 60.0, hashes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wio", required=True, help="this build's wio binary")
    ap.add_argument("--baseline", required=True, help="the baseline wio binary")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cases", default="idle,compute,payments")
    ap.add_argument("--idle-branches", type=int, default=600)
    ap.add_argument("--compute-branches", type=int, default=60)
    ap.add_argument("--payments-branches", type=int, default=16)
    ap.add_argument("--json", help="also write the figures as JSON to FILE")
    a = ap.parse_args()
    cases = [c for c in a.cases.split(",") if c]
    for c in cases:
        if c not in UNTIL:
            sys.exit(f"bench_explore: unknown case {c!r} (idle, compute, payments)")
    env = guests_env()
    sizes = {"idle": a.idle_branches, "compute": a.compute_branches,
             "payments": a.payments_branches}
    bins = {"baseline": os.path.abspath(a.baseline), "this": os.path.abspath(a.wio)}
    with tempfile.TemporaryDirectory(prefix="wio-bench-explore-") as work:
        snaps = {tag: snapshots(b, tag, env, work) for tag, b in bins.items()}
        figures = {}
        for case in cases:
            if case not in snaps["this"]:
                print(f"{case}: skipped (no RISCV64_PAYMENTS_ROOTFS: build images/payments)")
                continue
            rates = {"baseline": [], "this": []}
            same = True
            for r in range(a.rounds):
                seen = {}
                for tag in ("baseline", "this"):
                    rate, hashes = explore(bins[tag], snaps[tag][case], case, sizes[case],
                                           a.jobs, env, work, tag)
                    rates[tag].append(rate)
                    seen[tag] = hashes
                    print(f"  {case} round {r + 1} {tag}: {rate:,.1f} branches/min", flush=True)
                same &= seen["baseline"] == seen["this"]
            base = statistics.median(rates["baseline"])
            this = statistics.median(rates["this"])
            ratios = [t / b for t, b in zip(rates["this"], rates["baseline"])]
            figures[case] = {"branches": sizes[case], "baseline_per_min": base,
                             "this_per_min": this, "ratio": statistics.median(ratios),
                             "ratios": ratios, "same_traces": same}
            print(f"{case:9} {sizes[case]:5} branches  baseline {base:9,.1f}/min  "
                  f"this {this:9,.1f}/min  ratio {statistics.median(ratios):5.2f}  "
                  f"traces {'identical' if same else 'DIFFER'}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"jobs": a.jobs, "rounds": a.rounds, "cases": figures}, f, indent=1)


if __name__ == "__main__":
    main()
