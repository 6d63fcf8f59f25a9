#!/usr/bin/env bash
# Builds (or finds in the cache) wio's x86-64 Linux guests, and prints their paths on stdout,
# one KEY=path per line, in this order:
#
#   X86_64_SMALL_KERNEL_RELEASE=6.12.x-wio-small         (a value, not a path)
#   X86_64_SMALL_BZIMAGE=...        the small kernel (virtio, ext4 and the promise channel built
#                                   in; guest-kernel/x86_64/build-small-kernel.sh), a bzImage
#   X86_64_SMALL_INITRAMFS=...      busybox initramfs with the workload (images/x86_64-initramfs.sh)
#   X86_64_ROOTFS=...               ext4 root disk with the same busybox, init and workload
#   X86_64_REDIS_ROOTFS=...         the same plus Debian bookworm's unmodified redis
#   X86_64_PYTHON_ROOTFS=...        the same plus bookworm's python3.11 and the Antithesis
#                                   Python SDK with a demo program (wio.pysdk=1)
#   X86_64_PAYMENTS_ROOTFS=...      the payment scenario's disk (images/payments) on amd64
#
# The same lines are written to $WIO_CACHE/x86_64-guests.env, where wio finds them by name:
# an x86-64 world node without `kernel` runs the built guest `small`, and its `disk` may name
# one of the disks (rootfs, redis, python, payments), as images/payments/world-x86_64.toml
# does; `wio run --arch x86_64 --guest small`. Running them needs KVM with hardware
# virtualization (ci/l1.sh provides it on a PVM host). Progress goes to stderr. Everything
# cached: about a second; nothing cached: about 5 minutes on 2 cores (mostly compiling the
# kernel). WIO_CACHE: see lib.sh.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[[ $# -eq 0 ]] || { sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2; }
source "$HERE/lib.sh"

# value KEY OUTPUT: the value of the KEY=value line in a build script's output
value() {
  local v
  v="$(sed -n "s/^$1=//p" <<<"$2" | tail -n 1)"
  [[ -n "$v" ]] || wio_die "no $1= line in the output"
  printf '%s\n' "$v"
}

out="$(bash "$HERE/../guest-kernel/x86_64/build-small-kernel.sh")" || wio_die "the small x86-64 kernel was not built"
small_release="$(value KERNEL_RELEASE "$out")"
small_bzimage="$(value BZIMAGE "$out")"
out="$(bash "$HERE/x86_64-initramfs.sh")" || wio_die "images/x86_64-initramfs.sh failed"
small_initramfs="$(value INITRAMFS "$out")"
disk() { # disk [OPTION]: the root disk built with that option of images/x86_64-rootfs.sh
  local o
  o="$(bash "$HERE/x86_64-rootfs.sh" "$@" "$small_initramfs")" || wio_die "images/x86_64-rootfs.sh $* failed"
  value ROOTFS "$o"
}
rootfs="$(disk)"
redis_rootfs="$(disk --redis)"
python_rootfs="$(disk --python)"
payments_rootfs="$(disk --payments)"

manifest="$(cat <<MANIFEST
X86_64_SMALL_KERNEL_RELEASE=$small_release
X86_64_SMALL_BZIMAGE=$small_bzimage
X86_64_SMALL_INITRAMFS=$small_initramfs
X86_64_ROOTFS=$rootfs
X86_64_REDIS_ROOTFS=$redis_rootfs
X86_64_PYTHON_ROOTFS=$python_rootfs
X86_64_PAYMENTS_ROOTFS=$payments_rootfs
MANIFEST
)"
# The same lines, for wio (built guests and disks by name): written atomically.
printf '%s\n' "$manifest" >"$WIO_CACHE/x86_64-guests.env.$$"
mv -f "$WIO_CACHE/x86_64-guests.env.$$" "$WIO_CACHE/x86_64-guests.env"
wio_log "all x86-64 guests ready (also listed in $WIO_CACHE/x86_64-guests.env)"
printf '%s\n' "$manifest"
