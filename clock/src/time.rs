//! Virtual wall time: the run's clock and deadlines measured against it.

/// Nanoseconds per second, the unit conversion used throughout wio.
///
/// All virtual time is kept in nanoseconds; this constant exists so that
/// conversions to and from seconds (and TSC frequencies in Hz) are spelled
/// once instead of as scattered magic numbers.
pub const NS_PER_SEC: u64 = 1_000_000_000;

/// The run's virtual clock: nanoseconds elapsed since the run's epoch.
///
/// This is the single source of guest-visible time. It never reads the host
/// clock; it only moves forward when the VMM explicitly advances it, so two
/// runs with the same seed observe exactly the same times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct VirtualClock {
    now_ns: u64,
}

impl VirtualClock {
    /// A clock at the run's epoch (time 0), which is where every run starts.
    pub fn new() -> Self {
        Self { now_ns: 0 }
    }

    /// A clock already at `ns`, used when restoring from a snapshot or in tests.
    pub fn at(ns: u64) -> Self {
        Self { now_ns: ns }
    }

    /// The current virtual time in nanoseconds since the run's epoch.
    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }

    /// Moves time forward by `ns` nanoseconds, e.g. the cost of a VM exit.
    ///
    /// # Panics
    ///
    /// Panics if the clock would overflow `u64` (about 584 years of virtual
    /// time). That can only happen through a bug in the caller, so it is
    /// treated as a broken invariant rather than a recoverable error.
    pub fn advance(&mut self, ns: u64) {
        self.now_ns = self
            .now_ns
            .checked_add(ns)
            .expect("virtual clock overflowed u64 nanoseconds");
    }

    /// Jumps forward to absolute time `t` if it is in the future and returns
    /// how far the clock moved.
    ///
    /// Time never moves backwards: if `t <= now` the clock is unchanged and
    /// the return value is 0. This is what a halted vCPU uses to skip straight
    /// to the next scheduled event.
    pub fn advance_to(&mut self, t: u64) -> u64 {
        if t > self.now_ns {
            let delta = t - self.now_ns;
            self.now_ns = t;
            delta
        } else {
            0
        }
    }
}

/// A point in a machine's virtual time: nanoseconds since the run's epoch.
///
/// Both machines speak it: the x86-64 machine reads it off its [`VirtualClock`], the
/// riscv64 machine derives it from its retired-instruction count through an
/// [`crate::InstructionClock`]. Wherever a machine is told how far to run or says where it
/// is, it is this type, so a nanosecond is never confused with a cycle or a tick.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct VirtualTime(u64);

impl VirtualTime {
    /// The run's epoch.
    pub const ZERO: VirtualTime = VirtualTime(0);
    /// The end of time: "no limit".
    pub const MAX: VirtualTime = VirtualTime(u64::MAX);

    /// The time `ns` nanoseconds after the epoch.
    pub const fn from_ns(ns: u64) -> VirtualTime {
        VirtualTime(ns)
    }

    /// Nanoseconds since the epoch.
    pub const fn as_ns(self) -> u64 {
        self.0
    }

    /// `ns` nanoseconds later, saturating at [`VirtualTime::MAX`].
    pub const fn saturating_add_ns(self, ns: u64) -> VirtualTime {
        VirtualTime(self.0.saturating_add(ns))
    }

    /// A limit of `ns` nanoseconds where 0 means "none" (the command line's convention).
    pub const fn limit_or_max(ns: u64) -> VirtualTime {
        if ns == 0 {
            VirtualTime::MAX
        } else {
            VirtualTime(ns)
        }
    }
}

impl std::fmt::Display for VirtualTime {
    /// Seconds with nanosecond digits, computed in integers (no floating point).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{:09} s", self.0 / NS_PER_SEC, self.0 % NS_PER_SEC)
    }
}

impl VirtualClock {
    /// The current virtual time.
    pub fn time(&self) -> VirtualTime {
        VirtualTime(self.now_ns)
    }
}

/// An absolute point in virtual time (nanoseconds since the run's epoch).
///
/// Timers and timeouts are expressed as deadlines so that "is it time yet?"
/// is a pure comparison against the [`VirtualClock`], never a host sleep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Deadline(pub u64);

impl Deadline {
    /// The deadline `delta` nanoseconds after `now`, saturating at `u64::MAX`
    /// (an effectively-never deadline) instead of wrapping around into the past.
    pub fn after(now: u64, delta: u64) -> Deadline {
        Deadline(now.saturating_add(delta))
    }

    /// Whether the deadline has been reached at virtual time `now`.
    pub fn is_due(&self, now: u64) -> bool {
        now >= self.0
    }

    /// Nanoseconds left until the deadline at virtual time `now`; 0 once due.
    pub fn remaining(&self, now: u64) -> u64 {
        self.0.saturating_sub(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_starts_at_zero_and_equals_default() {
        assert_eq!(VirtualClock::new().now_ns(), 0);
        assert_eq!(VirtualClock::new(), VirtualClock::default());
    }

    #[test]
    fn at_sets_time() {
        assert_eq!(VirtualClock::at(42).now_ns(), 42);
    }

    #[test]
    fn advance_adds() {
        let mut c = VirtualClock::new();
        c.advance(10);
        c.advance(0);
        c.advance(NS_PER_SEC);
        assert_eq!(c.now_ns(), NS_PER_SEC + 10);
    }

    #[test]
    fn advance_up_to_max_is_fine() {
        let mut c = VirtualClock::at(u64::MAX - 5);
        c.advance(5);
        assert_eq!(c.now_ns(), u64::MAX);
    }

    #[test]
    #[should_panic(expected = "overflowed")]
    fn advance_overflow_panics() {
        let mut c = VirtualClock::at(u64::MAX);
        c.advance(1);
    }

    #[test]
    fn advance_to_moves_forward_and_returns_delta() {
        let mut c = VirtualClock::at(100);
        assert_eq!(c.advance_to(250), 150);
        assert_eq!(c.now_ns(), 250);
    }

    #[test]
    fn advance_to_never_moves_backwards() {
        let mut c = VirtualClock::at(100);
        assert_eq!(c.advance_to(100), 0);
        assert_eq!(c.advance_to(5), 0);
        assert_eq!(c.now_ns(), 100);
    }

    #[test]
    fn deadline_is_due() {
        let d = Deadline(100);
        assert!(!d.is_due(99));
        assert!(d.is_due(100));
        assert!(d.is_due(101));
    }

    #[test]
    fn deadline_remaining_saturates() {
        let d = Deadline(100);
        assert_eq!(d.remaining(40), 60);
        assert_eq!(d.remaining(100), 0);
        assert_eq!(d.remaining(500), 0);
    }

    #[test]
    fn deadline_after_saturates() {
        assert_eq!(Deadline::after(10, 5), Deadline(15));
        assert_eq!(Deadline::after(u64::MAX - 1, 5), Deadline(u64::MAX));
    }

    #[test]
    fn virtual_time_limits_and_display() {
        assert_eq!(VirtualTime::limit_or_max(0), VirtualTime::MAX);
        assert_eq!(VirtualTime::limit_or_max(7).as_ns(), 7);
        assert_eq!(VirtualTime::MAX.saturating_add_ns(1), VirtualTime::MAX);
        assert_eq!(
            VirtualTime::from_ns(1_500_000_000).to_string(),
            "1.500000000 s"
        );
        assert_eq!(VirtualClock::at(9).time(), VirtualTime::from_ns(9));
    }

    #[test]
    fn deadlines_order_by_time() {
        assert!(Deadline(1) < Deadline(2));
    }
}
