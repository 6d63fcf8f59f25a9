//! Blocks and the decoded-instruction cache: blocks retire exactly as single steps do,
//! fences forget exactly what they must, and blocks never outlive or alias the cached
//! instructions they copied.

use super::*;

#[test]
fn blocks_retire_exactly_as_single_steps_do() {
    // A loop of loads, stores and arithmetic (hot enough to be run as a block), a timer
    // interrupt every 7 ticks whose handler counts and re-arms it via a store the loop
    // reads, run once in big slices and once one instruction at a time (where no block
    // fits): every register, CSR and byte of RAM must agree.
    const SRET: u32 = 0x1020_0073;
    let mut prog = vec![
        ld(2, 1, 0),
        addi(2, 2, 1),
        sd(2, 1, 0),
        addi(3, 3, 3),
        r(0x33, 4, 0, 4, 3, 0), // add x4, x4, x3
        jal(0, -20),
    ];
    prog.resize(0x400 / 4, NOP);
    // Handler at +0x400: x5 += 1; sret (the timer is re-armed from outside below).
    prog.push(addi(5, 5, 1));
    prog.push(SRET);
    let make = || {
        let mut h = hart_with(&prog);
        h.enter_supervisor(BASE, 0, 0);
        h.stvec = BASE + 0x400;
        h.mstatus |= mstatus::SIE;
        h.x[1] = BASE + 0x8000;
        h.set_timecmp(7);
        h
    };
    let (mut big, mut small) = (make(), make());
    for round in 0..40u64 {
        run(&mut big, 1000);
        for _ in 0..1000 {
            run(&mut small, 1);
        }
        for h in [&mut big, &mut small] {
            // Re-arm the timer and clear the pending bit, as an SBI set_timer would.
            h.set_timecmp(h.time() + 7 + round % 3);
        }
        assert_eq!(big.save_state().x, small.save_state().x, "round {round}");
    }
    let (a, b) = (big.save_state(), small.save_state());
    assert_eq!(
        (a.pc, a.cycles, a.instret, a.csrs),
        (b.pc, b.cycles, b.instret, b.csrs)
    );
    assert_eq!(big.ram.bytes(), small.ram.bytes());
    assert!(a.x[5] > 10, "the timer interrupted the loop: {}", a.x[5]);
    assert!(
        big.icache
            .blocks
            .iter()
            .any(|b| b.hits == crate::icache::BUILT && b.ops.len() >= 5),
        "the loop ran as a block"
    );
}

#[test]
fn sfence_of_one_page_forgets_that_page_only() {
    // ld x2,(x1); [the leaf PTE is changed here]; ld x3,(x1) (stale: no fence yet);
    // sfence.vma x1; ld x4,(x1) (the new mapping); sfence.vma x5 (inside the code's
    // 1 GiB superpage: everything is flushed).
    let sfence = |rs1: u32| 0x1200_0073 | (rs1 << 15);
    let mut h = hart_with(&[ld(2, 1, 0), ld(3, 1, 0), sfence(1), ld(4, 1, 0), sfence(5)]);
    h.enter_supervisor(BASE, 0, 0);
    sv39(&mut h, pte::V | pte::R | pte::W | pte::A | pte::D);
    h.x[1] = 0x4000_0000;
    h.x[5] = BASE + 0x100;
    assert!(h.ram.load(BASE + 0x10000, &11u64.to_le_bytes()));
    assert!(h.ram.load(BASE + 0x30000, &33u64.to_le_bytes()));
    run(&mut h, 1);
    let leaf = (((BASE + 0x30000) >> 12) << 10) | pte::V | pte::R | pte::W | pte::A | pte::D;
    assert!(h.ram.load(BASE + 0x20_2000, &leaf.to_le_bytes()));
    run(&mut h, 1);
    assert_eq!(
        (h.x[2], h.x[3]),
        (11, 11),
        "without a fence the old translation stays"
    );
    let fence = h.icache.fence;
    run(&mut h, 2);
    assert_eq!(h.x[4], 33, "the fenced page is walked again");
    assert_eq!(
        h.icache.fence, fence,
        "a fence of a 4 KiB page keeps the decoded code of other pages"
    );
    assert!(
        !h.superpages.is_empty(),
        "the code runs through a superpage"
    );
    run(&mut h, 1);
    assert_ne!(
        h.icache.fence, fence,
        "a fence inside a cached superpage flushes everything"
    );
}

#[test]
fn a_page_fence_forgets_code_of_its_page_when_another_code_page_shares_its_mark() {
    // Two code pages whose page numbers differ by the table of marks' size (4,096 pages)
    // share one mark: V1 = 0x4000_0000 and V2 = 0x4100_0000, each "addi rd, x0, k;
    // jalr x0, 0(x1)" (x10 = 1 on V1, x11 = 2 on V2, at offset 0x100 so the two do not
    // share decoded-instruction slots), called from the superpage-mapped code at BASE. V1 is then remapped to a page
    // whose addi sets 7, and after SFENCE.VMA of V1 alone the call must see it: the shared
    // mark must still say "V1 may hold code" after V2 (and BASE's page) were marked.
    let jalr = |rd: u32, rs1: u32| i(0x67, rd, 0, rs1, 0);
    let sfence = |rs1: u32| 0x1200_0073 | (rs1 << 15);
    let mut h = hart_with(&[jalr(1, 20), jalr(1, 21), sfence(20), jalr(1, 20)]);
    h.enter_supervisor(BASE, 0, 0);
    let code = pte::V | pte::R | pte::X | pte::A;
    sv39(&mut h, code);
    let w = |h: &mut Hart, a: u64, v: u64| assert!(h.ram.load(a, &v.to_le_bytes()));
    let (root, l0a, l0b) = (BASE + 0x20_0000, BASE + 0x20_2000, BASE + 0x20_3000);
    let (p1, p1_new, p2) = (BASE + 0x4_0000, BASE + 0x4_1000, BASE + 0x4_2000);
    let leaf = |pa: u64| ((pa >> 12) << 10) | code;
    w(&mut h, l0a, leaf(p1));
    w(&mut h, root + 0x1000 + 8 * 8, ((l0b >> 12) << 10) | pte::V);
    w(&mut h, l0b, leaf(p2));
    for (pa, rd, k) in [(p1, 10, 1), (p1_new, 10, 7), (p2 + 0x100, 11, 2)] {
        w(
            &mut h,
            pa,
            u64::from(addi(rd, 0, k)) | u64::from(jalr(0, 1)) << 32,
        );
    }
    let (v1, v2) = (0x4000_0000u64, 0x4100_0000u64);
    assert_eq!(
        (v1 >> 12) % crate::icache::CODE_PAGES as u64,
        (v2 >> 12) % crate::icache::CODE_PAGES as u64
    );
    h.x[20] = v1;
    h.x[21] = v2 + 0x100;
    run(&mut h, 6);
    assert_eq!((h.x[10], h.x[11]), (1, 2), "both pages' code ran");
    w(&mut h, l0a, leaf(p1_new));
    run(&mut h, 4);
    assert_eq!(h.x[10], 7, "the fenced page's code is fetched again");
    // A data page sharing the mark of two code pages counts as one that may hold code
    // (a shared mark knows no page); after a full flush, one code page marks the slot
    // for itself only, and fences of the others need no scan.
    let data = 0x4200_0000u64;
    assert!(h.icache.may_hold_code(v2) && h.icache.may_hold_code(data));
    h.flush_tlb();
    h.icache.note_code(v1, 4);
    assert!(h.icache.may_hold_code(v1));
    assert!(!h.icache.may_hold_code(v2), "the mark names its page");
    assert!(!h.icache.may_hold_code(data));
}

#[test]
fn a_block_never_outlives_the_cached_instructions_it_copied() {
    // A loop runs hot enough to become a block, then code at an address that shares its
    // cache slots runs (evicting the loop's entries), the loop's second instruction is
    // rewritten in memory without FENCE.I, and the loop runs again. Whoever fetches again
    // sees the new instruction: a block must not keep the old one. Single steps (where no
    // block fits) must give the same result.
    let o = (-8i32) as u32;
    let bne_x3_x5_back_8 = (((o >> 12) & 1) << 31)
        | (((o >> 5) & 0x3f) << 25)
        | (5 << 20)
        | (3 << 15)
        | (1 << 12)
        | (((o >> 1) & 0xf) << 8)
        | (((o >> 11) & 1) << 7)
        | 0x63;
    // The instruction cache's period in bytes (two per slot): farther than JAL reaches,
    // so the jumps are AUIPC + JALR through x6.
    let alias = 2 * crate::icache::ICACHE_ENTRIES as i32;
    let far = |offset: i32| {
        let hi = (offset + 0x800) >> 12;
        [
            ((hi as u32) << 12) | (6 << 7) | 0x17,
            i(0x67, 0, 0, 6, offset - (hi << 12)),
        ]
    };
    let mut prog = vec![addi(3, 3, 1), addi(4, 4, 1), bne_x3_x5_back_8];
    prog.extend(far(alias + 4 - 12));
    // One period on: the same instruction-cache slots as the loop's second and third
    // instructions (not its first, whose block slot running there would reset anyway).
    prog.resize((alias + 4) as usize / 4, NOP);
    prog.push(addi(5, 3, 5)); // a new bound, 5 iterations on
    prog.extend(far(-(alias + 8))); // back to the loop
    let make = || {
        let mut h = hart_with(&prog);
        h.enter_supervisor(BASE, 0, 0);
        h.x[5] = 40;
        h
    };
    let (mut big, mut small) = (make(), make());
    let patched = addi(4, 4, 100).to_le_bytes();
    run(&mut big, 40 * 3 + 3);
    for _ in 0..40 * 3 + 3 {
        run(&mut small, 1);
    }
    assert_eq!(big.pc, BASE + alias as u64 + 8, "at the aliasing code");
    for h in [&mut big, &mut small] {
        assert!(h.ram.load(BASE + 4, &patched));
    }
    run(&mut big, 2 + 5 * 3 + 1);
    for _ in 0..2 + 5 * 3 + 1 {
        run(&mut small, 1);
    }
    assert_eq!(big.x[4], 40 + 5 * 100, "the rewritten instruction ran");
    assert_eq!(big.save_state(), small.save_state());
}

#[test]
fn a_chained_jump_never_enters_another_pcs_block_in_the_same_slot() {
    // T (BASE+0x100) and T2 (one block-table period on) share a block slot and have blocks
    // of the same
    // shape. Phase 1 loops in T2 until it is compiled; phase 2 loops A -> T, where A's
    // compiled code chains to T's slot while it still holds T2's compiled block. Running
    // T2's code there would bump x6 instead of x8 and branch elsewhere.
    let t2 = 0x100 + 2 * crate::icache::BLOCK_ENTRIES as u64;
    let mut prog = vec![NOP; (t2 as usize + 0x100) / 4];
    let at = |prog: &mut Vec<u32>, addr: u64, words: &[u32]| {
        for (k, w) in words.iter().enumerate() {
            prog[(addr / 4) as usize + k] = *w;
        }
    };
    at(&mut prog, 0x000, &[addi(5, 0, 30), jal(0, t2 as i32 - 4)]);
    // T2: x6 += 1; x5 -= 1; bne x5, x0, T2; then x5 = 30; jal A.
    at(
        &mut prog,
        t2,
        &[
            addi(6, 6, 1),
            addi(5, 5, -1),
            branch(1, 5, 0, -8),
            addi(5, 0, 30),
            jal(0, 0x200 - (t2 as i32 + 0x10)),
        ],
    );
    // A: x7 += 1; jal T.
    at(&mut prog, 0x200, &[addi(7, 7, 1), jal(0, 0x100 - 0x204)]);
    // T: x8 += 3; x5 -= 1; bne x5, x0, A; then jal start.
    at(
        &mut prog,
        0x100,
        &[
            addi(8, 8, 3),
            addi(5, 5, -1),
            branch(1, 5, 0, 0x200 - 0x108),
            jal(0, -0x10c),
        ],
    );
    assert_eq!(
        crate::icache::Block::slot(BASE + 0x100),
        crate::icache::Block::slot(BASE + t2)
    );
    let (mut jit, mut interp) = (hart_with(&prog), hart_with(&prog));
    interp.icache.jit.enabled = false;
    for round in 0..50 {
        run(&mut jit, 997);
        run(&mut interp, 997);
        assert_eq!(
            (jit.x, jit.pc, jit.instret()),
            (interp.x, interp.pc, interp.instret()),
            "round {round}"
        );
    }
    let epoch = jit.icache.jit.epoch;
    let compiled = |pc: u64| {
        let b = &jit.icache.blocks[crate::icache::Block::slot(pc)];
        b.pc == pc && b.code != 0 && b.code_epoch == epoch
    };
    assert!(compiled(BASE + 0x200), "A is compiled");
    assert!(
        jit.x[8] > 1000 && jit.x[6] > 1000,
        "both loops ran: {:?}",
        &jit.x[5..9]
    );
}

#[test]
fn forgetting_blocks_near_the_top_of_the_address_space_terminates() {
    // An emptied cache entry has pc u64::MAX; stepping past it used to wrap around (an
    // overflow panic in a debug build, a loop that never ends in a release build). Each
    // forget runs on a thread of its own that must report back within a bound, having
    // done its work: the block starting 6 bytes before pc (which may hold a copy of the
    // instruction at pc) is dropped, the one starting a whole block span (MAX_BLOCK
    // instructions) before pc is kept.
    use crate::icache::{Block, MAX_BLOCK};
    use std::time::Duration;
    let span = MAX_BLOCK as u64 * 4;
    for pc in [u64::MAX, u64::MAX - 1, u64::MAX - 2, 0, 1] {
        let (done, ended) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut h = hart_with(&[NOP]);
            let covering = pc.saturating_sub(6);
            let before = pc.checked_sub(span);
            for start in [Some(covering), before].into_iter().flatten() {
                h.icache.blocks[Block::slot(start)].pc = start;
            }
            h.forget_blocks_covering(pc);
            let pc_of = |start: u64| h.icache.blocks[Block::slot(start)].pc;
            let _ = done.send((pc_of(covering), before.map(pc_of)));
        });
        let (covering, before) = ended
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|e| panic!("forget_blocks_covering({pc:#x}) did not end: {e}"));
        assert_eq!(
            covering,
            u64::MAX,
            "pc {pc:#x}: the covering block is dropped"
        );
        if let Some(start) = pc.checked_sub(span) {
            assert_eq!(
                before,
                Some(start),
                "pc {pc:#x}: a block a whole span before is kept"
            );
        }
    }
}

#[test]
fn full_flushes_and_fence_i_refetch_changed_code_and_keep_unchanged_code() {
    // A hot loop (compiled) whose second instruction is rewritten: without a fence the
    // cached instruction keeps running; after FENCE.I, or after a satp write (a full
    // flush), the new bytes run. Compiled and interpreted harts agree throughout.
    const FENCE_I: u32 = 0x0000_100f;
    let prog = [
        addi(3, 3, 1),
        addi(4, 4, 1),
        branch(1, 3, 5, -8),
        FENCE_I,
        addi(5, 5, 50),
        jal(0, -20),
    ];
    let make = || {
        let mut h = hart_with(&prog);
        h.x[5] = 50;
        h
    };
    let (mut jit, mut interp) = (make(), make());
    interp.icache.jit.enabled = false;
    let both = |jit: &mut Hart, interp: &mut Hart, n: u64| {
        run(jit, n);
        run(interp, n);
        assert_eq!(
            (jit.x, jit.pc, jit.instret()),
            (interp.x, interp.pc, interp.instret())
        );
    };
    both(&mut jit, &mut interp, 40 * 3);
    let patched = addi(4, 4, 100).to_le_bytes();
    for h in [&mut jit, &mut interp] {
        assert!(h.ram.load(BASE + 4, &patched));
    }
    // The rest of the first 50 iterations still runs the cached instruction.
    let x4 = jit.x[4];
    both(&mut jit, &mut interp, 10 * 3);
    assert_eq!(
        jit.x[4],
        x4 + 10,
        "no fence yet: the cached instruction runs"
    );
    // FENCE.I, bound += 50, and 50 more iterations with the new instruction.
    both(&mut jit, &mut interp, 2 + 1 + 50 * 3);
    assert_eq!(
        jit.x[4],
        x4 + 10 + 50 * 100,
        "after FENCE.I the new bytes run"
    );
    // Rewrite back and flush through satp (bare mode stays bare): new bytes again.
    let original = addi(4, 4, 1).to_le_bytes();
    for h in [&mut jit, &mut interp] {
        assert!(h.ram.load(BASE + 4, &original));
        h.csr_write(addr::SATP, 0).unwrap();
    }
    let x4 = jit.x[4];
    both(&mut jit, &mut interp, 2 + 1 + 50 * 3);
    assert_eq!(jit.x[4], x4 + 50, "after a full flush the new bytes run");
    assert!(
        jit.icache.blocks.iter().any(|b| b.code != 0),
        "the loop was compiled"
    );
}

#[test]
fn instructions_checked_together_after_a_fence_stay_within_their_page() {
    // After FENCE.I, the fetch of an unchecked instruction checks the unchecked ones after
    // it too, as far as its page goes (`Hart::check_run`). Here that run reaches the end of
    // its page, and the first instruction of the next page, rewritten after it was cached,
    // must be fetched on its own: its new form runs, although the first page holds its old
    // bytes at the same offset (where a check that ran on past the page would look).
    const FENCE_I: u32 = 0x0000_100f;
    let csrr_mscratch = i(0x73, 0, 2, 0, 0x340); // no fast path: run through `step`
    let (p1, p2) = (BASE + 0x1000, BASE + 0x2000);
    let mut h = hart_with(&[
        FENCE_I, // 0: every cached instruction unchecked
        jal(1, i32::try_from(p1 + 0xff4 - BASE - 4).unwrap()), // 4: call the routine
        addi(5, 5, 1), // 8
        jal(0, -12), // 12: back to 0
    ]);
    let old = addi(4, 4, 1);
    let words = |w: &[u32]| -> Vec<u8> { w.iter().flat_map(|w| w.to_le_bytes()).collect() };
    assert!(h.ram.load(p1, &words(&[old])));
    assert!(h.ram.load(
        p1 + 0xff4,
        &words(&[csrr_mscratch, addi(3, 3, 1), addi(3, 3, 1)])
    ));
    assert!(h.ram.load(p2, &words(&[old, i(0x67, 0, 0, 1, 0)])));
    run(&mut h, 3_000);
    let (calls, x4) = (h.x[5], h.x[4]);
    assert!(
        calls > 100 && x4.abs_diff(calls) <= 1,
        "{calls} calls, x4 {x4}"
    );
    assert!(h.ram.load(p2, &words(&[addi(4, 4, 100)])));
    run(&mut h, 3_000);
    let more = h.x[5] - calls;
    assert!(more > 100);
    // Each call after the rewrite adds 100 (the call under way may still add 1).
    assert!(
        h.x[4] >= x4 + 100 * (more - 1) && h.x[4] <= x4 + 100 * (more + 1),
        "the rewritten instruction runs: {} after {} calls from {x4}",
        h.x[4],
        more
    );
}

#[test]
fn a_block_whose_first_instruction_a_fence_left_unchecked_is_built_at_a_later_visit() {
    // A two-instruction loop runs until its head has been reached once short of being
    // built; then every cached instruction is left unchecked (as FENCE.I and full flushes
    // do) and the loop goes on. The visit that builds finds the head unchecked: the block
    // must be built at a later visit, not remembered as "no block starts here" (which
    // left the code after it interpreted one instruction at a time for good).
    use crate::icache::{Block, BLOCK_HOT, BUILT};
    let mut h = hart_with(&[addi(3, 3, 1), jal(0, -4)]);
    h.enter_supervisor(BASE, 0, 0);
    let slot = Block::slot(BASE);
    while h.icache.blocks[slot].hits < BLOCK_HOT - 1 {
        run(&mut h, 1);
    }
    run(&mut h, 1); // the jump back
    assert_eq!(h.pc, BASE, "at the loop's head");
    h.icache.uncheck_all();
    run(&mut h, 2);
    let b = &h.icache.blocks[slot];
    assert!(
        b.hits != BUILT || !b.ops.is_empty(),
        "the head's block was built empty after the fence"
    );
    run(&mut h, 20);
    let b = &h.icache.blocks[slot];
    assert_eq!(
        (b.pc, b.hits, b.ops.len()),
        (BASE, BUILT, 2),
        "the loop is a block"
    );
    // The loop retired every instruction: 1 + 2 + 20 instructions after the warm-up, an
    // addi in every other one.
    assert!(h.x[3] >= 12);
}

#[test]
fn a_built_block_keeps_its_slot_until_another_pc_has_contested_it_enough() {
    // A loop at BASE is built; code one block-table period on (the same slot) is then
    // reached again and again. Each visit runs it one by one and counts against the loop's
    // block, which keeps the slot for CONTEST visits (code run once must not throw a hot
    // block out) and gives it up at the next; both run as they would without blocks.
    use crate::icache::{Block, BLOCK_ENTRIES, BUILT, CONTEST};
    let t2 = 2 * BLOCK_ENTRIES as u64;
    let mut prog = vec![NOP; (t2 as usize + 8) / 4];
    prog[0] = addi(6, 6, 1);
    prog[1] = jal(0, -4);
    prog[(t2 / 4) as usize] = addi(7, 7, 1);
    prog[(t2 / 4) as usize + 1] = jal(0, -(t2 as i32 + 4));
    let mut h = hart_with(&prog);
    h.enter_supervisor(BASE, 0, 0);
    let slot = Block::slot(BASE);
    assert_eq!(slot, Block::slot(BASE + t2));
    run(&mut h, 200);
    let held = |h: &Hart| {
        let b = &h.icache.blocks[slot];
        (b.pc, b.hits == BUILT)
    };
    assert_eq!(held(&h), (BASE, true), "the loop is a block");
    for visit in 1..=u64::from(CONTEST) + 1 {
        h.pc = BASE + t2;
        run(&mut h, 2);
        assert_eq!((h.x[7], h.pc), (visit, BASE), "the other code ran");
        if visit <= u64::from(CONTEST) {
            assert_eq!(
                held(&h),
                (BASE, true),
                "visit {visit}: the loop keeps its slot"
            );
        } else {
            assert_eq!(
                held(&h),
                (BASE + t2, false),
                "visit {visit}: the slot changed hands"
            );
        }
    }
}

/// The F and D extensions' loads and stores run inside blocks, compiled, with the FPU on;
/// with it off, the one a compiled block reaches traps as illegal exactly as a single step
/// would: at its pc, after the instructions before it in the block, reporting its bytes
/// (16 of them for C.FLD).
#[test]
fn fp_loads_and_stores_run_in_compiled_blocks_and_trap_with_their_bytes_when_the_fpu_is_off() {
    const HANDLER: u64 = BASE + 0x400;
    const DATA: u64 = BASE + 0x8000;
    let fld: &[u8] = &i(0x07, 9, 3, 1, 0).to_le_bytes(); // fld f9, 0(x1)
    let c_fld: &[u8] = &0x2084u16.to_le_bytes(); // c.fld f9, 0(x9)
    for (under_test, raw) in [(fld, u64::from(i(0x07, 9, 3, 1, 0))), (c_fld, 0x2084)] {
        // loop: addi x8, x8, 1; <under test>; fsd f9, 8(x1); flw f2, 16(x1);
        //       fsw f2, 24(x1); addi x5, x5, 1; blt x5, x6, loop; spin
        let mut prog: Vec<u8> = addi(8, 8, 1).to_le_bytes().to_vec();
        let fp_at = BASE + prog.len() as u64;
        prog.extend_from_slice(under_test);
        for w in [
            s(0x27, 3, 1, 9, 8),
            i(0x07, 2, 2, 1, 16),
            s(0x27, 2, 1, 2, 24),
            addi(5, 5, 1),
        ] {
            prog.extend_from_slice(&w.to_le_bytes());
        }
        let back = -(prog.len() as i32);
        prog.extend_from_slice(&branch(4, 5, 6, back).to_le_bytes());
        prog.extend_from_slice(&jal(0, 0).to_le_bytes());
        prog.resize(0x400, 0);
        // Handler: x10 = mcause, x11 = mtval, x12 = mepc; spin.
        for w in [
            i(0x73, 10, 2, 0, 0x342),
            i(0x73, 11, 2, 0, 0x343),
            i(0x73, 12, 2, 0, 0x341),
            jal(0, 0),
        ] {
            prog.extend_from_slice(&w.to_le_bytes());
        }
        let mut ram = Ram::new(BASE, 4 << 20);
        assert!(ram.load(BASE, &prog));
        let data: Vec<u8> = (0..32u8).map(|b| b.wrapping_mul(37) ^ 0x5a).collect();
        assert!(ram.load(DATA, &data));
        let mut h = Hart::new(ram, BASE, 10);
        h.mtvec = HANDLER;
        h.mstatus |= 1 << mstatus::FS_SHIFT;
        h.x[1] = DATA;
        h.x[9] = DATA;
        h.x[6] = 300;
        run(&mut h, 300 * 7 + 5);
        let word = |h: &Hart, off: u64, size: u8| h.ram.read_at((DATA - BASE + off) as usize, size);
        assert_eq!(h.x[5], 300, "the loop ran to its end");
        assert_eq!(word(&h, 8, 8), word(&h, 0, 8), "fsd stored fld's value");
        assert_eq!(word(&h, 24, 4), word(&h, 16, 4), "fsw stored flw's value");
        assert_eq!(h.fp.f[9], word(&h, 0, 8));
        assert_eq!(
            h.fp.f[2],
            0xffff_ffff_0000_0000 | word(&h, 16, 4),
            "flw NaN-boxes"
        );
        assert_eq!(
            h.mstatus & mstatus::FS,
            mstatus::FS_DIRTY,
            "loads dirty the FPU state"
        );
        let epoch = h.icache.jit.epoch;
        assert!(
            h.icache.blocks.iter().any(|b| b.pc == BASE
                && b.code != 0
                && b.code_epoch == epoch
                && b.ops.iter().any(|(op, _, _)| op.kind.needs_fpu())),
            "the loop ran compiled, its FP loads and stores inside"
        );
        // Once more round the loop with the FPU off.
        h.mstatus &= !mstatus::FS;
        h.x[6] = 1000;
        let x8 = h.x[8];
        h.pc = BASE;
        run(&mut h, 50);
        assert_eq!(h.x[10], cause::ILLEGAL_INSN, "mcause");
        assert_eq!(h.x[11], raw, "mtval: the instruction's bytes");
        assert_eq!(h.x[12], fp_at, "mepc");
        assert_eq!(h.x[8], x8 + 1, "the addi before it ran");
    }
}

#[test]
fn a_compressed_instruction_in_a_pages_last_two_bytes_belongs_to_its_block() {
    // A loop whose compressed branch back sits in the last two bytes of its page (where a
    // 4-byte instruction would cross into the next). The branch lies wholly in the page,
    // so the loop is one block, and compiled: left out (as it was), the branch began an
    // empty block and ran one instruction at a time on every round (a compute loop of the
    // small guest spent a third of its trips through the run loop there). The compiled
    // and the interpreted hart retire the same instructions at every step.
    const C_BNEZ_S1_MINUS_8: u16 = 0xfce5;
    assert_eq!(
        crate::rvc::expand(C_BNEZ_S1_MINUS_8),
        Some(branch(1, 9, 0, -8)),
        "c.bnez s1, -8"
    );
    let head = BASE + 0x1ff6;
    let make = || {
        let mut h = hart_with(&[]);
        let mut code: Vec<u8> = [addi(3, 3, 1), addi(9, 9, -1)]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        code.extend_from_slice(&C_BNEZ_S1_MINUS_8.to_le_bytes());
        code.extend_from_slice(&jal(0, 0).to_le_bytes()); // the next page: stay here
        assert!(h.ram.load(head, &code));
        h.pc = head;
        h.x[9] = 1000;
        h
    };
    let (mut jit, mut interp) = (make(), make());
    interp.icache.jit.enabled = false;
    while jit.x[9] != 0 {
        let until = jit.cycles() + 97;
        assert_eq!(
            jit.run(&mut NoDevices, until),
            interp.run(&mut NoDevices, until)
        );
        let (a, b) = (jit.save_state(), interp.save_state());
        assert_eq!((a.x, a.pc, a.instret), (b.x, b.pc, b.instret));
    }
    assert_eq!((jit.x[3], jit.pc), (1000, head + 10), "every round ran");
    let b = &jit.icache.blocks[crate::icache::Block::slot(head)];
    assert_eq!((b.pc, b.ops.len()), (head, 3), "the branch is in the block");
    assert!(b.code != 0, "and the block ran compiled");
}
