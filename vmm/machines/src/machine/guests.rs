//! Guests built into the wio cache by `images/build-all-riscv64.sh` and
//! `images/build-all-x86_64.sh`, found by name (`--guest small|debian`, a world node's
//! `disk = "payments"`) through the manifest each script writes.

use super::Arch;
use crate::error::{GuestsError, Result};
use std::path::{Path, PathBuf};

/// One architecture's builds: the script that makes them, the manifest it writes into the
/// cache, and the guests and disks it lists by name.
pub struct Builds {
    /// The architecture's name, as errors print it.
    arch: &'static str,
    /// What builds them (run from the repository).
    script: &'static str,
    /// About how many minutes the script takes with nothing cached.
    minutes: u32,
    /// The manifest the script writes: `KEY=path` lines.
    manifest: &'static str,
    /// Guests: name, the kernel's key, the initramfs's key (none for a bare-metal ELF).
    guests: &'static [(&'static str, &'static str, Option<&'static str>)],
    /// Root disks: name, key.
    disks: &'static [(&'static str, &'static str)],
}

/// The riscv64 guests and disks built by `images/build-all-riscv64.sh`.
pub const RISCV64: Builds = Builds {
    arch: "riscv64",
    script: "images/build-all-riscv64.sh",
    minutes: 7,
    manifest: "riscv64-guests.env",
    guests: &[
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
    ],
    disks: &[
        ("rootfs", "RISCV64_ROOTFS"),
        ("redis", "RISCV64_REDIS_ROOTFS"),
        ("python", "RISCV64_PYTHON_ROOTFS"),
        ("payments", "RISCV64_PAYMENTS_ROOTFS"),
    ],
};

/// The x86-64 guest and disks built by `images/build-all-x86_64.sh`: wio's small kernel
/// (a bzImage) with its busybox initramfs, and root disks of Debian bookworm's amd64
/// packages.
pub const X86_64: Builds = Builds {
    arch: "x86_64",
    script: "images/build-all-x86_64.sh",
    minutes: 5,
    manifest: "x86_64-guests.env",
    guests: &[(
        "small",
        "X86_64_SMALL_BZIMAGE",
        Some("X86_64_SMALL_INITRAMFS"),
    )],
    disks: &[
        ("rootfs", "X86_64_ROOTFS"),
        ("redis", "X86_64_REDIS_ROOTFS"),
        ("python", "X86_64_PYTHON_ROOTFS"),
        ("payments", "X86_64_PAYMENTS_ROOTFS"),
    ],
};

/// The builds of `arch`.
pub fn builds(arch: Arch) -> &'static Builds {
    match arch {
        Arch::Riscv64 => &RISCV64,
        Arch::X86_64 => &X86_64,
    }
}

/// Kernel and initramfs of the named built riscv64 guest (see [`Builds::guest`]).
pub fn built_guest(name: &str) -> Result<(PathBuf, Option<PathBuf>)> {
    RISCV64.guest(name)
}

impl Builds {
    /// The guests' names, for messages.
    fn guest_names(&self) -> String {
        let names: Vec<&str> = self.guests.iter().map(|(n, _, _)| *n).collect();
        names.join(", ")
    }

    /// Whether a disk of that name is built by these builds (not whether it is built yet).
    pub fn has_disk(&self, name: &str) -> bool {
        self.disks.iter().any(|(n, _)| *n == name)
    }

    /// The disks' names, for messages.
    pub fn disk_names(&self) -> String {
        let names: Vec<&str> = self.disks.iter().map(|(n, _)| *n).collect();
        names.join(", ")
    }

    /// The named built root disk ("rootfs": busybox and the workload; "redis": also redis;
    /// "python": also Python 3 and the Antithesis SDK; "payments": all of it and the payment
    /// scenario's services, images/payments).
    pub fn disk(&self, name: &str) -> Result<PathBuf> {
        let (_, key) = self.disks.iter().find(|(n, _)| *n == name).ok_or_else(|| {
            GuestsError::UnknownDisk {
                name: name.to_string(),
                arch: self.arch,
                known: self.disk_names(),
            }
        })?;
        let cache = cache_dir()?;
        let text = self
            .read_manifest(&cache)
            .ok_or_else(|| GuestsError::NoDisks {
                arch: self.arch,
                script: self.script,
                cache: cache.clone(),
            })?;
        let path = manifest_entry(&text, key)
            .filter(|p| p.exists())
            .ok_or_else(|| GuestsError::DiskGone {
                name: name.to_string(),
                arch: self.arch,
                script: self.script,
                cache: cache.clone(),
            })?;
        Ok(path)
    }

    /// Kernel and initramfs of the named built guest (riscv64: "small", the default,
    /// "debian", "flight", "flight-vector"; x86_64: "small").
    pub fn guest(&self, name: &str) -> Result<(PathBuf, Option<PathBuf>)> {
        let (_, kernel_key, initrd_key) = self
            .guests
            .iter()
            .find(|(n, _, _)| *n == name)
            .ok_or_else(|| GuestsError::UnknownGuest {
                name: name.to_string(),
                arch: self.arch,
                known: self.guest_names(),
            })?;
        let cache = cache_dir()?;
        let manifest = cache.join(self.manifest);
        let text = self.guests_manifest(&cache)?;
        let get = |key: &str| manifest_entry(&text, key);
        let stale = || GuestsError::Incomplete {
            manifest: manifest.clone(),
            script: self.script,
        };
        let kernel = get(kernel_key).ok_or_else(stale)?;
        let initrd = match initrd_key {
            Some(key) => Some(get(key).ok_or_else(stale)?),
            None => None,
        };
        if !kernel.exists() || initrd.as_ref().is_some_and(|i| !i.exists()) {
            return Err(GuestsError::GuestGone {
                name: name.to_string(),
                arch: self.arch,
                script: self.script,
                cache,
            }
            .into());
        }
        Ok((kernel, initrd))
    }

    /// What a machine that names built guest `name` boots: the guest's kernel, and its
    /// initramfs unless the machine has a root disk (then the kernel boots from the disk);
    /// an explicit `initrd` wins.
    pub fn boot_files(
        &self,
        name: &str,
        initrd: Option<&PathBuf>,
        has_disk: bool,
    ) -> Result<(PathBuf, Option<PathBuf>)> {
        let (kernel, initramfs) = self.guest(name)?;
        let initrd = match (initrd, has_disk) {
            (Some(given), _) => Some(given.clone()),
            (None, true) => None,
            (None, false) => initramfs,
        };
        Ok((kernel, initrd))
    }

    /// The manifest's text, when there is one.
    fn read_manifest(&self, cache: &Path) -> Option<String> {
        std::fs::read_to_string(cache.join(self.manifest)).ok()
    }

    /// The manifest's text, or the error that says no guest is built.
    fn guests_manifest(&self, cache: &Path) -> Result<String> {
        self.read_manifest(cache).ok_or_else(|| {
            GuestsError::NoGuests {
                arch: self.arch,
                script: self.script,
                minutes: self.minutes,
                cache: cache.to_path_buf(),
            }
            .into()
        })
    }
}

/// The initramfs segment that runs imported container images
/// (`images/riscv64-image-runtime.sh`).
pub fn image_runtime() -> Result<PathBuf> {
    let cache = cache_dir()?;
    let text = RISCV64.guests_manifest(&cache)?;
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
        manifest: cache.join(RISCV64.manifest),
        script: RISCV64.script,
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

/// The path the manifest's `KEY=path` line gives.
fn manifest_entry(text: &str, key: &str) -> Option<PathBuf> {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
        .map(|v| PathBuf::from(v.trim()))
}
