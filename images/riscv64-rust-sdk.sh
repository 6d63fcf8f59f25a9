#!/usr/bin/env bash
# A riscv64 program instrumented with the Antithesis Rust SDK (images/probe/rust-sdk/:
# antithesis_sdk from crates.io, versions pinned by its Cargo.lock), cross-built with the
# host's Rust for riscv64gc-unknown-linux-gnu (the target added with rustup when missing)
# and Debian's riscv64-linux-gnu-gcc as the linker. Dynamic, for glibc images (Debian's);
# under wio its assertions reach the promise channel through the image's libvoidstar.so.
# Publishes $WIO_CACHE/riscv64/rust-sdk/<key>/:
#   wio-rust-sdk-demo   the program
#   inputs.txt
# Prints (stdout): RUST_SDK_DEMO=<path>
#
# Usage: images/riscv64-rust-sdk.sh        (WIO_CACHE: see lib.sh)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/probe/rust-sdk" && pwd)"
TARGET=riscv64gc-unknown-linux-gnu

[[ $# -eq 0 ]] || { sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2; }

install_host_tools gcc-riscv64-linux-gnu libc6-dev-riscv64-cross
command -v cargo >/dev/null || wio_die "no cargo on this host (install Rust with rustup)"
if ! rustup target list --installed 2>/dev/null | grep -qx "$TARGET"; then
  wio_log "adding the Rust target $TARGET"
  rustup target add "$TARGET" >&2 || wio_die "cannot add the Rust target $TARGET (rustup target add $TARGET)"
fi

wio_inputs() {
  local f
  wio_script_inputs
  for f in Cargo.toml Cargo.lock src/main.rs; do
    printf 'source %s %s\n' "$f" "$(wio_sha256_file "$SRC/$f")"
  done
  printf 'toolchain %s gcc-riscv64-linux-gnu %s\n' "$(rustc --version)" "$(wio_host_pkg_version gcc-riscv64-linux-gnu)"
}

wio_build() {
  local out="$1" target
  wio_tmpdir target cargo
  # No path of this machine in the program: the sources and the registry are renamed.
  (cd "$SRC" &&
    CARGO_TARGET_DIR="$target" \
      CARGO_TARGET_RISCV64GC_UNKNOWN_LINUX_GNU_LINKER=riscv64-linux-gnu-gcc \
      RUSTFLAGS="--remap-path-prefix=$SRC=rust-sdk --remap-path-prefix=${CARGO_HOME:-$HOME/.cargo}=cargo --remap-path-prefix=$(rustc --print sysroot)=rust --remap-path-prefix=$target=target" \
      cargo build --release --locked --quiet --target "$TARGET" >&2) ||
    wio_die "cannot build $SRC for $TARGET"
  install -m 755 "$target/$TARGET/release/wio-rust-sdk-demo" "$out/wio-rust-sdk-demo"
  wio_log "rust sdk demo: $(($(stat -c %s "$out/wio-rust-sdk-demo") / 1024)) KiB"
}

wio_cached riscv64/rust-sdk
echo "RUST_SDK_DEMO=$WIO_OUT/wio-rust-sdk-demo"
