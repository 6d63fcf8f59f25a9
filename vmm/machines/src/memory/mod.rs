//! Guest memory: one anonymous mapping per run, addressed from guest-physical 0; a
//! restored run's is a private view of its snapshot's pages ([`map_private`]), or of a
//! guided exploration's moment's layers ([`layers`]).

pub mod layers;
mod pagemap;

use crate::error::{MemoryError, Result};
use vm_memory::{GuestAddress, GuestMemoryMmap};

/// Guest page size: the unit of snapshot memory images.
pub const PAGE: u64 = 4096;

/// The guest memory type every part of wio uses.
pub type GuestMem = GuestMemoryMmap<()>;

/// Allocates `size` bytes of zeroed guest memory starting at guest-physical `base`.
pub fn allocate(base: u64, size: u64) -> Result<GuestMem> {
    let len = usize::try_from(size).map_err(|_| MemoryError::TooLarge { size })?;
    GuestMem::from_ranges(&[(GuestAddress(base), len)]).map_err(|source| {
        MemoryError::Allocate {
            mib: size >> 20,
            source,
        }
        .into()
    })
}

/// A memfd of `size` bytes holding `runs` (first page, bytes) and zeros elsewhere.
pub fn snapshot_memfd(size: u64, runs: &[(u64, Vec<u8>)]) -> Result<std::fs::File> {
    use nix::sys::memfd::{memfd_create, MFdFlags};
    use std::os::unix::fs::FileExt;
    let io = |source| MemoryError::Hold {
        mib: size >> 20,
        source,
    };
    let file = std::fs::File::from(
        memfd_create(c"wio-guest-memory", MFdFlags::MFD_CLOEXEC)
            .map_err(|e| io(std::io::Error::from(e)))?,
    );
    file.set_len(size).map_err(io)?;
    for (first, bytes) in runs {
        file.write_all_at(bytes, first * PAGE).map_err(io)?;
    }
    Ok(file)
}

/// Maps `file` (a memfd of `size` bytes) privately as guest memory at `base`: writes
/// go to this mapping's own pages, never to the file.
///
/// Only the file's data extents are mapped from it; its holes (the snapshot's zero pages)
/// are anonymous memory. A private mapping of a memfd hole would allocate the page *in
/// the memfd* on the first touch, read or write (shmem fills a hole before it copies), so
/// every branch, and every moment's scan of its parent's memory, would grow the file
/// towards the whole guest RAM: measured, 21 moments of the small guest's 256 MiB grew from
/// 12 MiB to 256 MiB each in a guided exploration. Anonymous holes read as the zero page
/// and are written into the branch's own pages. Costs two `lseek` and one `mmap` per run of
/// data pages.
pub fn map_private(base: u64, size: u64, file: &std::fs::File) -> Result<GuestMem> {
    let extents = data_extents(file, size)?;
    map_views(base, size, &[(file, &extents)])
}

/// Maps `views` (each a memfd of `size` bytes and its data extents, in byte ranges within
/// `size`) privately, one over the other in order, as guest memory at `base`: where
/// several views hold data for a page, the last one's shows; where none does, anonymous
/// memory (see [`map_private`]).
pub fn map_views(
    base: u64,
    size: u64,
    views: &[(&std::fs::File, &[(u64, u64)])],
) -> Result<GuestMem> {
    let region = map_region(base, size, views)?;
    GuestMem::from_regions(vec![region]).map_err(|source| MemoryError::Regions { source }.into())
}

/// [`map_views`]' one region, before it becomes a [`GuestMem`] (views kept for reuse hold
/// their region themselves, see [`layers`]).
pub(crate) fn map_region(
    base: u64,
    size: u64,
    views: &[(&std::fs::File, &[(u64, u64)])],
) -> Result<vm_memory::GuestRegionMmap> {
    use nix::sys::mman::{mmap, MapFlags, ProtFlags};
    use std::num::NonZeroUsize;
    use vm_memory::mmap::MmapRegion;
    use vm_memory::GuestRegionMmap;
    let len = usize::try_from(size).map_err(|_| MemoryError::TooLarge { size })?;
    let mib = size >> 20;
    let region =
        MmapRegion::<()>::new(len).map_err(|source| MemoryError::Reserve { mib, source })?;
    for (file, extents) in views {
        for &(start, end) in extents.iter() {
            assert!(
                start < end && end <= size && start % PAGE == 0 && end % PAGE == 0,
                "extents are whole pages within the memory"
            );
            let map_error = |source| MemoryError::Map { mib, source };
            let offset = i64::try_from(start)
                .map_err(|_| map_error(std::io::Error::other("offset past i64")))?;
            let (Some(at), Some(n)) = (
                NonZeroUsize::new(region.as_ptr() as usize + start as usize),
                NonZeroUsize::new((end - start) as usize),
            ) else {
                unreachable!("a mapped region is not at 0 and extents are not empty");
            };
            // SAFETY: [at, at + n) lies within the region's `len` bytes (asserted above),
            // which this region owns and nothing else maps: MAP_FIXED replaces those of its
            // pages with a private view of the file's same range. The file stays
            // referenced by the mapping; unmapping the region unmaps it too.
            unsafe {
                mmap(
                    Some(at),
                    n,
                    ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                    MapFlags::MAP_PRIVATE | MapFlags::MAP_FIXED | MapFlags::MAP_NORESERVE,
                    *file,
                    offset,
                )
            }
            .map_err(|e| map_error(e.into()))?;
        }
    }
    Ok(GuestRegionMmap::new(region, GuestAddress(base))
        .ok_or(MemoryError::Overflows { base, size })?)
}

/// The byte ranges of `file`'s first `size` bytes that hold data (not holes), page
/// aligned, from `lseek(SEEK_DATA)` and `lseek(SEEK_HOLE)`.
pub(crate) fn data_extents(file: &std::fs::File, size: u64) -> Result<Vec<(u64, u64)>> {
    use nix::errno::Errno;
    use nix::unistd::{lseek, Whence};
    // lseek moves only the file offset, which nothing else of wio uses (reads and writes
    // are positioned).
    let seek = |at: u64, whence: Whence| -> Result<Option<u64>> {
        let error = |source| MemoryError::Extents { source };
        let offset =
            i64::try_from(at).map_err(|_| error(std::io::Error::other("offset past i64")))?;
        match lseek(file, offset, whence) {
            Ok(r) => Ok(Some(r as u64)),
            // No data at or after `at`.
            Err(Errno::ENXIO) => Ok(None),
            Err(e) => Err(error(e.into()).into()),
        }
    };
    let mut out = Vec::new();
    let mut at = 0;
    while at < size {
        let Some(start) = seek(at, Whence::SeekData)? else {
            break;
        };
        if start >= size {
            break;
        }
        let end = seek(start, Whence::SeekHole)?.unwrap_or(size).min(size);
        let start = start / PAGE * PAGE;
        let end = end.div_ceil(PAGE) * PAGE;
        out.push((start, end.min(size)));
        at = end;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use vm_memory::Bytes;

    /// A private map of a sparse memfd reads its data and zeros, writes stay in the map,
    /// and touching the holes (reads and writes) leaves the file as sparse as it was.
    #[test]
    fn a_private_map_keeps_its_memfd_sparse() {
        use std::os::unix::fs::MetadataExt;
        let size = 64 * PAGE;
        let runs = vec![
            (3u64, vec![7u8; 2 * PAGE as usize]),
            (40, vec![9u8; PAGE as usize]),
        ];
        let file = snapshot_memfd(size, &runs).unwrap();
        assert_eq!(
            data_extents(&file, size).unwrap(),
            vec![(3 * PAGE, 5 * PAGE), (40 * PAGE, 41 * PAGE)]
        );
        let blocks = file.metadata().unwrap().blocks();
        let mem = map_private(0x1000_0000, size, &file).unwrap();
        let at = |page: u64| GuestAddress(0x1000_0000 + page * PAGE);
        let mut b = [0u8; 1];
        for page in 0..64 {
            mem.read_slice(&mut b, at(page)).unwrap();
            let want = match page {
                3 | 4 => 7,
                40 => 9,
                _ => 0,
            };
            assert_eq!(b[0], want, "page {page}");
        }
        for page in [0, 3, 20, 40, 63] {
            mem.write_slice(&[1], at(page)).unwrap();
            mem.read_slice(&mut b, at(page)).unwrap();
            assert_eq!(b[0], 1);
        }
        assert_eq!(file.metadata().unwrap().blocks(), blocks, "the memfd grew");
        let mut f = [0u8; 1];
        std::os::unix::fs::FileExt::read_exact_at(&file, &mut f, 3 * PAGE).unwrap();
        assert_eq!(f[0], 7, "writes never reach the file");
        // A second map of the same file sees the file, not the first map's writes.
        let again = map_private(0x1000_0000, size, &file).unwrap();
        again.read_slice(&mut b, at(20)).unwrap();
        assert_eq!(b[0], 0);
    }
}
