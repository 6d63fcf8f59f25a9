//! riscv64 virtual time: the hart's cycle counter (one cycle per retired instruction,
//! plus the jumps of an idle hart to its next deadline) read through one
//! [`InstructionClock`]. Every conversion between cycles and virtual time in the riscv64
//! machine goes through [`CLOCK`]; the counter only moves forward, so neither does time.

use super::layout::NS_PER_CYCLE;
use wio_clock::{InstructionClock, VirtualTime};
use wio_riscv::Hart;

/// The riscv64 machine's clock: [`NS_PER_CYCLE`] virtual ns per cycle.
pub const CLOCK: InstructionClock = InstructionClock::new(NS_PER_CYCLE);

/// The hart's virtual time.
#[inline]
pub fn now(hart: &Hart) -> VirtualTime {
    CLOCK.time_at(hart.cycles())
}

/// Lets an idle hart's clock jump forward to `t` (never back); returns the virtual ns
/// skipped.
pub fn idle_until(hart: &mut Hart, t: VirtualTime) -> u64 {
    CLOCK.ns_of(hart.skip_to(CLOCK.count_at_or_after(t)))
}
