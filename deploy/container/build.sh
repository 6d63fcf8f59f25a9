#!/usr/bin/env bash
# A container image of wio with nothing downloaded: the wio binary and exactly the shared
# libraries it loads (ldd) in an empty root, FROM scratch.
#
# Usage: deploy/container/build.sh [WIO] [OUT]
#   WIO  the wio binary (default: target/release/wio)
#   OUT  where to stage (default: target/container): OUT/rootfs/ (the image's files),
#        OUT/rootfs.tar (for `docker import`, as printed at the end), OUT/Containerfile
#        (FROM scratch, for `docker build` / `podman build` / `buildah bud` in OUT)
# If docker, podman or buildah is on PATH, the image wio:VERSION is built with it.
# The staged root is checked by running `wio --version` in it (chroot, as root).
set -euo pipefail
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2; exit 2; }
[[ $# -le 2 ]] || usage
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
wio="${1:-$here/../../target/release/wio}"
out="${2:-$here/../../target/container}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
[[ -x "$wio" ]] || { echo "build: no wio binary at $wio (cargo build --release)" >&2; exit 1; }
rm -rf "$out/rootfs"
mkdir -p "$out/rootfs/usr/bin" "$out/rootfs/tmp" "$out/rootfs/shared"
chmod 1777 "$out/rootfs/tmp"
install -m 755 "$wio" "$out/rootfs/usr/bin/wio"
# Every library ldd names (with the dynamic loader), at the same path inside.
ldd "$wio" | awk '/=> \// {print $3} /^\t\/.* \(0x/ {print $1}' | sort -u | while read -r lib; do
  mkdir -p "$out/rootfs$(dirname "$lib")"
  cp -L "$lib" "$out/rootfs$lib"
done
version="$("$wio" --version | awk '{print $2}')"
cat >"$out/Containerfile" <<CONTAINERFILE
# wio $version: the binary and the libraries it loads, nothing else (deploy/container/build.sh).
FROM scratch
COPY rootfs/ /
ENV WIO_CACHE=/shared/wio-cache
WORKDIR /shared
ENTRYPOINT ["/usr/bin/wio"]
CONTAINERFILE
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@1735689600 -C "$out/rootfs" -cf "$out/rootfs.tar" .
if [[ "$(id -u)" == 0 ]] && command -v chroot >/dev/null; then
  chroot "$out/rootfs" /usr/bin/wio --version >/dev/null ||
    { echo "build: wio does not run in the staged root: a library is missing" >&2; exit 1; }
  echo "build: checked: wio runs in the staged root" >&2
fi
for tool in docker podman buildah; do
  # A client without its daemon (docker) does not count.
  if command -v "$tool" >/dev/null && { [[ "$tool" == buildah ]] || "$tool" info >/dev/null 2>&1; }; then
    if [[ "$tool" == buildah ]]; then buildah bud -f "$out/Containerfile" -t "wio:$version" "$out"; else "$tool" build -f "$out/Containerfile" -t "wio:$version" "$out"; fi
    echo "build: image wio:$version built with $tool" >&2
    exit 0
  fi
done
echo "build: staged in $out ($(du -sh "$out/rootfs" | cut -f1)); no working docker, podman or buildah here:" >&2
echo "  docker import --change 'ENTRYPOINT [\"/usr/bin/wio\"]' --change 'WORKDIR /shared' $out/rootfs.tar wio:$version" >&2
echo "  # or: docker build -f $out/Containerfile -t wio:$version $out" >&2
