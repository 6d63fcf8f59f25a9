#!/usr/bin/env bash
# An ext4 root disk for wio's Linux guests, made from an initramfs (the same busybox, /init
# and workload), so `wio run --arch ARCH DISK.img` boots with /dev/vda as root.
# images/riscv64-rootfs.sh and images/x86_64-rootfs.sh call this with --arch.
#
# Usage: images/rootfs.sh --arch riscv64|x86_64 [--redis | --python | --payments | --cpython-tests]
#                         INITRAMFS [SIZE_MIB]
#   --redis    also install Debian's unmodified redis-server and redis-tools with their
#              libraries (riscv64: trixie's, through lib.sh's private apt; x86_64: bookworm
#              amd64's, the host's apt); the workload then starts redis and drives it
#   --python   also install Debian's Python 3 (riscv64: trixie's python3.13; x86_64: bookworm
#              amd64's python3.11) (interpreter, standard library, ctypes; bytecode compiled
#              at build time by that interpreter under qemu-riscv64 or qemu-x86_64), the
#              Antithesis Python SDK (PyPI `antithesis`, a pinned wheel) and
#              images/probe/antithesis_demo.py with the SDK's catalogue of its assertions;
#              booted with wio.pysdk=1 (or wio.pysdk=bug) the workload runs the demo
#   --payments both, and the payment scenario's services (images/payments/payments.py, run
#              as /usr/bin/wio-payments ROLE ...) with the SDK's catalogue of their promises
#   --cpython-tests  --python and CPython's own test suite (Debian's libpython3.13-testsuite,
#              bytecode compiled at build time), for the engine's large-program benchmark
#              (ci/bench_riscv64.py --guests cpython runs `python3 -m test` modules in it)
#              (--cpython-tests: riscv64 only)
#   INITRAMFS  a gzip'd newc cpio from initramfs.sh for the same architecture (without
#              modules: the small kernels have virtio-blk and ext4 built in)
#   SIZE_MIB   image size, default 64 (160 with --redis, 128 with --python, 224 with --payments,
#              512 with --cpython-tests)
#
# Publishes $WIO_CACHE/ARCH/rootfs/<key>/rootfs.ext4 (and inputs.txt); the filesystem has
# fixed UUID, hash seed and timestamps, so the same inputs give the same bytes. Prints
# ROOTFS=<path> as the last line. Never modify the published image: wio opens it read-only
# and writes go to an overlay owned by each run (`--persist FILE` writes the result out).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2; exit 2; }
REDIS=0 PYTHON=0 PAYMENTS=0 PYTESTS=0 ARCH=""
if [[ "${1:-}" == --arch && $# -ge 2 ]]; then ARCH="$2"; shift 2; fi
case "$ARCH" in
  riscv64 | x86_64) ;;
  *) echo "--arch riscv64|x86_64 must come first" >&2; usage ;;
esac
if [[ "${1:-}" == --redis ]]; then REDIS=1; shift; fi
if [[ "${1:-}" == --python ]]; then PYTHON=1; shift; fi
if [[ "${1:-}" == --payments ]]; then PAYMENTS=1 PYTHON=1 REDIS=1; shift; fi
if [[ "${1:-}" == --cpython-tests ]]; then PYTESTS=1 PYTHON=1; shift; fi
[[ $# -ge 1 && $# -le 2 ]] || usage
[[ $PYTESTS == 0 || $ARCH == riscv64 ]] || wio_die "--cpython-tests: riscv64 only (the engine's large-program benchmark)"
INITRAMFS="$1"
SIZE_MIB="${2:-$((PYTESTS ? 512 : PAYMENTS ? 224 : REDIS ? 160 : PYTHON ? 128 : 64))}"
# Debian packages for --redis: the servers and the libraries they load (maintainer-script
# packages such as adduser and debconf are left out: nothing runs dpkg in the guest).
if [[ "$ARCH" == riscv64 ]]; then
  REDIS_PKGS=(redis-server redis-tools libc6 libgcc-s1 libatomic1 libstdc++6 libjemalloc2 liblzf1
    libssl3t64 libsystemd0 libcap2 libzstd1 zlib1g libbsd0 libmd0 libcrypt1 libpcre2-8-0
    libselinux1 libacl1 libattr1 libbz2-1.0 libtinfo6 libreadline8t64 readline-common gcc-14-base)
else # bookworm amd64
  REDIS_PKGS=(redis-server redis-tools libc6 libgcc-s1 libatomic1 libstdc++6 libjemalloc2 liblzf1
    libssl3 libsystemd0 libcap2 libgcrypt20 libgpg-error0 liblz4-1 liblzma5 libzstd1 gcc-12-base)
fi
# Debian packages for --python: what `import ctypes, json, random, importlib.metadata` needs
# (extension modules whose libraries are left out, such as _ssl or _sqlite3, fail to import).
# PY: the interpreter's name (trixie riscv64: 3.13; bookworm amd64: 3.11); QEMU_USER: what
# runs it on the host at build time.
if [[ "$ARCH" == riscv64 ]]; then PY=python3.13 QEMU_USER=qemu-riscv64; else PY=python3.11 QEMU_USER=qemu-x86_64; fi
PYTHON_PKGS=("$PY-minimal" "lib$PY-minimal" "lib$PY-stdlib" libc6 libexpat1 zlib1g libffi8)
# The Antithesis Python SDK, pure Python, from PyPI: pinned by version and sha256 (the key
# names the sha256, so a cache hit needs no network); downloaded with pip into
# $WIO_CACHE/wheels/<sha256>/ and unpacked into the image's site-packages.
PYSDK_WHEEL=antithesis-0.4.0-py3-none-any.whl
PYSDK_REQ="antithesis==0.4.0"
PYSDK_SHA256=5f1cf8b51a589cba8baec52de36e174a32d02e2ead124b6012a64e83fb642a9c
PYSDK_DEMO="$WIO_IMAGES_DIR/probe/antithesis_demo.py"
[[ -f "$INITRAMFS" ]] || wio_die "no initramfs at $INITRAMFS"
[[ "$SIZE_MIB" =~ ^[0-9]+$ ]] && ((SIZE_MIB >= 16)) || wio_die "SIZE_MIB must be a number >= 16"
install_host_tools e2fsprogs cpio
PAYMENTS_SRC="$WIO_IMAGES_DIR/payments/payments.py"
EXTRA_PKGS=()
if ((REDIS)); then EXTRA_PKGS=("${REDIS_PKGS[@]}"); fi
if ((PAYMENTS)); then [[ -f "$PAYMENTS_SRC" ]] || wio_die "no $PAYMENTS_SRC"; fi
if ((PYTHON)); then
  # (libc6, zlib1g: in both lists; dpkg-deb -x of the same package twice is harmless)
  EXTRA_PKGS+=("${PYTHON_PKGS[@]}")
  if ((PYTESTS)); then EXTRA_PKGS+=(libpython3.13-testsuite); fi
  [[ -f "$PYSDK_DEMO" ]] || wio_die "no $PYSDK_DEMO"
  install_host_tools qemu-user # runs the guest's python3.13 at build time (bytecode, catalogue)
  command -v python3 >/dev/null || install_host_tools python3 # pip, unzipping the wheel
fi
if ((${#EXTRA_PKGS[@]})) && [[ "$ARCH" == riscv64 ]]; then
  wio_apt_init
  WIO_USES_APT=1
fi
# pkg_version PKG: the version the build installs (riscv64: lib.sh's private trixie apt;
# x86_64: the host's bookworm apt).
pkg_version() {
  if [[ "$ARCH" == riscv64 ]]; then
    deb_candidate_version "$1"
  else
    local v
    v="$(apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p')"
    [[ -n "$v" && "$v" != "(none)" ]] || wio_die "the host's apt has no $1 (apt-get update?)"
    printf '%s\n' "$v"
  fi
}

wio_inputs() {
  local initramfs_hash mke2fs_version p v
  initramfs_hash="$(wio_sha256_file "$INITRAMFS")"
  mke2fs_version="$(wio_host_pkg_version e2fsprogs)"
  wio_script_inputs
  [[ "$ARCH" == riscv64 ]] || printf 'arch %s\n' "$ARCH"
  printf 'initramfs %s\n' "$initramfs_hash"
  printf 'size_mib %s\n' "$SIZE_MIB"
  printf 'e2fsprogs %s\n' "$mke2fs_version"
  for p in "${EXTRA_PKGS[@]+"${EXTRA_PKGS[@]}"}"; do
    v="$(pkg_version "$p")"
    printf 'deb %s %s\n' "$p" "$v"
  done
  if ((PYTHON)); then
    local demo qemu
    demo="$(wio_sha256_file "$PYSDK_DEMO")"
    qemu="$(wio_host_pkg_version qemu-user)"
    printf 'wheel %s sha256 %s\n' "$PYSDK_WHEEL" "$PYSDK_SHA256"
    printf 'demo antithesis_demo.py %s\n' "$demo"
    printf 'qemu-user %s\n' "$qemu"
  fi
  if ((PAYMENTS)); then
    printf 'payments payments.py %s\n' "$(wio_sha256_file "$PAYMENTS_SRC")"
  fi
  if ((PYTESTS)); then printf 'cpython-tests compiled\n'; fi
}

# download_wheel: the pinned SDK wheel, in $WIO_CACHE/wheels/<sha256>/ (pip checks the hash).
download_wheel() {
  local dest="$WIO_CACHE/wheels/$PYSDK_SHA256" tmp
  if [[ -f "$dest/$PYSDK_WHEEL" ]]; then printf '%s\n' "$dest/$PYSDK_WHEEL"; return 0; fi
  python3 -m pip --version >/dev/null 2>&1 || install_host_tools python3-pip
  wio_log "downloading $PYSDK_WHEEL from PyPI (pip, sha256 $PYSDK_SHA256)"
  # (run inside $(...), where no EXIT trap runs: clean up explicitly)
  tmp="$(mktemp -d "$WIO_CACHE/tmp/$WIO_PROG.wheel.XXXXXX")"
  printf '%s --hash=sha256:%s\n' "$PYSDK_REQ" "$PYSDK_SHA256" >"$tmp/requirements.txt"
  if ! python3 -m pip download -q --no-deps --no-cache-dir --only-binary=:all: \
    --python-version "${PY#python}" -d "$tmp/dl" -r "$tmp/requirements.txt" >&2; then
    rm -rf "$tmp"; wio_die "pip download $PYSDK_REQ failed"
  fi
  if [[ ! -f "$tmp/dl/$PYSDK_WHEEL" || "$(wio_sha256_file "$tmp/dl/$PYSDK_WHEEL")" != "$PYSDK_SHA256" ]]; then
    rm -rf "$tmp"; wio_die "pip download $PYSDK_REQ: no $PYSDK_WHEEL with sha256 $PYSDK_SHA256"
  fi
  mkdir -p "$dest"
  mv -f "$tmp/dl/$PYSDK_WHEEL" "$dest/$PYSDK_WHEEL"
  rm -rf "$tmp"
  printf '%s\n' "$dest/$PYSDK_WHEEL"
}

# guest_python TREE ARGS...: the tree's own Python, run by qemu-user on the host (on x86_64
# too: the guest's libraries, not the host's) with a clean environment and a fixed hash seed
# (the same bytecode every time).
guest_python() {
  local tree="$1"
  shift
  env -i PATH=/usr/bin:/bin LC_ALL=C SOURCE_DATE_EPOCH="$SOURCE_DATE_EPOCH" PYTHONHASHSEED=0 \
    "$QEMU_USER" -L "$tree" "$tree/usr/bin/$PY" "$@"
}

# The guest's demo launcher: the catalogue is what the SDK registers at start.
write_demo_launcher() {
  cat <<'EOF'
#!/bin/sh
# wio-pysdk-demo [ok|bug]: images/probe/antithesis_demo.py, instrumented with the Antithesis
# Python SDK (generated by images/riscv64-rootfs.sh --python)
export ANTITHESIS_ASSERTION_CATALOG=/usr/share/wio/antithesis_demo.catalog.json
exec /usr/bin/python3 /usr/share/wio/antithesis_demo.py "$@"
EOF
}

install_python() {
  local tree="$1" wheel site handler
  wheel="$(download_wheel)"
  site="$tree/usr/lib/python3/dist-packages" # on Debian's sys.path
  mkdir -p "$site" "$tree/usr/share/wio"
  python3 -m zipfile -e "$wheel" "$site"
  ln -sfn "$PY" "$tree/usr/bin/python3"
  # Bytecode for the standard library and the SDK, made now by the guest's own interpreter
  # (compiling at every boot would cost the guest most of its run). checked-hash: valid
  # whatever the files' times; the file names stored are the guest's (/usr/lib/...). The
  # full test suite (--cpython-tests) is compiled on its own, below: some of its files are
  # invalid on purpose.
  local skip=()
  if ((PYTESTS)); then skip=(-x 'python3\.13/test/'); fi
  guest_python "$tree" -m compileall -q -f --invalidation-mode checked-hash -s "$tree" -p / \
    "${skip[@]+"${skip[@]}"}" "$tree/usr/lib/$PY" "$site" >&2 || wio_die "compileall under $QEMU_USER failed"
  install -m 644 "$PYSDK_DEMO" "$tree/usr/share/wio/antithesis_demo.py"
  # The catalogue of the demo's assertions, made by the SDK's own scanner and registered by
  # the SDK at start, so an assertion never reached still shows (and fails if it had to be).
  (cd "$tree/usr/share/wio" &&
    guest_python "$tree" -B -m antithesis.catalog antithesis_demo.py -o antithesis_demo.catalog.json >&2) ||
    wio_die "python3 -m antithesis.catalog failed"
  [[ -s "$tree/usr/share/wio/antithesis_demo.catalog.json" ]] || wio_die "empty assertion catalogue"
  write_demo_launcher | sed "s/riscv64-rootfs.sh/$ARCH-rootfs.sh/" >"$tree/usr/bin/wio-pysdk-demo"
  chmod 755 "$tree/usr/bin/wio-pysdk-demo"
  # The SDK must pick libvoidstar.so (qemu-user's -L finds the tree's /usr/lib first).
  handler="$(guest_python "$tree" -B -c 'import antithesis._internal as i; print(type(i._HANDLER).__name__)')"
  [[ "$handler" == VoidstarHandler ]] || wio_die "the SDK chose $handler, not libvoidstar.so"
}

# The payment scenario's services, their bytecode and the catalogue of their promises.
install_payments() {
  local tree="$1"
  install -m 644 "$PAYMENTS_SRC" "$tree/usr/share/wio/payments.py"
  (cd "$tree/usr/share/wio" &&
    guest_python "$tree" -B -m antithesis.catalog payments.py -o payments.catalog.json >&2) ||
    wio_die "python3 -m antithesis.catalog payments.py failed"
  [[ -s "$tree/usr/share/wio/payments.catalog.json" ]] || wio_die "empty payments catalogue"
  guest_python "$tree" -m compileall -q -f --invalidation-mode checked-hash -s "$tree" -p / \
    "$tree/usr/share/wio/payments.py" >&2 || wio_die "payments.py does not compile"
  cat >"$tree/usr/bin/wio-payments" <<'EOF'
#!/bin/sh
# wio-payments ROLE ARGS...: the payment scenario's services (images/payments/payments.py),
# instrumented with the Antithesis Python SDK (generated by images/riscv64-rootfs.sh --payments)
export ANTITHESIS_ASSERTION_CATALOG=/usr/share/wio/payments.catalog.json
exec /usr/bin/python3 /usr/share/wio/payments.py "$@"
EOF
  sed -i "s/riscv64-rootfs.sh/$ARCH-rootfs.sh/" "$tree/usr/bin/wio-payments" # (the script that made it)
  chmod 755 "$tree/usr/bin/wio-payments"
}

wio_build() {
  local out="$1" tree p deb
  umask 022 # the modes of what is made here (unpacked wheel, bytecode) never follow the caller's
  tree="$out/tree"
  mkdir -p "$tree"
  (cd "$tree" && gzip -dc "$INITRAMFS" | cpio -id --quiet --no-absolute-filenames)
  mkdir -p "$tree/data"
  if ((${#EXTRA_PKGS[@]})) && [[ "$ARCH" == riscv64 ]]; then
    for p in "${EXTRA_PKGS[@]}"; do
      deb="$(download_deb "$p")"
      dpkg-deb -x "$deb" "$tree"
    done
  elif ((${#EXTRA_PKGS[@]})); then
    local dl
    wio_tmpdir dl debs
    local specs=()
    for p in "${EXTRA_PKGS[@]}"; do specs+=("$p=$(pkg_version "$p")"); done
    (cd "$dl" && apt-get download -q "${specs[@]}" >&2) || wio_die "apt-get download ${EXTRA_PKGS[*]} failed"
    for deb in "$dl"/*.deb; do dpkg-deb -x "$deb" "$tree"; done
  fi
  if ((${#EXTRA_PKGS[@]})); then
    # Merged /usr: the dynamic loader and libraries live in usr/lib; /lib (and x86-64's
    # /lib64) must lead there.
    local d
    for d in lib lib64; do
      if [[ -d "$tree/$d" && ! -L "$tree/$d" ]]; then
        mkdir -p "$tree/usr/$d"
        cp -a "$tree/$d/." "$tree/usr/$d/"
        rm -rf "${tree:?}/$d"
      fi
    done
    ln -sfn usr/lib "$tree/lib"
    if [[ "$ARCH" == riscv64 ]]; then
      [[ -e "$tree/usr/lib/ld-linux-riscv64-lp64d.so.1" || -e "$tree/usr/lib/riscv64-linux-gnu/ld-linux-riscv64-lp64d.so.1" ]] ||
        wio_die "no riscv64 dynamic loader in the extracted packages"
    else
      ln -sfn usr/lib64 "$tree/lib64"
      [[ -e "$tree/usr/lib64/ld-linux-x86-64.so.2" ]] || wio_die "no x86-64 dynamic loader (lib64/ld-linux-x86-64.so.2) in the extracted packages"
    fi
  fi
  if ((REDIS)); then
    [[ -x "$tree/usr/bin/redis-server" ]] || wio_die "redis-server missing after extraction"
  fi
  if ((PYTHON)); then install_python "$tree"; fi
  if ((PAYMENTS)); then install_payments "$tree"; fi
  if ((PYTESTS)); then
    [[ -d "$tree/usr/lib/python3.13/test/libregrtest" ]] || wio_die "no test/libregrtest after extracting libpython3.13-testsuite"
    # The test package's bytecode (its data files, some deliberately invalid Python, are
    # left as they are: compileall reports them and goes on).
    guest_python "$tree" -m compileall -q -f --invalidation-mode checked-hash -s "$tree" -p / \
      "$tree/usr/lib/python3.13/test" >&2 || true
    compgen -G "$tree/usr/lib/python3.13/test/libregrtest/__pycache__/main.*.pyc" >/dev/null ||
      wio_die "compileall made no bytecode for test.libregrtest"
  fi
  find "$tree" -exec touch -h -d @1735689600 {} + # fixed mtimes: same inputs, same bytes
  # Reproducible ext4: fixed UUID, hash seed and creation time, files owned by root.
  E2FSPROGS_FAKE_TIME=1735689600 mkfs.ext4 -q -F -L wioroot -U 6f3c1c52-7d1e-4b59-9c39-7769726f6f74 \
    -E hash_seed=6f3c1c52-7d1e-4b59-9c39-7769726f6f74,root_owner=0:0 -T default \
    -d "$tree" "$out/rootfs.ext4" "${SIZE_MIB}M" >&2
  # mke2fs -d copies each file's ctime, which only the kernel sets (to the build's wall
  # clock): set them to the fixed time too, or no two builds give the same bytes.
  if find "$tree" -mindepth 1 -name '*["\\]*' | grep -q .; then wio_die "a file name with a quote or backslash"; fi
  find "$tree" -mindepth 1 -printf 'sif "/%P" ctime @1735689600\n' >"$out/ctime.cmds"
  E2FSPROGS_FAKE_TIME=1735689600 debugfs -w -f "$out/ctime.cmds" "$out/rootfs.ext4" >/dev/null 2>"$out/ctime.log" ||
    wio_die "debugfs could not set the ctimes: $(tail -n 3 "$out/ctime.log")"
  if grep -v '^debugfs ' "$out/ctime.log" | grep -q .; then
    wio_die "debugfs: $(grep -v '^debugfs ' "$out/ctime.log" | head -n 3)"
  fi
  rm -f "$out/ctime.cmds" "$out/ctime.log"
  rm -rf "$tree"
}

wio_cached "$ARCH/rootfs"
echo "ROOTFS=$WIO_OUT/rootfs.ext4"
