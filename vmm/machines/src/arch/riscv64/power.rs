//! Node faults on the riscv64 machine: the hart stopped (a pause, or the power off after a
//! crash) while virtual time, device timers and fault events go on, and the boot that
//! follows a crash: fresh memory, the same kernel, initrd and command line, a device tree
//! with a new rng-seed (its own stream per boot), the devices reset and the disk as the
//! power cut left it. Time continues across the boots (the timer counts on), so the
//! trace, the console and the summary cover every boot of the run.

use super::boot::{fdt_rng_seed, hart_on, BootImage};
use super::bus::Power;
use super::clock;
use super::engine::RiscvEngine;
use super::layout;
use super::machine::RvMachine;
use crate::devices::legacy::serial::Uart16550;
use crate::devices::riscv::plic::Plic;
use crate::error::InternalError;
use crate::error::{Result, WioError};
use crate::machine::Stop;
use serde_json::json;
use std::sync::Arc;
use wio_clock::VirtualTime;
use wio_scheduler::RunSeed;

impl RvMachine {
    /// One step of a machine whose hart does not run (paused, off, or about to boot
    /// again): time jumps to the next event (never past `limit`), which fires.
    pub(super) fn step_unpowered(&mut self, limit: VirtualTime) -> Stop {
        if self.bus.power == Power::Booting {
            return match self.reboot() {
                Ok(()) => Stop::Yield,
                Err(e) => Stop::End(Err(e)),
            };
        }
        let clk = self.engine.clock;
        let hart = &mut self.engine.hart;
        let Some(next) = self.bus.events.peek_time() else {
            // The pause or crash that stopped the hart always has its end queued.
            return Stop::End(Err(WioError::Invariant(InternalError::StoppedForGood)));
        };
        let wake = clk.count_at_or_after(VirtualTime::from_ns(next));
        let skipped = clock::idle_until(&clk, hart, wake, limit);
        self.stopped_ns += skipped;
        let now = clock::now(&clk, hart).as_ns();
        super::upsets::fire_due(hart, &mut self.bus, now);
        // At the last cycle at or before the limit with nothing left due: the limit.
        if hart.cycles() >= clk.count_before(limit)
            && self.bus.events.peek_time().is_none_or(|t| t > now)
        {
            return Stop::Limit;
        }
        Stop::Yield
    }

    /// Boots the machine again after a power cut: new zeroed memory, the kernel loaded
    /// anew, the hart's clock where it was, the UART and PLIC reset, the virtio devices on
    /// the new memory (reset at the power cut).
    fn reboot(&mut self) -> Result<()> {
        let image = match &self.image {
            Some(i) => Arc::clone(i),
            None => {
                let i = Arc::new(BootImage::from_meta(&self.meta, self.bus.virtio.len())?);
                self.image = Some(Arc::clone(&i));
                i
            }
        };
        let old = &self.engine.hart;
        let (cycles, instret) = (old.cycles(), old.instret());
        let mem_bytes = self.meta.mem_bytes;
        let mem = crate::memory::allocate(layout::RAM_BASE, mem_bytes)?;
        // New memory is no view of the snapshot's layers.
        self.memory_view = None;
        let mut hart = hart_on(&mem, mem_bytes, 0)?;
        hart.skip_to(cycles);
        self.boots = self.boots.saturating_add(1);
        let rng_seed = fdt_rng_seed(RunSeed(self.seed), self.boots);
        let placement =
            image.load_into(&mut hart, mem_bytes, &rng_seed, self.bus.vmgenid.is_some())?;
        self.instret_before = self.instret_before.saturating_add(instret);
        // The oscillator is the same after the cut: the clock (its drift and anchor) stays.
        self.engine = RiscvEngine::new(hart, self.engine.clock);
        self.bus.uart = Uart16550::default();
        self.bus.plic = Plic::default();
        self.bus.virtio.set_memory(mem);
        self.bus.power = Power::On;
        let now = self.engine.clock.time_at(cycles).as_ns();
        self.console.flush_line(now, &mut self.bus.trace);
        self.bus.trace.event(
            now,
            "boot",
            json!({ "boot": self.boots, "entry": placement.entry, "fdt": placement.fdt_addr }),
        );
        Ok(())
    }
}
