//! The cost model: how much virtual time each kind of VM exit is worth.
//!
//! A deterministic hypervisor cannot let host wall time leak into the guest,
//! so guest time advances by *charging* fixed virtual costs for the work the
//! guest does: a price per VM exit kind plus a price per retired instruction.

use thiserror::Error;

/// The kinds of VM exit that the cost model prices separately.
///
/// These are coarse on purpose: they are buckets of "how expensive would this
/// have been on real hardware", not a full mirror of KVM's exit reasons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ExitCost {
    /// An `in`/`out` port I/O access.
    PortIo,
    /// A trapped memory-mapped I/O access.
    Mmio,
    /// A `hlt` instruction: the vCPU has nothing to do until an interrupt.
    Halt,
    /// An interrupt-window exit: the guest just became able to take an IRQ.
    InterruptWindow,
    /// Any other exit kind not priced individually.
    Other,
}

impl ExitCost {
    /// Every exit kind, in declaration order, for iterating over the model
    /// (e.g. printing statistics) without relying on hash-map order.
    pub const ALL: [ExitCost; 5] = [
        ExitCost::PortIo,
        ExitCost::Mmio,
        ExitCost::Halt,
        ExitCost::InterruptWindow,
        ExitCost::Other,
    ];

    /// A short stable name for traces and statistics output.
    pub fn name(&self) -> &'static str {
        match self {
            ExitCost::PortIo => "pio",
            ExitCost::Mmio => "mmio",
            ExitCost::Halt => "hlt",
            ExitCost::InterruptWindow => "irq_window",
            ExitCost::Other => "other",
        }
    }
}

/// Why a [`CostModel`] was rejected by [`CostModel::validate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum CostModelError {
    /// `ns_per_instruction_den` was 0, which would divide by zero.
    #[error("cost model ns_per_instruction_den must be non-zero")]
    ZeroInstructionDenominator,
}

/// Virtual nanoseconds charged for each exit kind and per instruction.
///
/// The clock advances by these amounts, so changing them changes what the
/// guest observes; they are part of a run's configuration just like the seed.
///
/// `halt_ns` defaults to 0 because a halt is not "work": when the vCPU halts,
/// the VMM jumps the [`VirtualClock`](crate::VirtualClock) straight to the
/// next scheduled event with
/// [`advance_to`](crate::VirtualClock::advance_to). Charging a fixed cost as
/// well would double-count the idle time and could overshoot that event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CostModel {
    /// Cost of a port I/O exit, in virtual ns.
    pub port_io_ns: u64,
    /// Cost of an MMIO exit, in virtual ns.
    pub mmio_ns: u64,
    /// Cost of a halt exit, in virtual ns (0: the clock jumps instead).
    pub halt_ns: u64,
    /// Cost of an interrupt-window exit, in virtual ns.
    pub interrupt_window_ns: u64,
    /// Cost of any other exit, in virtual ns.
    pub other_ns: u64,
    /// Numerator of the virtual ns charged per retired instruction.
    pub ns_per_instruction_num: u64,
    /// Denominator of the virtual ns charged per retired instruction; must be
    /// non-zero (see [`CostModel::validate`]).
    pub ns_per_instruction_den: u64,
}

impl Default for CostModel {
    /// Round numbers in the ballpark of real exit latencies: 1 µs for I/O and
    /// other exits, 0.5 µs for an interrupt window, 0 for halt, and 1 ns per
    /// instruction.
    fn default() -> Self {
        Self {
            port_io_ns: 1_000,
            mmio_ns: 1_000,
            halt_ns: 0,
            interrupt_window_ns: 500,
            other_ns: 1_000,
            ns_per_instruction_num: 1,
            ns_per_instruction_den: 1,
        }
    }
}

impl CostModel {
    /// Checks the model is usable; currently that the instruction rate's
    /// denominator is non-zero. Call this once when loading configuration.
    pub fn validate(&self) -> Result<(), CostModelError> {
        if self.ns_per_instruction_den == 0 {
            return Err(CostModelError::ZeroInstructionDenominator);
        }
        Ok(())
    }

    /// Virtual ns charged for one exit of kind `kind`.
    pub fn cost_ns(&self, kind: ExitCost) -> u64 {
        match kind {
            ExitCost::PortIo => self.port_io_ns,
            ExitCost::Mmio => self.mmio_ns,
            ExitCost::Halt => self.halt_ns,
            ExitCost::InterruptWindow => self.interrupt_window_ns,
            ExitCost::Other => self.other_ns,
        }
    }

    /// Virtual ns charged for `count` retired instructions:
    /// `floor(count * num / den)`, computed in `u128` and saturating at
    /// `u64::MAX`.
    ///
    /// # Panics
    ///
    /// Panics if `ns_per_instruction_den` is 0; [`CostModel::validate`]
    /// rejects such a model up front, so reaching this is a caller bug.
    pub fn instructions_ns(&self, count: u64) -> u64 {
        let ns = (u128::from(count) * u128::from(self.ns_per_instruction_num))
            .checked_div(u128::from(self.ns_per_instruction_den))
            .expect("CostModel used without validate(): ns_per_instruction_den is 0");
        u64::try_from(ns).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_stable() {
        let names: Vec<&str> = ExitCost::ALL.iter().map(ExitCost::name).collect();
        assert_eq!(names, ["pio", "mmio", "hlt", "irq_window", "other"]);
    }

    #[test]
    fn all_is_sorted_and_unique() {
        assert!(ExitCost::ALL.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn default_costs() {
        let m = CostModel::default();
        assert_eq!(m.cost_ns(ExitCost::PortIo), 1_000);
        assert_eq!(m.cost_ns(ExitCost::Mmio), 1_000);
        assert_eq!(m.cost_ns(ExitCost::Halt), 0);
        assert_eq!(m.cost_ns(ExitCost::InterruptWindow), 500);
        assert_eq!(m.cost_ns(ExitCost::Other), 1_000);
        assert_eq!(m.instructions_ns(12_345), 12_345);
        assert_eq!(m.validate(), Ok(()));
    }

    #[test]
    fn cost_ns_reads_each_field() {
        let m = CostModel {
            port_io_ns: 1,
            mmio_ns: 2,
            halt_ns: 3,
            interrupt_window_ns: 4,
            other_ns: 5,
            ..CostModel::default()
        };
        let costs: Vec<u64> = ExitCost::ALL.iter().map(|&k| m.cost_ns(k)).collect();
        assert_eq!(costs, [1, 2, 3, 4, 5]);
    }

    #[test]
    fn instructions_ns_floors() {
        let m = CostModel {
            ns_per_instruction_num: 1,
            ns_per_instruction_den: 3,
            ..CostModel::default()
        };
        assert_eq!(m.instructions_ns(0), 0);
        assert_eq!(m.instructions_ns(2), 0);
        assert_eq!(m.instructions_ns(3), 1);
        assert_eq!(m.instructions_ns(10), 3);
    }

    #[test]
    fn instructions_ns_no_intermediate_overflow_and_saturates() {
        let m = CostModel {
            ns_per_instruction_num: 1_000,
            ns_per_instruction_den: 1_000,
            ..CostModel::default()
        };
        assert_eq!(m.instructions_ns(u64::MAX), u64::MAX);
        let big = CostModel {
            ns_per_instruction_num: 2,
            ns_per_instruction_den: 1,
            ..CostModel::default()
        };
        assert_eq!(big.instructions_ns(u64::MAX), u64::MAX);
    }

    #[test]
    fn validate_rejects_zero_denominator() {
        let m = CostModel {
            ns_per_instruction_den: 0,
            ..CostModel::default()
        };
        assert_eq!(
            m.validate(),
            Err(CostModelError::ZeroInstructionDenominator)
        );
        assert!(!m.validate().unwrap_err().to_string().is_empty());
    }

    #[test]
    #[should_panic(expected = "validate")]
    fn instructions_ns_zero_denominator_panics() {
        let m = CostModel {
            ns_per_instruction_den: 0,
            ..CostModel::default()
        };
        let _ = m.instructions_ns(1);
    }
}
