#!/usr/bin/env bash
# What a riscv64 machine needs to run an imported container image (`wio run --image`),
# packed as an initramfs segment that wio appends to the small kernel's initramfs:
#   workload.sh    images/image/launch.sh: mounts the image's disk, prepares it, runs it
#                  (it replaces the initramfs's default /workload.sh)
#   bin/wio-exec   images/image/wio-exec.c, static (riscv64-linux-gnu-gcc, glibc): the
#                  image's user, working directory, environment and program
#   bin/wio-agent  images/image/wio-agent.c, static: the test composer's agent (and, copied
#                  into the image as /usr/lib/wio-stop-faults, ANTITHESIS_STOP_FAULTS)
#   usr/lib/libvoidstar-shared.so   images/probe/libvoidstar.c built with
#                  -DWIO_SHARED_PORTS: the image's libvoidstar.so in a world's node, whose
#                  promise channel the agent shares
# Publishes $WIO_CACHE/riscv64/image-runtime/<key>/runtime.cpio.gz (gzip'd newc cpio, owned
# by root, fixed mtimes: the same inputs give the same bytes) and inputs.txt.
# Prints (stdout): IMAGE_RUNTIME=<path>
#
# Usage: images/riscv64-image-runtime.sh        (WIO_CACHE: see lib.sh)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/image" && pwd)"

[[ $# -eq 0 ]] || { sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2; }

install_host_tools gcc-riscv64-linux-gnu libc6-dev-riscv64-cross cpio

wio_inputs() {
  local f
  wio_script_inputs
  for f in launch.sh wio-exec.c wio-agent.c; do
    printf 'source %s %s\n' "$f" "$(wio_sha256_file "$SRC/$f")"
  done
  printf 'source probe/libvoidstar.c %s\n' "$(wio_sha256_file "$SRC/../probe/libvoidstar.c")"
  printf 'toolchain gcc-riscv64-linux-gnu %s libc6-dev-riscv64-cross %s cpio %s\n' \
    "$(wio_host_pkg_version gcc-riscv64-linux-gnu)" "$(wio_host_pkg_version libc6-dev-riscv64-cross)" \
    "$(wio_host_pkg_version cpio)"
}

wio_build() {
  local out="$1" root
  wio_tmpdir root runtime
  mkdir -p "$root/bin"
  install -m 755 "$SRC/launch.sh" "$root/workload.sh"
  # Compiled from inside its folder so no path of this machine lands in the binary.
  (cd "$SRC" && riscv64-linux-gnu-gcc -static -O2 -s -Wall -Wextra -Werror \
    -ffile-prefix-map="$SRC"=image -o "$root/bin/wio-exec" wio-exec.c) ||
    wio_die "cannot compile $SRC/wio-exec.c"
  (cd "$SRC" && riscv64-linux-gnu-gcc -static -O2 -s -Wall -Wextra -Werror \
    -ffile-prefix-map="$SRC"=image -o "$root/bin/wio-agent" wio-agent.c) ||
    wio_die "cannot compile $SRC/wio-agent.c"
  mkdir -p "$root/usr/lib"
  (cd "$SRC/../probe" && riscv64-linux-gnu-gcc -O2 -shared -fPIC -s -Wall -Wextra -Werror -DWIO_SHARED_PORTS \
    -ffile-prefix-map="$SRC/../probe"=probe -o "$root/usr/lib/libvoidstar-shared.so" libvoidstar.c) ||
    wio_die "cannot compile $SRC/../probe/libvoidstar.c"
  find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  (cd "$root" && find . -mindepth 1 | sort | cpio --quiet -o -H newc -R 0:0 --reproducible) |
    gzip -n -9 >"$out/runtime.cpio.gz"
  wio_log "image runtime: $(($(stat -c %s "$out/runtime.cpio.gz") / 1024)) KiB"
}

wio_cached riscv64/image-runtime
echo "IMAGE_RUNTIME=$WIO_OUT/runtime.cpio.gz"
