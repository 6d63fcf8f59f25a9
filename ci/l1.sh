#!/usr/bin/env bash
# Runs wio's x86-64 end-to-end tests (tests/e2e/x86_64.rs, x86_64_linux.rs, x86_64_nodes.rs, and the x86-64 tests of
# faults.rs and snapshots.rs: those named *x86_64*) inside an L1 virtual machine
# that has hardware virtualization: qemu-system-x86_64 -accel tcg -cpu max emulates AMD
# SVM with nested paging, Debian's kvm_amd drives it, and wio runs its guests on that
# /dev/kvm (images/x86_64-l1.sh builds the L1 kernel and initramfs into $WIO_CACHE).
# Hosts whose own /dev/kvm is VT-x or AMD-V run the same tests directly (cargo test);
# this harness is for hosts like this repository's, whose KVM is PVM.
#
# The tests' output streams from L1's serial console; the script exits with the test
# binary's status (0: all passed), 1 when L1 did not report one, 2 on bad arguments.
# Inside L1 the tests run with WIO_REQUIRE=kvm,hardware-kvm,x86-linux: a test that would
# skip for want of KVM, hardware virtualization or the x86-64 Linux guests fails there.
#
# Usage: ci/l1.sh [TEST_FILTER]      e.g. ci/l1.sh cpuid (default: every x86-64 test)
#   L1_SCRIPT=FILE      run FILE (sh) inside L1 instead of the tests, in /tmp, with wio at
#                       /l1/wio; its exit status is L1's (for experiments and benchmarks)
#   L1_FILES="A B"      more files copied into L1's /l1/ (for L1_SCRIPT)
#   L1_MEM_MIB=4096     L1 memory (default 4096: the payment world's four machines and its disk)
#   L1_TIMEOUT_S=1200   wall seconds before L1 is stopped (default 1200)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/images/lib.sh"
WIO_PROG=l1

install_host_tools qemu-system-x86 cpio gzip
eval "$(bash "$ROOT/images/x86_64-l1.sh" | grep -E '^L[12]_(KERNEL|INITRD|MODULES)=')"
# Debian's kernel as wio's guest (L2) boots wio's workload initramfs with the kernel's own
# virtio modules (the init loads them).
DEBIAN_INITRD="$(bash "$ROOT/images/x86_64-initramfs.sh" --modules "$L2_MODULES" | sed -n 's/^INITRAMFS=//p')"
# wio's built x86-64 guests (images/build-all-x86_64.sh: the small kernel with the
# determinism patches, its workload initramfs, the redis and payments root disks): the L2
# guests of the small-kernel tests (built once, then cached).
built="$(bash "$ROOT/images/build-all-x86_64.sh")"
SMALL_KERNEL="$(sed -n 's/^X86_64_SMALL_BZIMAGE=//p' <<<"$built")"
SMALL_INITRD="$(sed -n 's/^X86_64_SMALL_INITRAMFS=//p' <<<"$built")"
REDIS_ROOTFS="$(sed -n 's/^X86_64_REDIS_ROOTFS=//p' <<<"$built")"
PAYMENTS_ROOTFS="$(sed -n 's/^X86_64_PAYMENTS_ROOTFS=//p' <<<"$built")"
[[ -f "$SMALL_KERNEL" && -f "$SMALL_INITRD" && -f "$REDIS_ROOTFS" && -f "$PAYMENTS_ROOTFS" && -f "$DEBIAN_INITRD" ]] ||
  wio_die "the small x86-64 kernel, an initramfs or a root disk was not built"

# Test binaries (tests/e2e/NAME.rs) and the filter that picks their x86-64 tests.
TESTS=(x86_64: x86_64_linux: x86_64_nodes: faults:x86_64 snapshots:x86_64)
wio_log "building wio and the test binaries (release)"
(cd "$ROOT" && cargo build -q --release -p wio --bin wio)
executables="$(cd "$ROOT" && cargo test -q --release -p wio --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json,sys
for l in sys.stdin:
    try: m = json.loads(l)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        print(m["target"]["name"], m["executable"])')"

work="$(mktemp -d "${TMPDIR:-/tmp}/wio-l1.XXXXXX")"
trap 'rm -rf "$work"' EXIT
ov="$work/overlay"
mkdir -p "$ov/l1"
cp "$ROOT/target/release/wio" "$ov/l1/wio"
# Linux as wio's guest (L2): the L1 kernel itself, with a busybox workload initramfs.
cp "$L1_KERNEL" "$ov/l1/l2-kernel"
cp "$L2_INITRD" "$ov/l1/l2-initrd.cpio.gz"
cp "$DEBIAN_INITRD" "$ov/l1/debian-initrd.cpio.gz"
cp "$SMALL_KERNEL" "$ov/l1/small-bzImage"
cp "$SMALL_INITRD" "$ov/l1/small-initrd.cpio.gz"
cp "$REDIS_ROOTFS" "$ov/l1/redis-rootfs.ext4"
cp "$PAYMENTS_ROOTFS" "$ov/l1/payments-rootfs.ext4"
# The same guests by name (a world node's `disk = "payments"`), at their paths in L1.
mkdir -p "$ov/l1/cache"
cat >"$ov/l1/cache/x86_64-guests.env" <<MANIFEST
$(sed -n 's/^X86_64_SMALL_KERNEL_RELEASE=/&/p' <<<"$built")
X86_64_SMALL_BZIMAGE=/l1/small-bzImage
X86_64_SMALL_INITRAMFS=/l1/small-initrd.cpio.gz
X86_64_REDIS_ROOTFS=/l1/redis-rootfs.ext4
X86_64_PAYMENTS_ROOTFS=/l1/payments-rootfs.ext4
MANIFEST
runs=""
for t in "${TESTS[@]}"; do
  name="${t%%:*}" filter="${1:-${t#*:}}"
  exe="$(awk -v n="$name" '$1 == n { print $2 }' <<<"$executables" | tail -1)"
  [[ -x "$exe" ]] || wio_die "no test binary for tests/e2e/$name.rs"
  cp "$exe" "$ov/l1/$name-tests"
  runs+="echo 'wio-l1: tests/e2e/$name.rs ${filter:-(all)}'
/l1/$name-tests --test-threads 1 --show-output $filter || status=1
"
done
# The shared libraries they need, at the paths their loader looks in.
for lib in $(for f in "$ov"/l1/*; do ldd "$f" 2>/dev/null || true; done | grep -oE '/[^ ]+\.so[^ ]*' | sort -u); do
  mkdir -p "$ov$(dirname "$lib")"
  cp -L "$lib" "$ov$lib"
done
# wio's small riscv64 guest (when images/build-all-riscv64.sh built it): the riscv64 node of
# the mixed-world test.
riscv_manifest="${WIO_CACHE:-${HOME:-/root}/.cache/wio}/riscv64-guests.env"
riscv_env=""
if [[ -f "$riscv_manifest" ]]; then
  rv_kernel="$(sed -n 's/^RISCV64_SMALL_IMAGE=//p' "$riscv_manifest" | tail -n 1)"
  rv_initrd="$(sed -n 's/^RISCV64_SMALL_INITRAMFS=//p' "$riscv_manifest" | tail -n 1)"
  if [[ -f "$rv_kernel" && -f "$rv_initrd" ]]; then
    cp "$rv_kernel" "$ov/l1/riscv-Image"
    cp "$rv_initrd" "$ov/l1/riscv-initramfs.cpio.gz"
    riscv_env="export WIO_RISCV_SMALL_KERNEL=/l1/riscv-Image WIO_RISCV_SMALL_INITRD=/l1/riscv-initramfs.cpio.gz"
  fi
fi
for f in ${L1_FILES:-}; do cp "$f" "$ov/l1/"; done
if [[ -n "${L1_SCRIPT:-}" ]]; then
  runs="sh /l1/script.sh || status=\$?
"
  cp "$L1_SCRIPT" "$ov/l1/script.sh"
fi
cat >"$ov/l1/run.sh" <<RUN
#!/bin/sh
cd /tmp
export HOME=/tmp WIO_BIN=/l1/wio RUST_BACKTRACE=1 WIO_CACHE=/l1/cache
export WIO_X86_LINUX_KERNEL=/l1/l2-kernel WIO_X86_LINUX_INITRD=/l1/debian-initrd.cpio.gz
export WIO_X86_SMALL_KERNEL=/l1/small-bzImage WIO_X86_SMALL_INITRD=/l1/small-initrd.cpio.gz
export WIO_X86_REDIS_ROOTFS=/l1/redis-rootfs.ext4
$riscv_env
# What this L1 exists to give the x86-64 tests (tests/require/): a usable /dev/kvm that is
# hardware virtualization (kvm_amd on emulated SVM) and the Linux guests above. A test
# that would skip for want of them fails instead (an insmod that failed must not pass).
export WIO_REQUIRE=kvm,hardware-kvm,x86-linux
status=0
echo "wio-l1: wio run --seed 42 (the test guest)"
/l1/wio run --seed 42 --quiet 2>&1 | grep -E '^(arch|trace hash|exit status|warning)' || true
$runs
exit \$status
RUN
chmod +x "$ov/l1/run.sh"
(cd "$ov" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc 2>/dev/null | gzip -1) >"$work/overlay.cpio.gz"
cat "$L1_INITRD" "$work/overlay.cpio.gz" >"$work/initrd.cpio.gz"

wio_log "booting L1 (qemu-system-x86_64 -accel tcg -cpu max, ${L1_MEM_MIB:-4096} MiB)"
set +e
timeout "${L1_TIMEOUT_S:-1200}" qemu-system-x86_64 -accel tcg -cpu max -smp 1 -m "${L1_MEM_MIB:-4096}" \
  -nographic -no-reboot -kernel "$L1_KERNEL" -initrd "$work/initrd.cpio.gz" \
  -append "console=ttyS0 panic=-1 quiet loglevel=3" </dev/null | tee "$work/console.log"
qemu_status=${PIPESTATUS[0]}
set -e
status="$(tr -d '\r' <"$work/console.log" | sed -n 's/^wio-l1: status=\([0-9]*\)$/\1/p' | tail -1)"
if [[ -z "$status" ]]; then
  wio_die "L1 reported no status (qemu exit $qemu_status; timeout ${L1_TIMEOUT_S:-1200} s?)"
fi
wio_log "tests inside L1 ended with status $status"
exit "$status"
