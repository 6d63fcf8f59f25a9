//! Radiation as a rate: single-event upsets arriving at so many per bit per virtual
//! second (a LEO or GEO environment), optionally accelerated as a beam test accelerates
//! fluence. A profile rule with `rate_per_bit_s` draws its upset times here instead of a
//! count: the window is cut into 1 ms slots and each slot holds an upset with
//! probability rate x bits x flux x 1 ms (a binomial draw, which is the Poisson process
//! of the physics to within one upset per slot), all in integer arithmetic so the plan is
//! the same on every host (rule 1: no floating point in the simulation path).
//!
//! Rates are written as decimal text (`"1.2e-12"`), parsed exactly into a mantissa and a
//! power of ten; resolution 1e-15 per bit-second.

use crate::error::RateError;
use wio_scheduler::Stream;

/// One slot of the draw, virtual ns.
pub const SLOT_NS: u64 = 1_000_000;
/// Smallest exponent a rate may need (1e-15 per bit-second resolution).
const MIN_EXP: i32 = -15;
/// Most significant digits a rate may have.
const MAX_DIGITS: usize = 12;

/// A rate of upsets per bit per second: `mantissa` x 10^`exp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    /// Decimal digits as an integer.
    pub mantissa: u64,
    /// Power of ten.
    pub exp: i32,
}

/// Parses `"1.16e-12"`, `"0.000002"`, `"3e-9"`: digits, an optional fraction and an
/// optional exponent. Refuses negative rates, more than [`MAX_DIGITS`] significant
/// digits and rates finer than 1e-15.
pub fn parse_rate(text: &str) -> Result<Rate, RateError> {
    let bad = |why: &'static str| RateError {
        text: text.to_string(),
        why,
    };
    let t = text.trim();
    let (num, exp) = match t.find(['e', 'E']) {
        Some(i) => (
            &t[..i],
            t[i + 1..]
                .parse::<i32>()
                .map_err(|_| bad("the exponent is not an integer"))?,
        ),
        None => (t, 0),
    };
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.is_empty() && frac.is_empty()
        || !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit())
    {
        return Err(bad("not a non-negative decimal number"));
    }
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    let mut exp = exp
        .checked_sub(frac.len() as i32)
        .ok_or_else(|| bad("exponent out of range"))?;
    // Trailing zeros move into the exponent.
    let trimmed = digits.trim_end_matches('0');
    exp = exp
        .checked_add((digits.len() - trimmed.len()) as i32)
        .ok_or_else(|| bad("exponent out of range"))?;
    if trimmed.is_empty() {
        return Ok(Rate {
            mantissa: 0,
            exp: 0,
        });
    }
    if trimmed.len() > MAX_DIGITS {
        return Err(bad("more than 12 significant digits"));
    }
    if exp < MIN_EXP {
        return Err(bad("finer than 1e-15 per bit-second"));
    }
    let mantissa = trimmed.parse::<u64>().map_err(|_| bad("not a number"))?;
    Ok(Rate { mantissa, exp })
}

/// The chance of an upset in one slot as `numerator / denominator` (both exact), for
/// `bits` bits under `rate` accelerated `flux` times; None when it reaches 1 (more than
/// one upset per slot: the rate cannot be drawn this way).
pub fn slot_chance(rate: Rate, bits: u64, flux: u64) -> Option<(u128, u64)> {
    // p = m * 10^exp * bits * flux * SLOT_NS / 1e9 = m * bits * flux * 10^(exp - 3)
    let mut num = u128::from(rate.mantissa)
        .checked_mul(u128::from(bits))?
        .checked_mul(u128::from(flux))?;
    let mut den: u64 = 1;
    let e = rate.exp - 3;
    if e >= 0 {
        num = num.checked_mul(10u128.checked_pow(e as u32)?)?;
    } else {
        den = 10u64.checked_pow((-e) as u32)?;
    }
    (num < u128::from(den)).then_some((num, den))
}

/// Draws the upset times in [start_ns, end_ns) slot by slot from `s`, at most `max`.
/// Each slot takes one draw, each upset one more (its place in the slot), so the times
/// depend on the seed, the window and the chance only.
pub fn draw_times(
    s: &mut Stream,
    start_ns: u64,
    end_ns: u64,
    chance: (u128, u64),
    max: u64,
) -> Vec<u64> {
    let (num, den) = chance;
    let mut out = Vec::new();
    if num == 0 {
        return out;
    }
    let mut slot = start_ns;
    while slot < end_ns && (out.len() as u64) < max {
        if u128::from(s.below(den)) < num {
            let span = SLOT_NS.min(end_ns - slot);
            out.push(slot + s.below(span));
        }
        slot = slot.saturating_add(SLOT_NS);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use wio_scheduler::RunSeed;

    #[test]
    fn rates_parse_exactly() {
        assert_eq!(
            parse_rate("1.16e-12").unwrap(),
            Rate {
                mantissa: 116,
                exp: -14
            }
        );
        assert_eq!(
            parse_rate("0.000002").unwrap(),
            Rate {
                mantissa: 2,
                exp: -6
            }
        );
        assert_eq!(
            parse_rate("2500").unwrap(),
            Rate {
                mantissa: 25,
                exp: 2
            }
        );
        assert_eq!(parse_rate("0").unwrap().mantissa, 0);
        for bad in ["-1e-9", "abc", "1e-16", "", "1.2.3", "1234567890123e-20"] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn slot_chance_is_exact_and_refuses_certainty() {
        // 1e-12 per bit-s, 1000 bits, flux 1e6: 1e-3 per s, 1e-6 per ms.
        let r = parse_rate("1e-12").unwrap();
        assert_eq!(
            slot_chance(r, 1000, 1_000_000),
            Some((1_000_000_000, 1_000_000_000_000_000))
        );
        assert_eq!(slot_chance(parse_rate("1").unwrap(), 1000, 1), None);
    }

    #[test]
    fn times_follow_the_expected_count_and_the_seed() {
        // 0.01 per slot over 100,000 slots: about 1,000 upsets.
        let chance = (1, 100);
        let mut s = RunSeed(3).stream("t");
        let a = draw_times(&mut s, 0, 100_000 * SLOT_NS, chance, 10_000);
        assert!((850..1150).contains(&a.len()), "{}", a.len());
        assert!(a.windows(2).all(|w| w[0] < w[1]));
        let mut s = RunSeed(3).stream("t");
        assert_eq!(a, draw_times(&mut s, 0, 100_000 * SLOT_NS, chance, 10_000));
        let mut s = RunSeed(4).stream("t");
        assert_ne!(a, draw_times(&mut s, 0, 100_000 * SLOT_NS, chance, 10_000));
        let mut s = RunSeed(3).stream("t");
        assert_eq!(draw_times(&mut s, 0, 100_000 * SLOT_NS, chance, 5).len(), 5);
    }
}
