//! Differential test of the interpreter against QEMU's riscv64 user-mode
//! emulator (`qemu-riscv64`).
//!
//! A seeded generator writes random programs (RV64IMAFDC, U-mode legal,
//! edge-biased operands) as assembly text. Each program loads every x and f
//! register and fcsr from an init block, runs its body, stores every register
//! and fcsr into a dump block and hands the dump plus its 512-byte scratch
//! buffer to `write(1, …)`. The programs of a batch are assembled and linked
//! into one static ELF at 0x8000_0000: QEMU runs the whole ELF (each program's
//! `write` goes to stdout, then `exit`), and wio runs the same image, loaded
//! at the same physical addresses, one program at a time until the program's
//! `ecall`, reading the dump block back from its RAM. A quarter of the programs
//! also trap somewhere (illegal encodings, misaligned AMOs, unmapped addresses,
//! breakpoints): QEMU's signal handler writes the state at the trap instead,
//! and wio's trap vector (installed by the test) stops it there, so the signal,
//! pc, address and state at the trap are compared too. Any difference is then
//! shrunk to the first diverging instruction by re-running every prefix of the
//! program, and re-checked as a one-instruction program started from the state
//! just before it.
//!
//! Environment variables:
//! - `WIO_DIFF_PROGRAMS` (default 1000), `WIO_DIFF_LEN` instructions per program
//!   (default 50), `WIO_DIFF_SEED` (default 0x5eed; decimal or 0x-hex),
//! - `WIO_DIFF_ONLY=i` runs only program `i` of the seed's sequence,
//! - `WIO_DIFF_EXCLUDE=fcvt.w.s,fmin*` leaves these mnemonics out of the
//!   generated programs (`*` at the end matches a prefix), to look past a known bug,
//! - `WIO_DIFF_MAX_SHRINK` (default 20): how many failing programs to shrink,
//! - `WIO_DIFF_KEEP=1` keeps the generated files (their folder is printed).
//!
//! It needs `qemu-riscv64` (Debian `qemu-user`) and `riscv64-linux-gnu-as`/`-ld`
//! (Debian `gcc-riscv64-linux-gnu` or `binutils-riscv64-linux-gnu`); without them
//! it skips through `wio_require::skip` (`SKIPPED: <test>: … (needs qemu-user)` or
//! `(needs cross-gcc)`) and returns, or fails where `WIO_REQUIRE` names that capability.
//!
//! Layout: `values` (PRNG and operand values), `generate*` (the program generator),
//! `assembly` (batch source), `tools` (assembler, linker, QEMU), `running` (wio and QEMU
//! runs), `report` (differences and shrinking); this file holds the shared constants, the
//! driver and the tests.

mod assembly;
mod generate;
mod generate_rvc_fp;
mod generate_special;
mod generate_vector;
mod report;
mod running;
mod tools;
mod values;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use assembly::*;
use generate::*;
use generate_special::*;
use report::*;
use running::*;
use tools::*;
use values::*;

/// Where the linker puts the image (QEMU maps it there, wio's RAM starts there).
const BASE: u64 = 0x8000_0000;
/// Scratch buffer of each program (x2 = its start, x9 = its middle).
const BUF_BYTES: usize = 512;
/// x0..x31, f0..f31, fcsr, then (after a trap) its pc and address and a spare:
/// 68 doublewords. After a trap, slot 0 (x0) holds [`TRAP_MAGIC`] | signal number.
const SLOTS: usize = 68;
const SLOT_FCSR: usize = 64;
const SLOT_TRAP_PC: usize = 65;
const SLOT_TRAP_ADDR: usize = 66;
const TRAP_MAGIC: u64 = 0x5452_4150_0000_0000;
const STATE_BYTES: usize = SLOTS * 8;
/// What each program writes to stdout: its dump block then its scratch buffer.
const OUT_BYTES: usize = STATE_BYTES + BUF_BYTES;
/// Programs per assembled binary.
const BATCH: usize = 50;
/// QEMU's rv64 with the extensions beyond RV64GC that QEMU 7.2 turns on by default turned off.
const QEMU_CPU: &str = "rv64,zba=false,zbb=false,zbc=false,zbs=false,h=false";
/// QEMU's rv64 with the bit-manipulation extensions, for [`differential_bitmanip`].
const QEMU_CPU_BITMANIP: &str = "rv64,zba=true,zbb=true,zbc=true,zbs=true,h=false";
/// QEMU's rv64 with the vector extension at VLEN 128, for [`differential_vector`].
const QEMU_CPU_VECTOR: &str =
    "rv64,v=true,vlen=128,elen=64,vext_spec=v1.0,zba=false,zbb=false,zbc=false,zbs=false,h=false";
/// The same extensions on wio's hart.
const BITMANIP_ISA: &str = "rv64gc_zba_zbb_zbc_zbs";
/// How long one batch may run in QEMU.
const QEMU_TIMEOUT: Duration = Duration::from_secs(120);
/// Cycle budget for one program in wio (its loops run at most 4 times).
const BUDGET: u64 = 2_000_000;

/// Offset from x2 (the scratch buffer) of slot `s` of the init block.
fn init_off(s: usize) -> i64 {
    -(2 * STATE_BYTES as i64) + 8 * s as i64
}
/// Offset from x2 of slot `s` of the dump block.
fn dump_off(s: usize) -> i64 {
    -(STATE_BYTES as i64) + 8 * s as i64
}

// ---------------------------------------------------------------- driver

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => {
            let v = v.trim().replace('_', "");
            let parsed = match v.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16),
                None => v.parse(),
            };
            parsed.unwrap_or_else(|_| panic!("{name}={v} is not a number"))
        }
        Err(_) => default,
    }
}

/// Runs `indices` of the seed's program sequence; returns (failures found, report).
fn campaign(
    ctx: &Ctx,
    seed: u64,
    indices: &[u64],
    len: usize,
    exclude: &[String],
    max_shrink: usize,
    patch: Option<(u32, u32)>,
) -> (usize, String) {
    let mut failing: Vec<(u64, Program, String)> = Vec::new();
    let mut signals: BTreeMap<u64, usize> = BTreeMap::new();
    for chunk in indices.chunks(BATCH) {
        let progs: Vec<Program> = chunk
            .iter()
            .map(|&i| generate(seed, i, len, exclude, ctx.bitmanip, ctx.vector))
            .collect();
        let jobs: Vec<Job> = progs
            .iter()
            .zip(chunk)
            .map(|(p, i)| Job {
                tag: format!("p{i}"),
                prog: p,
                keep: p.items.len(),
            })
            .collect();
        let outs = run_batch(ctx, &jobs, patch);
        for ((o, p), &i) in outs.iter().zip(progs.iter()).zip(chunk) {
            if let Ok(q) = &o.qemu {
                let v = u64_at(q, 0);
                if v & TRAP_MAGIC == TRAP_MAGIC {
                    *signals.entry(v & 0xff).or_default() += 1;
                }
            }
            if o.differs() {
                failing.push((i, p.clone(), outcome_text(o)));
            }
        }
    }
    let mut report = String::new();
    let traps: Vec<String> = signals
        .iter()
        .map(|(sig, n)| format!("{n} x {}", value_text(0, TRAP_MAGIC | sig)))
        .collect();
    println!(
        "differential: programs that ended in a trap (in QEMU): {}",
        if traps.is_empty() {
            "none".to_string()
        } else {
            traps.join(", ")
        }
    );
    let mut by_name: BTreeMap<String, (usize, Vec<u64>)> = BTreeMap::new();
    for (n, (i, p, first)) in failing.iter().enumerate() {
        let label = format!("seed {seed:#x} program {i}");
        if n >= max_shrink {
            let _ = writeln!(report, "{label}: differs (not shrunk: WIO_DIFF_MAX_SHRINK)");
            continue;
        }
        let f = shrink(ctx, &label, p, patch);
        let e = by_name.entry(f.name.clone()).or_default();
        e.0 += 1;
        e.1.push(*i);
        if e.0 <= 2 {
            let _ = writeln!(report, "\n{}", f.text);
        } else {
            let _ = writeln!(report, "{label}: again `{}` (see above)", f.name);
        }
        if f.name.starts_with('(') {
            let _ = writeln!(report, "    whole-program difference:\n    {first}");
        }
    }
    if !failing.is_empty() {
        let _ = writeln!(report, "\nfirst diverging instruction, by mnemonic:");
        for (name, (count, progs)) in &by_name {
            let _ = writeln!(report, "  {name:<16} {count:>4} program(s), e.g. {progs:?}");
        }
    }
    (failing.len(), report)
}

#[test]
fn differential() {
    let Some(ctx) = Ctx::new("differential") else {
        return;
    };
    run_differential(ctx, 0x5eed, 1000);
}

/// The bit-manipulation extensions against QEMU's: programs with Zba/Zbb/Zbc/Zbs
/// instructions among the rest, on a hart that implements them (QEMU with them on). Its
/// own seed, so `differential`'s programs stay what they were.
#[test]
fn differential_bitmanip() {
    let Some(mut ctx) = Ctx::new("differential_bitmanip") else {
        return;
    };
    ctx.bitmanip = true;
    run_differential(ctx, 0xb175, 500);
}

/// The vector extension (integer and memory instructions) against QEMU's, VLEN 128 on
/// both sides; v0-v31 and the vector CSRs are compared at each program's end.
#[test]
fn differential_vector() {
    let Some(mut ctx) = Ctx::new("differential_vector") else {
        return;
    };
    ctx.vector = true;
    run_differential(ctx, 0x7ec7, 300);
}

/// Runs the campaign the environment asks for (`WIO_DIFF_*`, see the module doc), with
/// these defaults for the seed and the number of programs; panics with the report if any
/// program differs.
fn run_differential(ctx: Ctx, default_seed: u64, default_count: u64) {
    let start = Instant::now();
    let seed = env_u64("WIO_DIFF_SEED", default_seed);
    let count = env_u64("WIO_DIFF_PROGRAMS", default_count);
    let len = env_u64("WIO_DIFF_LEN", 50) as usize;
    let max_shrink = env_u64("WIO_DIFF_MAX_SHRINK", 20) as usize;
    let exclude: Vec<String> = std::env::var("WIO_DIFF_EXCLUDE")
        .unwrap_or_default()
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let indices: Vec<u64> = match std::env::var("WIO_DIFF_ONLY") {
        Ok(_) => vec![env_u64("WIO_DIFF_ONLY", 0)],
        Err(_) => (0..count).collect(),
    };
    let (failures, report) = campaign(&ctx, seed, &indices, len, &exclude, max_shrink, None);
    let summary = format!(
        "differential{}: seed {seed:#x}, {} programs x {len} instructions vs qemu-riscv64: \
         {failures} differ ({:.1} s)",
        if ctx.vector {
            " (with V)"
        } else if ctx.bitmanip {
            " (with Zba/Zbb/Zbc/Zbs)"
        } else {
            ""
        },
        indices.len(),
        start.elapsed().as_secs_f64()
    );
    println!("{summary}");
    if failures > 0 {
        panic!("{summary}\n{report}");
    }
}

/// The harness itself must catch a wrong result and pin it on the right
/// instruction: wio's copy of a program gets one `add` turned into a `sub`.
#[test]
fn harness_catches_an_injected_fault() {
    let Some(ctx) = Ctx::new("harness_catches_an_injected_fault") else {
        return;
    };
    let add = 0x0073_02b3; // add x5, x6, x7
    let sub = 0x4073_02b3; // sub x5, x6, x7
    let mut p = generate(1, 0, 0, &[], false, false);
    p.items.clear();
    for (name, line) in [
        ("li", "li x6, 1000"),
        ("li", "li x7, 234"),
        ("add(injected)", ".4byte 0x007302b3"),
        ("addi", "addi x10, x5, 1"),
    ] {
        p.items.push(Item {
            name: name.into(),
            lines: vec![line.into()],
            ..Item::default()
        });
    }
    let label = "selftest".to_string();
    let clean = run_batch(
        &ctx,
        &[Job {
            tag: "c".into(),
            prog: &p,
            keep: p.items.len(),
        }],
        None,
    );
    assert!(
        !clean[0].differs(),
        "unpatched program differs: {}",
        outcome_text(&clean[0])
    );
    let f = shrink(&ctx, &label, &p, Some((add, sub)));
    println!("{}", f.text);
    assert_eq!(f.name, "add(injected)", "{}", f.text);
    assert!(f.text.contains("reproduced alone"), "{}", f.text);
    assert!(f.text.contains("x5: qemu="), "{}", f.text);
}
