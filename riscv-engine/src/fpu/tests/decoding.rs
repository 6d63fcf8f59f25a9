//! Decoding: reserved rounding modes, invalid encodings, and the treatment
//! of single-precision operands that are not properly NaN-boxed.

use super::encode::*;
use crate::fpu::{execute, FpState, IllegalFp};

/// Asserts that `insn` is illegal and leaves the state untouched.
fn assert_illegal(insn: u32, frm: u8) {
    let mut st = state(D, &[0x3ff0_0000_0000_0000, 0x4000_0000_0000_0000, 0], frm);
    st.fflags = 0;
    let before = st.clone();
    assert_eq!(
        execute(&mut st, insn, 5),
        Err(IllegalFp),
        "insn {insn:#010x} frm={frm}"
    );
    assert_eq!(st, before, "illegal insn {insn:#010x} changed state");
}

/// Asserts that `insn` executes.
fn assert_legal(insn: u32, frm: u8) {
    let mut st = state(D, &[0x3ff0_0000_0000_0000, 0x4000_0000_0000_0000, 0], frm);
    assert!(
        execute(&mut st, insn, 5).is_ok(),
        "insn {insn:#010x} frm={frm}"
    );
}

/// Every instruction that has a rounding-mode field, with that field.
fn with_rm(rm: u32) -> Vec<u32> {
    let mut v = Vec::new();
    for fmt in [S, D] {
        for f5 in [FADD, FSUB, FMUL, FDIV] {
            v.push(binary(f5, fmt, rm));
        }
        v.push(r_type(FSQRT, fmt, 0, RS1, rm, RD));
        for opc in [FMADD, FMSUB, FNMSUB, FNMADD] {
            v.push(fused(opc, fmt, rm));
        }
        for ty in [W, WU, L, LU] {
            v.push(r_type(FCVT_INT_F, fmt, ty, RS1, rm, RD));
            v.push(r_type(FCVT_F_INT, fmt, ty, RS1, rm, RD));
        }
    }
    v.push(r_type(FCVT_FF, S, 1, RS1, rm, RD));
    v.push(r_type(FCVT_FF, D, 0, RS1, rm, RD));
    v
}

#[test]
fn reserved_rounding_modes_are_illegal() {
    for rm in [5, 6] {
        for insn in with_rm(rm) {
            assert_illegal(insn, 0);
        }
    }
    // Dynamic mode with an invalid frm.
    for frm in [5, 6, 7] {
        for insn in with_rm(DYN) {
            assert_illegal(insn, frm);
        }
    }
    // Valid static and dynamic modes are fine.
    for rm in 0..=4 {
        for insn in with_rm(rm) {
            assert_legal(insn, 6);
        }
        for insn in with_rm(DYN) {
            assert_legal(insn, rm as u8);
        }
    }
}

#[test]
fn invalid_encodings_are_illegal() {
    let mut bad = vec![
        // Formats H (10) and Q (11).
        binary(FADD, 2, RNE),
        binary(FADD, 3, RNE),
        fused(FMADD, 2, RNE),
        fused(FMADD, 3, RNE),
        r_type(FSQRT, 3, 0, RS1, RNE, RD),
        // FSQRT with rs2 != 0.
        r_type(FSQRT, D, 1, RS1, RNE, RD),
        // FSGNJ funct3 3..7, FMIN/FMAX funct3 2..7 (Zfa fminm/fmaxm).
        r_type(FSGNJ, S, RS2, RS1, 3, RD),
        r_type(FMINMAX, D, RS2, RS1, 2, RD),
        r_type(FMINMAX, D, RS2, RS1, 3, RD),
        // FCVT.S.S, FCVT.D.D, from H/Q, Zfa fround (rs2 = 4/5).
        r_type(FCVT_FF, S, 0, RS1, RNE, RD),
        r_type(FCVT_FF, D, 1, RS1, RNE, RD),
        r_type(FCVT_FF, S, 2, RS1, RNE, RD),
        r_type(FCVT_FF, D, 3, RS1, RNE, RD),
        r_type(FCVT_FF, D, 4, RS1, RNE, RD),
        // FEQ/FLT/FLE funct3 3..7 (Zfa fltq/fleq are 4/5).
        r_type(FCMP, S, RS2, RS1, 3, RD),
        r_type(FCMP, D, RS2, RS1, 4, RD),
        // Integer conversions with rs2 >= 4.
        r_type(FCVT_INT_F, S, 4, RS1, RNE, RD),
        r_type(FCVT_INT_F, D, 8, RS1, RNE, RD),
        r_type(FCVT_F_INT, D, 5, RS1, RNE, RD),
        // FMV.X.W / FCLASS with rs2 != 0 or funct3 >= 2.
        r_type(FMV_X_F, S, 1, RS1, 0, RD),
        r_type(FMV_X_F, D, 0, RS1, 2, RD),
        r_type(FMV_X_F, D, 1, RS1, 1, RD),
        // FMV.W.X with funct3 != 0 or rs2 != 0 (Zfa fli is rs2 = 1).
        r_type(FMV_F_X, S, 0, RS1, 1, RD),
        r_type(FMV_F_X, S, 1, RS1, 0, RD),
        // Another major opcode (FLW) and a compressed-looking word.
        0x0000_2007,
        0x0000_0001,
    ];
    // Unassigned funct5 values of OP-FP.
    for f5 in [
        0b00110, 0b00111, 0b01001, 0b01010, 0b01100, 0b10000, 0b11111, 0b11001, 0b10110,
    ] {
        bad.push(r_type(f5, S, 0, RS1, 0, RD));
        bad.push(r_type(f5, D, 0, RS1, 0, RD));
    }
    for insn in bad {
        assert_illegal(insn, 0);
    }
    // Instructions without a rounding mode use funct3 as an opcode and do
    // not look at frm: fine even with an invalid frm.
    for insn in [
        r_type(FSGNJ, D, RS2, RS1, 2, RD),
        r_type(FMINMAX, D, RS2, RS1, 1, RD),
        r_type(FCMP, D, RS2, RS1, 2, RD),
        r_type(FMV_X_F, D, 0, RS1, 1, RD),
        r_type(FMV_F_X, D, 0, RS1, 0, RD),
    ] {
        assert_legal(insn, 7);
    }
}

#[test]
fn writes_go_to_rd_and_x_results_are_returned() {
    let mut st = FpState::default();
    st.f[7] = 0x4000_0000_0000_0000; // 2.0
    st.f[9] = 0x4008_0000_0000_0000; // 3.0
    st.f[30] = 0x3ff0_0000_0000_0000; // 1.0
    let insn = r4_type(FMADD, 30, D, 9, 7, RNE, 31);
    assert_eq!(execute(&mut st, insn, 0), Ok(None));
    assert_eq!(st.f[31], 0x401c_0000_0000_0000); // 7.0
    let flt = r_type(FCMP, D, 9, 7, 1, 12);
    assert_eq!(execute(&mut st, flt, 0), Ok(Some(1)));
    let feq = r_type(FCMP, D, 9, 7, 2, 0);
    assert_eq!(execute(&mut st, feq, 0), Ok(Some(0)));
}

#[test]
fn unboxed_single_operands_are_canonical_nan() {
    let unboxed = 0x0000_0000_3f80_0000; // 1.0f32 without the box
    let partly = 0xffff_fffe_3f80_0000;
    for bad in [unboxed, partly] {
        let run = |insn: u32, rs2: u64| {
            let mut st = state(S, &[], 0);
            st.f[RS1 as usize] = bad;
            st.f[RS2 as usize] = rs2;
            let out = execute(&mut st, insn, 0).expect("legal");
            (out, st.f[RD as usize], st.fflags)
        };
        let one = 0xffff_ffff_3f80_0000;
        // Arithmetic: canonical NaN, no NV (it is a quiet NaN).
        let (_, r, fl) = run(binary(FADD, S, RNE), one);
        assert_eq!((r, fl), (0xffff_ffff_7fc0_0000, 0));
        // FMIN ignores the NaN operand.
        let (_, r, fl) = run(r_type(FMINMAX, S, RS2, RS1, 0, RD), one);
        assert_eq!((r, fl), (one, 0));
        // FEQ: false, quiet. FLT: false, NV.
        let (out, _, fl) = run(r_type(FCMP, S, RS2, RS1, 2, RD), one);
        assert_eq!((out, fl), (Some(0), 0));
        let (out, _, fl) = run(r_type(FCMP, S, RS2, RS1, 1, RD), one);
        assert_eq!((out, fl), (Some(0), NV));
        // FCLASS: quiet NaN.
        let (out, _, _) = run(r_type(FMV_X_F, S, 0, RS1, 1, RD), one);
        assert_eq!(out, Some(1 << 9));
        // FCVT.D.S: canonical double NaN, no flags.
        let (_, r, fl) = run(r_type(FCVT_FF, D, 0, RS1, RNE, RD), one);
        assert_eq!((r, fl), (0x7ff8_0000_0000_0000, 0));
        // FCVT.W.S: NaN -> max, NV.
        let (out, _, fl) = run(r_type(FCVT_INT_F, S, W, RS1, RNE, RD), one);
        assert_eq!((out, fl), (Some(0x7fff_ffff), NV));
        // FMV.X.W does not check the box.
        let (out, _, _) = run(r_type(FMV_X_F, S, 0, RS1, 0, RD), one);
        assert_eq!(out, Some(0x3f80_0000));
        // FSGNJ injects rs2's sign into the canonical NaN.
        let (_, r, _) = run(r_type(FSGNJ, S, RS2, RS1, 0, RD), 0xffff_ffff_bf80_0000);
        assert_eq!(r, 0xffff_ffff_ffc0_0000);
    }
    // Double operations ignore boxing entirely.
    let mut st = state(D, &[0x0000_0000_3f80_0000, 0], 0);
    execute(&mut st, binary(FADD, D, RNE), 0).expect("legal");
    assert_eq!(st.f[RD as usize], 0x0000_0000_3f80_0000);
}
