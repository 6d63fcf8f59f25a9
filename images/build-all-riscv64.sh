#!/usr/bin/env bash
# Builds (or finds in the cache) every riscv64 guest artifact wio's tests use, and prints
# their paths on stdout, one KEY=path per line, in this order:
#
#   RISCV64_DEBIAN_KERNEL_RELEASE=6.12.x+debNN-riscv64   (a value, not a path)
#   RISCV64_DEBIAN_IMAGE=...        Debian trixie's kernel, uncompressed RISC-V Image
#   RISCV64_DEBIAN_MODULES=...      its virtio modules (lib/modules/<release> layout)
#   RISCV64_DEBIAN_INITRAMFS=...    busybox initramfs with those modules (for the Debian kernel)
#   RISCV64_SMALL_KERNEL_RELEASE=6.12.x-wio-small       (a value, not a path)
#   RISCV64_SMALL_IMAGE=...         the small kernel (virtio built in), uncompressed Image
#   RISCV64_SMALL_INITRAMFS=...     busybox initramfs without modules (for the small kernel)
#   RISCV64_ROOTFS=...              ext4 root disk with the same busybox, init and workload
#   RISCV64_REDIS_ROOTFS=...        the same plus Debian's unmodified redis-server and redis-tools
#   RISCV64_PYTHON_ROOTFS=...       the same plus Debian's python3.13 and the Antithesis Python SDK
#                                   with a demo program (wio.pysdk=1)
#   RISCV64_PAYMENTS_ROOTFS=...     the payment scenario's disk (images/payments)
#   RISCV64_IMAGE_RUNTIME=...       the initramfs segment that runs imported container
#                                   images on the small kernel (`wio run --image`)
#   RISCV64_PAYMENTS_IMAGE=...      the payment services as an OCI image archive
#                                   (images/payments/image.sh; wio-payments:1)
#   RISCV64_KV_IMAGE=...            the example key-value service as an OCI image archive
#                                   (examples/kv/image.sh; wio-kv:1)
#   RISCV64_RUST_SDK_DEMO=...       a program instrumented with the Antithesis Rust SDK
#                                   (images/riscv64-rust-sdk.sh; empty when the Rust target
#                                   could not be had: its test then says SKIPPED)
#   RISCV64_DEBIAN_SYSTEM_MAP=...   the Debian kernel's symbols (from its -dbg package; empty
#                                   when it could not be fetched: the gdb test then skips)
#   RISCV64_OPENSBI_FW_DYNAMIC=...  Debian's OpenSBI, generic platform, fw_dynamic.bin (--firmware)
#   RISCV64_OPENSBI_FW_JUMP=...     the same, fw_jump.bin
#   RISCV64_FLIGHT_ELF=...          the bare-metal flight-software example (images/flight)
#   RISCV64_FLIGHT_VECTOR_ELF=...   its vector variant (for --isa rv64gcv)
#                                   (these four empty when they could not be built: their
#                                   tests then skip)
#
# The same lines are written to $WIO_CACHE/riscv64-guests.env, where `wio run --guest`
# finds them. Progress goes to stderr. Everything cached: about a second. Nothing cached: about 5 minutes
# on 2 cores (mostly compiling the small kernel). WIO_CACHE, WIO_APT_UPDATE: see lib.sh.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[[ $# -eq 0 ]] || { sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2; }
source "$HERE/lib.sh"
wio_apt_init # one list refresh here at most, not one per script

# run SCRIPT ARGS...: run a build script, keep its KEY=value lines in the array `kv`
run() {
  local line
  kv=()
  while IFS= read -r line; do
    [[ "$line" == *=* ]] && kv+=("$line")
  done < <(bash "$@")
  wait $! || wio_die "$(basename "$1") failed"
}
get() { # get KEY: the value of KEY in `kv`
  local line
  for line in "${kv[@]}"; do [[ "${line%%=*}" == "$1" ]] && { printf '%s\n' "${line#*=}"; return 0; }; done
  wio_die "no $1= line in the output"
}

run "$HERE/riscv64-debian-kernel.sh"
deb_release="$(get KERNEL_RELEASE)"; deb_image="$(get IMAGE)"; deb_modules="$(get MODULES)"
run "$HERE/riscv64-initramfs.sh" --modules "$deb_modules"
deb_initramfs="$(get INITRAMFS)"
run "$HERE/../guest-kernel/riscv64/build-small-kernel.sh"
small_release="$(get KERNEL_RELEASE)"; small_image="$(get IMAGE)"
run "$HERE/riscv64-initramfs.sh"
small_initramfs="$(get INITRAMFS)"
run "$HERE/riscv64-rootfs.sh" "$small_initramfs"
rootfs="$(get ROOTFS)"
run "$HERE/riscv64-rootfs.sh" --redis "$small_initramfs"
redis_rootfs="$(get ROOTFS)"
run "$HERE/riscv64-rootfs.sh" --python "$small_initramfs"
python_rootfs="$(get ROOTFS)"
run "$HERE/riscv64-rootfs.sh" --payments "$small_initramfs"
payments_rootfs="$(get ROOTFS)"
run "$HERE/riscv64-image-runtime.sh"
image_runtime="$(get IMAGE_RUNTIME)"
run "$HERE/payments/image.sh"
payments_image="$(get PAYMENTS_IMAGE)"
run "$HERE/../examples/kv/image.sh"
kv_image="$(get KV_IMAGE)"
# Spaceflight targets: a failed download or toolchain install must not take the Linux
# guests away (their tests then say SKIPPED).
fw_dynamic="" fw_jump="" flight_elf="" flight_vector_elf="" rust_sdk_demo=""
if out="$(bash "$HERE/riscv64-opensbi.sh")"; then
  fw_dynamic="$(sed -n 's/^FW_DYNAMIC=//p' <<<"$out")"; fw_jump="$(sed -n 's/^FW_JUMP=//p' <<<"$out")"
else
  wio_log "WARNING: Debian's OpenSBI could not be fetched; the OpenSBI test will say SKIPPED"
fi
if out="$(bash "$HERE/riscv64-flight.sh")"; then
  flight_elf="$(sed -n 's/^FLIGHT_ELF=//p' <<<"$out")"
  flight_vector_elf="$(sed -n 's/^FLIGHT_VECTOR_ELF=//p' <<<"$out")"
else
  wio_log "WARNING: the flight-software example could not be built; its tests will say SKIPPED"
fi
if out="$(bash "$HERE/riscv64-rust-sdk.sh")"; then
  rust_sdk_demo="$(sed -n 's/^RUST_SDK_DEMO=//p' <<<"$out")"
else
  wio_log "WARNING: the Rust SDK program could not be built; its test will say SKIPPED"
fi
# Symbols for debugging only: a failed download must not take the guests away.
debian_system_map="$(bash "$HERE/riscv64-debian-symbols.sh" | sed -n 's/^SYSTEM_MAP=//p')" ||
  wio_log "WARNING: the Debian kernel's symbols could not be fetched; the gdb test on it will say SKIPPED"

manifest="$(cat <<EOF
RISCV64_DEBIAN_KERNEL_RELEASE=$deb_release
RISCV64_DEBIAN_IMAGE=$deb_image
RISCV64_DEBIAN_MODULES=$deb_modules
RISCV64_DEBIAN_INITRAMFS=$deb_initramfs
RISCV64_SMALL_KERNEL_RELEASE=$small_release
RISCV64_SMALL_IMAGE=$small_image
RISCV64_SMALL_INITRAMFS=$small_initramfs
RISCV64_ROOTFS=$rootfs
RISCV64_REDIS_ROOTFS=$redis_rootfs
RISCV64_PYTHON_ROOTFS=$python_rootfs
RISCV64_PAYMENTS_ROOTFS=$payments_rootfs
RISCV64_IMAGE_RUNTIME=$image_runtime
RISCV64_PAYMENTS_IMAGE=$payments_image
RISCV64_KV_IMAGE=$kv_image
RISCV64_RUST_SDK_DEMO=$rust_sdk_demo
RISCV64_DEBIAN_SYSTEM_MAP=$debian_system_map
RISCV64_OPENSBI_FW_DYNAMIC=$fw_dynamic
RISCV64_OPENSBI_FW_JUMP=$fw_jump
RISCV64_FLIGHT_ELF=$flight_elf
RISCV64_FLIGHT_VECTOR_ELF=$flight_vector_elf
EOF
)"
# The same lines, for wio (`wio run --guest small|debian`): written atomically.
printf '%s\n' "$manifest" >"$WIO_CACHE/riscv64-guests.env.$$"
mv -f "$WIO_CACHE/riscv64-guests.env.$$" "$WIO_CACHE/riscv64-guests.env"
wio_log "all riscv64 artifacts ready (also listed in $WIO_CACHE/riscv64-guests.env)"
printf '%s\n' "$manifest"
