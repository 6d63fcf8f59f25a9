#!/usr/bin/env bash
# Exploration throughput of this checkout against BASELINE_REV, side by side in one run:
# builds wio at BASELINE_REV (a git worktree, cached under $WIO_CACHE/bench-explore/REV),
# builds this checkout's wio, and runs ci/bench_explore.py on both (idle-heavy and
# compute-heavy branches of the small riscv64 guest, and the payment world's branches).
#
#   ci/bench_explore.sh BASELINE_REV [bench_explore.py options, e.g. --rounds 3]
#   ci/bench_explore.sh a2b7f26 --cases idle --idle-branches 1000
set -euo pipefail
if [ $# -lt 1 ] || [ "${1#-}" != "$1" ]; then
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
here="$(cd "$(dirname "$0")/.." && pwd)"
rev="$(git -C "$here" rev-parse --verify "$1^{commit}")" || {
    echo "bench_explore: $1 is not a revision of this repository" >&2
    exit 2
}
shift
cache="${WIO_CACHE:-$HOME/.cache/wio}/bench-explore/$rev"
base="$cache/target/release/wio"
if [ ! -x "$base" ]; then
    echo "bench_explore: building wio at ${rev:0:12} (once; cached in $cache)" >&2
    mkdir -p "$cache"
    rm -rf "$cache/src"
    git -C "$here" worktree add --force --detach "$cache/src" "$rev" >/dev/null
    (cd "$cache/src" && CARGO_TARGET_DIR="$cache/target" cargo build --release -q -p wio)
    git -C "$here" worktree remove --force "$cache/src"
fi
echo "bench_explore: building this checkout's wio" >&2
(cd "$here" && cargo build --release -q -p wio)
exec python3 "$here/ci/bench_explore.py" --wio "$here/target/release/wio" --baseline "$base" "$@"
