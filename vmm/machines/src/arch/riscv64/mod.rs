//! The riscv64 machine on wio's interpreter: its memory map, device tree and kernel
//! loading (as an SBI implementation would hand them to the kernel), the hart's engine
//! and clock, the bus of devices, SBI, the run loop and snapshots.

pub mod boot;
pub mod bus;
pub mod clock;
mod cold_boot;
pub mod debug;
pub mod engine;
pub mod fdt;
pub mod firmware;
pub mod gdb;
mod gdb_xml;
pub mod layout;
pub mod machine;
pub mod power;
pub mod sbi;
pub mod snapshot;
pub mod stall;
pub mod upsets;

pub use machine::{RvMachine, DEFAULT_CMDLINE};
pub use snapshot::RvLoaded;
/// The hart's optional extensions (`--isa`, a world node's `isa`), as the engine defines them.
pub use wio_riscv::{Isa, IsaError};
