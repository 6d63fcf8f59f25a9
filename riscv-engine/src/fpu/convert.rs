//! Conversions: between the two float formats (FCVT.S.D, FCVT.D.S), from
//! integers to floats (FCVT.S/D.W/WU/L/LU) and from floats to integers
//! (FCVT.W/WU/L/LU.S/D), with RISC-V's saturating out-of-range results.

use super::flags;
use super::format::{Format, Num, RoundingMode, Value};
use super::round::{round_pack, shift_round};

/// An integer operand or result type of a conversion (the `rs2` field).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IntType {
    /// Signed 32-bit (W).
    W,
    /// Unsigned 32-bit (WU).
    Wu,
    /// Signed 64-bit (L).
    L,
    /// Unsigned 64-bit (LU).
    Lu,
}

impl IntType {
    /// Decodes the `rs2` field of an integer conversion.
    pub(crate) fn from_rs2(rs2: usize) -> Option<Self> {
        match rs2 {
            0 => Some(Self::W),
            1 => Some(Self::Wu),
            2 => Some(Self::L),
            3 => Some(Self::Lu),
            _ => None,
        }
    }

    /// True for the signed types.
    fn signed(self) -> bool {
        matches!(self, Self::W | Self::L)
    }

    /// Width in bits.
    fn bits(self) -> u32 {
        match self {
            Self::W | Self::Wu => 32,
            Self::L | Self::Lu => 64,
        }
    }

    /// Magnitude of the most negative value (0 for unsigned types).
    fn min_magnitude(self) -> u128 {
        if self.signed() {
            1 << (self.bits() - 1)
        } else {
            0
        }
    }

    /// The largest value.
    fn max_value(self) -> u128 {
        if self.signed() {
            (1 << (self.bits() - 1)) - 1
        } else {
            (1 << self.bits()) - 1
        }
    }

    /// The register value for a result: `neg` and magnitude `mag` (in
    /// range), sign-extended from the type's width to 64 bits as RV64
    /// requires for the 32-bit types (also the unsigned one).
    fn to_register(self, neg: bool, mag: u128) -> u64 {
        let v = if neg {
            (mag as u64).wrapping_neg()
        } else {
            mag as u64
        };
        match self {
            Self::W | Self::Wu => v as u32 as i32 as i64 as u64,
            Self::L | Self::Lu => v,
        }
    }

    /// The value of integer register contents read as this type.
    fn read_register(self, x: u64) -> Num {
        let (neg, mag) = match self {
            Self::W => {
                let v = i64::from(x as u32 as i32);
                (v < 0, v.unsigned_abs())
            }
            Self::Wu => (false, u64::from(x as u32)),
            Self::L => {
                let v = x as i64;
                (v < 0, v.unsigned_abs())
            }
            Self::Lu => (false, x),
        };
        Num {
            neg,
            exp: 0,
            sig: u128::from(mag),
        }
    }
}

/// Converts between the float formats (`from` to `to`). Widening is exact;
/// narrowing rounds. A NaN becomes the canonical NaN, invalid if signaling.
pub(crate) fn float_to_float(
    from: Format,
    to: Format,
    a: u64,
    mode: RoundingMode,
    fl: &mut u8,
) -> u64 {
    match from.unpack(a) {
        Value::Nan { signaling } => {
            if signaling {
                *fl |= flags::NV;
            }
            to.canonical_nan()
        }
        Value::Inf { neg } => to.inf(neg),
        Value::Num(x) => round_pack(to, x, mode, fl),
    }
}

/// Converts integer register contents `x`, read as `ty`, to `fmt`.
pub(crate) fn int_to_float(
    fmt: Format,
    ty: IntType,
    x: u64,
    mode: RoundingMode,
    fl: &mut u8,
) -> u64 {
    round_pack(fmt, ty.read_register(x), mode, fl)
}

/// Converts a float to integer type `ty`, returning the 64-bit register
/// value. The value is rounded to an integer by `mode`; a NaN, an infinity
/// or a rounded value outside the type raises invalid (only) and gives the
/// nearest bound, NaN counting as positive. Otherwise inexact is raised
/// when rounding changed the value.
pub(crate) fn float_to_int(
    fmt: Format,
    ty: IntType,
    a: u64,
    mode: RoundingMode,
    fl: &mut u8,
) -> u64 {
    let saturate = |neg: bool, fl: &mut u8| {
        *fl |= flags::NV;
        if neg {
            ty.to_register(true, ty.min_magnitude())
        } else {
            ty.to_register(false, ty.max_value())
        }
    };
    let x = match fmt.unpack(a) {
        Value::Nan { .. } => return saturate(false, fl),
        Value::Inf { neg } => return saturate(neg, fl),
        Value::Num(x) => x,
    };
    if x.sig == 0 {
        return 0;
    }
    // A significand has at most 53 bits, so anything scaled by more than
    // 2^64 is out of every type's range (and the shift below cannot wrap).
    if x.exp > 64 {
        return saturate(x.neg, fl);
    }
    let (mag, inexact) = shift_round(x.sig, -x.exp, x.neg, mode);
    let limit = if x.neg {
        ty.min_magnitude()
    } else {
        ty.max_value()
    };
    if mag > limit {
        return saturate(x.neg, fl);
    }
    if inexact {
        *fl |= flags::NX;
    }
    ty.to_register(x.neg, mag)
}
