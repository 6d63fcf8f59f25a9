//! `vfrsqrt7.v` and `vfrec7.v`: 7-bit estimates of 1/sqrt(x) and 1/x, bit-exact as the
//! vector spec defines them. Each output significand comes from a 128-entry table indexed
//! by the input's leading significand bits (and, for the square root, its exponent's
//! parity); the entries are computed here from their definition: the result's fraction at
//! the midpoint of the input interval the index selects, rounded to the nearest 1/128 (in
//! integer arithmetic, so no host floating point is involved). All 256 entries agree with
//! QEMU 7.2's.

use crate::fpu::flags;
use crate::fpu::format::{Format, RoundingMode};

/// floor(sqrt(n)).
fn isqrt(n: u128) -> u128 {
    if n < 2 {
        return n;
    }
    let mut x = 1u128 << (n.ilog2() / 2 + 1);
    loop {
        let y = (x + n / x) / 2;
        if y >= x {
            return x;
        }
        x = y;
    }
}

/// The 1/sqrt table entry for index `i` (bit 6: the exponent's parity, bits 5-0: the
/// top six fraction bits). Odd biased exponents (bit 6 set) hold inputs in [1, 2), even
/// ones in [2, 4) (scaled by a power of 4); the entry is the fraction of the result
/// normalized into [1, 2), in 1/128ths, rounded to nearest (never a tie: the root is
/// irrational).
fn rsqrt_entry(i: u32) -> u64 {
    // The midpoint m = (1 + (f + 1/2) / 64) * s, s = 1 or 2, as q / 128 with q = (129 + 2f) s.
    let f = u128::from(i & 63);
    let s = if i & 64 != 0 { 1 } else { 2 };
    let q = (129 + 2 * f) * s;
    // 1/sqrt(m) is in (1/2, 1]: normalized, r = 2/sqrt(q/128) = 2 * sqrt(128 / q).
    // The entry is round((r - 1) * 128) = round(sqrt(128^3 * 4 / q)) - 128, from the
    // integer square root of the square scaled by 2^40 (20 bits below the point).
    let scaled = 4 * 128 * 128 * 128 * (1u128 << 40) / q;
    ((isqrt(scaled) + (1 << 19)) >> 20) as u64 - 128
}

/// The 1/x table entry for index `i` (the top seven fraction bits): the fraction of
/// 2 / m, m = 1 + (i + 1/2) / 128 the interval's midpoint, in 1/128ths, rounded to
/// nearest (never a tie: the denominator is odd).
fn rec_entry(i: u32) -> u64 {
    // 2 / m = 2 * 256 / (257 + 2i); (2 / m - 1) * 128 = 128 * (512 - 257 - 2i) / (257 + 2i).
    let d = 257 + 2 * u64::from(i);
    (2 * 128 * (512 - d) + d) / (2 * d)
}

/// Normalizes a finite nonzero `bits` of `fmt`: (biased exponent, possibly below 1 for a
/// subnormal; fraction without the implicit bit, `frac_bits` wide).
fn normalize(fmt: Format, bits: u64) -> (i64, u64) {
    let fb = fmt.frac_bits();
    let mut exp = fmt.biased_exp(bits) as i64;
    let mut frac = bits & fmt.frac_mask();
    if exp == 0 {
        // Subnormal: shift the leading one into the implicit position.
        while frac & (1 << fb) == 0 {
            frac <<= 1;
            exp -= 1;
        }
        exp += 1;
        frac &= fmt.frac_mask();
    }
    (exp, frac)
}

/// An estimate's input, taken apart.
struct Fields {
    neg: bool,
    exp_field: u64,
    frac: u64,
    /// The exponent field of infinities and NaNs.
    all_ones: u64,
}

/// `a`'s fields, or `None` for a NaN (whose estimate is the canonical NaN; a signaling
/// one raises invalid).
fn fields(fmt: Format, a: u64, fl: &mut u8) -> Option<Fields> {
    if fmt.is_nan(a) {
        if fmt.is_signaling_nan(a) {
            *fl |= flags::NV;
        }
        return None;
    }
    Some(Fields {
        neg: fmt.is_neg(a),
        exp_field: fmt.biased_exp(a),
        frac: a & fmt.frac_mask(),
        all_ones: (1u64 << fmt.exp_bits()) - 1,
    })
}

/// vfrsqrt7 of `a` (`fmt`: FP32 or FP64).
pub(crate) fn rsqrt7(fmt: Format, a: u64, fl: &mut u8) -> u64 {
    let Some(Fields {
        neg,
        exp_field,
        frac,
        all_ones,
    }) = fields(fmt, a, fl)
    else {
        return fmt.canonical_nan();
    };
    if exp_field == 0 && frac == 0 {
        *fl |= flags::DZ;
        return fmt.inf(neg);
    }
    if neg {
        *fl |= flags::NV;
        return fmt.canonical_nan();
    }
    if exp_field == all_ones {
        return fmt.zero(false);
    }
    let fb = fmt.frac_bits();
    let (exp, frac) = normalize(fmt, a);
    let index = (((exp & 1) as u32) << 6) | (frac >> (fb - 6)) as u32;
    let bias = i64::from(fmt.bias());
    let out_exp = (3 * bias - 1 - exp) / 2;
    fmt.pack(false, out_exp as u64, rsqrt_entry(index) << (fb - 7))
}

/// vfrec7 of `a` (`fmt`: FP32 or FP64) under rounding mode `mode` (which decides only
/// what an overflowing result becomes).
pub(crate) fn rec7(fmt: Format, a: u64, mode: RoundingMode, fl: &mut u8) -> u64 {
    let Some(Fields {
        neg,
        exp_field,
        frac,
        all_ones,
    }) = fields(fmt, a, fl)
    else {
        return fmt.canonical_nan();
    };
    if exp_field == all_ones {
        return fmt.zero(neg);
    }
    if exp_field == 0 && frac == 0 {
        *fl |= flags::DZ;
        return fmt.inf(neg);
    }
    let fb = fmt.frac_bits();
    let (exp, frac) = normalize(fmt, a);
    let bias = i64::from(fmt.bias());
    let out_exp = 2 * bias - 1 - exp;
    if out_exp > 2 * bias {
        // 1/x overflows: the largest finite or infinity, as the rounding mode says.
        *fl |= flags::OF | flags::NX;
        return if mode.truncates(neg) {
            fmt.max_finite(neg)
        } else {
            fmt.inf(neg)
        };
    }
    let sig = rec_entry((frac >> (fb - 7)) as u32) << (fb - 7);
    if out_exp >= 1 {
        return fmt.pack(neg, out_exp as u64, sig);
    }
    // A subnormal result (out_exp 0 or -1): the implicit one shifted in.
    let shifted = ((1u64 << fb) | sig) >> (1 - out_exp);
    fmt.pack(neg, 0, shifted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_start_and_end_where_the_definition_says() {
        // 1/sqrt at the first and last midpoints of [2, 4) and [1, 2).
        let rsqrt = [0, 1, 63, 64, 69, 127].map(rsqrt_entry);
        assert_eq!(rsqrt, [52, 51, 0, 127, 118, 53]);
        // 1/x at the first midpoints of [1, 2), some in between, and the last.
        let rec = [0, 1, 6, 64, 126, 127].map(rec_entry);
        assert_eq!(rec, [127, 125, 116, 42, 1, 0]);
        assert!((0..128).all(|i| rsqrt_entry(i) < 128 && rec_entry(i) < 128));
    }
}
