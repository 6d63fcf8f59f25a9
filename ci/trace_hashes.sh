#!/usr/bin/env bash
# Prints the trace hash of each reference run (the runs whose hashes a change that must
# not move guest-visible behaviour keeps: a refactor, the snapshot format, a new crate
# split). Run it with the wio before and after the change and compare the two lists:
#
#   WIO_BIN=old/wio bash ci/trace_hashes.sh > before.txt
#   bash ci/trace_hashes.sh > after.txt && diff before.txt after.txt
#
# Reference runs: the small and the Debian riscv64 guests, Debian's kernel under Debian's
# OpenSBI, the bare-metal flight example, a 3-node world, the payments world (seed 1, to
# its end), 4 branches explored from a snapshot of the small guest and the x86-64 test guest (needs a usable /dev/kvm; says SKIPPED
# otherwise). Each line: name, trace hash, virtual ns, exit code. Needs the riscv64 guests
# (images/build-all-riscv64.sh). About a minute on 2 cores.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WIO="${WIO_BIN:-$ROOT/target/release/wio}"
[[ -x "$WIO" ]] || { echo "trace_hashes: no wio binary at $WIO (cargo build --release, or set WIO_BIN)" >&2; exit 2; }
manifest="${WIO_CACHE:-$HOME/.cache/wio}/riscv64-guests.env"
[[ -f "$manifest" ]] || { echo "trace_hashes: no riscv64 guests ($manifest); run images/build-all-riscv64.sh" >&2; exit 2; }
# shellcheck disable=SC1090
source "$manifest"
work="$(mktemp -d "${TMPDIR:-/tmp}/wio-hashes.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# run NAME SUBCOMMAND ARGS...: one line for the run's summary.
run() {
  local name="$1" sub="$2"
  shift 2
  local code=0
  "$WIO" "$sub" --summary-json "$work/$name.json" --quiet "$@" >/dev/null 2>"$work/$name.err" || code=$?
  python3 - "$name" "$work/$name.json" "$code" <<'PY'
import json, sys
name, path, code = sys.argv[1], sys.argv[2], sys.argv[3]
s = json.load(open(path))
h = s.get('trace_hash') or s.get('world_trace_hash')
print(f"{name:<14} {h} virtual_ns={s.get('virtual_ns')} exit={code}")
PY
}

run small-42 run --arch riscv64 --seed 42 --no-summary
run debian-1 run --arch riscv64 --guest debian --seed 1 --no-summary
run opensbi-1 run --arch riscv64 --firmware "$RISCV64_OPENSBI_FW_DYNAMIC" \
  --kernel "$RISCV64_DEBIAN_IMAGE" --initrd "$RISCV64_DEBIAN_INITRAMFS" --seed 1 --no-summary
run flight-9 run --arch riscv64 --kernel "$RISCV64_FLIGHT_ELF" --mem 64 --seed 9 \
  --cmdline protect=on --no-summary
run world3-1 sim "$ROOT/tests/worlds/three-nodes.toml" --seed 1
run payments-1 sim "$ROOT/images/payments/world.toml" --seed 1
# An exploration: 4 branches of a snapshot of the small guest (each branch's trace hash).
"$WIO" run --arch riscv64 --seed 3 --quiet --no-summary --snapshot-at 1s \
  --snapshot-out "$work/small.snap" 2>/dev/null
"$WIO" explore --from "$work/small.snap" --seeds 1..5 --jobs 2 --report "$work/explore.json" \
  >/dev/null 2>"$work/explore.err"
python3 - "$work/explore.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(f"explore-{r['seed']:<6} {r['trace_hash']} virtual_ns={r['virtual_ns']} exit={r['exit_status']}")
PY
if [[ -r /dev/kvm && -w /dev/kvm ]]; then
  run x86-test-42 run --seed 42 --no-summary
else
  echo "SKIPPED: x86-test-42: no usable /dev/kvm"
fi
