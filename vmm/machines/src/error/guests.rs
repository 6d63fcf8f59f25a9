//! Why a built guest or disk (`--guest NAME`, `disk = "NAME"`) cannot be found.

use std::path::PathBuf;

/// A built riscv64 guest or root disk that is unknown or not (or no longer) in the cache.
#[derive(Debug, thiserror::Error)]
pub enum GuestsError {
    /// No built disk has that name.
    #[error("unknown built disk {name:?}; built riscv64 disks: rootfs, redis, python, payments (or give a path)")]
    UnknownDisk {
        /// The name asked for.
        name: String,
    },
    /// No built guest has that name.
    #[error("unknown --guest {name:?}; riscv64 guests: small, debian, flight, flight-vector")]
    UnknownGuest {
        /// The name asked for.
        name: String,
    },
    /// Neither WIO_CACHE nor HOME is set.
    #[error("cannot find the wio cache: set WIO_CACHE or HOME")]
    NoCache,
    /// The cache has no manifest: no disk was built.
    #[error("no riscv64 disks built in {}: run images/build-all-riscv64.sh once", .cache.display())]
    NoDisks {
        /// The cache folder.
        cache: PathBuf,
    },
    /// The cache has no manifest: no guest was built.
    #[error("no riscv64 guests built in {}: run images/build-all-riscv64.sh once (about 7 minutes; seconds when cached), or pass --kernel Image [--initrd FILE]", .cache.display())]
    NoGuests {
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
    #[error("the built {name} disk is not in {}; re-run images/build-all-riscv64.sh", .cache.display())]
    DiskGone {
        /// The disk's name.
        name: String,
        /// The cache folder.
        cache: PathBuf,
    },
    /// The manifest lacks an entry the guest needs.
    #[error("{} is incomplete; re-run images/build-all-riscv64.sh", .manifest.display())]
    Incomplete {
        /// The manifest file.
        manifest: PathBuf,
    },
    /// The guest's files named by the manifest are gone.
    #[error("the cached {name} guest is gone from {}; re-run images/build-all-riscv64.sh", .cache.display())]
    GuestGone {
        /// The guest's name.
        name: String,
        /// The cache folder.
        cache: PathBuf,
    },
}
