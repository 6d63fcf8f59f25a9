//! Guests built into the wio cache by `images/build-all-riscv64.sh`, found by name
//! (`--guest small|debian`) through the manifest the script writes.

use crate::error::{GuestsError, Result};
use std::path::{Path, PathBuf};

/// The riscv64 guests built by `images/build-all-riscv64.sh`, by name.
pub const GUESTS: [(&str, &str, Option<&str>); 4] = [
    (
        "small",
        "RISCV64_SMALL_IMAGE",
        Some("RISCV64_SMALL_INITRAMFS"),
    ),
    (
        "debian",
        "RISCV64_DEBIAN_IMAGE",
        Some("RISCV64_DEBIAN_INITRAMFS"),
    ),
    // The bare-metal flight-software example (images/flight): an ELF, no initramfs.
    ("flight", "RISCV64_FLIGHT_ELF", None),
    // Its vector variant (RVV 1.0): for a hart with the vector extension (--isa rv64gcv).
    ("flight-vector", "RISCV64_FLIGHT_VECTOR_ELF", None),
];

/// The root disks built by `images/build-all-riscv64.sh`, by name.
pub const DISKS: [(&str, &str); 4] = [
    ("rootfs", "RISCV64_ROOTFS"),
    ("redis", "RISCV64_REDIS_ROOTFS"),
    ("python", "RISCV64_PYTHON_ROOTFS"),
    ("payments", "RISCV64_PAYMENTS_ROOTFS"),
];

/// The named built root disk ("rootfs": busybox and the workload; "redis": also redis;
/// "python": also Python 3 and the Antithesis SDK; "payments": all of it and the payment
/// scenario's services, images/payments).
pub fn built_disk(name: &str) -> Result<PathBuf> {
    let (_, key) =
        DISKS
            .iter()
            .find(|(n, _)| *n == name)
            .ok_or_else(|| GuestsError::UnknownDisk {
                name: name.to_string(),
            })?;
    let cache = cache_dir()?;
    let text = read_manifest(&cache).ok_or_else(|| GuestsError::NoDisks {
        cache: cache.clone(),
    })?;
    let path = manifest_entry(&text, key)
        .filter(|p| p.exists())
        .ok_or_else(|| GuestsError::DiskGone {
            name: name.to_string(),
            cache: cache.clone(),
        })?;
    Ok(path)
}

/// The initramfs segment that runs imported container images
/// (`images/riscv64-image-runtime.sh`).
pub fn image_runtime() -> Result<PathBuf> {
    let cache = cache_dir()?;
    let text = read_manifest(&cache).ok_or_else(|| GuestsError::NoGuests {
        cache: cache.clone(),
    })?;
    manifest_entry(&text, "RISCV64_IMAGE_RUNTIME")
        .filter(|p| p.is_file())
        .ok_or_else(|| GuestsError::NoImageRuntime { cache }.into())
}

/// A machine that runs an imported container image: its disk and the initrd that starts
/// the image's process (see `wio_images::launch`).
#[derive(Debug, Clone)]
pub struct ImageMachine {
    /// The image's disk (never written: the run keeps its writes).
    pub disk: PathBuf,
    /// The small kernel's initramfs, the image runtime and the run's config, as one file.
    pub initrd: PathBuf,
    /// The image's record.
    pub record: wio_images::Record,
}

/// The machine of an imported image (`wio run --image`, a world node's `image`): `reference`
/// names it, `overrides` change its process.
pub fn image_machine(
    reference: &str,
    overrides: &wio_images::launch::Overrides,
) -> Result<ImageMachine> {
    let cache = wio_images::store::cache_dir()?;
    let (disk, record) = wio_images::store::find(&cache, reference)?;
    let process = wio_images::launch::process(&record, overrides)?;
    let (_, initramfs) = built_guest("small")?;
    let initramfs = initramfs.ok_or(GuestsError::Incomplete {
        manifest: cache.join(MANIFEST),
    })?;
    let initrd = wio_images::launch::initrd(&cache, &initramfs, &image_runtime()?, &process)?;
    Ok(ImageMachine {
        disk,
        initrd,
        record,
    })
}

/// The cache folder: one rule for the guests and the imported images
/// (`wio_images::store::cache_dir`: `$WIO_CACHE`, else `~/.cache/wio`, an empty value
/// counting as unset, as `images/lib.sh` counts it).
fn cache_dir() -> Result<PathBuf> {
    wio_images::store::cache_dir().map_err(|_| GuestsError::NoCache.into())
}

/// The list `images/build-all-riscv64.sh` writes into the cache: `KEY=path` lines.
const MANIFEST: &str = "riscv64-guests.env";

/// The manifest's text, when there is one.
fn read_manifest(cache: &Path) -> Option<String> {
    std::fs::read_to_string(cache.join(MANIFEST)).ok()
}

/// The path the manifest's `KEY=path` line gives.
fn manifest_entry(text: &str, key: &str) -> Option<PathBuf> {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
        .map(|v| PathBuf::from(v.trim()))
}

/// Kernel and initramfs of the named built guest ("small", the default, or "debian").
pub fn built_guest(name: &str) -> Result<(PathBuf, Option<PathBuf>)> {
    let (_, kernel_key, initrd_key) =
        GUESTS
            .iter()
            .find(|(n, _, _)| *n == name)
            .ok_or_else(|| GuestsError::UnknownGuest {
                name: name.to_string(),
            })?;
    let cache = cache_dir()?;
    let manifest = cache.join(MANIFEST);
    let text = read_manifest(&cache).ok_or_else(|| GuestsError::NoGuests {
        cache: cache.clone(),
    })?;
    let get = |key: &str| manifest_entry(&text, key);
    let stale = || GuestsError::Incomplete {
        manifest: manifest.clone(),
    };
    let kernel = get(kernel_key).ok_or_else(stale)?;
    let initrd = match initrd_key {
        Some(key) => Some(get(key).ok_or_else(stale)?),
        None => None,
    };
    if !kernel.exists() || initrd.as_ref().is_some_and(|i| !i.exists()) {
        return Err(GuestsError::GuestGone {
            name: name.to_string(),
            cache,
        }
        .into());
    }
    Ok((kernel, initrd))
}
