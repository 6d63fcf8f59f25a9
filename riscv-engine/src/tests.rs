//! Unit tests of the hart: programs built with a tiny encoder, run on RAM.

use crate::csr::{addr, cause, irq, mstatus, Priv};
use crate::hart::Hart;
use crate::mmu::pte;
use crate::trap::Stop;
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
    let until = h.cycles() + n;
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
    assert_eq!(h.instret(), prog.len() as u64);
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
    assert_eq!(h.instret(), 0, "a trapping instruction does not retire");
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
    // The instruction cache's period in bytes (two per slot).
    let alias = 2 * crate::icache::ICACHE_ENTRIES as i32;
    let mut prog = vec![
        addi(3, 3, 1),
        addi(4, 4, 1),
        bne_x3_x5_back_8,
        jal(0, alias + 4 - 12),
    ];
    // One period on: the same instruction-cache slots as the loop's second and third
    // instructions (not its first, whose block slot running there would reset anyway).
    prog.resize((alias + 4) as usize / 4, NOP);
    prog.push(addi(5, 3, 5)); // a new bound, 5 iterations on
    prog.push(jal(0, -(alias + 8))); // back to the loop
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
    assert_eq!(big.pc, BASE + alias as u64 + 8, "at the aliasing code");
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

/// A bus with one MMIO window whose reads depend on address and cycle, logging writes:
/// any difference in when or how a device is touched shows in the log.
#[derive(Default)]
struct LoggingDevice {
    log: Vec<(u64, u8, u64, u64)>,
}

const MMIO_BASE: u64 = 0x1000_0000;

impl crate::Bus for LoggingDevice {
    fn mmio_read(&mut self, addr: u64, size: u8, cycles: u64) -> Option<u64> {
        if !(MMIO_BASE..MMIO_BASE + 0x1000).contains(&addr) {
            return None;
        }
        self.log.push((addr, size, u64::MAX, cycles));
        Some((addr ^ cycles.rotate_left(17)) & (u64::MAX >> (64 - 8 * u32::from(size))))
    }
    fn mmio_write(&mut self, addr: u64, size: u8, value: u64, cycles: u64) -> bool {
        if !(MMIO_BASE..MMIO_BASE + 0x1000).contains(&addr) {
            return false;
        }
        self.log.push((addr, size, value, cycles));
        true
    }
    fn external_interrupt(&self) -> bool {
        false
    }
}

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn branch(f3: u32, rs1: u32, rs2: u32, offset: i32) -> u32 {
    let o = offset as u32;
    (((o >> 12) & 1) << 31)
        | (((o >> 5) & 0x3f) << 25)
        | (rs2 << 20)
        | (rs1 << 15)
        | (f3 << 12)
        | (((o >> 1) & 0xf) << 8)
        | (((o >> 11) & 1) << 7)
        | 0x63
}

/// A random loop body of (mostly) fast instructions as byte parcels: arithmetic on
/// x1..x25, loads and stores around a page boundary (misaligned and page-crossing ones
/// included) through x30, device accesses through x27, faulting accesses through x26,
/// short forward branches and jumps, RVC arithmetic, and the odd slow instruction
/// (rdcycle) that ends a block, multiply/divide with the values they treat specially.
/// x31 counts the loop; x9 may point at the device.
fn random_body(seed: &mut u64) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::new();
    let n = 1 + splitmix(seed) % 40;
    let push = |out: &mut Vec<u8>, w: u32| out.extend_from_slice(&w.to_le_bytes());
    for _ in 0..n {
        let v = splitmix(seed);
        let rd = 1 + (v >> 8) as u32 % 25;
        let rs1 = (v >> 16) as u32 % 26;
        let rs2 = (v >> 24) as u32 % 26;
        let imm = ((v >> 32) as i32) >> 20; // -2048..=2047
        match v % 22 {
            0 => {
                let f3 = [0, 2, 3, 4, 6, 7][(v >> 40) as usize % 6];
                push(&mut out, i(0x13, rd, f3, rs1, imm));
            }
            1 => {
                let (f3, hi) = [(1, 0), (5, 0), (5, 0x400)][(v >> 40) as usize % 3];
                push(&mut out, i(0x13, rd, f3, rs1, hi | (imm & 63)));
            }
            2 => {
                let (f3, f7) = [(0, 0), (0, 0x20), (1, 0), (2, 0), (3, 0), (4, 0), (5, 0)]
                    [(v >> 40) as usize % 7];
                let (f3, f7) = if (v >> 44) & 1 == 1 {
                    (f3, f7)
                } else {
                    [(5, 0x20), (6, 0), (7, 0), (0, 1)][(v >> 45) as usize % 4]
                };
                push(&mut out, r(0x33, rd, f3, rs1, rs2, f7));
            }
            3 => {
                let (f3, f7) =
                    [(0, 0), (0, 0x20), (1, 0), (5, 0), (5, 0x20), (0, 1)][(v >> 40) as usize % 6];
                push(&mut out, r(0x3b, rd, f3, rs1, rs2, f7));
            }
            4 => {
                let (f3, hi) = [
                    (0, imm),
                    (1, imm & 31),
                    (5, imm & 31),
                    (5, 0x400 | (imm & 31)),
                ][(v >> 40) as usize % 4];
                push(&mut out, i(0x1b, rd, f3, rs1, hi));
            }
            5 => push(
                &mut out,
                (((v >> 40) as u32) & 0xffff_f000)
                    | (rd << 7)
                    | if (v >> 62) & 1 == 0 { 0x37 } else { 0x17 },
            ),
            6..=8 => {
                let f3 = [0, 1, 2, 3, 4, 5, 6][(v >> 40) as usize % 7];
                push(&mut out, i(0x03, rd, f3, 30, imm));
            }
            9 | 10 => {
                let f3 = (v >> 40) as u32 % 4;
                push(&mut out, s(0x23, f3, 30, rs2, imm));
            }
            11 => {
                // A device access (aligned, within the window).
                let f3 = (v >> 40) as u32 % 4;
                let off = ((v >> 48) as i32 & 0x1f) << 3;
                if (v >> 62) & 1 == 0 {
                    push(&mut out, i(0x03, rd, f3, 27, off));
                } else {
                    push(&mut out, s(0x23, f3, 27, rs2, off));
                }
            }
            12 => {
                // A faulting access (the handler skips it).
                if (v >> 62) & 1 == 0 {
                    push(&mut out, i(0x03, rd, 3, 26, imm));
                } else {
                    push(&mut out, s(0x23, 3, 26, rs2, imm));
                }
            }
            13 => {
                // A forward branch over the next (4-byte) instruction.
                let f3 = [0, 1, 4, 5, 6, 7][(v >> 40) as usize % 6];
                push(&mut out, branch(f3, rs1, rs2, 8));
                push(&mut out, addi(rd, rd, 1));
            }
            14 => {
                push(&mut out, jal(rd, 8));
                push(&mut out, addi(rd, rd, 1));
            }
            15 => {
                // auipc x28, 0; jalr rd, 10(x28) (to the instruction after the jalr, + 2
                // rounding: lands on the parcel after it, bit 0 cleared).
                push(&mut out, 0x17 | (28 << 7));
                push(&mut out, i(0x67, rd, 0, 28, 9));
                out.extend_from_slice(&0x0001u16.to_le_bytes()); // c.nop
            }
            16 => {
                // RVC: c.addi / c.li / c.mv / c.add.
                let nz = 1 + (v >> 48) as u16 % 25;
                let imm6 = ((v >> 56) as u16) & 0x3f;
                let rd = rd as u16;
                if (v >> 40) % 5 == 4 {
                    // A compressed device access: addi x9, x27, 0; c.lw / c.sw through x9.
                    push(&mut out, addi(9, 27, 0));
                    let reg = ((v >> 48) as u16 & 7) << 2;
                    let c = if (v >> 62) & 1 == 0 { 0x4000 } else { 0xc000 } | (1 << 7) | reg;
                    out.extend_from_slice(&c.to_le_bytes());
                    continue;
                }
                let c = match (v >> 40) % 4 {
                    0 => ((imm6 >> 5) << 12) | (rd << 7) | ((imm6 & 31) << 2) | 0x01,
                    1 => 0x4000 | ((imm6 >> 5) << 12) | (rd << 7) | ((imm6 & 31) << 2) | 0x01,
                    2 => 0x8000 | (rd << 7) | (nz << 2) | 0x02,
                    _ => 0x9000 | (rd << 7) | (nz << 2) | 0x02,
                };
                out.extend_from_slice(&c.to_le_bytes());
            }
            17 => push(&mut out, i(0x73, rd, 2, 0, 0xc00)), // rdcycle: slow, reads the clock
            18..=20 => {
                // The M extension (all of it) and FENCE.
                let f3 = (v >> 40) as u32 % 8;
                match (v >> 44) % 3 {
                    0 => push(&mut out, r(0x33, rd, f3, rs1, rs2, 1)),
                    1 => push(&mut out, r(0x3b, rd, 4 + f3 % 4, rs1, rs2, 1)),
                    _ => push(&mut out, 0x0ff0_000f), // fence iorw, iorw
                }
            }
            _ => {
                // Values division and multiplication treat specially: 0, 1, -1, i64::MIN.
                let k = (v >> 40) % 4;
                push(&mut out, addi(rd, 0, [0, 1, -1, 1][k as usize]));
                if k == 3 {
                    push(&mut out, i(0x13, rd, 1, rd, 63));
                }
            }
        }
    }
    out
}

#[test]
fn compiled_blocks_match_the_interpreter_on_random_programs() {
    const HANDLER: u64 = BASE + 0x3000;
    const SRET: u32 = 0x1020_0073;
    const MRET: u32 = 0x3020_0073;
    let mut compiled_runs = 0;
    for case in 0..64u64 {
        let mut seed = 0x5eed_0000 + case;
        let supervisor = case % 2 == 1;
        let mut prog = random_body(&mut seed);
        let back = -(prog.len() as i32) - 4;
        prog.extend_from_slice(&addi(31, 31, -1).to_le_bytes());
        prog.extend_from_slice(&branch(1, 31, 0, back).to_le_bytes());
        assert!(prog.len() < 0x3000);
        // Trap handlers skip the faulting (4-byte) instruction.
        let handler = |epc: u16, ret: u32| {
            [
                i(0x73, 29, 2, 0, i32::from(epc as i16)),
                addi(29, 29, 4),
                csrrw(0, epc, 29),
                ret,
            ]
        };
        let m = handler(addr::MEPC, MRET);
        let s_ = handler(addr::SEPC, SRET);
        let make = || {
            let mut ram = Ram::new(BASE, 4 << 20);
            assert!(ram.load(BASE, &prog));
            let words = |w: &[u32]| w.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>();
            assert!(ram.load(HANDLER, &words(&m)));
            assert!(ram.load(HANDLER + 0x100, &words(&s_)));
            // Random data around the page boundary x30 points at, so loads see every
            // sign and width.
            let mut init = seed;
            let data: Vec<u8> = (0..0x2000).map(|_| splitmix(&mut init) as u8).collect();
            assert!(ram.load(BASE + 0x10_0000 - 0x800, &data));
            let mut h = Hart::new(ram, BASE, 10);
            for reg in 1..26 {
                h.x[reg] = splitmix(&mut init);
            }
            h.x[26] = 0x7000_0000 + (splitmix(&mut init) & 0xffff);
            h.x[27] = MMIO_BASE + 0x100;
            h.x[30] = BASE + 0x10_0ff8;
            h.x[31] = 1 << 40;
            h.mtvec = HANDLER;
            h.mcounteren = 7;
            if supervisor {
                sv39(&mut h, pte::V | pte::R | pte::W | pte::A | pte::D);
                // Identity-map the device window's gigabyte too.
                let root = BASE + 0x20_0000;
                let pte0 = pte::V | pte::R | pte::W | pte::A | pte::D;
                assert!(h.ram.load(root, &pte0.to_le_bytes()));
                h.enter_supervisor(BASE, 0, 0);
                h.satp = (8 << 60) | (root >> 12);
                h.stvec = HANDLER + 0x100;
            }
            h
        };
        let (mut jit, mut interp) = (make(), make());
        interp.icache.jit.enabled = false;
        if case % 4 >= 2 {
            // A code buffer that fills up every few blocks: code of older epochs must
            // never run (chained jumps check the epoch too).
            jit.icache.jit.capacity = 4096;
        }
        let (mut bus_j, mut bus_i) = (LoggingDevice::default(), LoggingDevice::default());
        let mut slices = seed;
        for round in 0..300 {
            let n = 1 + splitmix(&mut slices) % 400;
            let until = jit.cycles() + n;
            let a = jit.run(&mut bus_j, until);
            let b = interp.run(&mut bus_i, until);
            assert_eq!(a, b, "case {case} round {round}: stop");
            let (sa, sb) = (jit.save_state(), interp.save_state());
            assert_eq!(
                (sa.x, sa.pc, sa.cycles, sa.instret, sa.csrs, sa.prv),
                (sb.x, sb.pc, sb.cycles, sb.instret, sb.csrs, sb.prv),
                "case {case} round {round}"
            );
            assert_eq!(bus_j.log, bus_i.log, "case {case} round {round}: devices");
        }
        assert_eq!(jit.ram.bytes(), interp.ram.bytes(), "case {case}: RAM");
        let epoch = jit.icache.jit.epoch;
        compiled_runs += jit
            .icache
            .blocks
            .iter()
            .filter(|b| b.code != 0 && b.code_epoch == epoch)
            .count();
        assert!(
            interp.icache.blocks.iter().all(|b| b.code == 0),
            "the reference never compiles"
        );
    }
    assert!(compiled_runs >= 64, "blocks were compiled: {compiled_runs}");
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
    // An emptied cache entry has pc u64::MAX; stepping past it used to wrap around.
    let mut h = hart_with(&[NOP]);
    for pc in [u64::MAX, u64::MAX - 1, u64::MAX - 2, 0, 1] {
        h.forget_blocks_covering(pc);
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
