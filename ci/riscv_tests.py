#!/usr/bin/env python3
"""The official riscv-tests ISA suite on wio: builds every rv64 test of ci/riscv-tests/suite
(user level ui, um, ua, uf, ud, uc, uzba, uzbb, uzbs, uzbc; privileged mi, si) with wio's
own bare-metal environment (ci/riscv-tests/riscv_test.h) and runs each as a bare-metal ELF:

    wio run --arch riscv64 --kernel TEST --isa rv64gc_zba_zbb_zbc_zbs

A test passes when the run ends with exit status 0 (the test device's pass word). It then
runs the bit-manipulation tests again on a plain rv64gc hart, where each must fail at its
first bit-manipulation instruction (an illegal instruction): the extensions are off unless
asked for.

Usage: ci/riscv_tests.py WIO [--only SUBSTRING] [--keep DIR] [--jobs N]

Exit status 0 when every test does what this file expects (EXPECTED_FAILURES lists the
tests that fail, each with the spec's reason), 1 otherwise, 2 for bad usage or a missing
tool. Needs riscv64-linux-gnu-gcc (apt-get install gcc-riscv64-linux-gnu).
"""

import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ENV = os.path.join(HERE, "riscv-tests")
SUITE = os.path.join(ENV, "suite", "isa")
GCC = "riscv64-linux-gnu-gcc"

# Test group -> the -march it is built with (as the suite's own makefiles do).
GROUPS = {
    "rv64ui": "rv64g",
    "rv64um": "rv64g",
    "rv64ua": "rv64g",
    "rv64uf": "rv64g",
    "rv64ud": "rv64g",
    "rv64uc": "rv64gc",
    "rv64uzba": "rv64g_zba",
    "rv64uzbb": "rv64g_zbb",
    "rv64uzbs": "rv64g_zbs",
    "rv64uzbc": "rv64g_zbc",
    "rv64mi": "rv64g",
    "rv64si": "rv64g",
}
BITMANIP = ("rv64uzba", "rv64uzbb", "rv64uzbs", "rv64uzbc")
ISA = "rv64gc_zba_zbb_zbc_zbs"

# Tests that fail on wio, and why the spec allows it.
EXPECTED_FAILURES = {
    "rv64mi-p-breakpoint": "wio implements no debug triggers (Sdtrig is optional): tselect "
    "is not a CSR there, so the test's first access to it is an illegal instruction, which "
    "its trap handler counts as a failure of case 2",
}


def build(group, name, out):
    src = os.path.join(SUITE, group, name + ".S")
    elf = os.path.join(out, f"{group}-p-{name}")
    cmd = [
        GCC,
        f"-march={GROUPS[group]}_zicsr_zifencei",
        "-mabi=lp64",
        "-static",
        "-mcmodel=medany",
        "-fvisibility=hidden",
        "-nostdlib",
        "-nostartfiles",
        f"-I{ENV}",
        f"-I{os.path.join(SUITE, 'macros', 'scalar')}",
        f"-T{os.path.join(ENV, 'link.ld')}",
        src,
        "-o",
        elf,
    ]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"building {group}/{name}.S failed:\n{r.stderr}")
    return elf


def run(wio, elf, isa, out):
    """The test's exit status (None if the run did not end with one) and a note."""
    summary = elf + f".{isa}.json"
    cmd = [
        wio, "run", "--arch", "riscv64", "--kernel", elf, "--isa", isa,
        "--quiet", "--no-summary", "--summary-json", summary,
        "--max-virtual-secs", "1",
    ]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=out)
    try:
        with open(summary) as f:
            s = json.load(f)
    except (OSError, ValueError):
        return None, f"no summary (wio exit {r.returncode}): {r.stderr.strip()[-300:]}"
    status = s.get("exit_status")
    if status is None:
        return None, f"wio exit {r.returncode}: {s.get('error') or r.stderr.strip()[-300:]}"
    return status, ""


def describe(status):
    if status is None:
        return "no exit status"
    if status == 0:
        return "pass"
    if status >= 1000:
        return f"unexpected trap in case {status - 1000}"
    return f"failed case {status}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("wio", help="the wio binary")
    ap.add_argument("--only", help="run only tests whose name contains this")
    ap.add_argument("--keep", help="build into this folder and keep it")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    if shutil.which(GCC) is None:
        print(f"riscv_tests.py: {GCC} not found: apt-get install gcc-riscv64-linux-gnu", file=sys.stderr)
        return 2
    wio = os.path.abspath(args.wio)
    if not os.access(wio, os.X_OK):
        print(f"riscv_tests.py: {args.wio} is not an executable wio binary", file=sys.stderr)
        return 2
    out = args.keep or tempfile.mkdtemp(prefix="wio-riscv-tests-")
    os.makedirs(out, exist_ok=True)
    tests = [
        (g, f[:-2])
        for g in GROUPS
        for f in sorted(os.listdir(os.path.join(SUITE, g)))
        if f.endswith(".S") and (not args.only or args.only in f"{g}-p-{f[:-2]}")
    ]
    if not tests:
        print("riscv_tests.py: no test matches", file=sys.stderr)
        return 2
    started = time.monotonic()
    try:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            elfs = list(pool.map(lambda t: build(t[0], t[1], out), tests))
            runs = [(g, n, elf, ISA) for (g, n), elf in zip(tests, elfs)]
            runs += [(g, n, elf, "rv64gc") for (g, n), elf in zip(tests, elfs) if g in BITMANIP]
            results = list(pool.map(lambda r: run(wio, r[2], r[3], out), runs))
    except RuntimeError as e:
        print(f"riscv_tests.py: {e}", file=sys.stderr)
        return 1
    finally:
        if not args.keep:
            shutil.rmtree(out, ignore_errors=True)

    bad = []
    counts = {}
    for (g, n, _elf, isa), (status, note) in zip(runs, results):
        name = f"{g}-p-{n}"
        key = g if isa == ISA else f"{g} on rv64gc"
        passed, total = counts.get(key, (0, 0))
        if isa == ISA:
            ok = status == 0
            if name in EXPECTED_FAILURES:
                if ok:
                    bad.append(f"{name}: passes, but EXPECTED_FAILURES says it fails: update it")
                else:
                    print(f"expected failure: {name} ({describe(status)}): {EXPECTED_FAILURES[name]}")
            elif not ok:
                bad.append(f"{name} ({isa}): {describe(status)} {note}".rstrip())
        else:
            # Off: the first bit-manipulation instruction must trap as illegal.
            ok = status is not None and status >= 1000
            if not ok:
                bad.append(f"{name} (rv64gc): {describe(status)}, expected an illegal instruction {note}".rstrip())
        good = status == 0 if isa == ISA else status is not None and status >= 1000
        counts[key] = (passed + good, total + 1)

    print(f"riscv-tests ({len(tests)} tests, {len(runs)} runs, {time.monotonic() - started:.1f} s; suite commit in ci/riscv-tests/suite/ORIGIN)")
    for key, (passed, total) in counts.items():
        what = "trapped as illegal" if key.endswith("on rv64gc") else "passed"
        print(f"  {key:20} {passed:3}/{total} {what}")
    for b in bad:
        print(f"UNEXPECTED: {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
