#!/usr/bin/env bash
# Runs every test of the workspace: formatting, lints, unit tests and the
# end-to-end tests of the wio binary. Called by .ci/run and named in README.md.
set -euo pipefail
cd "$(dirname "$0")/.."

# The x86-64 test guest is built from source with the host's gcc and binutils.
if ! command -v gcc >/dev/null || ! command -v ld >/dev/null; then
  echo "ci/test.sh: installing gcc and binutils (needed to build the x86-64 test guest)"
  apt-get update -qq && apt-get install -y -qq gcc binutils >/dev/null
fi

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets --release -- -D warnings
echo "== cargo test"
cargo test --workspace --release
