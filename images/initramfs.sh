#!/usr/bin/env bash
# A small initramfs for wio: Debian's busybox-static, an /init and a workload, for riscv64
# (trixie's busybox, through the private apt of lib.sh) or x86-64 (bookworm amd64's, the
# host's apt). images/riscv64-initramfs.sh and images/x86_64-initramfs.sh call this.
#
# Usage: images/initramfs.sh --arch riscv64|x86_64 [--modules DIR] [--workload FILE]
#   --modules DIR    a modules directory as printed by riscv64-debian-kernel.sh (MODULES=...):
#                    DIR/modules.dep, DIR/kernel/...; copied to /lib/modules/<basename DIR>
#   --workload FILE  shell script run by /init instead of the default /workload.sh
#
# Publishes $WIO_CACHE/ARCH/initramfs/<key>/initramfs.cpio.gz (gzip'd newc cpio, every file
# owned by root with a fixed mtime, so the same inputs give the same bytes), contents.txt (its
# listing), init, workload.sh and inputs.txt. Prints INITRAMFS=<path> as the last line.
#
# What /init does (busybox sh), all on /dev/console:
#   mounts proc, sysfs, devtmpfs (and tmpfs on /tmp); busybox --install -s;
#   exports every kernel command-line word wio.NAME=VALUE as WIO_NAME=VALUE (NAME upper-cased);
#   loads the modules of /lib/modules/$(uname -r) in modules.dep order (dependencies first);
#   prints "wio-init: start"; runs sh /workload.sh; prints "wio-init: done status=N" (N is the
#   workload's exit status); then "poweroff -f" (riscv64: Linux shuts down through SBI SRST;
#   x86-64: without ACPI it halts with interrupts off, which ends wio's run).
# /bin/wio-probe: images/probe/wio-probe.c (when present), compiled with
# riscv64-linux-gnu-gcc or the host's gcc: it prints "probe: ..." lines (getrandom bytes,
# clocks, ASLR'd addresses). x86-64 also gets /bin/wio-clock (images/probe/wio-clock.c: RDTSC
# and CLOCK_MONOTONIC across a one-second sleep), which its default workload runs.
# The default workload prints uname -a, 16 bytes of /dev/urandom (and of /dev/hwrng, the virtio-rng), date -u and /proc/uptime,
# runs /bin/wio-probe if there is one, and runs two background busy loops that print their progress (WIO_BUSY_STEPS, default 3, and
# WIO_BUSY_ITERS, default 1000, set them: e.g. wio.busy_iters=5000 on the command line).
# wio.idle=S adds an idle phase (sleep S) after the hwrng line; wio.race=1 runs /bin/wio-race after the probe
# (wio.threads=1: /bin/wio-threads, two POSIX threads racing for under a tick);
# wio.bank=N,K runs /bin/wio-bank N K (a race that breaks a promise under some seeds); wio.promises=demo
# wio.planted=FORM,DEPTH runs /bin/wio-planted FORM DEPTH (a bug behind DEPTH 1-in-16 choices);
# states promises from the shell (wio-assert, wio-random), wio.promises=flood floods the channel;
# wio.pysdk=1 (or =bug) runs /usr/bin/wio-pysdk-demo (the Antithesis Python SDK demo) if there is one.
# /init links the promise channel's ports as /dev/wio.sdk and /dev/wio.random.
# wio.node=NAME (set by wio sim) makes the workload a world node's: wio.ip, wio.hosts, wio.run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2; exit 2; }
MODULES_DIR=""
WORKLOAD=""
ARCH=""
while (($#)); do
  case "$1" in
    --arch) [[ $# -ge 2 ]] || usage; ARCH="$2"; shift 2 ;;
    --modules) [[ $# -ge 2 ]] || usage; MODULES_DIR="$2"; shift 2 ;;
    --workload) [[ $# -ge 2 ]] || usage; WORKLOAD="$2"; shift 2 ;;
    -h | --help) usage ;;
    *) echo "unknown argument: $1" >&2; usage ;;
  esac
done
case "$ARCH" in
  riscv64 | x86_64) ;;
  "") wio_die "--arch riscv64|x86_64 is required" ;;
  *) wio_die "--arch $ARCH: riscv64 or x86_64" ;;
esac
if [[ -n "$MODULES_DIR" ]]; then
  [[ -f "$MODULES_DIR/modules.dep" ]] || wio_die "--modules $MODULES_DIR: no modules.dep there"
  MODULES_DIR="$(cd "$MODULES_DIR" && pwd)"
fi
if [[ -n "$WORKLOAD" ]]; then
  [[ -f "$WORKLOAD" ]] || wio_die "--workload $WORKLOAD: no such file"
fi

PROBE_SRC="$WIO_IMAGES_DIR/probe/wio-probe.c"
[[ -f "$PROBE_SRC" ]] || PROBE_SRC=""
# /bin/wio-race (images/probe/wio-race.c): two processes racing on a shared counter, run by
# the workload when booted with wio.race=1 (wio bench --race, the noise tests).
RACE_SRC="$WIO_IMAGES_DIR/probe/wio-race.c"
[[ -f "$RACE_SRC" && -n "$PROBE_SRC" ]] || RACE_SRC=""
# /bin/wio-threads (images/probe/wio-threads.c, glibc): two POSIX threads racing for about
# 2 ms, under one tick, with yields and short sleeps; run with wio.threads=1 (the noise tests).
THREADS_SRC="$WIO_IMAGES_DIR/probe/wio-threads.c"
[[ -f "$THREADS_SRC" && -n "$PROBE_SRC" ]] || THREADS_SRC=""
# The promise SDK (images/probe/wio-sdk.h): /bin/wio-assert (and wio-random, a link to it),
# /bin/wio-bank (a race that breaks a promise under some seeds), /bin/wio-planted (a bug
# behind rare choices, for measuring search depth), and
# /usr/lib/libvoidstar.so (what the Antithesis SDKs load; dynamic, for rootfs images).
SDK_SRCS=(wio-sdk.h wio-assert.c wio-bank.c wio-planted.c libvoidstar.c)
[[ -n "$PROBE_SRC" ]] || SDK_SRCS=()
# /bin/wio-clock (images/probe/wio-clock.c), x86-64 only: RDTSC across a one-second sleep.
CLOCK_SRC="$WIO_IMAGES_DIR/probe/wio-clock.c"
[[ "$ARCH" == x86_64 && -f "$CLOCK_SRC" && -n "$PROBE_SRC" ]] || CLOCK_SRC=""
PROBE_CFLAGS=(-Os -static -nostdlib -ffreestanding -fno-stack-protector -fno-pie -no-pie -s)
install_host_tools dpkg cpio gzip
if [[ "$ARCH" == riscv64 ]]; then
  CC=riscv64-linux-gnu-gcc
  CC_PKGS=(gcc-riscv64-linux-gnu libc6-dev-riscv64-cross)
  # -mno-relax, --no-relax: its _start does not set up gp, so no gp-relative accesses
  # shellcheck disable=SC2054 # "-Wl,--no-relax" is one word
  PROBE_CFLAGS+=(-mno-relax -Wl,--no-relax)
  wio_apt_init
  busybox_version() { deb_candidate_version busybox-static; }
  busybox_deb_line() { deb_uri_info busybox-static | cut -d' ' -f1-2; }
  busybox_fetch() { BUSYBOX_DEB="$(download_deb busybox-static)"; }
else
  CC=gcc
  CC_PKGS=(gcc libc6-dev)
  # bookworm amd64's busybox-static from the host's apt
  busybox_version() { apt-cache policy busybox-static 2>/dev/null | sed -n 's/^ *Candidate: //p'; }
  busybox_deb_line() { echo "host-apt $(busybox_version)"; }
  busybox_fetch() { # (not in $(...): the temporary directory must be removed at exit)
    local bb
    wio_tmpdir bb busybox
    (cd "$bb" && apt-get download -q "busybox-static=$(busybox_version)" >&2) ||
      wio_die "apt-get download busybox-static failed"
    BUSYBOX_DEB="$(compgen -G "$bb/busybox-static_*.deb" | head -n1)"
  }
fi
[[ -z "$PROBE_SRC" ]] || install_host_tools "${CC_PKGS[@]}"

# ------------------------------------------------------------------ the guest's files

write_init() {
  cat <<'EOF'
#!/bin/busybox sh
# wio guest init (generated by images/@ARCH@-initramfs.sh)
/bin/busybox mkdir -p /proc /sys /dev /tmp /run /sbin /usr/bin /usr/sbin
/bin/busybox mount -t proc proc /proc
/bin/busybox --install -s
export PATH=/sbin:/bin:/usr/sbin:/usr/bin HOME=/root TERM=dumb
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null || true
exec </dev/console >/dev/console 2>&1
mount -t tmpfs tmpfs /tmp 2>/dev/null || true
# wio's promise channel: the virtio-console ports named wio.sdk and wio.random (no udev
# here to make /dev/virtio-ports/NAME).
for p in /sys/class/virtio-ports/*; do
  [ -f "$p/name" ] && ln -sf "/dev/${p##*/}" "/dev/$(cat "$p/name")"
done

# wio.NAME=VALUE on the kernel command line -> WIO_NAME=VALUE
for word in $(cat /proc/cmdline); do
  case "$word" in
    wio.*=*)
      name="${word%%=*}"; name="$(echo "${name#wio.}" | tr 'a-z.-' 'A-Z__')"
      export "WIO_$name=${word#*=}" ;;
  esac
done

load_modules() {
  dir="/lib/modules/$(uname -r)"
  if [ ! -f "$dir/modules.dep" ]; then
    if [ -n "$(ls /lib/modules 2>/dev/null)" ]; then
      echo "wio-init: no modules for kernel $(uname -r) (have: $(ls /lib/modules))"
    fi
    return 0
  fi
  loaded=" "
  while IFS=: read -r mod deps; do
    order=""
    for d in $deps; do order="$d $order"; done
    for m in $order "$mod"; do
      case "$loaded" in *" $m "*) continue ;; esac
      loaded="$loaded$m "
      name="${m##*/}"; name="${name%.ko}"
      if insmod "$dir/$m"; then names="${names:-}$name "; else echo "wio-init: insmod $m failed"; fi
    done
  done <"$dir/modules.dep"
  echo "wio-init: modules loaded: ${names:-none}"
}
load_modules

echo "wio-init: start"
status=0
sh /workload.sh || status=$?
echo "wio-init: done status=$status"
sync
poweroff -f
# poweroff returned: the platform offers no way to shut down. Never let init exit (panic).
echo "wio-init: poweroff failed"
while :; do sleep 3600; done
EOF
}

write_default_workload() {
  cat <<'EOF'
#!/bin/sh
# wio default workload (generated by images/@ARCH@-initramfs.sh)
if [ -n "${WIO_NODE:-}" ]; then
  # A node of a wio sim world: its address, the other nodes' names, and its own script
  # (base64 on the command line), then nothing else of this workload.
  ip link set lo up
  ip link set eth0 up
  ip addr add "$WIO_IP/24" dev eth0
  echo "$WIO_HOSTS" | tr ',' '\n' | while IFS=: read -r n a; do echo "$a $n"; done >/etc/hosts
  echo "${WIO_RUN:-}" | base64 -d >/tmp/run.sh 2>/dev/null
  echo "sim: node $WIO_NODE at $WIO_IP"
  status=0
  sh /tmp/run.sh || status=$?
  echo "sim: done status=$status"
  exit $status
fi
echo "workload: uname: $(uname -a)"
set -- $(od -An -tx1 -N16 /dev/urandom)
echo "workload: urandom: $*"
if [ -e /dev/hwrng ]; then
  set -- $(od -An -tx1 -N16 /dev/hwrng)
  echo "workload: hwrng: $*"
fi
if [ -n "${WIO_IDLE:-}" ]; then
  # An idle phase (wio.idle=SECONDS): the guest only sleeps (wio bench --snapshots branches here).
  echo "workload: idle start"
  sleep "$WIO_IDLE"
  echo "workload: idle done"
fi
if [ -e /sys/class/net/eth0 ]; then
  # virtio-net: the simulated link to wio's peer at 10.0.2.2 (ARP and ICMP echo answered).
  ip link set eth0 up
  ip addr add 10.0.2.15/24 dev eth0
  if ping -c 3 -W 2 10.0.2.2 >/tmp/ping.txt 2>&1; then
    echo "workload: net: $(grep -c 'bytes from' /tmp/ping.txt) replies, times $(grep 'bytes from' /tmp/ping.txt | sed 's/.*time=//' | tr '\n' ' ')"
  else
    echo "workload: net: ping failed: $(tr '\n' ' ' </tmp/ping.txt)"
  fi
  # TCP echo service of the peer (smoltcp) on port 7.
  echo "workload: tcp echo: $(echo hello-over-tcp | nc -w 2 10.0.2.2 7)"
fi
if [ -x /usr/bin/redis-server ]; then
  # Debian's unmodified redis-server, driven from inside the guest over loopback.
  ip link set lo up
  redis-server --bind 127.0.0.1 --port 6379 --save '' --appendonly no --daemonize yes \
    --logfile /tmp/redis.log --pidfile /tmp/redis.pid
  i=0
  while ! redis-cli ping >/dev/null 2>&1 && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  redis-cli set wio:key "$(od -An -tx1 -N4 /dev/urandom | tr -d ' ')" >/dev/null
  redis-cli incr wio:n >/dev/null
  echo "workload: redis: ping=$(redis-cli ping) get=$(redis-cli get wio:key) incr=$(redis-cli incr wio:n) version=$(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/')"
  [ "$(redis-cli ping 2>/dev/null)" = PONG ] || echo "workload: redis: not answering; log: $(tail -n 5 /tmp/redis.log 2>&1 | tr '\n' ' ')"
  redis-cli shutdown nosave >/dev/null 2>&1 || true
fi
if [ "${WIO_BENCH:-0}" = 1 ] && grep -q ' / ext4 ' /proc/mounts; then
  # I/O benchmark (wio.bench=1): direct-I/O writes and reads on the disk, then 100 pings;
  # ci/bench_riscv64.py times the markers from outside (wall time).
  echo "bench: disk start"
  dd if=/dev/zero of=/data/bench.bin bs=65536 count=256 oflag=direct 2>&1 | tail -n 1
  dd if=/data/bench.bin of=/dev/null bs=65536 iflag=direct 2>&1 | tail -n 1
  echo "bench: disk done"
  echo "bench: net start"
  ping -c 100 -i 0.01 -q 10.0.2.2 2>&1 | tail -n 2 | tr '\n' ' '
  echo
  echo "bench: net done"
fi
if grep -q ' / ext4 ' /proc/mounts; then
  # Root is a virtio-blk disk: one file made durable with sync, then 64 KiB written straight
  # to the disk (O_DIRECT) but never flushed, then a crash: power off without syncing
  # (wio.crash=0 on the command line skips the crash; wio.crash=wait waits 2 s for a power
  # cut from wio's fault plan instead). A later boot of the same disk (after such a cut)
  # reports what survived instead.
  mkdir -p /data
  if [ -e /data/durable.txt ]; then
    if [ -e /data/unflushed.bin ]; then u="present ($(wc -c </data/unflushed.bin) bytes)"; else u=absent; fi
    echo "workload: disk: after restart: $(cat /data/durable.txt); unflushed.bin: $u"
  else
    echo "durable $(od -An -tx1 -N8 /dev/urandom | tr -d ' ')" >/data/durable.txt
    sync
    dd if=/dev/urandom of=/data/unflushed.bin bs=4096 count=16 oflag=direct 2>/dev/null
    echo "workload: disk: $(cat /data/durable.txt) (synced); unflushed.bin written, not flushed"
    if [ "${WIO_CRASH:-1}" = 1 ]; then
      echo "workload: disk: crashing (power off without sync)"
      echo "wio-init: done status=0"
      poweroff -f -n
    elif [ "${WIO_CRASH}" = wait ]; then
      echo "workload: disk: waiting for a power cut"
      sleep 2
      echo "workload: disk: no power cut came"
    fi
  fi
fi
echo "workload: date: $(date -u)"
echo "workload: rtc: $(cat /sys/class/rtc/rtc0/since_epoch 2>&1)"
echo "workload: uptime: $(cat /proc/uptime)"
if [ -x /bin/wio-probe ]; then /bin/wio-probe; fi
@CLOCK@
if [ -n "$WIO_RACE" ] && [ -x /bin/wio-race ]; then /bin/wio-race; fi
if [ -n "${WIO_THREADS:-}" ] && [ -x /bin/wio-threads ]; then
  # wio.threads=1, or wio.threads=RUN_US,YIELD_EVERY,SLEEP_EVERY[,ITERS]
  if [ "$WIO_THREADS" = 1 ]; then /bin/wio-threads; else /bin/wio-threads $(echo "$WIO_THREADS" | tr ',' ' '); fi
fi
if [ -n "${WIO_BANK:-}" ] && [ -x /bin/wio-bank ]; then
  # wio.bank=N[,K]: the lost-update race with promises (wio-bank N K).
  /bin/wio-bank $(echo "$WIO_BANK" | tr ',' ' ')
fi
if [ -n "${WIO_PLANTED:-}" ] && [ -x /bin/wio-planted ]; then
  # wio.planted=FORM,DEPTH: a bug behind DEPTH rare choices (wio-planted FORM DEPTH).
  /bin/wio-planted $(echo "$WIO_PLANTED" | tr ',' ' ')
fi
if [ "${WIO_PROMISES:-}" = demo ] && [ -x /bin/wio-assert ]; then
  # Promises from the shell: one kept, one never reached, an event, seeded numbers.
  wio-assert register sometimes "the disk filled up"
  wio-assert always "uname works" "$(uname >/dev/null && echo true || echo false)" '{"shell":"busybox"}'
  wio-assert event "demo" '{"step":1}'
  echo "workload: wio-random: $(wio-random 2 | tr '\n' ' ')"
fi
if [ "${WIO_PROMISES:-}" = flood ] && [ -x /bin/wio-assert ]; then
  # A hostile program: a flood of lines, malformed and oversized ones, a huge random request.
  i=0; while [ $i -lt 2000 ]; do echo '{"flood":1}'; i=$((i + 1)); done >/dev/wio.sdk
  yes '{"flood":2}' | head -c 300000 >/dev/wio.sdk
  printf 'not json\n[1,2]\n{"antithesis_assert":{"hit":true}}\n' >/dev/wio.sdk
  head -c 100000 /dev/zero | tr '\0' x >/dev/wio.sdk; echo >/dev/wio.sdk
  head -c 1000000 /dev/zero >/dev/wio.random &
  sleep 1; kill $! 2>/dev/null
  wio-assert always "still standing" true
  echo "workload: flood done"
fi
if [ -n "${WIO_PYSDK:-}" ] && [ -x /usr/bin/wio-pysdk-demo ]; then
  # wio.pysdk=1 (or =bug): a Python program instrumented with the Antithesis SDK (--python disk).
  wio-pysdk-demo "$WIO_PYSDK"
fi
busy() {
  step=0
  while [ "$step" -lt "${WIO_BUSY_STEPS:-3}" ]; do
    i=0
    while [ "$i" -lt "${WIO_BUSY_ITERS:-1000}" ]; do i=$((i + 1)); done
    step=$((step + 1))
    echo "workload: worker $1 step $step/${WIO_BUSY_STEPS:-3}"
  done
}
busy A & a=$!
busy B & b=$!
sa=0; sb=0
wait "$a" || sa=$?
wait "$b" || sb=$?
echo "workload: workers exited: $sa $sb"
echo "workload: uptime: $(cat /proc/uptime)"
[ "$sa" -eq 0 ] && [ "$sb" -eq 0 ]
EOF
}

# ------------------------------------------------------------------ cache key and build

wio_inputs() {
  local script_lines ver deb workload modules probe=none
  script_lines="$(wio_script_inputs)"
  if [[ -n "$PROBE_SRC" ]]; then
    probe="$(wio_sha256_file "$PROBE_SRC")"
    local pkg
    for pkg in "${CC_PKGS[@]}"; do probe="$probe $pkg $(wio_host_pkg_version "$pkg")"; done
    probe="$probe ${PROBE_CFLAGS[*]}"
  fi
  [[ -z "$RACE_SRC" ]] || probe="$probe race $(wio_sha256_file "$RACE_SRC")"
  [[ -z "$THREADS_SRC" ]] || probe="$probe threads $(wio_sha256_file "$THREADS_SRC") -O2 -static -pthread -s"
  [[ -z "$CLOCK_SRC" ]] || probe="$probe clock $(wio_sha256_file "$CLOCK_SRC")"
  [[ -z "$PROBE_SRC" ]] || probe="$probe header $(wio_sha256_file "$WIO_IMAGES_DIR/probe/wio-sys.h")"
  local f
  for f in "${SDK_SRCS[@]}"; do probe="$probe $f $(wio_sha256_file "$WIO_IMAGES_DIR/probe/$f")"; done
  ver="$(busybox_version)"
  deb="$(busybox_deb_line)"
  if [[ -n "$WORKLOAD" ]]; then workload="file $(wio_sha256_file "$WORKLOAD")"; else workload=default; fi
  if [[ -n "$MODULES_DIR" ]]; then
    modules="$(basename "$MODULES_DIR") $(wio_hash_dir "$MODULES_DIR")"
  else
    modules=none
  fi
  printf '%s\n' "$script_lines"
  [[ "$ARCH" == riscv64 ]] || printf 'arch %s\n' "$ARCH"
  printf 'package busybox-static %s\n' "$ver"
  printf 'deb %s\n' "$deb"
  printf 'workload %s\n' "$workload"
  printf 'modules %s\n' "$modules"
  printf 'probe %s\n' "$probe"
}

wio_build() {
  local out="$1" deb x root
  busybox_fetch
  deb="$BUSYBOX_DEB"
  wio_tmpdir x extract
  dpkg-deb -x "$deb" "$x"
  wio_tmpdir root root
  mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,run,root,etc,usr/bin,usr/sbin,lib/modules}
  # (trixie's busybox-static installs /usr/bin/busybox, bookworm's /bin/busybox)
  install -m 755 "$(compgen -G "$x/usr/bin/busybox" || echo "$x/bin/busybox")" "$root/bin/busybox"
  ln -s busybox "$root/bin/sh"
  write_init | sed "s|@ARCH@|$ARCH|" >"$root/init"
  if [[ -n "$WORKLOAD" ]]; then
    cat "$WORKLOAD" >"$root/workload.sh"
  else
    write_default_workload | sed "s|@ARCH@|$ARCH|" | while IFS= read -r line; do
      if [[ "$line" == @CLOCK@ ]]; then
        # x86-64: RDTSC (trapped by wio's small kernel) and the monotonic clock across `sleep 1`
        [[ -z "$CLOCK_SRC" ]] || printf '%s\n' 'if [ -x /bin/wio-clock ]; then /bin/wio-clock; fi'
      else
        printf '%s\n' "$line"
      fi
    done >"$root/workload.sh"
  fi
  chmod 755 "$root/init" "$root/workload.sh"
  if [[ -n "$PROBE_SRC" ]]; then
    "$CC" "${PROBE_CFLAGS[@]}" -o "$root/bin/wio-probe" "$PROBE_SRC" ||
      wio_die "cannot compile $PROBE_SRC"
  fi
  if [[ -n "$CLOCK_SRC" ]]; then
    "$CC" "${PROBE_CFLAGS[@]}" -o "$root/bin/wio-clock" "$CLOCK_SRC" || wio_die "cannot compile $CLOCK_SRC"
  fi
  if [[ -n "$RACE_SRC" ]]; then
    "$CC" "${PROBE_CFLAGS[@]}" -o "$root/bin/wio-race" "$RACE_SRC" ||
      wio_die "cannot compile $RACE_SRC"
  fi
  if [[ -n "$THREADS_SRC" ]]; then
    "$CC" -O2 -static -pthread -s -o "$root/bin/wio-threads" "$THREADS_SRC" ||
      wio_die "cannot compile $THREADS_SRC"
  fi
  if [[ -n "$MODULES_DIR" ]]; then
    cp -a "$MODULES_DIR" "$root/lib/modules/$(basename "$MODULES_DIR")"
    rm -f "$root/lib/modules"/*/*.bin # busybox insmod needs only the .ko files and modules.dep
  fi
    if ((${#SDK_SRCS[@]})); then
    local sdk="$WIO_IMAGES_DIR/probe"
    "$CC" "${PROBE_CFLAGS[@]}" -o "$root/bin/wio-assert" "$sdk/wio-assert.c" ||
      wio_die "cannot compile $sdk/wio-assert.c"
    ln -s wio-assert "$root/bin/wio-random"
    "$CC" "${PROBE_CFLAGS[@]}" -o "$root/bin/wio-bank" "$sdk/wio-bank.c" ||
      wio_die "cannot compile $sdk/wio-bank.c"
    "$CC" "${PROBE_CFLAGS[@]}" -o "$root/bin/wio-planted" "$sdk/wio-planted.c" ||
      wio_die "cannot compile $sdk/wio-planted.c"
    mkdir -p "$root/usr/lib"
    "$CC" -O2 -shared -fPIC -s -o "$root/usr/lib/libvoidstar.so" "$sdk/libvoidstar.c" ||
      wio_die "cannot compile $sdk/libvoidstar.c"
  fi
  # /dev/console must exist in the initramfs: the kernel opens it for init's stdio before
  # /init runs (init also reopens it after mounting devtmpfs).
  if [[ $EUID -eq 0 ]]; then
    mknod -m 600 "$root/dev/console" c 5 1
    mknod -m 666 "$root/dev/null" c 1 3
  else
    wio_log "not root: no /dev/console node in the initramfs (kernel messages only until /init remounts /dev)"
  fi
  find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  (cd "$root" && find . -mindepth 1 | sort | cpio --quiet -o -H newc -R 0:0 --reproducible) |
    gzip -n -9 >"$out/initramfs.cpio.gz"
  gzip -dc "$out/initramfs.cpio.gz" | cpio --quiet -t >"$out/contents.txt"
  if ! grep -qx init "$out/contents.txt" || ! grep -qx bin/busybox "$out/contents.txt"; then
    wio_die "initramfs lacks init or bin/busybox"
  fi
  cp "$root/init" "$out/init"
  cp "$root/workload.sh" "$out/workload.sh"
  wio_log "initramfs: $(wc -l <"$out/contents.txt") entries, $(($(stat -c %s "$out/initramfs.cpio.gz") / 1024)) KiB"
  rm -rf "$x" "$root"
}

if [[ "$ARCH" == riscv64 ]]; then
  WIO_USES_APT=1 wio_cached riscv64/initramfs
else
  wio_cached x86_64/initramfs
fi
echo "INITRAMFS=$WIO_OUT/initramfs.cpio.gz"
