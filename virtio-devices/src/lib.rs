//! virtio-mmio transport and the virtio devices of wio.
//!
//! Devices never look at host time: when the guest notifies a queue, the
//! device says (from its own seeded PRNG stream) how long the request takes,
//! the machine schedules the completion at that virtual time, and only then
//! does the device consume the buffers and raise its interrupt. Completion
//! order is therefore a function of the seed, identically on every engine.
//!
//! Devices: block (virtio-blk), network (virtio-net on a simulated link to a
//! deterministic peer), entropy (virtio-rng) and the console (virtio-console: the
//! guest's channel to wio).
//!
//! Snapshots: each device saves its state as a typed [`DeviceState`] and its transport as
//! a [`TransportState`] around it (see [`state`]); the machine encodes them in its
//! snapshot file, and a state loads only into a device of its own kind.

#![forbid(unsafe_code)]

pub mod block;
pub mod codec;
pub mod console;
pub mod device;
pub mod error;
pub mod mmio;
pub mod net;
pub mod rng;
pub mod state;

pub use block::{
    Block, BlockState, Disk, DiskError, DiskFault, DiskOp, DiskStateError, Overlay, Unflushed,
};
pub use console::{Console, ConsoleState};
pub use device::{DeviceError, GuestMem, Pending, Request, Segment, VirtioDevice};
pub use mmio::{MmioTransport, TransportState};
pub use net::{Direction, Frame, Link, Net, NetFault, NetState};
pub use rng::{Rng, RngState};
pub use state::DeviceState;

/// The virtio-mmio transport version wio implements (the "modern" layout).
pub const VIRTIO_MMIO_VERSION: u32 = 2;

/// The magic value every virtio-mmio device reports at offset 0 ("virt").
pub const VIRTIO_MMIO_MAGIC: u32 = 0x7472_6976;

/// Feature bit: the device follows virtio 1.0+ (required by wio's modern transport).
pub const VIRTIO_F_VERSION_1: u64 = 1 << 32;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_spells_virt() {
        assert_eq!(&VIRTIO_MMIO_MAGIC.to_le_bytes(), b"virt");
    }
}
