//! Guests built into the wio cache by `images/build-all-riscv64.sh`, found by name
//! (`--guest small|debian`) through the manifest the script writes.

use crate::error::{Result, WioError};
use std::path::PathBuf;

/// The riscv64 guests built by `images/build-all-riscv64.sh`, by name.
pub const GUESTS: [(&str, &str, Option<&str>); 3] = [
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
    let (_, key) = DISKS.iter().find(|(n, _)| *n == name).ok_or_else(|| {
        WioError::Usage(format!(
            "unknown built disk {name:?}; built riscv64 disks: rootfs, redis, python, payments (or give a path)"
        ))
    })?;
    let cache = cache_dir()?;
    let manifest = cache.join("riscv64-guests.env");
    let text = std::fs::read_to_string(&manifest).map_err(|_| {
        WioError::Usage(format!(
            "no riscv64 disks built in {}: run images/build-all-riscv64.sh once",
            cache.display()
        ))
    })?;
    let path = text
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
        .map(|v| PathBuf::from(v.trim()))
        .filter(|p| p.exists())
        .ok_or_else(|| {
            WioError::Usage(format!(
                "the built {name} disk is not in {}; re-run images/build-all-riscv64.sh",
                cache.display()
            ))
        })?;
    Ok(path)
}

/// The cache folder.
fn cache_dir() -> Result<PathBuf> {
    std::env::var_os("WIO_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/wio")))
        .ok_or_else(|| WioError::Usage("cannot find the wio cache: set WIO_CACHE or HOME".into()))
}

/// Kernel and initramfs of the named built guest ("small", the default, or "debian").
pub fn built_guest(name: &str) -> Result<(PathBuf, Option<PathBuf>)> {
    let (_, kernel_key, initrd_key) =
        GUESTS.iter().find(|(n, _, _)| *n == name).ok_or_else(|| {
            WioError::Usage(format!(
                "unknown --guest {name:?}; riscv64 guests: small, debian, flight"
            ))
        })?;
    let cache = cache_dir()?;
    let manifest = cache.join("riscv64-guests.env");
    let text = std::fs::read_to_string(&manifest).map_err(|_| {
        WioError::Usage(format!(
            "no riscv64 guests built in {}: run images/build-all-riscv64.sh once (about 7 minutes; seconds when cached), or pass --kernel Image [--initrd FILE]",
            cache.display()
        ))
    })?;
    let get = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .map(|v| PathBuf::from(v.trim()))
    };
    let stale = || {
        WioError::Usage(format!(
            "{} is incomplete; re-run images/build-all-riscv64.sh",
            manifest.display()
        ))
    };
    let kernel = get(kernel_key).ok_or_else(stale)?;
    let initrd = match initrd_key {
        Some(key) => Some(get(key).ok_or_else(stale)?),
        None => None,
    };
    if !kernel.exists() || initrd.as_ref().is_some_and(|i| !i.exists()) {
        return Err(WioError::Usage(format!(
            "the cached {name} guest is gone from {}; re-run images/build-all-riscv64.sh",
            cache.display()
        )));
    }
    Ok((kernel, initrd))
}
