//! CPU engines: what runs guest instructions. Both engines (x86-64 on KVM in
//! `arch/x86_64/kvm.rs`, the RV64GC interpreter in `arch/riscv64/engine.rs`) implement
//! [`CpuEngine`] and forward guest I/O to an [`ExitHandler`] (the machine's devices).

use crate::error::{EngineCrash, Result};

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
    /// Whether a device answers at `addr`; an access elsewhere is an access fault on engines
    /// that model them (RISC-V). KVM reports every unbacked access, so the default claims all.
    fn mmio_claims(&self, _addr: u64) -> bool {
        true
    }
    /// The level of the external interrupt line an engine samples itself (RISC-V: the PLIC's
    /// supervisor context). x86 interrupts are injected by the run loop instead.
    fn external_interrupt(&self) -> bool {
        false
    }
    /// Engines that keep virtual time themselves (the interpreter) report it before each access.
    fn set_time(&mut self, _now_ns: u64) {}
    /// Virtual time of the machine's next device event (u64::MAX: none); engines that can stop
    /// on an exact instruction return there, even if the event was scheduled during the run.
    fn next_event_ns(&self) -> u64 {
        u64::MAX
    }

    /// The ECC memory controller found an error in the word at `paddr` (`corrected`:
    /// a single-bit error fixed on the fly; else an uncorrectable one, whose access
    /// faulted). Machines with an EDAC unit report it there.
    fn memory_error(&mut self, _paddr: u64, _corrected: bool) {}
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
    /// The engine stopped on something it cannot handle.
    Crash(EngineCrash),
    /// The engine reached the deadline set with [`CpuEngine::set_deadline`] (interpreters).
    Budget,
    /// The guest called the hypervisor (RISC-V: an SBI ecall; the pc is already past it).
    Hypercall,
    /// The guest set its timer through a device the engine models itself (RISC-V: the
    /// CLINT's mtimecmp of an M-mode guest); the machine may add its seeded latency.
    TimerSet,
    /// The engine stopped for a debugger (a breakpoint, or the instruction position it
    /// was asked to stop at) between two instructions; running it again goes on exactly
    /// as if it had not stopped.
    Debug,
}

/// A CPU engine: runs the guest until its next exit.
pub trait CpuEngine {
    /// Runs the guest until the next exit, forwarding I/O to `io`.
    fn run(&mut self, io: &mut dyn ExitHandler) -> Result<Exit>;
    /// Whether an external interrupt can be injected right now (interrupts enabled, no shadow).
    /// Engines whose guests sample interrupt lines themselves (RISC-V) never take injections.
    fn interrupt_ready(&mut self) -> bool {
        false
    }
    /// Whether the guest, stopped at a halt, halted with interrupts disabled: then no
    /// interrupt wio delivers can wake it (wio sends no NMI), which is how Linux powers
    /// an x86 machine off when it has no ACPI (`machine_halt`: interrupts off, HLT).
    fn halted_for_good(&mut self) -> bool {
        false
    }
    /// Injects external interrupt `vector`; only valid when [`CpuEngine::interrupt_ready`] holds.
    fn inject_interrupt(&mut self, vector: u8) -> Result<()> {
        Err(crate::error::InternalError::NoInjection { vector }.into())
    }
    /// Asks for (or stops asking for) an exit as soon as the guest can take an interrupt.
    fn request_interrupt_window(&mut self, _wanted: bool) {}
    /// Sets the virtual time at which [`CpuEngine::run`] must return [`Exit::Budget`].
    /// Engines that count instructions stop exactly there; KVM cannot and ignores it.
    fn set_deadline(&mut self, _until_ns: u64) {}
    /// The guest's program counter, for error messages.
    fn program_counter(&mut self) -> Option<u64>;
}
