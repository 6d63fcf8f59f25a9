//! Guest memory: one anonymous mapping per run, addressed from guest-physical 0.

use crate::error::{Result, WioError};
use vm_memory::{GuestAddress, GuestMemoryMmap};

/// The guest memory type every part of wio uses.
pub type GuestMem = GuestMemoryMmap<()>;

/// Allocates `size` bytes of zeroed guest memory starting at guest-physical `base`.
pub fn allocate(base: u64, size: u64) -> Result<GuestMem> {
    let len = usize::try_from(size).map_err(|_| {
        WioError::Usage(format!(
            "guest memory of {size} bytes does not fit this host"
        ))
    })?;
    GuestMem::from_ranges(&[(GuestAddress(base), len)]).map_err(|e| {
        WioError::Usage(format!(
            "cannot allocate {} MiB of guest memory: {e}; try a smaller --mem",
            size >> 20
        ))
    })
}
