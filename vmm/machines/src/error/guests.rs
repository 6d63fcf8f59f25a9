//! Why a built guest or disk (`--guest NAME`, `disk = "NAME"`) cannot be found.

use std::path::PathBuf;

/// A built guest or root disk that is unknown or not (or no longer) in the cache. `arch`
/// names the architecture's builds (`riscv64`, `x86_64`); `script` is what builds them
/// (`images/build-all-riscv64.sh`, `images/build-all-x86_64.sh`).
#[derive(Debug, thiserror::Error)]
pub enum GuestsError {
    /// No built disk has that name.
    #[error("unknown built disk {name:?}; built {arch} disks: {known} (or give a path)")]
    UnknownDisk {
        /// The name asked for.
        name: String,
        /// The architecture.
        arch: &'static str,
        /// The names there are.
        known: String,
    },
    /// No built guest has that name.
    #[error("unknown --guest {name:?}; {arch} guests: {known}")]
    UnknownGuest {
        /// The name asked for.
        name: String,
        /// The architecture.
        arch: &'static str,
        /// The names there are.
        known: String,
    },
    /// Neither WIO_CACHE nor HOME is set.
    #[error("cannot find the wio cache: set WIO_CACHE or HOME")]
    NoCache,
    /// The cache has no manifest: no disk was built.
    #[error("no {arch} disks built in {}: run {script} once", .cache.display())]
    NoDisks {
        /// The architecture.
        arch: &'static str,
        /// What builds them.
        script: &'static str,
        /// The cache folder.
        cache: PathBuf,
    },
    /// The cache has no manifest: no guest was built.
    #[error("no {arch} guests built in {}: run {script} once (about {minutes} minutes; seconds when cached), or pass --kernel FILE [--initrd FILE]", .cache.display())]
    NoGuests {
        /// The architecture.
        arch: &'static str,
        /// What builds them.
        script: &'static str,
        /// About how long the script takes with nothing cached.
        minutes: u32,
        /// The cache folder.
        cache: PathBuf,
    },
    /// The image runtime (what runs an imported image) is not built.
    #[error("the riscv64 image runtime is not built in {}: run images/build-all-riscv64.sh (seconds when the guests are built)", .cache.display())]
    NoImageRuntime {
        /// The cache folder.
        cache: PathBuf,
    },
    /// The manifest names no existing file for the disk.
    #[error("the built {arch} {name} disk is not in {}; re-run {script}", .cache.display())]
    DiskGone {
        /// The disk's name.
        name: String,
        /// The architecture.
        arch: &'static str,
        /// What builds it.
        script: &'static str,
        /// The cache folder.
        cache: PathBuf,
    },
    /// The manifest lacks an entry the guest needs.
    #[error("{} is incomplete; re-run {script}", .manifest.display())]
    Incomplete {
        /// The manifest file.
        manifest: PathBuf,
        /// What writes it.
        script: &'static str,
    },
    /// The guest's files named by the manifest are gone.
    #[error("the cached {arch} {name} guest is gone from {}; re-run {script}", .cache.display())]
    GuestGone {
        /// The guest's name.
        name: String,
        /// The architecture.
        arch: &'static str,
        /// What builds it.
        script: &'static str,
        /// The cache folder.
        cache: PathBuf,
    },
}
