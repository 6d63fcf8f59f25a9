//! Builds machines: picks the architecture a run asks for (or the one a snapshot was
//! taken on) and hands back a [`Machine`] or a [`LoadedSnapshot`]. The only module
//! that names both architectures; everything above it speaks to the traits.

use crate::arch::riscv64::{RvLoaded, RvMachine};
use crate::arch::x86_64::{machine as x86_64, X86Loaded};
use crate::error::{Result, WioError};
use crate::machine::{Arch, LoadedSnapshot, Machine, RunConfig};
use crate::snapshot::Snapshot;
use std::path::Path;
use std::time::Instant;

/// A new machine of `arch` as `cfg` describes it, booting its kernel.
pub fn boot(arch: Arch, cfg: &RunConfig, wall: Instant) -> Result<Box<dyn Machine>> {
    Ok(match arch {
        Arch::X86_64 => Box::new(x86_64::boot(cfg, wall)?),
        Arch::Riscv64 => Box::new(RvMachine::boot(cfg, wall)?),
    })
}

/// The architecture of the snapshot at `path` (its header and metadata only).
pub fn snapshot_arch(path: &Path) -> Result<Arch> {
    let meta = Snapshot::peek_meta(path)?;
    Arch::from_name(&meta.arch).ok_or_else(|| WioError::ArtifactFormat {
        what: "snapshot",
        path: path.to_path_buf(),
        reason: format!(
            "is of an architecture this wio does not know ({:?})",
            meta.arch
        ),
    })
}

/// Reads and checks the snapshot at `path` for restores; `cfg.disk`, if given, must be
/// its base disk image.
pub fn load(path: &Path, cfg: &RunConfig) -> Result<Box<dyn LoadedSnapshot>> {
    Ok(match snapshot_arch(path)? {
        Arch::X86_64 => Box::new(X86Loaded::load(path, cfg)?),
        Arch::Riscv64 => Box::new(RvLoaded::load(path, cfg)?),
    })
}

/// The machine a run starts with: restored from `cfg.from`, or booted.
pub fn start(arch: Arch, cfg: &RunConfig, wall: Instant) -> Result<Box<dyn Machine>> {
    match &cfg.from {
        Some(path) => load(path, cfg)?.restore(cfg, wall),
        None => boot(arch, cfg, wall),
    }
}
