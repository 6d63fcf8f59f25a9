#!/usr/bin/env bash
# wio's small x86-64 kernel, with the determinism patch: guest-kernel/build-small-kernel.sh
# --arch x86_64 (see there).
exec "$(dirname "${BASH_SOURCE[0]}")/../build-small-kernel.sh" --arch x86_64 "$@"
