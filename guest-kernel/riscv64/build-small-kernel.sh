#!/usr/bin/env bash
# wio's small riscv64 kernel: guest-kernel/build-small-kernel.sh --arch riscv64 (see there).
exec "$(dirname "${BASH_SOURCE[0]}")/../build-small-kernel.sh" --arch riscv64 "$@"
