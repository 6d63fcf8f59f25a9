//! Rounding: turning an exact (or sticky) intermediate result into a bit
//! pattern of a format under a rounding mode, with the overflow, underflow
//! and inexact flags IEEE 754 and RISC-V define (tininess is detected after
//! rounding). Every arithmetic operation funnels through [`round_pack`], so
//! all modes and flags are handled in this one place.

use super::flags;
use super::format::{Format, Num, RoundingMode};

/// Drops the low `shift` bits of `sig`, rounding the kept part by `mode`
/// for a value of sign `neg`. A `shift` of zero or less shifts left (exact).
///
/// Returns the rounded kept bits (which may have carried one bit higher)
/// and whether any nonzero bit was dropped (the result is inexact).
pub(crate) fn shift_round(sig: u128, shift: i32, neg: bool, mode: RoundingMode) -> (u128, bool) {
    if shift <= 0 {
        // Callers only shift left by small amounts (the result fits).
        return (sig << shift.unsigned_abs(), false);
    }
    // Beyond 128 bits everything is dropped; a lone sticky bit keeps the
    // "nonzero but below half" information intact.
    let (sig, shift) = if shift > 128 {
        (u128::from(sig != 0), 128)
    } else {
        (sig, shift.unsigned_abs())
    };
    let (kept, rem) = if shift == 128 {
        (0, sig)
    } else {
        (sig >> shift, sig & ((1 << shift) - 1))
    };
    let half = 1u128 << (shift - 1);
    let up = match mode {
        RoundingMode::NearestEven => rem > half || (rem == half && kept & 1 == 1),
        RoundingMode::NearestMaxMagnitude => rem >= half,
        RoundingMode::TowardZero => false,
        RoundingMode::Down => rem != 0 && neg,
        RoundingMode::Up => rem != 0 && !neg,
    };
    (kept + u128::from(up), rem != 0)
}

/// Rounds `x` to `fmt` under `mode`, OR-ing OF/UF/NX into `fl`, and returns
/// the bit pattern.
///
/// `x` is either exact, or is *sticky*: its `sig` is odd and the true value
/// lies strictly between `(sig - 1) * 2^exp` and `(sig + 1) * 2^exp`. A
/// sticky `x` must carry at least `precision + 2` significant bits so that
/// its lowest bit sits at least two places below the rounding position;
/// then no rounding boundary (representable number or midpoint) lies in
/// that open interval, and rounding the odd stand-in gives the same result
/// and flags as rounding the true value.
pub(crate) fn round_pack(fmt: Format, x: Num, mode: RoundingMode, fl: &mut u8) -> u64 {
    if x.sig == 0 {
        return fmt.zero(x.neg);
    }
    let p = fmt.precision() as i32;
    let emin = fmt.emin();
    let msb = 127 - x.sig.leading_zeros() as i32;
    // Exponent of the leading bit of the (unrounded) value.
    let lead = x.exp + msb;
    // Exponent of the least significant bit the result can keep: normal
    // numbers keep p bits, subnormals stop at the fixed quantum 2^(emin-p+1).
    let lsb = lead.max(emin) - (p - 1);
    let (mut kept, inexact) = shift_round(x.sig, lsb - x.exp, x.neg, mode);

    if inexact {
        *fl |= flags::NX;
        // Tiny after rounding: the value rounded to p bits with an
        // unbounded exponent range is below 2^emin. Only a value just
        // below 2^emin can round up to it.
        let tiny = if lead < emin - 1 {
            true
        } else if lead == emin - 1 {
            let (unbounded, _) = shift_round(x.sig, lead - (p - 1) - x.exp, x.neg, mode);
            unbounded < 1 << p
        } else {
            false
        };
        if tiny {
            *fl |= flags::UF;
        }
    }

    let mut lsb = lsb;
    if kept == 1 << p {
        // Rounding carried out of the significand: renormalize.
        kept >>= 1;
        lsb += 1;
    }
    if kept == 0 {
        return fmt.zero(x.neg);
    }
    if kept < 1 << (p - 1) {
        // Subnormal (lsb is the subnormal quantum here).
        return fmt.pack(x.neg, 0, kept as u64);
    }
    let exp = lsb + p - 1;
    if exp > fmt.emax() {
        *fl |= flags::OF | flags::NX;
        return if mode.truncates(x.neg) {
            fmt.max_finite(x.neg)
        } else {
            fmt.inf(x.neg)
        };
    }
    fmt.pack(x.neg, (exp + fmt.bias()) as u64, kept as u64)
}
