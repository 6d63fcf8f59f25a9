#!/usr/bin/env bash
# The L1 machine of wio's nested-virtualization harness (ci/l1.sh): Debian bookworm's
# unmodified amd64 kernel, booted by `qemu-system-x86_64 -accel tcg -cpu max` (QEMU's TCG
# emulates AMD SVM with nested paging), with a busybox initramfs that loads Debian's
# irqbypass, ccp, kvm and kvm_amd modules: inside it /dev/kvm is hardware virtualization
# (kvm_amd), which this repository's hosts (PVM) do not offer directly.
# Publishes into $WIO_CACHE/x86_64/l1/<key>/:
#   vmlinuz          the kernel (linux-image-<abi>-amd64)
#   base.cpio.gz     busybox, the four modules, and /init: mounts, insmods, runs
#                    /l1/run.sh from the archive appended after it (ci/l1.sh builds
#                    that one: wio, the tests, their libraries), prints
#                    "wio-l1: status=N" and powers off
#   l2-initramfs.cpio.gz  a busybox initramfs for the same kernel as wio's guest (L2):
#                    its init prints the wio-init/workload lines (urandom, date, uptime)
#                    and powers off with `poweroff -f` (ci/bench_x86_l2.sh boots it)
#   modules/<release>/  the kernel's virtio modules (virtio-mmio, -blk, -net, -rng, -console)
#                    and their dependencies with depmod's files, for wio's workload
#                    initramfs as the kernel's L2 guest (images/x86_64-initramfs.sh --modules)
#   inputs.txt       the inputs whose hash is <key>
# Prints (stdout): L1_KERNEL=<path>, L1_INITRD=<path>, L2_INITRD=<path>, L2_MODULES=<path>
#
# Usage: images/x86_64-l1.sh        (WIO_CACHE: see lib.sh)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/kernel-modules.sh"

[[ $# -eq 0 ]] || { sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2; }

install_host_tools dpkg cpio gzip kmod

# The kernel package linux-image-amd64 points at, and busybox-static (host apt: bookworm amd64).
kernel_pkg() { apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -1; }
candidate() { apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p'; }

wio_inputs() {
  local k
  k="$(kernel_pkg)"
  [[ -n "$k" ]] || wio_die "no linux-image-*-amd64 behind linux-image-amd64 (apt-get update?)"
  wio_script_inputs
  kernel_modules_inputs
  printf 'l2-modules %s\n' "${WIO_VIRTIO_MODULES[*]}"
  printf 'package %s %s\n' "$k" "$(candidate "$k")"
  printf 'package busybox-static %s\n' "$(candidate busybox-static)"
}

# The first lines of both inits: busybox's applets, /proc, /sys, /dev.
INIT_HEAD='#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev'

# pack DIR OUT: DIR as a reproducible gzip'd newc cpio archive.
pack() {
  find "$1" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  (cd "$1" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --reproducible 2>/dev/null | gzip -9n >"$2")
}

wio_build() {
  local out="$1" x k rel root m mods
  k="$(kernel_pkg)"
  rel="${k#linux-image-}"
  wio_tmpdir x l1
  (cd "$x" && apt-get download -q "$k" busybox-static >&2) || wio_die "apt-get download $k busybox-static failed"
  mkdir -p "$x/deb" "$x/root"
  for d in "$x"/*.deb; do dpkg-deb -x "$d" "$x/deb"; done
  cp "$x/deb/boot/vmlinuz-$rel" "$out/vmlinuz"
  mods="$(collect_kernel_modules "$x/deb/lib/modules/$rel" "$out/modules/$rel" "$out/modules-builtin.txt" "${WIO_VIRTIO_MODULES[@]}")"
  wio_log "L2 modules of $rel: $mods| built in: $(tr '\n' ' ' <"$out/modules-builtin.txt")"
  printf '%s\n' "$rel" >"$out/kernel-release"
  root="$x/root"
  mkdir -p "$root"/{bin,dev,proc,sys,tmp,l1,modules}
  cp "$x/deb/bin/busybox" "$root/bin/busybox"
  for m in virt/lib/irqbypass drivers/crypto/ccp/ccp arch/x86/kvm/kvm arch/x86/kvm/kvm-amd; do
    cp "$x/deb/lib/modules/$rel/kernel/$m.ko" "$root/modules/" || wio_die "no $m.ko in $k"
  done
  { printf '%s\n' "$INIT_HEAD"; cat <<'INIT'
mount -t tmpfs -o size=1g tmpfs /tmp
for m in irqbypass ccp kvm kvm-amd; do
  insmod /modules/$m.ko || echo "wio-l1: insmod $m failed"
done
if [ -e /sys/module/kvm_amd ] && [ -c /dev/kvm ]; then
  echo "wio-l1: kvm_amd loaded, /dev/kvm ready ($(grep -c svm /proc/cpuinfo) svm cpu)"
else
  echo "wio-l1: no hardware /dev/kvm in L1"
fi
status=1
if [ -x /l1/run.sh ]; then
  /l1/run.sh
  status=$?
else
  echo "wio-l1: no /l1/run.sh in the initramfs"
fi
echo "wio-l1: status=$status"
sync
poweroff -f
INIT
  } >"$root/init"
  chmod +x "$root/init"
  pack "$root" "$out/base.cpio.gz"
  # The L2 guest's initramfs: the same busybox, a workload init.
  local l2="$x/l2"
  mkdir -p "$l2"/{bin,dev,proc,sys,tmp}
  cp "$root/bin/busybox" "$l2/bin/busybox"
  { printf '%s\n' "$INIT_HEAD"; cat <<'INIT'
echo "wio-init: start"
echo "workload: uname: $(uname -r)"
echo "workload: urandom: $(head -c 16 /dev/urandom | od -An -tx1)"
echo "workload: date: $(date)"
echo "workload: uptime: $(cat /proc/uptime)"
echo "wio-init: done status=0"
poweroff -f
INIT
  } >"$l2/init"
  chmod +x "$l2/init"
  pack "$l2" "$out/l2-initramfs.cpio.gz"
  find "$out" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  rm -rf "$x"
}

wio_cached x86_64/l1
echo "L1_KERNEL=$WIO_OUT/vmlinuz"
echo "L1_INITRD=$WIO_OUT/base.cpio.gz"
echo "L2_INITRD=$WIO_OUT/l2-initramfs.cpio.gz"
echo "L2_MODULES=$WIO_OUT/modules/$(cat "$WIO_OUT/kernel-release")"
