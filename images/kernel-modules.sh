# Sourced by the scripts that publish a Debian kernel's modules for wio's initramfs
# (riscv64-debian-kernel.sh, x86_64-l1.sh): which modules, with their dependencies, and the
# depmod files busybox's insmod loop in /init reads (images/initramfs.sh --modules DIR).
# Needs kmod (modinfo, depmod), xz-utils, zstd, gzip. Scripts that source it put
# kernel_modules_inputs in their cache key.

# kernel_modules_inputs: this file's line for a cache key.
kernel_modules_inputs() {
  printf 'lib kernel-modules.sh %s\n' "$(wio_sha256_file "${BASH_SOURCE[0]}")"
}

# The virtio drivers of wio's machines (virtio-mmio slots: rng, net, blk, and the console of
# the promise channel) with the ring and core they need, as modinfo spells them.
WIO_VIRTIO_MODULES=(virtio_mmio virtio_blk virtio_net virtio_rng virtio_console virtio_ring virtio)

# Module names as modinfo spells them (dashes and underscores are the same to the kernel).
kernel_module_norm() { tr '-' '_' <<<"$1"; }

# collect_kernel_modules SRC OUT BUILTIN_TXT MODULE...: the MODULEs that SRC (a package's
# lib/modules/<release>) has as modules, and every module they depend on, decompressed to
# .ko under OUT (the same relative paths), with SRC's modules.builtin and modules.order and
# depmod's files; the MODULEs that are built into the kernel are listed in BUILTIN_TXT.
# Prints the modules it copied, one line.
collect_kernel_modules() {
  local src="$1" out="$2" builtin_txt="$3" rel f name m d deps base
  shift 3
  rel="$(basename "$out")"
  # name -> file, for every module of the package
  local -A file_of=() builtin=() done_=()
  while IFS= read -r f; do
    name="$(basename "$f")"; name="${name%%.ko*}"
    file_of[$(kernel_module_norm "$name")]="${f#"$src"/}"
  done < <(find "$src/kernel" -name '*.ko*' -type f)
  while IFS= read -r f; do
    name="$(basename "$f")"; builtin[$(kernel_module_norm "${name%%.ko*}")]=1
  done <"$src/modules.builtin"

  local todo=() seen=()
  : >"$builtin_txt"
  for m in "$@"; do todo+=("$(kernel_module_norm "$m")"); done
  while ((${#todo[@]})); do
    m="${todo[0]}"; todo=("${todo[@]:1}")
    [[ -n "${done_[$m]:-}" ]] && continue
    done_[$m]=1
    if [[ -n "${builtin[$m]:-}" ]]; then
      echo "$m" >>"$builtin_txt"; continue
    fi
    [[ -n "${file_of[$m]:-}" ]] || { wio_log "note: module $m is neither modular nor built in"; continue; }
    seen+=("$m")
    deps="$(modinfo -F depends "$src/${file_of[$m]}")"
    for d in ${deps//,/ }; do todo+=("$(kernel_module_norm "$d")"); done
  done
  mkdir -p "$out"
  for m in "${seen[@]}"; do
    f="${file_of[$m]}"
    mkdir -p "$out/$(dirname "$f")"
    case "$f" in
      *.ko.xz) xz -dc "$src/$f" >"$out/${f%.xz}" ;;
      *.ko.zst) zstd -qdc "$src/$f" >"$out/${f%.zst}" ;;
      *.ko.gz) gzip -dc "$src/$f" >"$out/${f%.gz}" ;;
      *) cp "$src/$f" "$out/$f" ;;
    esac
  done
  cp "$src/modules.builtin" "$src/modules.order" "$out/"
  [[ -f "$src/modules.builtin.modinfo" ]] && cp "$src/modules.builtin.modinfo" "$out/"
  # depmod -b BASE looks in BASE/lib/modules/<release>
  wio_tmpdir base depmod
  mkdir -p "$base/lib/modules"
  mv "$out" "$base/lib/modules/$rel"
  depmod -b "$base" "$rel"
  mv "$base/lib/modules/$rel" "$out"
  rm -rf "$base"
  printf '%s ' "${seen[@]}"
  echo
}
