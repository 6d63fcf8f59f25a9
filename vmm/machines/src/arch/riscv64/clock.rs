//! riscv64 virtual time: the hart's cycle counter (one cycle per retired instruction,
//! plus the jumps of an idle hart to its next deadline) read through the machine's
//! [`InstructionClock`]. Every conversion between cycles and virtual time in the riscv64
//! machine goes through that one clock (the engine's); the counter only moves forward,
//! so neither does time.
//!
//! The cycle counter is the machine's local oscillator: the guest's `time` CSR and its
//! SBI timer count it. With `--sched-noise` on, the oscillator drifts a seeded number of
//! ppm against virtual time (see `machine::noise`), where device events live; a restore
//! with another seed re-keys the drift at the snapshot's cycle count, time continuous.

use super::layout::NS_PER_CYCLE;
use crate::error::Result;
use wio_clock::{InstructionClock, VirtualTime};
use wio_riscv::Hart;

/// A riscv64 clock of [`NS_PER_CYCLE`] virtual ns per cycle, drifting by `ppm` (positive:
/// the oscillator runs fast), with cycle 0 at time 0.
pub fn drifting(ppm: i32) -> Result<InstructionClock> {
    Ok(InstructionClock::with_drift(NS_PER_CYCLE, ppm)?)
}

/// `clock` re-keyed to drift by `ppm` from the hart's cycle count now (a restore with
/// another seed); the time now does not move.
pub fn rekeyed(clock: &InstructionClock, hart: &Hart, ppm: i32) -> Result<InstructionClock> {
    Ok(clock.rekeyed(hart.cycles(), ppm)?)
}

/// The hart's virtual time.
#[inline]
pub fn now(clock: &InstructionClock, hart: &Hart) -> VirtualTime {
    clock.time_at(hart.cycles())
}

/// Lets an idle hart's clock jump forward to cycle `wake`, but not past `limit` (its last
/// cycle at or before `limit`), and never back; returns the virtual ns skipped.
///
/// The wake-up is a cycle, not a time: a fast clock has several cycles in one ns, and
/// the timer fires on its exact cycle, which the first cycle of its ns may precede.
pub fn idle_until(clock: &InstructionClock, hart: &mut Hart, wake: u64, limit: VirtualTime) -> u64 {
    let before = now(clock, hart);
    hart.skip_to(wake.min(clock.count_before(limit)));
    now(clock, hart).as_ns().saturating_sub(before.as_ns())
}
