//! The virtual time-stamp counter (TSC) the guest reads with `rdtsc`.

use crate::time::NS_PER_SEC;

/// Default virtual TSC frequency: 2 GHz.
///
/// A round, fixed frequency keeps tick/ns conversions exact for whole
/// nanoseconds and does not leak the host CPU's real TSC frequency.
pub const DEFAULT_TSC_HZ: u64 = 2_000_000_000;

/// A virtual TSC running at a fixed frequency, derived from virtual time.
///
/// The guest's TSC is not the host's: it is computed from the
/// [`VirtualClock`](crate::VirtualClock) so that `rdtsc` returns the same
/// values in every run with the same seed. Conversions use `u128`
/// intermediates so they are exact (no floating point) and never overflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VirtualTsc {
    freq_hz: u64,
}

impl Default for VirtualTsc {
    /// A TSC at [`DEFAULT_TSC_HZ`].
    fn default() -> Self {
        Self::new(DEFAULT_TSC_HZ)
    }
}

impl VirtualTsc {
    /// A virtual TSC ticking `freq_hz` times per virtual second.
    ///
    /// # Panics
    ///
    /// Panics if `freq_hz` is 0: a stopped TSC is a configuration bug and
    /// would make [`VirtualTsc::ns_for_ticks`] meaningless.
    pub fn new(freq_hz: u64) -> Self {
        assert!(freq_hz > 0, "virtual TSC frequency must be non-zero");
        Self { freq_hz }
    }

    /// The TSC frequency in ticks per virtual second.
    pub fn freq_hz(&self) -> u64 {
        self.freq_hz
    }

    /// The TSC value at virtual time `ns`: `floor(ns * freq_hz / 1e9)`.
    ///
    /// Saturates at `u64::MAX` instead of wrapping, so the counter stays
    /// monotone in `ns` for every input.
    pub fn ticks_at(&self, ns: u64) -> u64 {
        let ticks = u128::from(ns) * u128::from(self.freq_hz) / u128::from(NS_PER_SEC);
        u64::try_from(ticks).unwrap_or(u64::MAX)
    }

    /// The earliest virtual time at which the TSC reads at least `ticks`:
    /// `ceil(ticks * 1e9 / freq_hz)`.
    ///
    /// This is what a TSC-deadline timer needs: the first nanosecond at which
    /// the deadline has been reached. For every `ticks <= ticks_at(u64::MAX)`
    /// it holds that `ticks_at(ns_for_ticks(ticks)) >= ticks` and, for
    /// `ticks > 0`, `ticks_at(ns_for_ticks(ticks) - 1) < ticks`. Results that
    /// do not fit in `u64` saturate at `u64::MAX` (effectively never).
    pub fn ns_for_ticks(&self, ticks: u64) -> u64 {
        let num = u128::from(ticks) * u128::from(NS_PER_SEC);
        let ns = num.div_ceil(u128::from(self.freq_hz));
        u64::try_from(ns).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frequencies that exercise exact, rounding-down and saturating paths.
    const FREQS: [u64; 7] = [
        1,
        3,
        1_000_000_000,
        1_000_000_007,
        DEFAULT_TSC_HZ,
        2_400_000_000,
        u64::MAX,
    ];

    /// A tiny deterministic generator (splitmix64) so the tests need no deps.
    fn splitmix(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Sample values: small, edge and pseudo-random of varying magnitude.
    fn samples() -> Vec<u64> {
        let mut v = vec![0, 1, 2, 999_999_999, NS_PER_SEC, u64::MAX - 1, u64::MAX];
        let mut s = 7;
        for _ in 0..2000 {
            let x = splitmix(&mut s);
            let shift = (splitmix(&mut s) % 64) as u32;
            v.push(x >> shift);
        }
        v
    }

    #[test]
    fn default_is_default_freq() {
        assert_eq!(VirtualTsc::default().freq_hz(), DEFAULT_TSC_HZ);
    }

    #[test]
    #[should_panic(expected = "non-zero")]
    fn zero_freq_panics() {
        let _ = VirtualTsc::new(0);
    }

    #[test]
    fn one_second_exact() {
        let tsc = VirtualTsc::new(DEFAULT_TSC_HZ);
        assert_eq!(tsc.ticks_at(NS_PER_SEC), DEFAULT_TSC_HZ);
        assert_eq!(tsc.ns_for_ticks(DEFAULT_TSC_HZ), NS_PER_SEC);
        assert_eq!(tsc.ticks_at(1), 2);
        assert_eq!(tsc.ns_for_ticks(1), 1);
        assert_eq!(tsc.ns_for_ticks(2), 1);
        assert_eq!(tsc.ns_for_ticks(3), 2);

        let slow = VirtualTsc::new(3);
        assert_eq!(slow.ticks_at(NS_PER_SEC), 3);
        assert_eq!(slow.ticks_at(NS_PER_SEC - 1), 2);
        assert_eq!(slow.ns_for_ticks(1), 333_333_334);
        assert_eq!(slow.ns_for_ticks(3), NS_PER_SEC);
    }

    #[test]
    fn ticks_at_zero_is_zero() {
        for f in FREQS {
            let tsc = VirtualTsc::new(f);
            assert_eq!(tsc.ticks_at(0), 0);
            assert_eq!(tsc.ns_for_ticks(0), 0);
        }
    }

    #[test]
    fn ticks_at_saturates() {
        let tsc = VirtualTsc::new(u64::MAX);
        assert_eq!(tsc.ticks_at(u64::MAX), u64::MAX);
        assert_eq!(tsc.ticks_at(NS_PER_SEC + 1), u64::MAX);
    }

    #[test]
    fn ns_for_ticks_saturates() {
        let tsc = VirtualTsc::new(1);
        assert_eq!(tsc.ns_for_ticks(u64::MAX), u64::MAX);
    }

    #[test]
    fn ticks_at_is_monotone() {
        for f in FREQS {
            let tsc = VirtualTsc::new(f);
            let mut ns = samples();
            ns.sort_unstable();
            for w in ns.windows(2) {
                assert!(
                    tsc.ticks_at(w[0]) <= tsc.ticks_at(w[1]),
                    "freq {f} at {w:?}"
                );
            }
            for &n in &ns {
                if let Some(next) = n.checked_add(1) {
                    assert!(tsc.ticks_at(n) <= tsc.ticks_at(next), "freq {f} at {n}");
                }
            }
        }
    }

    #[test]
    fn ns_for_ticks_round_trip() {
        for f in FREQS {
            let tsc = VirtualTsc::new(f);
            let max_ticks = tsc.ticks_at(u64::MAX);
            for t in samples().into_iter().filter(|&t| t <= max_ticks) {
                let ns = tsc.ns_for_ticks(t);
                assert!(tsc.ticks_at(ns) >= t, "freq {f} ticks {t}");
                if t > 0 {
                    assert!(ns > 0);
                    assert!(tsc.ticks_at(ns - 1) < t, "freq {f} ticks {t} not minimal");
                }
            }
        }
    }
}
