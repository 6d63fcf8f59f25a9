//! Hostile SBI calls: the fuzzer's bytes are a guest (RAM, possibly with Sv39 page tables
//! and satp set) and a sequence of SBI calls with any extension, function and arguments
//! (debug-console writes and reads pointing anywhere, timers at any time, HSM, RFENCE,
//! SRST, wio's own extension), served by wio's SBI one after another.
//!
//! Invariants: no panic; every call returns an SBI error code or success in a0 (never
//! leaves the hart half-changed: registers other than a0/a1 and pc are untouched).
#![no_main]

use libfuzzer_sys::fuzz_target;
use wio_machines::arch::riscv64::sbi;
use wio_riscv::{Hart, Priv, Ram};

const BASE: u64 = 0x8000_0000;
const RAM: usize = 0x4000;

fuzz_target!(|data: &[u8]| {
    if data.len() < 16 {
        return;
    }
    let split = (data.len() / 2).min(RAM);
    let mut ram = Ram::new(BASE, RAM);
    ram.load(BASE, &data[..split]);
    let mut hart = Hart::new(ram, BASE, 1);
    hart.prv = if data[0] & 1 == 0 {
        Priv::Supervisor
    } else {
        Priv::Machine
    };
    let mut calls = data[split..].chunks_exact(8 * 5);
    for (n, call) in calls.by_ref().enumerate() {
        if n >= 64 {
            break;
        }
        let word =
            |i: usize| u64::from_le_bytes(call[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
        // Extension and function ids near the real ones most of the time.
        let eid = match word(0) % 4 {
            0 => word(0) >> 2,
            _ => [
                0x10, 0x54494D45, 0x735049, 0x52464E43, 0x48534D, 0x53525354, 0x4442434E,
                0x0A57494F, 0, 1, 2, 8,
            ][((word(0) >> 2) % 12) as usize],
        };
        hart.x[17] = eid;
        hart.x[16] = word(1) % 8;
        hart.x[10] = word(2);
        hart.x[11] = word(3);
        hart.x[12] = word(4);
        let others: Vec<u64> = (0..32)
            .filter(|r| ![10, 11].contains(r))
            .map(|r| hart.x[r])
            .collect();
        let _ = sbi::handle(&mut hart);
        let after: Vec<u64> = (0..32)
            .filter(|r| ![10, 11].contains(r))
            .map(|r| hart.x[r])
            .collect();
        assert_eq!(
            others, after,
            "an SBI call changed registers other than a0/a1"
        );
    }
});
