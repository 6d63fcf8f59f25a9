//! Instruction encoders and a small harness that runs one instruction on a
//! fresh `FpState` with operands in f1, f2, f3 and the result in f4.

use crate::fpu::{execute, nan_box_s, FpState, IllegalFp};

/// fmt field of single precision.
pub const S: u32 = 0;
/// fmt field of double precision.
pub const D: u32 = 1;

/// Rounding modes.
pub const RNE: u32 = 0;
pub const RTZ: u32 = 1;
pub const RDN: u32 = 2;
pub const RUP: u32 = 3;
pub const RMM: u32 = 4;
pub const DYN: u32 = 7;

/// Flag bits.
pub const NV: u8 = 0x10;
pub const DZ: u8 = 0x08;
pub const OF: u8 = 0x04;
pub const UF: u8 = 0x02;
pub const NX: u8 = 0x01;

/// Registers the harness uses.
pub const RS1: u32 = 1;
pub const RS2: u32 = 2;
pub const RS3: u32 = 3;
pub const RD: u32 = 4;

/// funct5 values of OP-FP.
pub const FADD: u32 = 0b00000;
pub const FSUB: u32 = 0b00001;
pub const FMUL: u32 = 0b00010;
pub const FDIV: u32 = 0b00011;
pub const FSQRT: u32 = 0b01011;
pub const FSGNJ: u32 = 0b00100;
pub const FMINMAX: u32 = 0b00101;
pub const FCVT_FF: u32 = 0b01000;
pub const FCMP: u32 = 0b10100;
pub const FCVT_INT_F: u32 = 0b11000;
pub const FCVT_F_INT: u32 = 0b11010;
pub const FMV_X_F: u32 = 0b11100;
pub const FMV_F_X: u32 = 0b11110;

/// Fused multiply-add opcodes.
pub const FMADD: u32 = 0x43;
pub const FMSUB: u32 = 0x47;
pub const FNMSUB: u32 = 0x4b;
pub const FNMADD: u32 = 0x4f;

/// Integer types (rs2 of the conversions).
pub const W: u32 = 0;
pub const WU: u32 = 1;
pub const L: u32 = 2;
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
