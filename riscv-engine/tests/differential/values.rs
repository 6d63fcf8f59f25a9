//! The generator's randomness: a splitmix64 PRNG and edge-biased integer and
//! floating-point operand values (signed zeros, infinities, NaNs with payloads,
//! unboxed singles, subnormals, extremes, conversion boundaries).

/// splitmix64.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub(crate) fn u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.u64() % n
    }
    /// Uniform in lo..=hi.
    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
    pub(crate) fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    pub(crate) fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

// ---------------------------------------------------------------- values

pub(crate) const INT_EDGES: &[u64] = &[
    0,
    1,
    2,
    3,
    7,
    u64::MAX,
    u64::MAX - 1,
    i64::MAX as u64,
    i64::MIN as u64,
    i64::MIN as u64 + 1,
    0x7fff_ffff,
    0x8000_0000,
    0x8000_0001,
    0xffff_ffff,
    0xffff_ffff_8000_0000,
    0xffff_ffff_7fff_ffff,
    0x0000_0001_0000_0000,
    0x0000_0001_0000_0001,
    0x0000_0000_ffff_fffe,
    1 << 53,
    (1 << 53) + 1,
    (1 << 53) - 1,
    (1 << 24) + 1,
    (1 << 24) - 1,
    0x00ff_ffff_ffff_ffff,
    0xfff0_0000_0000_0001,
    0x8000_0000_0000_0400,
    0x7fff_ffff_ffff_fc00,
    0x7fff_ffff_ffff_fdff,
    0x0000_0000_0000_0800,
    0xffff_ffff_ffff_f800,
];

/// An edge-biased 64-bit integer.
pub(crate) fn int_value(r: &mut Rng) -> u64 {
    match r.below(12) {
        0..=2 => r.pick(INT_EDGES),
        3 => r.range(-20, 20) as u64,
        4 => {
            let p = 1u64 << r.below(64);
            match r.below(4) {
                0 => p,
                1 => p.wrapping_sub(1),
                2 => p.wrapping_neg(),
                _ => p.wrapping_add(1),
            }
        }
        5 => r.u64() as u32 as i32 as i64 as u64,
        6 => r.u64() as u32 as u64,
        7 => r.range(-2048, 2047) as u64,
        8 => r.u64() & !((1u64 << r.below(64)) - 1),
        9 => r.u64() >> r.below(64),
        _ => r.u64(),
    }
}

/// Divisor/dividend values for M instructions.
pub(crate) fn muldiv_value(r: &mut Rng) -> u64 {
    match r.below(3) {
        0 => r.pick(&[
            0,
            1,
            u64::MAX,
            i64::MIN as u64,
            i64::MAX as u64,
            0xffff_ffff_8000_0000,
            0x8000_0000,
            0xffff_ffff,
            0x7fff_ffff,
            0xffff_ffff_0000_0000,
            0x1_0000_0000,
            2,
            u64::MAX - 1,
        ]),
        _ => int_value(r),
    }
}

pub(crate) fn d(x: f64) -> u64 {
    x.to_bits()
}
pub(crate) fn s(x: f32) -> u32 {
    x.to_bits()
}

pub(crate) fn f64_edges() -> Vec<u64> {
    vec![
        0,
        d(1.0),
        d(0.5),
        d(1.5),
        d(2.5),
        d(-0.5),
        d(-1.5),
        d(3.0),
        d(0.1),
        d(0.49999999999999994),
        0x7ff0_0000_0000_0000, // +inf
        0x7ff8_0000_0000_0000, // canonical qNaN
        0x7ff0_0000_0000_0001, // sNaN
        0x7ff4_0000_0000_0000, // sNaN
        0x7fff_ffff_ffff_ffff, // qNaN, full payload
        0xfff8_0000_0000_0001, // negative qNaN with payload
        0x0000_0000_0000_0001, // min subnormal
        0x000f_ffff_ffff_ffff, // max subnormal
        0x0010_0000_0000_0000, // min normal
        0x7fef_ffff_ffff_ffff, // max
        d(2147483648.0),       // 2^31
        d(2147483647.5),
        d(2147483647.0),
        d(-2147483648.5),
        d(-2147483649.0),
        d(4294967295.5),
        d(4294967296.0),
        d(-1.0),
        d(-0.75),
        d(9223372036854775808.0),  // 2^63
        0x43df_ffff_ffff_ffff,     // largest below 2^63
        d(18446744073709551616.0), // 2^64
        0x43ef_ffff_ffff_ffff,     // largest below 2^64
        d(-9223372036854775808.0),
        0xc3e0_0000_0000_0001, // just below -2^63
        d(4503599627370495.5),
        d(f32::MAX as f64),
        0x47ef_ffff_f000_0000, // FLT_MAX + half an ulp (single)
        0x47ef_ffff_efff_ffff,
        0x47f0_0000_0000_0000, // 2^128
        d(f32::MIN_POSITIVE as f64),
        0x36a0_0000_0000_0000, // 2^-149
        0x3690_0000_0000_0000, // 2^-150
        0x3698_0000_0000_0000, // 1.5 * 2^-150
        0x380f_ffff_f000_0000, // just below FLT_MIN, a tie
        d(1e300),
        d(1e-300),
    ]
}

pub(crate) fn f32_edges() -> Vec<u32> {
    vec![
        0,
        s(1.0),
        s(0.5),
        s(1.5),
        s(2.5),
        s(-0.5),
        s(-1.5),
        s(3.0),
        s(0.1),
        s(-1.0),
        0x7f80_0000, // +inf
        0x7fc0_0000, // canonical qNaN
        0x7f80_0001, // sNaN
        0x7fa0_0000, // sNaN
        0x7fff_ffff,
        0xffc0_0001,
        0x0000_0001, // min subnormal
        0x007f_ffff, // max subnormal
        0x0080_0000, // min normal
        0x7f7f_ffff, // max
        0x4f00_0000, // 2^31
        0x4eff_ffff,
        0x4f80_0000, // 2^32
        0x4f7f_ffff,
        0x5f00_0000, // 2^63
        0x5eff_ffff,
        0x5f80_0000, // 2^64
        0x5f7f_ffff,
        0xcf00_0000, // -2^31
        0xcf00_0001,
        0xdf00_0000, // -2^63
        0xdf00_0001,
        0x3eff_ffff,
        0x4b00_0000, // 2^23
        0x4aff_ffff,
        0x4b7f_ffff,
        s(16777217.0),
    ]
}

/// A double with a random but structured sign, exponent and significand.
pub(crate) fn rand_f64(r: &mut Rng) -> u64 {
    let sign = r.below(2) << 63;
    let exp: u64 = match r.below(10) {
        0 => 0,
        1 => 0x7ff,
        2 => r.below(0x7ff),
        3 => 1 + r.below(60),
        4 => 0x7fe - r.below(60),
        5 => (1023 + r.range(0, 64)) as u64,
        _ => (1023 + r.range(-30, 30)) as u64,
    };
    let m = (1u64 << 52) - 1;
    let man = match r.below(7) {
        0 => 0,
        1 => m,
        2 => 1 << r.below(52),
        3 => r.u64() & m & !((1u64 << r.below(52)) - 1),
        4 => (r.u64() & m) | ((1 << r.below(52)) - 1),
        _ => r.u64() & m,
    };
    sign | (exp << 52) | man
}

pub(crate) fn rand_f32(r: &mut Rng) -> u32 {
    let sign = (r.below(2) as u32) << 31;
    let exp: u32 = match r.below(10) {
        0 => 0,
        1 => 0xff,
        2 => r.below(0xff) as u32,
        3 => 1 + r.below(20) as u32,
        4 => 0xfe - r.below(20) as u32,
        5 => (127 + r.range(0, 64)) as u32,
        _ => (127 + r.range(-20, 20)) as u32,
    };
    let m = (1u32 << 23) - 1;
    let man = match r.below(7) {
        0 => 0,
        1 => m,
        2 => 1 << r.below(23),
        3 => (r.u64() as u32) & m & !((1u32 << r.below(23)) - 1),
        4 => ((r.u64() as u32) & m) | ((1 << r.below(23)) - 1),
        _ => (r.u64() as u32) & m,
    };
    sign | (exp << 23) | man
}

pub(crate) fn f64_value(r: &mut Rng) -> u64 {
    match r.below(10) {
        0..=2 => {
            let v = r.pick(&f64_edges());
            if r.chance(30) {
                v ^ (1 << 63)
            } else {
                v
            }
        }
        3..=6 => rand_f64(r),
        7 => d(r.range(-40, 40) as f64 / 4.0),
        8 => (0x7ff << 52) | (r.below(2) << 63) | (r.u64() & ((1 << 52) - 1)) | 1,
        _ => r.u64(),
    }
}

pub(crate) fn f32_value(r: &mut Rng) -> u32 {
    match r.below(10) {
        0..=2 => {
            let v = r.pick(&f32_edges());
            if r.chance(30) {
                v ^ (1 << 31)
            } else {
                v
            }
        }
        3..=6 => rand_f32(r),
        7 => s(r.range(-40, 40) as f32 / 4.0),
        8 => (0xff << 23) | ((r.below(2) as u32) << 31) | (r.u64() as u32 & 0x7f_ffff) | 1,
        _ => r.u64() as u32,
    }
}

pub(crate) fn boxed(v: u32) -> u64 {
    0xffff_ffff_0000_0000 | u64::from(v)
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fmt {
    S,
    D,
}

impl Fmt {
    pub(crate) fn sfx(self) -> &'static str {
        match self {
            Fmt::S => "s",
            Fmt::D => "d",
        }
    }
}

/// A value for an f register, and what it holds (None: neither a boxed single nor a chosen double).
pub(crate) fn f_reg_value(r: &mut Rng) -> (u64, Option<Fmt>) {
    match r.below(20) {
        0..=8 => (boxed(f32_value(r)), Some(Fmt::S)),
        9..=17 => (f64_value(r), Some(Fmt::D)),
        18 => {
            // A single that is not NaN-boxed.
            let upper = if r.chance(50) { 0 } else { r.u64() as u32 >> 1 };
            ((u64::from(upper) << 32) | u64::from(f32_value(r)), None)
        }
        _ => (r.u64(), None),
    }
}
