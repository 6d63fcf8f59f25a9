//! Where a riscv64 machine's CPU stalls (seeded CPU-timing noise: see
//! `machine::noise::Stalls`). The run loop stops the hart at the instruction its next stall
//! comes after; a stalled hart executes nothing while virtual time goes on, device events
//! fire at their times and the timer falls due, as on a CPU that lost its time slice to
//! something else. Every stall is folded into the trace hash (time, length).

use super::clock;
use super::machine::RvMachine;
use super::upsets::fire_due;
use crate::machine::Stop;
use crate::trace::fold;
use wio_clock::VirtualTime;

impl RvMachine {
    /// Instructions the machine has retired since its first boot (across power cuts).
    pub(super) fn instructions(&self) -> u64 {
        self.instret_before
            .saturating_add(self.engine.hart.instret())
    }

    /// The latest virtual time the hart may run to before its next stall (MAX: none). A
    /// running hart's cycles advance one per instruction, so the engine stops at (or, on a
    /// fast clock, one cycle after) the instruction the stall comes after.
    pub(super) fn stall_deadline(&self) -> VirtualTime {
        let left = self.stalls.instructions_left(self.instructions());
        if left == u64::MAX {
            return VirtualTime::MAX;
        }
        let clk = self.engine.clock;
        clk.time_at(self.engine.hart.cycles().saturating_add(left))
    }

    /// The hart woke from an idle of `idle_ns` (its WFI step): a long one ends in a stall
    /// (see `Stalls::woke`), folded into the trace hash.
    pub(super) fn woke(&mut self, idle_ns: u64) {
        if idle_ns == 0 || self.parked.is_some() {
            // Still idle at the limit: it has not woken yet.
            return;
        }
        let now = clock::now(&self.engine.clock, &self.engine.hart).as_ns();
        let len = self.stalls.woke(now, idle_ns);
        if len > 0 {
            self.bus.trace.fold(fold::STALL, len, u64::MAX, now);
        }
    }

    /// Goes on with the stall under way, or starts the one that is due: the hart skips
    /// to the stall's end or the next device event, whichever comes first and never past
    /// `limit`, and the events due then fire. None when the hart may run.
    pub(super) fn stall_step(&mut self, limit: VirtualTime) -> Option<Stop> {
        let clk = self.engine.clock;
        let now = clock::now(&clk, &self.engine.hart).as_ns();
        let end = match self.stalls.stalled_until(now) {
            Some(end) => end,
            None => {
                if self.stalls.instructions_left(self.instructions()) > 0 {
                    return None;
                }
                let at = self.instructions();
                let len = self.stalls.begin(now, at);
                self.bus.trace.fold(fold::STALL, len, at, now);
                self.stalls.stalled_until(now)?
            }
        };
        let hart = &mut self.engine.hart;
        let device = self
            .bus
            .events
            .peek_time()
            .map_or(u64::MAX, |t| clk.count_at_or_after(VirtualTime::from_ns(t)));
        let wake = clk.count_at_or_after(VirtualTime::from_ns(end)).min(device);
        clock::idle_until(&clk, hart, wake, limit);
        let now = clock::now(&clk, hart).as_ns();
        fire_due(hart, &mut self.bus, now);
        if hart.cycles() >= clk.count_before(limit) && self.stalls.stalled_until(now).is_some() {
            // Stalled at the limit: the rest of the stall comes in the next run.
            return Some(Stop::Limit);
        }
        Some(Stop::Yield)
    }
}
