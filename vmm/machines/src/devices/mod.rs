//! Platform devices wio emulates in userspace, driven by the virtual clock.
//!
//! `legacy/` holds the PC devices of x86-64 (and the 16550 UART both machines use),
//! `riscv/` the PLIC and Goldfish RTC of the riscv64 machine, `virtio_slots` the
//! virtio-mmio slots both machines share, `vmgenid` the VM generation ID both announce.

pub mod legacy;
pub mod riscv;
pub mod virtio_slots;
pub mod vmgenid;

/// Why a saved device state cannot be loaded into this machine's devices (a damaged or
/// foreign snapshot), or a device's state cannot be saved.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The snapshot has another number of virtio devices than this machine.
    #[error("{saved} virtio devices saved, {here} attached here")]
    SlotCount {
        /// Devices in the snapshot.
        saved: usize,
        /// Devices of this machine.
        here: usize,
    },
    /// One virtio device refused its state, or could not save it.
    #[error("virtio slot {slot}: {source}")]
    Slot {
        /// The slot.
        slot: usize,
        /// What the device said.
        source: wio_virtio_devices::DeviceError,
    },
    /// A timed device event names a slot that holds no device.
    #[error("a device event names an empty virtio slot")]
    EmptySlot,
    /// The saved event queue is inconsistent.
    #[error("bad device event queue: {0}")]
    Events(#[from] wio_scheduler::SchedulerError),
    /// A timed event names a fault the saved plan does not have.
    #[error("an event names fault {index}, which the saved fault plan does not have")]
    UnknownFault {
        /// The fault's index.
        index: usize,
    },
    /// The CMOS RTC's saved RAM has the wrong size.
    #[error("RTC RAM is {len} bytes, not 128")]
    RtcRam {
        /// Saved length.
        len: usize,
    },
    /// The UART's saved receive FIFO is longer than the 16550's.
    #[error("saved UART receive FIFO holds {len} bytes; a 16550 holds at most {max}")]
    UartFifo {
        /// Saved length.
        len: usize,
        /// The FIFO's size.
        max: usize,
    },
    /// A saved register holds a value the device never holds.
    #[error("saved {device} register {register} holds {value:#x}, which the device never does")]
    Register {
        /// The device.
        device: &'static str,
        /// The register.
        register: &'static str,
        /// The saved value.
        value: u64,
    },
    /// A saved buffer is longer than the device ever keeps.
    #[error("saved {device} state holds {len} {what}; the device keeps at most {max}")]
    Bounds {
        /// The device.
        device: &'static str,
        /// What is too long.
        what: &'static str,
        /// Saved length.
        len: usize,
        /// The device's bound.
        max: usize,
    },
}

/// Refuses `value` in `register` of `device` unless `ok`.
pub(crate) fn check_register(
    device: &'static str,
    register: &'static str,
    value: u64,
    ok: bool,
) -> Result<(), StateError> {
    if ok {
        Ok(())
    } else {
        Err(StateError::Register {
            device,
            register,
            value,
        })
    }
}
