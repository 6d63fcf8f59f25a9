//! Unit tests of the hart: programs built with a tiny encoder, run on RAM. This module
//! holds the encoder and the helpers the topic modules share.

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

fn jal(rd: u32, offset: i32) -> u32 {
    let o = offset as u32;
    (((o >> 20) & 1) << 31)
        | (((o >> 1) & 0x3ff) << 21)
        | (((o >> 11) & 1) << 20)
        | (((o >> 12) & 0xff) << 12)
        | (rd << 7)
        | 0x6f
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

mod blocks;
mod compiled;
mod isa;
mod snapshots;
mod sv39;
mod warm;
