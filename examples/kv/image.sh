#!/usr/bin/env bash
# The example's container image, wio-kv:1, made without a registry or a container engine:
# the root of Debian trixie's riscv64 packages that the payment scenario uses (python3.13,
# redis-server, coreutils, the Antithesis Python SDK; images/riscv64-rootfs.sh --payments)
# plus kv.py as /usr/bin/wio-kv, packed by images/oci-pack.py as a one-layer linux/riscv64
# OCI archive. Same inputs, same bytes. Publishes $WIO_CACHE/riscv64/kv-image/<key>/:
#   kv-oci.tar   the archive (`wio image import` it; compose.yaml names it wio-kv:1)
#   id.txt       its image ID (the config's digest)
#   inputs.txt
# Prints (stdout): KV_IMAGE=<path of the archive>
#
# Usage: examples/kv/image.sh        (WIO_CACHE: see images/lib.sh)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
IMAGES="$HERE/../../images"
source "$IMAGES/lib.sh"

[[ $# -eq 0 ]] || { sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2; }

install_host_tools e2fsprogs python3
base="$(bash "$IMAGES/riscv64-initramfs.sh" | sed -n 's/^INITRAMFS=//p')"
ROOT_DISK="$(bash "$IMAGES/riscv64-rootfs.sh" --payments "$base" | sed -n 's/^ROOTFS=//p')"
[[ -f "$ROOT_DISK" ]] || wio_die "no root disk of Debian packages to start from"

wio_inputs() {
  wio_script_inputs
  printf 'service %s\n' "$(wio_sha256_file "$HERE/kv.py")"
  printf 'packer %s\n' "$(wio_sha256_file "$IMAGES/oci-pack.py")"
  printf 'root %s\n' "$(wio_sha256_file "$ROOT_DISK")"
  printf 'host-python3 %s\n' "$(wio_host_pkg_version python3)"
}

wio_build() {
  local out="$1" root
  wio_tmpdir root kv
  debugfs -R "rdump / $root" "$ROOT_DISK" 2>/dev/null
  # Only the packages' files: not what makes it a wio root disk, nor the payment services.
  rm -rf "$root/lost+found" "$root/init" "$root/workload.sh" "$root/usr/bin/wio-payments"
  install -m 755 "$HERE/kv.py" "$root/usr/bin/wio-kv"
  # The root has busybox but few of its applets linked: the shell tools the project uses.
  for tool in sleep cat ls ps; do
    [[ -e "$root/usr/bin/$tool" || -e "$root/bin/$tool" ]] || ln -s busybox "$root/bin/$tool"
  done
  [[ -x "$root/usr/bin/python3" && -x "$root/usr/bin/redis-server" ]] || wio_die "the root lacks python3 or redis-server"
  printf '%s\n' '{"Cmd": ["/usr/bin/wio-kv"], "Env": ["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "PYTHONDONTWRITEBYTECODE=1"], "WorkingDir": "/", "ExposedPorts": {"8080/tcp": {}}}' >"$root.json"
  python3 "$IMAGES/oci-pack.py" "$root" "$out/kv-oci.tar" "wio-kv:1" "$root.json" >"$out/id.txt"
  rm -f "$root.json"
  wio_log "kv image $(cat "$out/id.txt"): $(($(stat -c %s "$out/kv-oci.tar") / 1048576)) MiB"
}

wio_cached riscv64/kv-image
echo "KV_IMAGE=$WIO_OUT/kv-oci.tar"
