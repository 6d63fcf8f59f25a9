//! Warm restores: a hart restored with the code caches a snapshot keeps (see
//! `state::code_cache`) holds exactly what the running hart held and continues exactly as
//! it does, even for code that rewrites its own next instructions without a fence, where a
//! hart restored cold (no blocks, only the instructions checked since the last fence) may
//! take the other outcome the architecture allows.

use super::*;
use crate::state::{CodeCacheState, HartState, SavedBlock};

const FENCE_I: u32 = 0x0000_100f;

/// A loop that rewrites an instruction later in its own block, toggling it between two
/// forms on the first iteration after each FENCE.I (one iteration in eight runs one): x11
/// counts how often each form ran (1 or 100 added). Entered after the fence, the block is
/// fetched again as a whole and still holds the old form, which one-by-one fetching would
/// see only on alternate fences.
fn self_modifying() -> Hart {
    let patched_a = addi(11, 11, 1);
    let patched_b = addi(11, 11, 100);
    let mut h = hart_with(&[
        addi(5, 5, 1),          // 0: iterations
        i(0x13, 10, 7, 5, 7),   // 4: x10 = iterations & 7
        branch(1, 10, 13, 8),   // 8: bne x10, x13 (= 1), +8: toggle after a fence only
        r(0x33, 6, 4, 6, 8, 0), // 12: x6 ^= x8
        s(0x23, 2, 9, 6, 24),   // 16: sw x6, 24(x9): rewrites the instruction at 24
        NOP,                    // 20
        patched_a,              // 24: rewritten
        branch(1, 10, 0, 8),    // 28: bne x10, x0, +8 (skips the fence)
        FENCE_I,                // 32
        jal(0, -36),            // 36: back to 0
    ]);
    h.x[6] = u64::from(patched_a);
    h.x[8] = u64::from(patched_a ^ patched_b);
    h.x[9] = BASE;
    h.x[13] = 1;
    h
}

/// The state and code caches of `h`, and a copy restored from them, warm or cold.
fn restored(h: &Hart, warm: bool) -> (HartState, CodeCacheState, Hart) {
    let (state, code) = (h.save_state(), h.save_code_cache());
    let mut copy = Hart::new(h.ram.clone(), 0, 10);
    let prepared = state
        .prepare_with(h.isa(), warm.then_some(&code))
        .expect("a saved state prepares");
    copy.load_prepared(&prepared).expect("and loads");
    (state, code, copy)
}

/// Runs `h` on to the next point just after its loop's FENCE.I (at least one instruction
/// on), where the loop's instructions are unchecked, so a cold copy holds none of them.
fn past_next_fence(h: &mut Hart) {
    run(h, 1);
    for _ in 0..1_000 {
        if h.pc == BASE + 36 && h.x[10] == 0 {
            return;
        }
        run(h, 1);
    }
    panic!("the loop does not pass its fence");
}

#[test]
fn a_warm_restore_holds_the_caches_and_continues_as_the_run_does() {
    let mut h = self_modifying();
    run(&mut h, 20_000);
    // Restored just after a fence, a cold copy fetches each of the loop's instructions as
    // it runs, while the running hart checks them together when it enters them (its stale
    // block, or a run of unchecked entries), before the store; whether that changes what
    // runs depends on which form memory and the caches hold there, so the test goes from
    // fence to fence (the warm copy checked at each) until a cold copy ends elsewhere; the
    // tries pass one, two or three fences each (each fence toggles the rewritten form, and
    // the rounds between tries are a whole number of the loop's periods).
    let mut told_apart = false;
    for t in 0..8 {
        for _ in 0..=t % 3 {
            past_next_fence(&mut h);
        }
        let (state, code, mut warm) = restored(&h, true);
        assert!(
            code.blocks.iter().any(|b| b.len > 0) && !code.unchecked.is_empty(),
            "the run left blocks and unchecked entries to keep: {code:?}"
        );
        // The restored hart holds exactly what the running one held.
        assert_eq!(warm.save_state(), state);
        assert_eq!(warm.save_code_cache(), code);
        let (_, _, mut cold) = restored(&h, false);
        for round in 0..50 {
            for hart in [&mut h, &mut warm, &mut cold] {
                run(hart, 997);
            }
            assert_eq!(warm.save_state(), h.save_state(), "round {round}");
            assert_eq!(warm.save_code_cache(), h.save_code_cache(), "round {round}");
            assert_eq!(warm.ram.bytes(), h.ram.bytes(), "round {round}");
        }
        // Where the cold copy lands is open (the loop stores into its own block without a
        // fence); that it differs shows the warm copy's equality is not a given.
        if cold.x[11] != h.x[11] {
            told_apart = true;
            break;
        }
    }
    assert!(
        told_apart,
        "the program no longer tells instructions checked together from ones fetched one by one"
    );
}

#[test]
fn warm_and_cold_restores_agree_on_code_that_fences_what_it_rewrites() {
    // A loop calling a routine it rewrites (with FENCE.I) every 16 iterations, entered
    // again through a jump and a return: blocks, chained jumps, stale blocks and unchecked
    // entries, compiled or not, on code the architecture defines.
    let routine = BASE + 0x800;
    let mut h = hart_with(&[
        addi(5, 5, 1),          // 0
        i(0x13, 10, 7, 5, 15),  // 4: x10 = x5 & 15
        branch(1, 10, 0, 16),   // 8: bne x10, x0, +16 (to 24)
        r(0x33, 6, 4, 6, 8, 0), // 12: x6 ^= x8
        s(0x23, 2, 9, 6, 0),    // 16: sw x6, 0(x9): rewrites the routine's first instruction
        FENCE_I,                // 20
        jal(1, 0x800 - 24),     // 24: call the routine
        jal(0, -28),            // 28: back to 0
    ]);
    let (a, b) = (addi(11, 11, 3), addi(11, 11, 7));
    let ret = i(0x67, 0, 0, 1, 0);
    let words: Vec<u8> = [a, addi(12, 12, 1), ret]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    assert!(h.ram.load(routine, &words));
    h.x[6] = u64::from(a);
    h.x[8] = u64::from(a ^ b);
    h.x[9] = routine;
    run(&mut h, 5_000);
    let (_, code, mut warm) = restored(&h, true);
    assert!(
        code.blocks.iter().filter(|b| b.len > 0).count() >= 2,
        "{code:?}"
    );
    let (_, _, mut cold) = restored(&h, false);
    let mut off = Hart::new(h.ram.clone(), 0, 10);
    off.load_state(&h.save_state()).expect("loads");
    off.set_compiling(false);
    for round in 0..40 {
        for hart in [&mut h, &mut warm, &mut cold, &mut off] {
            run(hart, 1009);
        }
        let s = h.save_state();
        for (what, other) in [("warm", &warm), ("cold", &cold), ("interpreted", &off)] {
            let o = other.save_state();
            assert_eq!(
                (o.x, o.pc, o.cycles, o.instret),
                (s.x, s.pc, s.cycles, s.instret),
                "{what}, round {round}"
            );
        }
    }
    assert!(h.x[11] > 0 && h.x[12] > 100);
}

#[test]
fn code_caches_that_do_not_fit_the_state_are_refused() {
    let mut h = self_modifying();
    run(&mut h, 20_000);
    let (state, code) = (h.save_state(), h.save_code_cache());
    let first = *code.blocks.iter().find(|b| b.len > 0).expect("a block");
    let isa = h.isa();
    let refused = |c: CodeCacheState| state.prepare_with(isa, Some(&c)).is_err();
    // A block longer than the entries it would copy, at a pc no entry holds, of another
    // privilege, or twice in one slot.
    let with = |b: SavedBlock| {
        let mut c = code.clone();
        c.blocks.push(b);
        c
    };
    assert!(refused(with(SavedBlock {
        len: first.len + 30,
        ..first
    })));
    assert!(refused(with(SavedBlock {
        pc: BASE + 0x1000,
        ..first
    })));
    assert!(refused(with(SavedBlock { prv: 1, ..first })));
    assert!(refused(with(SavedBlock { prv: 2, ..first })));
    assert!(refused(with(first)));
    // An unchecked entry in a slot a checked one holds.
    let mut c = code.clone();
    c.unchecked.push(state.icache[0].clone());
    assert!(refused(c));
    let mut c = code.clone();
    c.code_pages.push(1 << 12);
    assert!(refused(c));
    // A slot counting visits (in a slot no block holds) is kept; one holding instructions,
    // marked checked, at or past the count that builds a block, or with a contest count
    // past the limit is refused.
    let counting = SavedBlock {
        pc: BASE + 0x800,
        prv: first.prv,
        len: 0,
        checked: false,
        hits: 5,
        contest: 0,
    };
    assert!(!code.blocks.iter().any(|b| b.pc == counting.pc));
    assert!(!refused(with(counting)));
    assert!(refused(with(SavedBlock { len: 1, ..counting })));
    assert!(refused(with(SavedBlock {
        checked: true,
        ..counting
    })));
    assert!(refused(with(SavedBlock {
        hits: crate::icache::BLOCK_HOT,
        ..counting
    })));
    assert!(refused(with(SavedBlock {
        contest: crate::icache::CONTEST + 1,
        ..first
    })));
    assert!(state.prepare_with(isa, Some(&code)).is_ok());
}

/// Runs `h` for `before` instructions, lets `then` change it, and runs it and a warm copy
/// restored from it side by side, comparing everything the two hold (caches included)
/// after every slice.
fn warm_copy_follows(
    mut h: Hart,
    before: u64,
    then: impl FnOnce(&mut Hart),
    rounds: usize,
) -> Hart {
    run(&mut h, before);
    then(&mut h);
    let (state, code, mut warm) = restored(&h, true);
    assert!(code.blocks.iter().any(|b| b.len > 0), "{code:?}");
    assert_eq!(warm.save_state(), state);
    for round in 0..rounds {
        run(&mut h, 1013);
        run(&mut warm, 1013);
        assert_eq!(warm.save_state(), h.save_state(), "round {round}");
        assert_eq!(warm.save_code_cache(), h.save_code_cache(), "round {round}");
    }
    h
}

#[test]
fn a_warm_copy_drops_the_blocks_of_entries_that_code_two_mebibytes_away_replaces() {
    // Two routines 2 MiB apart share decoded-instruction slots: calling one replaces
    // the other's entries, which drops the blocks that copied them. The loop calls routine
    // a until the snapshot and b after it, so the first call after the restore replaces
    // entries whose block is still the snapshot's (its slot not reached since).
    // (b is 2 MiB after a's third instruction, so reaching b reaches neither a's block
    // slot nor its first entry's.)
    let (a, b) = (BASE + 0x1000, BASE + 0x1008 + (2 << 20));
    let mut h = hart_with(&[
        addi(5, 5, 1),        // 0
        branch(1, 14, 0, 12), // 4: bne x14, x0, +12 (to 16)
        i(0x67, 1, 0, 6, 0),  // 8: jalr ra, 0(x6): routine a
        jal(0, -12),          // 12: back to 0
        i(0x67, 1, 0, 7, 0),  // 16: jalr ra, 0(x7): routine b
        jal(0, -20),          // 20: back to 0
    ]);
    let ret = i(0x67, 0, 0, 1, 0);
    for (at, k) in [(a, 3), (b, 5)] {
        let words: Vec<u8> = [addi(11, 11, k), addi(12, 12, k), addi(13, 13, 1), ret]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        assert!(h.ram.load(at, &words));
    }
    h.x[6] = a;
    h.x[7] = b;
    let h = warm_copy_follows(h, 3_000, |h| h.x[14] = 1, 20);
    assert!(h.x[11] > 0 && h.x[12] > 0 && h.x[13] > 100);
}

#[test]
fn a_warm_copy_forgets_what_a_single_page_fence_of_its_code_forgets() {
    // Supervisor code on a 4 KiB page (virtual 0x4000_0000): a first loop that runs only
    // before the snapshot, then one that fences its own page every 1024 iterations. The
    // fence forgets the page's entries and blocks, the first loop's too, which the warm
    // copy has not reached since the restore.
    let sfence_vma_x6 = (0x09 << 25) | (6 << 15) | 0x73;
    let mut h = hart_with(&[NOP]);
    let code: Vec<u8> = [
        addi(7, 7, 1),           // 0: first loop, 40 times
        branch(1, 7, 15, -4),    // 4: bne x7, x15, -4
        addi(5, 5, 1),           // 8: second loop
        i(0x13, 10, 7, 5, 1023), // 12: x10 = x5 & 1023
        branch(1, 10, 0, 8),     // 16: bne x10, x0, +8 (skips the fence)
        sfence_vma_x6,           // 20
        addi(11, 11, 3),         // 24
        jal(0, -20),             // 28: back to 8
    ]
    .iter()
    .flat_map(|w| w.to_le_bytes())
    .collect();
    assert!(h.ram.load(BASE + 0x10000, &code));
    sv39(&mut h, pte::V | pte::R | pte::X | pte::A);
    h.enter_supervisor(0x4000_0000, 0, 0);
    h.x[6] = 0x4000_0000;
    h.x[15] = 40;
    let h = warm_copy_follows(h, 2_500, |_| {}, 40);
    assert!(h.x[5] > 5_000 && h.x[11] > 0);
}

#[test]
fn a_saved_user_block_holding_a_csr_access_is_refused() {
    // User-mode blocks end before a CSR access (see `Kind::Csr`); a code cache saying
    // otherwise does not come from wio and is refused, as other blocks that do not fit.
    let rdtime = i(0x73, 5, 2, 0, i32::from(addr::TIME as i16)); // csrr x5, time
    let mut h = hart_with(&[rdtime, addi(3, 3, 1), jal(0, -8)]);
    h.prv = Priv::User;
    h.mcounteren = 7;
    h.scounteren = 7;
    run(&mut h, 20_000);
    assert!(h.x[3] > 1_000, "the loop ran");
    let (state, code) = (h.save_state(), h.save_code_cache());
    let at = |pc: u64| code.blocks.iter().find(|b| b.pc == pc).copied();
    let head = at(BASE).expect("a block slot at the CSR access");
    assert_eq!(
        (head.len, head.hits),
        (0, crate::icache::BUILT),
        "no block starts there"
    );
    assert_eq!(at(BASE + 4).map(|b| b.len), Some(2), "the block after it");
    let isa = h.isa();
    let mut c = code.clone();
    c.blocks.retain(|b| b.pc != BASE);
    c.blocks.push(SavedBlock { len: 3, ..head });
    assert!(state.prepare_with(isa, Some(&c)).is_err());
    assert!(state.prepare_with(isa, Some(&code)).is_ok());
}

/// A hart in `state`, on `ram`, restored with `code` (a code cache) or without.
fn restored_on(ram: &crate::Ram, state: &HartState, code: Option<&CodeCacheState>) -> Hart {
    let mut h = Hart::new(ram.clone(), 0, 10);
    let prepared = state
        .prepare_with(h.isa(), code)
        .expect("the state prepares");
    h.load_prepared(&prepared).expect("and loads");
    h
}

#[test]
fn learned_code_runs_what_each_branchs_own_memory_holds() {
    // A loop adding 3 to x11 a thousand times, then spinning.
    let mut snap = hart_with(&[
        addi(11, 11, 3),
        addi(5, 5, 1),
        branch(1, 5, 6, -8),
        jal(0, 0),
    ]);
    snap.x[6] = 1000;
    let state = snap.save_state();
    // The teaching branch runs the loop to its end, building (and compiling) its block.
    let mut teacher = restored_on(&snap.ram, &state, None);
    run(&mut teacher, 20_000);
    assert_eq!(teacher.x[11], 3000);
    let learned = teacher.learned_code();
    assert!(learned.blocks.iter().any(|b| b.pc == BASE && b.len == 3));
    let merged = state.with_learned(&learned, snap.isa());
    assert!(merged.blocks.iter().any(|b| b.pc == BASE && !b.checked));
    assert!(merged.unchecked.iter().any(|d| d.pc == BASE));
    // Another branch whose memory holds `addi x11, x11, 5` at the loop's start, and one
    // with the teacher's: restored with what the teacher learned, each must run its own
    // memory's code, exactly as a copy restored without it does.
    let mut other = snap.ram.clone();
    other.write_at(0, 4, u64::from(addi(11, 11, 5)));
    for (ram, sum) in [(other, 5000), (snap.ram.clone(), 3000)] {
        let mut warm = restored_on(&ram, &state, Some(&merged));
        let mut cold = restored_on(&ram, &state, None);
        for _ in 0..60 {
            run(&mut warm, 97);
            run(&mut cold, 97);
            assert_eq!(
                (warm.x, warm.pc, warm.cycles(), warm.instret),
                (cold.x, cold.pc, cold.cycles(), cold.instret),
                "restored with and without the learned code"
            );
        }
        assert_eq!(warm.x[11], sum, "the branch's own instruction ran");
    }
}

#[test]
fn learned_code_leaves_the_snapshots_own_instructions_and_what_they_displace() {
    // The snapshot's hart checked the instruction at BASE; the learned code holds another pc
    // of the same slot (2 MiB on) and a block starting there, which must be left out (the
    // snapshot's instruction stays), as must a block whose instruction is not held at all.
    let mut snap = hart_with(&[addi(11, 11, 3), NOP, jal(0, 0)]);
    run(&mut snap, 3);
    let state = snap.save_state();
    assert!(state.icache.iter().any(|d| d.pc == BASE));
    let other = BASE + (2 << 20);
    let mut learned = snap.learned_code();
    let insn = |pc| crate::state::SavedInsn {
        pc,
        prv: 3,
        raw16: 0,
        insn: NOP,
        len: 4,
    };
    let jump = crate::state::SavedInsn {
        insn: jal(0, 8),
        ..insn(other + 32)
    };
    learned.unchecked = vec![insn(other), insn(other + 16), jump, insn(other + 36)];
    let block = |pc, len| SavedBlock {
        pc,
        prv: 3,
        len,
        checked: true,
        hits: 255,
        contest: 0,
    };
    // A block with a jump before its end is one no hart builds (the merged entries can
    // hold another program's code at a learned block's pcs): left out.
    learned.blocks = vec![
        block(other, 2),
        block(other + 16, 1),
        block(other + 24, 1),
        block(other + 32, 2),
    ];
    let merged = state.with_learned(&learned, snap.isa());
    assert!(merged.unchecked.iter().all(|d| d.pc != other));
    assert_eq!(
        merged
            .blocks
            .iter()
            .map(|b| (b.pc, b.checked))
            .collect::<Vec<_>>(),
        vec![(other + 16, false)],
        "only the block whose instruction is held, and stale"
    );
    let h = restored_on(&snap.ram, &state, Some(&merged));
    assert_eq!(h.x, snap.x);
    // A restore refuses such a block outright (a crafted snapshot's code cache).
    // (The merged entries hold the jump and the instruction after it.)
    let mut crafted = merged.clone();
    crafted.blocks.push(SavedBlock {
        checked: false,
        ..block(other + 32, 2)
    });
    assert!(state.prepare_with(snap.isa(), Some(&crafted)).is_err());
    crafted.blocks.last_mut().expect("pushed").len = 1;
    assert!(state.prepare_with(snap.isa(), Some(&crafted)).is_ok());
}
