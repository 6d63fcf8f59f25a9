//! Instruction decoding for the F and D computational instructions: the
//! OP-FP major opcode (R-type) and the four fused multiply-add opcodes
//! (R4-type). Every encoding not listed in the F/D chapters (including
//! other formats such as H and Q, and Zfa) decodes to `IllegalFp`.

use super::arith::Fused;
use super::compare::{Comparison, SignInjection};
use super::convert::IntType;
use super::format::{Format, DOUBLE, SINGLE};
use super::IllegalFp;

/// Major opcode OP-FP.
const OP_FP: u32 = 0x53;
/// Major opcode MADD (FMADD).
const MADD: u32 = 0x43;
/// Major opcode MSUB (FMSUB).
const MSUB: u32 = 0x47;
/// Major opcode NMSUB (FNMSUB).
const NMSUB: u32 = 0x4b;
/// Major opcode NMADD (FNMADD).
const NMADD: u32 = 0x4f;

/// The rounding-mode value that selects the dynamic mode in `frm`.
pub(crate) const RM_DYNAMIC: u8 = 7;

/// A two-operand rounded arithmetic operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Binary {
    /// FADD.
    Add,
    /// FSUB.
    Sub,
    /// FMUL.
    Mul,
    /// FDIV.
    Div,
}

/// A decoded F/D instruction. Register fields are indices 0..=31; `rm`
/// is the raw 3-bit field, checked when the instruction executes (7 means
/// dynamic; 5 and 6 never reach here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Insn {
    /// FADD/FSUB/FMUL/FDIV: `f[rd] = f[rs1] op f[rs2]`.
    Binary {
        /// The operation.
        op: Binary,
        /// Operand and result format.
        fmt: Format,
        /// Destination f register.
        rd: usize,
        /// First source f register.
        rs1: usize,
        /// Second source f register.
        rs2: usize,
        /// Raw rounding mode.
        rm: u8,
    },
    /// FSQRT: `f[rd] = sqrt(f[rs1])`.
    Sqrt {
        /// Operand and result format.
        fmt: Format,
        /// Destination f register.
        rd: usize,
        /// Source f register.
        rs1: usize,
        /// Raw rounding mode.
        rm: u8,
    },
    /// FMADD/FMSUB/FNMSUB/FNMADD: `f[rd] = ±(f[rs1] * f[rs2]) ± f[rs3]`.
    Fused {
        /// Which of the four.
        kind: Fused,
        /// Operand and result format.
        fmt: Format,
        /// Destination f register.
        rd: usize,
        /// Source registers rs1, rs2, rs3.
        rs: [usize; 3],
        /// Raw rounding mode.
        rm: u8,
    },
    /// FSGNJ/FSGNJN/FSGNJX.
    SignInject {
        /// Which sign is injected.
        kind: SignInjection,
        /// Operand and result format.
        fmt: Format,
        /// Destination f register.
        rd: usize,
        /// Source of the magnitude.
        rs1: usize,
        /// Source of the sign.
        rs2: usize,
    },
    /// FMIN/FMAX.
    MinMax {
        /// True for FMAX.
        max: bool,
        /// Operand and result format.
        fmt: Format,
        /// Destination f register.
        rd: usize,
        /// First source f register.
        rs1: usize,
        /// Second source f register.
        rs2: usize,
    },
    /// FCVT.S.D / FCVT.D.S.
    FloatToFloat {
        /// Source format.
        from: Format,
        /// Destination format.
        to: Format,
        /// Destination f register.
        rd: usize,
        /// Source f register.
        rs1: usize,
        /// Raw rounding mode.
        rm: u8,
    },
    /// FEQ/FLT/FLE: writes 1 or 0 to x[rd].
    Compare {
        /// Which comparison.
        kind: Comparison,
        /// Operand format.
        fmt: Format,
        /// First source f register.
        rs1: usize,
        /// Second source f register.
        rs2: usize,
    },
    /// FCVT.{W,WU,L,LU}.{S,D}: writes x[rd].
    FloatToInt {
        /// Source format.
        fmt: Format,
        /// Destination integer type.
        ty: IntType,
        /// Source f register.
        rs1: usize,
        /// Raw rounding mode.
        rm: u8,
    },
    /// FCVT.{S,D}.{W,WU,L,LU}: reads x[rs1].
    IntToFloat {
        /// Destination format.
        fmt: Format,
        /// Source integer type.
        ty: IntType,
        /// Destination f register.
        rd: usize,
        /// Raw rounding mode.
        rm: u8,
    },
    /// FMV.X.W / FMV.X.D: raw bits of f[rs1] to x[rd].
    MoveToInt {
        /// Width: single (low 32 bits, sign-extended) or double.
        fmt: Format,
        /// Source f register.
        rs1: usize,
    },
    /// FCLASS.S / FCLASS.D: class mask to x[rd].
    Classify {
        /// Operand format.
        fmt: Format,
        /// Source f register.
        rs1: usize,
    },
    /// FMV.W.X / FMV.D.X: raw bits of x[rs1] to f[rd].
    MoveFromInt {
        /// Width: single (NaN-boxed) or double.
        fmt: Format,
        /// Destination f register.
        rd: usize,
    },
}

/// Extracts `len` bits of `insn` starting at bit `lo`.
fn field(insn: u32, lo: u32, len: u32) -> u32 {
    (insn >> lo) & ((1 << len) - 1)
}

/// Decodes a raw `rm` field: 5 and 6 are reserved.
fn rounding_field(insn: u32) -> Result<u8, IllegalFp> {
    match field(insn, 12, 3) as u8 {
        5 | 6 => Err(IllegalFp),
        rm => Ok(rm),
    }
}

/// Decodes one 32-bit instruction word.
pub(crate) fn decode(insn: u32) -> Result<Insn, IllegalFp> {
    let fmt = match field(insn, 25, 2) {
        0 => SINGLE,
        1 => DOUBLE,
        _ => return Err(IllegalFp),
    };
    let rd = field(insn, 7, 5) as usize;
    let rs1 = field(insn, 15, 5) as usize;
    let rs2 = field(insn, 20, 5) as usize;
    let funct3 = field(insn, 12, 3);
    let fused = |kind| {
        Ok(Insn::Fused {
            kind,
            fmt,
            rd,
            rs: [rs1, rs2, field(insn, 27, 5) as usize],
            rm: rounding_field(insn)?,
        })
    };
    match field(insn, 0, 7) {
        MADD => return fused(Fused::Madd),
        MSUB => return fused(Fused::Msub),
        NMSUB => return fused(Fused::Nmsub),
        NMADD => return fused(Fused::Nmadd),
        OP_FP => {}
        _ => return Err(IllegalFp),
    }
    let binary = |op| {
        Ok(Insn::Binary {
            op,
            fmt,
            rd,
            rs1,
            rs2,
            rm: rounding_field(insn)?,
        })
    };
    match field(insn, 27, 5) {
        0b00000 => binary(Binary::Add),
        0b00001 => binary(Binary::Sub),
        0b00010 => binary(Binary::Mul),
        0b00011 => binary(Binary::Div),
        0b01011 if rs2 == 0 => Ok(Insn::Sqrt {
            fmt,
            rd,
            rs1,
            rm: rounding_field(insn)?,
        }),
        0b00100 => {
            let kind = match funct3 {
                0 => SignInjection::Copy,
                1 => SignInjection::Negate,
                2 => SignInjection::Xor,
                _ => return Err(IllegalFp),
            };
            Ok(Insn::SignInject {
                kind,
                fmt,
                rd,
                rs1,
                rs2,
            })
        }
        0b00101 if funct3 <= 1 => Ok(Insn::MinMax {
            max: funct3 == 1,
            fmt,
            rd,
            rs1,
            rs2,
        }),
        0b01000 => {
            // The source format is in rs2; it must be the other format.
            let from = match (rs2, fmt == SINGLE) {
                (1, true) => DOUBLE,
                (0, false) => SINGLE,
                _ => return Err(IllegalFp),
            };
            Ok(Insn::FloatToFloat {
                from,
                to: fmt,
                rd,
                rs1,
                rm: rounding_field(insn)?,
            })
        }
        0b10100 => {
            let kind = match funct3 {
                2 => Comparison::Eq,
                1 => Comparison::Lt,
                0 => Comparison::Le,
                _ => return Err(IllegalFp),
            };
            Ok(Insn::Compare {
                kind,
                fmt,
                rs1,
                rs2,
            })
        }
        0b11000 => Ok(Insn::FloatToInt {
            fmt,
            ty: IntType::from_rs2(rs2).ok_or(IllegalFp)?,
            rs1,
            rm: rounding_field(insn)?,
        }),
        0b11010 => Ok(Insn::IntToFloat {
            fmt,
            ty: IntType::from_rs2(rs2).ok_or(IllegalFp)?,
            rd,
            rm: rounding_field(insn)?,
        }),
        0b11100 if rs2 == 0 && funct3 == 0 => Ok(Insn::MoveToInt { fmt, rs1 }),
        0b11100 if rs2 == 0 && funct3 == 1 => Ok(Insn::Classify { fmt, rs1 }),
        0b11110 if rs2 == 0 && funct3 == 0 => Ok(Insn::MoveFromInt { fmt, rd }),
        _ => Err(IllegalFp),
    }
}
