//! Devices of the riscv64 machine that x86 does not have.

pub mod edac;
pub mod flight_io;
pub mod goldfish_rtc;
pub mod plic;
pub mod sdk_port;
