#!/usr/bin/env bash
# wio's flight-software example (images/flight/): a bare-metal attitude control loop for
# riscv64 M-mode, built with Debian's gcc-riscv64-unknown-elf and picolibc. Publishes into
# $WIO_CACHE/riscv64/flight/<key>/:
#   flight.elf     the program (run it: wio run --arch riscv64 --kernel flight.elf;
#                  --cmdline protect=off turns TMR voting and scrubbing off)
#   flight.map     the linker's map (where the .critical control state is)
#   flight-vector.elf, flight-vector.map
#                  the vector variant (-march=rv64gcv -DFLIGHT_VECTOR): run it with
#                  --isa rv64gcv
#   inputs.txt     the inputs whose hash is <key>
# Prints (stdout): FLIGHT_ELF=<path> and FLIGHT_VECTOR_ELF=<path>
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
  flight_variant "$out" "$objs" flight rv64gc
  flight_variant "$out" "$objs" flight-vector rv64gcv -DFLIGHT_VECTOR
  touch -d "@$SOURCE_DATE_EPOCH" "$out"/flight*.elf "$out"/flight*.map
}

# flight_variant OUT OBJS NAME MARCH [CFLAGS...]: OUT/NAME.elf and OUT/NAME.map.
flight_variant() {
  local out="$1" objs="$2/$3" name="$3" march="$4" f
  shift 4
  mkdir -p "$objs"
  (
    cd "$SRC"
    for f in start.S flight.c; do
      riscv64-unknown-elf-gcc -march="$march" -mabi=lp64d -mcmodel=medany -O2 -g \
        -Wall -Wextra -Werror -ffreestanding --specs=picolibc.specs "$@" \
        -ffile-prefix-map="$SRC"=flight -Wa,--debug-prefix-map,"$SRC"=flight \
        -c "$f" -o "$objs/${f%.*}.o"
    done
    cd "$objs"
    riscv64-unknown-elf-gcc -march="$march" -mabi=lp64d -mcmodel=medany -O2 -g \
      -ffreestanding -nostartfiles --specs=picolibc.specs -Wl,--no-warn-rwx-segments \
      -T "$SRC/flight.ld" -Wl,-Map="$out/$name.map" \
      start.o flight.o -o "$out/$name.elf"
  )
  # The TMR state must be where the example's fault profile aims.
  grep -q '^ *0x0*80010000 *state$' "$out/$name.map" ||
    wio_die "the control state of $name is not at 0x80010000 (see $out/$name.map)"
}

wio_cached riscv64/flight
echo "FLIGHT_ELF=$WIO_OUT/flight.elf"
echo "FLIGHT_VECTOR_ELF=$WIO_OUT/flight-vector.elf"
