#!/usr/bin/env bash
# An ext4 root disk for riscv64 wio guests, made from an initramfs (the same busybox, /init
# and workload), so `wio run --arch riscv64 DISK.img` boots with /dev/vda as root.
#
# Usage: images/riscv64-rootfs.sh [--redis] INITRAMFS [SIZE_MIB]
#   --redis    also install Debian trixie's unmodified redis-server and redis-tools (riscv64)
#              with their libraries; the workload then starts redis and drives it
#   INITRAMFS  a gzip'd newc cpio from riscv64-initramfs.sh (without modules: the small kernel
#              has virtio-blk and ext4 built in)
#   SIZE_MIB   image size, default 64 (160 with --redis)
#
# Publishes $WIO_CACHE/riscv64/rootfs/<key>/rootfs.ext4 (and inputs.txt); the filesystem has
# fixed UUID, hash seed and timestamps, so the same inputs give the same bytes. Prints
# ROOTFS=<path> as the last line. Never modify the published image: wio opens it read-only
# and writes go to an overlay owned by each run (`--persist FILE` writes the result out).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2; exit 2; }
REDIS=0
if [[ "${1:-}" == --redis ]]; then REDIS=1; shift; fi
[[ $# -ge 1 && $# -le 2 ]] || usage
INITRAMFS="$1"
SIZE_MIB="${2:-$((REDIS ? 160 : 64))}"
# Debian packages for --redis: the servers and the libraries they load (maintainer-script
# packages such as adduser and debconf are left out: nothing runs dpkg in the guest).
REDIS_PKGS=(redis-server redis-tools libc6 libgcc-s1 libatomic1 libstdc++6 libjemalloc2 liblzf1
  libssl3t64 libsystemd0 libcap2 libzstd1 zlib1g libbsd0 libmd0 libcrypt1 libpcre2-8-0
  libselinux1 libacl1 libattr1 libbz2-1.0 libtinfo6 libreadline8t64 readline-common gcc-14-base)
[[ -f "$INITRAMFS" ]] || wio_die "no initramfs at $INITRAMFS"
[[ "$SIZE_MIB" =~ ^[0-9]+$ ]] && ((SIZE_MIB >= 16)) || wio_die "SIZE_MIB must be a number >= 16"
install_host_tools e2fsprogs cpio
if ((REDIS)); then
  wio_apt_init
  WIO_USES_APT=1
fi

wio_inputs() {
  local initramfs_hash mke2fs_version
  initramfs_hash="$(wio_sha256_file "$INITRAMFS")"
  mke2fs_version="$(wio_host_pkg_version e2fsprogs)"
  wio_script_inputs
  printf 'initramfs %s\n' "$initramfs_hash"
  printf 'size_mib %s\n' "$SIZE_MIB"
  printf 'e2fsprogs %s\n' "$mke2fs_version"
  if ((REDIS)); then
    local p v
    for p in "${REDIS_PKGS[@]}"; do
      v="$(deb_candidate_version "$p")"
      printf 'deb %s %s\n' "$p" "$v"
    done
  fi
}

wio_build() {
  local out="$1" tree
  tree="$out/tree"
  mkdir -p "$tree"
  (cd "$tree" && gzip -dc "$INITRAMFS" | cpio -id --quiet --no-absolute-filenames)
  mkdir -p "$tree/data"
  if ((REDIS)); then
    local p deb
    for p in "${REDIS_PKGS[@]}"; do
      deb="$(download_deb "$p")"
      dpkg-deb -x "$deb" "$tree"
    done
    # Merged /usr: the dynamic loader and libraries live in usr/lib; /lib must lead there.
    if [[ -d "$tree/lib" && ! -L "$tree/lib" ]]; then
      cp -a "$tree/lib/." "$tree/usr/lib/"
      rm -rf "$tree/lib"
    fi
    ln -sfn usr/lib "$tree/lib"
    [[ -e "$tree/usr/lib/ld-linux-riscv64-lp64d.so.1" || -e "$tree/usr/lib/riscv64-linux-gnu/ld-linux-riscv64-lp64d.so.1" ]] ||
      wio_die "no riscv64 dynamic loader in the extracted packages"
    [[ -x "$tree/usr/bin/redis-server" ]] || wio_die "redis-server missing after extraction"
  fi
  find "$tree" -exec touch -h -d @1735689600 {} + # fixed mtimes: same inputs, same bytes
  # Reproducible ext4: fixed UUID, hash seed and creation time, files owned by root.
  E2FSPROGS_FAKE_TIME=1735689600 mkfs.ext4 -q -F -L wioroot -U 6f3c1c52-7d1e-4b59-9c39-7769726f6f74 \
    -E hash_seed=6f3c1c52-7d1e-4b59-9c39-7769726f6f74,root_owner=0:0 -T default \
    -d "$tree" "$out/rootfs.ext4" "${SIZE_MIB}M" >&2
  rm -rf "$tree"
}

wio_cached riscv64/rootfs
echo "ROOTFS=$WIO_OUT/rootfs.ext4"
