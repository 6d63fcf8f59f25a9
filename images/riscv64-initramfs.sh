#!/usr/bin/env bash
# The riscv64 initramfs: images/initramfs.sh --arch riscv64 (see there for options and output).
exec "$(dirname "${BASH_SOURCE[0]}")/initramfs.sh" --arch riscv64 "$@"
