//! Hand-written vectors for the rules most easily got wrong: exception
//! flags, overflow results per mode, tininess after rounding, NaN rules,
//! signed zeros, comparisons, conversions to integers, moves, FCLASS,
//! FMIN/FMAX and the sign injections.

use super::encode::*;

fn s(v: f32) -> u64 {
    u64::from(v.to_bits())
}
fn d(v: f64) -> u64 {
    v.to_bits()
}

const S_QNAN: u64 = 0x7fc0_0000;
const S_SNAN: u64 = 0x7f80_0001;
const D_QNAN: u64 = 0x7ff8_0000_0000_0000;
const D_SNAN: u64 = 0x7ff0_0000_0000_0001;
const S_MAX: u64 = 0x7f7f_ffff;
const D_MAX: u64 = 0x7fef_ffff_ffff_ffff;
const S_INF: u64 = 0x7f80_0000;
const D_INF: u64 = 0x7ff0_0000_0000_0000;

fn op(funct5: u32, fmt: u32, rm: u32, ops: &[u64]) -> (u64, u8) {
    run_f(fmt, binary(funct5, fmt, rm), ops, 0, 0)
}

#[test]
fn divide_by_zero_and_invalid() {
    assert_eq!(op(FDIV, S, RNE, &[s(1.0), s(0.0)]), (S_INF, DZ));
    assert_eq!(
        op(FDIV, S, RNE, &[s(-1.0), s(0.0)]),
        (S_INF | 0x8000_0000, DZ)
    );
    assert_eq!(op(FDIV, D, RNE, &[d(1.0), d(-0.0)]), (D_INF | 1 << 63, DZ));
    assert_eq!(op(FDIV, S, RNE, &[s(0.0), s(0.0)]), (S_QNAN, NV));
    assert_eq!(op(FDIV, D, RNE, &[d(0.0), d(0.0)]), (D_QNAN, NV));
    assert_eq!(op(FDIV, D, RNE, &[D_INF, D_INF]), (D_QNAN, NV));
    // inf / 0 is an exact infinity: no DZ.
    assert_eq!(op(FDIV, D, RNE, &[D_INF, d(0.0)]), (D_INF, 0));
    assert_eq!(op(FSUB, S, RNE, &[S_INF, S_INF]), (S_QNAN, NV));
    assert_eq!(op(FADD, D, RNE, &[D_INF, D_INF | 1 << 63]), (D_QNAN, NV));
    assert_eq!(op(FMUL, S, RNE, &[s(0.0), S_INF]), (S_QNAN, NV));
    let sqrt = |fmt, a| run_f(fmt, r_type(FSQRT, fmt, 0, RS1, RNE, RD), &[a], 0, 0);
    assert_eq!(sqrt(S, s(-1.0)), (S_QNAN, NV));
    assert_eq!(sqrt(D, d(-0.0)), (d(-0.0), 0));
    assert_eq!(sqrt(D, D_INF | 1 << 63), (D_QNAN, NV));
    assert_eq!(sqrt(D, d(2.0)), (d(2f64.sqrt()), NX));
    assert_eq!(sqrt(S, s(0.25)), (s(0.5), 0));
}

#[test]
fn nan_operands_give_canonical_nan() {
    // Quiet NaN with a payload: canonical result, no flags.
    assert_eq!(op(FADD, S, RNE, &[0xffc0_1234, s(1.0)]), (S_QNAN, 0));
    assert_eq!(
        op(FMUL, D, RNE, &[d(2.0), 0xfff8_0000_0000_0042]),
        (D_QNAN, 0)
    );
    // Signaling NaN: canonical result and NV.
    assert_eq!(op(FADD, S, RNE, &[S_SNAN, s(1.0)]), (S_QNAN, NV));
    assert_eq!(op(FDIV, D, RNE, &[d(1.0), D_SNAN]), (D_QNAN, NV));
    // FMA: inf * 0 is invalid even with a quiet NaN addend.
    let fma = |fmt, ops: &[u64]| run_f(fmt, fused(FMADD, fmt, RNE), ops, 0, 0);
    assert_eq!(fma(D, &[D_INF, d(0.0), D_QNAN]), (D_QNAN, NV));
    assert_eq!(fma(S, &[s(0.0), S_INF, S_QNAN]), (S_QNAN, NV));
    assert_eq!(fma(S, &[s(1.0), s(2.0), S_QNAN]), (S_QNAN, 0));
    assert_eq!(fma(S, &[s(1.0), s(2.0), S_SNAN]), (S_QNAN, NV));
    // inf * x - inf is invalid.
    let fmsub = run_f(D, fused(FMSUB, D, RNE), &[D_INF, d(2.0), D_INF], 0, 0);
    assert_eq!(fmsub, (D_QNAN, NV));
}

#[test]
fn overflow_result_depends_on_mode() {
    let expect_s = [
        (RNE, S_INF, S_INF | 0x8000_0000),
        (RTZ, S_MAX, S_MAX | 0x8000_0000),
        (RDN, S_MAX, S_INF | 0x8000_0000),
        (RUP, S_INF, S_MAX | 0x8000_0000),
        (RMM, S_INF, S_INF | 0x8000_0000),
    ];
    for (rm, pos, neg) in expect_s {
        assert_eq!(op(FMUL, S, rm, &[S_MAX, s(2.0)]), (pos, OF | NX), "rm={rm}");
        assert_eq!(
            op(FMUL, S, rm, &[S_MAX, s(-2.0)]),
            (neg, OF | NX),
            "rm={rm}"
        );
    }
    let expect_d = [
        (RNE, D_INF),
        (RTZ, D_MAX),
        (RDN, D_MAX),
        (RUP, D_INF),
        (RMM, D_INF),
    ];
    for (rm, pos) in expect_d {
        assert_eq!(op(FMUL, D, rm, &[D_MAX, d(2.0)]), (pos, OF | NX), "rm={rm}");
        assert_eq!(op(FADD, D, rm, &[D_MAX, D_MAX]), (pos, OF | NX), "rm={rm}");
    }
    // Just above max but below max + ulp/2: RNE rounds down (NX only),
    // RUP overflows.
    let tiny = d(1.0);
    assert_eq!(op(FADD, D, RNE, &[D_MAX, tiny]), (D_MAX, NX));
    assert_eq!(op(FADD, D, RUP, &[D_MAX, tiny]), (D_INF, OF | NX));
    // Exactly max + ulp/2: a tie, rounds to even = overflow.
    assert_eq!(
        op(FADD, D, RNE, &[D_MAX, d(2f64.powi(970))]),
        (D_INF, OF | NX)
    );
    // Towards zero the unbounded-exponent result is max itself: no overflow.
    assert_eq!(op(FADD, D, RTZ, &[D_MAX, d(2f64.powi(970))]), (D_MAX, NX));
    // Narrowing conversion overflow.
    let mut st = state(D, &[d(1e300)], 0);
    try_run(&mut st, r_type(FCVT_FF, S, 1, RS1, RNE, RD), 0).expect("legal");
    assert_eq!(
        (st.f[RD as usize], st.fflags),
        (0xffff_ffff_0000_0000 | S_INF, OF | NX)
    );
}

#[test]
fn underflow_is_tininess_after_rounding() {
    let min_normal_s = 0x0080_0000;
    // Exact subnormal result: no flags at all.
    assert_eq!(op(FMUL, S, RNE, &[min_normal_s, s(0.5)]), (0x0040_0000, 0));
    // Half the smallest subnormal: tie to even = +0, UF and NX.
    assert_eq!(op(FMUL, S, RNE, &[1, s(0.5)]), (0, UF | NX));
    assert_eq!(op(FMUL, S, RUP, &[1, s(0.5)]), (1, UF | NX));
    assert_eq!(op(FMUL, S, RMM, &[1, s(0.5)]), (1, UF | NX));
    assert_eq!(
        op(FMUL, S, RDN, &[1 | 0x8000_0000, s(0.5)]),
        (0x8000_0001, UF | NX)
    );
    assert_eq!(
        op(FMUL, S, RTZ, &[1 | 0x8000_0000, s(0.5)]),
        (0x8000_0000, UF | NX)
    );
    // (1 - 2^-24) * 2^-126 = 2^-126 - 2^-150: representable with 24 bits
    // and an unbounded exponent, so tiny; rounds (tie, to even) to the
    // smallest normal. UF is still raised.
    assert_eq!(
        op(FMUL, S, RNE, &[0x3f7f_ffff, min_normal_s]),
        (min_normal_s, UF | NX)
    );
    // 2^-126 - 2^-160: with an unbounded exponent it rounds to 2^-126,
    // so it is not tiny after rounding: NX only (tininess before rounding
    // would raise UF here).
    let fma = |rm, ops: &[u64]| run_f(S, fused(FMADD, S, rm), ops, 0, 0);
    let neg_2_80 = s(-(2f32.powi(-80)));
    let pos_2_80 = s(2f32.powi(-80));
    assert_eq!(
        fma(RNE, &[neg_2_80, pos_2_80, min_normal_s]),
        (min_normal_s, NX)
    );
    assert_eq!(
        fma(RUP, &[neg_2_80, pos_2_80, min_normal_s]),
        (min_normal_s, NX)
    );
    // ... but towards zero it rounds below 2^-126: tiny, UF.
    assert_eq!(
        fma(RTZ, &[neg_2_80, pos_2_80, min_normal_s]),
        (0x007f_ffff, UF | NX)
    );
    assert_eq!(
        fma(RDN, &[neg_2_80, pos_2_80, min_normal_s]),
        (0x007f_ffff, UF | NX)
    );
    // Double: smallest subnormal divided by 3.
    assert_eq!(op(FDIV, D, RNE, &[1, d(3.0)]), (0, UF | NX));
    assert_eq!(op(FDIV, D, RUP, &[1, d(3.0)]), (1, UF | NX));
    // Subnormal + subnormal is exact.
    assert_eq!(op(FADD, D, RNE, &[1, 2]), (3, 0));
}

#[test]
fn signed_zero_results() {
    for (fmt, one) in [(S, s(1.0)), (D, d(1.0))] {
        let sign = if fmt == S { 0x8000_0000 } else { 1 << 63 };
        for rm in [RNE, RTZ, RUP, RMM] {
            assert_eq!(op(FSUB, fmt, rm, &[one, one]), (0, 0));
            assert_eq!(op(FADD, fmt, rm, &[0, sign]), (0, 0));
        }
        assert_eq!(op(FSUB, fmt, RDN, &[one, one]), (sign, 0));
        assert_eq!(op(FADD, fmt, RDN, &[0, sign]), (sign, 0));
        assert_eq!(op(FADD, fmt, RNE, &[sign, sign]), (sign, 0));
        assert_eq!(op(FSUB, fmt, RNE, &[sign, 0]), (sign, 0));
        assert_eq!(op(FMUL, fmt, RNE, &[sign, one]), (sign, 0));
        assert_eq!(op(FDIV, fmt, RNE, &[0, one | sign]), (sign, 0));
        // Fused: -(+0 * 1) - (+0) = -0; +0 * 1 - (+0) = +0.
        let f = |opc, rm| run_f(fmt, fused(opc, fmt, rm), &[0, one, 0], 0, 0);
        assert_eq!(f(FNMADD, RNE), (sign, 0));
        assert_eq!(f(FMSUB, RNE), (0, 0));
        assert_eq!(f(FMSUB, RDN), (sign, 0));
        assert_eq!(f(FMADD, RNE), (0, 0));
        assert_eq!(f(FNMSUB, RNE), (0, 0));
    }
}

#[test]
fn fused_ops_round_once() {
    // (1 + 2^-12)^2 - 1 = 2^-11 + 2^-24 exactly; rounding the product
    // first (1 + 2^-11 + 2^-24 is a tie, to even: 1 + 2^-11) would lose
    // the 2^-24 term.
    let a = s(1.0 + 2f32.powi(-12));
    let (r, fl) = run_f(S, fused(FMSUB, S, RNE), &[a, a, s(1.0)], 0, 0);
    assert_eq!((r, fl), (s(2f32.powi(-11) + 2f32.powi(-24)), 0));
    // (1 + 2^-27)^2 - 1 = 2^-26 + 2^-54 exactly.
    let a = d(1.0 + 2f64.powi(-27));
    let (r, fl) = run_f(D, fused(FMSUB, D, RNE), &[a, a, d(1.0)], 0, 0);
    assert_eq!((r, fl), (d(2f64.powi(-26) + 2f64.powi(-54)), 0));
    // (1 + 2^-23)^2 - 1 = 2^-22 + 2^-46 needs 25 bits: a tie, to even in
    // RNE, and one ulp up in RUP (a rounded product would give 2^-22 + 2^-23).
    let a = s(1.0 + 2f32.powi(-23));
    let (r, fl) = run_f(S, fused(FMSUB, S, RNE), &[a, a, s(1.0)], 0, 0);
    assert_eq!((r, fl), (s(2f32.powi(-22)), NX));
    let (r, fl) = run_f(S, fused(FMSUB, S, RUP), &[a, a, s(1.0)], 0, 0);
    assert_eq!((r, fl), (s(2f32.powi(-22)) + 1, NX));
    // FNMADD/FNMSUB signs: -(2*3) - 1 = -7, -(2*3) + 1 = -5.
    let ops = [d(2.0), d(3.0), d(1.0)];
    assert_eq!(run_f(D, fused(FNMADD, D, RNE), &ops, 0, 0), (d(-7.0), 0));
    assert_eq!(run_f(D, fused(FNMSUB, D, RNE), &ops, 0, 0), (d(-5.0), 0));
    assert_eq!(run_f(D, fused(FMSUB, D, RNE), &ops, 0, 0), (d(5.0), 0));
    assert_eq!(run_f(D, fused(FMADD, D, RNE), &ops, 0, 0), (d(7.0), 0));
}

#[test]
fn comparisons() {
    let cmp = |fmt, funct3, a, b| run_x(fmt, r_type(FCMP, fmt, RS2, RS1, funct3, RD), &[a, b], 0);
    const FEQ: u32 = 2;
    const FLT: u32 = 1;
    const FLE: u32 = 0;
    assert_eq!(cmp(S, FEQ, s(1.0), s(1.0)), (1, 0));
    assert_eq!(cmp(S, FEQ, s(0.0), s(-0.0)), (1, 0));
    assert_eq!(cmp(S, FEQ, S_QNAN, s(1.0)), (0, 0));
    assert_eq!(cmp(S, FEQ, S_SNAN, s(1.0)), (0, NV));
    assert_eq!(cmp(D, FEQ, D_QNAN, D_QNAN), (0, 0));
    assert_eq!(cmp(D, FEQ, d(1.0), D_SNAN), (0, NV));
    assert_eq!(cmp(S, FLT, S_QNAN, s(1.0)), (0, NV));
    assert_eq!(cmp(D, FLE, d(1.0), D_QNAN), (0, NV));
    assert_eq!(cmp(D, FLT, d(-0.0), d(0.0)), (0, 0));
    assert_eq!(cmp(D, FLE, d(-0.0), d(0.0)), (1, 0));
    assert_eq!(cmp(D, FLT, d(-2.0), d(-1.0)), (1, 0));
    assert_eq!(cmp(D, FLT, d(-1.0), d(-2.0)), (0, 0));
    assert_eq!(cmp(S, FLE, s(3.0), s(3.0)), (1, 0));
    assert_eq!(cmp(S, FLT, s(3.0), s(3.0)), (0, 0));
    assert_eq!(cmp(S, FLT, s(f32::NEG_INFINITY), s(-f32::MAX)), (1, 0));
}

#[test]
fn conversions_to_integer() {
    let cvt = |fmt, ty, rm, a| run_x(fmt, r_type(FCVT_INT_F, fmt, ty, RS1, rm, RD), &[a], 0);
    assert_eq!(cvt(S, W, RNE, S_QNAN), (0x7fff_ffff, NV));
    assert_eq!(cvt(S, W, RNE, S_QNAN | 0x8000_0000), (0x7fff_ffff, NV));
    assert_eq!(cvt(S, W, RTZ, s(-1e10)), (0xffff_ffff_8000_0000, NV));
    assert_eq!(cvt(S, W, RTZ, s(1e10)), (0x7fff_ffff, NV));
    assert_eq!(
        cvt(S, W, RTZ, s(f32::NEG_INFINITY)),
        (0xffff_ffff_8000_0000, NV)
    );
    assert_eq!(cvt(S, WU, RTZ, s(-0.5)), (0, NX));
    assert_eq!(cvt(S, WU, RNE, s(-0.5)), (0, NX));
    assert_eq!(cvt(S, WU, RDN, s(-0.5)), (0, NV));
    assert_eq!(cvt(S, WU, RTZ, s(-1.0)), (0, NV));
    assert_eq!(cvt(S, WU, RTZ, S_QNAN), (u64::MAX, NV));
    assert_eq!(cvt(S, WU, RTZ, s(3e9)), (0xffff_ffff_b2d0_5e00, 0));
    assert_eq!(cvt(S, W, RNE, s(2.5)), (2, NX));
    assert_eq!(cvt(S, W, RMM, s(2.5)), (3, NX));
    assert_eq!(cvt(S, W, RMM, s(-2.5)), (-3i64 as u64, NX));
    assert_eq!(cvt(S, W, RDN, s(-2.5)), (-3i64 as u64, NX));
    assert_eq!(cvt(S, W, RUP, s(-2.5)), (-2i64 as u64, NX));
    assert_eq!(cvt(S, W, RNE, s(-7.0)), (-7i64 as u64, 0));
    assert_eq!(cvt(D, W, RNE, d(2147483647.5)), (0x7fff_ffff, NV));
    assert_eq!(cvt(D, W, RTZ, d(2147483647.5)), (0x7fff_ffff, NX));
    assert_eq!(cvt(D, W, RNE, d(-2147483648.0)), (0xffff_ffff_8000_0000, 0));
    assert_eq!(
        cvt(D, W, RUP, d(-2147483648.5)),
        (0xffff_ffff_8000_0000, NX)
    );
    assert_eq!(
        cvt(D, W, RNE, d(-2147483648.5)),
        (0xffff_ffff_8000_0000, NX)
    );
    assert_eq!(
        cvt(D, W, RDN, d(-2147483648.5)),
        (0xffff_ffff_8000_0000, NV)
    );
    assert_eq!(
        cvt(D, L, RNE, d(9.223372036854776e18)),
        (i64::MAX as u64, NV)
    );
    assert_eq!(
        cvt(D, L, RNE, d(-9.223372036854776e18)),
        (i64::MIN as u64, 0)
    );
    assert_eq!(cvt(D, L, RNE, D_INF), (i64::MAX as u64, NV));
    assert_eq!(cvt(D, L, RNE, D_SNAN), (i64::MAX as u64, NV));
    assert_eq!(cvt(D, LU, RNE, d(1.8446744073709552e19)), (u64::MAX, NV));
    assert_eq!(
        cvt(D, LU, RNE, 0x43ef_ffff_ffff_ffff),
        (18446744073709549568, 0)
    );
    assert_eq!(cvt(D, LU, RNE, d(-0.0)), (0, 0));
    assert_eq!(cvt(D, LU, RNE, D_INF | 1 << 63), (0, NV));
    assert_eq!(cvt(D, L, RNE, 1), (0, NX));
    assert_eq!(cvt(D, L, RUP, 1), (1, NX));
    assert_eq!(cvt(D, L, RDN, 1 | 1 << 63), (u64::MAX, NX));
}

#[test]
fn conversions_from_integer() {
    let cvt = |fmt, ty, rm, x| run_f(fmt, r_type(FCVT_F_INT, fmt, ty, RS1, rm, RD), &[], 0, x);
    // W reads only the low 32 bits, signed.
    assert_eq!(cvt(D, W, RNE, 0x1234_5678_ffff_ffff), (d(-1.0), 0));
    assert_eq!(cvt(D, WU, RNE, 0x1234_5678_ffff_ffff), (d(4294967295.0), 0));
    assert_eq!(cvt(S, WU, RNE, 0xffff_ffff), (s(4294967296.0), NX));
    assert_eq!(cvt(S, WU, RTZ, 0xffff_ffff), (s(4294967040.0), NX));
    assert_eq!(cvt(S, L, RNE, (1 << 24) + 1), (s(16777216.0), NX));
    assert_eq!(cvt(S, L, RUP, (1 << 24) + 1), (s(16777218.0), NX));
    assert_eq!(cvt(S, L, RNE, 0), (0, 0));
    assert_eq!(
        cvt(D, L, RNE, i64::MIN as u64),
        (d(-9.223372036854776e18), 0)
    );
    assert_eq!(cvt(D, LU, RNE, u64::MAX), (d(1.8446744073709552e19), NX));
    assert_eq!(cvt(D, LU, RTZ, u64::MAX), (0x43ef_ffff_ffff_ffff, NX));
}

#[test]
fn float_conversions_nan_rules() {
    let mut st = state(D, &[D_SNAN], 0);
    try_run(&mut st, r_type(FCVT_FF, S, 1, RS1, RNE, RD), 0).expect("legal");
    assert_eq!((st.f[RD as usize], st.fflags), (0xffff_ffff_7fc0_0000, NV));
    let mut st = state(S, &[0xffc1_2345], 0);
    try_run(&mut st, r_type(FCVT_FF, D, 0, RS1, RNE, RD), 0).expect("legal");
    assert_eq!((st.f[RD as usize], st.fflags), (D_QNAN, 0));
    let mut st = state(S, &[0x0000_0001], 0);
    try_run(&mut st, r_type(FCVT_FF, D, 0, RS1, RNE, RD), 0).expect("legal");
    assert_eq!(
        (st.f[RD as usize], st.fflags),
        (d(f64::from(f32::from_bits(1))), 0)
    );
    let mut st = state(D, &[d(1.0 + 2f64.powi(-30))], 0);
    try_run(&mut st, r_type(FCVT_FF, S, 1, RS1, RUP, RD), 0).expect("legal");
    assert_eq!((st.f[RD as usize], st.fflags), (0xffff_ffff_3f80_0001, NX));
}

#[test]
fn min_max() {
    let mm = |fmt, max: bool, a, b| {
        run_f(
            fmt,
            r_type(FMINMAX, fmt, RS2, RS1, u32::from(max), RD),
            &[a, b],
            0,
            0,
        )
    };
    assert_eq!(mm(S, false, s(0.0), s(-0.0)), (s(-0.0), 0));
    assert_eq!(mm(S, false, s(-0.0), s(0.0)), (s(-0.0), 0));
    assert_eq!(mm(S, true, s(-0.0), s(0.0)), (s(0.0), 0));
    assert_eq!(mm(S, true, s(0.0), s(-0.0)), (s(0.0), 0));
    assert_eq!(mm(D, false, d(-3.0), d(2.0)), (d(-3.0), 0));
    assert_eq!(mm(D, true, d(-3.0), d(2.0)), (d(2.0), 0));
    assert_eq!(mm(D, true, d(-3.0), d(-2.0)), (d(-2.0), 0));
    assert_eq!(mm(D, false, D_QNAN | 5, d(2.0)), (d(2.0), 0));
    assert_eq!(mm(D, true, d(2.0), D_SNAN), (d(2.0), NV));
    assert_eq!(mm(S, false, S_SNAN, S_QNAN), (S_QNAN, NV));
    assert_eq!(mm(S, true, S_QNAN | 7, S_QNAN | 9), (S_QNAN, 0));
    assert_eq!(
        mm(D, false, D_INF | 1 << 63, d(-1e300)),
        (D_INF | 1 << 63, 0)
    );
}

#[test]
fn sign_injection() {
    let sj =
        |fmt, funct3, a, b| run_f(fmt, r_type(FSGNJ, fmt, RS2, RS1, funct3, RD), &[a, b], 0, 0);
    assert_eq!(sj(S, 0, s(1.5), s(-2.0)), (s(-1.5), 0));
    assert_eq!(sj(S, 1, s(1.5), s(-2.0)), (s(1.5), 0));
    assert_eq!(sj(S, 2, s(-1.5), s(-2.0)), (s(1.5), 0));
    assert_eq!(sj(D, 0, D_SNAN, d(-1.0)), (D_SNAN | 1 << 63, 0));
    assert_eq!(sj(D, 1, d(-3.0), d(-3.0)), (d(3.0), 0));
    assert_eq!(sj(D, 2, d(-3.0), d(3.0)), (d(-3.0), 0));
    // An unboxed operand reads as the canonical NaN, sign and all.
    let mut st = state(S, &[s(1.5), s(-2.0)], 0);
    st.f[RS1 as usize] = 0x0000_0000_3fc0_0000;
    try_run(&mut st, r_type(FSGNJ, S, RS2, RS1, 0, RD), 0).expect("legal");
    assert_eq!(st.f[RD as usize], 0xffff_ffff_ffc0_0000);
}

#[test]
fn moves_and_classify() {
    // FMV.X.W: raw low 32 bits, sign-extended, no NaN-box check.
    let mut st = state(S, &[], 0);
    st.f[RS1 as usize] = 0x0000_0000_8000_0001;
    let out = try_run(&mut st, r_type(FMV_X_F, S, 0, RS1, 0, RD), 0);
    assert_eq!(out, Ok(Some(0xffff_ffff_8000_0001)));
    st.f[RS1 as usize] = 0xdead_beef_7fff_ffff;
    let out = try_run(&mut st, r_type(FMV_X_F, S, 0, RS1, 0, RD), 0);
    assert_eq!(out, Ok(Some(0x7fff_ffff)));
    // FMV.X.D: raw 64 bits.
    let out = try_run(&mut st, r_type(FMV_X_F, D, 0, RS1, 0, RD), 0);
    assert_eq!(out, Ok(Some(0xdead_beef_7fff_ffff)));
    // FMV.W.X: NaN-box the low 32 bits; FMV.D.X: raw.
    let out = try_run(
        &mut st,
        r_type(FMV_F_X, S, 0, RS1, 0, RD),
        0x1234_5678_9abc_def0,
    );
    assert_eq!(out, Ok(None));
    assert_eq!(st.f[RD as usize], 0xffff_ffff_9abc_def0);
    try_run(
        &mut st,
        r_type(FMV_F_X, D, 0, RS1, 0, RD),
        0x1234_5678_9abc_def0,
    )
    .expect("legal");
    assert_eq!(st.f[RD as usize], 0x1234_5678_9abc_def0);
    assert_eq!(st.fflags, 0);

    let class = |fmt, a| run_x(fmt, r_type(FMV_X_F, fmt, 0, RS1, 1, RD), &[a], 0);
    let cases_s = [
        (s(f32::NEG_INFINITY), 0),
        (s(-1.0), 1),
        (0x807f_ffff, 2),
        (s(-0.0), 3),
        (s(0.0), 4),
        (0x0000_0001, 5),
        (s(1.0), 6),
        (S_INF, 7),
        (S_SNAN, 8),
        (S_QNAN, 9),
        (0xffc0_0001, 9),
    ];
    for (a, bit) in cases_s {
        assert_eq!(class(S, a), (1 << bit, 0), "fclass.s {a:#x}");
    }
    let cases_d = [
        (D_INF | 1 << 63, 0),
        (d(-1e300), 1),
        (0x8000_0000_0000_0001, 2),
        (d(-0.0), 3),
        (d(0.0), 4),
        (0x000f_ffff_ffff_ffff, 5),
        (D_MAX, 6),
        (D_INF, 7),
        (D_SNAN | 1 << 63, 8),
        (D_QNAN, 9),
    ];
    for (a, bit) in cases_d {
        assert_eq!(class(D, a), (1 << bit, 0), "fclass.d {a:#x}");
    }
}

#[test]
fn dynamic_rounding_and_flag_accrual() {
    // 1/3 in RUP and RDN via frm.
    let third_up = run_f(D, binary(FDIV, D, DYN), &[d(1.0), d(3.0)], RUP as u8, 0);
    let third_dn = run_f(D, binary(FDIV, D, DYN), &[d(1.0), d(3.0)], RDN as u8, 0);
    assert_eq!(third_up.0, third_dn.0 + 1);
    assert_eq!((third_up.1, third_dn.1), (NX, NX));
    // Flags accrue (OR) and are never cleared.
    let mut st = state(D, &[d(1.0), d(0.0)], 0);
    st.fflags = NX;
    try_run(&mut st, binary(FDIV, D, RNE), 0).expect("legal");
    assert_eq!(st.fflags, NX | DZ);
    try_run(&mut st, binary(FADD, D, RNE), 0).expect("legal");
    assert_eq!(st.fflags, NX | DZ);
}
