//! Instruction encoders and a small harness that runs one instruction on a
//! fresh `FpState` with operands in f1, f2, f3 and the result in f4.

use crate::fpu::{execute, nan_box_s, FpState, IllegalFp};

/// fmt field of single precision.
pub const S: u32 = 0;
/// fmt field of double precision.
pub const D: u32 = 1;

/// Round to nearest, ties to even.
pub const RNE: u32 = 0;
/// Round towards zero.
pub const RTZ: u32 = 1;
/// Round down.
pub const RDN: u32 = 2;
/// Round up.
pub const RUP: u32 = 3;
/// Round to nearest, ties to max magnitude.
pub const RMM: u32 = 4;
/// Dynamic rounding mode (use frm).
pub const DYN: u32 = 7;

/// Invalid operation flag.
pub const NV: u8 = 0x10;
/// Divide-by-zero flag.
pub const DZ: u8 = 0x08;
/// Overflow flag.
pub const OF: u8 = 0x04;
/// Underflow flag.
pub const UF: u8 = 0x02;
/// Inexact flag.
pub const NX: u8 = 0x01;

/// First source register.
pub const RS1: u32 = 1;
/// Second source register.
pub const RS2: u32 = 2;
/// Third source register.
pub const RS3: u32 = 3;
/// Destination register.
pub const RD: u32 = 4;

/// funct5 of FADD.
pub const FADD: u32 = 0b00000;
/// funct5 of FSUB.
pub const FSUB: u32 = 0b00001;
/// funct5 of FMUL.
pub const FMUL: u32 = 0b00010;
/// funct5 of FDIV.
pub const FDIV: u32 = 0b00011;
/// funct5 of FSQRT.
pub const FSQRT: u32 = 0b01011;
/// funct5 of FSGNJ/FSGNJN/FSGNJX.
pub const FSGNJ: u32 = 0b00100;
/// funct5 of FMIN/FMAX.
pub const FMINMAX: u32 = 0b00101;
/// funct5 of FCVT.S.D/FCVT.D.S.
pub const FCVT_FF: u32 = 0b01000;
/// funct5 of FEQ/FLT/FLE.
pub const FCMP: u32 = 0b10100;
/// funct5 of FCVT.int.fmt.
pub const FCVT_INT_F: u32 = 0b11000;
/// funct5 of FCVT.fmt.int.
pub const FCVT_F_INT: u32 = 0b11010;
/// funct5 of FMV.X.W/D and FCLASS.
pub const FMV_X_F: u32 = 0b11100;
/// funct5 of FMV.W/D.X.
pub const FMV_F_X: u32 = 0b11110;

/// Opcode of FMADD.
pub const FMADD: u32 = 0x43;
/// Opcode of FMSUB.
pub const FMSUB: u32 = 0x47;
/// Opcode of FNMSUB.
pub const FNMSUB: u32 = 0x4b;
/// Opcode of FNMADD.
pub const FNMADD: u32 = 0x4f;

/// Signed 32-bit integer type.
pub const W: u32 = 0;
/// Unsigned 32-bit integer type.
pub const WU: u32 = 1;
/// Signed 64-bit integer type.
pub const L: u32 = 2;
/// Unsigned 64-bit integer type.
pub const LU: u32 = 3;

/// An OP-FP R-type instruction word.
pub fn r_type(funct5: u32, fmt: u32, rs2: u32, rs1: u32, rm: u32, rd: u32) -> u32 {
    (funct5 << 27) | (fmt << 25) | (rs2 << 20) | (rs1 << 15) | (rm << 12) | (rd << 7) | 0x53
}

/// An R4-type (fused multiply-add) instruction word.
pub fn r4_type(opcode: u32, rs3: u32, fmt: u32, rs2: u32, rs1: u32, rm: u32, rd: u32) -> u32 {
    (rs3 << 27) | (fmt << 25) | (rs2 << 20) | (rs1 << 15) | (rm << 12) | (rd << 7) | opcode
}

/// A two-operand arithmetic instruction f4 = f1 op f2.
pub fn binary(funct5: u32, fmt: u32, rm: u32) -> u32 {
    r_type(funct5, fmt, RS2, RS1, rm, RD)
}

/// A fused multiply-add f4 = ±f1*f2 ± f3.
pub fn fused(opcode: u32, fmt: u32, rm: u32) -> u32 {
    r4_type(opcode, RS3, fmt, RS2, RS1, rm, RD)
}

/// Places a format's operand into an f register value (NaN-boxing singles).
pub fn boxed(fmt: u32, bits: u64) -> u64 {
    if fmt == S {
        nan_box_s(bits as u32)
    } else {
        bits
    }
}

/// The state a test runs in: operands in f1.., frm given, other registers
/// holding a recognizable junk pattern.
pub fn state(fmt: u32, operands: &[u64], frm: u8) -> FpState {
    let mut st = FpState {
        f: [0x5a5a_5a5a_5a5a_5a5a; 32],
        fflags: 0,
        frm,
    };
    for (i, &op) in operands.iter().enumerate() {
        st.f[i + 1] = boxed(fmt, op);
    }
    st
}

/// Runs an instruction that writes f4 and returns (result bits, flags);
/// a single result must be NaN-boxed.
pub fn run_f(fmt: u32, insn: u32, operands: &[u64], frm: u8, x: u64) -> (u64, u8) {
    let mut st = state(fmt, operands, frm);
    let out = execute(&mut st, insn, x).expect("legal instruction");
    assert_eq!(out, None, "insn {insn:#010x} must write an f register");
    let r = st.f[RD as usize];
    if fmt == S {
        assert_eq!(r >> 32, 0xffff_ffff, "single result not NaN-boxed");
        (r & 0xffff_ffff, st.fflags)
    } else {
        (r, st.fflags)
    }
}

/// Runs an instruction that writes x[rd] and returns (value, flags).
pub fn run_x(fmt: u32, insn: u32, operands: &[u64], frm: u8) -> (u64, u8) {
    let mut st = state(fmt, operands, frm);
    let before = st.f;
    let out = execute(&mut st, insn, 0).expect("legal instruction");
    assert_eq!(st.f, before, "insn {insn:#010x} must not write f registers");
    (out.expect("writes an integer register"), st.fflags)
}

/// Runs an instruction word on a given state and returns the raw outcome.
pub fn try_run(st: &mut FpState, insn: u32, x: u64) -> Result<Option<u64>, IllegalFp> {
    execute(st, insn, x)
}
