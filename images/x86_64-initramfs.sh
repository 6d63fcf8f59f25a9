#!/usr/bin/env bash
# The x86-64 initramfs: images/initramfs.sh --arch x86_64 (see there for options and output).
exec "$(dirname "${BASH_SOURCE[0]}")/initramfs.sh" --arch x86_64 "$@"
