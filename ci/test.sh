#!/usr/bin/env bash
# Runs every test of the workspace: formatting, lints, unit tests and the
# end-to-end tests of the wio binary. Called by .ci/run and named in README.md.
#
# The riscv64 end-to-end tests need the guest artifacts that
# images/build-all-riscv64.sh builds into $WIO_CACHE (about 6 minutes the first
# time on 2 cores, seconds when cached); this script builds them first.
#
# It fails honestly: a tool it cannot install, a guest build that fails, or any later
# step ends it non-zero, naming the step (and printing the end of a quiet step's log).
# Then it tells the tests what this host has (WIO_REQUIRE, see tests/require/): a test
# that would skip for want of one of those fails instead. At the end (also after a
# failure) it lists every SKIPPED line, counted, the slowest test binaries and
# each step's wall time.
# Logs: $CARGO_TARGET_DIR/ci/ (default target/ci/).
set -euo pipefail
cd "$(dirname "$0")/.."

logs="${CARGO_TARGET_DIR:-target}/ci"
mkdir -p "$logs"
rm -f "$logs"/*.log
current_step="start"
step_started=$SECONDS
step_times=() # "SECONDS  STEP" for each finished step, printed at the end
quiet_log="" # the log of the running step when its output is not on the terminal

# null_device WHEN: makes sure /dev/null is the null device. Hosts have been seen with a
# regular file there (at a session's start, and once during a fresh host's first run):
# whatever one program writes "to /dev/null" another then reads, and cargo's probe of
# rustc (its stdin is /dev/null) fails on that text. As root the device is made again and
# the finding printed (and repeated at the end); otherwise this run stops, saying what to do.
null_device_notes=()
null_device() {
  [[ -c /dev/null ]] && return 0
  local what
  what="$(stat -c '%F, %s bytes' /dev/null || echo missing)" # no 2>/dev/null: it would empty the file
  if [[ "$(id -u)" != 0 ]]; then
    echo "ci/test.sh: /dev/null is not the null device ($what, $1) and this is not root:"
    echo "  as root: rm -f /dev/null && mknod -m 666 /dev/null c 1 3"
    exit 1
  fi
  rm -f /dev/null && mknod -m 666 /dev/null c 1 3
  null_device_notes+=("/dev/null was not the null device $1 ($what): made again with mknod")
  echo "ci/test.sh: ${null_device_notes[-1]}"
}
null_device "when this run started"

# step NAME: the next step is NAME (a failure from here on names it).
step() {
  [[ "$current_step" == start ]] || null_device "after step \"$current_step\""
  [[ "$current_step" == start ]] || step_times+=("$(printf '%6d s  %s' $((SECONDS - step_started)) "$current_step")")
  step_started=$SECONDS
  current_step="$1"
  quiet_log=""
  echo "== $1"
}

# summary: every SKIPPED line of the tests, counted, and the slowest test binaries.
summary() {
  [[ -s "$logs/cargo-test.log" || -s "$logs/skips.log" ]] || return 0
  # This host's lines, then those of the tests inside ci/l1.sh's L1 (its serial console).
  local skips
  skips="$({
    cat "$logs/cargo-test.log" "$logs/skips.log" 2>/dev/null | grep -E '^SKIPPED: ' | sort | uniq -c
    [[ -f "$logs/l1.log" ]] && tr -d '\r' <"$logs/l1.log" | grep -E '^SKIPPED: ' | sed 's/^/[in L1] /' | sort | uniq -c
  } || true)"
  echo "== skipped tests (a skipped test is not a pass; WIO_REQUIRE=${WIO_REQUIRE:-})"
  if [[ -n "$skips" ]]; then
    printf '%s\n' "$skips"
    echo "$(awk '{n += $1} END {print n}' <<<"$skips") SKIPPED lines, $(wc -l <<<"$skips") distinct"
  else
    echo "none"
  fi
  [[ -s "$logs/cargo-test.log" ]] || return 0
  # libtest ends each binary with "test result: ... finished in S s"; cargo names the
  # binary on the line before its run ("Running DESC (PATH)" or "Doc-tests CRATE").
  echo "== slowest test binaries (wall seconds, libtest's own figure)"
  awk '
    /^ *Running / { name = $0; sub(/^ *Running /, "", name)
                    if (match(name, /\(.*\)$/)) {
                      exe = substr(name, RSTART + 1, RLENGTH - 2); sub(/.*\//, "", exe); sub(/-[0-9a-f]+$/, "", exe)
                      name = exe " (" substr(name, 1, RSTART - 2) ")"
                    } }
    /^ *Doc-tests / { name = $0; sub(/^ *Doc-tests /, "", name); name = name " (doc tests)" }
    /^test result: / && match($0, /finished in [0-9.]+s/) {
      printf "%9.2f s  %s\n", substr($0, RSTART + 12, RLENGTH - 13), name }
  ' "$logs/cargo-test.log" | sort -rn | head -10
  local long
  long="$(grep -oE '^test .* has been running for over 60 seconds' "$logs/cargo-test.log" | sed 's/^test //; s/ has been.*//' | sort -u || true)"
  if [[ -n "$long" ]]; then
    echo "tests libtest reported running for over 60 s: $(tr '\n' ' ' <<<"$long")"
  fi
}

on_exit() {
  local status=$?
  trap - EXIT
  summary || true
  if [[ "$current_step" != done && "$current_step" != start ]]; then
    step_times+=("$(printf '%6d s  %s (did not finish)' $((SECONDS - step_started)) "$current_step")")
  fi
  # A step that ran to its end and failed, reported after the steps beside it.
  [[ -n "${failed_step:-}" ]] && current_step="$failed_step"
  [[ ${#null_device_notes[@]} -eq 0 ]] || printf '%s\n' "${null_device_notes[@]}"
  echo "== steps (wall seconds; $SECONDS s in all)"
  printf '%s\n' "${step_times[@]}"
  # CPU time of every finished child (bash's `times`, second line: user and system), to
  # tell how busy the two cores were: what packing the steps can still save.
  # (`times` in a pipeline or $(...) would run in a subshell, whose children are none.)
  times >"$logs/times.txt"
  tail -n 1 "$logs/times.txt" | awk -v wall="$SECONDS" '{
    cpu = 0
    for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); cpu += t[1] * 60 + t[2] }
    if (wall > 0) printf "CPU: %d s (user and system, every finished child) over %d s wall: %.2f cores busy on average\n", cpu, wall, cpu / wall
  }' || true
  if [[ $status -ne 0 ]]; then
    echo "ci/test.sh: FAILED at step \"$current_step\" (exit status $status)"
    if [[ -n "$quiet_log" && -s "$quiet_log" ]]; then
      echo "its last lines ($quiet_log):"
      tail -n 30 "$quiet_log" | sed 's/^/  | /'
    fi
  fi
  exit "$status"
}
trap on_exit EXIT

step "host tools (gcc, cross compiler, qemu-user, tcpdump, e2fsprogs, gdb-multiarch, chromium)"
need=()
command -v gcc >/dev/null && command -v ld >/dev/null || need+=(gcc binutils)
command -v qemu-riscv64 >/dev/null || need+=(qemu-user)
command -v riscv64-linux-gnu-gcc >/dev/null || need+=(gcc-riscv64-linux-gnu)
command -v tcpdump >/dev/null || need+=(tcpdump)
command -v debugfs >/dev/null || need+=(e2fsprogs)
command -v gdb-multiarch >/dev/null || need+=(gdb-multiarch)
command -v chromium >/dev/null || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "ci/test.sh: ${need[*]} missing and this is not root: install them (apt-get install ${need[*]})"
    exit 1
  fi
  echo "installing ${need[*]} (test guest build, differential test, disk/pcap/gdb checks, the triage page)"
  quiet_log="$logs/apt.log"
  { apt-get -o DPkg::Lock::Timeout=600 update -qq && apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${need[@]}"; } >"$quiet_log" 2>&1
fi

step "riscv64 guest artifacts (images/build-all-riscv64.sh)"
quiet_log="$logs/build-all-riscv64.log"
bash images/build-all-riscv64.sh >"$quiet_log" 2>&1
# Its warnings (an optional artifact that could not be built) and its last word.
grep -E 'WARNING|all riscv64 artifacts ready' "$quiet_log" || true

step "what this host has (WIO_REQUIRE: tests that need it must not skip)"
# Only what was checked here: riscv-guests after the build above, the tools installed
# above (or the script stopped), the rest as found.
have=(riscv-guests)
manifest="${WIO_CACHE:-${HOME:-/root}/.cache/wio}/riscv64-guests.env"
# built KEY: the manifest names a file for KEY (optional artifacts are empty when their
# download failed; build-all-riscv64.sh's log says why).
built() {
  local v
  v="$(sed -n "s/^$1=//p" "$manifest" | tail -n 1)"
  [[ -n "$v" && -f "$v" ]]
}
built RISCV64_OPENSBI_FW_DYNAMIC && have+=(riscv-opensbi)
built RISCV64_FLIGHT_ELF && have+=(riscv-flight)
built RISCV64_DEBIAN_SYSTEM_MAP && have+=(riscv-debian-symbols)
if (exec 3<>/dev/kvm) 2>/dev/null; then
  have+=(kvm)
  [[ -e /sys/module/kvm_intel || -e /sys/module/kvm_amd ]] && have+=(hardware-kvm)
fi
[[ -n "${WIO_X86_LINUX_KERNEL:-}" && -n "${WIO_X86_LINUX_INITRD:-}" && -n "${WIO_X86_SMALL_KERNEL:-}" &&
  -n "${WIO_X86_SMALL_INITRD:-}" && -n "${WIO_X86_REDIS_ROOTFS:-}" ]] && have+=(x86-linux)
command -v gdb-multiarch >/dev/null && have+=(gdb)
command -v tcpdump >/dev/null && have+=(tcpdump)
command -v debugfs >/dev/null && command -v e2fsck >/dev/null && have+=(e2fsprogs)
command -v riscv64-linux-gnu-gcc >/dev/null && command -v riscv64-linux-gnu-as >/dev/null &&
  command -v riscv64-linux-gnu-ld >/dev/null && have+=(cross-gcc)
command -v qemu-riscv64 >/dev/null && have+=(qemu-user)
[[ "$(id -u)" == 0 ]] && have+=(root)
command -v slurmctld >/dev/null && command -v munged >/dev/null && have+=(slurm)
command -v chromium >/dev/null && have+=(chromium)
WIO_REQUIRE="$(IFS=,; echo "${have[*]}")"
export WIO_REQUIRE
echo "WIO_REQUIRE=$WIO_REQUIRE"

step "layout (no import cycles inside a crate, no file over 850 lines)"
python3 ci/layout_check.py
python3 ci/test_docs_run.py
step "cargo fmt --check"
cargo fmt --all -- --check
step "cargo clippy -D warnings"
cargo clippy --workspace --all-targets --release -- -D warnings
step "cargo test --no-run (every test binary and the wio binary they run)"
# Built first, alone: the x86-64 tests below start from these binaries, and no step after
# this one waits on cargo's build lock.
cargo test --workspace --release --no-run

step "the docs' wio commands against the command line (ci/docs_commands.py)"
python3 ci/docs_commands.py "${CARGO_TARGET_DIR:-target}/release/wio"

step "the official riscv-tests ISA suite on wio (ci/riscv_tests.py)"
# Every rv64 u/s/m-level test, Zba/Zbb/Zbc/Zbs included (about 2 s); the bit-manipulation
# tests also run on a plain rv64gc hart, where they must trap.
python3 ci/riscv_tests.py "${CARGO_TARGET_DIR:-target}/release/wio"

# Three things then share the two cores: cargo test (two test threads, with idle stretches
# while one long test finishes a binary), the x86-64 tests in L1 (QEMU TCG with one vCPU:
# mostly one core) and the fuzzers (mostly their build). One after the other, each left a
# core idle for much of its time. Their logs are printed as each is waited for.
step "fuzzing and the x86-64 tests in L1, started in the background"
fuzz_pid=""
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  bash ci/fuzz.sh 20 >"$logs/fuzz.log" 2>&1 &
  fuzz_pid=$!
  echo "fuzzing started (ci/fuzz.sh 20; long runs: ci/fuzz.sh 3600; log: $logs/fuzz.log)"
else
  echo "SKIPPED: fuzzing: no nightly toolchain (rustup toolchain install nightly)" | tee -a "$logs/skips.log"
fi
l1_pid=""
if [[ -e /sys/module/kvm_intel || -e /sys/module/kvm_amd ]]; then
  echo "this host's /dev/kvm is hardware virtualization: cargo test runs the x86-64 tests on it directly"
else
  # This host's KVM (PVM, or none) cannot run the x86-64 tests that need VT-x/AMD-V: they
  # run inside an L1 whose emulated SVM gives kvm_amd. Its limit is 30 minutes (20 alone):
  # it shares the machine with cargo test and the fuzzers.
  L1_TIMEOUT_S="${L1_TIMEOUT_S:-1800}" bash ci/l1.sh >"$logs/l1.log" 2>&1 &
  l1_pid=$!
  echo "x86-64 tests in L1 started (ci/l1.sh; log: $logs/l1.log)"
fi

step "cargo test"
# --no-fail-fast runs every test binary even after one fails (all failures in one log);
# --show-output makes every SKIPPED line of a test that could not run visible here; the
# log feeds the summary at the end (pipefail: cargo's status is the pipeline's). A failure
# here is reported after L1's and the fuzzers' results.
test_status=0
cargo test --workspace --release --no-fail-fast -- --show-output 2>&1 | tee "$logs/cargo-test.log" || test_status=$?

step "the docs' wio commands run, page by page (ci/docs_run.py)"
# Every command of README.md and docs/ runs (at the sizes the pages' docs-run directives
# set) or is named with the test that runs it or why it cannot run here.
docs_status=0
python3 ci/docs_run.py "${CARGO_TARGET_DIR:-target}/release/wio" 2>&1 | tee "$logs/docs-run.log" || docs_status=$?

step "x86-64 tests on hardware virtualization (nested: ci/l1.sh, started before cargo test)"
l1_status=0
if [[ -n "$l1_pid" ]]; then
  wait "$l1_pid" || l1_status=$?
  cat "$logs/l1.log"
fi

step "fuzzing, a short budget (ci/fuzz.sh 20, started before cargo test)"
fuzz_status=0
if [[ -n "$fuzz_pid" ]]; then
  wait "$fuzz_pid" || fuzz_status=$?
  grep -vE '^\s*(Compiling|Building|Downloaded|Downloading|Finished|Fresh)\b' "$logs/fuzz.log" | tail -n 40
fi
# Every failure of the four is named; the exit status is the first failed one's, in the
# order cargo test, the docs' commands, L1, fuzzing.
if [[ $test_status -ne 0 || $docs_status -ne 0 || $l1_status -ne 0 || $fuzz_status -ne 0 ]]; then
  step "done"
  failed=()
  [[ $test_status -ne 0 ]] && failed+=("cargo test|$test_status|$logs/cargo-test.log")
  [[ $docs_status -ne 0 ]] && failed+=("the docs' wio commands (ci/docs_run.py)|$docs_status|$logs/docs-run.log")
  [[ $l1_status -ne 0 ]] && failed+=("x86-64 tests on hardware virtualization (nested: ci/l1.sh)|$l1_status|$logs/l1.log")
  [[ $fuzz_status -ne 0 ]] && failed+=("fuzzing (ci/fuzz.sh 20)|$fuzz_status|$logs/fuzz.log")
  for f in "${failed[@]}"; do
    IFS="|" read -r name status log <<<"$f"
    echo "ci/test.sh: $name failed with status $status (log above and in $log)"
  done
  IFS="|" read -r failed_step status _ <<<"${failed[0]}"
  exit "$status"
fi
step "done"
