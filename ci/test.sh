#!/usr/bin/env bash
# Runs every test of the workspace: formatting, lints, unit tests and the
# end-to-end tests of the wio binary. Called by .ci/run and named in README.md.
#
# The riscv64 end-to-end tests need the guest artifacts that
# images/build-all-riscv64.sh builds into $WIO_CACHE (about 7 minutes the first
# time on 2 cores, about a second when cached); this script builds them first.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v gcc >/dev/null && command -v ld >/dev/null || need+=(gcc binutils)
command -v qemu-riscv64 >/dev/null || need+=(qemu-user)
command -v riscv64-linux-gnu-gcc >/dev/null || need+=(gcc-riscv64-linux-gnu)
command -v tcpdump >/dev/null || need+=(tcpdump)
command -v debugfs >/dev/null || need+=(e2fsprogs)
command -v gdb-multiarch >/dev/null || need+=(gdb-multiarch)
if [ ${#need[@]} -gt 0 ]; then
  echo "ci/test.sh: installing ${need[*]} (test guest build, differential test)"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null \
      || echo "ci/test.sh: WARNING: could not install ${need[*]}; tests that need them will say SKIPPED"
  else
    echo "ci/test.sh: WARNING: not root, cannot install ${need[*]}; tests that need them will say SKIPPED"
  fi
fi

echo "== riscv64 guest artifacts (images/build-all-riscv64.sh)"
if ! bash images/build-all-riscv64.sh >/dev/null; then
  echo "ci/test.sh: WARNING: building the riscv64 guests failed; the riscv64 end-to-end tests will say SKIPPED"
fi

echo "== layout (no import cycles inside a crate, no file over 850 lines)"
python3 ci/layout_check.py
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets --release -- -D warnings
echo "== cargo test"
# --show-output makes every SKIPPED line of a test that could not run visible here.
cargo test --workspace --release -- --show-output
echo "== x86-64 tests on hardware virtualization (nested: ci/l1.sh)"
if [[ -e /sys/module/kvm_intel || -e /sys/module/kvm_amd ]]; then
  echo "this host's /dev/kvm is hardware virtualization: the x86-64 tests above ran on it directly"
else
  # This host's KVM (PVM, or none) cannot run the x86-64 tests that need VT-x/AMD-V:
  # run them inside an L1 whose emulated SVM gives kvm_amd (about a minute).
  bash ci/l1.sh
fi
echo "== fuzzing, a short budget (ci/fuzz.sh; long runs: ci/fuzz.sh 3600)"
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  bash ci/fuzz.sh 20
else
  echo "SKIPPED: fuzzing: no nightly toolchain (rustup toolchain install nightly)"
fi
