//! `wio-riscv`: a deterministic RV64IMAFDC (RV64GC, optionally with Zba/Zbb/Zbc/Zbs) interpreter with M/S/U
//! modes and Sv39, the RISC-V CPU engine of wio. Its clock is its retired
//! instruction count, so interrupts land on exact instruction boundaries. Hot
//! blocks are compiled to x86-64 code that behaves exactly like the interpreter
//! (see `jit`).
//!
//! The crate knows nothing of devices beyond the [`Bus`] trait: the machine
//! around it (UART, PLIC, virtio, SBI) lives in the `wio` binary.

pub(crate) mod bitmanip;
pub mod bus;
pub mod clint;
mod clock;
pub mod coverage;
pub mod csr;
pub mod debug;
pub mod ecc;
pub(crate) mod exec;
pub mod fpu;
pub mod hart;
mod icache;
pub mod isa;
mod jit;
pub mod mmu;
pub mod pmp;
mod predecode;
pub mod ram;
pub mod rvc;
pub mod state;
pub mod stuck;
mod trap;
pub mod vector;

pub use bus::{Bus, NoDevices};
pub use coverage::Coverage;
pub use csr::Priv;
pub use ecc::MemoryError;
pub use hart::Hart;
pub use isa::{Extension, Isa, IsaError};
pub use ram::Ram;
pub use state::{CodeCacheState, HartState, PreparedHart, SavedBlock, StateError};
pub use trap::{Stop, Trap};
pub use vector::VectorState;
#[cfg(test)]
mod tests;
