#!/usr/bin/env bash
# The payment scenario's services as a container image: the payments root disk of
# images/rootfs.sh (Debian trixie's riscv64 python3.13, redis and the Antithesis Python
# SDK, with images/payments/payments.py as /usr/bin/wio-payments) unpacked and packed by
# images/oci-pack.py as a one-layer linux/riscv64 OCI archive, named wio-payments:1.
# Same inputs, same bytes. Publishes $WIO_CACHE/riscv64/payments-image/<key>/:
#   payments-oci.tar   the archive (wio image import it; compose.yaml names it wio-payments:1)
#   id.txt             its image ID (the config's digest)
#   inputs.txt
# Prints (stdout): PAYMENTS_IMAGE=<path of the archive>
#
# Usage: images/payments/image.sh        (WIO_CACHE: see images/lib.sh)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../lib.sh"

[[ $# -eq 0 ]] || { sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2; }

install_host_tools e2fsprogs python3
initramfs="$(bash "$HERE/../riscv64-initramfs.sh" | sed -n 's/^INITRAMFS=//p')"
ROOTFS="$(bash "$HERE/../riscv64-rootfs.sh" --payments "$initramfs" | sed -n 's/^ROOTFS=//p')"
[[ -f "$ROOTFS" ]] || wio_die "no payments root disk"

wio_inputs() {
  wio_script_inputs
  printf 'pack %s\n' "$(wio_sha256_file "$HERE/../oci-pack.py")"
  printf 'rootfs %s\n' "$(wio_sha256_file "$ROOTFS")"
  printf 'python3 %s\n' "$(wio_host_pkg_version python3)"
}

wio_build() {
  local out="$1" tree
  wio_tmpdir tree root
  # The disk's files, without what only a wio root disk needs (its /init and workload).
  debugfs -R "rdump / $tree" "$ROOTFS" 2>/dev/null
  rm -rf "$tree/lost+found" "$tree/init" "$tree/workload.sh"
  [[ -x "$tree/usr/bin/wio-payments" && -x "$tree/usr/bin/redis-server" ]] ||
    wio_die "the payments disk lacks wio-payments or redis-server"
  printf '%s\n' '{"Cmd": ["/usr/bin/wio-payments"], "Env": ["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "PYTHONDONTWRITEBYTECODE=1"], "WorkingDir": "/"}' >"$tree.config.json"
  python3 "$HERE/../oci-pack.py" "$tree" "$out/payments-oci.tar" "wio-payments:1" "$tree.config.json" >"$out/id.txt"
  rm -f "$tree.config.json"
  wio_log "payments image $(cat "$out/id.txt"): $(($(stat -c %s "$out/payments-oci.tar") / 1048576)) MiB"
}

wio_cached riscv64/payments-image
echo "PAYMENTS_IMAGE=$WIO_OUT/payments-oci.tar"
