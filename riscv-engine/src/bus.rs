//! What the hart sees outside RAM: memory-mapped devices, and the platform's
//! external interrupt line. The machine (in the `wio` binary) implements it.

/// The platform behind the hart.
pub trait Bus {
    /// Reads `size` (1, 2, 4 or 8) bytes at physical `addr` at hart cycle `cycles`;
    /// `None` is an access fault.
    fn mmio_read(&mut self, addr: u64, size: u8, cycles: u64) -> Option<u64>;
    /// Writes `size` bytes at physical `addr` at hart cycle `cycles`; `false` is an access fault.
    fn mmio_write(&mut self, addr: u64, size: u8, value: u64, cycles: u64) -> bool;
    /// Whether the supervisor external interrupt line (from the PLIC) is high.
    fn external_interrupt(&self) -> bool;
    /// The ECC memory controller found an error in the word at physical `paddr` (see
    /// `ecc`) at hart cycle `cycles`: the platform's EDAC reports it.
    fn memory_error(&mut self, _paddr: u64, _kind: crate::ecc::MemoryError, _cycles: u64) {}
    /// The hart cycle at which the machine has a device event due (u64::MAX: none);
    /// [`crate::Hart::run`] returns there so the event fires on time.
    fn next_event_cycle(&self) -> u64 {
        u64::MAX
    }
}

/// A bus with no devices, for tests.
#[derive(Debug, Default)]
pub struct NoDevices;

impl Bus for NoDevices {
    fn mmio_read(&mut self, _addr: u64, _size: u8, _cycles: u64) -> Option<u64> {
        None
    }
    fn mmio_write(&mut self, _addr: u64, _size: u8, _value: u64, _cycles: u64) -> bool {
        false
    }
    fn external_interrupt(&self) -> bool {
        false
    }
}
