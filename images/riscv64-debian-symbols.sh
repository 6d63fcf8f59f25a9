#!/usr/bin/env bash
# The symbols of Debian trixie's riscv64 kernel, for debugging it under wio (`--gdb`).
#
# Debian's linux-image package ships a placeholder System.map ("The real System.map is in
# the linux-image-<version>-dbg package"). This fetches that -dbg package (about 1 GB, for
# the kernel version riscv64-debian-kernel.sh uses), takes only its vmlinux (early in the
# archive: not all of it is decompressed), and publishes into
# $WIO_CACHE/riscv64/debian-symbols/<key>/:
#   System.map            `nm -n` of the vmlinux: every symbol and its address
#   inputs.txt            the inputs whose hash is <key>
# The .deb itself is not kept. Prints (stdout, last line): SYSTEM_MAP=<path>
#
# Usage: images/riscv64-debian-symbols.sh        (WIO_CACHE, WIO_APT_UPDATE: see lib.sh)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

META_PKG=linux-image-riscv64

[[ $# -eq 0 ]] || { sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2; }

install_host_tools dpkg tar xz-utils binutils
wio_apt_init

dbg_pkg() {
  local pkg
  pkg="$(deb_depends_matching "$META_PKG" '^linux-image-[0-9]')"
  printf '%s-dbg\n' "${pkg%-unsigned}"
}

wio_inputs() {
  local script_lines pkg ver deb
  script_lines="$(wio_script_inputs)"
  pkg="$(dbg_pkg)"
  ver="$(deb_candidate_version "$pkg")"
  deb="$(deb_uri_info "$pkg")"
  printf '%s\n' "$script_lines"
  printf 'package %s %s\n' "$pkg" "$ver"
  printf 'deb %s\n' "$(cut -d' ' -f1-2 <<<"$deb")"
}

wio_build() {
  local out="$1" pkg deb x rel vmlinux
  pkg="$(dbg_pkg)"
  rel="${pkg#linux-image-}"
  rel="${rel%-dbg}"
  deb="$(download_deb "$pkg")"
  wio_tmpdir x extract
  vmlinux="./usr/lib/debug/boot/vmlinux-$rel"
  wio_log "extracting $vmlinux from $(basename "$deb")"
  # --occurrence: tar stops at the member instead of reading the whole archive (dpkg-deb
  # then sees a closed pipe, which is expected).
  (cd "$x" && { dpkg-deb --fsys-tarfile "$deb" 2>/dev/null || true; } | tar -x --occurrence=1 "$vmlinux")
  [[ -f "$x/$vmlinux" ]] || wio_die "no $vmlinux in $pkg"
  nm -n "$x/$vmlinux" >"$out/System.map"
  grep -q ' T start_kernel$' "$out/System.map" || wio_die "no start_kernel in the symbols of $pkg"
  wio_log "$(wc -l <"$out/System.map") symbols of $rel"
  rm -rf "$x" "$(dirname "$deb")"
  touch -d "@$SOURCE_DATE_EPOCH" "$out/System.map"
}

WIO_USES_APT=1 wio_cached riscv64/debian-symbols
echo "SYSTEM_MAP=$WIO_OUT/System.map"
