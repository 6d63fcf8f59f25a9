//! An exact-arithmetic oracle, independent of the softfloat under test: it
//! holds the exact result of an operation (as a wide fixed-point number,
//! or as a quotient or square root it can compare against), finds the two
//! neighbouring floats by binary search over bit patterns, and derives the
//! correctly rounded result and the OF/UF/NX flags from the definitions in
//! IEEE 754 (tininess after rounding), one rounding mode at a time.

use std::cmp::Ordering;

use super::encode::{NX, OF, UF};

/// A test-side description of a binary format.
#[derive(Debug, Clone, Copy)]
pub struct Fmt {
    /// Trailing significand bits.
    pub frac: u32,
    /// Exponent bits.
    pub ebits: u32,
}

/// binary32.
pub const F32: Fmt = Fmt { frac: 23, ebits: 8 };
/// binary64.
pub const F64: Fmt = Fmt {
    frac: 52,
    ebits: 11,
};

impl Fmt {
    /// The sign bit.
    pub fn sign_bit(self) -> u64 {
        1 << (self.frac + self.ebits)
    }
    /// Positive infinity.
    pub fn inf_bits(self) -> u64 {
        ((1 << self.ebits) - 1) << self.frac
    }
    /// The largest finite positive number.
    pub fn max_bits(self) -> u64 {
        self.inf_bits() - 1
    }
    /// The canonical NaN.
    pub fn canonical_nan(self) -> u64 {
        self.inf_bits() | (1 << (self.frac - 1))
    }
    /// Largest exponent (also the bias).
    pub fn emax(self) -> i32 {
        (1 << (self.ebits - 1)) - 1
    }
    /// Smallest normal exponent.
    pub fn emin(self) -> i32 {
        1 - self.emax()
    }
    /// Significand bits, hidden bit included.
    pub fn precision(self) -> i32 {
        self.frac as i32 + 1
    }
    /// True for any NaN.
    pub fn is_nan(self, bits: u64) -> bool {
        bits & !self.sign_bit() > self.inf_bits()
    }
    /// True for a signaling NaN.
    pub fn is_snan(self, bits: u64) -> bool {
        self.is_nan(bits) && bits & (1 << (self.frac - 1)) == 0
    }
    /// True for zeros, subnormals and normals.
    pub fn is_finite(self, bits: u64) -> bool {
        bits & !self.sign_bit() < self.inf_bits()
    }
    /// True for either zero.
    pub fn is_zero(self, bits: u64) -> bool {
        bits & !self.sign_bit() == 0
    }
    /// True if the sign bit is set.
    pub fn is_neg(self, bits: u64) -> bool {
        bits & self.sign_bit() != 0
    }
    /// The exact value of a finite bit pattern.
    pub fn val(self, bits: u64) -> Val {
        let mag = bits & !self.sign_bit();
        let biased = (mag >> self.frac) as i32;
        let frac = mag & ((1 << self.frac) - 1);
        let (sig, e) = if biased == 0 {
            (frac, self.emin())
        } else {
            (frac | (1 << self.frac), biased - self.emax())
        };
        Val {
            neg: self.is_neg(bits),
            sig: u128::from(sig),
            exp: e - self.frac as i32,
        }
    }
}

/// An exact dyadic rational `(-1)^neg * sig * 2^exp`.
#[derive(Debug, Clone, Copy)]
pub struct Val {
    /// True if negative.
    pub neg: bool,
    /// Integer significand.
    pub sig: u128,
    /// Power of two of the significand's unit.
    pub exp: i32,
}

impl Val {
    /// Zero.
    pub const ZERO: Val = Val {
        neg: false,
        sig: 0,
        exp: 0,
    };

    /// An integer.
    pub fn int(neg: bool, mag: u64) -> Val {
        Val {
            neg,
            sig: u128::from(mag),
            exp: 0,
        }
    }

    /// The exact product.
    pub fn mul(self, o: Val) -> Val {
        Val {
            neg: self.neg != o.neg,
            sig: self.sig.checked_mul(o.sig).expect("oracle product fits"),
            exp: self.exp + o.exp,
        }
    }

    /// The negation.
    pub fn negate(self) -> Val {
        Val {
            neg: !self.neg,
            ..self
        }
    }

    /// Exact comparison of magnitudes.
    fn cmp_mag(self, o: Val) -> Ordering {
        match (self.sig == 0, o.sig == 0) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            (false, false) => {}
        }
        let lead = |v: Val| v.exp + 128 - v.sig.leading_zeros() as i32;
        match lead(self).cmp(&lead(o)) {
            Ordering::Equal => {}
            ord => return ord,
        }
        // Same leading-bit position: aligning keeps both within 128 bits.
        if self.exp >= o.exp {
            (self.sig << (self.exp - o.exp)).cmp(&o.sig)
        } else {
            self.sig.cmp(&(o.sig << (o.exp - self.exp)))
        }
    }

    /// Exact signed comparison.
    pub fn cmp(self, o: Val) -> Ordering {
        let sign = |v: Val| match (v.sig == 0, v.neg) {
            (true, _) => 0,
            (false, true) => -1,
            (false, false) => 1,
        };
        match sign(self).cmp(&sign(o)) {
            Ordering::Equal if sign(self) < 0 => self.cmp_mag(o).reverse(),
            Ordering::Equal => self.cmp_mag(o),
            ord => ord,
        }
    }
}

const LIMBS: usize = 72;
/// Weight of the least significant bit is 2^-OFFSET.
const OFFSET: i32 = 2240;

/// A two's-complement fixed-point number wide enough for every product and
/// sum of two binary64 values (2^-2240 .. 2^2367).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Big([u64; LIMBS]);

impl Big {
    /// The limbs `[w, w + 3)` holding the magnitude of nonzero `v`: (w, limbs).
    fn place(v: Val) -> (usize, [u64; 3]) {
        let pos = v.exp + OFFSET;
        assert!(pos >= 0, "oracle range (low)");
        let (w, b) = ((pos / 64) as usize, (pos % 64) as u32);
        assert!(w + 3 < LIMBS, "oracle range (high)");
        let (s0, s1) = (v.sig as u64, (v.sig >> 64) as u64);
        let limbs = if b == 0 {
            [s0, s1, 0]
        } else {
            [s0 << b, (s1 << b) | (s0 >> (64 - b)), s1 >> (64 - b)]
        };
        (w, limbs)
    }

    /// The fixed-point form of `v` (which must be in range).
    pub fn from_val(v: Val) -> Big {
        let mut l = [0u64; LIMBS];
        if v.sig != 0 {
            let (w, limbs) = Big::place(v);
            l[w..w + 3].copy_from_slice(&limbs);
        }
        let x = Big(l);
        if v.neg {
            x.neg()
        } else {
            x
        }
    }

    /// The sum (two's complement, no overflow in range).
    pub fn add(&self, o: &Big) -> Big {
        let mut r = [0u64; LIMBS];
        let mut carry = false;
        for (i, slot) in r.iter_mut().enumerate() {
            let (s1, c1) = self.0[i].overflowing_add(o.0[i]);
            let (s2, c2) = s1.overflowing_add(u64::from(carry));
            *slot = s2;
            carry = c1 || c2;
        }
        Big(r)
    }

    /// The negation.
    pub fn neg(&self) -> Big {
        let mut r = [0u64; LIMBS];
        for (slot, &x) in r.iter_mut().zip(self.0.iter()) {
            *slot = !x;
        }
        let mut one = [0u64; LIMBS];
        one[0] = 1;
        Big(r).add(&Big(one))
    }

    /// True for a negative value.
    fn is_negative(&self) -> bool {
        (self.0[LIMBS - 1] as i64) < 0
    }

    /// Index of the highest nonzero limb (0 for zero).
    fn top_limb(&self) -> usize {
        self.0.iter().rposition(|&l| l != 0).unwrap_or(0)
    }

    /// Compares this nonnegative number, whose limbs above `top` are zero,
    /// with the magnitude of `v`.
    fn cmp_mag_val(&self, top: usize, v: Val) -> Ordering {
        let (w, limbs) = if v.sig == 0 {
            (0, [0; 3])
        } else {
            Big::place(v)
        };
        for i in (0..=top.max(w + 2)).rev() {
            let vi = if (w..w + 3).contains(&i) {
                limbs[i - w]
            } else {
                0
            };
            match self.0[i].cmp(&vi) {
                Ordering::Equal => {}
                ord => return ord,
            }
        }
        Ordering::Equal
    }

    /// Signed comparison.
    pub fn cmp_signed(&self, o: &Big) -> Ordering {
        let top = LIMBS - 1;
        match (self.0[top] as i64).cmp(&(o.0[top] as i64)) {
            Ordering::Equal => {}
            ord => return ord,
        }
        for i in (0..top).rev() {
            match self.0[i].cmp(&o.0[i]) {
                Ordering::Equal => {}
                ord => return ord,
            }
        }
        Ordering::Equal
    }
}

/// Shorthand for [`Big::from_val`].
fn big(v: Val) -> Big {
    Big::from_val(v)
}

/// An exact result the oracle can compare with floats and midpoints.
pub enum Exact {
    /// A value that is a finite sum of products of floats, also kept
    /// as sign and magnitude for fast comparisons with single values.
    Sum {
        /// The value.
        x: Box<Big>,
        /// True if negative.
        neg: bool,
        /// Its absolute value.
        mag: Box<Big>,
        /// The highest nonzero limb of `mag`.
        top: usize,
    },
    /// `a / b` (b nonzero).
    Quotient(Val, Val),
    /// `sqrt(a)` (a positive).
    Root(Val),
}

impl Exact {
    /// The exact sum of the given values.
    pub fn sum(terms: &[Val]) -> Exact {
        let mut acc = big(Val::ZERO);
        for &t in terms {
            acc = acc.add(&big(t));
        }
        let neg = acc.is_negative();
        let mag = if neg { acc.neg() } else { acc.clone() };
        Exact::Sum {
            x: Box::new(acc),
            neg,
            top: mag.top_limb(),
            mag: Box::new(mag),
        }
    }

    /// Compares the exact value with `v`.
    pub fn cmp(&self, v: Val) -> Ordering {
        match self {
            Exact::Sum { neg, mag, top, .. } => {
                let v_neg = v.neg && v.sig != 0;
                match (*neg, v_neg) {
                    (false, false) => mag.cmp_mag_val(*top, v),
                    (true, true) => mag.cmp_mag_val(*top, v).reverse(),
                    (false, true) => Ordering::Greater,
                    // X < 0 <= v, unless both are zero (X is never -0).
                    (true, false) => Ordering::Less,
                }
            }
            Exact::Quotient(a, b) => {
                let o = a.cmp(v.mul(*b));
                if b.neg {
                    o.reverse()
                } else {
                    o
                }
            }
            Exact::Root(a) => {
                if v.neg || v.sig == 0 {
                    Ordering::Greater
                } else {
                    a.cmp(v.mul(v))
                }
            }
        }
    }

    /// Compares the exact value with the midpoint `(v + w) / 2` (for
    /// `Root`, `v` and `w` must not be negative).
    pub fn cmp_mid(&self, v: Val, w: Val) -> Ordering {
        match self {
            Exact::Sum { x, .. } => x.add(x).cmp_signed(&big(v).add(&big(w))),
            Exact::Quotient(a, b) => {
                let two_a = big(*a).add(&big(*a));
                let o = two_a.cmp_signed(&big(v.mul(*b)).add(&big(w.mul(*b))));
                if b.neg {
                    o.reverse()
                } else {
                    o
                }
            }
            Exact::Root(a) => {
                let two_a = big(*a).add(&big(*a));
                let four_a = two_a.add(&two_a);
                let mut vw = v.mul(w);
                vw.exp += 1;
                let square = big(v.mul(v)).add(&big(vw)).add(&big(w.mul(w)));
                four_a.cmp_signed(&square)
            }
        }
    }
}

/// Rounds an exact nonzero value to `f` under rounding mode `rm` (0..=4)
/// and returns (bit pattern, OF/UF/NX flags), or `None` for an exact zero
/// (whose sign is a rule of the operation, not of rounding).
pub fn round(f: Fmt, rm: u32, x: &Exact) -> Option<(u64, u8)> {
    let neg = match x.cmp(Val::ZERO) {
        Ordering::Equal => return None,
        o => o == Ordering::Less,
    };
    let sign = if neg { f.sign_bit() } else { 0 };
    // Comparisons of |X| with nonnegative values and midpoints.
    let cmp_mag = |v: Val| {
        if neg {
            x.cmp(v.negate()).reverse()
        } else {
            x.cmp(v)
        }
    };
    let cmp_mag_mid = |v: Val, w: Val| {
        if neg {
            x.cmp_mid(v.negate(), w.negate()).reverse()
        } else {
            x.cmp_mid(v, w)
        }
    };
    let toward_zero = rm == 1 || (rm == 2 && !neg) || (rm == 3 && neg);
    let away = (rm == 2 && neg) || (rm == 3 && !neg);

    let beyond = Val {
        neg: false,
        sig: 1,
        exp: f.emax() + 1,
    };
    if cmp_mag(beyond) != Ordering::Less {
        // Rounds (with unbounded exponent) to at least 2^(emax+1).
        let r = if toward_zero {
            f.max_bits()
        } else {
            f.inf_bits()
        };
        return Some((r | sign, OF | NX));
    }
    // Largest pattern lo with val(lo) <= |X|.
    let (mut lo, mut hi) = (0u64, f.inf_bits());
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if cmp_mag(f.val(mid)) == Ordering::Less {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let lo_val = f.val(lo);
    if cmp_mag(lo_val) == Ordering::Equal {
        return Some((lo | sign, 0));
    }
    let hi_val = if lo == f.max_bits() {
        beyond
    } else {
        f.val(lo + 1)
    };
    let up = if toward_zero {
        false
    } else if away {
        true
    } else {
        match cmp_mag_mid(lo_val, hi_val) {
            Ordering::Less => false,
            Ordering::Greater => true,
            // Tie: away from zero (RMM) or to the even significand (RNE).
            Ordering::Equal => rm == 4 || (lo + 1) % 2 == 0,
        }
    };
    if up && lo == f.max_bits() {
        return Some((f.inf_bits() | sign, OF | NX));
    }
    // Tiny after rounding: |X| rounded to precision p with an unbounded
    // exponent is below 2^emin. Between a = 2^emin - 2^(emin-p) and
    // b = 2^emin that rounding chooses a or b like any other rounding.
    let b = Val {
        neg: false,
        sig: 1,
        exp: f.emin(),
    };
    let a = Val {
        neg: false,
        sig: (1u128 << f.precision()) - 1,
        exp: f.emin() - f.precision(),
    };
    let tiny = if cmp_mag(b) != Ordering::Less {
        false
    } else if cmp_mag(a) != Ordering::Greater || toward_zero {
        true
    } else if away {
        false
    } else {
        cmp_mag_mid(a, b) == Ordering::Less
    };
    let flags = if tiny { UF | NX } else { NX };
    Some(((if up { lo + 1 } else { lo }) | sign, flags))
}
