//! The arithmetic operations: add/subtract, multiply, fused multiply-add,
//! divide and square root, on bit patterns of one format.
//!
//! Each computes the exact result (or a sticky stand-in with plenty of
//! extra bits, see `round::round_pack`) with integer arithmetic and rounds
//! it once, so results and flags are correctly rounded in every mode and
//! identical on every host. Special operands follow IEEE 754 with the
//! RISC-V choice that every NaN result is the canonical NaN.

use super::flags;
use super::format::{Format, Num, RoundingMode, Value};
use super::round::round_pack;

/// Bit position at which `add_exact` places the leading bit of both
/// addends: high enough that an operand of up to 106 significant bits (a
/// product of two binary64 significands) gains at least 20 zero bits below,
/// low enough that the sum of two such values fits a `u128`.
const ADD_LEAD: u32 = 125;

/// The NaN result of an operation with a NaN operand (or an invalid
/// operation): raises invalid when asked to, returns the canonical NaN.
fn nan_result(fmt: Format, invalid: bool, fl: &mut u8) -> u64 {
    if invalid {
        *fl |= flags::NV;
    }
    fmt.canonical_nan()
}

/// If any operand is a NaN, the canonical NaN (raising invalid when one is
/// signaling); otherwise `None`.
fn propagate_nan(fmt: Format, operands: &[Value], fl: &mut u8) -> Option<u64> {
    if operands.iter().any(|v| v.is_nan()) {
        let signaling = operands.iter().any(|v| v.is_signaling());
        Some(nan_result(fmt, signaling, fl))
    } else {
        None
    }
}

/// Moves the leading bit of a nonzero significand to bit `lead`, keeping
/// the value (`sig` must have at most `lead + 1` bits).
fn normalize(x: Num, lead: u32) -> Num {
    let shift = lead - (127 - x.sig.leading_zeros());
    Num {
        neg: x.neg,
        exp: x.exp - shift as i32,
        sig: x.sig << shift,
    }
}

/// Shifts right by `shift` bits, OR-ing every dropped bit into bit 0.
fn shift_right_jam(sig: u128, shift: u32) -> u128 {
    if shift == 0 {
        sig
    } else if shift >= 128 {
        u128::from(sig != 0)
    } else {
        (sig >> shift) | u128::from(sig & ((1 << shift) - 1) != 0)
    }
}

/// The sum `a + b` of two finite values with at most 106 significant bits
/// each, exact or sticky as `round_pack` requires. An exactly zero sum of
/// opposite-signed operands is +0, or -0 when rounding down.
fn add_exact(a: Num, b: Num, mode: RoundingMode) -> Num {
    if a.sig == 0 && b.sig == 0 {
        let neg = if a.neg == b.neg {
            a.neg
        } else {
            mode == RoundingMode::Down
        };
        return Num {
            neg,
            exp: 0,
            sig: 0,
        };
    }
    if a.sig == 0 {
        return b;
    }
    if b.sig == 0 {
        return a;
    }
    let (a, b) = (normalize(a, ADD_LEAD), normalize(b, ADD_LEAD));
    let (big, small) = if a.exp >= b.exp { (a, b) } else { (b, a) };
    // Both significands now have at least 20 trailing zero bits, so an
    // alignment shift below 20 is exact and a larger one (which may jam a
    // sticky bit) leaves a sum or difference of more than 2^123: the sticky
    // result is odd (big.sig is even) and far wider than any precision.
    let aligned = shift_right_jam(small.sig, big.exp.abs_diff(small.exp));
    let (neg, sig) = if big.neg == small.neg {
        (big.neg, big.sig + aligned)
    } else if big.sig >= aligned {
        (big.neg, big.sig - aligned)
    } else {
        (small.neg, aligned - big.sig)
    };
    let neg = if sig == 0 {
        mode == RoundingMode::Down
    } else {
        neg
    };
    Num {
        neg,
        exp: big.exp,
        sig,
    }
}

/// The exact product of two finite values.
fn mul_exact(a: Num, b: Num) -> Num {
    Num {
        neg: a.neg != b.neg,
        exp: a.exp + b.exp,
        sig: a.sig * b.sig,
    }
}

/// `a + b` (FADD; FSUB passes `b` with its sign flipped).
pub(crate) fn add(fmt: Format, a: u64, b: u64, mode: RoundingMode, fl: &mut u8) -> u64 {
    let (va, vb) = (fmt.unpack(a), fmt.unpack(b));
    if let Some(nan) = propagate_nan(fmt, &[va, vb], fl) {
        return nan;
    }
    match (va, vb) {
        (Value::Inf { neg: na }, Value::Inf { neg: nb }) if na != nb => nan_result(fmt, true, fl),
        (Value::Inf { neg }, _) | (_, Value::Inf { neg }) => fmt.inf(neg),
        (Value::Num(x), Value::Num(y)) => round_pack(fmt, add_exact(x, y, mode), mode, fl),
        // NaNs were handled above.
        _ => fmt.canonical_nan(),
    }
}

/// `a * b` (FMUL).
pub(crate) fn mul(fmt: Format, a: u64, b: u64, mode: RoundingMode, fl: &mut u8) -> u64 {
    let (va, vb) = (fmt.unpack(a), fmt.unpack(b));
    if let Some(nan) = propagate_nan(fmt, &[va, vb], fl) {
        return nan;
    }
    match (va, vb) {
        (Value::Num(x), Value::Num(y)) => round_pack(fmt, mul_exact(x, y), mode, fl),
        (Value::Inf { neg: na }, Value::Inf { neg: nb }) => fmt.inf(na != nb),
        (Value::Inf { neg: ni }, Value::Num(x)) | (Value::Num(x), Value::Inf { neg: ni }) => {
            if x.sig == 0 {
                nan_result(fmt, true, fl)
            } else {
                fmt.inf(ni != x.neg)
            }
        }
        _ => fmt.canonical_nan(),
    }
}

/// Which of the four fused multiply-add instructions: the signs applied
/// to the product and to the addend before the single-rounding sum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fused {
    /// FMADD: `a * b + c`.
    Madd,
    /// FMSUB: `a * b - c`.
    Msub,
    /// FNMSUB: `-(a * b) + c`.
    Nmsub,
    /// FNMADD: `-(a * b) - c`.
    Nmadd,
}

impl Fused {
    /// (negate the product, negate the addend).
    fn negations(self) -> (bool, bool) {
        match self {
            Fused::Madd => (false, false),
            Fused::Msub => (false, true),
            Fused::Nmsub => (true, false),
            Fused::Nmadd => (true, true),
        }
    }
}

/// Flips the sign of a value (NaNs are left alone: they end canonical).
fn negate(v: Value, flip: bool) -> Value {
    match v {
        Value::Inf { neg } => Value::Inf { neg: neg != flip },
        Value::Num(x) => Value::Num(Num {
            neg: x.neg != flip,
            ..x
        }),
        nan @ Value::Nan { .. } => nan,
    }
}

/// The fused multiply-adds `±(a * b) ± c` with a single rounding.
pub(crate) fn fma(
    fmt: Format,
    kind: Fused,
    [a, b, c]: [u64; 3],
    mode: RoundingMode,
    fl: &mut u8,
) -> u64 {
    let (neg_product, neg_addend) = kind.negations();
    let (va, vb) = (fmt.unpack(a), fmt.unpack(b));
    let vc = negate(fmt.unpack(c), neg_addend);
    let zero_times_inf = matches!(
        (va, vb),
        (Value::Inf { .. }, Value::Num(Num { sig: 0, .. }))
            | (Value::Num(Num { sig: 0, .. }), Value::Inf { .. })
    );
    // RISC-V: inf * 0 raises invalid even when the addend is a quiet NaN.
    if zero_times_inf {
        return nan_result(fmt, true, fl);
    }
    if let Some(nan) = propagate_nan(fmt, &[va, vb, vc], fl) {
        return nan;
    }
    let product = match (va, vb) {
        (Value::Num(x), Value::Num(y)) => negate(Value::Num(mul_exact(x, y)), neg_product),
        (Value::Inf { neg: na }, Value::Inf { neg: nb }) => Value::Inf {
            neg: (na != nb) != neg_product,
        },
        (Value::Inf { neg: ni }, Value::Num(x)) | (Value::Num(x), Value::Inf { neg: ni }) => {
            Value::Inf {
                neg: (ni != x.neg) != neg_product,
            }
        }
        _ => return fmt.canonical_nan(),
    };
    match (product, vc) {
        (Value::Inf { neg: np }, Value::Inf { neg: nc }) if np != nc => nan_result(fmt, true, fl),
        (Value::Inf { neg }, _) | (_, Value::Inf { neg }) => fmt.inf(neg),
        (Value::Num(p), Value::Num(z)) => round_pack(fmt, add_exact(p, z, mode), mode, fl),
        _ => fmt.canonical_nan(),
    }
}

/// `a / b` (FDIV).
pub(crate) fn div(fmt: Format, a: u64, b: u64, mode: RoundingMode, fl: &mut u8) -> u64 {
    let (va, vb) = (fmt.unpack(a), fmt.unpack(b));
    if let Some(nan) = propagate_nan(fmt, &[va, vb], fl) {
        return nan;
    }
    match (va, vb) {
        (Value::Inf { .. }, Value::Inf { .. }) => nan_result(fmt, true, fl),
        (Value::Inf { neg: ni }, Value::Num(y)) => fmt.inf(ni != y.neg),
        (Value::Num(x), Value::Inf { neg: ni }) => fmt.zero(ni != x.neg),
        (Value::Num(x), Value::Num(y)) => {
            let neg = x.neg != y.neg;
            match (x.sig == 0, y.sig == 0) {
                (true, true) => nan_result(fmt, true, fl),
                (false, true) => {
                    *fl |= flags::DZ;
                    fmt.inf(neg)
                }
                (true, false) => fmt.zero(neg),
                (false, false) => {
                    // Dividend to 121 bits, divisor to 61 bits: the quotient
                    // has at least 60 bits, ample for a sticky result.
                    let (n, d) = (normalize(x, 120), normalize(y, 60));
                    let (q, r) = (n.sig / d.sig, n.sig % d.sig);
                    let quotient = Num {
                        neg,
                        exp: n.exp - d.exp,
                        sig: q | u128::from(r != 0),
                    };
                    round_pack(fmt, quotient, mode, fl)
                }
            }
        }
        _ => fmt.canonical_nan(),
    }
}

/// Integer square root: `(floor(sqrt(n)), n - floor(sqrt(n))^2)`, by the
/// bit-by-bit method (exact, no floating point).
fn isqrt(n: u128) -> (u128, u128) {
    let mut rem = n;
    let mut root = 0u128;
    let mut bit = 1u128 << 126;
    while bit > rem {
        bit >>= 2;
    }
    while bit != 0 {
        if rem >= root + bit {
            rem -= root + bit;
            root = (root >> 1) + bit;
        } else {
            root >>= 1;
        }
        bit >>= 2;
    }
    (root, rem)
}

/// `sqrt(a)` (FSQRT). sqrt(-0) is -0; any other negative operand is invalid.
pub(crate) fn sqrt(fmt: Format, a: u64, mode: RoundingMode, fl: &mut u8) -> u64 {
    let va = fmt.unpack(a);
    if let Some(nan) = propagate_nan(fmt, &[va], fl) {
        return nan;
    }
    match va {
        Value::Inf { neg: false } => fmt.inf(false),
        Value::Num(x) if x.sig == 0 => fmt.zero(x.neg),
        Value::Num(x) if !x.neg => {
            // Leading bit to 116 or 117, with an even exponent, so the root
            // has at least 59 bits and is exactly sqrt(sig) * 2^(exp/2).
            let mut x = normalize(x, 116);
            if x.exp % 2 != 0 {
                x.sig <<= 1;
                x.exp -= 1;
            }
            let (root, rem) = isqrt(x.sig);
            let root = Num {
                neg: false,
                exp: x.exp / 2,
                sig: root | u128::from(rem != 0),
            };
            round_pack(fmt, root, mode, fl)
        }
        _ => nan_result(fmt, true, fl),
    }
}
