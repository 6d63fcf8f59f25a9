//! The block compiler: hot blocks (see `icache::Block`) become x86-64 machine code.
//!
//! A compiled block does exactly what `Hart::exec_block` does with the same
//! instructions, minus the per-instruction dispatch: registers live in
//! `Hart::x` and are loaded and stored per instruction, loads and stores take
//! the same page shortcuts (`Hart::load_pages` / `store_pages`) inline and
//! call back into the interpreter's own `load` / `store` for everything else
//! (page walks, MMIO, faults, the LR reservation). The instruction count is
//! untouched: a block is entered only when all of it fits before the next
//! deadline (as interpreted blocks are), it adds its length to `cycles` and
//! `instret` when it completes, and a call-back that traps or touches a device
//! settles the counters, pc and the destination register at that instruction and
//! leaves the block, as the interpreter does. So whether a block ran compiled
//! or interpreted is invisible to the guest, to the trace and to snapshots
//! (compiled code is never saved; it is rebuilt from the decoded-instruction
//! cache, which is).
//!
//! Only x86-64 hosts compile; elsewhere every block is interpreted.

pub(crate) mod asm;
pub(crate) mod buffer;
mod calls;
mod looping;

use crate::bus::Bus;
use crate::hart::Hart;
use crate::icache::{Block, FastPage, FastPages, ICache, BLOCK_ENTRIES, FAST_PAGES, MAX_BLOCK};
use crate::predecode::{Kind, Op};
use asm::{Alu, Asm, Cc, Label, Shift, M, R};
use buffer::CodeBuffer;
use calls::{amo, bitmanip, csr, fp_mem, load_slow, meta, muldiv, store_slow};
use looping::{came_back, jumps_to_start, loop_back, SelfLoop};

/// Bytes of the fixed block prologue (pushes and the two register moves): a chained
/// jump enters the next block right after it.
const PROLOGUE: usize = 10;

/// A compiled block: `f(hart, ctx)`.
pub(crate) type BlockFn = unsafe extern "sysv64" fn(*mut Hart, *mut Ctx<'_>);

/// What a compiled block receives besides the hart: the bus for call-backs, and what
/// chaining to the next block needs (the block table and the end of the current chunk).
#[repr(C)]
pub(crate) struct Ctx<'a> {
    pub(crate) hart: *mut Hart,
    pub(crate) bus: *mut (dyn Bus + 'a),
    pub(crate) blocks: *const Block,
    pub(crate) chunk_end: u64,
}

/// Field offsets in [`Hart`] the generated code addresses (as displacements from rbx).
struct Layout {
    x: i32,
    pc: i32,
    cycles: i32,
    instret: i32,
    ram_ptr: i32,
    reservation: i32,
    load_entries: i32,
    store_entries: i32,
    prv: i32,
    /// The cache's (generation, fence) word.
    icache_stamp: i32,
}

fn layout() -> Layout {
    use std::mem::offset_of;
    let off = |v: usize| i32::try_from(v).expect("Hart fields lie within 2 GiB");
    let pages = offset_of!(FastPages, entries);
    Layout {
        x: off(offset_of!(Hart, x)),
        pc: off(offset_of!(Hart, pc)),
        cycles: off(offset_of!(Hart, cycles)),
        instret: off(offset_of!(Hart, instret)),
        ram_ptr: off(offset_of!(Hart, ram) + crate::ram::Ram::PTR_OFFSET),
        reservation: off(offset_of!(Hart, reservation)),
        load_entries: off(offset_of!(Hart, load_pages) + pages),
        store_entries: off(offset_of!(Hart, store_pages) + pages),
        prv: off(offset_of!(Hart, prv)),
        icache_stamp: off(offset_of!(Hart, icache) + offset_of!(ICache, generation)),
    }
}

const _: () = assert!(std::mem::size_of::<FastPage>() == 32);
const _: () = assert!(std::mem::offset_of!(FastPage, tag) == 0);
const _: () = assert!(std::mem::offset_of!(FastPage, delta) == 8);
const _: () = assert!(FAST_PAGES == 256);

/// A load's or store's call for an access its page shortcut cannot serve (see
/// `page_lookup`), emitted after the block's straight-line code: jumped to from `from`, it
/// returns to `back` (where the fast path's access ends) unless the call-back ends the
/// block.
struct SlowPath {
    from: Label,
    back: usize,
    call: SlowCall,
    /// The instruction's pc.
    pc: u64,
}

/// Which call-back a [`SlowPath`] makes, with its `meta` (and a store's value register).
enum SlowCall {
    Load(u64),
    Store(u64, M),
}

/// Generates one block's code (see the module documentation), or `None` for an empty
/// block.
pub(crate) fn assemble(start: u64, ops: &[(Op, u8, u32)]) -> Option<Vec<u8>> {
    if ops.is_empty() || ops.len() > MAX_BLOCK {
        return None;
    }
    let l = layout();
    let x = |r: u8| M::Base(R::Rbx, l.x + 8 * i32::from(r & 31));
    let mut a = Asm::default();
    let mut exit = a.label();
    // Taken branches inside the block: (their stub's label, instructions run, target).
    let mut side_exits: Vec<(Label, usize, u64)> = Vec::new();
    // The loads' and stores' calls for what their page shortcut misses, placed after the
    // block's straight-line code so that code stays dense, without a jump over them.
    let mut slow_paths: Vec<SlowPath> = Vec::new();
    // Entry: rsp is 8 mod 16; three pushes leave it 16-aligned for the call-backs.
    a.push(R::Rbx);
    a.push(R::R12);
    a.push(R::Rbp);
    a.mov_rr(R::Rbx, R::Rdi);
    a.mov_rr(R::R12, R::Rsi);
    debug_assert_eq!(a.code.len(), PROLOGUE);
    let looping = jumps_to_start(start, ops).then(|| {
        // ebp: nonzero once a call-back came back into the block (see `SelfLoop`).
        a.alu_rr(Alu::Xor, R::Rbp, R::Rbp, false);
        SelfLoop {
            len: ops.len() as i32,
        }
    });
    let mut pc = start;
    let mut next_pc = None;
    // The register rax holds a copy of (never x0): the next instruction reading it as
    // rs1 skips the load. Every path that changes rax without storing it to that
    // register sets this back to None.
    let mut rax_is: Option<u8> = None;
    for (i, (op, len, _)) in ops.iter().enumerate() {
        let cached = rax_is.take();
        let rs1_in_rax = cached.is_some() && cached == Some(op.rs1 & 31);
        let len = *len;
        let fall = pc.wrapping_add(u64::from(len));
        let imm = i64::from(op.imm);
        let rd = op.rd & 31;
        match op.kind {
            Kind::Slow => return None,
            Kind::Lui | Kind::Auipc => {
                if rd != 0 {
                    let v = if op.kind == Kind::Lui {
                        imm as u64
                    } else {
                        pc.wrapping_add(imm as u64)
                    };
                    a.mov_imm(R::Rax, v);
                    a.store64(x(rd), R::Rax);
                    rax_is = Some(rd);
                } else {
                    rax_is = cached;
                }
            }
            Kind::Jal => {
                if rd != 0 {
                    a.mov_imm(R::Rax, fall);
                    a.store64(x(rd), R::Rax);
                }
                next_pc = Some(Err(pc.wrapping_add(imm as u64)));
            }
            Kind::Jalr => {
                a.load64(R::Rcx, x(op.rs1));
                a.alu_ri(Alu::Add, R::Rcx, op.imm, true);
                a.alu_ri(Alu::And, R::Rcx, -2, true);
                if rd != 0 {
                    a.mov_imm(R::Rax, fall);
                    a.store64(x(rd), R::Rax);
                }
                a.store64(M::Base(R::Rbx, l.pc), R::Rcx);
                next_pc = Some(Ok(()));
            }
            Kind::Beq | Kind::Bne | Kind::Blt | Kind::Bge | Kind::Bltu | Kind::Bgeu => {
                let cc = match op.kind {
                    Kind::Beq => Cc::E,
                    Kind::Bne => Cc::Ne,
                    Kind::Blt => Cc::L,
                    Kind::Bge => Cc::Ge,
                    Kind::Bltu => Cc::B,
                    _ => Cc::Ae,
                };
                let target = pc.wrapping_add(imm as u64);
                // A taken branch leaves the block through a stub that settles the counters
                // for the i + 1 instructions run and chains to its target from its own
                // jump (one predictable target per jump); not taken, the block goes on (or,
                // after its last instruction, ends and chains to the next pc).
                if !rs1_in_rax {
                    a.load64(R::Rax, x(op.rs1));
                }
                a.alu_rm(Alu::Cmp, R::Rax, x(op.rs2), true);
                let mut taken = a.label();
                a.jcc(cc, &mut taken);
                side_exits.push((taken, i + 1, target));
                if op.rs1 & 31 != 0 {
                    rax_is = Some(op.rs1 & 31);
                }
            }
            Kind::Lb | Kind::Lh | Kind::Lw | Kind::Ld | Kind::Lbu | Kind::Lhu | Kind::Lwu => {
                let (size, signed) = op.kind.load_shape()?;
                let mut slow = a.label();
                address(&mut a, x(op.rs1), op.imm, rs1_in_rax);
                page_lookup(&mut a, &l, l.load_entries, size, &mut slow);
                let m = M::Index1(R::Rsi, R::Rax);
                match (size, signed) {
                    (1, s) => a.load8(R::Rax, m, s),
                    (2, s) => a.load16(R::Rax, m, s),
                    (4, true) => a.load32s(R::Rax, m),
                    (4, false) => a.load32(R::Rax, m),
                    _ => a.load64(R::Rax, m),
                }
                slow_paths.push(SlowPath {
                    from: slow,
                    back: a.code.len(),
                    call: SlowCall::Load(meta(i, size, signed, rd, len)),
                    pc,
                });
                if rd != 0 {
                    a.store64(x(rd), R::Rax);
                    rax_is = Some(rd);
                }
            }
            Kind::Sb | Kind::Sh | Kind::Sw | Kind::Sd => {
                let size = op.kind.store_size()?;
                let mut slow = a.label();
                address(&mut a, x(op.rs1), op.imm, rs1_in_rax);
                a.alu_mi(Alu::Cmp, M::Base(R::Rbx, l.reservation), -1);
                a.jcc(Cc::Ne, &mut slow);
                page_lookup(&mut a, &l, l.store_entries, size, &mut slow);
                a.load64(R::Rcx, x(op.rs2));
                a.store_sized(M::Index1(R::Rsi, R::Rax), R::Rcx, size);
                slow_paths.push(SlowPath {
                    from: slow,
                    back: a.code.len(),
                    call: SlowCall::Store(meta(i, size, false, 0, len), x(op.rs2)),
                    pc,
                });
            }
            Kind::Amo | Kind::Csr => {
                // The interpreter's one definition, given the instruction back.
                let (insn, f) = if op.kind == Kind::Amo {
                    (op.amo_insn(), amo as *const () as u64)
                } else {
                    (op.csr_insn(), csr as *const () as u64)
                };
                a.mov_rr(R::Rdi, R::R12);
                a.mov_imm(R::Rsi, u64::from(insn));
                a.mov_imm(R::Rdx, meta(i, 0, false, 0, len));
                a.mov_imm(R::Rcx, pc);
                call_back(&mut a, f, &mut exit);
                came_back(&mut a, &looping);
            }
            Kind::Flw | Kind::Fld | Kind::Fsw | Kind::Fsd => {
                // Always the call-back: it checks the FPU and keeps mstatus.FS as the
                // interpreter does (rax is the call's from here on).
                let (size, store, reg) = match op.kind {
                    Kind::Flw => (4, false, rd),
                    Kind::Fld => (8, false, rd),
                    Kind::Fsw => (4, true, op.rs2 & 31),
                    _ => (8, true, op.rs2 & 31),
                };
                address(&mut a, x(op.rs1), op.imm, rs1_in_rax);
                a.mov_rr(R::Rsi, R::Rax);
                a.mov_rr(R::Rdi, R::R12);
                a.mov_imm(R::Rdx, meta(i, size, store, reg, len));
                a.mov_imm(R::Rcx, pc);
                call_back(&mut a, fp_mem as *const () as u64, &mut exit);
                came_back(&mut a, &looping);
            }
            // No effect on one in-order hart; arithmetic into x0 has no effect. No code,
            // so rax keeps what it held.
            Kind::Fence => rax_is = cached,
            _ if rd == 0 => rax_is = cached,
            _ => {
                alu(&mut a, op, op.imm, &x, rs1_in_rax)?;
                rax_is = Some(rd);
            }
        }
        pc = fall;
    }
    let n = i32::try_from(ops.len()).ok()?;
    a.alu_mi(Alu::Add, M::Base(R::Rbx, l.cycles), n);
    a.alu_mi(Alu::Add, M::Base(R::Rbx, l.instret), n);
    match next_pc {
        Some(Ok(())) => {
            // JALR stored its target.
            a.load64(R::Rcx, M::Base(R::Rbx, l.pc));
            chain(&mut a, &l, None, &mut exit);
        }
        Some(Err(target)) => {
            a.mov_imm(R::Rcx, target);
            a.store64(M::Base(R::Rbx, l.pc), R::Rcx);
            loop_back(&mut a, &l, &looping, target == start);
            chain(&mut a, &l, Some(target), &mut exit);
        }
        None => {
            a.mov_imm(R::Rcx, pc);
            a.store64(M::Base(R::Rbx, l.pc), R::Rcx);
            chain(&mut a, &l, Some(pc), &mut exit);
        }
    }
    for SlowPath {
        from,
        back,
        call,
        pc,
    } in slow_paths
    {
        // rax: the access's virtual address (see `page_lookup`).
        a.bind(from);
        a.mov_rr(R::Rsi, R::Rax);
        a.mov_rr(R::Rdi, R::R12);
        match call {
            SlowCall::Load(meta) => {
                a.mov_imm(R::Rdx, meta);
                a.mov_imm(R::Rcx, pc);
                call_back(&mut a, load_slow as *const () as u64, &mut exit);
            }
            SlowCall::Store(meta, value) => {
                a.load64(R::Rdx, value);
                a.mov_imm(R::Rcx, meta);
                a.mov_imm(R::R8, pc);
                call_back(&mut a, store_slow as *const () as u64, &mut exit);
            }
        }
        // A load's value is in rax, where the fast path leaves it.
        came_back(&mut a, &looping);
        a.jmp_back(back);
    }
    for (label, run, target) in side_exits {
        a.bind(label);
        let run = i32::try_from(run).ok()?;
        a.alu_mi(Alu::Add, M::Base(R::Rbx, l.cycles), run);
        a.alu_mi(Alu::Add, M::Base(R::Rbx, l.instret), run);
        a.mov_imm(R::Rcx, target);
        a.store64(M::Base(R::Rbx, l.pc), R::Rcx);
        loop_back(&mut a, &l, &looping, target == start);
        chain(&mut a, &l, Some(target), &mut exit);
    }
    a.bind(exit);
    a.pop(R::Rbp);
    a.pop(R::R12);
    a.pop(R::Rbx);
    a.ret();
    Some(a.code)
}

/// Continues with the block at pc (in rcx) when `Hart::run` would run it compiled next:
/// its slot holds a block built for this pc, cache generation and FENCE.I count (so
/// checked since the last FENCE.I; the two compared as one word) and privilege, with
/// compiled code (which is always of the current epoch, see `ICache::drop_stale_code`),
/// that fits before the chunk's end. Anything else returns to
/// `Hart::run`, which decides as it always does. Jumping instead of returning lets each
/// exit predict its own successor: every exit of a block has its own copy of this, and
/// one whose target is known when compiling (`target`) finds its slot by a constant offset.
fn chain(a: &mut Asm, l: &Layout, target: Option<u64>, exit: &mut Label) {
    use std::mem::{offset_of, size_of};
    let field = |v: usize| i32::try_from(v).expect("Block is small");
    let slots = i32::try_from(BLOCK_ENTRIES - 1).expect("few slots");
    let blocks = M::Base(R::R12, field(offset_of!(Ctx<'_>, blocks)));
    match target {
        Some(t) => {
            let at = Block::slot(t) * size_of::<Block>();
            a.load64(R::Rdx, blocks);
            a.alu_ri(
                Alu::Add,
                R::Rdx,
                i32::try_from(at).expect("the block table is under 2 GiB"),
                true,
            );
        }
        None => {
            a.mov_rr(R::Rdx, R::Rcx);
            a.shift_ri(Shift::Shr, R::Rdx, 1, true);
            a.alu_ri(Alu::And, R::Rdx, slots, false);
            a.imul_rri(R::Rdx, R::Rdx, field(size_of::<Block>()));
            a.alu_rm(Alu::Add, R::Rdx, blocks, true);
        }
    }
    a.alu_rm(
        Alu::Cmp,
        R::Rcx,
        M::Base(R::Rdx, field(offset_of!(Block, pc))),
        true,
    );
    a.jcc(Cc::Ne, exit);
    // (generation, fence): one aligned word in both (asserted in `icache`).
    a.load64(
        R::Rax,
        M::Base(R::Rdx, field(offset_of!(Block, generation))),
    );
    a.alu_rm(Alu::Cmp, R::Rax, M::Base(R::Rbx, l.icache_stamp), true);
    a.jcc(Cc::Ne, exit);
    a.load8(
        R::Rax,
        M::Base(R::Rdx, field(offset_of!(Block, prv))),
        false,
    );
    a.load8(R::Rsi, M::Base(R::Rbx, l.prv), false);
    a.alu_rr(Alu::Cmp, R::Rax, R::Rsi, false);
    a.jcc(Cc::Ne, exit);
    a.load32(R::Rsi, M::Base(R::Rdx, field(offset_of!(Block, len))));
    a.alu_rm(Alu::Add, R::Rsi, M::Base(R::Rbx, l.cycles), true);
    a.alu_rm(
        Alu::Cmp,
        R::Rsi,
        M::Base(R::R12, field(offset_of!(Ctx<'_>, chunk_end))),
        true,
    );
    a.jcc(Cc::A, exit);
    a.load64(R::Rax, M::Base(R::Rdx, field(offset_of!(Block, code))));
    a.test_rr(R::Rax, R::Rax);
    a.jcc(Cc::E, exit);
    a.alu_ri(Alu::Add, R::Rax, PROLOGUE as i32, true);
    a.jmp_r(R::Rax);
}

/// Calls the function at `f` (its arguments already in place).
fn call(a: &mut Asm, f: u64) {
    a.mov_imm(R::R11, f);
    a.call_r(R::R11);
}

/// Calls a memory call-back (see [`Ret`]) and leaves the block when it says so (the hart
/// is already settled); otherwise the loaded value is in rax.
fn call_back(a: &mut Asm, f: u64, exit: &mut Label) {
    call(a, f);
    a.test_rr(R::Rdx, R::Rdx);
    a.jcc(Cc::Ne, exit);
}

/// rax = x[rs1] + imm (the virtual address of a load or store); `in_rax`: rax already
/// holds x[rs1].
fn address(a: &mut Asm, rs1: M, imm: i32, in_rax: bool) {
    if !in_rax {
        a.load64(R::Rax, rs1);
    }
    if imm != 0 {
        a.alu_ri(Alu::Add, R::Rax, imm, true);
    }
}

/// Looks rax's page up in the [`FastPages`] at `entries` and jumps to `slow`
/// (rax unchanged) on a miss, or when the access is misaligned (its low bits are kept in
/// the compared address, which no page tag has): the slow path serves those, page-crossing
/// ones included. On a hit the access goes to `[rsi + rax]` (rsi: RAM's host address, rax:
/// the access's RAM offset).
fn page_lookup(a: &mut Asm, l: &Layout, entries: i32, size: u8, slow: &mut Label) {
    a.mov_rr(R::Rcx, R::Rax);
    a.shift_ri(Shift::Shr, R::Rcx, 12, true);
    a.alu_ri(Alu::And, R::Rcx, (FAST_PAGES - 1) as i32, false);
    a.shift_ri(Shift::Shl, R::Rcx, 2, false);
    // rcx is the slot index × 4, so `[rbx + rcx*8 + entries]` is the slot.
    a.mov_rr(R::Rdx, R::Rax);
    a.alu_ri(Alu::And, R::Rdx, -0x1000 | (i32::from(size) - 1), true);
    a.alu_rm(Alu::Cmp, R::Rdx, M::Index8(R::Rbx, R::Rcx, entries), true);
    a.jcc(Cc::Ne, slow);
    a.alu_rm(
        Alu::Add,
        R::Rax,
        M::Index8(R::Rbx, R::Rcx, entries + 8),
        true,
    );
    a.load64(R::Rsi, M::Base(R::Rbx, l.ram_ptr));
}

/// Register-register and register-immediate arithmetic into rd (not x0), leaving the
/// result in rax too; `in_rax`: rax already holds x[rs1].
fn alu(a: &mut Asm, op: &Op, imm: i32, x: &dyn Fn(u8) -> M, in_rax: bool) -> Option<()> {
    let shamt = (imm & 63) as u8;
    if !in_rax {
        a.load64(R::Rax, x(op.rs1));
    }
    match op.kind {
        Kind::Addi => a.alu_ri(Alu::Add, R::Rax, imm, true),
        Kind::Xori => a.alu_ri(Alu::Xor, R::Rax, imm, true),
        Kind::Ori => a.alu_ri(Alu::Or, R::Rax, imm, true),
        Kind::Andi => a.alu_ri(Alu::And, R::Rax, imm, true),
        Kind::Slti | Kind::Sltiu => {
            a.alu_ri(Alu::Cmp, R::Rax, imm, true);
            a.setcc(if op.kind == Kind::Slti { Cc::L } else { Cc::B }, R::Rax);
        }
        Kind::Slli => a.shift_ri(Shift::Shl, R::Rax, shamt, true),
        Kind::Srli => a.shift_ri(Shift::Shr, R::Rax, shamt, true),
        Kind::Srai => a.shift_ri(Shift::Sar, R::Rax, shamt, true),
        Kind::Addiw => {
            a.alu_ri(Alu::Add, R::Rax, imm, false);
            a.movsxd(R::Rax, R::Rax);
        }
        Kind::Slliw | Kind::Srliw | Kind::Sraiw => {
            let s = match op.kind {
                Kind::Slliw => Shift::Shl,
                Kind::Srliw => Shift::Shr,
                _ => Shift::Sar,
            };
            a.shift_ri(s, R::Rax, shamt & 31, false);
            a.movsxd(R::Rax, R::Rax);
        }
        _ => {
            a.load64(R::Rcx, x(op.rs2));
            match op.kind {
                Kind::Add => a.alu_rr(Alu::Add, R::Rax, R::Rcx, true),
                Kind::Sub => a.alu_rr(Alu::Sub, R::Rax, R::Rcx, true),
                Kind::Xor => a.alu_rr(Alu::Xor, R::Rax, R::Rcx, true),
                Kind::Or => a.alu_rr(Alu::Or, R::Rax, R::Rcx, true),
                Kind::And => a.alu_rr(Alu::And, R::Rax, R::Rcx, true),
                Kind::Sll => a.shift_rcl(Shift::Shl, R::Rax, true),
                Kind::Srl => a.shift_rcl(Shift::Shr, R::Rax, true),
                Kind::Sra => a.shift_rcl(Shift::Sar, R::Rax, true),
                Kind::Slt | Kind::Sltu => {
                    a.alu_rr(Alu::Cmp, R::Rax, R::Rcx, true);
                    a.setcc(if op.kind == Kind::Slt { Cc::L } else { Cc::B }, R::Rax);
                }
                Kind::Addw | Kind::Subw | Kind::Sllw | Kind::Srlw | Kind::Sraw | Kind::Mulw => {
                    match op.kind {
                        Kind::Addw => a.alu_rr(Alu::Add, R::Rax, R::Rcx, false),
                        Kind::Subw => a.alu_rr(Alu::Sub, R::Rax, R::Rcx, false),
                        Kind::Sllw => a.shift_rcl(Shift::Shl, R::Rax, false),
                        Kind::Srlw => a.shift_rcl(Shift::Shr, R::Rax, false),
                        Kind::Sraw => a.shift_rcl(Shift::Sar, R::Rax, false),
                        _ => a.imul_rr(R::Rax, R::Rcx, false),
                    }
                    a.movsxd(R::Rax, R::Rax);
                }
                Kind::Mul => a.imul_rr(R::Rax, R::Rcx, true),
                Kind::MulDiv if imm == 3 || imm == 1 => {
                    // MULHU / MULH: the high half of rax * rcx lands in rdx.
                    a.mul_wide(R::Rcx, imm == 1);
                    a.mov_rr(R::Rax, R::Rdx);
                }
                Kind::MulDiv | Kind::DivW => {
                    // The rest (MULHSU, division and remainder with RISC-V's results for
                    // zero and overflow) call the interpreter's definition.
                    a.mov_rr(R::Rsi, R::Rax);
                    a.mov_rr(R::Rdx, R::Rcx);
                    let word = u64::from(op.kind == Kind::DivW) << 3;
                    a.mov_imm(R::Rdi, (imm as u64 & 7) | word);
                    call(a, muldiv as *const () as u64);
                }
                Kind::Bit => {
                    // Zba/Zbb/Zbc/Zbs: the interpreter's one definition (an immediate
                    // form's operand is in `how`; rcx then holds an unused register).
                    a.mov_rr(R::Rsi, R::Rax);
                    a.mov_rr(R::Rdx, R::Rcx);
                    a.mov_imm(R::Rdi, u64::from(imm as u32));
                    call(a, bitmanip as *const () as u64);
                }
                _ => return None, // not arithmetic: the block stays interpreted
            }
        }
    }
    a.store64(x(op.rd), R::Rax);
    Some(())
}

/// Compiles a block into `buf`; `None` when compiling is off or the block has nothing
/// to compile.
pub(crate) fn compile(buf: &mut CodeBuffer, start: u64, ops: &[(Op, u8, u32)]) -> Option<usize> {
    if !buf.enabled {
        return None;
    }
    let code = assemble(start, ops)?;
    buf.install(&code)
}

impl Hart {
    /// Runs a compiled block (see `jit`): the same effect as [`Hart::exec_block`] on the
    /// block's instructions, followed by as many compiled blocks as this loop would run
    /// next before `chunk_end` (compiled blocks chain to their successors).
    #[inline]
    pub(crate) fn run_compiled(&mut self, bus: &mut dyn Bus, code: usize, chunk_end: u64) {
        let blocks = self.icache.blocks.as_ptr();
        let hart: *mut Hart = self;
        let mut ctx = Ctx {
            hart,
            bus: bus as *mut dyn Bus,
            blocks,
            chunk_end,
        };
        // SAFETY: `code` is the entry of a block compiled into this hart's code buffer
        // under its current epoch (so still mapped and unchanged), generated for the
        // `extern "sysv64" fn(*mut Hart, *mut Ctx)` signature; it accesses the hart only
        // through `hart` and the bus through `ctx` while we hold both exclusively.
        unsafe {
            let f: BlockFn = std::mem::transmute::<usize, BlockFn>(code);
            f(hart, &mut ctx);
        }
    }

    /// Compiles the built block in `slot`, which starts at `pc`; whether it now has code
    /// (if not, it runs interpreted and is not tried again under this code epoch).
    #[inline]
    pub(crate) fn compile_block(&mut self, slot: usize, pc: u64) -> bool {
        let ICache { blocks, jit, .. } = &mut self.icache;
        let epoch = jit.epoch;
        let code = compile(jit, pc, &blocks[slot].ops).unwrap_or(0);
        if jit.epoch != epoch {
            // The buffer started over: no other block's code is valid any more.
            self.icache.drop_stale_code();
        }
        let b = &mut self.icache.blocks[slot];
        b.code = code;
        b.code_epoch = self.icache.jit.epoch;
        b.code_pc = pc;
        b.code != 0
    }
}
