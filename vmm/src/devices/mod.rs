//! Platform devices wio emulates in userspace, driven by the virtual clock.

pub mod legacy;
pub mod riscv;
pub mod virtio_slots;
