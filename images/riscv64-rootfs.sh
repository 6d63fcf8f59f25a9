#!/usr/bin/env bash
# The riscv64 root disk: images/rootfs.sh --arch riscv64 (see there for options and output).
exec "$(dirname "${BASH_SOURCE[0]}")/rootfs.sh" --arch riscv64 "$@"
