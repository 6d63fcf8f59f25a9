//! Unit tests of the vector unit on hand-written programs (the differential test against
//! QEMU covers the instructions at random).

use super::VS;
use crate::csr::cause;
use crate::hart::Hart;
use crate::isa::Isa;
use crate::trap::Stop;
use crate::{NoDevices, Ram};

const BASE: u64 = 0x8000_0000;
const DATA: u64 = BASE + 0x1000;

fn vsetvli(rd: u32, rs1: u32, vtypei: u32) -> u32 {
    (vtypei << 20) | (rs1 << 15) | (7 << 12) | (rd << 7) | 0x57
}
fn vsetivli(rd: u32, uimm: u32, vtypei: u32) -> u32 {
    (3 << 30) | (vtypei << 20) | (uimm << 15) | (7 << 12) | (rd << 7) | 0x57
}
/// vtype for SEW `sew_bits` and vlmul field `lmul`.
fn vt(sew_bits: u32, lmul: u32) -> u32 {
    ((sew_bits / 8).trailing_zeros() << 3) | lmul
}
/// A unit-stride (`lumop` 0) or fault-only-first (`lumop` 0x10) load of EEW `width` code.
fn vle(vd: u32, rs1: u32, width: u32, vm: u32, lumop: u32) -> u32 {
    (vm << 25) | (lumop << 20) | (rs1 << 15) | (width << 12) | (vd << 7) | 0x07
}
fn vse(vs3: u32, rs1: u32, width: u32) -> u32 {
    (1 << 25) | (rs1 << 15) | (width << 12) | (vs3 << 7) | 0x27
}
fn opivv(f6: u32, vd: u32, vs2: u32, vs1: u32, vm: u32) -> u32 {
    (f6 << 26) | (vm << 25) | (vs2 << 20) | (vs1 << 15) | (vd << 7) | 0x57
}
fn opmvv(f6: u32, vd: u32, vs2: u32, vs1: u32, vm: u32) -> u32 {
    opivv(f6, vd, vs2, vs1, vm) | (2 << 12)
}

/// A hart with a VLEN-128 vector unit, mstatus.VS on, running `program` in M-mode.
fn hart(program: &[u32]) -> Hart {
    let mut ram = Ram::new(BASE, 1 << 20);
    let bytes: Vec<u8> = program.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert!(ram.load(BASE, &bytes));
    let mut h = Hart::new(ram, BASE, 10);
    h.set_isa(Isa::RV64GC.with_vector(128).unwrap());
    h.mstatus |= VS;
    h
}

fn run(h: &mut Hart, n: u64) -> Stop {
    let until = h.cycles() + n;
    h.run(&mut NoDevices, until)
}

#[test]
fn vsetvl_picks_vl_from_avl_and_vlmax_and_refuses_bad_vtypes() {
    let mut h = hart(&[
        vsetvli(5, 1, vt(32, 1)),            // e32 m2: VLMAX = 128 * 2 / 32 = 8
        vsetvli(6, 2, vt(32, 1)),            // AVL 100 -> 8
        vsetvli(7, 0, vt(8, 5)),             // rs1 = x0, rd != x0: VLMAX (e8 mf8: 2)
        vsetvli(8, 1, vt(64, 5)),            // e64 mf8: SEW > LMUL * ELEN: vill
        vsetivli(9, 3, vt(16, 0)),           // AVL 3
        vsetvli(10, 1, (1 << 8) | vt(8, 0)), // a reserved vtype bit: vill
    ]);
    h.x[1] = 5;
    h.x[2] = 100;
    run(&mut h, 6);
    assert_eq!(&h.x[5..=10], &[5, 8, 2, 0, 3, 0]);
    assert_ne!(h.vector.as_ref().unwrap().vtype & super::VILL, 0);
}

#[test]
fn vector_instructions_are_illegal_with_vs_off_or_without_the_unit() {
    let prog = [vsetvli(5, 1, vt(32, 0))];
    let mut h = hart(&prog);
    h.mstatus &= !VS;
    h.mtvec = BASE + 0x100;
    run(&mut h, 1);
    assert_eq!(h.mcause, cause::ILLEGAL_INSN);
    let mut plain = hart(&prog);
    plain.set_isa(Isa::RV64GC);
    plain.mtvec = BASE + 0x100;
    run(&mut plain, 1);
    assert_eq!(plain.mcause, cause::ILLEGAL_INSN);
}

#[test]
fn loads_adds_and_stores_respect_the_mask_and_vl() {
    // e32 m1, vl 3: v1 = DATA[0..4], v2 = DATA[4..8]; v0 = mask 0b101;
    // v3 = v1 (all ones first via vmv.v.v), then v3 = v1 + v2 masked; stored at DATA + 64.
    let mut h = hart(&[
        vsetivli(0, 4, vt(32, 0)),
        vle(1, 10, 6, 1, 0),
        vle(2, 11, 6, 1, 0),
        vle(0, 12, 0, 1, 0),         // v0 from the mask byte (e8 elements)
        opivv(0b010111, 3, 0, 1, 1), // vmv.v.v v3, v1
        vsetivli(0, 3, vt(32, 0)),
        opivv(0, 3, 1, 2, 0), // vadd.vv v3, v1, v2, v0.t
        vsetivli(0, 4, vt(32, 0)),
        vse(3, 13, 6),
    ]);
    let words: Vec<u8> = (1u32..=8).flat_map(|w| (w * 10).to_le_bytes()).collect();
    assert!(h.ram.load(DATA, &words));
    assert!(h.ram.load(DATA + 32, &[0b101]));
    h.x[10] = DATA;
    h.x[11] = DATA + 16;
    h.x[12] = DATA + 32;
    h.x[13] = DATA + 64;
    run(&mut h, 9);
    let out = h.ram.slice(DATA + 64, 16).unwrap();
    let got: Vec<u32> = out
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    // Element 0: 10 + 50; element 1 inactive (stays 20); element 2: 30 + 70; element 3 is
    // past vl 3 (stays 40).
    assert_eq!(got, vec![60, 20, 100, 40]);
}

#[test]
fn a_faulting_load_sets_vstart_and_fault_only_first_shortens_vl() {
    // e64 m1: 2 elements; the second lies past RAM's end.
    let end = BASE + (1 << 20);
    let prog = [vsetivli(0, 2, vt(64, 0)), vle(1, 10, 7, 1, 0)];
    let mut h = hart(&prog);
    h.mtvec = BASE + 0x100;
    h.x[10] = end - 8;
    run(&mut h, 2);
    assert_eq!(h.mcause, cause::LOAD_ACCESS);
    assert_eq!(h.vector.as_ref().unwrap().vstart, 1);
    let mut ff = hart(&[vsetivli(0, 2, vt(64, 0)), vle(1, 10, 7, 1, 0x10)]);
    ff.mtvec = BASE + 0x100;
    ff.x[10] = end - 8;
    run(&mut ff, 2);
    let v = ff.vector.as_ref().unwrap();
    assert_eq!(
        (v.vl, v.vstart, ff.pc),
        (1, 0, BASE + 8),
        "no trap, vl cut to 1"
    );
}

#[test]
fn reductions_and_mask_counts() {
    // e16 m1, vl 8 (VLEN 128): v1 = 0..8 (vid.v), vredsum into v2 from v3[0] = 0, vcpop of
    // v0 = 0b1011_0110 into x5, vfirst into x6.
    let mut h = hart(&[
        vsetivli(0, 8, vt(16, 0)),
        opmvv(0b010100, 1, 0, 0x11, 1),          // vid.v v1
        opivv(0b010111, 3, 0, 0, 1) | (3 << 12), // vmv.v.i v3, 0
        opmvv(0, 2, 1, 3, 1),                    // vredsum.vs v2, v1, v3
        opmvv(0b010000, 5, 4, 0x10, 1),          // vcpop.m x5, v4
        opmvv(0b010000, 6, 4, 0x11, 1),          // vfirst.m x6, v4
        opmvv(0b010000, 7, 2, 0, 1),             // vmv.x.s x7, v2
    ]);
    h.vector.as_mut().unwrap().regs[4 * 16] = 0b1011_0110;
    run(&mut h, 7);
    assert_eq!((h.x[5], h.x[6], h.x[7]), (5, 1, 28));
}

fn opfvv(f6: u32, vd: u32, vs2: u32, vs1: u32) -> u32 {
    opivv(f6, vd, vs2, vs1, 1) | (1 << 12)
}

/// The round-towards-zero and round-to-odd conversions (the differential test cannot
/// compare them: QEMU 7.2 aborts on them).
#[test]
fn rtz_and_round_to_odd_conversions() {
    let mut h = hart(&[
        vsetivli(0, 2, vt(32, 0)),
        opfvv(0b010010, 1, 2, 0b00111), // vfcvt.rtz.x.f.v v1, v2
        opfvv(0b010010, 3, 4, 0b10101), // vfncvt.rod.f.f.w v3, v4 (v4-v5: FP64)
        opfvv(0b010010, 6, 2, 0b01111), // vfwcvt.rtz.x.f.v v6 (v6-v7: i64), v2
        opfvv(0b010010, 8, 4, 0b10111), // vfncvt.rtz.x.f.w v8 (i32), v4
    ]);
    h.mstatus |= crate::csr::mstatus::FS;
    let v = h.vector.as_mut().unwrap();
    v.set(2, 4, 0, u64::from((-2.7f32).to_bits()));
    v.set(2, 4, 1, u64::from(3.9f32.to_bits()));
    v.set(4, 8, 0, (1.0f64 + 2f64.powi(-30)).to_bits());
    v.set(4, 8, 1, (-0.5f64).to_bits());
    run(&mut h, 5);
    let v = h.vector.as_ref().unwrap();
    assert_eq!(
        (v.get(1, 4, 0) as u32 as i32, v.get(1, 4, 1) as u32 as i32),
        (-2, 3)
    );
    // Rounded to odd: 1 + 2^-30 is between 1.0 and its successor: the odd one, 0x3f800001.
    assert_eq!(
        (v.get(3, 4, 0), v.get(3, 4, 1)),
        (0x3f80_0001, u64::from((-0.5f32).to_bits()))
    );
    assert_eq!((v.get(6, 8, 0) as i64, v.get(6, 8, 1) as i64), (-2, 3));
    assert_eq!((v.get(8, 4, 0), v.get(8, 4, 1)), (1, 0));
    assert_eq!(h.fp.fflags & 1, 1, "inexact");
}

#[test]
fn an_upset_flips_a_lane_of_a_vector_register_and_wraps_past_vlen() {
    let mut h = hart(&[]);
    let vs = h.mstatus & VS;
    // VLEN 128: two 64-bit lanes; lane 5 wraps onto lane 1.
    assert_eq!(h.flip_vreg_bits(3, 5, 1 << 63), Some((1, 0, 1 << 63)));
    assert_eq!(h.vector.as_ref().unwrap().get(3, 8, 1), 1 << 63);
    assert_eq!(h.mstatus & VS, vs, "an upset is no software write");
    let mut plain = hart(&[]);
    plain.set_isa(Isa::RV64GC);
    assert_eq!(plain.flip_vreg_bits(3, 0, 1), None);
}
