//! The errors of the virtio devices: a guest handing a device something malformed
//! ([`DeviceError`], [`RequestError`]), or a saved state that does not fit the device
//! ([`DeviceError`], [`DiskStateError`]). A leaf module: every device and the transport
//! use it, it uses none of them.

/// A device could not serve a queue (the guest gave it something malformed), or a
/// device's saved state does not fit the device.
///
/// The message of an error met while serving the guest becomes the transport's
/// [`last_error`](crate::MmioTransport::last_error), which the machine writes into the
/// hash-chained trace: the texts are part of the determinism contract and must not change.
/// For the same reason the lower-level error a variant wraps (`error` fields) is part of its
/// message, and is not also returned by [`std::error::Error::source`].
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// A descriptor chain has more than [`MAX_CHAIN`](crate::device::MAX_CHAIN) descriptors.
    #[error("descriptor chain {head} is longer than {max}")]
    ChainTooLong {
        /// Head descriptor index of the chain.
        head: u16,
        /// The limit ([`MAX_CHAIN`](crate::device::MAX_CHAIN)).
        max: usize,
    },
    /// A chain has a buffer whose direction does not suit the request: the device would
    /// have to write a device-readable buffer or read a device-writable one.
    #[error(
        "{device}: {chain} {head} has a device-{} buffer",
        if *.writable { "writable" } else { "readable" }
    )]
    BufferDirection {
        /// The device ("virtio-rng", "virtio-net").
        device: &'static str,
        /// What the chain is ("descriptor chain", "receive chain", "transmit chain").
        chain: &'static str,
        /// Head descriptor index of the chain.
        head: u16,
        /// Whether the offending buffer is device-writable (else device-readable).
        writable: bool,
    },
    /// A buffer of a chain is not (entirely) in guest memory.
    #[error("{device}: {buffer} at {addr:#x}: {error}")]
    GuestMemory {
        /// The device ("virtio-rng", "virtio-net").
        device: &'static str,
        /// Which buffer ("buffer", "receive buffer", "transmit buffer").
        buffer: &'static str,
        /// Guest-physical address of the buffer.
        addr: u64,
        /// What guest memory said.
        error: vm_memory::GuestMemoryError,
    },
    /// A virtio-blk request is malformed.
    #[error("virtio-blk: request {head}: {problem}")]
    BlockRequest {
        /// Head descriptor index of the request.
        head: u16,
        /// What is wrong with it.
        problem: RequestError,
    },
    /// The guest completed a request on virtio-net's receive queue (only transmit
    /// requests complete; receive buffers are filled by the link).
    #[error("virtio-net: completion on the receive queue")]
    NetReceiveCompletion,
    /// A virtio-console completion on a queue the device fills itself (receive queues
    /// are filled by the device, not completed).
    #[error("virtio-console: completion on queue {queue}, which is not a transmit queue")]
    ConsoleReceiveCompletion {
        /// The queue.
        queue: usize,
    },
    /// A saved device state holds more than the device's bounds allow.
    #[error("saved {device} state is beyond the device's bounds")]
    StateBounds {
        /// The device.
        device: &'static str,
    },
    /// A virtio-net transmit chain is larger than the largest frame plus its header.
    #[error("virtio-net: transmit chain {head} is larger than {max} bytes")]
    FrameTooLarge {
        /// Head descriptor index of the chain.
        head: u16,
        /// The largest frame accepted ([`crate::net::MAX_FRAME`]).
        max: usize,
    },
    /// A virtio-net transmit chain is too short to hold the header and an Ethernet header.
    #[error("virtio-net: transmit chain {head} holds no Ethernet frame")]
    NoFrame {
        /// Head descriptor index of the chain.
        head: u16,
    },
    /// The network peer's input history outgrew its limit, so the device cannot be saved.
    #[error(
        "virtio-net: the network peer's history outgrew {max} calls; a run this chatty cannot be snapshotted"
    )]
    HistoryOverflow {
        /// The limit ([`crate::net::stack::MAX_HISTORY`]).
        max: usize,
    },
    /// The network peer serves a host link: its state is the host's, not the device's.
    #[error(
        "virtio-net: a single machine with a host link (--net host) cannot be snapshotted; a world's can (wio sim)"
    )]
    ServingApp,
    /// A device of a kind the snapshot registry (`state.rs`) does not know.
    #[error("a virtio device of type {device_type} cannot be snapshotted")]
    NotSnapshottable {
        /// Its virtio device type.
        device_type: u32,
    },
    /// A saved device state is of another kind of device than the one loading it (a
    /// snapshot's slot holds another device than this machine's).
    #[error("saved state is of a {saved} device, this is a {here} device")]
    StateKind {
        /// The device loading the state ("virtio-rng", "virtio-blk", ...).
        here: &'static str,
        /// The device the state was saved from (see [`crate::DeviceState::kind`]).
        saved: &'static str,
    },
    /// A saved state holds more of something than the device ever does.
    #[error("saved {device} state exceeds the device's limits: {len} {what}, at most {max}")]
    StateLimit {
        /// The device ("virtio-net").
        device: &'static str,
        /// What is too long ("peer history calls", "waiting frames", "receive buffers").
        what: &'static str,
        /// How many the state holds.
        len: usize,
        /// The device's limit.
        max: usize,
    },
    /// The saved transport is of another device type or has another number of queues.
    #[error(
        "the snapshot has virtio device type {saved_type} with {saved_queues} queues where this machine has type {here_type} with {here_queues}"
    )]
    DeviceMismatch {
        /// Device type in the snapshot.
        saved_type: u32,
        /// Number of queues in the snapshot.
        saved_queues: usize,
        /// Device type of this machine's device.
        here_type: u32,
        /// Number of queues of this machine's device.
        here_queues: usize,
    },
    /// A saved queue has another maximum size than this machine's.
    #[error("saved queue {queue} has another maximum size ({saved}, here {here})")]
    QueueSizeMismatch {
        /// Queue index.
        queue: usize,
        /// Maximum size in the snapshot.
        saved: u16,
        /// Maximum size here.
        here: u16,
    },
    /// A saved queue cannot be rebuilt.
    #[error("saved queue {queue}: {error}")]
    SavedQueue {
        /// Queue index.
        queue: usize,
        /// What the queue crate said.
        error: virtio_queue::Error,
    },
    /// A frame was handed to a network device that has no port (it talks to its own peer).
    #[error(
        "virtio-net: this device has no network port (its machine talks to the built-in peer)"
    )]
    NoPort,
    /// A frame was handed to a network port after the virtual time it should arrive at.
    #[error(
        "virtio-net: a frame due at {at_ns} ns reached the port at {now_ns} ns, after its time"
    )]
    FrameInThePast {
        /// When the frame was due.
        at_ns: u64,
        /// The device's time.
        now_ns: u64,
    },
    /// A frame handed to a network port is not an Ethernet frame of an accepted size.
    #[error("virtio-net: a {len}-byte frame reached the port; frames are 14 to {max} bytes")]
    PortFrameSize {
        /// Its length.
        len: usize,
        /// The largest frame accepted.
        max: usize,
    },
    /// A saved virtio-blk disk overlay does not fit the disk.
    #[error("virtio-blk: {error}")]
    DiskState {
        /// What is wrong with it.
        error: DiskStateError,
    },
}

/// What is wrong with a virtio-blk request (see [`DeviceError::BlockRequest`], which
/// names the request).
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// The chain has no descriptors.
    #[error("empty chain")]
    EmptyChain,
    /// The chain is not a device-readable header of at least 16 bytes, data buffers and a
    /// device-writable status byte.
    #[error("not a header, data and status chain")]
    NotHeaderDataStatus,
    /// A read request has a device-readable data buffer.
    #[error("read into a device-readable buffer")]
    ReadIntoReadable,
    /// A write request has a device-writable data buffer.
    #[error("write from a device-writable buffer")]
    WriteFromWritable,
    /// The request header is not in guest memory.
    #[error("header: {error}")]
    Header {
        /// What guest memory said.
        error: vm_memory::GuestMemoryError,
    },
    /// A data buffer is not in guest memory.
    #[error("buffer at {addr:#x}: {error}")]
    Buffer {
        /// Guest-physical address of the buffer.
        addr: u64,
        /// What guest memory said.
        error: vm_memory::GuestMemoryError,
    },
    /// The GET_ID buffer is not in guest memory.
    #[error("id buffer: {error}")]
    IdBuffer {
        /// What guest memory said.
        error: vm_memory::GuestMemoryError,
    },
    /// The status byte is not in guest memory.
    #[error("status byte: {error}")]
    StatusByte {
        /// What guest memory said.
        error: vm_memory::GuestMemoryError,
    },
}

/// Why a saved overlay does not fit a disk.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiskStateError {
    /// The base image has another length than the one the overlay was saved on.
    #[error("the base image is {here} bytes, the snapshot's was {saved}")]
    BaseLength {
        /// Length of this base image.
        here: u64,
        /// Length of the base image in the snapshot.
        saved: u64,
    },
    /// A saved chunk lies beyond the end of the disk.
    #[error("saved disk chunk {index} is out of range (the disk has {chunks} chunks)")]
    ChunkOutOfRange {
        /// Chunk index.
        index: u64,
        /// Chunks the disk has.
        chunks: u64,
    },
    /// A saved chunk is not [`CHUNK`](crate::block::disk::CHUNK) bytes long.
    #[error("saved disk chunk {index} is torn ({len} bytes, not {chunk})")]
    TornChunk {
        /// Chunk index.
        index: u64,
        /// Its length in bytes.
        len: usize,
        /// The chunk size ([`CHUNK`](crate::block::disk::CHUNK)).
        chunk: u64,
    },
}
