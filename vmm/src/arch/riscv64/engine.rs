//! The RISC-V engine: wio's RV64GC interpreter (crate `wio-riscv`) behind the
//! same [`CpuEngine`] trait as KVM. Its virtual time is the hart's cycle count,
//! so [`CpuEngine::set_deadline`] stops it on an exact instruction.

use super::clock;
use crate::engine::{CpuEngine, Exit, ExitHandler};
use crate::error::Result;
use wio_clock::{InstructionClock, VirtualTime};
use wio_riscv::{Bus, Hart, Stop};

/// The interpreter as an engine.
pub struct RiscvEngine {
    /// The hart (public: the machine serves SBI calls and idles it).
    pub hart: Hart,
    /// The machine's clock: converts the hart's cycles to virtual time and back.
    pub clock: InstructionClock,
    until_cycles: u64,
}

impl RiscvEngine {
    /// Wraps a hart that is ready to run, its cycles read through `clock`.
    pub fn new(hart: Hart, clock: InstructionClock) -> RiscvEngine {
        RiscvEngine {
            hart,
            clock,
            until_cycles: 0,
        }
    }

    /// Virtual time now.
    pub fn now(&self) -> VirtualTime {
        clock::now(&self.clock, &self.hart)
    }
}

/// Presents an [`ExitHandler`] as the hart's [`Bus`].
struct BusAdapter<'a> {
    io: &'a mut dyn ExitHandler,
    clock: InstructionClock,
}

impl Bus for BusAdapter<'_> {
    fn mmio_read(&mut self, addr: u64, size: u8, cycles: u64) -> Option<u64> {
        if !self.io.mmio_claims(addr) {
            return None;
        }
        self.io.set_time(self.clock.time_at(cycles).as_ns());
        let mut buf = [0u8; 8];
        let n = usize::from(size.min(8));
        self.io.mmio_read(addr, &mut buf[..n]);
        Some(u64::from_le_bytes(buf))
    }

    fn mmio_write(&mut self, addr: u64, size: u8, value: u64, cycles: u64) -> bool {
        if !self.io.mmio_claims(addr) {
            return false;
        }
        self.io.set_time(self.clock.time_at(cycles).as_ns());
        let n = usize::from(size.min(8));
        self.io.mmio_write(addr, &value.to_le_bytes()[..n]);
        true
    }

    fn external_interrupt(&self) -> bool {
        self.io.external_interrupt()
    }

    fn next_event_cycle(&self) -> u64 {
        self.clock
            .count_at_or_after(VirtualTime::from_ns(self.io.next_event_ns()))
    }
}

impl CpuEngine for RiscvEngine {
    fn run(&mut self, io: &mut dyn ExitHandler) -> Result<Exit> {
        let mut bus = BusAdapter {
            io,
            clock: self.clock,
        };
        Ok(match self.hart.run(&mut bus, self.until_cycles) {
            Stop::Budget => Exit::Budget,
            Stop::Wfi => Exit::Halt,
            Stop::SbiCall => Exit::Hypercall,
        })
    }

    fn set_deadline(&mut self, until_ns: u64) {
        self.until_cycles = self.clock.count_before(VirtualTime::from_ns(until_ns));
    }

    fn program_counter(&mut self) -> Option<u64> {
        Some(self.hart.pc)
    }
}
