//! The floating-point unit: the RISC-V F and D extensions' computational
//! instructions (OP-FP and the fused multiply-adds) on a register file of
//! 32 64-bit f registers with NaN-boxed singles, plus `fflags`/`frm`.
//!
//! All arithmetic is a small integer-only softfloat (`format`, `round`,
//! `arith`, `convert`, `compare`): results and exception flags are exact
//! IEEE 754 in every rounding mode and never depend on the host FPU, so a
//! guest computes the same bits on every host. Loads, stores and the fcsr
//! CSRs are the core's business.

pub(crate) mod arith;
pub(crate) mod compare;
pub(crate) mod convert;
mod decode;
pub(crate) mod format;
mod round;

#[cfg(test)]
mod tests;

use decode::{Binary, Insn, RM_DYNAMIC};
use format::{Format, RoundingMode, SINGLE};

/// The accrued exception flags, as bits of `fflags`.
pub(crate) mod flags {
    /// Invalid operation.
    pub(crate) const NV: u8 = 1 << 4;
    /// Divide by zero.
    pub(crate) const DZ: u8 = 1 << 3;
    /// Overflow.
    pub(crate) const OF: u8 = 1 << 2;
    /// Underflow (tiny after rounding and inexact).
    pub(crate) const UF: u8 = 1 << 1;
    /// Inexact.
    pub(crate) const NX: u8 = 1 << 0;
}

/// Floating-point architectural state: f0-f31 (64 bits each; single values
/// are NaN-boxed) and fcsr.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FpState {
    /// The f registers; a single-precision value lives in the low 32 bits
    /// with the upper 32 bits all ones (NaN-boxed).
    pub f: [u64; 32],
    /// Accrued exception flags (fcsr bits 4:0): NV=4 DZ=3 OF=2 UF=1 NX=0.
    pub fflags: u8,
    /// Dynamic rounding mode (fcsr bits 7:5), 0..=7; 5-7 make dynamic-mode
    /// instructions illegal.
    pub frm: u8,
}

/// The instruction is not a valid F/D instruction (or uses a reserved
/// rounding mode): the core raises illegal-instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("illegal floating-point instruction")]
pub struct IllegalFp;

/// NaN-boxes a single-precision value for an f register (upper 32 bits all
/// ones); the core uses it for FLW.
pub fn nan_box_s(bits: u32) -> u64 {
    0xffff_ffff_0000_0000 | u64::from(bits)
}

impl FpState {
    /// Reads f register `r` as an operand of `fmt`. A single must be
    /// properly NaN-boxed; otherwise it reads as the canonical NaN.
    fn read(&self, fmt: Format, r: usize) -> u64 {
        let v = self.f[r];
        if fmt == SINGLE {
            if v >> 32 == 0xffff_ffff {
                v & 0xffff_ffff
            } else {
                SINGLE.canonical_nan()
            }
        } else {
            v
        }
    }

    /// Writes a result of `fmt` to f register `r` (NaN-boxing singles).
    fn write(&mut self, fmt: Format, r: usize, bits: u64) {
        self.f[r] = if fmt == SINGLE {
            nan_box_s(bits as u32)
        } else {
            bits
        };
    }

    /// Resolves a raw `rm` field (7 = dynamic, from `frm`) to a mode.
    fn rounding_mode(&self, rm: u8) -> Result<RoundingMode, IllegalFp> {
        let rm = if rm == RM_DYNAMIC { self.frm } else { rm };
        RoundingMode::from_bits(rm).ok_or(IllegalFp)
    }
}

/// Executes one OP-FP (major opcode 0x53) or fused multiply-add (0x43
/// FMADD, 0x47 FMSUB, 0x4b FNMSUB, 0x4f FNMADD) instruction, for .S
/// (fmt=00) and .D (fmt=01).
///
/// `x_rs1` is the value of integer register rs1 (used by
/// FCVT.S/D.W/WU/L/LU and FMV.W.X / FMV.D.X). Returns `Ok(Some(v))` when
/// the instruction writes integer register rd (FCVT.W/WU/L/LU.S/D,
/// FMV.X.W/D, FEQ/FLT/FLE, FCLASS): the core writes v to x[rd] (unless
/// rd == 0); `Ok(None)` when it wrote `st.f[rd]`. Accrued exception flags
/// are OR-ed into `fflags`. 32-bit integer results (FCVT.W[U], FMV.X.W)
/// are sign-extended to 64 bits as the spec requires. On `Err` the state
/// is unchanged.
pub fn execute(st: &mut FpState, insn: u32, x_rs1: u64) -> Result<Option<u64>, IllegalFp> {
    let mut fl = 0u8;
    let out = match decode::decode(insn)? {
        Insn::Binary {
            op,
            fmt,
            rd,
            rs1,
            rs2,
            rm,
        } => {
            let mode = st.rounding_mode(rm)?;
            let (a, b) = (st.read(fmt, rs1), st.read(fmt, rs2));
            let r = match op {
                Binary::Add => arith::add(fmt, a, b, mode, &mut fl),
                Binary::Sub => arith::add(fmt, a, b ^ fmt.sign_bit(), mode, &mut fl),
                Binary::Mul => arith::mul(fmt, a, b, mode, &mut fl),
                Binary::Div => arith::div(fmt, a, b, mode, &mut fl),
            };
            st.write(fmt, rd, r);
            None
        }
        Insn::Sqrt { fmt, rd, rs1, rm } => {
            let mode = st.rounding_mode(rm)?;
            let r = arith::sqrt(fmt, st.read(fmt, rs1), mode, &mut fl);
            st.write(fmt, rd, r);
            None
        }
        Insn::Fused {
            kind,
            fmt,
            rd,
            rs,
            rm,
        } => {
            let mode = st.rounding_mode(rm)?;
            let operands = rs.map(|r| st.read(fmt, r));
            let r = arith::fma(fmt, kind, operands, mode, &mut fl);
            st.write(fmt, rd, r);
            None
        }
        Insn::SignInject {
            kind,
            fmt,
            rd,
            rs1,
            rs2,
        } => {
            let r = compare::sign_inject(fmt, kind, st.read(fmt, rs1), st.read(fmt, rs2));
            st.write(fmt, rd, r);
            None
        }
        Insn::MinMax {
            max,
            fmt,
            rd,
            rs1,
            rs2,
        } => {
            let (a, b) = (st.read(fmt, rs1), st.read(fmt, rs2));
            let r = compare::min_max(fmt, max, a, b, &mut fl);
            st.write(fmt, rd, r);
            None
        }
        Insn::FloatToFloat {
            from,
            to,
            rd,
            rs1,
            rm,
        } => {
            let mode = st.rounding_mode(rm)?;
            let r = convert::float_to_float(from, to, st.read(from, rs1), mode, &mut fl);
            st.write(to, rd, r);
            None
        }
        Insn::Compare {
            kind,
            fmt,
            rs1,
            rs2,
        } => {
            let (a, b) = (st.read(fmt, rs1), st.read(fmt, rs2));
            Some(u64::from(compare::compare(fmt, kind, a, b, &mut fl)))
        }
        Insn::FloatToInt { fmt, ty, rs1, rm } => {
            let mode = st.rounding_mode(rm)?;
            Some(convert::float_to_int(
                fmt,
                ty,
                st.read(fmt, rs1),
                mode,
                &mut fl,
            ))
        }
        Insn::IntToFloat { fmt, ty, rd, rm } => {
            let mode = st.rounding_mode(rm)?;
            let r = convert::int_to_float(fmt, ty, x_rs1, mode, &mut fl);
            st.write(fmt, rd, r);
            None
        }
        Insn::MoveToInt { fmt, rs1 } => {
            // Raw bits: no NaN-box check; FMV.X.W sign-extends bit 31.
            let v = st.f[rs1];
            Some(if fmt == SINGLE {
                v as u32 as i32 as i64 as u64
            } else {
                v
            })
        }
        Insn::Classify { fmt, rs1 } => Some(compare::classify(fmt, st.read(fmt, rs1))),
        Insn::MoveFromInt { fmt, rd } => {
            st.write(fmt, rd, x_rs1);
            None
        }
    };
    st.fflags |= fl;
    Ok(out)
}
