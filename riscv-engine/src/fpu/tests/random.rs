//! Seeded random tests: operands drawn from a mix of special values,
//! boundary exponents, short significands (exact results and ties) and
//! correlated pairs (cancellation), run through `execute` in every rounding
//! mode (static and dynamic), and checked against
//! - the exact oracle (bits and OF/UF/NX flags, every mode, finite inputs),
//! - the host's IEEE arithmetic for round-to-nearest-even (bits),
//! - the IEEE special-value rules (NaN/infinity/zero operands, NV, DZ),
//! - the directed-rounding invariants RDN <= exact <= RUP.

use std::cmp::Ordering;

use super::encode::*;
use super::oracle::{self, Exact, Fmt, Val, F32, F64};

/// xorshift64* pseudo-random generator (deterministic, seeded).
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (zero is replaced by one).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// A random number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// A random boolean.
    pub fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }
}

fn tfmt(fmt: u32) -> Fmt {
    if fmt == S {
        F32
    } else {
        F64
    }
}

/// Bit pattern of a host value in format `fmt`.
fn host_bits(fmt: u32, v: f64) -> u64 {
    if fmt == S {
        u64::from((v as f32).to_bits())
    } else {
        v.to_bits()
    }
}

/// Special and boundary operands of a format.
fn specials(f: Fmt) -> [u64; 24] {
    let one = (f.emax() as u64) << f.frac;
    let exp_of = |e: i32| ((e + f.emax()) as u64) << f.frac;
    [
        0,
        f.inf_bits(),
        f.canonical_nan(),
        f.canonical_nan() | 0x15,        // quiet NaN with payload
        f.inf_bits() | 1,                // signaling NaN
        f.inf_bits() | 0x2a,             // signaling NaN with payload
        1,                               // min subnormal
        (1 << f.frac) - 1,               // max subnormal
        1 << f.frac,                     // min normal
        f.max_bits(),                    // max finite
        one,                             // 1.0
        one - 1,                         // just below 1
        one + 1,                         // just above 1
        exp_of(-1),                      // 0.5
        exp_of(0) | (1 << (f.frac - 1)), // 1.5
        exp_of(1) | (1 << (f.frac - 2)), // 2.5
        exp_of(31),                      // 2^31
        exp_of(31) - 1,                  // below 2^31
        exp_of(31) + 1,                  // above 2^31
        exp_of(32),                      // 2^32
        exp_of(32) - 1,
        exp_of(63), // 2^63
        exp_of(63) - 1,
        exp_of(64), // 2^64
    ]
}

/// A random operand of format `f` (bit pattern).
pub fn gen(rng: &mut Rng, f: Fmt) -> u64 {
    let sign = if rng.coin() { f.sign_bit() } else { 0 };
    let frac_mask = (1u64 << f.frac) - 1;
    let max_biased = (1u64 << f.ebits) - 2;
    let bias = f.emax() as u64;
    let p = f.precision() as u64;
    match rng.below(10) {
        0 => {
            let s = specials(f);
            sign | s[rng.below(s.len() as u64) as usize]
        }
        1 => rng.next() & (f.sign_bit() << 1).wrapping_sub(1),
        2 => sign | (rng.next() & frac_mask),
        3 => sign | ((1 + rng.below(p + 3)) << f.frac) | (rng.next() & frac_mask),
        4 => sign | ((max_biased - rng.below(p + 3)) << f.frac) | (rng.next() & frac_mask),
        5 => {
            // Short significand, moderate exponent: exact results and ties.
            let e = bias - 20 + rng.below(40);
            sign | (e << f.frac) | (rng.below(16) << (f.frac - 4))
        }
        6 => {
            // Short significand at the bottom: ties in the subnormal range.
            let e = rng.below(8);
            sign | (e << f.frac) | (rng.below(64) << (f.frac - 6)) | rng.below(4)
        }
        _ => sign | ((bias - 30 + rng.below(60)) << f.frac) | (rng.next() & frac_mask),
    }
}

/// A second operand related to `a`: near it, near its negation, or with
/// an exponent chosen so that products or quotients land near the
/// overflow or underflow thresholds.
fn gen_related(rng: &mut Rng, f: Fmt, a: u64) -> u64 {
    let mag = a & !f.sign_bit();
    if !f.is_finite(a) || mag == 0 {
        return gen(rng, f);
    }
    let sign = if rng.coin() { f.sign_bit() } else { 0 };
    let frac_mask = (1u64 << f.frac) - 1;
    let max_biased = (1i64 << f.ebits) - 2;
    let bias = i64::from(f.emax());
    let ea = (mag >> f.frac) as i64;
    let with_exp = |e: i64, frac: u64| -> u64 {
        sign | ((e.clamp(0, max_biased) as u64) << f.frac) | (frac & frac_mask)
    };
    match rng.below(4) {
        0 => {
            // Nearly equal magnitude (cancellation in add/sub).
            let delta = rng.below(8);
            sign | (mag ^ delta)
        }
        1 => {
            // Magnitude shifted by a few binades.
            with_exp(ea + rng.below(60) as i64 - 30, mag ^ rng.below(1 << 8))
        }
        2 => {
            // Product near 2^emin (underflow), quotient near overflow.
            let e = f64::from(f.emin()) as i64 + 2 * bias - ea + rng.below(6) as i64 - 3;
            with_exp(e, rng.next())
        }
        _ => {
            // Product near overflow, quotient near underflow.
            let e = 3 * bias - ea + rng.below(6) as i64 - 3;
            with_exp(e, rng.next())
        }
    }
}

/// The arithmetic operations under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Sqrt,
    Fused(u32),
}

impl Op {
    const ALL: [Op; 9] = [
        Op::Add,
        Op::Sub,
        Op::Mul,
        Op::Div,
        Op::Sqrt,
        Op::Fused(FMADD),
        Op::Fused(FMSUB),
        Op::Fused(FNMSUB),
        Op::Fused(FNMADD),
    ];

    fn arity(self) -> usize {
        match self {
            Op::Sqrt => 1,
            Op::Fused(_) => 3,
            _ => 2,
        }
    }

    fn insn(self, fmt: u32, rm: u32) -> u32 {
        match self {
            Op::Add => binary(FADD, fmt, rm),
            Op::Sub => binary(FSUB, fmt, rm),
            Op::Mul => binary(FMUL, fmt, rm),
            Op::Div => binary(FDIV, fmt, rm),
            Op::Sqrt => r_type(FSQRT, fmt, 0, RS1, rm, RD),
            Op::Fused(opc) => fused(opc, fmt, rm),
        }
    }

    /// (negate product, negate addend) of a fused op.
    fn negations(self) -> (bool, bool) {
        match self {
            Op::Fused(FMSUB) => (false, true),
            Op::Fused(FNMSUB) => (true, false),
            Op::Fused(FNMADD) => (true, true),
            _ => (false, false),
        }
    }

    /// The host's round-to-nearest-even result (as f64 values; single
    /// operations are done in f32).
    fn host(self, fmt: u32, ops: &[u64]) -> u64 {
        let (np, nc) = self.negations();
        if fmt == S {
            let v: Vec<f32> = ops.iter().map(|&b| f32::from_bits(b as u32)).collect();
            let r = match self {
                Op::Add => v[0] + v[1],
                Op::Sub => v[0] - v[1],
                Op::Mul => v[0] * v[1],
                Op::Div => v[0] / v[1],
                Op::Sqrt => v[0].sqrt(),
                Op::Fused(_) => {
                    let a = if np { -v[0] } else { v[0] };
                    let c = if nc { -v[2] } else { v[2] };
                    a.mul_add(v[1], c)
                }
            };
            u64::from(r.to_bits())
        } else {
            let v: Vec<f64> = ops.iter().map(|&b| f64::from_bits(b)).collect();
            let r = match self {
                Op::Add => v[0] + v[1],
                Op::Sub => v[0] - v[1],
                Op::Mul => v[0] * v[1],
                Op::Div => v[0] / v[1],
                Op::Sqrt => v[0].sqrt(),
                Op::Fused(_) => {
                    let a = if np { -v[0] } else { v[0] };
                    let c = if nc { -v[2] } else { v[2] };
                    a.mul_add(v[1], c)
                }
            };
            r.to_bits()
        }
    }

    /// The exact result for finite operands, or `None` when the operation
    /// is not a rounding of a finite value (division by zero, square root
    /// of a negative number).
    fn exact(self, f: Fmt, ops: &[u64]) -> Option<Exact> {
        let v: Vec<Val> = ops.iter().map(|&b| f.val(b)).collect();
        Some(match self {
            Op::Add => Exact::sum(&[v[0], v[1]]),
            Op::Sub => Exact::sum(&[v[0], v[1].negate()]),
            Op::Mul => Exact::sum(&[v[0].mul(v[1])]),
            Op::Div => {
                if v[1].sig == 0 {
                    return None;
                }
                Exact::Quotient(v[0], v[1])
            }
            Op::Sqrt => {
                if v[0].sig == 0 {
                    Exact::sum(&[])
                } else if v[0].neg {
                    return None;
                } else {
                    Exact::Root(v[0])
                }
            }
            Op::Fused(_) => {
                let (np, nc) = self.negations();
                let p = v[0].mul(v[1]);
                let p = if np { p.negate() } else { p };
                let c = if nc { v[2].negate() } else { v[2] };
                Exact::sum(&[p, c])
            }
        })
    }

    /// The sign of an exactly zero result with finite operands.
    fn zero_sign(self, f: Fmt, ops: &[u64], rm: u32) -> bool {
        let neg = |i: usize| f.is_neg(ops[i]);
        let zero = |i: usize| f.is_zero(ops[i]);
        // x + y with x, y (possibly) zero: same-signed zeros keep their
        // sign; any other exact zero sum is +0, or -0 when rounding down.
        let sum_sign = |zx: bool, nx: bool, zy: bool, ny: bool| {
            if zx && zy && nx == ny {
                nx
            } else {
                rm == RDN
            }
        };
        match self {
            Op::Add => sum_sign(zero(0), neg(0), zero(1), neg(1)),
            Op::Sub => sum_sign(zero(0), neg(0), zero(1), !neg(1)),
            Op::Mul | Op::Div => neg(0) != neg(1),
            Op::Sqrt => neg(0),
            Op::Fused(_) => {
                let (np, nc) = self.negations();
                let product_zero = zero(0) || zero(1);
                sum_sign(
                    product_zero,
                    (neg(0) != neg(1)) != np,
                    zero(2),
                    neg(2) != nc,
                )
            }
        }
    }

    /// Expected (bits, flags) when some operand is not finite or the
    /// operation is invalid or divides by zero: these results are exact,
    /// the same in every rounding mode, and the host gets the bits right.
    fn special(self, fmt: u32, ops: &[u64]) -> (u64, u8) {
        let f = tfmt(fmt);
        let host = self.host(fmt, ops);
        let any_nan = ops.iter().any(|&b| f.is_nan(b));
        let any_snan = ops.iter().any(|&b| f.is_snan(b));
        let inf_times_zero = matches!(self, Op::Fused(_))
            && ((!f.is_finite(ops[0]) && !f.is_nan(ops[0]) && f.is_zero(ops[1]))
                || (f.is_zero(ops[0]) && !f.is_finite(ops[1]) && !f.is_nan(ops[1])));
        let mut flags = 0;
        if any_snan || (f.is_nan(host) && !any_nan) || inf_times_zero {
            flags |= NV;
        }
        if self == Op::Div && f.is_zero(ops[1]) && f.is_finite(ops[0]) && !f.is_zero(ops[0]) {
            flags |= DZ;
        }
        let bits = if f.is_nan(host) {
            f.canonical_nan()
        } else {
            host
        };
        (bits, flags)
    }
}

/// Runs `op` in mode `rm`, static or (when `dynamic`) through frm.
fn run_op(op: Op, fmt: u32, ops: &[u64], rm: u32, dynamic: bool) -> (u64, u8) {
    if dynamic {
        run_f(fmt, op.insn(fmt, DYN), ops, rm as u8, 0)
    } else {
        // A junk frm shows a static rm ignores it.
        run_f(fmt, op.insn(fmt, rm), ops, 7, 0)
    }
}

/// The expected (bits, flags) of `op` on `ops` in mode `rm`.
fn expected(op: Op, fmt: u32, ops: &[u64], rm: u32) -> (u64, u8) {
    let f = tfmt(fmt);
    let all_finite = ops.iter().all(|&b| f.is_finite(b));
    match op.exact(f, ops).filter(|_| all_finite) {
        Some(x) => match oracle::round(f, rm, &x) {
            Some(r) => r,
            None => {
                let sign = if op.zero_sign(f, ops, rm) {
                    f.sign_bit()
                } else {
                    0
                };
                (sign, 0)
            }
        },
        None => op.special(fmt, ops),
    }
}

/// Operands aimed at the underflow boundary, where tininess after
/// rounding and ties between subnormals decide the result: products just
/// below 2^emin, 2^emin minus a tiny product, subnormals halved.
fn boundary_operands(rng: &mut Rng, op: Op, f: Fmt) -> Vec<u64> {
    let mut sign = || if rng.coin() { f.sign_bit() } else { 0 };
    let (s1, s2, s3) = (sign(), sign(), sign());
    let one = (f.emax() as u64) << f.frac;
    let min_normal = 1u64 << f.frac;
    match op {
        Op::Div => vec![
            s1 | rng.below(1 << 10),
            s2 | ((f.emax() as u64 + 1 + rng.below(3)) << f.frac),
        ],
        Op::Fused(_) => {
            // Product of two powers of two: 2^-(p + k) * 2^emin.
            let k = f.precision() as u64 + rng.below(12);
            vec![
                s1 | (one - (k << f.frac)),
                s2 | (min_normal + rng.below(2)),
                s3 | (min_normal + rng.below(3)),
            ]
        }
        _ => vec![
            s1 | (one - 1 - rng.below(3)),
            s2 | (min_normal + rng.below(3)),
        ],
    }
}

/// Draws operands for `op`.
fn operands(rng: &mut Rng, op: Op, f: Fmt) -> Vec<u64> {
    if matches!(op, Op::Mul | Op::Div | Op::Fused(_)) && rng.below(12) == 0 {
        return boundary_operands(rng, op, f);
    }
    let a = gen(rng, f);
    let mut v = vec![a];
    if op.arity() >= 2 {
        let b = if rng.below(3) == 0 {
            gen_related(rng, f, a)
        } else {
            gen(rng, f)
        };
        v.push(b);
    }
    if op.arity() == 3 {
        let c = match rng.below(4) {
            // Addend near -(a*b): massive cancellation.
            0 => {
                let fmt = if f.frac == F32.frac { S } else { D };
                let p = Op::Mul.host(fmt, &v);
                (p ^ f.sign_bit()) ^ rng.below(4)
            }
            1 => gen_related(rng, f, a),
            _ => gen(rng, f),
        };
        v.push(c);
    }
    v
}

fn show(fmt: u32, ops: &[u64]) -> String {
    let w = if fmt == S { 10 } else { 18 };
    ops.iter()
        .map(|b| format!("{b:#0w$x}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every arithmetic operation, both formats, all five modes: bits and
/// flags against the oracle and the special-value rules.
#[test]
fn arithmetic_matches_oracle_in_every_mode() {
    let mut rng = Rng::new(0x5eed_f00d);
    for fmt in [S, D] {
        let f = tfmt(fmt);
        for op in Op::ALL {
            for _ in 0..4000 {
                let ops = operands(&mut rng, op, f);
                for rm in [RNE, RTZ, RDN, RUP, RMM] {
                    let dynamic = rng.coin();
                    let got = run_op(op, fmt, &ops, rm, dynamic);
                    let want = expected(op, fmt, &ops, rm);
                    assert_eq!(
                        got,
                        want,
                        "{op:?} fmt={fmt} rm={rm} dynamic={dynamic} ops=[{}]: got (bits, flags) {:#x}/{:#04x}, want {:#x}/{:#04x}",
                        show(fmt, &ops),
                        got.0,
                        got.1,
                        want.0,
                        want.1
                    );
                }
            }
        }
    }
}

/// Round-to-nearest-even results equal the host's (NaNs compare as the
/// canonical NaN), and so does the oracle (a check of the oracle itself).
#[test]
fn nearest_even_matches_host() {
    let mut rng = Rng::new(0xdead_beef);
    for fmt in [S, D] {
        let f = tfmt(fmt);
        for op in Op::ALL {
            for _ in 0..6000 {
                let ops = operands(&mut rng, op, f);
                let host = op.host(fmt, &ops);
                let host = if f.is_nan(host) {
                    f.canonical_nan()
                } else {
                    host
                };
                let (got, _) = run_op(op, fmt, &ops, RNE, false);
                assert_eq!(got, host, "{op:?} fmt={fmt} ops=[{}]", show(fmt, &ops));
                let (oracle_bits, _) = expected(op, fmt, &ops, RNE);
                assert_eq!(
                    oracle_bits,
                    host,
                    "oracle: {op:?} fmt={fmt} ops=[{}]",
                    show(fmt, &ops)
                );
            }
        }
    }
}

/// Orders bit patterns of non-NaN values (both zeros equal).
fn key(f: Fmt, bits: u64) -> i64 {
    let mag = (bits & !f.sign_bit()) as i64;
    if f.is_neg(bits) {
        -mag
    } else {
        mag
    }
}

/// Directed rounding brackets the exact result: RDN <= RUP, equal exactly
/// when the operation is exact (no NX), otherwise adjacent; RTZ is RDN for
/// positive and RUP for negative results; RNE and RMM are one of the two.
/// Exactness is decided by the oracle (comparison with the exact value).
#[test]
fn directed_modes_bracket_the_exact_result() {
    let mut rng = Rng::new(0x0bad_cafe);
    for fmt in [S, D] {
        let f = tfmt(fmt);
        for op in Op::ALL {
            for _ in 0..3000 {
                let ops = operands(&mut rng, op, f);
                if !ops.iter().all(|&b| f.is_finite(b)) {
                    continue;
                }
                let Some(exact) = op.exact(f, &ops) else {
                    continue;
                };
                let r: Vec<(u64, u8)> = [RNE, RTZ, RDN, RUP, RMM]
                    .iter()
                    .map(|&rm| run_op(op, fmt, &ops, rm, false))
                    .collect();
                let (rne, rtz, rdn, rup, rmm) = (r[0].0, r[1].0, r[2].0, r[3].0, r[4].0);
                let ctx = format!("{op:?} fmt={fmt} ops=[{}]", show(fmt, &ops));
                let (kd, ku) = (key(f, rdn), key(f, rup));
                // RDN <= exact <= RUP, checked against the exact value
                // (infinities stand for overflow beyond the finite range).
                if f.is_finite(rdn) {
                    assert_ne!(
                        exact.cmp(f.val(rdn)),
                        Ordering::Less,
                        "RDN above exact: {ctx}"
                    );
                }
                if f.is_finite(rup) {
                    assert_ne!(
                        exact.cmp(f.val(rup)),
                        Ordering::Greater,
                        "RUP below exact: {ctx}"
                    );
                }
                let is_exact = f.is_finite(rdn) && exact.cmp(f.val(rdn)) == Ordering::Equal;
                if is_exact {
                    assert_eq!(kd, ku, "exact but RDN != RUP: {ctx}");
                    assert!(r.iter().all(|&(_, fl)| fl & NX == 0), "exact but NX: {ctx}");
                } else {
                    assert_eq!(kd + 1, ku, "inexact but not one ulp apart: {ctx}");
                    assert!(
                        r.iter().all(|&(_, fl)| fl & NX != 0),
                        "inexact without NX: {ctx}"
                    );
                }
                let negative = ku < 0 || (ku == 0 && kd < 0);
                let toward_zero = if negative { rup } else { rdn };
                assert_eq!(key(f, rtz), key(f, toward_zero), "RTZ: {ctx}");
                for (name, v) in [("RNE", rne), ("RMM", rmm)] {
                    let k = key(f, v);
                    assert!(k == kd || k == ku, "{name} not RDN or RUP: {ctx}");
                }
            }
        }
    }
}

/// A random integer register value with interesting low 32 bits and
/// arbitrary upper bits.
fn gen_int(rng: &mut Rng) -> u64 {
    let limits: [u64; 12] = [
        0,
        1,
        u64::MAX,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_ffff,
        0x1_0000_0000,
        i64::MAX as u64,
        i64::MIN as u64,
        1 << 53,
        (1 << 53) + 1,
        (1 << 24) + 1,
    ];
    match rng.below(5) {
        0 => limits[rng.below(limits.len() as u64) as usize]
            .wrapping_add(rng.below(5))
            .wrapping_sub(2),
        1 => rng.next() >> rng.below(64),
        2 => (rng.next() >> rng.below(64)).wrapping_neg(),
        3 => rng.below(1 << 12) << rng.below(52),
        _ => rng.next(),
    }
}

/// The value integer type `ty` reads from register contents `x`.
fn int_val(ty: u32, x: u64) -> (bool, u64) {
    match ty {
        W => {
            let v = i64::from(x as u32 as i32);
            (v < 0, v.unsigned_abs())
        }
        WU => (false, u64::from(x as u32)),
        L => ((x as i64) < 0, (x as i64).unsigned_abs()),
        _ => (false, x),
    }
}

/// The host's round-to-nearest-even conversion of an integer.
fn host_from_int(fmt: u32, ty: u32, x: u64) -> u64 {
    if fmt == S {
        let v = match ty {
            W => x as u32 as i32 as f32,
            WU => x as u32 as f32,
            L => x as i64 as f32,
            _ => x as f32,
        };
        u64::from(v.to_bits())
    } else {
        let v = match ty {
            W => f64::from(x as u32 as i32),
            WU => f64::from(x as u32),
            L => x as i64 as f64,
            _ => x as f64,
        };
        v.to_bits()
    }
}

/// FCVT.S/D.W/WU/L/LU: oracle in every mode, host in RNE.
#[test]
fn int_to_float_conversions() {
    let mut rng = Rng::new(0x1234_5678);
    for _ in 0..4000 {
        let x = gen_int(&mut rng);
        for fmt in [S, D] {
            let f = tfmt(fmt);
            for ty in [W, WU, L, LU] {
                let (neg, mag) = int_val(ty, x);
                for rm in [RNE, RTZ, RDN, RUP, RMM] {
                    let insn = r_type(FCVT_F_INT, fmt, ty, RS1, rm, RD);
                    let got = run_f(fmt, insn, &[], 0, x);
                    let want =
                        oracle::round(f, rm, &Exact::sum(&[Val::int(neg, mag)])).unwrap_or((0, 0));
                    assert_eq!(got, want, "fcvt fmt={fmt} ty={ty} rm={rm} x={x:#x}");
                    if rm == RNE {
                        assert_eq!(
                            got.0,
                            host_from_int(fmt, ty, x),
                            "host: fmt={fmt} ty={ty} x={x:#x}"
                        );
                    }
                }
            }
        }
    }
}

/// FCVT.S.D and FCVT.D.S: oracle in every mode, host in RNE, NaN rules.
#[test]
fn float_to_float_conversions() {
    let mut rng = Rng::new(0x7777_1111);
    for _ in 0..6000 {
        for (from, to) in [(D, S), (S, D)] {
            let (ff, tf) = (tfmt(from), tfmt(to));
            let a = if from == D && rng.coin() {
                // Doubles near the single range boundaries.
                let e = [1023 - 126, 1023 - 150, 1023 + 127, 1023 - 140][rng.below(4) as usize];
                let e = e + rng.below(5) - 2;
                (if rng.coin() { F64.sign_bit() } else { 0 }) | (e << 52) | (rng.next() >> 12)
            } else {
                gen(&mut rng, ff)
            };
            let rs2 = if from == D { 1 } else { 0 };
            for rm in [RNE, RTZ, RDN, RUP, RMM] {
                let insn = r_type(FCVT_FF, to, rs2, RS1, rm, RD);
                let mut st = state(from, &[a], 0);
                try_run(&mut st, insn, 0).expect("legal");
                let r = st.f[RD as usize];
                let got = (if to == S { r & 0xffff_ffff } else { r }, st.fflags);
                if to == S {
                    assert_eq!(r >> 32, 0xffff_ffff, "boxed");
                }
                let want = if ff.is_nan(a) {
                    (tf.canonical_nan(), if ff.is_snan(a) { NV } else { 0 })
                } else if !ff.is_finite(a) {
                    (
                        tf.inf_bits() | if ff.is_neg(a) { tf.sign_bit() } else { 0 },
                        0,
                    )
                } else {
                    let zero = if ff.is_neg(a) { tf.sign_bit() } else { 0 };
                    oracle::round(tf, rm, &Exact::sum(&[ff.val(a)])).unwrap_or((zero, 0))
                };
                assert_eq!(got, want, "fcvt {from}->{to} rm={rm} a={a:#x}");
                if rm == RNE && !ff.is_nan(a) {
                    let host = if from == D {
                        host_bits(S, f64::from_bits(a))
                    } else {
                        host_bits(D, f64::from(f32::from_bits(a as u32)))
                    };
                    assert_eq!(got.0, host, "host fcvt {from}->{to} a={a:#x}");
                }
            }
        }
    }
}

/// The expected FCVT.int result, modelled with the host's exact
/// integer-rounding functions on f64 (every single and double is an f64).
fn model_to_int(v: f64, ty: u32, rm: u32) -> (u64, u8) {
    let (min, max_excl): (f64, f64) = match ty {
        W => (-2147483648.0, 2147483648.0),
        WU => (0.0, 4294967296.0),
        L => (-9223372036854775808.0, 9223372036854775808.0),
        _ => (0.0, 18446744073709551616.0),
    };
    let saturated = |high: bool| -> u64 {
        match (ty, high) {
            (W, true) => 0x7fff_ffff,
            (W, false) => 0xffff_ffff_8000_0000,
            (WU, true) => u64::MAX, // 0xffffffff sign-extended
            (L, true) => i64::MAX as u64,
            (L, false) => i64::MIN as u64,
            (LU, true) => u64::MAX,
            _ => 0,
        }
    };
    if v.is_nan() {
        return (saturated(true), NV);
    }
    let r = match rm {
        RNE => v.round_ties_even(),
        RTZ => v.trunc(),
        RDN => v.floor(),
        RUP => v.ceil(),
        _ => v.round(),
    };
    if r < min {
        return (saturated(false), NV);
    }
    if r >= max_excl {
        return (saturated(true), NV);
    }
    let i = r as i128;
    let bits = match ty {
        W | WU => i as i64 as u32 as i32 as i64 as u64,
        _ => i as u64,
    };
    (bits, if r != v { NX } else { 0 })
}

/// FCVT.W/WU/L/LU.S/D in every mode against the model.
#[test]
fn float_to_int_conversions() {
    let mut rng = Rng::new(0x4242_4242);
    for _ in 0..5000 {
        for fmt in [S, D] {
            let f = tfmt(fmt);
            let a = if rng.coin() {
                gen(&mut rng, f)
            } else {
                // Values around the integer limits and small fractions.
                let base = [
                    0.3,
                    0.5,
                    1.5,
                    2.5,
                    2147483647.5,
                    2147483648.0,
                    4294967295.5,
                    4294967296.0,
                    9.223372036854776e18,
                    1.8446744073709552e19,
                    1e10,
                ][rng.below(11) as usize];
                let v = if rng.coin() { -base } else { base };
                let bits = host_bits(fmt, v);
                bits.wrapping_add(rng.below(5)).wrapping_sub(2)
            };
            let v = if fmt == S {
                f64::from(f32::from_bits(a as u32))
            } else {
                f64::from_bits(a)
            };
            for ty in [W, WU, L, LU] {
                for rm in [RNE, RTZ, RDN, RUP, RMM] {
                    let insn = r_type(FCVT_INT_F, fmt, ty, RS1, rm, RD);
                    let got = run_x(fmt, insn, &[a], 0);
                    assert_eq!(
                        got,
                        model_to_int(v, ty, rm),
                        "fcvt.int fmt={fmt} ty={ty} rm={rm} a={a:#x}"
                    );
                }
            }
        }
    }
}
