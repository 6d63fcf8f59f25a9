#!/usr/bin/env python3
"""Side-by-side: seeds per minute of one exploration on a single-node Slurm cluster
(deploy/slurm, a job array of --tasks shards, 1 CPU each, and the dependent merge) against
`wio explore --jobs N` on the same machine (N = its cores), over the same seeds of the
same riscv64 snapshot. Prints both rates and their ratio (the engine's overhead), and
checks that the two reports agree seed by seed.

Usage: ci/bench_cluster.py [--wio PATH] [--seeds 0..128] [--tasks 8] [--json FILE]
Needs: root (local-cluster.sh installs slurm-wlm and munge when missing), the built
riscv64 guests (images/build-all-riscv64.sh).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SLURM = os.path.join(HERE, "..", "deploy", "slurm")


def run(cmd, env=None, check=True):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if check and p.returncode != 0:
        sys.exit(f"bench_cluster: {' '.join(cmd)} failed ({p.returncode}): {p.stderr[-2000:]}")
    return p


def outcomes(path):
    with open(path) as f:
        r = json.load(f)
    return [(x["seed"], x["ended"], x["exit_status"], x["virtual_ns"], x["trace_hash"])
            for x in r["results"]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wio", default=os.path.join(HERE, "..", "target", "release", "wio"))
    ap.add_argument("--seeds", default="0..128")
    ap.add_argument("--tasks", type=int, default=8)
    ap.add_argument("--json")
    a = ap.parse_args()
    wio = os.path.abspath(a.wio)
    start, end = (int(x) for x in a.seeds.split(".."))
    n = end - start
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="wio-bench-cluster-") as d:
        snap = os.path.join(d, "start.snap")
        run([wio, "run", "--arch", "riscv64", "--seed", "1", "--quiet", "--snapshot-at",
             "console:wio-init: start", "--snapshot-out", snap])
        print(f"bench: wio explore --jobs {cores}, {n} seeds…", file=sys.stderr)
        local = os.path.join(d, "local.json")
        t = time.monotonic()
        run([wio, "explore", "--from", snap, "--seeds", a.seeds, "--jobs", str(cores),
             "--report", local], check=False)
        local_s = time.monotonic() - t
        cluster = os.path.join(d, "cluster")
        out = run([os.path.join(SLURM, "local-cluster.sh"), "start", cluster]).stdout
        conf = [l.split("=", 1)[1] for l in out.splitlines() if l.startswith("export SLURM_CONF=")][0]
        env = dict(os.environ, SLURM_CONF=conf, WIO=wio)
        try:
            print(f"bench: Slurm array of {a.tasks} tasks, {n} seeds…", file=sys.stderr)
            shared = os.path.join(d, "shared")
            t = time.monotonic()
            sub = run([os.path.join(SLURM, "submit.sh"), snap, a.seeds, str(a.tasks), shared], env=env).stdout
            merge = [l.split("=", 1)[1] for l in sub.splitlines() if l.startswith("MERGE_JOB=")][0]
            while run(["squeue", "-h", "-j", merge, "-o", "%T"], env=env, check=False).stdout.strip():
                time.sleep(0.2)
            slurm_s = time.monotonic() - t
        finally:
            run([os.path.join(SLURM, "local-cluster.sh"), "stop", cluster], check=False)
        same = outcomes(local) == outcomes(os.path.join(shared, "report.json"))
    local_rate = n * 60 / local_s
    slurm_rate = n * 60 / slurm_s
    print(f"wio explore --jobs {cores}        {local_rate:10.1f} seeds/min ({local_s:.1f} s)")
    print(f"Slurm, {a.tasks} tasks x 1 CPU      {slurm_rate:10.1f} seeds/min ({slurm_s:.1f} s, submit to merged)")
    print(f"ratio Slurm / explore        {slurm_rate / local_rate:10.3f}  (the engine's overhead)")
    print(f"reports agree seed by seed   {'yes' if same else 'NO'}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"seeds": n, "tasks": a.tasks, "cores": cores, "explore_seeds_per_min": local_rate,
                       "slurm_seeds_per_min": slurm_rate, "ratio": slurm_rate / local_rate,
                       "reports_agree": same}, f)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
