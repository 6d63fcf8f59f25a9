//! The non-arithmetic operations that look at a value's order, sign or
//! class: FSGNJ/FSGNJN/FSGNJX, FMIN/FMAX, FEQ/FLT/FLE and FCLASS. None of
//! them rounds; only the NaN rules raise a flag.

use super::flags;
use super::format::Format;

/// Which sign-injection instruction (funct3 of FSGNJ*).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SignInjection {
    /// FSGNJ: the sign of `b`.
    Copy,
    /// FSGNJN: the opposite of the sign of `b`.
    Negate,
    /// FSGNJX: the exclusive or of the signs of `a` and `b`.
    Xor,
}

/// `a` with its sign replaced as `kind` says; bits other than the sign
/// (even of a NaN) are kept. Raises no flags.
pub(crate) fn sign_inject(fmt: Format, kind: SignInjection, a: u64, b: u64) -> u64 {
    let sign = fmt.sign_bit();
    let new_sign = match kind {
        SignInjection::Copy => b & sign,
        SignInjection::Negate => !b & sign,
        SignInjection::Xor => (a ^ b) & sign,
    };
    (a & !sign) | new_sign
}

/// A signed integer that orders non-NaN bit patterns as their values
/// (both zeros map to 0).
fn order_key(fmt: Format, bits: u64) -> i64 {
    let magnitude = (bits & !fmt.sign_bit()) as i64;
    if fmt.is_neg(bits) {
        -magnitude
    } else {
        magnitude
    }
}

/// FMIN (`max == false`) or FMAX: IEEE 754-2019 minimumNumber /
/// maximumNumber. A NaN operand is ignored in favour of the other; two
/// NaNs give the canonical NaN; a signaling NaN raises invalid; -0 is
/// below +0.
pub(crate) fn min_max(fmt: Format, max: bool, a: u64, b: u64, fl: &mut u8) -> u64 {
    if fmt.is_signaling_nan(a) || fmt.is_signaling_nan(b) {
        *fl |= flags::NV;
    }
    match (fmt.is_nan(a), fmt.is_nan(b)) {
        (true, true) => fmt.canonical_nan(),
        (true, false) => b,
        (false, true) => a,
        (false, false) => {
            let (ka, kb) = (order_key(fmt, a), order_key(fmt, b));
            let a_first = if ka != kb {
                (ka < kb) != max
            } else {
                // Equal values: differ at most in the sign of a zero.
                fmt.is_neg(a) != max
            };
            if a_first {
                a
            } else {
                b
            }
        }
    }
}

/// Which comparison (funct3 of FEQ/FLT/FLE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Comparison {
    /// FEQ: quiet equality (invalid only for signaling NaNs).
    Eq,
    /// FLT: signaling less-than (invalid for any NaN).
    Lt,
    /// FLE: signaling less-or-equal (invalid for any NaN).
    Le,
}

/// Compares `a` and `b`; any NaN makes the result false.
pub(crate) fn compare(fmt: Format, kind: Comparison, a: u64, b: u64, fl: &mut u8) -> bool {
    let any_nan = fmt.is_nan(a) || fmt.is_nan(b);
    let any_signaling = fmt.is_signaling_nan(a) || fmt.is_signaling_nan(b);
    let invalid = match kind {
        Comparison::Eq => any_signaling,
        Comparison::Lt | Comparison::Le => any_nan,
    };
    if invalid {
        *fl |= flags::NV;
    }
    if any_nan {
        return false;
    }
    let (ka, kb) = (order_key(fmt, a), order_key(fmt, b));
    match kind {
        Comparison::Eq => ka == kb,
        Comparison::Lt => ka < kb,
        Comparison::Le => ka <= kb,
    }
}

/// FCLASS: a one-hot 10-bit mask of the class of `a`
/// (bit 0 -inf, 1 negative normal, 2 negative subnormal, 3 -0, 4 +0,
/// 5 positive subnormal, 6 positive normal, 7 +inf, 8 signaling NaN,
/// 9 quiet NaN).
pub(crate) fn classify(fmt: Format, a: u64) -> u64 {
    let bit = if fmt.is_nan(a) {
        if fmt.is_signaling_nan(a) {
            8
        } else {
            9
        }
    } else {
        let neg = fmt.is_neg(a);
        let biased = fmt.biased_exp(a);
        let frac = a & fmt.frac_mask();
        let positive_bit = if biased == fmt.biased_exp(fmt.inf(false)) {
            7 // infinity
        } else if biased != 0 {
            6 // normal
        } else if frac != 0 {
            5 // subnormal
        } else {
            4 // zero
        };
        if neg {
            7 - positive_bit
        } else {
            positive_bit
        }
    };
    1 << bit
}
