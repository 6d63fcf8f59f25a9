#!/usr/bin/env bash
# Builds wio's small x86-64 guest kernel, with wio's determinism patches, from Debian's
# kernel source package.
#
# Source: Debian trixie's linux-source (linux-source-6.12, the same source as the small
# riscv64 kernel), fetched through the private trixie apt of images/lib.sh (the package is
# architecture-independent). Patch: wio-determinism.patch (beside this script; adds
# CONFIG_WIO_GUEST: the kernel's TSC reads come from wio's paravirt port, user RDTSC/RDTSCP
# trap through CR4.TSD and are emulated from the same virtual TSC). Compiler: the host's gcc.
# Configuration: `make tinyconfig`, then small.config (beside this script) merged with
# `scripts/kconfig/merge_config.sh -n` (allnoconfig: options the fragment makes visible stay
# off); every line of small.config is checked to be in the final .config.
#
# Publishes $WIO_CACHE/x86_64/small-kernel/<key>/{bzImage,config,System.map,build.log.gz,
# inputs.txt}; <key> hashes this script, images/lib.sh, small.config, the patch, the source
# package (name, version, .deb sha256) and the gcc/binutils versions.
# Prints KERNEL_RELEASE=... and BZIMAGE=<path> (last line).
#
# Usage: guest-kernel/x86_64/build-small-kernel.sh
#   WIO_JOBS (default 2): make -j; WIO_TICK (default 30): seconds between progress lines.
# A first build takes a few minutes on 2 cores; a cached one is found in well under a second.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../../images/lib.sh"

[[ $# -eq 0 ]] || { sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2; }
FRAGMENT="$HERE/small.config"
PATCH="$HERE/wio-determinism.patch"
META_PKG=linux-source
JOBS="${WIO_JOBS:-2}"
MAKE_ARGS=(ARCH=x86_64
  KBUILD_BUILD_USER=wio KBUILD_BUILD_HOST=wio KBUILD_BUILD_VERSION=1
  "KBUILD_BUILD_TIMESTAMP=$(date -u -d "@$SOURCE_DATE_EPOCH" '+%a %b %e %H:%M:%S UTC %Y')")

install_host_tools gcc binutils make flex bison bc libssl-dev libelf-dev xz-utils gzip dpkg \
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
  gcc="$(wio_host_pkg_version gcc)"
  binutils="$(wio_host_pkg_version binutils)"
  printf '%s\n' "$script_lines"
  printf 'fragment small.config %s\n' "$frag"
  printf 'patch wio-determinism.patch %s\n' "$(wio_sha256_file "$PATCH")"
  printf 'meta %s %s\n' "$META_PKG" "$meta_ver"
  printf 'package %s %s\n' "$pkg" "$ver"
  printf 'deb %s\n' "$(cut -d' ' -f1-2 <<<"$deb")"
  printf 'host gcc %s\n' "$gcc"
  printf 'host binutils %s\n' "$binutils"
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

  wio_log "applying wio-determinism.patch"
  patch -p1 --forward --quiet <"$PATCH" >>"$log" 2>&1 || { tail -n 20 "$log" >&2; wio_die "wio-determinism.patch does not apply to $pkg"; }
  wio_log "configuring: tinyconfig + small.config"
  {
    make "${MAKE_ARGS[@]}" tinyconfig
    # -n: allnoconfig with tinyconfig + fragment as the given values, i.e. every option
    # that becomes visible (IPv6 once INET is on, VT once TTY is on, ...) stays off
    ARCH=x86_64 scripts/kconfig/merge_config.sh -n .config "$FRAGMENT"
  } >>"$log" 2>&1 || { tail -n 40 "$log" >&2; wio_die "kernel configuration failed"; }
  check_config "$FRAGMENT" .config || wio_die "small.config did not apply (see above)"

  wio_log "compiling with make -j$JOBS (progress every ${WIO_TICK:-30}s)"
  start=$SECONDS
  wio_ticker "echo \"compiling: \$(grep -c '^  CC ' '$log') files compiled, \$((SECONDS - $start))s; last: \$(grep '^  [A-Z]' '$log' | tail -n1 | sed 's/^ *//')\""
  if ! make "${MAKE_ARGS[@]}" -j"$JOBS" bzImage >>"$log" 2>&1; then
    wio_ticker_stop
    cp "$log" "$WIO_CACHE/logs/x86_64-small-kernel-failed.log"
    tail -n 40 "$log" >&2
    wio_die "kernel build failed; full log: $WIO_CACHE/logs/x86_64-small-kernel-failed.log"
  fi
  wio_ticker_stop
  wio_log "compiled $(grep -c '^  CC ' "$log") files in $((SECONDS - start))s"

  [[ "$(dd if=arch/x86/boot/bzImage bs=1 skip=514 count=4 status=none)" == HdrS ]] ||
    wio_die "arch/x86/boot/bzImage lacks the x86 boot protocol's HdrS signature"
  cp arch/x86/boot/bzImage "$out/bzImage"
  cp .config "$out/config"
  cp System.map "$out/System.map"
  make -s "${MAKE_ARGS[@]}" kernelrelease >"$out/kernel-release"
  gzip -n -9 <"$log" >"$out/build.log.gz"
  cd /
  touch -d "@$SOURCE_DATE_EPOCH" "$out"/*
  wio_log "bzImage: $(($(stat -c %s "$out/bzImage") / 1024)) KiB, release $(cat "$out/kernel-release")"
  wio_log "removing the build tree"
  rm -rf --one-file-system "$src"
}

WIO_USES_APT=1 wio_cached x86_64/small-kernel
echo "KERNEL_RELEASE=$(cat "$WIO_OUT/kernel-release")"
echo "BZIMAGE=$WIO_OUT/bzImage"
