//! Pre-decoding: the common RV64I/M instructions are decoded once into an
//! [`Op`] (kind, registers, immediate) kept in the instruction cache, so the
//! hot loop dispatches on one dense enum with operands ready. Everything else
//! is `Kind::Slow` and goes through the general executor in `exec.rs`.

/// Instruction kinds with a fast path. One byte, `Slow` being 0: an all-zero
/// [`crate::icache::Decoded`] (an empty cache slot) holds a valid kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
#[repr(u8)]
pub(crate) enum Kind {
    Slow = 0,
    Lui,
    Auipc,
    Jal,
    Jalr,
    Beq,
    Bne,
    Blt,
    Bge,
    Bltu,
    Bgeu,
    Lb,
    Lh,
    Lw,
    Ld,
    Lbu,
    Lhu,
    Lwu,
    Sb,
    Sh,
    Sw,
    Sd,
    Addi,
    Slti,
    Sltiu,
    Xori,
    Ori,
    Andi,
    Slli,
    Srli,
    Srai,
    Addiw,
    Slliw,
    Srliw,
    Sraiw,
    Add,
    Sub,
    Sll,
    Slt,
    Sltu,
    Xor,
    Srl,
    Sra,
    Or,
    And,
    Addw,
    Subw,
    Sllw,
    Srlw,
    Sraw,
    Mul,
    Mulw,
    /// MULH/MULHSU/MULHU/DIV/DIVU/REM/REMU; `imm` holds funct3.
    MulDiv,
    /// DIVW/DIVUW/REMW/REMUW; `imm` holds funct3.
    DivW,
    /// FENCE (not FENCE.I): no effect on one in-order hart.
    Fence,
    /// A Zba/Zbb/Zbc/Zbs instruction the hart implements; `imm` holds its packed `how`
    /// (see `bitmanip`).
    Bit,
    /// FLW, FLD, FSW, FSD: the F and D extensions' loads and stores (`rd` or `rs2` names a
    /// floating-point register). Only with the FPU on (mstatus.FS not Off): with it off,
    /// every path hands the instruction to `Hart::step`, whose illegal-instruction trap
    /// reports the instruction's bytes (see [`Kind::needs_fpu`]).
    Flw,
    Fld,
    Fsw,
    Fsd,
    /// An A-extension instruction (LR, SC, AMO*; .W or .D): `imm` holds its bits 31-25 and
    /// 14-12, so [`Op::amo_insn`] gives the instruction back for `Hart::atomic`, the one
    /// definition every path runs (Linux's locks and atomics: a payment-world branch stepped
    /// 570,000 of them, each ending a block).
    Amo,
    /// A CSR access (CSRRW, CSRRS, CSRRC and their immediate forms): `imm` holds its bits
    /// 31-20 and 14-12, so [`Op::csr_insn`] gives the instruction back for
    /// `Hart::csr_in_block`, which runs it as `Hart::step` would and says whether a block
    /// must end after it. Linux disables and restores interrupts with one at every lock
    /// (csrrci / csrs sstatus), and each ended a block and went through the run loop's slow
    /// path: in 60 compute-heavy branches 300,000 of them now go on inside blocks and 33,000
    /// end theirs. Only supervisor and machine blocks hold them (a user-mode block ends
    /// before one, so user code's control-flow targets, which coverage counts, stay where
    /// they were); every other path hands them to `Hart::step`.
    Csr,
}

impl Kind {
    /// Access size in bytes and sign extension of a load kind.
    pub(crate) fn load_shape(self) -> Option<(u8, bool)> {
        Some(match self {
            Kind::Lb => (1, true),
            Kind::Lh => (2, true),
            Kind::Lw => (4, true),
            Kind::Ld => (8, false),
            Kind::Lbu => (1, false),
            Kind::Lhu => (2, false),
            Kind::Lwu => (4, false),
            _ => return None,
        })
    }

    /// Whether this is one of the F and D extensions' loads and stores, which run on the
    /// fast paths only while mstatus.FS is not Off (C programs and the kernel save and
    /// restore floating-point registers with them: a busybox shell's loop ran 129,000
    /// FSDs per 37 M instructions, each one ending a block and stepped on its own).
    #[inline(always)]
    pub(crate) fn needs_fpu(self) -> bool {
        matches!(self, Kind::Flw | Kind::Fld | Kind::Fsw | Kind::Fsd)
    }

    /// Whether a block built at privilege `prv` may hold an instruction of this kind: any
    /// with a fast path, but a CSR access only outside user mode (see [`Kind::Csr`]).
    /// `Hart::build_block` builds by this rule and a warm restore checks saved blocks by it.
    pub(crate) fn in_block(self, prv: crate::csr::Priv) -> bool {
        match self {
            Kind::Slow => false,
            Kind::Csr => prv != crate::csr::Priv::User,
            _ => true,
        }
    }

    /// Whether a block ends with this instruction (a jump: JAL or JALR; conditional
    /// branches do not end one, a taken one leaves it early). `Hart::build_block` builds by
    /// this rule, and a restore refuses a saved or learned block with a jump before its end.
    pub(crate) fn ends_block(self) -> bool {
        matches!(self, Kind::Jal | Kind::Jalr)
    }

    /// Access size in bytes of a store kind.
    pub(crate) fn store_size(self) -> Option<u8> {
        Some(match self {
            Kind::Sb => 1,
            Kind::Sh => 2,
            Kind::Sw => 4,
            Kind::Sd => 8,
            _ => return None,
        })
    }
}

impl Op {
    /// The instruction an [`Kind::Amo`] op was decoded from (A-extension instructions have
    /// no compressed form).
    #[inline]
    pub(crate) fn amo_insn(&self) -> u32 {
        debug_assert!(self.kind == Kind::Amo);
        self.imm as u32
            | u32::from(self.rs2 & 31) << 20
            | u32::from(self.rs1 & 31) << 15
            | u32::from(self.rd & 31) << 7
            | 0x2f
    }

    /// The instruction a [`Kind::Csr`] op was decoded from (CSR accesses have no compressed
    /// form).
    #[inline]
    pub(crate) fn csr_insn(&self) -> u32 {
        debug_assert!(self.kind == Kind::Csr);
        self.imm as u32 | u32::from(self.rs1 & 31) << 15 | u32::from(self.rd & 31) << 7 | 0x73
    }
}

/// A pre-decoded instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Op {
    pub(crate) kind: Kind,
    pub(crate) rd: u8,
    pub(crate) rs1: u8,
    pub(crate) rs2: u8,
    /// The immediate (every RV64I/M immediate, LUI's and AUIPC's included, fits 32 bits
    /// sign-extended): 4 bytes keep an `Op` at 8 and a cache slot at 48.
    pub(crate) imm: i32,
}

impl Op {
    /// The "no fast path" op.
    pub(crate) const SLOW: Op = Op {
        kind: Kind::Slow,
        rd: 0,
        rs1: 0,
        rs2: 0,
        imm: 0,
    };
}

fn imm_i(i: u32) -> i64 {
    i64::from((i as i32) >> 20)
}
fn imm_s(i: u32) -> i64 {
    i64::from((((i as i32) >> 25) << 5) | ((i >> 7) & 31) as i32)
}
fn imm_b(i: u32) -> i64 {
    i64::from(
        (((i as i32) >> 31) << 12)
            | (((i >> 7) & 1) << 11) as i32
            | (((i >> 25) & 0x3f) << 5) as i32
            | (((i >> 8) & 0xf) << 1) as i32,
    )
}
fn imm_j(i: u32) -> i64 {
    i64::from(
        (((i as i32) >> 31) << 20)
            | (((i >> 12) & 0xff) << 12) as i32
            | (((i >> 20) & 1) << 11) as i32
            | (((i >> 21) & 0x3ff) << 1) as i32,
    )
}

/// Decodes a 32-bit (or expanded) instruction into an [`Op`] for a hart implementing
/// `isa` (the bit-manipulation extensions it has get [`Kind::Bit`]).
pub(crate) fn decode(i: u32, isa: crate::isa::Isa) -> Op {
    let rd = ((i >> 7) & 31) as u8;
    let rs1 = ((i >> 15) & 31) as u8;
    let rs2 = ((i >> 20) & 31) as u8;
    let f3 = (i >> 12) & 7;
    let f7 = i >> 25;
    let op = |kind: Kind, imm: i64| {
        debug_assert!(i32::try_from(imm).is_ok(), "immediate {imm} of {i:#x}");
        Op {
            kind,
            rd,
            rs1,
            rs2,
            imm: imm as i32,
        }
    };
    if let Some(how) = crate::bitmanip::decode(i, isa) {
        return op(Kind::Bit, i64::from(how));
    }
    match i & 0x7f {
        0x37 => op(Kind::Lui, i64::from((i & 0xffff_f000) as i32)),
        0x17 => op(Kind::Auipc, i64::from((i & 0xffff_f000) as i32)),
        0x6f => op(Kind::Jal, imm_j(i)),
        0x67 if f3 == 0 => op(Kind::Jalr, imm_i(i)),
        0x63 => {
            let k = match f3 {
                0 => Kind::Beq,
                1 => Kind::Bne,
                4 => Kind::Blt,
                5 => Kind::Bge,
                6 => Kind::Bltu,
                7 => Kind::Bgeu,
                _ => return Op::SLOW,
            };
            op(k, imm_b(i))
        }
        0x03 => {
            let k = match f3 {
                0 => Kind::Lb,
                1 => Kind::Lh,
                2 => Kind::Lw,
                3 => Kind::Ld,
                4 => Kind::Lbu,
                5 => Kind::Lhu,
                6 => Kind::Lwu,
                _ => return Op::SLOW,
            };
            op(k, imm_i(i))
        }
        0x2f if f3 == 2 || f3 == 3 => op(Kind::Amo, i64::from((i & 0xfe00_7000) as i32)),
        0x07 => match f3 {
            2 => op(Kind::Flw, imm_i(i)),
            3 => op(Kind::Fld, imm_i(i)),
            _ => Op::SLOW,
        },
        0x27 => match f3 {
            2 => op(Kind::Fsw, imm_s(i)),
            3 => op(Kind::Fsd, imm_s(i)),
            _ => Op::SLOW,
        },
        0x23 => {
            let k = match f3 {
                0 => Kind::Sb,
                1 => Kind::Sh,
                2 => Kind::Sw,
                3 => Kind::Sd,
                _ => return Op::SLOW,
            };
            op(k, imm_s(i))
        }
        0x13 => {
            let imm = imm_i(i);
            match f3 {
                0 => op(Kind::Addi, imm),
                2 => op(Kind::Slti, imm),
                3 => op(Kind::Sltiu, imm),
                4 => op(Kind::Xori, imm),
                6 => op(Kind::Ori, imm),
                7 => op(Kind::Andi, imm),
                1 if (imm >> 6) & 0x3f == 0 => op(Kind::Slli, imm & 0x3f),
                5 if (imm >> 6) & 0x3f == 0 => op(Kind::Srli, imm & 0x3f),
                5 if (imm >> 6) & 0x3f == 0x10 => op(Kind::Srai, imm & 0x3f),
                _ => Op::SLOW,
            }
        }
        0x1b => match (f3, f7) {
            (0, _) => op(Kind::Addiw, imm_i(i)),
            (1, 0) => op(Kind::Slliw, i64::from(rs2)),
            (5, 0) => op(Kind::Srliw, i64::from(rs2)),
            (5, 0x20) => op(Kind::Sraiw, i64::from(rs2)),
            _ => Op::SLOW,
        },
        0x33 => {
            let k = match (f7, f3) {
                (0, 0) => Kind::Add,
                (0x20, 0) => Kind::Sub,
                (0, 1) => Kind::Sll,
                (0, 2) => Kind::Slt,
                (0, 3) => Kind::Sltu,
                (0, 4) => Kind::Xor,
                (0, 5) => Kind::Srl,
                (0x20, 5) => Kind::Sra,
                (0, 6) => Kind::Or,
                (0, 7) => Kind::And,
                (1, 0) => Kind::Mul,
                (1, f3) => return op(Kind::MulDiv, i64::from(f3)),
                _ => return Op::SLOW,
            };
            op(k, 0)
        }
        0x3b => {
            let k = match (f7, f3) {
                (0, 0) => Kind::Addw,
                (0x20, 0) => Kind::Subw,
                (0, 1) => Kind::Sllw,
                (0, 5) => Kind::Srlw,
                (0x20, 5) => Kind::Sraw,
                (1, 0) => Kind::Mulw,
                (1, f3 @ 4..=7) => return op(Kind::DivW, i64::from(f3)),
                _ => return Op::SLOW,
            };
            op(k, 0)
        }
        // FENCE (any predecessor/successor sets, and FENCE.TSO); FENCE.I is funct3 1.
        0x0f if f3 == 0 => op(Kind::Fence, 0),
        0x73 if f3 != 0 && f3 != 4 => op(Kind::Csr, i64::from((i & 0xfff0_7000) as i32)),
        _ => Op::SLOW,
    }
}
