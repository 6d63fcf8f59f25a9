//! Virtual time of an engine whose clock is its retired-instruction count (the riscv64
//! interpreter): the one place where instructions and nanoseconds are converted.
//!
//! The counter only moves forward (one per retired instruction, plus the jumps of an
//! idle hart to its next deadline), so the time derived from it never goes backwards.

use crate::time::VirtualTime;

/// Converts between an instruction counter and virtual time at a fixed rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstructionClock {
    ns_per_instruction: u64,
}

impl InstructionClock {
    /// A clock where each instruction lasts `ns_per_instruction` virtual nanoseconds.
    ///
    /// # Panics
    /// If `ns_per_instruction` is 0 (a constant of the machine: a bug, not an input).
    pub const fn new(ns_per_instruction: u64) -> InstructionClock {
        assert!(ns_per_instruction > 0, "an instruction must take time");
        InstructionClock { ns_per_instruction }
    }

    /// The virtual time when the counter reads `count`.
    pub const fn time_at(&self, count: u64) -> VirtualTime {
        VirtualTime::from_ns(count.saturating_mul(self.ns_per_instruction))
    }

    /// The last count whose time is at or before `t` (where an engine must stop so as
    /// not to run past `t`).
    pub const fn count_before(&self, t: VirtualTime) -> u64 {
        t.as_ns() / self.ns_per_instruction
    }

    /// The first count whose time is at or after `t` (where an engine must be to see an
    /// event due at `t`); `VirtualTime::MAX` maps to `u64::MAX` ("never").
    pub const fn count_at_or_after(&self, t: VirtualTime) -> u64 {
        if t.as_ns() == u64::MAX {
            u64::MAX
        } else {
            t.as_ns().div_ceil(self.ns_per_instruction)
        }
    }

    /// Virtual nanoseconds of `count` instructions.
    pub const fn ns_of(&self, count: u64) -> u64 {
        count.saturating_mul(self.ns_per_instruction)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_round_the_right_way() {
        let c = InstructionClock::new(3);
        assert_eq!(c.time_at(4).as_ns(), 12);
        assert_eq!(c.count_before(VirtualTime::from_ns(13)), 4);
        assert_eq!(c.count_at_or_after(VirtualTime::from_ns(13)), 5);
        assert_eq!(c.count_at_or_after(VirtualTime::from_ns(12)), 4);
        assert_eq!(c.count_at_or_after(VirtualTime::MAX), u64::MAX);
        assert_eq!(c.time_at(u64::MAX), VirtualTime::MAX);
        let one = InstructionClock::new(1);
        assert_eq!(
            one.count_at_or_after(VirtualTime::from_ns(u64::MAX - 1)),
            u64::MAX - 1
        );
    }
}
