#!/usr/bin/env bash
# Debian trixie's unmodified riscv64 kernel, for wio's RISC-V guests.
#
# Fetches linux-image-riscv64 (resolved to the real linux-image-6.x-riscv64 package) from the
# private riscv64 trixie apt, and publishes into $WIO_CACHE/riscv64/debian-kernel/<key>/:
#   Image                 the uncompressed RISC-V Linux Image (with Debian's EFI/PE stub
#                         header; "RISCV\0\0\0" at byte 48, "RSC\x05" at byte 56)
#   config, System.map    from /boot of the package
#   modules/<release>/    the virtio modules that are modular in this kernel and their
#                         dependencies, decompressed (.ko), with modules.dep etc. from depmod
#   modules-builtin.txt   which of the wanted virtio drivers are built in instead
#   inputs.txt            the inputs whose hash is <key>
# Prints (stdout, last lines): KERNEL_RELEASE=..., IMAGE=<path>, MODULES=<path>
#
# Usage: images/riscv64-debian-kernel.sh        (WIO_CACHE, WIO_APT_UPDATE: see lib.sh)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/kernel-modules.sh"

META_PKG=linux-image-riscv64

[[ $# -eq 0 ]] || { sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2; }

install_host_tools dpkg kmod xz-utils gzip zstd
wio_apt_init

wio_inputs() {
  local pkg meta_ver ver deb script_lines
  script_lines="$(wio_script_inputs)"
  meta_ver="$(deb_candidate_version "$META_PKG")"
  pkg="$(deb_depends_matching "$META_PKG" '^linux-image-[0-9]')"
  ver="$(deb_candidate_version "$pkg")"
  deb="$(deb_uri_info "$pkg")"
  printf '%s\n' "$script_lines"
  kernel_modules_inputs
  printf 'meta %s %s\n' "$META_PKG" "$meta_ver"
  printf 'package %s %s\n' "$pkg" "$ver"
  printf 'deb %s\n' "$(cut -d' ' -f1-2 <<<"$deb")"
  printf 'modules %s\n' "${WIO_VIRTIO_MODULES[*]}"
}

wio_build() {
  local out="$1" pkg deb x img rel
  pkg="$(deb_depends_matching "$META_PKG" '^linux-image-[0-9]')"
  deb="$(download_deb "$pkg")"
  wio_tmpdir x extract
  wio_log "extracting $(basename "$deb")"
  dpkg-deb -x "$deb" "$x"

  # --- the kernel image
  img="$(compgen -G "$x/boot/vmlinu[xz]-*" | head -n1 || true)"
  [[ -n "$img" ]] || wio_die "no /boot/vmlinux-* or /boot/vmlinuz-* in $pkg"
  rel="$(basename "$img")"
  rel="${rel#vmlinu[xz]-}"
  case "$(od -An -tx1 -N4 "$img" | tr -d ' \n')" in
    1f8b*) wio_log "kernel is gzip-compressed: decompressing"; gzip -dc "$img" >"$out/Image" ;;
    28b52ffd) wio_log "kernel is zstd-compressed: decompressing"; zstd -qdc "$img" >"$out/Image" ;;
    fd377a58) wio_log "kernel is xz-compressed: decompressing"; xz -dc "$img" >"$out/Image" ;;
    *) cp "$img" "$out/Image" ;;
  esac
  riscv_image_check "$out/Image" ||
    wio_die "$(basename "$img") is not a RISC-V Image (bytes 48..60: $(od -An -c -j48 -N12 "$out/Image"))"
  chmod 644 "$out/Image"
  cp "$x/boot/config-$rel" "$out/config"
  [[ -f "$x/boot/System.map-$rel" ]] && cp "$x/boot/System.map-$rel" "$out/System.map"

  # --- the virtio modules and their dependencies
  local src="" d mods
  for d in "$x/usr/lib/modules/$rel" "$x/lib/modules/$rel"; do [[ -d "$d" ]] && src="$d" && break; done
  [[ -n "$src" ]] || wio_die "no modules tree for $rel in $pkg"
  # (modules.builtin says virtio_console is built in when CONFIG_VIRTIO_CONSOLE=y)
  mods="$(collect_kernel_modules "$src" "$out/modules/$rel" "$out/modules-builtin.txt" "${WIO_VIRTIO_MODULES[@]}")"
  find "$out" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  wio_log "kernel $rel: modules $mods| built in: $(tr '\n' ' ' <"$out/modules-builtin.txt")"
  printf '%s\n' "$rel" >"$out/kernel-release"
  rm -rf "$x"
}

WIO_USES_APT=1 wio_cached riscv64/debian-kernel
rel="$(cat "$WIO_OUT/kernel-release")"
echo "KERNEL_RELEASE=$rel"
echo "IMAGE=$WIO_OUT/Image"
echo "MODULES=$WIO_OUT/modules/$rel"
