//! What a virtio device implements, independent of the transport.

use virtio_queue::Queue;

/// Guest memory as devices see it.
pub type GuestMem = vm_memory::GuestMemoryMmap<()>;

/// A device could not serve a queue: the guest gave it something malformed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceError(pub String);

impl std::fmt::Display for DeviceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DeviceError {}

/// A virtio device behind a transport.
pub trait VirtioDevice {
    /// The virtio device ID (4 = entropy).
    fn device_type(&self) -> u32;
    /// Maximum size of each of the device's queues.
    fn queue_max_sizes(&self) -> &[u16];
    /// Feature bits the device offers (including [`crate::VIRTIO_F_VERSION_1`]).
    fn features(&self) -> u64;
    /// Reads the device-specific configuration space.
    fn read_config(&self, _offset: u64, data: &mut [u8]) {
        data.fill(0);
    }
    /// The guest notified `queue`: virtual ns until the device serves it (from its PRNG).
    fn service_delay_ns(&mut self, queue: usize) -> u64;
    /// Serves the available buffers of `queue`; returns whether used buffers were added.
    fn serve(&mut self, queue: usize, q: &mut Queue, mem: &GuestMem) -> Result<bool, DeviceError>;
    /// Forgets per-driver state (the guest reset the device).
    fn reset(&mut self) {}
}
