//! Virtual time of an engine whose clock is its retired-instruction count (the riscv64
//! interpreter): the one place where instructions and nanoseconds are converted.
//!
//! The counter only moves forward (one per retired instruction, plus the jumps of an
//! idle hart to its next deadline), so the time derived from it never goes backwards.
//!
//! # Drift
//! A machine's counter is its local oscillator: what its guest's timer and `time` CSR
//! count. Virtual time is global (device events, the network, other machines). A clock
//! with a drift of `ppm` parts per million has an oscillator that runs fast by that much
//! (slow when negative): `1 + ppm / 10^6` times as many instructions per virtual
//! nanosecond as the nominal rate. Measured from an anchor `(count, ns)`:
//!
//! ```text
//! time_at(c) = floor(anchor_ns + (c - anchor_count) * ns_per_instruction * 10^6 / (10^6 + ppm))
//! ```
//!
//! computed exactly in 128-bit integers (no floating point: bit-identical on every host),
//! clamped to `[0, u64::MAX]`; the anchor moves when the clock is [re-keyed](InstructionClock::rekeyed)
//! with another drift, so time stays continuous. `time_at` is the floor of one increasing
//! line, so it never decreases, and the other conversions are its exact inverses. A drift
//! of 0 gives exactly `c * ns_per_instruction`, the nominal clock.

use crate::time::VirtualTime;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The largest drift a clock accepts, in parts per million either way (1 %: far beyond
/// real oscillators, which stay within about 100 ppm).
pub const MAX_DRIFT_PPM: i32 = 10_000;

/// The longest instruction a clock accepts, in ns (keeps every product within 128 bits).
pub const MAX_NS_PER_INSTRUCTION: u64 = u32::MAX as u64;

const PPM: i128 = 1_000_000;

/// A clock that cannot be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum InstructionClockError {
    /// An instruction must last between 1 and [`MAX_NS_PER_INSTRUCTION`] ns.
    #[error("an instruction must last 1 to {MAX_NS_PER_INSTRUCTION} ns, not {0}")]
    Duration(u64),
    /// The drift is beyond [`MAX_DRIFT_PPM`].
    #[error("a clock drift of {0} ppm is beyond ±{MAX_DRIFT_PPM} ppm")]
    Drift(i32),
}

/// Converts between an instruction counter and virtual time at a fixed rate, which may
/// drift from the nominal one by a bounded number of ppm (see the module notes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "ClockParts", into = "ClockParts")]
pub struct InstructionClock {
    ns_per_instruction: u64,
    drift_ppm: i32,
    anchor_count: u64,
    anchor_ns: u64,
}

/// [`InstructionClock`] as it is serialized: checked again when read back.
#[derive(Serialize, Deserialize)]
struct ClockParts {
    ns_per_instruction: u64,
    drift_ppm: i32,
    anchor_count: u64,
    anchor_ns: u64,
}

impl From<InstructionClock> for ClockParts {
    fn from(c: InstructionClock) -> ClockParts {
        ClockParts {
            ns_per_instruction: c.ns_per_instruction,
            drift_ppm: c.drift_ppm,
            anchor_count: c.anchor_count,
            anchor_ns: c.anchor_ns,
        }
    }
}

impl TryFrom<ClockParts> for InstructionClock {
    type Error = InstructionClockError;

    fn try_from(p: ClockParts) -> Result<InstructionClock, InstructionClockError> {
        check(p.ns_per_instruction, p.drift_ppm)?;
        Ok(InstructionClock {
            ns_per_instruction: p.ns_per_instruction,
            drift_ppm: p.drift_ppm,
            anchor_count: p.anchor_count,
            anchor_ns: p.anchor_ns,
        })
    }
}

const fn check(ns_per_instruction: u64, drift_ppm: i32) -> Result<(), InstructionClockError> {
    if ns_per_instruction == 0 || ns_per_instruction > MAX_NS_PER_INSTRUCTION {
        return Err(InstructionClockError::Duration(ns_per_instruction));
    }
    if drift_ppm < -MAX_DRIFT_PPM || drift_ppm > MAX_DRIFT_PPM {
        return Err(InstructionClockError::Drift(drift_ppm));
    }
    Ok(())
}

/// `v` clamped into `u64`.
const fn clamp_u64(v: i128) -> u64 {
    if v < 0 {
        0
    } else if v > u64::MAX as i128 {
        u64::MAX
    } else {
        v as u64
    }
}

impl InstructionClock {
    /// A clock without drift where each instruction lasts `ns_per_instruction` virtual
    /// nanoseconds.
    ///
    /// # Panics
    /// If `ns_per_instruction` is 0 or above [`MAX_NS_PER_INSTRUCTION`] (a constant of
    /// the machine: a bug, not an input).
    pub const fn new(ns_per_instruction: u64) -> InstructionClock {
        assert!(
            check(ns_per_instruction, 0).is_ok(),
            "an instruction must take time, and less than 2^32 ns"
        );
        InstructionClock {
            ns_per_instruction,
            drift_ppm: 0,
            anchor_count: 0,
            anchor_ns: 0,
        }
    }

    /// A clock whose oscillator runs `drift_ppm` parts per million fast (slow when
    /// negative) against `ns_per_instruction`, with count 0 at time 0.
    pub const fn with_drift(
        ns_per_instruction: u64,
        drift_ppm: i32,
    ) -> Result<InstructionClock, InstructionClockError> {
        if let Err(e) = check(ns_per_instruction, drift_ppm) {
            return Err(e);
        }
        Ok(InstructionClock {
            ns_per_instruction,
            drift_ppm,
            anchor_count: 0,
            anchor_ns: 0,
        })
    }

    /// The same clock drifting by `drift_ppm` from `at_count` on: the time at `at_count`
    /// is unchanged, so a machine re-keyed there sees its time go on without a jump
    /// (counts before `at_count` are extrapolated at the new rate; a machine never goes
    /// back to them).
    pub fn rekeyed(
        &self,
        at_count: u64,
        drift_ppm: i32,
    ) -> Result<InstructionClock, InstructionClockError> {
        check(self.ns_per_instruction, drift_ppm)?;
        Ok(InstructionClock {
            ns_per_instruction: self.ns_per_instruction,
            drift_ppm,
            anchor_count: at_count,
            anchor_ns: self.time_at(at_count).as_ns(),
        })
    }

    /// The drift in parts per million (positive: the oscillator runs fast).
    pub const fn drift_ppm(&self) -> i32 {
        self.drift_ppm
    }

    /// Nominal ns per instruction times 10^6 (the numerator of the rate).
    const fn num(&self) -> i128 {
        self.ns_per_instruction as i128 * PPM
    }

    /// 10^6 + drift (the denominator of the rate; positive, as the drift is bounded).
    const fn den(&self) -> i128 {
        PPM + self.drift_ppm as i128
    }

    /// The virtual time when the counter reads `count`; `u64::MAX` ("never") maps to
    /// `VirtualTime::MAX`, and times beyond the range saturate.
    #[inline]
    pub const fn time_at(&self, count: u64) -> VirtualTime {
        if count == u64::MAX {
            return VirtualTime::MAX;
        }
        let den = self.den();
        // anchor_ns * den + (count - anchor) * num: below 2^117 in magnitude.
        let scaled =
            self.anchor_ns as i128 * den + (count as i128 - self.anchor_count as i128) * self.num();
        VirtualTime::from_ns(clamp_u64(scaled.div_euclid(den)))
    }

    /// The last count whose time is at or before `t` (where an engine must stop so as
    /// not to run past `t`); `VirtualTime::MAX` maps to `u64::MAX`. 0 when even count 0
    /// is later than `t` (possible only on a re-keyed clock, before its anchor).
    #[inline]
    pub const fn count_before(&self, t: VirtualTime) -> u64 {
        if t.as_ns() == u64::MAX {
            return u64::MAX;
        }
        // time_at(c) <= t  <=>  (c - anchor) * num < (t + 1 - anchor_ns) * den.
        let bound = (t.as_ns() as i128 + 1 - self.anchor_ns as i128) * self.den();
        let c = self.anchor_count as i128 + (bound - 1).div_euclid(self.num());
        // u64::MAX means "never": its time is MAX, beyond every other t.
        let c = clamp_u64(c);
        if c == u64::MAX {
            u64::MAX - 1
        } else {
            c
        }
    }

    /// The first count whose time is at or after `t` (where an engine must be to see an
    /// event due at `t`); `VirtualTime::MAX` maps to `u64::MAX` ("never").
    #[inline]
    pub const fn count_at_or_after(&self, t: VirtualTime) -> u64 {
        match t.as_ns() {
            u64::MAX => return u64::MAX,
            // Every count's time is at least 0 (times before the epoch clamp to it).
            0 => return 0,
            _ => {}
        }
        // time_at(c) >= t  <=>  (c - anchor) * num >= (t - anchor_ns) * den.
        let need = (t.as_ns() as i128 - self.anchor_ns as i128) * self.den();
        let steps = -(-need).div_euclid(self.num()); // ceil(need / num)
        clamp_u64(self.anchor_count as i128 + steps)
    }

    /// Virtual nanoseconds that `count` instructions last at this rate, rounded down (a
    /// length: where they start is not taken into account), saturating.
    #[inline]
    pub const fn ns_of(&self, count: u64) -> u64 {
        clamp_u64((count as i128 * self.num()).div_euclid(self.den()))
    }

    /// The fewest instructions that last at least `ns` virtual nanoseconds at this rate
    /// (a length), saturating.
    #[inline]
    pub const fn count_of(&self, ns: u64) -> u64 {
        let need = ns as i128 * self.den();
        clamp_u64(-(-need).div_euclid(self.num()))
    }
}

#[cfg(test)]
mod tests;
