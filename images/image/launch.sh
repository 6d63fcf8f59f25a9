#!/bin/sh
# wio image launcher: the /workload.sh of a machine that runs an imported container image
# (`wio run --arch riscv64 --image REF`; images/riscv64-image-runtime.sh packs it). wio's
# /init has mounted proc, sysfs and devtmpfs, linked the promise channel's ports as
# /dev/wio.sdk and /dev/wio.random, and exported wio.* command-line words; this script:
#   - mounts the image's disk (/dev/vda; wio keeps its writes in memory, the disk file is
#     never written) at /newroot, and proc, sysfs, devtmpfs, devpts and /dev/shm inside it;
#   - links the ports under /dev/virtio-ports/ too (where udev would put them), gives the
#     image /usr/lib/libvoidstar.so (what the Antithesis SDKs load), makes the ports
#     writable by any user, names the machine (wio, or its world node's name); a world's
#     node gets its address on the switch and an /etc/hosts naming every node; a single
#     machine whose image has no /etc/hosts gets one naming localhost and the machine;
#   - copies the host files the scenario gives the node and makes its volumes' folders
#     (/wio/files.list);
#   - sets ANTITHESIS_OUTPUT_DIR / ANTITHESIS_SDK_LOCAL_OUTPUT (appended to the image's env
#     by wio) to /tmp/antithesis, and brings up lo;
#   - in a world's node (its promise channel has the wio.composer port), starts
#     /bin/wio-agent, the test composer's agent (images/image/wio-agent.c): it reports the
#     image's /opt/antithesis/test/v1/<template>/ commands to wio and runs them when told,
#     and shares wio.sdk and wio.random between the node's processes (with the shared
#     build of libvoidstar.so); gives the image /usr/lib/wio-stop-faults
#     (ANTITHESIS_STOP_FAULTS);
#   - waits until every node of /wio/wait answers "healthy" on port 19999 (compose's
#     depends_on with condition service_healthy);
#   - runs the image's process with /bin/wio-exec (user, working directory, environment,
#     argv from /wio/run.cfg, which wio writes) and, with /wio/health.cfg, its health check
#     every /wio/health.interval seconds until it succeeds, then answers "healthy" on port
#     19999; with /wio/restart (compose's restart policy: "always 0" or "on-failure MAX",
#     MAX 0 for no limit), starts the process again after it exits while the policy says
#     so, 100 ms later, the delay doubled at each restart up to 60 s and back to 100 ms
#     after a run of 10 s or more (docker's rule); exits with the last run's status, which
#     /init reports as "wio-init: done status=N" before powering off.
set -u
say() { echo "wio-image: $*"; }
mkdir -p /newroot
if ! mount -t ext4 /dev/vda /newroot; then
  say "cannot mount the image's disk (/dev/vda) as ext4"
  exit 125
fi
for d in proc sys dev tmp etc usr/lib; do [ -d "/newroot/$d" ] || mkdir -p "/newroot/$d"; done
mount -t proc proc /newroot/proc
mount -t sysfs sysfs /newroot/sys
mount -t devtmpfs devtmpfs /newroot/dev
mkdir -p /newroot/dev/pts /newroot/dev/shm /newroot/dev/virtio-ports
mount -t devpts devpts /newroot/dev/pts 2>/dev/null || true
mount -t tmpfs tmpfs /newroot/dev/shm 2>/dev/null || true
composer="" sdk="" random=""
for p in /sys/class/virtio-ports/*; do
  [ -f "$p/name" ] || continue
  case "$(cat "$p/name")" in
    wio.composer) composer="/dev/${p##*/}" ;;
    wio.sdk) sdk="/dev/${p##*/}" ;;
    wio.random) random="/dev/${p##*/}" ;;
  esac
  ln -sf "../${p##*/}" "/newroot/dev/virtio-ports/$(cat "$p/name")"
  # The image's user may not be root: anyone may state promises and draw random bytes.
  chmod 0666 "/dev/${p##*/}"
done
cp /usr/lib/libvoidstar.so /newroot/usr/lib/libvoidstar.so
# Host files the scenario gives the node (compose's bind mounts) and its volumes' folders:
# `mkdir TARGET`, `file N MODE TARGET`, `ro TARGET` (read-only once everything is copied).
if [ -f /wio/files.list ]; then
  while read -r op a b c; do
    case "$op" in
      mkdir) mkdir -p "/newroot$a" ;;
      file)
        mkdir -p "$(dirname "/newroot$c")"
        rm -rf "/newroot$c"
        cp "/wio/files/$a" "/newroot$c"
        chmod "$b" "/newroot$c" ;;
      ro) mount --bind "/newroot$a" "/newroot$a" && mount -o remount,ro,bind "/newroot$a" ;;
    esac
  done </wio/files.list
fi
mkdir -p /newroot/tmp/antithesis
chmod 1777 /newroot/tmp /newroot/tmp/antithesis
host="${WIO_NODE:-wio}"
hostname "$host"
ip link set lo up 2>/dev/null || true
if [ -n "${WIO_NODE:-}" ]; then
  # A world's node: its address on the switch, and every node by name (as a container
  # engine writes a container's /etc/hosts).
  ip link set eth0 up
  ip addr add "$WIO_IP/24" dev eth0
  {
    printf '127.0.0.1\tlocalhost\n'
    echo "$WIO_HOSTS" | tr ',' '\n' | while IFS=: read -r n a; do printf '%s\t%s\n' "$a" "$n"; done
  } >/etc/hosts
  # The launcher's own (it waits on other nodes by name) and the image's.
  rm -f /newroot/etc/hosts
  cp /etc/hosts /newroot/etc/hosts
  say "node $WIO_NODE at $WIO_IP"
elif [ ! -s /newroot/etc/hosts ]; then
  printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n' "$host" >/newroot/etc/hosts
fi
if [ -n "$composer" ]; then
  # The agent shares wio.sdk and wio.random between the node's processes (it replaces
  # their links with its FIFO and socket, then returns) and runs the composer's commands.
  cp /bin/wio-agent /newroot/usr/lib/wio-stop-faults
  cp /usr/lib/libvoidstar-shared.so /newroot/usr/lib/libvoidstar.so
  /bin/wio-agent "$composer" /newroot "$sdk" "$random" || say "the test composer's agent did not start"
fi
if [ -s /wio/wait ]; then
  while read -r dep; do
    say "waiting for $dep to be healthy"
    until nc "$dep" 19999 </dev/null 2>/dev/null | grep -q healthy; do sleep 0.2; done
    say "$dep is healthy"
  done </wio/wait
fi
say "start"
/bin/wio-exec /wio/run.cfg /newroot &
main=$!
health=""
if [ -f /wio/health.cfg ]; then
  # The health check, as the image's user, until it succeeds; then the node answers
  # "healthy" on port 19999 to the nodes waiting for it.
  (
    until /bin/wio-exec /wio/health.cfg /newroot >/dev/null 2>&1; do sleep "$(cat /wio/health.interval)"; done
    say "healthy"
    while :; do echo healthy | nc -l -p 19999 >/dev/null 2>&1; done
  ) &
  health=$!
fi
status=0
wait "$main" || status=$?
if [ -s /wio/restart ]; then
  read -r policy max </wio/restart
  restarts=0
  delay=100
  while [ "$policy" = always ] ||
    { [ "$status" -ne 0 ] && { [ "$max" -eq 0 ] || [ "$restarts" -lt "$max" ]; }; }; do
    restarts=$((restarts + 1))
    secs="$((delay / 1000)).$(printf %03d $((delay % 1000)))"
    say "exit status=$status; restart $restarts ($policy) in $secs s"
    sleep "$secs"
    began="$(cut -d. -f1 /proc/uptime)"
    /bin/wio-exec /wio/run.cfg /newroot &
    main=$!
    status=0
    wait "$main" || status=$?
    if [ $(($(cut -d. -f1 /proc/uptime) - began)) -ge 10 ]; then
      delay=100
    elif [ "$delay" -lt 60000 ]; then
      delay=$((delay * 2))
      [ "$delay" -gt 60000 ] && delay=60000
    fi
  done
fi
[ -n "$health" ] && kill "$health" 2>/dev/null
say "exit status=$status"
sync
exit $status
