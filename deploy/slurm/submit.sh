#!/usr/bin/env bash
# Submits a wio exploration to Slurm: an array of TASKS shard tasks, then a merge job that
# waits for all of them (afterany). Prints the job ids; the merged report appears as
# OUT/report.json (and the table as OUT/report.txt) when the merge job ends.
#
# Usage: deploy/slurm/submit.sh SNAPSHOT SEEDS TASKS OUT [wio explore arguments...]
#   e.g. deploy/slurm/submit.sh /shared/start.snap 0..100000 64 /shared/run1 --fail-on panic
# Environment: WIO (the wio binary every node runs; default: wio on PATH), CPUS (per
# task, default 1), SBATCH_ARGS (more sbatch options: partition, account, time limit).
set -euo pipefail
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2; exit 2; }
[[ $# -ge 4 ]] || usage
snapshot="$1" seeds="$2" tasks="$3" out="$4"
shift 4
[[ "$tasks" =~ ^[1-9][0-9]*$ ]] || { echo "submit: TASKS must be a positive number" >&2; exit 2; }
[[ -f "$snapshot" ]] || { echo "submit: no snapshot at $snapshot" >&2; exit 2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
snapshot="$(cd "$(dirname "$snapshot")" && pwd)/$(basename "$snapshot")"
mkdir -p "$out/logs"
out="$(cd "$out" && pwd)"
rm -f "$out"/shard-*.json "$out/report.json" "$out/report.txt"
wio="${WIO:-$(command -v wio || true)}"
[[ -n "$wio" ]] || { echo "submit: set WIO to the wio binary (no wio on PATH)" >&2; exit 2; }
# The tasks read their settings from a file in OUT (quoted for the shell: any argument
# survives, commas and spaces included).
{
  printf 'WIO=%q\n' "$wio"
  printf 'WIO_SNAPSHOT=%q\n' "$snapshot"
  printf 'WIO_SEEDS=%q\n' "$seeds"
  printf 'WIO_OUT=%q\n' "$out"
  if [[ $# -gt 0 ]]; then printf 'WIO_ARGS=(%s)\n' "$(printf '%q ' "$@")"; else echo 'WIO_ARGS=()'; fi
} >"$out/wio-explore.env"
export_list="ALL,WIO_ENV=$out/wio-explore.env"
# shellcheck disable=SC2086 # SBATCH_ARGS is a list of options
array="$(sbatch --parsable --array="0-$((tasks - 1))" --cpus-per-task="${CPUS:-1}" \
  --output="$out/logs/explore-%A_%a.out" --export="$export_list" ${SBATCH_ARGS:-} "$here/explore.sbatch")"
array="${array%%;*}"
# shellcheck disable=SC2086
merge="$(sbatch --parsable --dependency="afterany:$array" --output="$out/logs/merge-%j.out" \
  --export="$export_list" ${SBATCH_ARGS:-} "$here/merge.sbatch")"
merge="${merge%%;*}"
echo "submitted: array job $array ($tasks tasks), merge job $merge; report: $out/report.json"
echo "ARRAY_JOB=$array"
echo "MERGE_JOB=$merge"
