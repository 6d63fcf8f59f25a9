#!/usr/bin/env bash
# Coverage-guided fuzzing of wio (cargo fuzz, libFuzzer): builds every target in fuzz/,
# runs each for SECONDS from its committed seeds (fuzz/seeds/TARGET) and a working corpus
# (fuzz/corpus/TARGET, not committed), with debug assertions (overflow checks included)
# and an RSS limit, and prints per target the executions, executions per second and
# crashes. Exits 1 when a target crashed: the input
# is in fuzz/artifacts/TARGET/; make it a regression test (fuzz/seeds and a unit test of
# the code it broke) before fixing.
#
# Usage: ci/fuzz.sh SECONDS [TARGET...]      (default: every target)
# Needs the nightly toolchain; installs cargo-fuzz when missing.
set -euo pipefail
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2; exit 2; }
[[ $# -ge 1 && "$1" =~ ^[0-9]+$ ]] || usage
secs="$1"
shift
cd "$(dirname "$0")/../fuzz"
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz: installing cargo-fuzz…" >&2
  cargo install -q cargo-fuzz
fi
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  mapfile -t targets < <(cargo +nightly fuzz list)
fi
echo "fuzz: building ${targets[*]}…" >&2
cargo +nightly fuzz build -O -a >&2
status=0
printf '%-14s %14s %12s %8s\n' target executions "per second" crashes
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "seeds/$t" "artifacts/$t"
  before="$(find "artifacts/$t" -type f | wc -l)"
  log="$(mktemp)"
  cargo +nightly fuzz run -O -a "$t" "corpus/$t" "seeds/$t" -- \
    -max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1 || true
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
  secs_run="$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n 1)"
  after="$(find "artifacts/$t" -type f | wc -l)"
  crashes=$((after - before))
  rate=0
  if [[ -n "$runs" && -n "$secs_run" && "$secs_run" -gt 0 ]]; then rate=$((runs / secs_run)); fi
  printf '%-14s %14s %12s %8s\n' "$t" "${runs:-?}" "$rate" "$crashes"
  if [[ $crashes -gt 0 || -z "$runs" ]]; then
    status=1
    echo "fuzz: $t: $( [[ -z "$runs" ]] && echo 'did not finish' || echo "crash inputs in fuzz/artifacts/$t/")" >&2
    grep -E 'panicked at|ERROR: libFuzzer|SUMMARY' "$log" | head -n 5 >&2 || true
  fi
  rm -f "$log"
done
exit "$status"
