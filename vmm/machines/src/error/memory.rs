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
    /// Something wio places in guest memory at boot (a kernel, an initrd, a device tree,
    /// firmware, a program) lands outside it: wio checked the placement first, so this is
    /// wio's bug.
    #[error("the {what} was placed outside guest memory")]
    Place {
        /// What was placed.
        what: &'static str,
    },
    /// Writing boot data into guest memory failed.
    #[error("cannot write {what} at guest address {addr:#x}: {source}")]
    Write {
        /// What was written.
        what: &'static str,
        /// Where.
        addr: u64,
        /// What vm-memory said.
        #[source]
        source: vm_memory::GuestMemoryError,
    },
    /// Guest RAM has no host mapping where the machine expects it.
    #[error("guest RAM has no host address: {source}")]
    HostAddress {
        /// What vm-memory said.
        #[source]
        source: vm_memory::GuestMemoryError,
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
