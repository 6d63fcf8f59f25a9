//! The RISC-V engine: wio's RV64GC interpreter (crate `wio-riscv`) behind the
//! same [`CpuEngine`] trait as KVM. Its virtual time is the hart's cycle count,
//! so [`CpuEngine::set_deadline`] stops it on an exact instruction.

use super::clock;
use crate::engine::{CpuEngine, Exit, ExitHandler};
use crate::error::Result;
use wio_clock::{InstructionClock, VirtualTime};
use wio_riscv::{Bus, Hart, MemoryError, Stop};

/// The interpreter as an engine.
pub struct RiscvEngine {
    /// The hart (public: the machine serves SBI calls and idles it).
    pub hart: Hart,
    /// The machine's clock: converts the hart's cycles to virtual time and back.
    pub clock: InstructionClock,
    until_cycles: u64,
    /// Instructions executed (retired, or trapped) by this engine: a debugger's position
    /// in the run. Idle time (WFI) executes nothing. Not in snapshots: a debugger that
    /// restores its own checkpoint sets it back.
    pub executed: u64,
    /// Stop with [`Exit::Debug`] when [`RiscvEngine::executed`] reaches this.
    pub pause_at: Option<u64>,
    /// Stop with [`Exit::Debug`] at the first instruction boundary where the hart's clock
    /// is at or past this cycle (a debugger seeking a virtual time).
    pub pause_cycle: Option<u64>,
    /// Resuming from a breakpoint: run the instruction under it before checking
    /// breakpoints again (cleared by the next run).
    pub step_over_break: bool,
    /// Whether the last [`Exit::Debug`] was a breakpoint (else the position asked for).
    pub at_breakpoint: bool,
}

impl RiscvEngine {
    /// Wraps a hart that is ready to run, its cycles read through `clock`.
    pub fn new(hart: Hart, clock: InstructionClock) -> RiscvEngine {
        RiscvEngine {
            hart,
            clock,
            until_cycles: 0,
            executed: 0,
            pause_at: None,
            pause_cycle: None,
            step_over_break: false,
            at_breakpoint: false,
        }
    }

    /// Whether the engine is at the position or past the clock cycle a debugger asked
    /// it to stop at.
    fn pause_due(&self) -> bool {
        self.pause_at.is_some_and(|p| self.executed >= p)
            || self.pause_cycle.is_some_and(|c| self.hart.cycles() >= c)
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

    fn memory_error(&mut self, paddr: u64, kind: MemoryError, cycles: u64) {
        self.io.set_time(self.clock.time_at(cycles).as_ns());
        self.io.memory_error(paddr, kind == MemoryError::Corrected);
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
        loop {
            if self.pause_due() {
                self.at_breakpoint = false;
                return Ok(Exit::Debug);
            }
            let mut until = self.until_cycles;
            if let Some(p) = self.pause_at {
                until = until.min(self.hart.cycles().saturating_add(p - self.executed));
            }
            if let Some(c) = self.pause_cycle {
                until = until.min(c);
            }
            // Resuming from a breakpoint: its instruction runs alone, with none set.
            let over = std::mem::take(&mut self.step_over_break)
                && self.hart.breakpoints().binary_search(&self.hart.pc).is_ok();
            let saved = over.then(|| {
                let b = self.hart.breakpoints().to_vec();
                self.hart.set_breakpoints(&[]);
                until = until.min(self.hart.cycles() + 1);
                b
            });
            let before = self.hart.cycles();
            let stop = self.hart.run(&mut bus, until);
            self.executed += self.hart.cycles() - before;
            if let Some(b) = saved {
                self.hart.set_breakpoints(&b);
            }
            return Ok(match stop {
                Stop::Budget => {
                    let deadline = self.until_cycles.min(bus.next_event_cycle());
                    if (over || self.pause_due()) && self.hart.cycles() < deadline {
                        // Stepped over the breakpoint, or at the position asked for: the
                        // loop's top decides.
                        continue;
                    }
                    Exit::Budget
                }
                Stop::Wfi => Exit::Halt,
                Stop::SbiCall => Exit::Hypercall,
                Stop::TimerSet => Exit::TimerSet,
                Stop::Breakpoint => {
                    self.at_breakpoint = true;
                    Exit::Debug
                }
            });
        }
    }

    fn set_deadline(&mut self, until_ns: u64) {
        self.until_cycles = self.clock.count_before(VirtualTime::from_ns(until_ns));
    }

    fn program_counter(&mut self) -> Option<u64> {
        Some(self.hart.pc)
    }
}
