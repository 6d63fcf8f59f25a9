#!/usr/bin/env bash
# Debian trixie's unmodified OpenSBI (package `opensbi`, generic platform), the M-mode
# firmware for `wio run --arch riscv64 --firmware FILE`. Publishes into
# $WIO_CACHE/riscv64/opensbi/<key>/:
#   fw_dynamic.bin  fw_dynamic.elf   firmware told where the next stage is (a2: fw_dynamic_info)
#   fw_jump.bin     fw_jump.elf      firmware that jumps to RAM base + 2 MiB
#   inputs.txt                       the inputs whose hash is <key>
# Prints (stdout): FW_DYNAMIC=<path> and FW_JUMP=<path>
#
# Usage: images/riscv64-opensbi.sh        (WIO_CACHE, WIO_APT_UPDATE: see lib.sh)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PKG=opensbi

[[ $# -eq 0 ]] || { sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2; }

install_host_tools dpkg
wio_apt_init

wio_inputs() {
  wio_script_inputs
  printf 'package %s %s\n' "$PKG" "$(deb_candidate_version "$PKG")"
  printf 'deb %s\n' "$(deb_uri_info "$PKG" | cut -d' ' -f1-2)"
}

wio_build() {
  local out="$1" deb x f
  deb="$(download_deb "$PKG")"
  wio_tmpdir x extract
  dpkg-deb -x "$deb" "$x"
  for f in fw_dynamic.bin fw_dynamic.elf fw_jump.bin fw_jump.elf; do
    [[ -f "$x/usr/lib/riscv64-linux-gnu/opensbi/generic/$f" ]] || wio_die "no generic/$f in $(basename "$deb")"
    cp "$x/usr/lib/riscv64-linux-gnu/opensbi/generic/$f" "$out/$f"
    touch -d "@$SOURCE_DATE_EPOCH" "$out/$f"
  done
  rm -rf "$x" "$(dirname "$deb")"
}

WIO_USES_APT=1 wio_cached riscv64/opensbi
echo "FW_DYNAMIC=$WIO_OUT/fw_dynamic.bin"
echo "FW_JUMP=$WIO_OUT/fw_jump.bin"
