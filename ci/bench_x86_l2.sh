#!/usr/bin/env bash
# Side-by-side L2 boot benchmark inside the nested-SVM L1 of ci/l1.sh: Debian bookworm's
# unmodified amd64 kernel with the same busybox initramfs (images/x86_64-l1.sh's L2 init) under
# `wio run` (its default Linux command line) and under `qemu-system-x86_64 -accel kvm -cpu host`
# (machine pc with SeaBIOS, and microvm with qboot; "console=ttyS0 lpj=1000000 panic=-1":
# with wio's noapic/nolapic line that kernel does not reach its init under QEMU), alternating,
# ROUNDS times; then wio's small kernel (guest-kernel/x86_64) under wio. (The small kernel
# cannot run under QEMU: it reads its TSC from wio's paravirt port, fw_cfg's port in QEMU.)
#
# Each boot is timed from the command's start to the console line "wio-init: start" (L1's
# /proc/uptime, 10 ms steps; the same reader for every setup). Then one full wio run of each
# kernel gives the exits per wall second. Prints "bench: ..." lines and a summary with the
# medians and the ratio wio / QEMU.
#
# QEMU/KVM inside this L1 (TCG emulating SVM) now and then hangs the whole L1: ci/l1.sh's
# timeout (L1_TIMEOUT_S, default here 900 s) then ends it, and the summary shows the rounds
# that finished.
#
# Usage: ci/bench_x86_l2.sh [ROUNDS]      (default 3; L1_MEM_MIB etc. as for ci/l1.sh)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/images/lib.sh"
WIO_PROG=bench-x86-l2
ROUNDS="${1:-3}"
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2; }
install_host_tools qemu-system-x86 cpio gzip

CMDLINE="console=ttyS0 lpj=1000000 panic=-1"

work="$(mktemp -d "${TMPDIR:-/tmp}/wio-bench-l2.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# QEMU for L1: the binary, the libraries ldd lists and the firmware, as one tarball.
q="$work/q"
mkdir -p "$q/usr/bin" "$q/usr/share/qemu"
cp /usr/bin/qemu-system-x86_64 "$q/usr/bin/"
for lib in $(ldd /usr/bin/qemu-system-x86_64 | grep -oE '/[^ ]+\.so[^ ]*' | sort -u); do
  mkdir -p "$q$(dirname "$lib")"
  cp -L "$lib" "$q$lib"
done
for f in bios-256k.bin bios-microvm.bin linuxboot_dma.bin kvmvapic.bin; do
  cp -L "/usr/share/qemu/$f" "$q/usr/share/qemu/" 2>/dev/null || cp -L "/usr/share/seabios/$f" "$q/usr/share/qemu/"
done
tar -C "$q" -czf "$work/qemu.tgz" .

# ci/l1.sh builds and copies in the rest: /l1/wio, /l1/l2-kernel and its initramfs, and the
# small kernel with its initramfs (/l1/small-bzImage, /l1/small-initrd.cpio.gz).
cat >"$work/bench.sh" <<SCRIPT
tar -xzf /l1/qemu.tgz -C /
CMDLINE="$CMDLINE"
ROUNDS=$ROUNDS
SCRIPT
cat >>"$work/bench.sh" <<'SCRIPT'
now() { read -r u _ </proc/uptime; echo "$u"; }
# measure LABEL CMD...: seconds from the start to the console line "wio-init: start" (read
# line by line as it comes; the command runs to its own end, at most 120 s)
measure() {
  label="$1"; shift
  rm -f /tmp/mark /tmp/run.log
  t0="$(now)"
  timeout 120 "$@" </dev/null 2>&1 | while IFS= read -r line; do
    case "$line" in *"wio-init: start"*) [ -e /tmp/mark ] || now >/tmp/mark ;; esac
    echo "$line" >>/tmp/run.log
  done
  if [ -e /tmp/mark ]; then
    echo "bench: $label $(awk -v a="$(cat /tmp/mark)" -v b="$t0" 'BEGIN { printf "%.2f", a - b }')"
  else
    echo "bench-failed: $label; its last lines:"
    tail -n 15 /tmp/run.log
  fi
}
K=/l1/l2-kernel I=/l1/l2-initrd.cpio.gz
Q="/usr/bin/qemu-system-x86_64 -accel kvm -cpu host -m 256 -smp 1 -nographic -nodefaults -serial stdio -no-reboot -L /usr/share/qemu"
r=0
while [ $r -lt $ROUNDS ]; do
  r=$((r + 1))
  measure "debian wio" /l1/wio run --arch x86_64 --kernel $K --initrd $I --mem 256 --seed 1 --watchdog-ms 60000 --no-summary
  measure "debian qemu-pc" $Q -M pc -kernel $K -initrd $I -append "$CMDLINE"
  measure "debian qemu-microvm" $Q -M microvm -kernel $K -initrd $I -append "$CMDLINE"
  measure "small wio" /l1/wio run --watchdog-ms 60000 --arch x86_64 --kernel /l1/small-bzImage --initrd /l1/small-initrd.cpio.gz --mem 256 --seed 1 --no-summary
done
for k in debian small; do
  if [ $k = debian ]; then a="--kernel $K --initrd $I"; else a="--kernel /l1/small-bzImage --initrd /l1/small-initrd.cpio.gz"; fi
  /l1/wio run --arch x86_64 $a --mem 256 --seed 1 --watchdog-ms 60000 --quiet >/tmp/$k.txt 2>&1
  echo "bench: full run $k: $(grep -E '^(virtual time|wall time|exits) ' /tmp/$k.txt | tr -s ' ' | tr '\n' ';')"
done
exit 0
SCRIPT
wio_log "running $ROUNDS rounds inside L1 (each: Debian under wio, QEMU pc, QEMU microvm; the small kernel under wio)"
L1_TIMEOUT_S="${L1_TIMEOUT_S:-900}" L1_SCRIPT="$work/bench.sh" L1_FILES="$work/qemu.tgz" \
  bash "$ROOT/ci/l1.sh" | tr -d '\r' | tee "$work/l1.log" | grep -A16 '^bench' || true
python3 - "$work/l1.log" <<'PY'
import json, re, statistics, sys
times = {}
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"bench: (\w+ [\w-]+) ([0-9.]+)$", line.strip())
    if m:
        times.setdefault(m.group(1), []).append(float(m.group(2)))
print("setup                    median s to 'wio-init: start'   runs")
for k, v in times.items():
    print(f"{k:24} {statistics.median(v):8.2f}                      {' '.join(f'{x:.2f}' for x in v)}")
w = times.get("debian wio")
for q in ("debian qemu-pc", "debian qemu-microvm"):
    if w and times.get(q):
        print(f"ratio wio / {q.split()[1]}: {statistics.median(w) / statistics.median(times[q]):.2f}")
PY
