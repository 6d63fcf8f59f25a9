# shellcheck shell=bash
# Shared helpers for wio's guest-artifact build scripts. Source it; do not run it.
#
#   WIO_CACHE            cache root (default ~/.cache/wio); nothing is written into the repo
#   WIO_APT_UPDATE=1     refresh the private riscv64 trixie package lists now
#   WIO_APT_MAX_AGE=S    before *building* (never on a cache hit), lists older than S seconds
#                        are refreshed first (default 86400)
#
# Conventions: progress and tool output go to stderr; stdout carries only machine-readable
# KEY=path lines. Every artifact lives in $WIO_CACHE/<kind>/<key>/ where <key> is a content
# hash of all its inputs; it is built in $WIO_CACHE/tmp and moved into place in one rename.

if [[ -n "${WIO_LIB_SOURCED:-}" ]]; then return 0; fi
WIO_LIB_SOURCED=1

WIO_CACHE="${WIO_CACHE:-${HOME:-/root}/.cache/wio}"
WIO_IMAGES_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WIO_LIB="$WIO_IMAGES_DIR/lib.sh"
WIO_PROG="${WIO_PROG:-$(basename "$0" .sh)}"
WIO_APT_DIR="$WIO_CACHE/apt-riscv64-trixie"
WIO_APT_SUITE="trixie"
WIO_APT_MIRROR="http://deb.debian.org/debian"
WIO_KEY_LEN=24
# Fixed timestamp for everything we pack, so that artifacts are byte-reproducible. (Fixed,
# not taken from the environment: it is not part of the cache keys.)
export SOURCE_DATE_EPOCH=1735689600 # 2025-01-01T00:00:00Z
export LC_ALL=C
shopt -s inherit_errexit # a failing $(...) fails the assignment that uses it

mkdir -p "$WIO_CACHE/tmp" "$WIO_CACHE/locks" "$WIO_CACHE/logs"

# ---------------------------------------------------------------- messages

wio_log() { printf '[%s %4ss] %s\n' "$WIO_PROG" "$SECONDS" "$*" >&2; }
wio_die() { printf '[%s %4ss] ERROR: %s\n' "$WIO_PROG" "$SECONDS" "$*" >&2; exit 1; }

# ---------------------------------------------------------------- hashing

wio_sha256_file() { sha256sum "$1" | cut -d' ' -f1; }
wio_sha256_stdin() { sha256sum | cut -d' ' -f1; }

# Hash of a directory tree: relative paths, file types, exec bits, symlink targets, contents.
wio_hash_dir() {
  local dir="$1"
  (
    cd "$dir" || exit 1
    find . -mindepth 1 -printf '%y %P\n' | sort | while read -r type path; do
      case "$type" in
        f) if [[ -x "$path" ]]; then xbit=x; else xbit=-; fi
           printf 'f %s %s %s\n' "$xbit" "$(wio_sha256_file "$path")" "$path" ;;
        l) printf 'l %s -> %s\n' "$path" "$(readlink "$path")" ;;
        *) printf '%s %s\n' "$type" "$path" ;;
      esac
    done
  ) | wio_sha256_stdin
}

# Key of an artifact: hash of its inputs text (stdin), shortened.
wio_key_from_inputs() { wio_sha256_stdin | cut -c1-"$WIO_KEY_LEN"; }

# ---------------------------------------------------------------- temp dirs, locks, publish

WIO_TMPDIRS=()
wio_cleanup() {
  local d
  for d in "${WIO_TMPDIRS[@]+"${WIO_TMPDIRS[@]}"}"; do
    [[ -n "$d" && -e "$d" ]] && rm -rf --one-file-system "$d"
  done
  if [[ -n "${WIO_TICKER_PID:-}" ]]; then kill "$WIO_TICKER_PID" 2>/dev/null || true; fi
}
trap wio_cleanup EXIT
trap 'exit 130' INT TERM

# wio_tmpdir VAR NAME: make a fresh directory on the cache's filesystem and store its path in
# VAR; it is removed at exit unless published. (Not in $(...): the cleanup list must be ours.)
# Names start with the script's name: leftovers of a killed run are removed by the next build.
wio_tmpdir() {
  local d
  d="$(mktemp -d "$WIO_CACHE/tmp/$WIO_PROG.$2.XXXXXX")"
  WIO_TMPDIRS+=("$d")
  printf -v "$1" '%s' "$d"
}

wio_remove_stale_tmp() {
  local d
  for d in "$WIO_CACHE/tmp/$WIO_PROG".*; do
    [[ -e "$d" ]] || continue
    wio_log "removing leftover $d"
    rm -rf --one-file-system "$d"
  done
}

# wio_lock NAME [-s]: hold an exclusive (or shared) lock for the rest of the process.
wio_lock() {
  local name="$1" mode="${2:--x}" fd
  exec {fd}>>"$WIO_CACHE/locks/$name.lock"
  if ! flock -n "$mode" "$fd"; then
    wio_log "waiting for lock $name (another build is running)"
    flock "$mode" "$fd"
  fi
}

# wio_publish TMP FINAL: atomically move a finished directory into place. If another process
# published the same key first, keep theirs (same inputs, same content) and drop ours.
wio_publish() {
  local tmp="$1" final="$2"
  mkdir -p "$(dirname "$final")"
  if [[ -e "$final/inputs.txt" ]]; then rm -rf "$tmp"; return 0; fi
  [[ -e "$final" ]] && rm -rf --one-file-system "$final" # not ours, incomplete: replace it
  chmod 755 "$tmp"
  mv -T "$tmp" "$final" 2>/dev/null || { [[ -d "$final" ]] || wio_die "cannot publish $final"; rm -rf "$tmp"; }
}

# wio_ticker MESSAGE-CMD: every WIO_TICK seconds (default 30) print the output of a command
# (evaluated in a subshell) as a progress line, until wio_ticker_stop.
wio_ticker() {
  local cmd="$1"
  # (stdout goes to stderr too: a leftover `sleep` must not hold a caller's pipe open)
  (
    while sleep "${WIO_TICK:-30}"; do wio_log "$(eval "$cmd")"; done
  ) >&2 &
  WIO_TICKER_PID=$!
}
wio_ticker_stop() {
  if [[ -n "${WIO_TICKER_PID:-}" ]]; then
    kill "$WIO_TICKER_PID" 2>/dev/null || true
    wait "$WIO_TICKER_PID" 2>/dev/null || true
    WIO_TICKER_PID=
  fi
}

# ---------------------------------------------------------------- host tools (system apt)

# install_host_tools PKG...: install the Debian (host, amd64) packages that are missing.
install_host_tools() {
  local pkg missing=()
  for pkg in "$@"; do
    if [[ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null)" != "ii " ]]; then
      missing+=("$pkg")
    fi
  done
  ((${#missing[@]} == 0)) && return 0
  [[ $EUID -eq 0 ]] || wio_die "missing host packages (${missing[*]}); run as root or install them"
  wio_log "installing host packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  local aptopts=(-o DPkg::Lock::Timeout=600 -o APT::Get::Assume-Yes=true -o Dpkg::Use-Pty=0 -q)
  if ! apt-get "${aptopts[@]}" install --no-install-recommends "${missing[@]}" >&2; then
    wio_log "install failed; running apt-get update and retrying"
    apt-get "${aptopts[@]}" update >&2
    apt-get "${aptopts[@]}" install --no-install-recommends "${missing[@]}" >&2
  fi
}

# wio_host_pkg_version PKG: installed version of a host package (for cache keys).
wio_host_pkg_version() { dpkg-query -W -f='${Version}' "$1"; }

# ---------------------------------------------------------------- private riscv64 trixie apt

# The system apt configuration (/etc/apt) is never modified. This is a private configuration
# read after the system one (so proxy settings still apply) that replaces sources, state,
# cache, preferences and architectures.
WIO_APT_CONF="$WIO_APT_DIR/apt.conf"
WIO_APT_KEYRING="${WIO_APT_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}"
WIO_APT_LOCK="$WIO_CACHE/locks/apt-riscv64-trixie.lock"

wio_apt_write_config() {
  mkdir -p "$WIO_APT_DIR/state/lists/partial" "$WIO_APT_DIR/cache/archives/partial" "$WIO_APT_DIR/log"
  [[ -e "$WIO_APT_DIR/state/status" ]] || : >"$WIO_APT_DIR/state/status"
  local sources conf
  sources="deb [arch=riscv64 signed-by=$WIO_APT_KEYRING] $WIO_APT_MIRROR $WIO_APT_SUITE main"
  conf="$(cat <<EOF
// private apt configuration of wio's guest-image scripts (generated by images/lib.sh)
Dir::Etc::SourceList "$WIO_APT_DIR/sources.list";
Dir::Etc::SourceParts "/dev/null";
Dir::Etc::Preferences "/dev/null";
Dir::Etc::PreferencesParts "/dev/null";
Dir::State "$WIO_APT_DIR/state";
Dir::State::status "$WIO_APT_DIR/state/status";
Dir::Cache "$WIO_APT_DIR/cache";
Dir::Cache::pkgcache "pkgcache.bin";
Dir::Cache::srcpkgcache "srcpkgcache.bin";
Dir::Log "$WIO_APT_DIR/log";
APT::Architecture "riscv64";
#clear APT::Architectures;
APT::Architectures { "riscv64"; };
APT::Sandbox::User "root";
APT::Get::List-Cleanup "true";
Acquire::Languages "none";
Acquire::IndexTargets::deb::DEP-11::DefaultEnabled "false";
Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled "false";
Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled "false";
Acquire::IndexTargets::deb::DEP-11-icons-hidpi::DefaultEnabled "false";
Acquire::IndexTargets::deb::DEP-11-icons-large::DefaultEnabled "false";
Acquire::IndexTargets::deb::DEP-11-icons-large-hidpi::DefaultEnabled "false";
Acquire::IndexTargets::deb::CNF::DefaultEnabled "false";
Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled "false";
Acquire::Retries "3";
EOF
)"
  [[ "$(cat "$WIO_APT_DIR/sources.list" 2>/dev/null)" == "$sources" ]] ||
    printf '%s\n' "$sources" >"$WIO_APT_DIR/sources.list"
  [[ "$(cat "$WIO_APT_CONF" 2>/dev/null)" == "$conf" ]] || printf '%s\n' "$conf" >"$WIO_APT_CONF"
}

# Queries share a lock; `update` takes it exclusively (so nobody reads half-written lists).
wio_apt_get() { flock -s "$WIO_APT_LOCK" apt-get -c "$WIO_APT_CONF" -q "$@"; }
wio_apt_cache() { flock -s "$WIO_APT_LOCK" apt-cache -c "$WIO_APT_CONF" "$@"; }
_wio_apt_update_locked() { flock -x "$WIO_APT_LOCK" apt-get -c "$WIO_APT_CONF" -q update; }

wio_apt_lists_present() {
  compgen -G "$WIO_APT_DIR/state/lists/*_dists_${WIO_APT_SUITE}_main_binary-riscv64_Packages*" >/dev/null
}

wio_apt_lists_age() {
  local f
  f="$(compgen -G "$WIO_APT_DIR/state/lists/*_dists_${WIO_APT_SUITE}_InRelease" | head -n1 || true)"
  [[ -n "$f" ]] || { echo 999999999; return; }
  echo $(($(date +%s) - $(stat -c %Y "$f")))
}

# The trixie Release file is signed with trixie's archive keys. Bookworm's
# debian-archive-keyring (2023.3+deb12u1 and later) already carries them; an older keyring
# makes `apt-get update` fail with NO_PUBKEY. Then the fix is the keyring package itself
# from bookworm's own updates (system apt), never an insecure repository.
wio_apt_update() {
  wio_apt_write_config
  wio_log "refreshing package lists: $WIO_APT_SUITE/main riscv64 (private apt in $WIO_APT_DIR)"
  local log="$WIO_APT_DIR/log/update.log"
  if _wio_apt_update_locked >"$log" 2>&1 && ! grep -q '^W: .*\(NO_PUBKEY\|not signed\|is not signed\)' "$log"; then
    cat "$log" >&2
    touch "$WIO_APT_DIR/state/lists/.wio-updated"
    return 0
  fi
  cat "$log" >&2
  if grep -q 'NO_PUBKEY\|EXPKEYSIG\|not signed' "$log"; then
    wio_log "signature check failed: the host keyring lacks $WIO_APT_SUITE's archive key;"
    wio_log "upgrading the host's debian-archive-keyring (bookworm updates carry the trixie keys)"
    install_host_tools debian-archive-keyring
    apt-get -o DPkg::Lock::Timeout=600 -y install --only-upgrade debian-archive-keyring >&2 || true
    _wio_apt_update_locked >&2 || wio_die "apt-get update for $WIO_APT_SUITE riscv64 failed (see above)"
  else
    wio_die "apt-get update for $WIO_APT_SUITE riscv64 failed (see $log)"
  fi
}

# wio_apt_init: private apt ready to answer queries (downloads lists only if there are none,
# or WIO_APT_UPDATE=1). A cache hit therefore never touches the network.
wio_apt_init() {
  wio_apt_write_config
  if [[ "${WIO_APT_UPDATE:-0}" == 1 && -z "${WIO_APT_UPDATED:-}" ]] || ! wio_apt_lists_present; then
    wio_apt_update
    export WIO_APT_UPDATED=1 # children (build-all) need not refresh again
  fi
}

# wio_apt_refresh_if_stale: called before a real build so that it uses current versions
# (the mirror keeps only current ones).
wio_apt_refresh_if_stale() {
  local age max="${WIO_APT_MAX_AGE:-86400}"
  age="$(wio_apt_lists_age)"
  if ((age > max)); then
    wio_log "package lists are ${age}s old (> WIO_APT_MAX_AGE=${max}s)"
    wio_apt_update
  fi
}

# deb_candidate_version PKG
deb_candidate_version() {
  local v
  v="$(wio_apt_cache policy "$1" | awk '/Candidate:/ {print $2; exit}')"
  [[ -n "$v" && "$v" != "(none)" ]] || wio_die "package $1 not found in $WIO_APT_SUITE riscv64"
  printf '%s\n' "$v"
}

# deb_depends_matching PKG REGEX: the first dependency of PKG's candidate whose name matches
# (resolves metapackages like linux-image-riscv64 -> linux-image-6.12.x+debNN-riscv64).
deb_depends_matching() {
  local dep
  dep="$(wio_apt_cache show "$1=$(deb_candidate_version "$1")" |
    awk -F': ' '/^(Pre-)?Depends:/ {print $2; exit}' | tr '|' ','| tr ',' '\n' |
    sed -e 's/^ *//' -e 's/ .*//' | grep -E "$2" | head -n1 || true)"
  [[ -n "$dep" ]] || wio_die "no dependency of $1 matches /$2/"
  printf '%s\n' "$dep"
}

# deb_uri_info PKG: "FILE SHA256 SIZE POOL-PATH" of PKG's candidate .deb, from the signed
# package index (apt-cache show: no network, and faster than apt-get --print-uris).
deb_uri_info() {
  local ver rec path hash size
  ver="$(deb_candidate_version "$1")"
  rec="$(wio_apt_cache show "$1=$ver" | awk '/^$/ {exit} {print}')"
  path="$(awk '/^Filename: / {print $2}' <<<"$rec")"
  hash="$(awk '/^SHA256: / {print $2}' <<<"$rec")"
  size="$(awk '/^Size: / {print $2}' <<<"$rec")"
  [[ -n "$path" && "$hash" =~ ^[0-9a-f]{64}$ ]] || wio_die "no Filename/SHA256 for $1=$ver in the index"
  printf '%s %s %s %s\n' "$(basename "$path")" "$hash" "$size" "$path"
}

# download_deb PKG: fetch PKG's candidate .deb into the content-addressed download cache
# $WIO_CACHE/debs/<sha256>/<file>.deb (checked against the signed index) and print its path.
download_deb() {
  local pkg="$1" ver file hash size path dest tmp uris got
  ver="$(deb_candidate_version "$pkg")"
  read -r file hash size path <<<"$(deb_uri_info "$pkg")"
  dest="$WIO_CACHE/debs/$hash/$file"
  if [[ -f "$dest" ]]; then printf '%s\n' "$dest"; return 0; fi
  # apt-get's own view of what it will fetch must agree with the index
  uris="$(wio_apt_get --print-uris download "$pkg=$ver" 2>/dev/null | grep "^'" || true)"
  [[ "$uris" == *" $size SHA256:$hash"* ]] ||
    wio_die "apt-get --print-uris download $pkg=$ver disagrees with the index: $uris"
  wio_log "downloading $file ($((size / 1024)) KiB): ${uris%%\' *}'"
  # (often run inside $(...), where no EXIT trap runs: clean up explicitly)
  tmp="$(mktemp -d "$WIO_CACHE/tmp/$WIO_PROG.deb.XXXXXX")"
  if ! (cd "$tmp" && wio_apt_get download "$pkg=$ver" >&2); then
    rm -rf "$tmp"; wio_die "apt-get download $pkg=$ver failed"
  fi
  got="$(compgen -G "$tmp/*.deb" | head -n1 || true)"
  if [[ -z "$got" || "$(wio_sha256_file "$got")" != "$hash" ]]; then
    rm -rf "$tmp"; wio_die "apt-get download $pkg=$ver: no .deb, or its sha256 is not $hash"
  fi
  mkdir -p "$WIO_CACHE/debs/$hash"
  mv -f "$got" "$dest"
  rm -rf "$tmp"
  printf '%s\n' "$dest"
}

# ---------------------------------------------------------------- cached artifacts

# wio_cached KIND: the script defines wio_inputs (prints the text describing every input; its
# hash is the key; it must assign $(...) results to variables before printing them, so that
# a failed look-up fails the build instead of printing an empty field) and wio_build DIR (fills DIR). Sets WIO_OUT to the published directory.
# Set WIO_USES_APT=1 to refresh stale package lists before building.
wio_cached() {
  local kind="$1" inputs key tmp start
  inputs="$(wio_inputs)"
  key="$(printf '%s\n' "$inputs" | wio_key_from_inputs)"
  WIO_OUT="$WIO_CACHE/$kind/$key"
  if [[ -e "$WIO_OUT/inputs.txt" ]]; then
    wio_log "cache hit: $WIO_OUT"
    return 0
  fi
  wio_lock "${kind//\//-}"
  if [[ "${WIO_USES_APT:-0}" == 1 ]]; then
    wio_apt_refresh_if_stale
    inputs="$(wio_inputs)"
    key="$(printf '%s\n' "$inputs" | wio_key_from_inputs)"
    WIO_OUT="$WIO_CACHE/$kind/$key"
  fi
  if [[ -e "$WIO_OUT/inputs.txt" ]]; then
    wio_log "cache hit: $WIO_OUT"
    return 0
  fi
  wio_log "cache miss: building $kind/$key"
  wio_remove_stale_tmp
  start=$SECONDS
  wio_tmpdir tmp out
  wio_build "$tmp"
  printf '%s\n' "$inputs" >"$tmp/inputs.txt" # written last: marks the directory complete
  wio_publish "$tmp" "$WIO_OUT"
  wio_log "built $kind/$key in $((SECONDS - start))s"
}

# Common input lines: the build scripts themselves.
wio_script_inputs() {
  printf 'script %s %s\n' "$(basename "$0")" "$(wio_sha256_file "$0")"
  printf 'lib lib.sh %s\n' "$(wio_sha256_file "$WIO_LIB")"
}

# riscv_image_check FILE: a RISC-V Linux "Image" has "RISCV\0\0\0" at 48 and "RSC\x05" at 56.
riscv_image_check() {
  local f="$1" m1 m2
  m1="$(od -An -tx1 -j48 -N8 "$f" | tr -d ' \n')"
  m2="$(od -An -tx1 -j56 -N4 "$f" | tr -d ' \n')"
  [[ "$m1" == "5249534356000000" && "$m2" == "52534305" ]]
}
