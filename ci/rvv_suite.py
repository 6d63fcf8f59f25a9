#!/usr/bin/env python3
"""The public RISC-V vector test generator (chipsalliance/riscv-vector-tests) on wio, with
QEMU standing in for the generator's reference simulator: every stage-1 program of the
generator is built with wio's environment (ci/rvv-suite/riscv_test.h), run on wio

    wio run --arch riscv64 --isa rv64gcv_zvl<VLEN>b --kernel TEST

and on QEMU's virt machine (qemu-system-riscv64 -cpu rv64,v=true,vlen=VLEN,elen=64), and
the two outputs are compared: at each point where the generator checks a result (its
"magic" instruction), the environment prints the result registers, element by element.
A test passes when wio ends it with exit status 0 (the program's own checks, such as the
vsetvl tests' expected vl, passed) and prints what QEMU prints. A test QEMU cannot run
has no reference and is counted apart. QEMU 7.2 aborts on the round-toward-zero
conversions (vfcvt.rtz.*, vfwcvt.rtz.*, vfncvt.rtz.*): their reference is the same program
with each such conversion replaced by its dynamic-rounding form under frm = RTZ (the spec
defines them as the same operation), built for QEMU only; wio runs the program as
generated.

The generator's programs are not in this repository (about 2 GB of assembly at VLEN 512):
generate them first, with Go 1.19 or later, from a checkout of the generator
(https://github.com/chipsalliance/riscv-vector-tests; its Go dependencies from the Go
module proxy or, offline, `go mod edit -replace` to local copies):

    cd riscv-vector-tests && go build -o build/generator
    build/generator -VLEN 512 -XLEN 64 -march gcv -configs configs/ -stage1output STAGE1

(`-march gcv`: the V extension's tests only; wio has no Zvfh, Zvbb or vector crypto.)

Usage: ci/rvv_suite.py WIO --stage1 STAGE1 --macros GENERATOR/macros/general
           [--vlen 512] [--only REGEX] [--jobs N] [--keep DIR] [--json FILE]

Exit status 0 when every test QEMU runs passes on wio, 1 when one does not, 2 for bad
usage or a missing tool. Needs riscv64-unknown-elf-gcc (apt-get install
gcc-riscv64-unknown-elf) and qemu-system-riscv64 (apt-get install qemu-system-misc).
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ENV = os.path.join(HERE, "rvv-suite")
BASE_ENV = os.path.join(HERE, "riscv-tests")
GCC = "riscv64-unknown-elf-gcc"
QEMU = "qemu-system-riscv64"
# Seconds a test may take on either machine (they take well under one).
TIMEOUT = 60


# A round-toward-zero conversion, as the generator writes it (one per line).
RTZ = re.compile(r"^(\s*)(vf[nw]?cvt)\.rtz\.(xu?\.f\.[vw]\b.*)$", re.MULTILINE)


def rtz_substitute(src, out):
    """For QEMU: `src` with each .rtz conversion run under frm = RTZ (t6, which the
    generator never uses, keeps frm), or None when it has none."""
    with open(src) as f:
        text = f.read()
    patched, n = RTZ.subn(r"\1fsrmi t6, 1; \2.\3; fsrm t6", text)
    if n == 0:
        return None
    path = os.path.join(out, os.path.basename(src)[:-2] + "-qemu.S")
    with open(path, "w") as f:
        f.write(patched)
    return path


def build(src, macros, out):
    """The test's ELF, or None and gcc's complaint."""
    elf = os.path.join(out, os.path.basename(src)[:-2])
    cmd = [
        GCC, "-march=rv64gcv", "-mabi=lp64d", "-static", "-mcmodel=medany",
        "-fvisibility=hidden", "-nostdlib", "-nostartfiles",
        # As the generator's own makefile builds them.
        "-DENTROPY=0xdeadbeef", "-DLFSR_BITS=9",
        f"-I{ENV}", f"-I{BASE_ENV}", f"-I{macros}",
        f"-T{os.path.join(BASE_ENV, 'link.ld')}", src, "-o", elf,
    ]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip()[-400:]
    return elf, ""


def run_qemu(elf, vlen):
    """QEMU's console output, or None and why."""
    cmd = [
        QEMU, "-machine", "virt", "-m", "128M", "-nographic", "-bios", "none",
        "-cpu", f"rv64,v=true,vlen={vlen},elen=64,vext_spec=v1.0", "-kernel", elf,
    ]
    try:
        r = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, "QEMU timed out"
    text = r.stdout.decode(errors="replace").replace("\r", "")
    if r.returncode != 0:
        tail = (r.stderr.decode(errors="replace") or text).strip().splitlines()[-1:]
        return None, f"QEMU exit {r.returncode}: {' '.join(tail)[:200]}"
    return text, ""


def run_wio(wio, elf, vlen, out):
    """wio's console output and exit status (None if the run did not end with one)."""
    summary = elf + ".json"
    cmd = [
        wio, "run", "--arch", "riscv64", "--isa", f"rv64gcv_zvl{vlen}b", "--kernel", elf,
        "--no-summary", "--summary-json", summary, "--max-virtual-secs", "10",
    ]
    try:
        r = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT, cwd=out)
    except subprocess.TimeoutExpired:
        return "", None, "wio timed out"
    try:
        with open(summary) as f:
            status = json.load(f).get("exit_status")
    except (OSError, ValueError):
        status = None
    note = "" if status is not None else r.stderr.decode(errors="replace").strip()[-300:]
    return r.stdout.decode(errors="replace"), status, note


def first_difference(a, b):
    """Which check (0-based) and line first differ between two outputs."""
    la, lb = a.splitlines(), b.splitlines()
    check = 0
    for i in range(max(len(la), len(lb))):
        x = la[i] if i < len(la) else "<end>"
        y = lb[i] if i < len(lb) else "<end>"
        if x != y:
            return f"check {check}, line {i + 1}: QEMU {x}, wio {y}"
        if x == "---":
            check += 1
    return "outputs equal"


def one(args, wio, src, out):
    name = os.path.basename(src)[:-2]
    elf, why = build(src, args.macros, out)
    if elf is None:
        return name, "build", why
    qemu_elf = elf
    substitute = rtz_substitute(src, out)
    if substitute is not None:
        qemu_elf, why = build(substitute, args.macros, out)
        if qemu_elf is None:
            return name, "build", why
    ref, why = run_qemu(qemu_elf, args.vlen)
    got, status, note = run_wio(wio, elf, args.vlen, out)
    if not args.keep:
        for f in (elf, elf + ".json", qemu_elf, substitute):
            if f and os.path.exists(f):
                os.remove(f)
    if ref is None:
        return name, "no-reference", why
    if status != 0:
        return name, "fail", f"wio exit status {status} {note}".rstrip()
    if got != ref:
        return name, "fail", first_difference(ref, got)
    how = " (QEMU's reference under frm = RTZ)" if substitute else ""
    return name, "pass", f"{ref.count('---')} checks{how}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("wio", help="the wio binary")
    ap.add_argument("--stage1", required=True, help="the generator's stage-1 .S files")
    ap.add_argument("--macros", required=True,
                    help="the generator's macros/general folder (its test_macros.h)")
    ap.add_argument("--vlen", type=int, default=512, help="the VLEN they were generated for")
    ap.add_argument("--only", help="run only tests whose name matches this regex")
    ap.add_argument("--keep", help="build into this folder and keep the ELFs")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--json", help="write every test's result here")
    args = ap.parse_args()
    for tool, pkg in ((GCC, "gcc-riscv64-unknown-elf"), (QEMU, "qemu-system-misc")):
        if shutil.which(tool) is None:
            print(f"rvv_suite.py: {tool} not found: apt-get install {pkg}", file=sys.stderr)
            return 2
    wio = os.path.abspath(args.wio)
    if not os.access(wio, os.X_OK):
        print(f"rvv_suite.py: {args.wio} is not an executable wio binary", file=sys.stderr)
        return 2
    if not os.path.isfile(os.path.join(args.macros, "test_macros.h")):
        print(f"rvv_suite.py: no test_macros.h in {args.macros}", file=sys.stderr)
        return 2
    try:
        names = sorted(f for f in os.listdir(args.stage1) if f.endswith(".S"))
    except OSError as e:
        print(f"rvv_suite.py: {args.stage1}: {e.strerror}", file=sys.stderr)
        return 2
    if args.only:
        names = [n for n in names if re.search(args.only, n)]
    if not names:
        print("rvv_suite.py: no test to run", file=sys.stderr)
        return 2
    out = args.keep or tempfile.mkdtemp(prefix="wio-rvv-suite-")
    os.makedirs(out, exist_ok=True)
    started = time.monotonic()
    results = []
    try:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = [pool.submit(one, args, wio, os.path.join(args.stage1, n), out)
                       for n in names]
            for i, f in enumerate(futures, 1):
                results.append(f.result())
                if i % 100 == 0 or i == len(futures):
                    print(f"rvv-suite: {i}/{len(futures)} tests, "
                          f"{time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(out, ignore_errors=True)

    counts = {}
    for _name, verdict, _note in results:
        counts[verdict] = counts.get(verdict, 0) + 1
    # Per instruction (the file name without its split number).
    insns = {}
    for name, verdict, _note in results:
        insn = name.rsplit("-", 1)[0]
        insns.setdefault(insn, set()).add(verdict)
    insn_pass = sum(1 for v in insns.values() if v == {"pass"})
    print(f"rvv-suite: {len(results)} tests of {len(insns)} instructions (VLEN {args.vlen}), "
          f"{time.monotonic() - started:.0f} s")
    for verdict in ("pass", "fail", "no-reference", "build"):
        print(f"  {verdict:13} {counts.get(verdict, 0)}")
    print(f"  instructions whose every test passed: {insn_pass}/{len(insns)}")
    for name, verdict, note in results:
        if verdict != "pass":
            print(f"{verdict.upper()}: {name}: {note}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{"test": n, "verdict": v, "note": t} for n, v, t in results], f,
                      indent=1)
    return 1 if counts.get("fail") or counts.get("build") else 0


if __name__ == "__main__":
    sys.exit(main())
