//! Unit tests of the hart: programs built with a tiny encoder, run on RAM.

use crate::csr::{addr, cause, irq, mstatus, Priv};
use crate::hart::{Hart, Stop};
use crate::mmu::pte;
use crate::{NoDevices, Ram};

const BASE: u64 = 0x8000_0000;

fn r(op: u32, rd: u32, f3: u32, rs1: u32, rs2: u32, f7: u32) -> u32 {
    (f7 << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | op
}
fn i(op: u32, rd: u32, f3: u32, rs1: u32, imm: i32) -> u32 {
    ((imm as u32 & 0xfff) << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | op
}
fn s(op: u32, f3: u32, rs1: u32, rs2: u32, imm: i32) -> u32 {
    let imm = imm as u32;
    (((imm >> 5) & 0x7f) << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | ((imm & 0x1f) << 7) | op
}
fn addi(rd: u32, rs1: u32, imm: i32) -> u32 {
    i(0x13, rd, 0, rs1, imm)
}
fn ld(rd: u32, rs1: u32, imm: i32) -> u32 {
    i(0x03, rd, 3, rs1, imm)
}
fn sd(rs2: u32, rs1: u32, imm: i32) -> u32 {
    s(0x23, 3, rs1, rs2, imm)
}
fn csrrw(rd: u32, csr: u16, rs1: u32) -> u32 {
    i(0x73, rd, 1, rs1, i32::from(csr as i16))
}
fn amo(f5: u32, rd: u32, rs1: u32, rs2: u32) -> u32 {
    r(0x2f, rd, 3, rs1, rs2, f5 << 2)
}
const ECALL: u32 = 0x73;
const WFI: u32 = 0x1050_0073;
const NOP: u32 = 0x13;

fn hart_with(program: &[u32]) -> Hart {
    let mut ram = Ram::new(BASE, 4 << 20);
    let bytes: Vec<u8> = program.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert!(ram.load(BASE, &bytes));
    Hart::new(ram, BASE, 10)
}

/// Runs until `n` instructions retired (or a stop).
fn run(h: &mut Hart, n: u64) -> Stop {
    let until = h.cycles + n;
    h.run(&mut NoDevices, until)
}

#[test]
fn integer_and_m_extension_corner_cases() {
    let prog = [
        addi(1, 0, -7),         // x1 = -7
        addi(2, 0, 0),          // x2 = 0
        r(0x33, 3, 4, 1, 2, 1), // div x3 = x1 / 0 = -1
        r(0x33, 4, 6, 1, 2, 1), // rem x4 = x1 % 0 = x1
        r(0x33, 5, 5, 1, 2, 1), // divu x5 = all ones
        addi(6, 0, 1),
        i(0x13, 6, 1, 6, 63), // slli x6 = 1 << 63 (i64::MIN)
        addi(7, 0, -1),
        r(0x33, 8, 4, 6, 7, 1),  // div MIN / -1 = MIN
        r(0x33, 9, 6, 6, 7, 1),  // rem MIN % -1 = 0
        r(0x3b, 10, 0, 1, 1, 0), // addw x10 = -14
        r(0x33, 11, 1, 1, 1, 1), // mulh (-7 * -7) >> 64 = 0
        r(0x33, 12, 3, 7, 7, 1), // mulhu (2^64-1)^2 >> 64 = 2^64 - 2
    ];
    let mut h = hart_with(&prog);
    run(&mut h, prog.len() as u64);
    assert_eq!(h.x[3], u64::MAX);
    assert_eq!(h.x[4] as i64, -7);
    assert_eq!(h.x[5], u64::MAX);
    assert_eq!(h.x[8], 1 << 63);
    assert_eq!(h.x[9], 0);
    assert_eq!(h.x[10] as i64, -14);
    assert_eq!(h.x[11], 0);
    assert_eq!(h.x[12], u64::MAX - 1);
    assert_eq!(h.x[0], 0);
    assert_eq!(h.instret, prog.len() as u64);
}

#[test]
fn misaligned_access_across_a_page_works() {
    let mut h = hart_with(&[addi(2, 0, 0x123), sd(2, 1, 0), ld(3, 1, 0)]);
    h.x[1] = BASE + 0xffd;
    run(&mut h, 3);
    assert_eq!(h.x[3], 0x123);
    assert_eq!(h.ram.slice(BASE + 0xffd, 3).unwrap(), &[0x23, 0x01, 0]);
    assert_eq!(h.mcause, 0, "no trap");
}

#[test]
fn illegal_instruction_is_delegated_to_s_mode() {
    let mut h = hart_with(&[0xffff_ffff]);
    h.enter_supervisor(BASE, 0, 0);
    h.stvec = BASE + 0x100;
    run(&mut h, 1);
    assert_eq!(h.prv, Priv::Supervisor);
    assert_eq!(h.pc, BASE + 0x100);
    assert_eq!(h.scause, cause::ILLEGAL_INSN);
    assert_eq!(h.stval, 0xffff_ffff);
    assert_eq!(h.sepc, BASE);
    assert_eq!(h.instret, 0, "a trapping instruction does not retire");
    // Not delegated: goes to M.
    let mut h = hart_with(&[0xffff_ffff]);
    h.enter_supervisor(BASE, 0, 0);
    h.medeleg = 0;
    h.mtvec = BASE + 0x200;
    run(&mut h, 1);
    assert_eq!(h.prv, Priv::Machine);
    assert_eq!(h.mcause, cause::ILLEGAL_INSN);
    assert_eq!((h.mstatus >> mstatus::MPP_SHIFT) & 3, 1, "MPP = S");
}

#[test]
fn ecall_from_s_is_an_sbi_call_and_wfi_stops() {
    let mut h = hart_with(&[ECALL, WFI, NOP]);
    h.enter_supervisor(BASE, 0, 0);
    assert_eq!(run(&mut h, 10), Stop::SbiCall);
    assert_eq!(h.pc, BASE + 4);
    assert_eq!(run(&mut h, 10), Stop::Wfi);
    assert_eq!(h.pc, BASE + 8);
}

#[test]
fn lr_sc_and_amos() {
    let prog = [
        amo(0x02, 2, 1, 0), // lr.d x2, (x1)
        amo(0x03, 3, 1, 4), // sc.d x3, x4, (x1) -> success (0)
        amo(0x03, 5, 1, 4), // sc.d again -> failure (1), no reservation
        amo(0x00, 6, 1, 4), // amoadd.d x6 = old, mem += x4
        amo(0x1c, 7, 1, 0), // amomaxu.d x7 = old, mem = max(mem, 0)
    ];
    let mut h = hart_with(&prog);
    h.x[1] = BASE + 0x1000;
    h.x[4] = 5;
    assert!(h.ram.load(BASE + 0x1000, &40u64.to_le_bytes()));
    run(&mut h, prog.len() as u64);
    assert_eq!(h.x[2], 40);
    assert_eq!(h.x[3], 0);
    assert_eq!(h.x[5], 1);
    assert_eq!(h.x[6], 5);
    assert_eq!(h.x[7], 10);
    assert_eq!(h.ram.slice(BASE + 0x1000, 1).unwrap(), &[10]);
    // Misaligned AMO faults.
    let mut h = hart_with(&[amo(0x00, 6, 1, 4)]);
    h.x[1] = BASE + 0x1001;
    h.mtvec = BASE + 0x40;
    run(&mut h, 1);
    assert_eq!(h.mcause, cause::STORE_MISALIGNED);
    assert_eq!(h.mtval, BASE + 0x1001);
}

/// Builds Sv39 tables mapping virtual 0x4000_0000 (4 KiB page) to physical `BASE + 0x10000`
/// with `flags`, and the code page identity-mapped as a 1 GiB superpage (RX).
fn sv39(h: &mut Hart, flags: u64) {
    let root = BASE + 0x20_0000;
    let l1 = root + 0x1000;
    let l0 = root + 0x2000;
    let w = |h: &mut Hart, a: u64, v: u64| assert!(h.ram.load(a, &v.to_le_bytes()));
    // Root[2] -> 1 GiB superpage at 0x8000_0000 (covers code), RWX, A, D.
    w(
        h,
        root + 2 * 8,
        ((BASE >> 12) << 10) | pte::V | pte::R | pte::W | pte::X | pte::A | pte::D,
    );
    // Root[1] -> l1 (virtual 0x4000_0000..)
    w(h, root + 8, ((l1 >> 12) << 10) | pte::V);
    w(h, l1, ((l0 >> 12) << 10) | pte::V);
    w(h, l0, (((BASE + 0x10000) >> 12) << 10) | flags);
    h.satp = (8 << 60) | (root >> 12);
}

#[test]
fn sv39_walk_sets_accessed_and_dirty() {
    let mut h = hart_with(&[ld(2, 1, 0), sd(2, 1, 8)]);
    h.enter_supervisor(BASE, 0, 0);
    sv39(&mut h, pte::V | pte::R | pte::W);
    h.x[1] = 0x4000_0000;
    assert!(h.ram.load(BASE + 0x10000, &77u64.to_le_bytes()));
    run(&mut h, 1);
    assert_eq!(h.x[2], 77);
    let leaf = u64::from_le_bytes(
        h.ram
            .slice(BASE + 0x20_2000, 8)
            .unwrap()
            .try_into()
            .unwrap(),
    );
    assert_ne!(leaf & pte::A, 0);
    assert_eq!(leaf & pte::D, 0, "a load does not dirty the page");
    run(&mut h, 1);
    let leaf = u64::from_le_bytes(
        h.ram
            .slice(BASE + 0x20_2000, 8)
            .unwrap()
            .try_into()
            .unwrap(),
    );
    assert_ne!(
        leaf & pte::D,
        0,
        "the store set D through the TLB's clean entry"
    );
    assert_eq!(h.ram.slice(BASE + 0x10008, 1).unwrap(), &[77]);
}

#[test]
fn sv39_permission_faults() {
    // Store to a read-only page.
    let mut h = hart_with(&[sd(2, 1, 0)]);
    h.enter_supervisor(BASE, 0, 0);
    h.stvec = BASE + 0x100;
    sv39(&mut h, pte::V | pte::R);
    h.x[1] = 0x4000_0010;
    run(&mut h, 1);
    assert_eq!(h.scause, cause::STORE_PAGE_FAULT);
    assert_eq!(h.stval, 0x4000_0010);
    // User page from S-mode without SUM.
    let mut h = hart_with(&[ld(2, 1, 0)]);
    h.enter_supervisor(BASE, 0, 0);
    h.stvec = BASE + 0x100;
    sv39(&mut h, pte::V | pte::R | pte::U);
    h.x[1] = 0x4000_0000;
    run(&mut h, 1);
    assert_eq!(h.scause, cause::LOAD_PAGE_FAULT);
    // With SUM it works.
    let mut h = hart_with(&[ld(2, 1, 0)]);
    h.enter_supervisor(BASE, 0, 0);
    sv39(&mut h, pte::V | pte::R | pte::U);
    h.mstatus |= mstatus::SUM;
    h.x[1] = 0x4000_0000;
    run(&mut h, 1);
    assert_eq!(h.scause, 0);
    // Non-canonical address.
    let mut h = hart_with(&[ld(2, 1, 0)]);
    h.enter_supervisor(BASE, 0, 0);
    h.stvec = BASE + 0x100;
    sv39(&mut h, pte::V | pte::R);
    h.x[1] = 0x0000_8000_0000_0000;
    run(&mut h, 1);
    assert_eq!(h.scause, cause::LOAD_PAGE_FAULT);
}

#[test]
fn timer_interrupt_lands_on_an_exact_instruction() {
    // A long run of NOPs; the timer fires at time 5 = cycle 50 (10 cycles per tick).
    let mut prog = vec![NOP; 0x1000 / 4];
    prog.push(0x0000_006f); // the handler at +0x1000: jal x0, 0 (spin)
    for enabled_late in [false, true] {
        let mut h = hart_with(&prog);
        h.enter_supervisor(BASE, 0, 0);
        h.stvec = BASE + 0x1000;
        h.mstatus |= mstatus::SIE;
        h.set_timecmp(5);
        if enabled_late {
            // Splitting the run at an arbitrary point must not move the interrupt.
            run(&mut h, 17);
            run(&mut h, 100 - 17);
        } else {
            run(&mut h, 100);
        }
        assert_eq!(h.scause, cause::INTERRUPT | 5);
        assert_eq!(
            h.sepc,
            BASE + 50 * 4,
            "interrupt taken before the 51st instruction"
        );
    }
}

#[test]
fn csr_privilege_and_read_only_checks() {
    // S-mode cannot touch mstatus; writing a read-only CSR (cycle) is illegal.
    let mut h = hart_with(&[csrrw(1, addr::MSTATUS, 0)]);
    h.enter_supervisor(BASE, 0, 0);
    h.stvec = BASE + 0x100;
    run(&mut h, 1);
    assert_eq!(h.scause, cause::ILLEGAL_INSN);
    let mut h = hart_with(&[csrrw(1, addr::CYCLE, 2)]);
    h.enter_supervisor(BASE, 0, 0);
    h.stvec = BASE + 0x100;
    run(&mut h, 1);
    assert_eq!(h.scause, cause::ILLEGAL_INSN);
    // sie only shows delegated bits; satp ignores unsupported modes (Sv48).
    let mut h = hart_with(&[
        csrrw(0, addr::SIE, 1),
        csrrw(0, addr::SATP, 2),
        i(0x73, 3, 2, 0, i32::from(addr::SATP as i16)),
    ]);
    h.enter_supervisor(BASE, 0, 0);
    h.x[1] = u64::MAX;
    h.x[2] = 9 << 60;
    run(&mut h, 3);
    assert_eq!(h.mie & !irq::S_MASK, irq::S_MASK & !irq::S_MASK);
    assert_eq!(h.x[3], 0, "Sv48 write ignored");
}

fn jal(rd: u32, offset: i32) -> u32 {
    let o = offset as u32;
    (((o >> 20) & 1) << 31)
        | (((o >> 1) & 0x3ff) << 21)
        | (((o >> 11) & 1) << 20)
        | (((o >> 12) & 0xff) << 12)
        | (rd << 7)
        | 0x6f
}

#[test]
fn saved_state_continues_identically_even_with_stale_translations() {
    let mut h = hart_with(&[ld(2, 1, 0), addi(2, 2, 1), sd(2, 1, 0), jal(0, -12)]);
    h.enter_supervisor(BASE, 0, 0);
    sv39(&mut h, pte::V | pte::R | pte::W | pte::A | pte::D);
    h.x[1] = 0x4000_0000;
    run(&mut h, 1001);
    let saved = h.save_state();
    assert!(!saved.tlb.is_empty() && !saved.icache.is_empty());
    let mut copy = Hart::new(h.ram.clone(), 0, 10);
    copy.load_state(&saved).unwrap();
    assert_eq!(copy.save_state(), saved);
    // Remap the data page without SFENCE.VMA: the architecture lets both harts keep their
    // cached translation, and a restored hart must do what the original does.
    let leaf = (((BASE + 0x30000) >> 12) << 10) | pte::V | pte::R | pte::W | pte::A | pte::D;
    for hart in [&mut h, &mut copy] {
        assert!(hart.ram.load(BASE + 0x20_2000, &leaf.to_le_bytes()));
        run(hart, 1000);
    }
    assert_eq!(h.save_state(), copy.save_state());
    assert_eq!(h.ram.bytes(), copy.ram.bytes());
    let counter = |h: &Hart, a| u64::from_le_bytes(h.ram.slice(a, 8).unwrap().try_into().unwrap());
    assert_eq!(
        counter(&h, BASE + 0x10000),
        500,
        "the cached translation was used"
    );
    assert_eq!(counter(&h, BASE + 0x30000), 0);
}

#[test]
fn saved_state_is_refused_by_another_machine() {
    let h = hart_with(&[NOP]);
    let saved = h.save_state();
    let mut other = Hart::new(Ram::new(BASE, 8 << 20), BASE, 10);
    assert!(matches!(
        other.load_state(&saved),
        Err(crate::state::StateError::Mismatch {
            what: "RAM size",
            ..
        })
    ));
    let mut bad = saved.clone();
    bad.prv = 2;
    let mut same = hart_with(&[NOP]);
    assert!(same.load_state(&bad).is_err());
    assert_eq!(same.save_state(), saved, "a refused state changes nothing");
}

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
            .any(|b| b.hits == crate::hart::BUILT && b.ops.len() >= 5),
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
    let generation = h.icache.generation;
    run(&mut h, 2);
    assert_eq!(h.x[4], 33, "the fenced page is walked again");
    assert_eq!(
        h.icache.generation, generation,
        "a fence of a 4 KiB page keeps the decoded code of other pages"
    );
    assert!(
        !h.superpages.is_empty(),
        "the code runs through a superpage"
    );
    run(&mut h, 1);
    assert_ne!(
        h.icache.generation, generation,
        "a fence inside a cached superpage flushes everything"
    );
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
    let mut prog = vec![
        addi(3, 3, 1),
        addi(4, 4, 1),
        bne_x3_x5_back_8,
        jal(0, 0x10004 - 12),
    ];
    // 64 KiB on: the same instruction-cache slots as the loop's second and third
    // instructions (not its first, whose block slot running there would reset anyway).
    prog.resize(0x10004 / 4, NOP);
    prog.push(addi(5, 3, 5)); // a new bound, 5 iterations on
    prog.push(jal(0, -0x10008)); // back to the loop
    let make = || {
        let mut h = hart_with(&prog);
        h.enter_supervisor(BASE, 0, 0);
        h.x[5] = 40;
        h
    };
    let (mut big, mut small) = (make(), make());
    let patched = addi(4, 4, 100).to_le_bytes();
    run(&mut big, 40 * 3 + 2);
    for _ in 0..40 * 3 + 2 {
        run(&mut small, 1);
    }
    assert_eq!(big.pc, BASE + 0x10008, "at the aliasing code");
    for h in [&mut big, &mut small] {
        assert!(h.ram.load(BASE + 4, &patched));
    }
    run(&mut big, 2 + 5 * 3);
    for _ in 0..2 + 5 * 3 {
        run(&mut small, 1);
    }
    assert_eq!(big.x[4], 40 + 5 * 100, "the rewritten instruction ran");
    assert_eq!(big.save_state(), small.save_state());
}
