//! CPU engines: what runs guest instructions. Every engine (x86-64 on KVM,
//! and later the RV64GC interpreter) implements [`CpuEngine`], so the run
//! loop, devices, clock and trace do not care which one is underneath.

pub mod host;
pub mod kvm;
mod watchdog;

use crate::error::Result;

/// The machine side of an exit: the engine forwards guest I/O here.
pub trait ExitHandler {
    /// The guest reads `data.len()` bytes from I/O port `port`; fill `data`.
    fn pio_read(&mut self, port: u16, data: &mut [u8]);
    /// The guest writes `data` to I/O port `port`.
    fn pio_write(&mut self, port: u16, data: &[u8]);
    /// The guest reads `data.len()` bytes at MMIO address `addr`; fill `data`.
    fn mmio_read(&mut self, addr: u64, data: &mut [u8]);
    /// The guest writes `data` at MMIO address `addr`.
    fn mmio_write(&mut self, addr: u64, data: &[u8]);
}

/// Why the engine returned to the run loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// A port I/O access, already handled through the [`ExitHandler`].
    PortIo,
    /// An MMIO access, already handled through the [`ExitHandler`].
    Mmio,
    /// The guest executed HLT (or WFI): it waits for an interrupt.
    Halt,
    /// The guest opened an interrupt window that the run loop asked for.
    InterruptWindow,
    /// The guest shut down (x86: triple fault).
    Shutdown,
    /// The watchdog stopped a guest that ran too long without an exit; holds wall milliseconds.
    Stalled(u64),
    /// The engine stopped on something it cannot handle; the text says what.
    Crash(String),
}

/// A CPU engine: runs the guest until its next exit.
pub trait CpuEngine {
    /// Runs the guest until the next exit, forwarding I/O to `io`.
    fn run(&mut self, io: &mut dyn ExitHandler) -> Result<Exit>;
    /// Whether an external interrupt can be injected right now (interrupts enabled, no shadow).
    fn interrupt_ready(&mut self) -> bool;
    /// Injects external interrupt `vector`; only valid when [`CpuEngine::interrupt_ready`] holds.
    fn inject_interrupt(&mut self, vector: u8) -> Result<()>;
    /// Asks for (or stops asking for) an exit as soon as the guest can take an interrupt.
    fn request_interrupt_window(&mut self, wanted: bool);
    /// The guest's program counter, for error messages.
    fn program_counter(&mut self) -> Option<u64>;
}
