//! The hart's clock, its timer and the interrupt inputs the machine drives: the cycle
//! count is the machine's clock (one cycle per retired instruction, plus the jumps of an
//! idle hart), `time` is that count divided by the timebase, and the timer interrupt
//! becomes pending a drawn delay after `time` reaches the compare value. The CLINT's
//! memory-mapped registers (`crate::clint`) and the SBI timer both land here.

use crate::csr::irq;
use crate::hart::Hart;

impl Hart {
    /// The hart's clock: cycles so far (one per retired instruction, plus idle jumps).
    #[inline]
    pub fn cycles(&self) -> u64 {
        self.cycles
    }

    /// Instructions retired so far.
    #[inline]
    pub fn instret(&self) -> u64 {
        self.instret
    }

    /// Moves the clock forward to `cycle` (an idle hart jumping to its next event) and
    /// returns how many cycles were skipped. Time never moves backwards: a `cycle` that is
    /// not in the future changes nothing and returns 0.
    pub fn skip_to(&mut self, cycle: u64) -> u64 {
        if cycle <= self.cycles {
            return 0;
        }
        let skipped = cycle - self.cycles;
        self.cycles = cycle;
        skipped
    }

    /// The `time` CSR: ticks of the timebase.
    #[inline]
    pub fn time(&self) -> u64 {
        self.cycles / self.cycles_per_tick
    }

    /// Cycle at which the timer interrupt becomes pending: where `time` reaches `timecmp`,
    /// plus the timer's delay (u64::MAX when the timer is off).
    #[inline]
    pub fn timer_deadline(&self) -> u64 {
        if self.timecmp == u64::MAX {
            return u64::MAX;
        }
        self.timecmp
            .saturating_mul(self.cycles_per_tick)
            .saturating_add(self.timer_delay)
    }

    /// Sets the timer compare value (SBI set_timer); clears the pending timer until it fires.
    pub fn set_timecmp(&mut self, value: u64) {
        self.set_timer(value, 0);
    }

    /// Sets the timer compare value and the timer's latency: the interrupt becomes pending
    /// `delay_cycles` after `time` reaches `value` (an interrupt taken late, as on real
    /// hardware; the machine draws the delay from its seed so seeds move preemption).
    pub fn set_timer(&mut self, value: u64, delay_cycles: u64) {
        self.timecmp = value;
        self.timer_delay = delay_cycles;
        self.irq_dirty = true;
    }

    /// Sets or clears the supervisor software interrupt (SBI IPI to self).
    pub fn set_ssip(&mut self, on: bool) {
        if on {
            self.mip_sw |= irq::SSI;
        } else {
            self.mip_sw &= !irq::SSI;
        }
        self.irq_dirty = true;
    }

    /// Tells the hart that device state changed (a PLIC line moved).
    pub fn poke_interrupts(&mut self) {
        self.irq_dirty = true;
    }
}
