#!/usr/bin/env python3
"""Side-by-side boot benchmark: Debian's riscv64 kernel under Debian's OpenSBI (M-mode
firmware, `wio run --firmware fw_dynamic.bin`) against the same kernel on wio's built-in
SBI (no firmware), same initramfs, same seed, alternating --rounds times.

Prints, per setup, the median wall time and the virtual time at which the console showed
"Run /init as init process" and "wio-init: done" (from the run summary's markers), the
instructions retired, and the ratios firmware / built-in. The virtual times are exact and
repeat run to run; the wall times are this host's.

Usage: ci/bench_firmware.py [--wio PATH] [--rounds N] [--seed N] [--json FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARKERS = ["Run /init as init process", "wio-init: done"]


def artifacts():
    out = subprocess.run(["bash", os.path.join(ROOT, "images", "build-all-riscv64.sh")],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def boot(wio, kv, seed, firmware):
    with tempfile.TemporaryDirectory() as d:
        summary = os.path.join(d, "s.json")
        cmd = [wio, "run", "--arch", "riscv64", "--kernel", kv["RISCV64_DEBIAN_IMAGE"],
               "--initrd", kv["RISCV64_DEBIAN_INITRAMFS"], "--seed", str(seed), "--quiet",
               "--no-summary", "--summary-json", summary]
        if firmware:
            cmd += ["--firmware", kv["RISCV64_OPENSBI_FW_DYNAMIC"]]
        # Markers: the summary records when the console first showed the init's lines.
        subprocess.run(cmd, check=True)
        with open(summary) as f:
            s = json.load(f)
    marks = {m["line"]: m for m in s.get("markers", [])}
    return {
        "wall_s": s["wall_ns"] / 1e9,
        "virtual_s": s["virtual_ns"] / 1e9,
        "instructions": s["instructions"],
        "init_virtual_s": marks.get(MARKERS[0], {}).get("virtual_ns", 0) / 1e9,
        "init_wall_s": marks.get(MARKERS[0], {}).get("wall_ns", 0) / 1e9,
        "done_virtual_s": marks.get(MARKERS[1], {}).get("virtual_ns", 0) / 1e9,
        "done_wall_s": marks.get(MARKERS[1], {}).get("wall_ns", 0) / 1e9,
        "trace_hash": s["trace_hash"],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wio", default=os.path.join(ROOT, "target", "release", "wio"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json")
    a = ap.parse_args()
    if not os.path.exists(a.wio):
        sys.exit(f"no wio binary at {a.wio}: cargo build --release -p wio (or --wio PATH)")
    kv = artifacts()
    runs = {"built-in SBI": [], "OpenSBI fw_dynamic": []}
    for r in range(a.rounds):
        for name in runs:
            res = boot(a.wio, kv, a.seed, name != "built-in SBI")
            runs[name].append(res)
            print(f"round {r + 1} {name:20} wall {res['wall_s']:6.2f} s  virtual {res['virtual_s']:.3f} s  "
                  f"init at {res['init_virtual_s']:.3f} s virtual", file=sys.stderr)
    med = {n: {k: statistics.median(x[k] for x in v) for k in v[0] if k != "trace_hash"}
           for n, v in runs.items()}
    for n, v in runs.items():
        hashes = {x["trace_hash"] for x in v}
        if len(hashes) != 1:
            sys.exit(f"{n}: {len(hashes)} different trace hashes over {a.rounds} rounds")
    print(f"{'setup':22} {'wall to init':>12} {'wall to done':>12} {'virtual to init':>15} "
          f"{'virtual to done':>15} {'instructions':>14}")
    for n, m in med.items():
        print(f"{n:22} {m['init_wall_s']:11.2f}s {m['done_wall_s']:11.2f}s {m['init_virtual_s']:14.3f}s "
              f"{m['done_virtual_s']:14.3f}s {int(m['instructions']):14,}")
    b, f = med["built-in SBI"], med["OpenSBI fw_dynamic"]
    ratios = {k: (f[k] / b[k] if b[k] else None) for k in
              ["init_wall_s", "done_wall_s", "init_virtual_s", "done_virtual_s", "instructions"]}
    print("ratio OpenSBI / built-in: " + ", ".join(f"{k} {v:.3f}" for k, v in ratios.items() if v))
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"rounds": a.rounds, "seed": a.seed, "median": med, "ratio": ratios}, fh, indent=1)


if __name__ == "__main__":
    main()
