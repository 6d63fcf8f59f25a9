//! Instructions, traps, the timer and CSRs: integer and M corner cases, misaligned
//! accesses, delegation of illegal instructions, ECALL/WFI stops, LR/SC and AMOs, exact
//! timer interrupts, and CSR privilege checks.

use super::*;

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
fn a_delayed_timer_interrupt_lands_exactly_its_delay_later_and_survives_a_snapshot() {
    let mut prog = vec![NOP; 0x1000 / 4];
    prog.push(0x0000_006f); // the handler at +0x1000: jal x0, 0 (spin)
    for split in [None, Some(53)] {
        let mut h = hart_with(&prog);
        h.enter_supervisor(BASE, 0, 0);
        h.stvec = BASE + 0x1000;
        h.mstatus |= mstatus::SIE;
        h.set_timer(5, 7); // time 5 = cycle 50, taken 7 cycles later
        assert_eq!(h.timer_deadline(), 57);
        if let Some(at) = split {
            run(&mut h, at);
            assert_eq!(
                h.scause, 0,
                "not yet: time reached timecmp, the delay has not passed"
            );
            let saved = h.save_state();
            let mut restored = hart_with(&prog);
            restored.load_state(&saved).unwrap();
            h = restored;
            run(&mut h, 100 - at);
        } else {
            run(&mut h, 100);
        }
        assert_eq!(h.scause, cause::INTERRUPT | 5);
        assert_eq!(h.sepc, BASE + 57 * 4, "taken before the 58th instruction");
    }
    // Setting the timer again without a delay clears the old delay.
    let mut h = hart_with(&prog);
    h.set_timer(5, 7);
    h.set_timecmp(9);
    assert_eq!(h.timer_deadline(), 90);
    h.set_timecmp(u64::MAX);
    assert_eq!(
        h.timer_deadline(),
        u64::MAX,
        "off stays off whatever the delay"
    );
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

#[test]
fn minstret_and_mcycle_read_what_was_written_without_moving_the_clock() {
    // csrw minstret, x1; csrr x3, minstret; csrw mcycle, x2; csrr x4, mcycle
    let csrr = |rd: u32, csr: u16| i(0x73, rd, 2, 0, i32::from(csr as i16));
    let mut h = hart_with(&[
        csrrw(0, addr::MINSTRET, 1),
        csrr(3, addr::MINSTRET),
        csrrw(0, addr::MCYCLE, 2),
        csrr(4, addr::MCYCLE),
    ]);
    h.x[1] = 1000;
    h.x[2] = u64::MAX;
    run(&mut h, 4);
    // The write's own retirement is suppressed: the next instruction reads 1000.
    assert_eq!(h.x[3], 1000);
    // mcycle counts on from the value written: one cycle later it has wrapped to 0.
    assert_eq!(h.x[4], 0);
    // The clock did not move with them, and the offsets are what a snapshot keeps.
    assert_eq!((h.instret(), h.cycles()), (4, 4));
    let bias = h.counter_bias();
    assert_ne!(bias, [0, 0]);
    let saved = h.save_state();
    let mut copy = hart_with(&[]);
    copy.load_state(&saved).unwrap();
    assert_eq!(copy.counter_bias(), [0, 0], "not part of HartState");
    copy.set_counter_bias(bias);
    assert_eq!(copy.counter_bias(), bias);
}

#[test]
fn csrs_on_mip_never_latches_the_external_line_into_seip() {
    /// A platform whose external interrupt line is high.
    struct LineHigh;
    impl crate::Bus for LineHigh {
        fn mmio_read(&mut self, _: u64, _: u8, _: u64) -> Option<u64> {
            None
        }
        fn mmio_write(&mut self, _: u64, _: u8, _: u64, _: u64) -> bool {
            false
        }
        fn external_interrupt(&self) -> bool {
            true
        }
    }
    // M-mode (firmware) sets STIP with csrrs while the PLIC line is high, then clears it.
    let mut h = hart_with(&[
        i(0x73, 3, 2, 1, i32::from(addr::MIP as i16)), // csrrs x3, mip, x1
        i(0x73, 4, 3, 1, i32::from(addr::MIP as i16)), // csrrc x4, mip, x1
    ]);
    h.enter_firmware(BASE, 0, 0);
    h.x[1] = irq::STI;
    let until = h.cycles() + 2;
    h.run(&mut LineHigh, until);
    assert_eq!(h.x[3] & irq::SEI, irq::SEI, "the line reads as pending");
    assert_eq!(h.x[4] & (irq::SEI | irq::STI), irq::SEI | irq::STI);
    assert_eq!(h.mip_sw & irq::SEI, 0, "SEIP was latched from the line");
    assert_eq!(h.mip_sw & irq::STI, 0);
    assert_eq!(h.mip_with(false) & irq::SEI, 0);
}

/// Every A-extension encoding (.W and .D, any funct5, aq/rl and registers) pre-decodes to
/// `Kind::Amo` and gives back exactly its instruction, which `Hart::atomic` then decodes as
/// the slow path did (illegal ones included, reporting the same bytes); other widths stay
/// slow.
#[test]
fn atomics_pre_decode_to_the_instruction_they_came_from() {
    use crate::predecode::{decode, Kind};
    let isa = crate::isa::Isa::default();
    for f5 in 0..32u32 {
        for aqrl in 0..4u32 {
            for f3 in 0..8u32 {
                for (rd, rs1, rs2) in [(0, 0, 0), (1, 2, 3), (31, 30, 29), (5, 31, 0)] {
                    let i = (f5 << 27)
                        | (aqrl << 25)
                        | (rs2 << 20)
                        | (rs1 << 15)
                        | (f3 << 12)
                        | (rd << 7)
                        | 0x2f;
                    let op = decode(i, isa);
                    if f3 == 2 || f3 == 3 {
                        assert_eq!(op.kind, Kind::Amo, "{i:#x}");
                        assert_eq!(op.amo_insn(), i, "{i:#x}");
                    } else {
                        assert_eq!(op.kind, Kind::Slow, "{i:#x}");
                    }
                }
            }
        }
    }
}

#[test]
fn csr_accesses_pre_decode_to_the_instruction_they_came_from() {
    use crate::predecode::{decode, Kind};
    let isa = crate::isa::Isa::default();
    for f3 in 0..8u32 {
        for csr in [0x000u32, 0x100, 0x140, 0x180, 0x300, 0xc01, 0xfff] {
            for (rd, rs1) in [(0, 0), (1, 2), (31, 30), (5, 31)] {
                let i = (csr << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | 0x73;
                let op = decode(i, isa);
                if f3 == 0 || f3 == 4 {
                    // ECALL, EBREAK, xRET, WFI, SFENCE.VMA; funct3 4 is reserved.
                    assert_eq!(op.kind, Kind::Slow, "{i:#x}");
                } else {
                    assert_eq!(op.kind, Kind::Csr, "{i:#x}");
                    assert_eq!(op.csr_insn(), i, "{i:#x}");
                }
            }
        }
    }
}
