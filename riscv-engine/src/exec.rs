//! Instruction semantics: RV64I, M, A, Zicsr, Zifencei, privileged
//! instructions, and the F/D loads, stores and operations (via `fpu`).
//! Compressed instructions are expanded first (`rvc`).

use crate::bus::Bus;
use crate::csr::{cause, mstatus, Priv};
use crate::fpu;
use crate::hart::{Hart, NO_RESERVATION};
use crate::mmu::Access;
use crate::predecode::{Kind, Op};
use crate::trap::{Flow, Stop, Trap};

#[inline]
fn rd(i: u32) -> usize {
    ((i >> 7) & 31) as usize
}
#[inline]
fn rs1(i: u32) -> usize {
    ((i >> 15) & 31) as usize
}
#[inline]
fn rs2(i: u32) -> usize {
    ((i >> 20) & 31) as usize
}
#[inline]
fn funct3(i: u32) -> u32 {
    (i >> 12) & 7
}
#[inline]
fn imm_i(i: u32) -> u64 {
    ((i as i32) >> 20) as i64 as u64
}
#[inline]
fn imm_s(i: u32) -> u64 {
    ((((i as i32) >> 25) << 5) | ((i >> 7) & 31) as i32) as i64 as u64
}
#[inline]
fn imm_b(i: u32) -> u64 {
    let v = (((i as i32) >> 31) << 12)
        | (((i >> 7) & 1) << 11) as i32
        | (((i >> 25) & 0x3f) << 5) as i32
        | (((i >> 8) & 0xf) << 1) as i32;
    v as i64 as u64
}
#[inline]
fn imm_u(i: u32) -> u64 {
    (i & 0xffff_f000) as i32 as i64 as u64
}
#[inline]
fn imm_j(i: u32) -> u64 {
    let v = (((i as i32) >> 31) << 20)
        | (((i >> 12) & 0xff) << 12) as i32
        | (((i >> 20) & 1) << 11) as i32
        | (((i >> 21) & 0x3ff) << 1) as i32;
    v as i64 as u64
}
/// Whether CSR access `i` writes its CSR: CSRRW(I) always, CSRRS(I)/CSRRC(I) unless their
/// source is x0 (or the immediate 0).
#[inline]
fn csr_writes(i: u32) -> bool {
    funct3(i) & 3 == 1 || rs1(i) != 0
}
#[inline]
fn sext32(v: u64) -> u64 {
    v as i32 as i64 as u64
}

fn illegal(insn: u32) -> Trap {
    Trap::new(cause::ILLEGAL_INSN, u64::from(insn))
}

/// The M extension's multiply-high, divide and remainder by funct3 (1-3: MULH, MULHSU,
/// MULHU; 4-7: DIV, DIVU, REM, REMU), `word` for the 32-bit forms (4-7 only), with
/// RISC-V's results for division by zero and overflow. The one definition the
/// interpreter, its fast path and compiled blocks all use.
pub(crate) fn muldiv(f3: u32, word: bool, x1: u64, x2: u64) -> u64 {
    if word {
        let (a, b) = (x1 as u32, x2 as u32);
        return match f3 {
            4 => {
                let (a, b) = (a as i32, b as i32);
                if b == 0 {
                    u64::MAX
                } else {
                    a.wrapping_div(b) as i64 as u64
                }
            }
            5 => a.checked_div(b).map_or(u64::MAX, |q| sext32(u64::from(q))),
            6 => {
                let (a, b) = (a as i32, b as i32);
                if b == 0 {
                    a as i64 as u64
                } else {
                    a.wrapping_rem(b) as i64 as u64
                }
            }
            _ => {
                if b == 0 {
                    sext32(u64::from(a))
                } else {
                    sext32(u64::from(a % b))
                }
            }
        };
    }
    match f3 {
        0 => x1.wrapping_mul(x2),
        1 => mulh(x1 as i64, x2 as i64),
        2 => mulhsu(x1 as i64, x2),
        3 => mulhu(x1, x2),
        4 => {
            let (a, b) = (x1 as i64, x2 as i64);
            if b == 0 {
                u64::MAX
            } else {
                a.wrapping_div(b) as u64
            }
        }
        5 => x1.checked_div(x2).unwrap_or(u64::MAX),
        6 => {
            let (a, b) = (x1 as i64, x2 as i64);
            if b == 0 {
                x1
            } else {
                a.wrapping_rem(b) as u64
            }
        }
        _ => {
            if x2 == 0 {
                x1
            } else {
                x1 % x2
            }
        }
    }
}

fn mulh(a: i64, b: i64) -> u64 {
    ((i128::from(a) * i128::from(b)) >> 64) as u64
}
fn mulhu(a: u64, b: u64) -> u64 {
    ((u128::from(a) * u128::from(b)) >> 64) as u64
}
fn mulhsu(a: i64, b: u64) -> u64 {
    ((i128::from(a) * b as i128) >> 64) as u64
}

impl Hart {
    /// Executes one instruction (or takes one exception); returns a stop request.
    #[inline]
    pub(crate) fn step(&mut self, bus: &mut dyn Bus) -> Option<Stop> {
        self.cycles += 1;
        let d = match self.decoded(bus) {
            Ok(d) => d,
            Err(t) => {
                self.take_trap(t.cause, t.tval);
                return None;
            }
        };
        let (insn, raw16, len) = (d.insn, d.raw16, u64::from(d.len));
        let result = if self.general_only(d.op.kind) {
            self.execute(bus, insn, len)
        } else {
            self.exec_fast(bus, &d.op, len)
        };
        match result {
            Ok(Flow::Next) => {
                self.pc = self.pc.wrapping_add(len);
                self.instret += 1;
                None
            }
            Ok(Flow::Jumped) => {
                self.instret += 1;
                None
            }
            Ok(Flow::Stop(s)) => {
                self.pc = self.pc.wrapping_add(len);
                self.instret += 1;
                Some(s)
            }
            Err(mut t) => {
                if t.cause == cause::ILLEGAL_INSN {
                    // xtval holds the instruction as it was fetched (16 bits for RVC).
                    t.tval = if len == 2 {
                        u64::from(raw16)
                    } else {
                        u64::from(insn)
                    };
                }
                self.take_trap(t.cause, t.tval);
                None
            }
        }
    }

    /// Whether an instruction of `kind` runs through the general executor (`execute`, by
    /// [`Hart::step`]) rather than `exec_fast`: no fast path, a CSR access (fast only inside
    /// blocks, see `Kind::Csr`), or an FP load or store with the FPU off (its trap reports the
    /// instruction's bytes, which only `step` has).
    #[inline(always)]
    pub(crate) fn general_only(&self, kind: Kind) -> bool {
        matches!(kind, Kind::Slow | Kind::Csr) || (kind.needs_fpu() && !self.fpu_on())
    }

    /// The fast path for pre-decoded instructions (same semantics as `execute`).
    #[inline(always)]
    pub(crate) fn exec_fast(&mut self, bus: &mut dyn Bus, op: &Op, len: u64) -> Result<Flow, Trap> {
        let x1 = self.x[usize::from(op.rs1 & 31)];
        let x2 = self.x[usize::from(op.rs2 & 31)];
        let imm = op.imm as u64;
        let rd = usize::from(op.rd & 31);
        let v = match op.kind {
            Kind::Slow | Kind::Csr => unreachable!("slow ops and CSR accesses go through execute"),
            Kind::Lui => imm,
            Kind::Auipc => self.pc.wrapping_add(imm),
            Kind::Jal => {
                let target = self.pc.wrapping_add(imm);
                self.set(rd, self.pc.wrapping_add(len));
                self.pc = target;
                return Ok(Flow::Jumped);
            }
            Kind::Jalr => {
                let target = x1.wrapping_add(imm) & !1;
                self.set(rd, self.pc.wrapping_add(len));
                self.pc = target;
                return Ok(Flow::Jumped);
            }
            Kind::Beq | Kind::Bne | Kind::Blt | Kind::Bge | Kind::Bltu | Kind::Bgeu => {
                let taken = match op.kind {
                    Kind::Beq => x1 == x2,
                    Kind::Bne => x1 != x2,
                    Kind::Blt => (x1 as i64) < (x2 as i64),
                    Kind::Bge => (x1 as i64) >= (x2 as i64),
                    Kind::Bltu => x1 < x2,
                    _ => x1 >= x2,
                };
                if taken {
                    self.pc = self.pc.wrapping_add(imm);
                    return Ok(Flow::Jumped);
                }
                return Ok(Flow::Next);
            }
            Kind::Lb => self.load(bus, x1.wrapping_add(imm), 1)? as i8 as i64 as u64,
            Kind::Lh => self.load(bus, x1.wrapping_add(imm), 2)? as i16 as i64 as u64,
            Kind::Lw => self.load(bus, x1.wrapping_add(imm), 4)? as i32 as i64 as u64,
            Kind::Ld => self.load(bus, x1.wrapping_add(imm), 8)?,
            Kind::Lbu => self.load(bus, x1.wrapping_add(imm), 1)?,
            Kind::Lhu => self.load(bus, x1.wrapping_add(imm), 2)?,
            Kind::Lwu => self.load(bus, x1.wrapping_add(imm), 4)?,
            Kind::Sb | Kind::Sh | Kind::Sw | Kind::Sd => {
                let size = op.kind.store_size().unwrap_or(8);
                self.store(bus, x1.wrapping_add(imm), size, x2)?;
                return Ok(Flow::Next);
            }
            Kind::Addi => x1.wrapping_add(imm),
            Kind::Slti => u64::from((x1 as i64) < (imm as i64)),
            Kind::Sltiu => u64::from(x1 < imm),
            Kind::Xori => x1 ^ imm,
            Kind::Ori => x1 | imm,
            Kind::Andi => x1 & imm,
            Kind::Slli => x1 << imm,
            Kind::Srli => x1 >> imm,
            Kind::Srai => ((x1 as i64) >> imm) as u64,
            Kind::Addiw => sext32(x1.wrapping_add(imm)),
            Kind::Slliw => sext32(u64::from((x1 as u32) << imm)),
            Kind::Srliw => sext32(u64::from((x1 as u32) >> imm)),
            Kind::Sraiw => ((x1 as i32) >> imm) as i64 as u64,
            Kind::Add => x1.wrapping_add(x2),
            Kind::Sub => x1.wrapping_sub(x2),
            Kind::Sll => x1 << (x2 & 63),
            Kind::Slt => u64::from((x1 as i64) < (x2 as i64)),
            Kind::Sltu => u64::from(x1 < x2),
            Kind::Xor => x1 ^ x2,
            Kind::Srl => x1 >> (x2 & 63),
            Kind::Sra => ((x1 as i64) >> (x2 & 63)) as u64,
            Kind::Or => x1 | x2,
            Kind::And => x1 & x2,
            Kind::Addw => sext32(u64::from((x1 as u32).wrapping_add(x2 as u32))),
            Kind::Subw => sext32(u64::from((x1 as u32).wrapping_sub(x2 as u32))),
            Kind::Sllw => sext32(u64::from((x1 as u32) << (x2 & 31))),
            Kind::Srlw => sext32(u64::from((x1 as u32) >> (x2 & 31))),
            Kind::Sraw => ((x1 as i32) >> (x2 & 31)) as i64 as u64,
            Kind::Mul => x1.wrapping_mul(x2),
            Kind::Mulw => sext32(u64::from((x1 as u32).wrapping_mul(x2 as u32))),
            Kind::MulDiv => muldiv(op.imm as u32 & 7, false, x1, x2),
            Kind::DivW => muldiv(op.imm as u32 & 7, true, x1, x2),
            Kind::Fence => return Ok(Flow::Next),
            Kind::Bit => crate::bitmanip::eval(op.imm as u32, x1, x2),
            // As `execute`'s opcodes 0x07 and 0x27 with the FPU on, which every caller
            // checked (`Kind::needs_fpu`).
            Kind::Flw | Kind::Fld => {
                debug_assert!(self.fpu_on());
                let a = x1.wrapping_add(imm);
                self.fp.f[rd] = if op.kind == Kind::Flw {
                    fpu::nan_box_s(self.load(bus, a, 4)? as u32)
                } else {
                    self.load(bus, a, 8)?
                };
                self.fs_dirty();
                return Ok(Flow::Next);
            }
            Kind::Fsw | Kind::Fsd => {
                debug_assert!(self.fpu_on());
                let size = if op.kind == Kind::Fsw { 4 } else { 8 };
                let v = self.fp.f[usize::from(op.rs2 & 31)];
                self.store(bus, x1.wrapping_add(imm), size, v)?;
                return Ok(Flow::Next);
            }
            Kind::Amo => {
                self.atomic(bus, op.amo_insn(), x1, x2)?;
                return Ok(Flow::Next);
            }
        };
        self.set(rd, v);
        Ok(Flow::Next)
    }

    /// Whether the FPU is on (mstatus.FS not Off): the F and D instructions run.
    #[inline(always)]
    pub(crate) fn fpu_on(&self) -> bool {
        self.mstatus & mstatus::FS != 0
    }

    #[inline]
    fn set(&mut self, r: usize, v: u64) {
        if r != 0 {
            self.x[r] = v;
        }
    }

    fn execute(&mut self, bus: &mut dyn Bus, i: u32, len: u64) -> Result<Flow, Trap> {
        let x1 = self.x[rs1(i)];
        let x2 = self.x[rs2(i)];
        match i & 0x7f {
            0x37 => self.set(rd(i), imm_u(i)),
            0x17 => self.set(rd(i), self.pc.wrapping_add(imm_u(i))),
            0x6f => {
                let target = self.pc.wrapping_add(imm_j(i));
                self.set(rd(i), self.pc.wrapping_add(len));
                self.pc = target;
                return Ok(Flow::Jumped);
            }
            0x67 => {
                if funct3(i) != 0 {
                    return Err(illegal(i));
                }
                let target = x1.wrapping_add(imm_i(i)) & !1;
                self.set(rd(i), self.pc.wrapping_add(len));
                self.pc = target;
                return Ok(Flow::Jumped);
            }
            0x63 => {
                let taken = match funct3(i) {
                    0 => x1 == x2,
                    1 => x1 != x2,
                    4 => (x1 as i64) < (x2 as i64),
                    5 => (x1 as i64) >= (x2 as i64),
                    6 => x1 < x2,
                    7 => x1 >= x2,
                    _ => return Err(illegal(i)),
                };
                if taken {
                    self.pc = self.pc.wrapping_add(imm_b(i));
                    return Ok(Flow::Jumped);
                }
            }
            0x03 => {
                let a = x1.wrapping_add(imm_i(i));
                let v = match funct3(i) {
                    0 => self.load(bus, a, 1)? as i8 as i64 as u64,
                    1 => self.load(bus, a, 2)? as i16 as i64 as u64,
                    2 => self.load(bus, a, 4)? as i32 as i64 as u64,
                    3 => self.load(bus, a, 8)?,
                    4 => self.load(bus, a, 1)?,
                    5 => self.load(bus, a, 2)?,
                    6 => self.load(bus, a, 4)?,
                    _ => return Err(illegal(i)),
                };
                self.set(rd(i), v);
            }
            0x23 => {
                let a = x1.wrapping_add(imm_s(i));
                let size = match funct3(i) {
                    0 => 1,
                    1 => 2,
                    2 => 4,
                    3 => 8,
                    _ => return Err(illegal(i)),
                };
                self.store(bus, a, size, x2)?;
            }
            0x13 => {
                let imm = imm_i(i);
                let shamt = (imm & 0x3f) as u32;
                let v = match funct3(i) {
                    0 => x1.wrapping_add(imm),
                    1 if imm >> 6 == 0 => x1 << shamt,
                    2 => u64::from((x1 as i64) < (imm as i64)),
                    3 => u64::from(x1 < imm),
                    4 => x1 ^ imm,
                    5 if (imm >> 6) & 0x3f == 0 => x1 >> shamt,
                    5 if (imm >> 6) & 0x3f == 0x10 => ((x1 as i64) >> shamt) as u64,
                    6 => x1 | imm,
                    7 => x1 & imm,
                    _ => return Err(illegal(i)),
                };
                self.set(rd(i), v);
            }
            0x1b => {
                let imm = imm_i(i);
                let shamt = (imm & 0x1f) as u32;
                let v = match (funct3(i), i >> 25) {
                    (0, _) => sext32(x1.wrapping_add(imm)),
                    (1, 0) => sext32(u64::from((x1 as u32) << shamt)),
                    (5, 0) => sext32(u64::from((x1 as u32) >> shamt)),
                    (5, 0x20) => ((x1 as i32) >> shamt) as i64 as u64,
                    _ => return Err(illegal(i)),
                };
                self.set(rd(i), v);
            }
            0x33 => {
                let v = match (i >> 25, funct3(i)) {
                    (0, 0) => x1.wrapping_add(x2),
                    (0x20, 0) => x1.wrapping_sub(x2),
                    (0, 1) => x1 << (x2 & 63),
                    (0, 2) => u64::from((x1 as i64) < (x2 as i64)),
                    (0, 3) => u64::from(x1 < x2),
                    (0, 4) => x1 ^ x2,
                    (0, 5) => x1 >> (x2 & 63),
                    (0x20, 5) => ((x1 as i64) >> (x2 & 63)) as u64,
                    (0, 6) => x1 | x2,
                    (0, 7) => x1 & x2,
                    (1, 0) => x1.wrapping_mul(x2),
                    (1, f3) => muldiv(f3, false, x1, x2),
                    _ => return Err(illegal(i)),
                };
                self.set(rd(i), v);
            }
            0x3b => {
                let (a, b) = (x1 as u32, x2 as u32);
                let v = match (i >> 25, funct3(i)) {
                    (0, 0) => sext32(u64::from(a.wrapping_add(b))),
                    (0x20, 0) => sext32(u64::from(a.wrapping_sub(b))),
                    (0, 1) => sext32(u64::from(a << (b & 31))),
                    (0, 5) => sext32(u64::from(a >> (b & 31))),
                    (0x20, 5) => ((a as i32) >> (b & 31)) as i64 as u64,
                    (1, 0) => sext32(u64::from(a.wrapping_mul(b))),
                    (1, f3 @ 4..=7) => muldiv(f3, true, x1, x2),
                    _ => return Err(illegal(i)),
                };
                self.set(rd(i), v);
            }
            0x0f => match funct3(i) {
                0 => {}                         // FENCE: one hart, in-order memory
                1 => self.icache.uncheck_all(), // FENCE.I: stores become visible to fetch
                _ => return Err(illegal(i)),
            },
            0x73 => return self.system(bus, i),
            0x2f => self.atomic(bus, i, x1, x2)?,
            0x07 | 0x27
                if crate::vector::vector_width(funct3(i)).is_some() && self.has_vector() =>
            {
                return self.vector_mem(bus, i, i & 0x7f == 0x27);
            }
            0x57 if self.has_vector() => return self.vector_op(bus, i),
            0x07 => {
                if self.mstatus & mstatus::FS == 0 {
                    return Err(illegal(i));
                }
                let a = x1.wrapping_add(imm_i(i));
                let v = match funct3(i) {
                    2 => fpu::nan_box_s(self.load(bus, a, 4)? as u32),
                    3 => self.load(bus, a, 8)?,
                    _ => return Err(illegal(i)),
                };
                self.fp.f[rd(i)] = v;
                self.fs_dirty();
            }
            0x27 => {
                if self.mstatus & mstatus::FS == 0 {
                    return Err(illegal(i));
                }
                let a = x1.wrapping_add(imm_s(i));
                let v = self.fp.f[rs2(i)];
                match funct3(i) {
                    2 => self.store(bus, a, 4, v)?,
                    3 => self.store(bus, a, 8, v)?,
                    _ => return Err(illegal(i)),
                }
            }
            0x43 | 0x47 | 0x4b | 0x4f | 0x53 => {
                if self.mstatus & mstatus::FS == 0 {
                    return Err(illegal(i));
                }
                match fpu::execute(&mut self.fp, i, x1) {
                    Ok(Some(v)) => self.set(rd(i), v),
                    Ok(None) => {}
                    Err(_) => return Err(illegal(i)),
                }
                self.fs_dirty();
            }
            _ => return Err(illegal(i)),
        }
        Ok(Flow::Next)
    }

    fn system(&mut self, bus: &mut dyn Bus, i: u32) -> Result<Flow, Trap> {
        let f3 = funct3(i);
        if f3 == 0 {
            match i {
                0x0000_0073 => {
                    return match self.prv {
                        Priv::Supervisor if !self.firmware => Ok(Flow::Stop(Stop::SbiCall)),
                        Priv::Supervisor => Err(Trap::new(cause::ECALL_S, 0)),
                        Priv::User => Err(Trap::new(cause::ECALL_U, 0)),
                        Priv::Machine => Err(Trap::new(cause::ECALL_M, 0)),
                    };
                }
                0x0010_0073 => return Err(Trap::new(cause::BREAKPOINT, self.pc)),
                0x1020_0073 => {
                    // SRET
                    if self.prv == Priv::User
                        || (self.prv == Priv::Supervisor && self.mstatus & mstatus::TSR != 0)
                    {
                        return Err(illegal(i));
                    }
                    self.xret(false);
                    return Ok(Flow::Jumped);
                }
                0x3020_0073 => {
                    if self.prv != Priv::Machine {
                        return Err(illegal(i));
                    }
                    self.xret(true);
                    return Ok(Flow::Jumped);
                }
                0x1050_0073 => {
                    // WFI
                    if self.prv == Priv::User
                        || (self.prv == Priv::Supervisor && self.mstatus & mstatus::TW != 0)
                    {
                        return Err(illegal(i));
                    }
                    if self.mip(bus) & self.mie != 0 {
                        return Ok(Flow::Next);
                    }
                    return Ok(Flow::Stop(Stop::Wfi));
                }
                _ if i >> 25 == 0x09 && rd(i) == 0 => {
                    // SFENCE.VMA
                    if self.prv == Priv::User
                        || (self.prv == Priv::Supervisor && self.mstatus & mstatus::TVM != 0)
                    {
                        return Err(illegal(i));
                    }
                    // Without ASIDs (satp has none), rs2 does not narrow the fence.
                    if rs1(i) != 0 {
                        self.flush_tlb_page(self.x[rs1(i)]);
                    } else {
                        self.flush_tlb();
                    }
                    return Ok(Flow::Next);
                }
                _ => return Err(illegal(i)),
            }
        }
        let csr = (i >> 20) as u16;
        let src = if f3 & 4 != 0 {
            rs1(i) as u64
        } else {
            self.x[rs1(i)]
        };
        let writes = csr_writes(i);
        let reads = !(f3 & 3 == 1 && rd(i) == 0);
        if writes && csr >> 10 == 3 {
            return Err(illegal(i));
        }
        let old = if reads || f3 & 3 != 1 {
            self.csr_read(csr, bus).map_err(|()| illegal(i))?
        } else {
            // CSRRW with rd = x0 does not read, but the CSR must still exist and be accessible.
            self.csr_read(csr, bus).map_err(|()| illegal(i))?;
            0
        };
        if writes {
            // CSRRS/CSRRC modify what software can write: in mip/sip the bits lines drive
            // (the external interrupt, the timer) read as pending but must not be
            // written back as software bits (a csrs mip, STIP while the PLIC line is high
            // would latch SEIP forever).
            let base = self.csr_rmw_base(csr, old);
            let new = match f3 & 3 {
                1 => src,
                2 => base | src,
                _ => base & !src,
            };
            self.csr_write(csr, new).map_err(|()| illegal(i))?;
        }
        self.set(rd(i), old);
        Ok(Flow::Next)
    }

    /// Runs a CSR access inside a block (see [`Kind::Csr`]) exactly as [`Hart::step`]
    /// would, with the counters and pc already as the interpreter has them at this
    /// instruction (`cycles` counting it, `instret` not), but without moving the pc or
    /// `instret` past it: the caller does. `Ok(true)` when the block must end after it.
    ///
    /// It ends the block when the access may have changed what the rest of the block or
    /// the run loop's chunk rests on: a write to any CSR but the status registers and
    /// the trap-handling scratch registers; a status write changing more than the
    /// interrupt enables and the data-access bits SUM and MXR (the load and store
    /// shortcuts, which a change empties, are read afresh by every access); a change of
    /// the translation, the caches, the timer or the next device event. When the access
    /// set `irq_dirty` (any status write does), the run loop would look for an interrupt
    /// to take before the next instruction: if one is deliverable the block ends so that
    /// it does; if none is, the look would find nothing and change nothing (the chunk's
    /// end is the same, checked above), so the block goes on with `irq_dirty` cleared, as
    /// that look leaves it.
    pub(crate) fn csr_in_block(&mut self, bus: &mut dyn Bus, i: u32) -> Result<bool, Trap> {
        use crate::csr::addr;
        debug_assert!(
            !self.irq_dirty,
            "blocks run only with no interrupt check due"
        );
        let stamp = (self.icache.generation, self.icache.fence, self.satp);
        let (status, deadline, event) =
            (self.mstatus, self.timer_deadline(), bus.next_event_cycle());
        self.system(bus, i)?;
        let kept = !csr_writes(i)
            || matches!(
                (i >> 20) as u16,
                addr::SSTATUS
                    | addr::MSTATUS
                    | addr::SSCRATCH
                    | addr::MSCRATCH
                    | addr::SEPC
                    | addr::MEPC
                    | addr::SCAUSE
                    | addr::MCAUSE
                    | addr::STVAL
                    | addr::MTVAL
            );
        let enables = mstatus::SIE | mstatus::MIE | mstatus::SUM | mstatus::MXR;
        let leave = !kept
            || (status ^ self.mstatus) & !enables != 0
            || stamp != (self.icache.generation, self.icache.fence, self.satp)
            || deadline != self.timer_deadline()
            || event != bus.next_event_cycle()
            || self.timer_written;
        if self.irq_dirty && !leave && self.pending_interrupt(bus).is_none() {
            self.irq_dirty = false;
        }
        Ok(leave || self.irq_dirty)
    }

    pub(crate) fn atomic(
        &mut self,
        bus: &mut dyn Bus,
        i: u32,
        x1: u64,
        x2: u64,
    ) -> Result<(), Trap> {
        let size: u8 = match funct3(i) {
            2 => 4,
            3 => 8,
            _ => return Err(illegal(i)),
        };
        let funct5 = i >> 27;
        let extend = |v: u64| if size == 4 { sext32(v) } else { v };
        match funct5 {
            0x02 => {
                // LR
                if rs2(i) != 0 {
                    return Err(illegal(i));
                }
                let off = self.amo_address(bus, x1, size, Access::Load)?;
                let v = extend(self.ram.read_at(off, size));
                self.reservation = self.ram.base() + off as u64;
                self.set(rd(i), v);
            }
            0x03 => {
                // SC
                let off = self.amo_address(bus, x1, size, Access::Store)?;
                let paddr = self.ram.base() + off as u64;
                if self.reservation == paddr {
                    self.ram.write_at(off, size, x2);
                    self.force_stuck(paddr, size);
                    self.set(rd(i), 0);
                } else {
                    self.set(rd(i), 1);
                }
                self.reservation = NO_RESERVATION;
            }
            _ => {
                let off = self.amo_address(bus, x1, size, Access::Store)?;
                let old = extend(self.ram.read_at(off, size));
                let b = extend(x2);
                let new = match funct5 {
                    0x01 => b,
                    0x00 => old.wrapping_add(b),
                    0x04 => old ^ b,
                    0x0c => old & b,
                    0x08 => old | b,
                    0x10 => (old as i64).min(b as i64) as u64,
                    0x14 => (old as i64).max(b as i64) as u64,
                    0x18 => old.min(b),
                    0x1c => old.max(b),
                    _ => return Err(illegal(i)),
                };
                self.ram.write_at(off, size, new);
                self.force_stuck(self.ram.base() + off as u64, size);
                if self.reservation != NO_RESERVATION
                    && self.reservation >> 3 == (self.ram.base() + off as u64) >> 3
                {
                    self.reservation = NO_RESERVATION;
                }
                self.set(rd(i), old);
            }
        }
        Ok(())
    }
}
