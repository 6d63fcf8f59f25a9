#!/usr/bin/env bash
# wio's flight-software example (images/flight/): a bare-metal attitude control loop for
# riscv64 M-mode, built with Debian's gcc-riscv64-unknown-elf and picolibc. Publishes into
# $WIO_CACHE/riscv64/flight/<key>/:
#   flight.elf     the program (run it: wio run --arch riscv64 --kernel flight.elf;
#                  --cmdline protect=off turns TMR voting and scrubbing off)
#   flight.map     the linker's map (where the .critical control state is)
#   inputs.txt     the inputs whose hash is <key>
# Prints (stdout): FLIGHT_ELF=<path>
#
# Usage: images/riscv64-flight.sh        (WIO_CACHE: see lib.sh)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/flight" && pwd)"

[[ $# -eq 0 ]] || { sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2; }

install_host_tools gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf

wio_inputs() {
  local f gcc libc
  wio_script_inputs
  for f in flight.c start.S flight.ld; do
    printf 'source %s %s\n' "$f" "$(wio_sha256_file "$SRC/$f")"
  done
  gcc="$(wio_host_pkg_version gcc-riscv64-unknown-elf)"
  libc="$(wio_host_pkg_version picolibc-riscv64-unknown-elf)"
  printf 'toolchain gcc-riscv64-unknown-elf %s picolibc %s\n' "$gcc" "$libc"
}

wio_build() {
  local out="$1" objs
  # Byte-reproducible wherever the checkout and the cache are: each source is compiled
  # from inside its folder to an object of a fixed name (a one-step build names start.S's
  # object after gcc's random temporary file, and its symbol table keeps that name), and
  # the debug information names the folder `flight`. wio's trace starts with the kernel's
  # digest, so a path in the ELF would change the run's trace hash from one checkout to
  # another.
  wio_tmpdir objs obj
  (
    cd "$SRC"
    for f in start.S flight.c; do
      riscv64-unknown-elf-gcc -march=rv64gc -mabi=lp64d -mcmodel=medany -O2 -g \
        -Wall -Wextra -Werror -ffreestanding --specs=picolibc.specs \
        -ffile-prefix-map="$SRC"=flight -Wa,--debug-prefix-map,"$SRC"=flight \
        -c "$f" -o "$objs/${f%.*}.o"
    done
    cd "$objs"
    riscv64-unknown-elf-gcc -march=rv64gc -mabi=lp64d -mcmodel=medany -O2 -g \
      -ffreestanding -nostartfiles --specs=picolibc.specs -Wl,--no-warn-rwx-segments \
      -T "$SRC/flight.ld" -Wl,-Map="$out/flight.map" \
      start.o flight.o -o "$out/flight.elf"
  )
  # The TMR state must be where the example's fault profile aims.
  grep -q '^ *0x0*80010000 *state$' "$out/flight.map" ||
    wio_die "the control state is not at 0x80010000 (see $out/flight.map)"
  touch -d "@$SOURCE_DATE_EPOCH" "$out/flight.elf" "$out/flight.map"
}

wio_cached riscv64/flight
echo "FLIGHT_ELF=$WIO_OUT/flight.elf"
