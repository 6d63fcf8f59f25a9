#!/usr/bin/env bash
# The x86-64 root disk: images/rootfs.sh --arch x86_64 (see there for options and output).
exec "$(dirname "${BASH_SOURCE[0]}")/rootfs.sh" --arch x86_64 "$@"
