//! The bit-manipulation extensions Zba, Zbb, Zbs and Zbc (RV64 forms), each on only when
//! the hart's [`Isa`] says so: otherwise their encodings stay illegal instructions, as
//! they are on RV64GC.
//!
//! An instruction decodes into one packed `how` (the operation, and for an immediate
//! form its shift amount) that the pre-decoded fast path keeps in `Op::imm`, and
//! [`eval`] is the one definition of every operation: the interpreter (which always
//! reaches these through the pre-decoded `Kind::Bit`, since pre-decoding knows the hart's
//! ISA) and compiled blocks (through a call) both use it, so they cannot disagree.

use crate::isa::{Extension, Isa};

/// One operation; its value is the low byte of a packed `how`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
#[allow(missing_docs)]
pub(crate) enum BitOp {
    // Zba
    AddUw = 1,
    Sh1add,
    Sh2add,
    Sh3add,
    Sh1addUw,
    Sh2addUw,
    Sh3addUw,
    SlliUw,
    // Zbb
    Andn,
    Orn,
    Xnor,
    Clz,
    Clzw,
    Ctz,
    Ctzw,
    Cpop,
    Cpopw,
    Max,
    Maxu,
    Min,
    Minu,
    SextB,
    SextH,
    ZextH,
    Rol,
    Rolw,
    Ror,
    Rori,
    Rorw,
    Roriw,
    OrcB,
    Rev8,
    // Zbc
    Clmul,
    Clmulh,
    Clmulr,
    // Zbs
    Bclr,
    Bclri,
    Bext,
    Bexti,
    Binv,
    Binvi,
    Bset,
    Bseti,
}

/// Every operation, indexed by its value minus one (for [`BitOp::from_code`]).
const ALL: [BitOp; 43] = {
    use BitOp::*;
    [
        AddUw, Sh1add, Sh2add, Sh3add, Sh1addUw, Sh2addUw, Sh3addUw, SlliUw, Andn, Orn, Xnor, Clz,
        Clzw, Ctz, Ctzw, Cpop, Cpopw, Max, Maxu, Min, Minu, SextB, SextH, ZextH, Rol, Rolw, Ror,
        Rori, Rorw, Roriw, OrcB, Rev8, Clmul, Clmulh, Clmulr, Bclr, Bclri, Bext, Bexti, Binv,
        Binvi, Bset, Bseti,
    ]
};

/// `how` for an immediate form: the shift amount (or bit index) sits above this bit.
const IMM: u32 = 1 << 8;

impl BitOp {
    fn from_code(code: u8) -> Option<BitOp> {
        ALL.get(usize::from(code).checked_sub(1)?).copied()
    }

    /// The extension the operation belongs to.
    fn extension(self) -> Extension {
        use BitOp::*;
        match self {
            AddUw | Sh1add | Sh2add | Sh3add | Sh1addUw | Sh2addUw | Sh3addUw | SlliUw => {
                Extension::Zba
            }
            Clmul | Clmulh | Clmulr => Extension::Zbc,
            Bclr | Bclri | Bext | Bexti | Binv | Binvi | Bset | Bseti => Extension::Zbs,
            _ => Extension::Zbb,
        }
    }
}

/// The packed `how` of instruction `i` if it is a bit-manipulation instruction that
/// `isa` implements (opcodes OP, OP-32, OP-IMM and OP-IMM-32 only); `None` otherwise,
/// which leaves the encoding to whatever else it may be (or an illegal instruction).
pub(crate) fn decode(i: u32, isa: Isa) -> Option<u32> {
    use BitOp::*;
    if isa.is_base() {
        return None;
    }
    let f3 = (i >> 12) & 7;
    let f7 = i >> 25;
    let rs2 = (i >> 20) & 31;
    let imm12 = i >> 20;
    let (op, shamt) = match i & 0x7f {
        0x33 => (
            match (f7, f3) {
                (0x10, 2) => Sh1add,
                (0x10, 4) => Sh2add,
                (0x10, 6) => Sh3add,
                (0x20, 7) => Andn,
                (0x20, 6) => Orn,
                (0x20, 4) => Xnor,
                (0x05, 6) => Max,
                (0x05, 7) => Maxu,
                (0x05, 4) => Min,
                (0x05, 5) => Minu,
                (0x05, 1) => Clmul,
                (0x05, 3) => Clmulh,
                (0x05, 2) => Clmulr,
                (0x30, 1) => Rol,
                (0x30, 5) => Ror,
                (0x24, 1) => Bclr,
                (0x24, 5) => Bext,
                (0x34, 1) => Binv,
                (0x14, 1) => Bset,
                _ => return None,
            },
            None,
        ),
        0x3b => (
            match (f7, f3) {
                (0x04, 0) => AddUw,
                (0x10, 2) => Sh1addUw,
                (0x10, 4) => Sh2addUw,
                (0x10, 6) => Sh3addUw,
                (0x04, 4) if rs2 == 0 => ZextH,
                (0x30, 1) => Rolw,
                (0x30, 5) => Rorw,
                _ => return None,
            },
            None,
        ),
        0x13 => match (f3, imm12, i >> 26) {
            (1, 0x600, _) => (Clz, None),
            (1, 0x601, _) => (Ctz, None),
            (1, 0x602, _) => (Cpop, None),
            (1, 0x604, _) => (SextB, None),
            (1, 0x605, _) => (SextH, None),
            (5, 0x287, _) => (OrcB, None),
            (5, 0x6b8, _) => (Rev8, None),
            (5, _, 0x18) => (Rori, Some(imm12 & 63)),
            (1, _, 0x12) => (Bclri, Some(imm12 & 63)),
            (5, _, 0x12) => (Bexti, Some(imm12 & 63)),
            (1, _, 0x1a) => (Binvi, Some(imm12 & 63)),
            (1, _, 0x0a) => (Bseti, Some(imm12 & 63)),
            _ => return None,
        },
        0x1b => match (f3, imm12, f7) {
            (1, 0x600, _) => (Clzw, None),
            (1, 0x601, _) => (Ctzw, None),
            (1, 0x602, _) => (Cpopw, None),
            (1, _, _) if i >> 26 == 0x02 => (SlliUw, Some(imm12 & 63)),
            (5, _, 0x30) => (Roriw, Some(rs2)),
            _ => return None,
        },
        _ => return None,
    };
    if !isa.has(op.extension()) {
        return None;
    }
    Some(match shamt {
        Some(s) => op as u32 | IMM | (s << 9),
        None => op as u32,
    })
}

/// The result of the operation `how` (from [`decode`]) on `x1` (rs1) and `x2` (rs2; for
/// an immediate form, ignored in favour of the immediate in `how`).
pub(crate) fn eval(how: u32, x1: u64, x2: u64) -> u64 {
    use BitOp::*;
    let b = if how & IMM != 0 {
        u64::from((how >> 9) & 63)
    } else {
        x2
    };
    let Some(op) = BitOp::from_code(how as u8) else {
        debug_assert!(false, "bit-manipulation how {how:#x}");
        return 0;
    };
    let sext32 = |v: u32| v as i32 as i64 as u64;
    let uw = x1 & 0xffff_ffff;
    match op {
        AddUw => b.wrapping_add(uw),
        Sh1add => b.wrapping_add(x1 << 1),
        Sh2add => b.wrapping_add(x1 << 2),
        Sh3add => b.wrapping_add(x1 << 3),
        Sh1addUw => b.wrapping_add(uw << 1),
        Sh2addUw => b.wrapping_add(uw << 2),
        Sh3addUw => b.wrapping_add(uw << 3),
        SlliUw => uw << (b & 63),
        Andn => x1 & !b,
        Orn => x1 | !b,
        Xnor => !(x1 ^ b),
        Clz => u64::from(x1.leading_zeros()),
        Clzw => u64::from((x1 as u32).leading_zeros()),
        Ctz => u64::from(x1.trailing_zeros()),
        Ctzw => u64::from((x1 as u32).trailing_zeros()),
        Cpop => u64::from(x1.count_ones()),
        Cpopw => u64::from((x1 as u32).count_ones()),
        Max => (x1 as i64).max(b as i64) as u64,
        Maxu => x1.max(b),
        Min => (x1 as i64).min(b as i64) as u64,
        Minu => x1.min(b),
        SextB => x1 as i8 as i64 as u64,
        SextH => x1 as i16 as i64 as u64,
        ZextH => x1 & 0xffff,
        Rol => x1.rotate_left((b & 63) as u32),
        Rolw => sext32((x1 as u32).rotate_left((b & 31) as u32)),
        Ror | Rori => x1.rotate_right((b & 63) as u32),
        Rorw | Roriw => sext32((x1 as u32).rotate_right((b & 31) as u32)),
        OrcB => (0..8).fold(0, |acc, byte| {
            if (x1 >> (8 * byte)) & 0xff != 0 {
                acc | (0xff << (8 * byte))
            } else {
                acc
            }
        }),
        Rev8 => x1.swap_bytes(),
        Clmul => clmul(x1, b) as u64,
        Clmulh => (clmul(x1, b) >> 64) as u64,
        Clmulr => (clmul(x1, b) >> 63) as u64,
        Bclr | Bclri => x1 & !(1 << (b & 63)),
        Bext | Bexti => (x1 >> (b & 63)) & 1,
        Binv | Binvi => x1 ^ (1 << (b & 63)),
        Bset | Bseti => x1 | (1 << (b & 63)),
    }
}

/// The full 128-bit carry-less product.
fn clmul(a: u64, b: u64) -> u128 {
    (0..64)
        .filter(|i| (b >> i) & 1 != 0)
        .fold(0u128, |acc, i| acc ^ (u128::from(a) << i))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Isa {
        Extension::ALL
            .into_iter()
            .fold(Isa::default(), |isa, e| isa.with(e))
    }

    /// R-type: funct7 rs2 rs1 funct3 rd opcode, with rd = x1, rs1 = x2, rs2 = x3.
    fn r(f7: u32, f3: u32, opcode: u32) -> u32 {
        (f7 << 25) | (3 << 20) | (2 << 15) | (f3 << 12) | (1 << 7) | opcode
    }
    /// I-type with a 12-bit immediate, rd = x1, rs1 = x2.
    fn i(imm12: u32, f3: u32, opcode: u32) -> u32 {
        (imm12 << 20) | (2 << 15) | (f3 << 12) | (1 << 7) | opcode
    }

    fn run(insn: u32, x1: u64, x2: u64) -> u64 {
        eval(decode(insn, all()).expect("decodes"), x1, x2)
    }

    #[test]
    fn every_operation_round_trips_through_its_code() {
        for (n, op) in ALL.iter().enumerate() {
            assert_eq!(*op as usize, n + 1);
            assert_eq!(BitOp::from_code(*op as u8), Some(*op));
        }
        assert_eq!(BitOp::from_code(0), None);
        assert_eq!(BitOp::from_code(44), None);
    }

    #[test]
    fn results_match_the_spec_on_edge_values() {
        let m = u64::MAX;
        assert_eq!(run(r(0x04, 0, 0x3b), 0xffff_ffff_8000_0000, 1), 0x8000_0001);
        assert_eq!(run(r(0x10, 6, 0x33), 2, 5), 21);
        assert_eq!(run(r(0x10, 2, 0x3b), 0x1_0000_0001, 0), 2);
        assert_eq!(run(i(0x080 | 4, 1, 0x1b), 0xf_0000_0001, 0), 0x10);
        assert_eq!(run(r(0x20, 7, 0x33), 0b1100, 0b1010), 0b0100);
        assert_eq!(run(r(0x20, 4, 0x33), 0, 0), m);
        assert_eq!(run(i(0x600, 1, 0x13), 0, 0), 64);
        assert_eq!(run(i(0x600, 1, 0x1b), 0xffff_ffff_0000_0000, 0), 32);
        assert_eq!(run(i(0x601, 1, 0x13), 0x100, 0), 8);
        assert_eq!(run(i(0x601, 1, 0x1b), 0xffff_ffff_0000_0000, 0), 32);
        assert_eq!(run(i(0x602, 1, 0x13), m, 0), 64);
        assert_eq!(run(i(0x602, 1, 0x1b), m, 0), 32);
        assert_eq!(run(r(0x05, 4, 0x33), 1, m), m); // min(1, -1)
        assert_eq!(run(r(0x05, 5, 0x33), 1, m), 1); // minu
        assert_eq!(run(i(0x604, 1, 0x13), 0x80, 0), 0xffff_ffff_ffff_ff80);
        assert_eq!(run(i(0x605, 1, 0x13), 0x7fff, 0), 0x7fff);
        assert_eq!(run(r(0x04, 4, 0x3b) & !(31 << 20), m, 0), 0xffff);
        assert_eq!(run(r(0x30, 1, 0x33), 0x8000_0000_0000_0001, 65), 3);
        assert_eq!(run(r(0x30, 5, 0x3b), 1, 1), 0xffff_ffff_8000_0000);
        assert_eq!(run(i(0x600 | 4, 5, 0x13), 0xf, 0), 0xf000_0000_0000_0000);
        assert_eq!(run(i(0x600 | 4, 5, 0x1b), 0xf, 0), 0xffff_ffff_f000_0000);
        assert_eq!(
            run(i(0x287, 5, 0x13), 0x0100_0000_0020_0003, 0),
            0xff00_0000_00ff_00ff
        );
        assert_eq!(
            run(i(0x6b8, 5, 0x13), 0x0102_0304_0506_0708, 0),
            0x0807_0605_0403_0201
        );
        assert_eq!(run(r(0x05, 1, 0x33), 0b11, 0b11), 0b101);
        assert_eq!(run(r(0x05, 3, 0x33), 1 << 63, 1 << 63), 1 << 62);
        assert_eq!(run(r(0x05, 2, 0x33), 1 << 63, 1 << 63), 1 << 63);
        assert_eq!(run(r(0x24, 1, 0x33), m, 64), m - 1);
        assert_eq!(run(i(0x480 | 63, 5, 0x13), 1 << 63, 0), 1);
        assert_eq!(run(r(0x34, 1, 0x33), 0, 3), 8);
        assert_eq!(run(i(0x280 | 40, 1, 0x13), 0, 0), 1 << 40);
    }

    #[test]
    fn encodings_stay_illegal_unless_their_extension_is_on() {
        let andn = r(0x20, 7, 0x33);
        let sh1add = r(0x10, 2, 0x33);
        assert_eq!(decode(andn, Isa::default()), None);
        let zba = Isa::default().with(Extension::Zba);
        assert_eq!(decode(andn, zba), None);
        assert!(decode(sh1add, zba).is_some());
        // Reserved neighbours: zext.h with rs2 != 0, a clz-like immediate that is not one.
        assert_eq!(decode(r(0x04, 4, 0x3b), all()), None);
        assert_eq!(decode(i(0x603, 1, 0x13), all()), None);
        // RV64I's own encodings are never taken.
        assert_eq!(decode(r(0, 0, 0x33), all()), None);
        assert_eq!(decode(i(0x400 | 3, 5, 0x13), all()), None); // srai
    }
}
