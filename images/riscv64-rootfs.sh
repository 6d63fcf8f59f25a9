#!/usr/bin/env bash
# An ext4 root disk for riscv64 wio guests, made from an initramfs (the same busybox, /init
# and workload), so `wio run --arch riscv64 DISK.img` boots with /dev/vda as root.
#
# Usage: images/riscv64-rootfs.sh INITRAMFS [SIZE_MIB]
#   INITRAMFS  a gzip'd newc cpio from riscv64-initramfs.sh (without modules: the small kernel
#              has virtio-blk and ext4 built in)
#   SIZE_MIB   image size, default 64
#
# Publishes $WIO_CACHE/riscv64/rootfs/<key>/rootfs.ext4 (and inputs.txt); the filesystem has
# fixed UUID, hash seed and timestamps, so the same inputs give the same bytes. Prints
# ROOTFS=<path> as the last line. Never modify the published image: wio opens it read-only
# and writes go to an overlay owned by each run (`--persist FILE` writes the result out).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2; exit 2; }
[[ $# -ge 1 && $# -le 2 ]] || usage
INITRAMFS="$1"
SIZE_MIB="${2:-64}"
[[ -f "$INITRAMFS" ]] || wio_die "no initramfs at $INITRAMFS"
[[ "$SIZE_MIB" =~ ^[0-9]+$ ]] && ((SIZE_MIB >= 16)) || wio_die "SIZE_MIB must be a number >= 16"
install_host_tools e2fsprogs cpio

wio_inputs() {
  local initramfs_hash mke2fs_version
  initramfs_hash="$(wio_sha256_file "$INITRAMFS")"
  mke2fs_version="$(wio_host_pkg_version e2fsprogs)"
  wio_script_inputs
  printf 'initramfs %s\n' "$initramfs_hash"
  printf 'size_mib %s\n' "$SIZE_MIB"
  printf 'e2fsprogs %s\n' "$mke2fs_version"
}

wio_build() {
  local out="$1" tree
  tree="$out/tree"
  mkdir -p "$tree"
  (cd "$tree" && gzip -dc "$INITRAMFS" | cpio -id --quiet --no-absolute-filenames)
  mkdir -p "$tree/data"
  find "$tree" -exec touch -h -d @1735689600 {} + # fixed mtimes: same inputs, same bytes
  # Reproducible ext4: fixed UUID, hash seed and creation time, files owned by root.
  E2FSPROGS_FAKE_TIME=1735689600 mkfs.ext4 -q -F -L wioroot -U 6f3c1c52-7d1e-4b59-9c39-7769726f6f74 \
    -E hash_seed=6f3c1c52-7d1e-4b59-9c39-7769726f6f74,root_owner=0:0 -T default \
    -d "$tree" "$out/rootfs.ext4" "${SIZE_MIB}M" >&2
  rm -rf "$tree"
}

wio_cached riscv64/rootfs
echo "ROOTFS=$WIO_OUT/rootfs.ext4"
