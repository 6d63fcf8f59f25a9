//! Guest memory: one anonymous mapping per run, addressed from guest-physical 0.

use crate::error::{Result, WioError};
use vm_memory::{GuestAddress, GuestMemoryMmap};

/// Guest page size: the unit of snapshot memory images.
pub const PAGE: u64 = 4096;

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

/// A memfd of `size` bytes holding `runs` (first page, bytes) and zeros elsewhere.
pub fn snapshot_memfd(size: u64, runs: &[(u64, Vec<u8>)]) -> Result<std::fs::File> {
    use std::os::fd::FromRawFd;
    use std::os::unix::fs::FileExt;
    // SAFETY: memfd_create takes a NUL-terminated name and flags; the returned descriptor
    // (checked below) is owned by the File from here on.
    let fd = unsafe { libc::memfd_create(c"wio-guest-memory".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(WioError::Internal(format!(
            "memfd_create: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: `fd` is a fresh descriptor nothing else owns.
    let file = unsafe { std::fs::File::from_raw_fd(fd) };
    let io = |e: std::io::Error| {
        WioError::Usage(format!(
            "cannot hold {} MiB of snapshot memory: {e}",
            size >> 20
        ))
    };
    file.set_len(size).map_err(io)?;
    for (first, bytes) in runs {
        file.write_all_at(bytes, first * PAGE).map_err(io)?;
    }
    Ok(file)
}

/// Maps `file` (a memfd of `size` bytes) privately as guest memory at `base`: writes
/// go to this mapping's own pages, never to the file.
pub fn map_private(base: u64, size: u64, file: &std::fs::File) -> Result<GuestMem> {
    use vm_memory::mmap::MmapRegionBuilder;
    use vm_memory::{FileOffset, GuestRegionMmap};
    let len = usize::try_from(size).map_err(|_| {
        WioError::Usage(format!("{size} bytes of guest memory do not fit this host"))
    })?;
    let clone = file
        .try_clone()
        .map_err(|e| WioError::Internal(format!("memfd dup: {e}")))?;
    let region = MmapRegionBuilder::new(len)
        .with_file_offset(FileOffset::new(clone, 0))
        .with_mmap_prot(libc::PROT_READ | libc::PROT_WRITE)
        .with_mmap_flags(libc::MAP_PRIVATE | libc::MAP_NORESERVE)
        .build()
        .map_err(|e| {
            WioError::Usage(format!(
                "cannot map {} MiB of guest memory: {e}",
                size >> 20
            ))
        })?;
    let region = GuestRegionMmap::new(region, GuestAddress(base))
        .ok_or_else(|| WioError::Internal("guest memory region overflows".into()))?;
    GuestMem::from_regions(vec![region])
        .map_err(|e| WioError::Internal(format!("guest memory: {e}")))
}
