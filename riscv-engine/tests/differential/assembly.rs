//! Turning a batch of programs into assembly text (init and dump blocks, the per-program
//! table the runner reads) and the linker script.

use super::*;
use std::fmt::Write as _;

/// One program of a batch: its label prefix, the program, and how many items to keep.
pub(crate) struct Job<'a> {
    pub(crate) tag: String,
    pub(crate) prog: &'a Program,
    pub(crate) keep: usize,
}

pub(crate) fn emit(asm: &mut String, data: &mut String, job: &Job) {
    let t = &job.tag;
    let p = job.prog;
    let k = job.keep;
    let label = |j: usize| format!("{t}_L{j}");
    let _ = writeln!(asm, "{t}_entry:");
    let _ = writeln!(asm, "  lla x5, wio_cur");
    let _ = writeln!(asm, "  lla x6, {t}_dump");
    let _ = writeln!(asm, "  sd x6, 0(x5)");
    let _ = writeln!(asm, "  lla x6, {t}_ecall_end");
    let _ = writeln!(asm, "  sd x6, 8(x5)");
    let _ = writeln!(asm, "  lla x2, {t}_buf");
    let _ = writeln!(asm, "  ld x5, {}(x2)", init_off(SLOT_FCSR));
    let _ = writeln!(asm, "  fscsr x5");
    for i in 0..32 {
        let _ = writeln!(asm, "  fld f{i}, {}(x2)", init_off(32 + i));
    }
    let _ = writeln!(asm, "  addi x9, x2, 256");
    for i in (1..32).filter(|&i| i != 2 && i != 9) {
        let _ = writeln!(asm, "  ld x{i}, {}(x2)", init_off(i));
    }
    // Forward targets: item j's label goes before item j + 1 + skip, or at the end.
    let target = |j: usize| p.items[j].skip.map(|s| j + 1 + s);
    for j in 0..k {
        for i in 0..j {
            if target(i) == Some(j) {
                let _ = writeln!(asm, "{}:", label(i));
            }
        }
        if j + 1 == k {
            let _ = writeln!(asm, "{t}_last:");
        }
        let _ = writeln!(asm, "  # item {j}: {}", p.items[j].name);
        let fill = |line: &str| {
            line.replace("{L}", &label(j))
                .replace("{T}", &format!("{t}_T{j}"))
                .replace("{S}", &format!("{t}_smc"))
        };
        for line in &p.items[j].lines {
            let _ = writeln!(asm, "  {}", fill(line));
        }
        for line in &p.items[j].data {
            let _ = writeln!(data, "  {}", fill(line));
        }
    }
    for i in 0..k {
        if target(i).is_some_and(|tj| tj >= k) {
            let _ = writeln!(asm, "{}:", label(i));
        }
    }
    if k == 0 {
        let _ = writeln!(asm, "{t}_last:");
    }
    let _ = writeln!(asm, "{t}_end:");
    for i in 0..32 {
        let _ = writeln!(asm, "  sd x{i}, {}(x2)", dump_off(i));
    }
    for i in 0..32 {
        let _ = writeln!(asm, "  fsd f{i}, {}(x2)", dump_off(32 + i));
    }
    let _ = writeln!(asm, "  frcsr x5");
    let _ = writeln!(asm, "  sd x5, {}(x2)", dump_off(SLOT_FCSR));
    if p.vector {
        // The spare slot: vl << 8 | vcsr, vtype's low byte << 32 and vill << 40; then
        // v0-v31 over the buffer (VLEN 128: 512 bytes).
        for line in [
            "csrr x5, vl",
            "slli x5, x5, 8",
            "csrr x6, vcsr",
            "or x5, x5, x6",
            "csrr x6, vtype",
            "andi x7, x6, 0xff",
            "slli x7, x7, 32",
            "or x5, x5, x7",
            "srli x6, x6, 63",
            "slli x6, x6, 40",
            "or x5, x5, x6",
        ] {
            let _ = writeln!(asm, "  {line}");
        }
        let _ = writeln!(asm, "  sd x5, {}(x2)", dump_off(SLOTS - 1));
        let _ = writeln!(asm, "  vs8r.v v0, (x2)");
        for k in 1..4 {
            let _ = writeln!(asm, "  addi x5, x2, {}", 128 * k);
            let _ = writeln!(asm, "  vs8r.v v{}, (x5)", 8 * k);
        }
    }
    let _ = writeln!(asm, "  li x17, 64");
    let _ = writeln!(asm, "  li x10, 1");
    let _ = writeln!(asm, "  addi x11, x2, {}", dump_off(0));
    let _ = writeln!(asm, "  li x12, {OUT_BYTES}");
    let _ = writeln!(asm, "  ecall");
    let _ = writeln!(asm, "{t}_ecall_end:");

    // Put a page boundary at x9 (buffer + 256), so accesses near x9 cross it.
    let _ = writeln!(data, "  .balign 4096");
    let _ = writeln!(data, "  .zero {}", 4096 - 2 * STATE_BYTES - 256);
    let _ = writeln!(data, "{t}_init:");
    for v in p.x.iter().chain(p.f.iter()) {
        let _ = writeln!(data, "  .dword {v:#x}");
    }
    let _ = writeln!(data, "  .dword {:#x}", p.fcsr);
    let _ = writeln!(data, "  .zero {}", STATE_BYTES - 65 * 8);
    let _ = writeln!(data, "{t}_dump:");
    let _ = writeln!(data, "  .zero {STATE_BYTES}");
    let _ = writeln!(data, "{t}_buf:");
    for v in &p.buf {
        let _ = writeln!(data, "  .dword {v:#x}");
    }
    let _ = writeln!(
        data,
        "  .pushsection .smc, \"awx\", @progbits\n  .balign 4\n{t}_smc:\n  .4byte 0x00000013, 0x00008067\n  .popsection"
    );
}

pub(crate) fn batch_source(jobs: &[Job]) -> String {
    let mut asm = String::new();
    let mut data = String::new();
    asm.push_str("  .text\n  .balign 8\nwio_table:\n");
    let _ = writeln!(
        asm,
        "  .dword wio_stub, wio_trap_end, wio_save, {}",
        jobs.len()
    );
    for j in jobs {
        let t = &j.tag;
        let _ = writeln!(
            asm,
            "  .dword {t}_entry, {t}_buf, {t}_last, {t}_end, {t}_ecall_end"
        );
    }
    // QEMU only: an alternate signal stack and a handler for the signals a
    // trap becomes, which writes the trapped state as the program's output
    // and goes on with the next program.
    asm.push_str(
        "  .globl _start\n_start:\n\
         \x20 lla a0, wio_sigstack_t\n  li a1, 0\n  li a7, 132\n  ecall\n",
    );
    for sig in [4, 5, 7, 11] {
        let _ = writeln!(
            asm,
            "  li a0, {sig}\n  lla a1, wio_sigaction\n  li a2, 0\n  li a3, 8\n  li a7, 134\n  ecall"
        );
    }
    for j in jobs {
        emit(&mut asm, &mut data, j);
    }
    asm.push_str("  li x17, 93\n  li x10, 0\n  ecall\n");
    // a0 = signal, a1 = siginfo (si_addr at 16), a2 = ucontext (mcontext at 176:
    // pc, x1..x31, f0..f31, fcsr).
    asm.push_str("wio_signal:\n  lla t0, wio_cur\n  ld t1, 0(t0)\n");
    let _ = writeln!(
        asm,
        "  li t2, {TRAP_MAGIC:#x}\n  or t2, t2, a0\n  sd t2, 0(t1)"
    );
    asm.push_str("  addi t3, a2, 176\n");
    let _ = writeln!(asm, "  ld t2, 0(t3)\n  sd t2, {}(t1)", 8 * SLOT_TRAP_PC);
    let _ = writeln!(asm, "  ld t2, 16(a1)\n  sd t2, {}(t1)", 8 * SLOT_TRAP_ADDR);
    for i in 1..64 {
        let _ = writeln!(asm, "  ld t2, {}(t3)\n  sd t2, {}(t1)", 8 * i, 8 * i);
    }
    let _ = writeln!(asm, "  lwu t2, 512(t3)\n  sd t2, {}(t1)", 8 * SLOT_FCSR);
    let _ = writeln!(
        asm,
        "  li a0, 1\n  mv a1, t1\n  li a2, {OUT_BYTES}\n  li a7, 64\n  ecall\n  ld t4, 8(t0)\n  jr t4"
    );
    // wio only: the trap vector saves x10-x12, cause, epc and tval, and stops.
    asm.push_str(
        "wio_stub:\n  lla x6, wio_trap\n  csrw stvec, x6\n  lla x6, wio_save\n  csrw sscratch, x6\n  jr x5\n\
         \x20 .balign 4\nwio_trap:\n  csrrw x10, sscratch, x10\n  sd x11, 8(x10)\n  sd x12, 16(x10)\n\
         \x20 csrr x11, sscratch\n  sd x11, 0(x10)\n  csrr x11, scause\n  sd x11, 24(x10)\n\
         \x20 csrr x11, sepc\n  sd x11, 32(x10)\n  csrr x11, stval\n  sd x11, 40(x10)\n  ecall\nwio_trap_end:\n",
    );
    asm.push_str("  .data\n  .balign 16\n");
    // stack_t, then struct sigaction: handler, SA_SIGINFO|SA_ONSTACK|SA_NODEFER, empty mask.
    asm.push_str(
        "wio_sigstack_t:\n  .dword wio_sigstack, 0, 65536\n\
         wio_sigaction:\n  .dword wio_signal, 0x48000004, 0\n\
         wio_cur:\n  .dword 0, 0\n\
         wio_save:\n  .zero 48\n\
         \x20 .balign 16\nwio_sigstack:\n  .zero 65536\n",
    );
    asm.push_str(&data);
    asm
}

pub(crate) const LINKER_SCRIPT: &str = "ENTRY(_start)
SECTIONS {
  . = 0x80000000;
  .text : { *(.text) }
  . = ALIGN(0x1000);
  .data : { *(.data) }
  . = ALIGN(0x1000);
  .smc : { *(.smc) }
}
";
