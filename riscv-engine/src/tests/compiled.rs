//! Compiled blocks against the interpreter on random programs (with a logging device, so
//! any difference in when or how a device is touched shows).

use super::*;

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

/// A random loop body of (mostly) fast instructions as byte parcels: arithmetic on
/// x1..x25, loads and stores around a page boundary (misaligned and page-crossing ones
/// included) through x30, device accesses through x27, faulting accesses through x26,
/// short forward branches and jumps, RVC arithmetic, and the odd slow instruction
/// (rdcycle) that ends a block, multiply/divide with the values they treat specially,
/// the bit-manipulation extensions, the F and D extensions' loads and stores with the
/// FPU switched on and off, and the A extension.
/// x31 counts the loop; x9 may point at the device or at x30's page.
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
        match v % 25 {
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
            21 => {
                // Zba/Zbb/Zbc/Zbs (the hart implements them): register, unary and
                // immediate forms.
                let (opcode, f3, f7) = [
                    (0x33, 2, 0x10), // sh1add
                    (0x33, 6, 0x10), // sh3add
                    (0x3b, 0, 0x04), // add.uw
                    (0x3b, 4, 0x10), // sh2add.uw
                    (0x33, 7, 0x20), // andn
                    (0x33, 4, 0x20), // xnor
                    (0x33, 6, 0x05), // max
                    (0x33, 5, 0x05), // minu
                    (0x33, 1, 0x30), // rol
                    (0x3b, 5, 0x30), // rorw
                    (0x33, 3, 0x05), // clmulh
                    (0x33, 5, 0x24), // bext
                    (0x33, 1, 0x14), // bset
                ][(v >> 40) as usize % 13];
                match (v >> 44) % 3 {
                    0 => push(&mut out, r(opcode, rd, f3, rs1, rs2, f7)),
                    1 => {
                        // clz ctz cpop sext.b sext.h (OP-IMM), clzw cpopw, orc.b, rev8
                        let (op, f3, imm12) = [
                            (0x13, 1, 0x600),
                            (0x13, 1, 0x601),
                            (0x13, 1, 0x602),
                            (0x13, 1, 0x604),
                            (0x13, 1, 0x605),
                            (0x1b, 1, 0x600),
                            (0x1b, 1, 0x602),
                            (0x13, 5, 0x287),
                            (0x13, 5, 0x6b8),
                        ][(v >> 48) as usize % 9];
                        push(&mut out, i(op, rd, f3, rs1, imm12));
                    }
                    _ => {
                        // slli.uw, rori, roriw, bclri, bexti, binvi, bseti
                        let sh = imm & 63;
                        let (op, f3, hi) = [
                            (0x1b, 1, 0x080),
                            (0x13, 5, 0x600),
                            (0x1b, 5, 0x600),
                            (0x13, 1, 0x480),
                            (0x13, 5, 0x480),
                            (0x13, 1, 0x680),
                            (0x13, 1, 0x280),
                        ][(v >> 48) as usize % 7];
                        let sh = if op == 0x1b && f3 == 5 { sh & 31 } else { sh };
                        push(&mut out, i(op, rd, f3, rs1, hi | sh));
                    }
                }
            }
            22 => {
                // FLW/FLD/FSW/FSD through x30 (around the page boundary), x27 (the device)
                // or x26 (faulting); C.FLD/C.FSD through x9 = x30; or the FPU switched on
                // (twice as often) or off through sstatus.FS (x28 = 0x6000): with it off,
                // each of them traps as illegal, reporting its bytes.
                let freg = (v >> 8) as u32 % 32;
                let f3 = 2 + (v >> 40) as u32 % 2;
                let base = [30, 30, 27, 26][(v >> 41) as usize % 4];
                let off = if base == 27 {
                    ((v >> 48) as i32 & 0x1f) << 3
                } else {
                    imm
                };
                match (v >> 44) % 8 {
                    0 | 1 => push(&mut out, i(0x07, freg, f3, base, off)),
                    2 | 3 => push(&mut out, s(0x27, f3, base, freg, off)),
                    4 | 5 => {
                        push(&mut out, addi(9, 30, 0));
                        let (imm53, imm76) = ((v >> 52) as u16 & 7, (v >> 55) as u16 & 3);
                        let reg = (v >> 57) as u16 & 7;
                        let f3 = if (v >> 44) % 8 == 4 { 0x2000 } else { 0xa000 };
                        let c = f3 | (imm53 << 10) | (1 << 7) | (imm76 << 5) | (reg << 2);
                        out.extend_from_slice(&c.to_le_bytes());
                    }
                    k => {
                        push(&mut out, 0x6000 | (28 << 7) | 0x37); // lui x28, 6
                        let f3 = if k == 6 || (v >> 60) & 1 == 0 { 2 } else { 3 };
                        push(&mut out, i(0x73, 0, f3, 28, 0x100)); // csrrs/csrrc sstatus
                    }
                }
            }
            23 => {
                // The A extension: AMO*, LR and SC (.W, .D), now and then with a bad
                // funct5 or an LR with rs2 set (illegal), through x30 (aligned), x27 (the
                // device: an access fault) or x26 (faulting).
                let f3 = 2 + (v >> 40) as u32 % 2;
                let f5 = [
                    0x00, 0x01, 0x04, 0x0c, 0x08, 0x10, 0x14, 0x18, 0x1c, 0x02, 0x03, 0x03, 0x1e,
                ][(v >> 42) as usize % 13];
                let aqrl = (v >> 48) as u32 & 3;
                let base = [30, 30, 30, 27, 26][(v >> 50) as usize % 5];
                let rs2 = if f5 == 0x02 && !(v >> 53).is_multiple_of(8) {
                    0
                } else {
                    rs2
                };
                push(
                    &mut out,
                    (f5 << 27)
                        | (aqrl << 25)
                        | (rs2 << 20)
                        | (base << 15)
                        | (f3 << 12)
                        | (rd << 7)
                        | 0x2f,
                );
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
    let (mut compiled_runs, mut covered) = (0, 0);
    for case in 0..64u64 {
        let mut seed = 0x5eed_0000 + case;
        // Machine, supervisor (Sv39), or user mode with code coverage counted (user blocks
        // then run one at a time: the same edges as the interpreter's).
        let (supervisor, user) = (case % 3 == 1, case % 3 == 2);
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
            h.set_isa("rv64gc_zba_zbb_zbc_zbs".parse().expect("implemented"));
            for reg in 1..26 {
                h.x[reg] = splitmix(&mut init);
            }
            h.x[26] = 0x7000_0000 + (splitmix(&mut init) & 0xffff);
            h.x[27] = MMIO_BASE + 0x100;
            h.x[30] = BASE + 0x10_0ff8;
            h.x[31] = 1 << 40;
            h.mtvec = HANDLER;
            h.mcounteren = 7;
            h.mstatus |= 1 << crate::csr::mstatus::FS_SHIFT; // FPU on (Initial)
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
            if user {
                // Bare translation; traps go to the M-mode handler, whose mret returns to
                // user mode.
                h.prv = crate::Priv::User;
                h.scounteren = 7;
                h.set_coverage(Some(crate::Coverage::default()));
            }
            h
        };
        let (mut jit, mut interp) = (make(), make());
        interp.icache.jit.enabled = false;
        if case % 4 >= 2 {
            // A code buffer that fills up every few blocks: code of older epochs must
            // never run (chained jumps rely on every block's code being of the current
            // epoch, see `ICache::drop_stale_code`; checked after each round).
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
                (sa.x, sa.f, sa.pc, sa.cycles, sa.instret, sa.csrs, sa.prv),
                (sb.x, sb.f, sb.pc, sb.cycles, sb.instret, sb.csrs, sb.prv),
                "case {case} round {round}"
            );
            assert_eq!(bus_j.log, bus_i.log, "case {case} round {round}: devices");
            let epoch = jit.icache.jit.epoch;
            assert!(
                jit.icache
                    .blocks
                    .iter()
                    .all(|b| b.code == 0 || b.code_epoch == epoch),
                "case {case} round {round}: a block kept code of an older epoch"
            );
            if user {
                let (fj, fi) = (jit.take_coverage(), interp.take_coverage());
                assert_eq!(fj, fi, "case {case} round {round}: coverage");
                covered += fj.len();
            }
        }
        assert_eq!(jit.ram.bytes(), interp.ram.bytes(), "case {case}: RAM");
        // The caches a snapshot keeps do not depend on compiling either: a snapshot is a
        // function of the run (see `state::code_cache`).
        assert_eq!(
            jit.save_state().icache,
            interp.save_state().icache,
            "case {case}: decoded instructions"
        );
        assert_eq!(
            jit.save_code_cache(),
            interp.save_code_cache(),
            "case {case}: code caches"
        );
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
    assert!(covered >= 100, "user-mode coverage was counted: {covered}");
}

#[test]
fn a_loop_of_one_block_goes_round_compiled_exactly_as_interpreted() {
    // x10 walks RAM 8 bytes a round, summing into x6: the loop is one block whose taken
    // branch goes back to its own start (see `jit::SelfLoop`). A new page every 512 rounds
    // (the slow load's call-back comes back into the block, so that round's end goes
    // through the chain's checks); ECC upsets injected between runs, as radiation faults
    // are (every load from those pages takes the call-back, and each upset unchecks every
    // cached instruction, so the loop's block is checked again at its next entry). Then a
    // JAL to itself, a loop of one instruction. Deadlines every few hundred instructions
    // end rounds in the middle: the direct jump back must stop where the chain would.
    let prog = [
        ld(5, 10, 0),
        addi(10, 10, 8),
        addi(11, 11, -1),
        r(0x33, 6, 0, 6, 5, 0),
        branch(1, 11, 0, -16),
        jal(0, 0),
    ];
    let data = BASE + 0x10000;
    let make = || {
        let mut h = hart_with(&prog);
        let mut init = 7u64;
        let bytes: Vec<u8> = (0..0x6000).map(|_| splitmix(&mut init) as u8).collect();
        assert!(h.ram.load(data, &bytes));
        h.set_ecc(true);
        h.x[10] = data;
        h.x[11] = 2500;
        h
    };
    let (mut jit, mut interp) = (make(), make());
    interp.icache.jit.enabled = false;
    let mut slices = 0x100_u64;
    let mut upsets = [1u64, 3, 4].into_iter();
    while jit.cycles() < 40_000 {
        if jit.cycles() > 3_000 * (4 - upsets.len() as u64) {
            if let Some(page) = upsets.next() {
                for h in [&mut jit, &mut interp] {
                    assert!(h.ecc_upset(data + page * 0x1000 + 0x208, 3, 1).is_some());
                }
            }
        }
        let until = jit.cycles() + 1 + splitmix(&mut slices) % 700;
        let (a, b) = (
            jit.run(&mut NoDevices, until),
            interp.run(&mut NoDevices, until),
        );
        assert_eq!(a, b, "stop at {}", jit.cycles());
        let (sa, sb) = (jit.save_state(), interp.save_state());
        assert_eq!(
            (sa.x, sa.pc, sa.cycles, sa.instret),
            (sb.x, sb.pc, sb.cycles, sb.instret),
            "at {}",
            jit.cycles()
        );
        assert_eq!(
            jit.save_code_cache(),
            interp.save_code_cache(),
            "at {}",
            jit.cycles()
        );
    }
    assert_eq!(
        (jit.x[11], upsets.len()),
        (0, 0),
        "the loop ended, every upset injected"
    );
    assert_eq!(jit.ecc_errors(), interp.ecc_errors());
    let b = &jit.icache.blocks[crate::icache::Block::slot(BASE)];
    assert!(b.pc == BASE && b.code != 0, "the loop ran compiled");
}

#[test]
fn misaligned_accesses_in_compiled_code_fault_where_they_cross_into_an_unmapped_page() {
    // Supervisor mode, Sv39: one data page at 0x4000_0000, the next page unmapped. A loop
    // loads an aligned word (filling the page's shortcuts) and stores, then loads, 8 bytes
    // at a misaligned address that moves 0x40 a round: from 0x3d it reaches 0xffd after 63
    // rounds, where the 8 bytes cross into the unmapped page and the store must fault there
    // (stval the first byte past the page) without writing a byte, as when interpreted.
    // The rounds before run compiled (the misaligned accesses through the call-backs, which
    // the inline lookup sends them to), with the same values and counters as the
    // interpreter's.
    let prog = [
        ld(2, 1, 0),
        sd(7, 5, 0),
        ld(3, 5, 0),
        r(0x33, 4, 0, 4, 3, 0), // add x4, x4, x3
        addi(7, 7, 0x77),
        addi(5, 5, 0x40),
        addi(6, 6, -1),
        branch(1, 6, 0, -28),
        jal(0, 0),
    ];
    let make = || {
        let mut h = hart_with(&prog);
        h.enter_supervisor(BASE, 0, 0);
        h.stvec = BASE + 0x100;
        assert!(h.ram.load(BASE + 0x100, &jal(0, 0).to_le_bytes()));
        sv39(&mut h, pte::V | pte::R | pte::W | pte::A | pte::D);
        let mut init = 3u64;
        let bytes: Vec<u8> = (0..0x2000).map(|_| splitmix(&mut init) as u8).collect();
        assert!(h.ram.load(BASE + 0x10000, &bytes));
        h.x[1] = 0x4000_0000;
        h.x[5] = 0x4000_003d;
        h.x[6] = 100;
        h.x[7] = 0x0102_0304_0506_0708;
        h
    };
    let (mut jit, mut interp) = (make(), make());
    interp.icache.jit.enabled = false;
    for h in [&mut jit, &mut interp] {
        run(h, 2_000);
    }
    let (a, b) = (jit.save_state(), interp.save_state());
    assert_eq!(
        (a.x, a.pc, a.cycles, a.instret, a.csrs),
        (b.x, b.pc, b.cycles, b.instret, b.csrs)
    );
    assert_eq!(jit.ram.bytes(), interp.ram.bytes());
    assert_eq!(jit.scause, cause::STORE_PAGE_FAULT);
    assert_eq!((jit.sepc, jit.stval), (BASE + 4, 0x4000_1000));
    assert_eq!(jit.x[5], 0x4000_0ffd, "the 64th round's store faulted");
    assert!(
        jit.icache
            .blocks
            .iter()
            .any(|b| b.code != 0 && b.pc == BASE),
        "the loop ran compiled"
    );
}

#[test]
fn csr_accesses_inside_blocks_take_interrupts_where_single_steps_do() {
    // A supervisor loop that disables interrupts, writes and reads sscratch and the time
    // counter, and enables them again, as Linux does around every lock: its CSR accesses
    // run inside blocks (see `Kind::Csr`). A software interrupt is raised at random
    // points; it must be taken right after the access that enables it, and every access
    // must see the counters as single steps do. Three harts run the same slices: compiled
    // blocks, interpreted blocks, and no blocks at all (a breakpoint nothing reaches keeps
    // the hart stepping one instruction at a time).
    let csr_i =
        |f3: u32, rd: u32, csr: u16, uimm: u32| i(0x73, rd, f3, uimm, i32::from(csr as i16));
    const SRET: u32 = 0x1020_0073;
    let handler = BASE + 0x800;
    let prog = [
        csr_i(6, 0, addr::SIE, 2),     // 0: csrrsi sie, SSIE (ends its block)
        csr_i(7, 0, addr::SSTATUS, 2), // 4: loop: csrrci sstatus, SIE
        addi(3, 3, 1),
        csrrw(0, addr::SSCRATCH, 3),
        i(0x73, 5, 2, 0, i32::from(addr::SSCRATCH as i16)), // csrr x5, sscratch
        csr_i(6, 0, addr::SSTATUS, 2), // csrrsi sstatus, SIE: a pending SSI is taken here
        addi(4, 4, 1),
        i(0x73, 6, 2, 0, i32::from(addr::TIME as i16)), // csrr x6, time
        r(0x33, 12, 0, 12, 6, 0),                       // x12 += x6
        addi(11, 11, -1),
        branch(1, 11, 0, -36), // bne x11, x0, loop
        jal(0, 0),
    ];
    let isr = [
        addi(7, 7, 1),
        csr_i(7, 0, addr::SIP, 2),                      // csrrci sip, SSIP
        i(0x73, 8, 2, 0, i32::from(addr::SEPC as i16)), // csrr x8, sepc
        r(0x33, 9, 0, 9, 8, 0),                         // x9 += x8
        SRET,
    ];
    let make = || {
        let mut h = hart_with(&prog);
        let words: Vec<u8> = isr.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert!(h.ram.load(handler, &words));
        h.enter_supervisor(BASE, 0, 0);
        h.stvec = handler;
        h.mcounteren = 7;
        h.x[11] = 4000;
        h
    };
    let (mut jit, mut blocks, mut stepped) = (make(), make(), make());
    blocks.icache.jit.enabled = false;
    assert!(stepped.set_breakpoints(&[BASE + 0x3f_fff0]));
    let mut draws = 0x1234_u64;
    while jit.x[11] != 0 {
        let until = jit.cycles() + 1 + splitmix(&mut draws) % 300;
        let raise = splitmix(&mut draws).is_multiple_of(3);
        let mut states = Vec::new();
        for h in [&mut jit, &mut blocks, &mut stepped] {
            if raise {
                h.set_ssip(true);
            }
            assert_eq!(h.run(&mut NoDevices, until), Stop::Budget);
            let s = h.save_state();
            states.push((s.x, s.pc, s.cycles, s.instret));
        }
        assert_eq!(states[0], states[1], "compiled and interpreted blocks");
        assert_eq!(states[0], states[2], "blocks and single steps");
    }
    assert!(jit.x[7] > 50, "{} interrupts taken", jit.x[7]);
    let b = &jit.icache.blocks[crate::icache::Block::slot(BASE + 4)];
    assert!(
        b.pc == BASE + 4 && b.ops.len() == 10 && b.code != 0,
        "the loop is one compiled block, its CSR accesses in it ({} ops)",
        b.ops.len()
    );
}
