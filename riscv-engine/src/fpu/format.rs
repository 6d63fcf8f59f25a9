//! The two IEEE 754 binary interchange formats of F and D (binary32 and
//! binary64): their field layout, their special values, and unpacking of a
//! bit pattern into a sign/exponent/significand value that the arithmetic
//! can work on with plain integers.

/// An IEEE 754 rounding-direction attribute, as encoded in the `rm` field.
///
/// Only the five valid encodings exist here; `rm` values 5 and 6 and an
/// invalid dynamic `frm` are rejected before a `RoundingMode` is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RoundingMode {
    /// Round to nearest, ties to even (rm = 0).
    NearestEven,
    /// Round towards zero (rm = 1).
    TowardZero,
    /// Round down, towards negative infinity (rm = 2).
    Down,
    /// Round up, towards positive infinity (rm = 3).
    Up,
    /// Round to nearest, ties to max magnitude (rm = 4).
    NearestMaxMagnitude,
}

impl RoundingMode {
    /// Decodes a static rounding mode 0..=4; anything else is not a mode.
    pub(crate) fn from_bits(bits: u8) -> Option<Self> {
        match bits {
            0 => Some(Self::NearestEven),
            1 => Some(Self::TowardZero),
            2 => Some(Self::Down),
            3 => Some(Self::Up),
            4 => Some(Self::NearestMaxMagnitude),
            _ => None,
        }
    }

    /// True when this mode, applied to a value of sign `neg`, never
    /// increases the magnitude (it truncates); overflow then gives the
    /// largest finite number instead of infinity.
    pub(crate) fn truncates(self, neg: bool) -> bool {
        match self {
            Self::TowardZero => true,
            Self::Down => !neg,
            Self::Up => neg,
            Self::NearestEven | Self::NearestMaxMagnitude => false,
        }
    }
}

/// A binary floating-point format, described by its field widths. Bit
/// patterns of either format are carried in the low bits of a `u64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Format {
    /// Width of the trailing significand field.
    frac_bits: u32,
    /// Width of the biased exponent field.
    exp_bits: u32,
}

/// binary32, the `.S` format (fmt = 00).
pub(crate) const SINGLE: Format = Format {
    frac_bits: 23,
    exp_bits: 8,
};

/// binary64, the `.D` format (fmt = 01).
pub(crate) const DOUBLE: Format = Format {
    frac_bits: 52,
    exp_bits: 11,
};

/// A finite number `(-1)^neg * sig * 2^exp` (zero when `sig == 0`).
///
/// Used both for unpacked operands and for exact (or sticky) intermediate
/// results handed to rounding; see `round::round_pack` for the sticky rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Num {
    /// Sign: true for negative.
    pub(crate) neg: bool,
    /// Exponent of the least significant bit of `sig`.
    pub(crate) exp: i32,
    /// Integer significand.
    pub(crate) sig: u128,
}

/// An unpacked operand: what class it is and, for numbers, its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Value {
    /// Any NaN; payloads never matter because results are canonical.
    Nan {
        /// True for a signaling NaN (most significant fraction bit clear).
        signaling: bool,
    },
    /// An infinity of the given sign (true for negative).
    Inf {
        /// True for negative infinity.
        neg: bool,
    },
    /// A zero, subnormal or normal number.
    Num(Num),
}

impl Value {
    /// True for a signaling NaN: operations on it raise invalid.
    pub(crate) fn is_signaling(self) -> bool {
        matches!(self, Value::Nan { signaling: true })
    }

    /// True for any NaN.
    pub(crate) fn is_nan(self) -> bool {
        matches!(self, Value::Nan { .. })
    }
}

impl Format {
    /// Width of the trailing significand field (23 or 52).
    pub(crate) fn frac_bits(self) -> u32 {
        self.frac_bits
    }

    /// Width of the biased exponent field.
    pub(crate) fn exp_bits(self) -> u32 {
        self.exp_bits
    }

    /// Number of significand bits including the hidden bit (24 or 53).
    pub(crate) fn precision(self) -> u32 {
        self.frac_bits + 1
    }

    /// The exponent bias, which is also the largest unbiased exponent.
    pub(crate) fn bias(self) -> i32 {
        (1 << (self.exp_bits - 1)) - 1
    }

    /// The smallest normal unbiased exponent.
    pub(crate) fn emin(self) -> i32 {
        1 - self.bias()
    }

    /// The largest unbiased exponent of a finite number.
    pub(crate) fn emax(self) -> i32 {
        self.bias()
    }

    /// The sign bit of a bit pattern.
    pub(crate) fn sign_bit(self) -> u64 {
        1 << (self.frac_bits + self.exp_bits)
    }

    /// Mask of the trailing significand field.
    pub(crate) fn frac_mask(self) -> u64 {
        (1 << self.frac_bits) - 1
    }

    /// All-ones biased exponent (infinities and NaNs).
    fn exp_all_ones(self) -> u64 {
        (1 << self.exp_bits) - 1
    }

    /// Packs the three fields into a bit pattern.
    pub(crate) fn pack(self, neg: bool, biased_exp: u64, frac: u64) -> u64 {
        let sign = if neg { self.sign_bit() } else { 0 };
        sign | (biased_exp << self.frac_bits) | (frac & self.frac_mask())
    }

    /// Signed zero.
    pub(crate) fn zero(self, neg: bool) -> u64 {
        self.pack(neg, 0, 0)
    }

    /// Signed infinity.
    pub(crate) fn inf(self, neg: bool) -> u64 {
        self.pack(neg, self.exp_all_ones(), 0)
    }

    /// Largest-magnitude finite number of the given sign.
    pub(crate) fn max_finite(self, neg: bool) -> u64 {
        self.pack(neg, self.exp_all_ones() - 1, self.frac_mask())
    }

    /// The canonical NaN (positive, quiet, payload zero): the only NaN an
    /// F/D arithmetic instruction ever produces.
    pub(crate) fn canonical_nan(self) -> u64 {
        self.pack(false, self.exp_all_ones(), 1 << (self.frac_bits - 1))
    }

    /// True if the sign bit of `bits` is set.
    pub(crate) fn is_neg(self, bits: u64) -> bool {
        bits & self.sign_bit() != 0
    }

    /// Biased exponent field of `bits`.
    pub(crate) fn biased_exp(self, bits: u64) -> u64 {
        (bits >> self.frac_bits) & self.exp_all_ones()
    }

    /// True if `bits` encodes a NaN.
    pub(crate) fn is_nan(self, bits: u64) -> bool {
        self.biased_exp(bits) == self.exp_all_ones() && bits & self.frac_mask() != 0
    }

    /// True if `bits` encodes a signaling NaN.
    pub(crate) fn is_signaling_nan(self, bits: u64) -> bool {
        self.is_nan(bits) && bits & (1 << (self.frac_bits - 1)) == 0
    }

    /// Unpacks a bit pattern (only the low `1 + exp_bits + frac_bits` bits
    /// are looked at) into a [`Value`].
    pub(crate) fn unpack(self, bits: u64) -> Value {
        let neg = self.is_neg(bits);
        let biased = self.biased_exp(bits);
        let frac = bits & self.frac_mask();
        if biased == self.exp_all_ones() {
            if frac == 0 {
                Value::Inf { neg }
            } else {
                Value::Nan {
                    signaling: frac & (1 << (self.frac_bits - 1)) == 0,
                }
            }
        } else if biased == 0 {
            // Zero or subnormal: no hidden bit, exponent of emin.
            Value::Num(Num {
                neg,
                exp: self.emin() - self.frac_bits as i32,
                sig: u128::from(frac),
            })
        } else {
            Value::Num(Num {
                neg,
                exp: biased as i32 - self.bias() - self.frac_bits as i32,
                sig: u128::from(frac | (1 << self.frac_bits)),
            })
        }
    }
}
