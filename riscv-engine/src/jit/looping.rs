//! Loops of one block: a compiled block whose taken branch or final JAL goes back to its
//! own start runs round again by a direct jump instead of the chain's lookup (see
//! [`SelfLoop`]).

use super::asm::{Alu, Asm, Cc, M, R};
use super::{Ctx, Layout, PROLOGUE};
use crate::predecode::{Kind, Op};

/// A block that may jump back to its own start (a loop of one block: `strlen`, `memcpy`,
/// a counter) goes round again by a direct jump to its body, skipping the chain's lookup
/// of its slot, when no call-back came back into the block since it was entered. Without
/// one, no code but the block's ran, so nothing the chain checks (the slot's pc, cache
/// generation and FENCE.I count, privilege, code) can have changed: only the chunk's end
/// remains to test, and the jump goes where the chain would. The call-backs that change
/// those today (traps, device accesses) also end the block; the flag keeps the direct
/// jump exact should one ever come back after changing them. ebp is the flag: zeroed at
/// the body's start, set by every call-back that returns into the block; with it set, the
/// ordinary chain decides. The compute loop of `wio bench --riscv-only`: 1,684-1,784 ->
/// 2,127-2,134 MIPS (two runs each, side by side; see riscv-engine/README.md).
pub(super) struct SelfLoop {
    /// Instructions in the block.
    pub(super) len: i32,
}

/// Whether a taken branch or the final JAL of the block at `start` jumps back to it.
pub(super) fn jumps_to_start(start: u64, ops: &[(Op, u8, u32)]) -> bool {
    let mut pc = start;
    ops.iter().any(|(op, len, _)| {
        let here = pc;
        pc = pc.wrapping_add(u64::from(*len));
        let jumps = matches!(
            op.kind,
            Kind::Jal | Kind::Beq | Kind::Bne | Kind::Blt | Kind::Bge | Kind::Bltu | Kind::Bgeu
        );
        jumps && here.wrapping_add(i64::from(op.imm) as u64) == start
    })
}

/// After a call-back returned into a looping block: the next way round checks its slot.
pub(super) fn came_back(a: &mut Asm, looping: &Option<SelfLoop>) {
    if looping.is_some() {
        a.mov_imm(R::Rbp, 1);
    }
}

/// A jump back to the start of a looping block (pc and counters already settled), taken
/// when no call-back came back into it and the block fits before the chunk's end; else
/// falls through to the chain. The body starts right after the prologue, where chained
/// jumps enter too (the flag is zeroed there).
pub(super) fn loop_back(a: &mut Asm, l: &Layout, looping: &Option<SelfLoop>, to_start: bool) {
    let Some(SelfLoop { len }) = looping else {
        return;
    };
    if !to_start {
        return;
    }
    use std::mem::offset_of;
    let mut chain = a.label();
    a.test_rr(R::Rbp, R::Rbp);
    a.jcc(Cc::Ne, &mut chain);
    a.load64(R::Rsi, M::Base(R::Rbx, l.cycles));
    a.alu_ri(Alu::Add, R::Rsi, *len, true);
    let chunk_end = i32::try_from(offset_of!(Ctx<'_>, chunk_end)).expect("Ctx is small");
    a.alu_rm(Alu::Cmp, R::Rsi, M::Base(R::R12, chunk_end), true);
    a.jcc(Cc::A, &mut chain);
    a.jmp_back(PROLOGUE);
    a.bind(chain);
}
