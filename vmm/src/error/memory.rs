//! Why guest memory cannot be had.

/// Guest memory that cannot be allocated, held or mapped on this host.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// The size does not fit the host's address space.
    #[error("guest memory of {size} bytes does not fit this host")]
    TooLarge {
        /// The size asked for (bytes).
        size: u64,
    },
    /// The host refused the allocation.
    #[error("cannot allocate {mib} MiB of guest memory: {source}; try a smaller --mem")]
    Allocate {
        /// The size asked for (MiB).
        mib: u64,
        /// What vm-memory said.
        #[source]
        source: vm_memory::mmap::FromRangesError,
    },
    /// A snapshot's memory could not be written into a memfd.
    #[error("cannot hold {mib} MiB of snapshot memory: {source}")]
    Hold {
        /// The memory's size (MiB).
        mib: u64,
        /// What the host said.
        #[source]
        source: std::io::Error,
    },
    /// The host refused to reserve the region for a snapshot's memory.
    #[error("cannot map {mib} MiB of guest memory: {source}")]
    Reserve {
        /// The memory's size (MiB).
        mib: u64,
        /// What vm-memory said.
        #[source]
        source: vm_memory::mmap::MmapRegionError,
    },
    /// The host would not say which pages of a branch's memory it wrote.
    #[error("cannot read /proc/self/pagemap (the pages a branch wrote): {source}")]
    Pagemap {
        /// What the host said.
        #[source]
        source: std::io::Error,
    },
    /// The host would not say where a memory file holds data.
    #[error("cannot find the data of a guest memory file (lseek SEEK_DATA/SEEK_HOLE): {source}")]
    Extents {
        /// What the host said.
        #[source]
        source: std::io::Error,
    },
    /// Guest memory placed at `base` would pass the end of the address space.
    #[error("guest memory of {size} bytes at {base:#x} passes the end of the address space")]
    Overflows {
        /// Its guest-physical base.
        base: u64,
        /// Its size (bytes).
        size: u64,
    },
    /// vm-memory refused the region list.
    #[error("guest memory regions: {source}")]
    Regions {
        /// What vm-memory said.
        #[source]
        source: vm_memory::region::GuestRegionCollectionError,
    },
    /// The host refused to map a snapshot's memory file into the region.
    #[error("cannot map {mib} MiB of guest memory: {source}")]
    Map {
        /// The memory's size (MiB).
        mib: u64,
        /// What mmap said.
        #[source]
        source: std::io::Error,
    },
}
