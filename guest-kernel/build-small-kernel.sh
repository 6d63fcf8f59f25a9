#!/usr/bin/env bash
# Builds wio's small guest kernel for ARCH from Debian's kernel source package;
# guest-kernel/riscv64/build-small-kernel.sh and guest-kernel/x86_64/build-small-kernel.sh
# call it.
#
# Source: Debian trixie's linux-source (resolved to linux-source-6.x, the same 6.12 kernel as
# Debian's riscv64 linux-image; the package is architecture-independent), fetched through
# the private trixie apt of images/lib.sh. Compiler: riscv64: the host's
# gcc-riscv64-linux-gnu (bookworm); x86_64: the host's gcc. Patch: ARCH/wio-determinism.patch
# when there is one (x86_64: CONFIG_WIO_GUEST, the kernel's TSC reads from wio's paravirt
# port, user RDTSC/RDTSCP trapped through CR4.TSD and emulated from the same virtual TSC).
# Configuration: `make tinyconfig`, then ARCH/small.config merged with
# `scripts/kconfig/merge_config.sh -n` (allnoconfig: options the fragment makes visible stay
# off); every line of small.config is checked to be in the final .config.
#
# Publishes $WIO_CACHE/ARCH/small-kernel/<key>/{Image or bzImage,config,System.map,
# build.log.gz,inputs.txt}; <key> hashes this script, images/lib.sh, small.config, the patch,
# the source package (name, version, .deb sha256) and the gcc/binutils versions.
# Prints KERNEL_RELEASE=... and IMAGE=<path> (riscv64) or BZIMAGE=<path> (x86_64), last.
#
# Usage: guest-kernel/build-small-kernel.sh --arch riscv64|x86_64
#   WIO_JOBS (default 2): make -j; WIO_TICK (default 30): seconds between progress lines.
# A first build takes about 4.5 minutes (riscv64) or 3 minutes (x86_64) on 2 cores (~20 s to
# fetch and unpack the source, ~10 s to configure, the rest to compile); a cached one is
# found in well under a second.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../images/lib.sh"

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2; }
[[ $# -eq 2 && "$1" == --arch ]] || usage
ARCH="$2"
case "$ARCH" in
  riscv64)
    KARCH=(ARCH=riscv CROSS_COMPILE=riscv64-linux-gnu-)
    CC_PKGS=(gcc-riscv64-linux-gnu binutils-riscv64-linux-gnu)
    TARGET=Image IMAGE_PATH=arch/riscv/boot/Image OUT_KEY=IMAGE ;;
  x86_64)
    KARCH=(ARCH=x86_64)
    CC_PKGS=(gcc binutils)
    TARGET=bzImage IMAGE_PATH=arch/x86/boot/bzImage OUT_KEY=BZIMAGE ;;
  *) usage ;;
esac
FRAGMENT="$HERE/$ARCH/small.config"
PATCH="$HERE/$ARCH/wio-determinism.patch"
[[ -f "$PATCH" ]] || PATCH=""
META_PKG=linux-source
JOBS="${WIO_JOBS:-2}"
MAKE_ARGS=("${KARCH[@]}"
  KBUILD_BUILD_USER=wio KBUILD_BUILD_HOST=wio KBUILD_BUILD_VERSION=1
  "KBUILD_BUILD_TIMESTAMP=$(date -u -d "@$SOURCE_DATE_EPOCH" '+%a %b %e %H:%M:%S UTC %Y')")

install_host_tools "${CC_PKGS[@]}" make flex bison bc libssl-dev libelf-dev xz-utils gzip dpkg \
  perl patch
wio_apt_init

wio_inputs() {
  local script_lines frag meta_ver pkg ver deb gcc binutils
  script_lines="$(wio_script_inputs)"
  frag="$(wio_sha256_file "$FRAGMENT")"
  meta_ver="$(deb_candidate_version "$META_PKG")"
  pkg="$(deb_depends_matching "$META_PKG" '^linux-source-[0-9]')"
  ver="$(deb_candidate_version "$pkg")"
  deb="$(deb_uri_info "$pkg")"
  gcc="$(wio_host_pkg_version "${CC_PKGS[0]}")"
  binutils="$(wio_host_pkg_version "${CC_PKGS[1]}")"
  printf '%s\n' "$script_lines"
  printf 'arch %s\n' "$ARCH"
  printf 'fragment small.config %s\n' "$frag"
  [[ -z "$PATCH" ]] || printf 'patch wio-determinism.patch %s\n' "$(wio_sha256_file "$PATCH")"
  printf 'meta %s %s\n' "$META_PKG" "$meta_ver"
  printf 'package %s %s\n' "$pkg" "$ver"
  printf 'deb %s\n' "$(cut -d' ' -f1-2 <<<"$deb")"
  printf 'host %s %s\n' "${CC_PKGS[0]}" "$gcc"
  printf 'host %s %s\n' "${CC_PKGS[1]}" "$binutils"
  printf 'make %s\n' "${MAKE_ARGS[*]}"
}

# check_config FRAGMENT CONFIG: every setting of the fragment must be in the final config.
check_config() {
  local line sym bad=0
  while IFS= read -r line; do
    case "$line" in
      CONFIG_*=*) sym="${line%%=*}"
        grep -qxF -- "$line" "$2" || { wio_log "config: wanted $line, got: $(grep -E "^(# )?${sym}[= ]" "$2" || echo unset)"; bad=1; } ;;
      "# CONFIG_"*" is not set") sym="${line#\# }"; sym="${sym%% *}"
        ! grep -q "^$sym=" "$2" || { wio_log "config: wanted $line, got: $(grep "^$sym=" "$2")"; bad=1; } ;;
    esac
  done <"$1"
  return "$bad"
}

wio_build() {
  local out="$1" pkg deb src tarball log start
  pkg="$(deb_depends_matching "$META_PKG" '^linux-source-[0-9]')"
  deb="$(download_deb "$pkg")"
  wio_tmpdir src build
  log="$src/build.log"
  tarball="./usr/src/$pkg.tar.xz"
  wio_log "unpacking $tarball from $(basename "$deb")"
  start=$SECONDS
  dpkg-deb --fsys-tarfile "$deb" | tar -xOf - "$tarball" | xz -dc -T"$JOBS" |
    tar -x -C "$src" --strip-components=1
  wio_log "unpacked in $((SECONDS - start))s"
  cd "$src"
  [[ -f Makefile && -f scripts/kconfig/merge_config.sh ]] || wio_die "$tarball is not a kernel tree"

  if [[ -n "$PATCH" ]]; then
    wio_log "applying wio-determinism.patch"
    patch -p1 --forward --quiet <"$PATCH" >>"$log" 2>&1 ||
      { tail -n 20 "$log" >&2; wio_die "wio-determinism.patch does not apply to $pkg"; }
  fi
  wio_log "configuring: tinyconfig + small.config"
  {
    make "${MAKE_ARGS[@]}" tinyconfig
    # -n: allnoconfig with tinyconfig + fragment as the given values, i.e. every option
    # that becomes visible (IPv6 once INET is on, VT once TTY is on, ...) stays off
    env "${KARCH[@]}" scripts/kconfig/merge_config.sh -n .config "$FRAGMENT"
  } >>"$log" 2>&1 || { tail -n 40 "$log" >&2; wio_die "kernel configuration failed"; }
  check_config "$FRAGMENT" .config || wio_die "small.config did not apply (see above)"

  wio_log "compiling with make -j$JOBS (progress every ${WIO_TICK:-30}s)"
  start=$SECONDS
  wio_ticker "echo \"compiling: \$(grep -c '^  CC ' '$log') files compiled, \$((SECONDS - $start))s; last: \$(grep '^  [A-Z]' '$log' | tail -n1 | sed 's/^ *//')\""
  if ! make "${MAKE_ARGS[@]}" -j"$JOBS" "$TARGET" >>"$log" 2>&1; then
    wio_ticker_stop
    cp "$log" "$WIO_CACHE/logs/$ARCH-small-kernel-failed.log"
    tail -n 40 "$log" >&2
    wio_die "kernel build failed; full log: $WIO_CACHE/logs/$ARCH-small-kernel-failed.log"
  fi
  wio_ticker_stop
  wio_log "compiled $(grep -c '^  CC ' "$log") files in $((SECONDS - start))s"

  if [[ "$ARCH" == riscv64 ]]; then
    riscv_image_check "$IMAGE_PATH" || wio_die "$IMAGE_PATH lacks the RISC-V Image magic"
  else
    [[ "$(dd if="$IMAGE_PATH" bs=1 skip=514 count=4 status=none)" == HdrS ]] ||
      wio_die "$IMAGE_PATH lacks the x86 boot protocol's HdrS signature"
  fi
  cp "$IMAGE_PATH" "$out/$TARGET"
  cp .config "$out/config"
  cp System.map "$out/System.map"
  make -s "${MAKE_ARGS[@]}" kernelrelease >"$out/kernel-release"
  gzip -n -9 <"$log" >"$out/build.log.gz"
  cd /
  touch -d "@$SOURCE_DATE_EPOCH" "$out"/*
  wio_log "$TARGET: $(($(stat -c %s "$out/$TARGET") / 1024)) KiB, release $(cat "$out/kernel-release")"
  wio_log "removing the build tree"
  rm -rf --one-file-system "$src"
}

WIO_USES_APT=1 wio_cached "$ARCH/small-kernel"
echo "KERNEL_RELEASE=$(cat "$WIO_OUT/kernel-release")"
echo "$OUT_KEY=$WIO_OUT/$TARGET"
