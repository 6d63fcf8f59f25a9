//! Hostile RISC-V code: the fuzzer's bytes are a program (and its data, page tables
//! included: it may turn on Sv39 through satp) loaded at the start of RAM and run on a
//! hart in M-mode for a bounded number of cycles, once with the block compiler and once
//! interpreted.
//!
//! Invariants: no panic whatever the instructions, CSRs and page tables; the compiled run
//! and the interpreted run end in exactly the same architectural state (registers, pc,
//! privilege, FP state, counters, every byte of RAM): compilation is invisible.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wio_riscv::{Hart, NoDevices, Ram};

const BASE: u64 = 0x8000_0000;
const RAM: usize = 0x4000;
const CYCLES: u64 = 4_000;

fn run(program: &[u8], compiling: bool) -> Hart {
    let mut ram = Ram::new(BASE, RAM);
    ram.load(BASE, program);
    let mut hart = Hart::new(ram, BASE, 1);
    hart.set_compiling(compiling);
    // Whatever it stops for (a trap loop, WFI, an SBI call), run on until the budget.
    let mut guard = 0;
    while hart.cycles() < CYCLES && guard < 64 {
        guard += 1;
        let before = hart.cycles();
        let _ = hart.run(&mut NoDevices, CYCLES);
        if hart.cycles() == before {
            // Stopped without progress (WFI with nothing to wake it, an ecall): done.
            break;
        }
    }
    hart
}

fuzz_target!(|data: &[u8]| {
    let program = &data[..data.len().min(RAM)];
    let a = run(program, true);
    let b = run(program, false);
    assert_eq!(a.pc, b.pc, "pc");
    assert_eq!(a.x, b.x, "integer registers");
    assert_eq!(a.prv, b.prv, "privilege");
    assert_eq!(a.cycles(), b.cycles(), "cycles");
    assert_eq!(a.instret(), b.instret(), "instret");
    assert_eq!(
        format!("{:?}", a.fp),
        format!("{:?}", b.fp),
        "floating-point state"
    );
    assert!(a.ram.bytes() == b.ram.bytes(), "RAM");
});
