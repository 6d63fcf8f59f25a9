//! Compiled blocks' calls into the interpreter: the slow paths of loads and stores, the
//! floating-point loads and stores, atomics, CSR accesses and the rarer arithmetic. Each
//! runs the interpreter's own definition with the hart's counters and pc as the
//! interpreter would have them at the instruction, and says whether the block goes on.

use super::Ctx;
use crate::hart::Hart;
use crate::trap::Trap;

/// The call-backs' result (returned in rax:rdx): the loaded value, and whether the
/// block must stop here (a trap was taken, or a device was touched so an interrupt
/// may have become deliverable; the hart's pc and counters are already settled).
#[repr(C)]
pub(super) struct Ret {
    pub(super) value: u64,
    pub(super) exit: u64,
}

/// The call-backs' description of the instruction (`meta`): index in its block,
/// access size, a flag (a load's sign extension; an FP access's being a store), register
/// (a load's destination; an FP access's register), instruction length. [`Meta::of`]
/// unpacks it.
pub(super) fn meta(index: usize, size: u8, flag: bool, reg: u8, len: u8) -> u64 {
    index as u64
        | (u64::from(size) << 8)
        | (u64::from(flag) << 12)
        | (u64::from(reg) << 16)
        | (u64::from(len) << 24)
}

/// A call-back's `meta` (see [`meta`]), unpacked.
struct Meta {
    /// Instructions of the block up to and including this one.
    before: u64,
    size: u8,
    flag: bool,
    reg: usize,
    len: u64,
}

impl Meta {
    fn of(meta: u64) -> Meta {
        Meta {
            before: (meta & 0xff) + 1,
            size: ((meta >> 8) & 0xf) as u8,
            flag: (meta >> 12) & 1 != 0,
            reg: ((meta >> 16) & 31) as usize,
            len: (meta >> 24) & 7,
        }
    }
}

/// The slow path of a compiled load: `Hart::load` with the hart's counters and pc as
/// the interpreter would have them at this instruction.
pub(super) extern "sysv64" fn load_slow(ctx: *mut Ctx<'_>, vaddr: u64, meta: u64, pc: u64) -> Ret {
    // SAFETY: `ctx` is the context `Hart::run_compiled` passed to the block, whose hart
    // and bus pointers are exclusively ours for the duration of the block.
    let (hart, bus) = unsafe { (&mut *(*ctx).hart, &mut *(*ctx).bus) };
    let Meta {
        before,
        size,
        flag: signed,
        reg: rd,
        len,
    } = Meta::of(meta);
    at_instruction(hart, before, pc);
    match hart.load(bus, vaddr, size) {
        Ok(v) => {
            let v = if signed {
                let shift = 64 - 8 * u32::from(size);
                (((v << shift) as i64) >> shift) as u64
            } else {
                v
            };
            if hart.irq_dirty {
                if rd != 0 {
                    hart.x[rd] = v;
                }
                hart.pc = pc.wrapping_add(len);
                hart.instret += 1;
                return Ret { value: v, exit: 1 };
            }
            hart.cycles -= before;
            hart.instret -= before - 1;
            Ret { value: v, exit: 0 }
        }
        Err(t) => {
            hart.take_trap(t.cause, t.tval);
            Ret { value: 0, exit: 1 }
        }
    }
}

/// Sets the hart's counters and pc as the interpreter has them at the instruction at `pc`,
/// the `before`th of its block: `cycles` counting it, `instret` not (what a call-back
/// does first; [`settled`] undoes it when the block goes on).
fn at_instruction(hart: &mut Hart, before: u64, pc: u64) {
    hart.cycles += before;
    hart.instret += before - 1;
    hart.pc = pc;
}

/// How a call-back that ran the instruction at `pc` (`len` bytes, after `before` - 1
/// instructions of its block) with outcome `done` hands back to the block: it goes on
/// (`Ok(false)`: the counters as the block keeps them, which adds its length at its end),
/// or ends after the instruction (`Ok(true)`: a device was touched, so an interrupt may be
/// deliverable now, or a CSR access changed what the block rests on), or at the trap the
/// instruction took.
fn settled(hart: &mut Hart, done: Result<bool, Trap>, before: u64, pc: u64, len: u64) -> Ret {
    match done {
        Ok(true) => {
            hart.pc = pc.wrapping_add(len);
            hart.instret += 1;
            Ret { value: 0, exit: 1 }
        }
        Ok(false) => {
            hart.cycles -= before;
            hart.instret -= before - 1;
            Ret { value: 0, exit: 0 }
        }
        Err(t) => {
            hart.take_trap(t.cause, t.tval);
            Ret { value: 0, exit: 1 }
        }
    }
}

/// The slow path of a compiled store (see [`load_slow`]).
pub(super) extern "sysv64" fn store_slow(
    ctx: *mut Ctx<'_>,
    vaddr: u64,
    value: u64,
    meta: u64,
    pc: u64,
) -> Ret {
    // SAFETY: as in load_slow.
    let (hart, bus) = unsafe { (&mut *(*ctx).hart, &mut *(*ctx).bus) };
    let Meta {
        before, size, len, ..
    } = Meta::of(meta);
    at_instruction(hart, before, pc);
    let done = hart.store(bus, vaddr, size, value).map(|()| hart.irq_dirty);
    settled(hart, done, before, pc, len)
}

/// Compiled blocks' call for the F and D extensions' loads and stores (FLW, FLD, FSW,
/// FSD; `meta`'s sign bit says a store, its rd the floating-point register): what
/// `Hart::exec_fast` does, with the hart's counters and pc as the interpreter would have
/// them at this instruction. With the FPU off the instruction goes to `Hart::step` (its
/// illegal-instruction trap reports the instruction's bytes) and the block ends.
pub(super) extern "sysv64" fn fp_mem(ctx: *mut Ctx<'_>, vaddr: u64, meta: u64, pc: u64) -> Ret {
    // SAFETY: as in load_slow.
    let (hart, bus) = unsafe { (&mut *(*ctx).hart, &mut *(*ctx).bus) };
    let Meta {
        before,
        size,
        flag: store,
        reg,
        len,
    } = Meta::of(meta);
    hart.cycles += before - 1;
    hart.instret += before - 1;
    hart.pc = pc;
    if !hart.fpu_on() {
        let _ = hart.step(bus);
        return Ret { value: 0, exit: 1 };
    }
    hart.cycles += 1;
    let done = if store {
        let v = hart.fp.f[reg];
        hart.store(bus, vaddr, size, v)
    } else {
        hart.load(bus, vaddr, size).map(|v| {
            hart.fp.f[reg] = if size == 4 {
                crate::fpu::nan_box_s(v as u32)
            } else {
                v
            };
            hart.fs_dirty();
        })
    }
    .map(|()| hart.irq_dirty);
    settled(hart, done, before, pc, len)
}

/// Compiled blocks' call for the A extension (LR, SC, AMO*; `insn` the instruction):
/// `Hart::atomic`, with the hart's counters and pc as the interpreter would have them at
/// this instruction (as [`load_slow`]; registers are read from the hart, where compiled
/// code keeps them).
pub(super) extern "sysv64" fn amo(ctx: *mut Ctx<'_>, insn: u64, meta: u64, pc: u64) -> Ret {
    // SAFETY: as in load_slow.
    let (hart, bus) = unsafe { (&mut *(*ctx).hart, &mut *(*ctx).bus) };
    let Meta { before, len, .. } = Meta::of(meta);
    at_instruction(hart, before, pc);
    let i = insn as u32;
    let (x1, x2) = (
        hart.x[((i >> 15) & 31) as usize],
        hart.x[((i >> 20) & 31) as usize],
    );
    let done = hart.atomic(bus, i, x1, x2).map(|()| hart.irq_dirty);
    settled(hart, done, before, pc, len)
}

/// Compiled blocks' call for a CSR access (`insn` the instruction; see `Kind::Csr`):
/// `Hart::csr_in_block`, with the hart's counters and pc as the interpreter would have them
/// at this instruction (as [`load_slow`]). The block goes on unless the access ended it.
pub(super) extern "sysv64" fn csr(ctx: *mut Ctx<'_>, insn: u64, meta: u64, pc: u64) -> Ret {
    // SAFETY: as in load_slow.
    let (hart, bus) = unsafe { (&mut *(*ctx).hart, &mut *(*ctx).bus) };
    let Meta { before, len, .. } = Meta::of(meta);
    at_instruction(hart, before, pc);
    let done = hart.csr_in_block(bus, insn as u32);
    settled(hart, done, before, pc, len)
}

/// Compiled blocks' call for the M extension's rarer operations (see
/// [`crate::exec::muldiv`]): `how` is funct3, plus 8 for the 32-bit forms.
pub(super) extern "sysv64" fn muldiv(how: u64, x1: u64, x2: u64) -> u64 {
    crate::exec::muldiv((how & 7) as u32, how & 8 != 0, x1, x2)
}

/// Compiled blocks' call for the bit-manipulation extensions (see
/// [`crate::bitmanip::eval`]): `how` as pre-decoded.
pub(super) extern "sysv64" fn bitmanip(how: u64, x1: u64, x2: u64) -> u64 {
    crate::bitmanip::eval(how as u32, x1, x2)
}
