#!/usr/bin/env python3
"""Side-by-side boot benchmark of riscv64 guests: wio against QEMU.

For each guest (the small kernel and Debian's kernel, with their initramfs from
images/build-all-riscv64.sh) it boots the same kernel and initramfs under
  - wio (`wio run --arch riscv64`),
  - qemu-system-riscv64 plain TCG,
  - qemu-system-riscv64 deterministic mode (-icount shift=0,sleep=off -seed N -rtc ...,clock=vm),
and prints the wall time until the console shows "Run /init", "wio-init: start" and
"wio-init: done", plus wio's MIPS. QEMU boots through its bundled OpenSBI firmware.

--guests cpython (not in the default list: it takes minutes) is the large-program case:
CPython 3.13 running modules of its own test suite (`python3 -m test`, --cpython-tests,
default test_list,test_dict,test_json,test_re) on the small kernel from an ext4 root disk
with Debian's python3.13 and its test suite (images/riscv64-rootfs.sh --cpython-tests,
built and cached on first use), under the same engines; it prints the wall seconds from
"bench: cpython start" to "bench: cpython done" and the ratio of each engine to QEMU
-icount (below 1: faster than QEMU's deterministic mode).

With --rounds N every engine boots each guest N times, all engines in turn each round, and
the medians are printed. With --baseline PATH (another wio binary, e.g. one built from an
earlier commit) both wio binaries boot in those rounds and their ratio (this wio /
baseline) is printed too: how a change moved the speed, measured side by side.

Usage: ci/bench_riscv64.py [--wio PATH] [--baseline PATH] [--rounds N] [--guests small,debian,cpython]
                           [--cpython-tests A,B] [--seed N] [--json FILE] [--no-io]
Needs: qemu-system-riscv64 (Debian package qemu-system-misc) for the QEMU columns.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

MARKERS = ["Run /init as init process", "wio-init: start", "wio-init: done",
           "bench: disk start", "bench: disk done", "bench: net start", "bench: net done",
           "bench: cpython start", "bench: cpython done"]
DISK_BENCH_MIB = 32  # the workload writes then reads 16 MiB with O_DIRECT
PINGS = 100
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def guests():
    out = subprocess.run(["bash", os.path.join(ROOT, "images", "build-all-riscv64.sh")],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    kv = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    return {
        "small": (kv["RISCV64_SMALL_IMAGE"], kv["RISCV64_SMALL_INITRAMFS"]),
        "debian": (kv["RISCV64_DEBIAN_IMAGE"], kv["RISCV64_DEBIAN_INITRAMFS"]),
        "rootfs": (kv["RISCV64_SMALL_IMAGE"], kv["RISCV64_ROOTFS"]),
    }


def timed(cmd, timeout):
    """Runs cmd, returns {marker: wall seconds} for the first line containing each marker."""
    start = time.monotonic()
    seen = {}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace")
            now = time.monotonic() - start
            for m in MARKERS:
                if m in line and m not in seen:
                    seen[m] = now
            if "wio-init: done" in seen and time.monotonic() - start > timeout:
                break
            if time.monotonic() - start > timeout:
                break
        # QEMU keeps running after poweroff without -no-shutdown handling; give it a moment.
        try:
            proc.wait(timeout=max(1.0, timeout - (time.monotonic() - start)))
        except subprocess.TimeoutExpired:
            proc.kill()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    seen["total"] = time.monotonic() - start
    return seen


def wio_boot(binary, args, guest, timeout=None):
    """One run under the wio at `binary` of the guest `wio run` options `guest` name:
    marker times, MIPS, instructions."""
    summary = f"/tmp/wio-bench-{os.getpid()}.json"
    row = timed([binary, "run", "--arch", "riscv64", "--seed", str(args.seed)] + guest +
                ["--summary-json", summary, "--no-summary"], timeout or args.timeout)
    with open(summary) as f:
        s = json.load(f)
    os.unlink(summary)
    row["mips"] = s["instructions"] / (s["wall_ns"] / 1e9) / 1e6
    row["instructions"] = s["instructions"]
    return row


def median_row(rows):
    """Per key, the median over rows (instructions must agree: it is deterministic)."""
    out = {}
    for key in rows[0]:
        values = sorted(r[key] for r in rows if key in r)
        out[key] = values[len(values) // 2]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wio", default=os.path.join(ROOT, "target", "release", "wio"))
    ap.add_argument("--guests", default="small,debian")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--json")
    ap.add_argument("--baseline", help="another wio binary to time side by side with --wio")
    ap.add_argument("--rounds", type=int, default=1,
                    help="boots per engine, every engine in turn each round (medians)")
    ap.add_argument("--no-io", action="store_true", help="skip the in-guest disk and network bench")
    ap.add_argument("--cpython-tests", default="test_list,test_dict,test_json,test_re",
                    help="CPython test modules the cpython guest runs")
    args = ap.parse_args()
    for b in [args.wio] + ([args.baseline] if args.baseline else []):
        if not os.path.exists(b):
            sys.exit(f"no wio binary at {b}: cargo build --release -p wio")
    if args.rounds < 1:
        sys.exit("--rounds must be at least 1")
    qemu = shutil.which("qemu-system-riscv64")
    if not qemu:
        print("SKIPPED: QEMU columns: qemu-system-riscv64 not installed (apt-get install qemu-system-misc)")
    table = {}
    for name in [g for g in args.guests.split(",") if g]:
        if name == "cpython":
            cpython_bench(args, qemu, table)
            continue
        if name not in ("small", "debian"):
            sys.exit(f"unknown guest {name}: small, debian or cpython")
        kernel, initrd = guests()[name]
        cmdline = "console=ttyS0 kfence.sample_interval=0 panic=-1"
        binaries = [("wio", args.wio)] + ([("wio-baseline", args.baseline)] if args.baseline else [])
        engines = [(eng, lambda b=binary: wio_boot(b, args, ["--kernel", kernel, "--initrd", initrd]))
                   for eng, binary in binaries]
        if qemu:
            base = [qemu, "-M", "virt", "-m", "256", "-nographic", "-no-reboot", "-bios", "default",
                    "-kernel", kernel, "-initrd", initrd, "-append", cmdline]
            icount = base + ["-icount", "shift=0,sleep=off", "-seed", str(args.seed),
                             "-rtc", "base=2026-01-01T00:00:00,clock=vm"]
            engines += [("qemu-tcg", lambda: timed(base, args.timeout)),
                        ("qemu-icount", lambda: timed(icount, args.timeout))]
        # Every engine once per round, in turn: each ratio compares medians measured alike.
        runs = {eng: [] for eng, _ in engines}
        for _ in range(args.rounds):
            for eng, boot in engines:
                runs[eng].append(boot())
        rows = {eng: median_row(runs[eng]) for eng, _ in engines}
        table[name] = rows
        print(f"\n{name} kernel: wall seconds until each console marker")
        print(f"  {'engine':<12} {'Run /init':>10} {'init start':>11} {'init done':>10} {'total':>8}")
        for eng, r in rows.items():
            cells = [r.get(m) for m in MARKERS[:3]] + [r["total"]]
            text = " ".join(f"{c:>10.2f}" if c is not None else f"{'-':>10}" for c in cells)
            extra = f"   ({r['mips']:.1f} MIPS, {r['instructions']} instructions)" if "mips" in r else ""
            print(f"  {eng:<12} {text}{extra}")
        if args.baseline:
            new, old = rows["wio"], rows["wio-baseline"]
            ratios = [f"{m}: {new[m] / old[m]:.3f}" for m in MARKERS[:3] + ["total"]
                      if new.get(m) and old.get(m)]
            same = new["instructions"] == old["instructions"]
            print(f"  this wio / baseline (medians of {args.rounds}, below 1 is faster): {', '.join(ratios)};"
                  f" instructions {'identical' if same else 'DIFFER'}")
    if not args.no_io:
        io_bench(args, qemu, table)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(table, f, indent=2)


def qemu_disk_boot(qemu, kernel, cmdline, disk):
    """QEMU's virt board booting `kernel` with root disk `disk` (virtio-blk; QEMU writes it)
    and a user-mode network (virtio-net)."""
    return [qemu, "-M", "virt", "-m", "256", "-nographic", "-no-reboot", "-bios", "default",
            "-kernel", kernel, "-append", cmdline,
            "-drive", f"file={disk},if=none,format=raw,id=d0", "-device", "virtio-blk-device,drive=d0",
            "-netdev", "user,id=n0", "-device", "virtio-net-device,netdev=n0"]


def cpython_bench(args, qemu, table):
    """CPython running modules of its own test suite on the small kernel from an ext4 root
    disk: wall seconds from "bench: cpython start" to "done" under each engine."""
    import base64
    import tempfile
    g = guests()
    kernel = g["small"][0]
    small_initramfs = g["small"][1]
    out = subprocess.run(["bash", os.path.join(ROOT, "images", "riscv64-rootfs.sh"), "--cpython-tests",
                          small_initramfs], check=True, stdout=subprocess.PIPE, text=True).stdout
    rootfs = [l.split("=", 1)[1] for l in out.splitlines() if l.startswith("ROOTFS=")][-1]
    modules = [m for m in args.cpython_tests.split(",") if m]
    # The workload runs as a world node's script (images/initramfs.sh: wio.node, wio.run).
    script = ("echo 'bench: cpython start'\n"
              f"cd /tmp && python3 -m test {' '.join(modules)} 2>&1 | tail -n 4\n"
              "echo 'bench: cpython done'\n")
    run = base64.b64encode(script.encode()).decode()
    cmdline = ("console=ttyS0 panic=-1 root=/dev/vda rw rootfstype=ext4 init=/init "
               f"wio.node=bench wio.ip=10.0.0.2 wio.hosts=bench:10.0.0.2 wio.run={run}")
    timeout = max(args.timeout, 1800)
    binaries = [("wio", args.wio)] + ([("wio-baseline", args.baseline)] if args.baseline else [])
    guest = ["--kernel", kernel, "--cmdline", cmdline, rootfs, "--max-virtual-secs", "3600"]

    def qemu_run(extra):
        with tempfile.TemporaryDirectory() as d:
            copy = os.path.join(d, "rootfs.ext4")
            shutil.copyfile(rootfs, copy)  # QEMU writes its disk; the cached image stays untouched
            return timed(qemu_disk_boot(qemu, kernel, cmdline, copy) + extra, timeout)

    engines = [(eng, lambda b=binary: wio_boot(b, args, guest, timeout)) for eng, binary in binaries]
    if qemu:
        engines += [("qemu-tcg", lambda: qemu_run([])),
                    ("qemu-icount", lambda: qemu_run(["-icount", "shift=0,sleep=off", "-seed", str(args.seed)]))]
    # Every engine once per round, in turn; the span of each run, then the median span.
    runs = {eng: [] for eng, _ in engines}
    for _ in range(args.rounds):
        for eng, boot in engines:
            runs[eng].append(boot())
    rows = {eng: median_row(runs[eng]) for eng, _ in engines}
    table["cpython"] = rows
    print(f"\nCPython 3.13, python3 -m test {' '.join(modules)} (small kernel, ext4 root): wall seconds"
          f" (median of {args.rounds})")
    span = {}
    for eng, rs in runs.items():
        spans = sorted(r["bench: cpython done"] - r["bench: cpython start"] for r in rs
                       if "bench: cpython start" in r and "bench: cpython done" in r)
        if spans:
            span[eng] = spans[len(spans) // 2]
    for eng, r in rows.items():
        t = f"{span[eng]:>9.1f}" if eng in span else f"{'-':>9}"
        extra = f"   ({r['mips']:.1f} MIPS, {r['instructions']} instructions in the whole run)" if "mips" in r else ""
        vs = f"   / qemu-icount {span[eng] / span['qemu-icount']:.2f}" if eng in span and "qemu-icount" in span else ""
        print(f"  {eng:<12} {t}{vs}{extra}")
    if args.baseline and "wio" in span and "wio-baseline" in span:
        same = rows["wio"]["instructions"] == rows["wio-baseline"]["instructions"]
        print(f"  this wio / baseline (medians of {args.rounds}): {span['wio'] / span['wio-baseline']:.3f};"
              f" instructions {'identical' if same else 'DIFFER'}")


def io_bench(args, qemu, table):
    """Disk (O_DIRECT dd) and network (ping) inside the small guest on an ext4 root disk,
    under wio (virtio-blk, simulated link) and QEMU (virtio-blk, user network), wall time."""
    import tempfile
    kernel, rootfs = guests()["rootfs"]
    cmdline = "console=ttyS0 panic=-1 root=/dev/vda rw rootfstype=ext4 init=/init wio.bench=1"
    rows = {}
    rows["wio"] = timed([args.wio, "run", "--arch", "riscv64", "--seed", str(args.seed), "--kernel", kernel,
                         "--cmdline", cmdline, rootfs, "--no-summary"], args.timeout)
    if qemu:
        with tempfile.TemporaryDirectory() as d:
            copy = os.path.join(d, "rootfs.ext4")
            shutil.copyfile(rootfs, copy)  # QEMU writes its disk; the cached image stays untouched
            rows["qemu-icount"] = timed(qemu_disk_boot(qemu, kernel, cmdline, copy) +
                                        ["-icount", "shift=0,sleep=off", "-seed", str(args.seed)], args.timeout)
    table["io"] = rows
    print("\nI/O inside the guest (wall time): disk = 16 MiB O_DIRECT write + read, net = 100 pings")
    print(f"  {'engine':<12} {'disk MiB/s':>11} {'pings/s':>9}")
    for eng, r in rows.items():
        disk = r.get("bench: disk done", 0) - r.get("bench: disk start", 0)
        net = r.get("bench: net done", 0) - r.get("bench: net start", 0)
        d = f"{DISK_BENCH_MIB / disk:>11.1f}" if disk > 0 else f"{'-':>11}"
        n = f"{PINGS / net:>9.0f}" if net > 0 else f"{'-':>9}"
        print(f"  {eng:<12} {d} {n}")


if __name__ == "__main__":
    main()
