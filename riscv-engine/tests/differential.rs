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
//! it prints `SKIPPED: differential: …` and returns.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use wio_riscv::{Hart, NoDevices, Ram, Stop};

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

// ---------------------------------------------------------------- PRNG

/// splitmix64.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    fn u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.u64() % n
    }
    /// Uniform in lo..=hi.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

// ---------------------------------------------------------------- values

const INT_EDGES: &[u64] = &[
    0,
    1,
    2,
    3,
    7,
    u64::MAX,
    u64::MAX - 1,
    i64::MAX as u64,
    i64::MIN as u64,
    i64::MIN as u64 + 1,
    0x7fff_ffff,
    0x8000_0000,
    0x8000_0001,
    0xffff_ffff,
    0xffff_ffff_8000_0000,
    0xffff_ffff_7fff_ffff,
    0x0000_0001_0000_0000,
    0x0000_0001_0000_0001,
    0x0000_0000_ffff_fffe,
    1 << 53,
    (1 << 53) + 1,
    (1 << 53) - 1,
    (1 << 24) + 1,
    (1 << 24) - 1,
    0x00ff_ffff_ffff_ffff,
    0xfff0_0000_0000_0001,
    0x8000_0000_0000_0400,
    0x7fff_ffff_ffff_fc00,
    0x7fff_ffff_ffff_fdff,
    0x0000_0000_0000_0800,
    0xffff_ffff_ffff_f800,
];

/// An edge-biased 64-bit integer.
fn int_value(r: &mut Rng) -> u64 {
    match r.below(12) {
        0..=2 => r.pick(INT_EDGES),
        3 => r.range(-20, 20) as u64,
        4 => {
            let p = 1u64 << r.below(64);
            match r.below(4) {
                0 => p,
                1 => p.wrapping_sub(1),
                2 => p.wrapping_neg(),
                _ => p.wrapping_add(1),
            }
        }
        5 => r.u64() as u32 as i32 as i64 as u64,
        6 => r.u64() as u32 as u64,
        7 => r.range(-2048, 2047) as u64,
        8 => r.u64() & !((1u64 << r.below(64)) - 1),
        9 => r.u64() >> r.below(64),
        _ => r.u64(),
    }
}

/// Divisor/dividend values for M instructions.
fn muldiv_value(r: &mut Rng) -> u64 {
    match r.below(3) {
        0 => r.pick(&[
            0,
            1,
            u64::MAX,
            i64::MIN as u64,
            i64::MAX as u64,
            0xffff_ffff_8000_0000,
            0x8000_0000,
            0xffff_ffff,
            0x7fff_ffff,
            0xffff_ffff_0000_0000,
            0x1_0000_0000,
            2,
            u64::MAX - 1,
        ]),
        _ => int_value(r),
    }
}

fn d(x: f64) -> u64 {
    x.to_bits()
}
fn s(x: f32) -> u32 {
    x.to_bits()
}

fn f64_edges() -> Vec<u64> {
    vec![
        0,
        d(1.0),
        d(0.5),
        d(1.5),
        d(2.5),
        d(-0.5),
        d(-1.5),
        d(3.0),
        d(0.1),
        d(0.49999999999999994),
        0x7ff0_0000_0000_0000, // +inf
        0x7ff8_0000_0000_0000, // canonical qNaN
        0x7ff0_0000_0000_0001, // sNaN
        0x7ff4_0000_0000_0000, // sNaN
        0x7fff_ffff_ffff_ffff, // qNaN, full payload
        0xfff8_0000_0000_0001, // negative qNaN with payload
        0x0000_0000_0000_0001, // min subnormal
        0x000f_ffff_ffff_ffff, // max subnormal
        0x0010_0000_0000_0000, // min normal
        0x7fef_ffff_ffff_ffff, // max
        d(2147483648.0),       // 2^31
        d(2147483647.5),
        d(2147483647.0),
        d(-2147483648.5),
        d(-2147483649.0),
        d(4294967295.5),
        d(4294967296.0),
        d(-1.0),
        d(-0.75),
        d(9223372036854775808.0),  // 2^63
        0x43df_ffff_ffff_ffff,     // largest below 2^63
        d(18446744073709551616.0), // 2^64
        0x43ef_ffff_ffff_ffff,     // largest below 2^64
        d(-9223372036854775808.0),
        0xc3e0_0000_0000_0001, // just below -2^63
        d(4503599627370495.5),
        d(f32::MAX as f64),
        0x47ef_ffff_f000_0000, // FLT_MAX + half an ulp (single)
        0x47ef_ffff_efff_ffff,
        0x47f0_0000_0000_0000, // 2^128
        d(f32::MIN_POSITIVE as f64),
        0x36a0_0000_0000_0000, // 2^-149
        0x3690_0000_0000_0000, // 2^-150
        0x3698_0000_0000_0000, // 1.5 * 2^-150
        0x380f_ffff_f000_0000, // just below FLT_MIN, a tie
        d(1e300),
        d(1e-300),
    ]
}

fn f32_edges() -> Vec<u32> {
    vec![
        0,
        s(1.0),
        s(0.5),
        s(1.5),
        s(2.5),
        s(-0.5),
        s(-1.5),
        s(3.0),
        s(0.1),
        s(-1.0),
        0x7f80_0000, // +inf
        0x7fc0_0000, // canonical qNaN
        0x7f80_0001, // sNaN
        0x7fa0_0000, // sNaN
        0x7fff_ffff,
        0xffc0_0001,
        0x0000_0001, // min subnormal
        0x007f_ffff, // max subnormal
        0x0080_0000, // min normal
        0x7f7f_ffff, // max
        0x4f00_0000, // 2^31
        0x4eff_ffff,
        0x4f80_0000, // 2^32
        0x4f7f_ffff,
        0x5f00_0000, // 2^63
        0x5eff_ffff,
        0x5f80_0000, // 2^64
        0x5f7f_ffff,
        0xcf00_0000, // -2^31
        0xcf00_0001,
        0xdf00_0000, // -2^63
        0xdf00_0001,
        0x3eff_ffff,
        0x4b00_0000, // 2^23
        0x4aff_ffff,
        0x4b7f_ffff,
        s(16777217.0),
    ]
}

/// A double with a random but structured sign, exponent and significand.
fn rand_f64(r: &mut Rng) -> u64 {
    let sign = r.below(2) << 63;
    let exp: u64 = match r.below(10) {
        0 => 0,
        1 => 0x7ff,
        2 => r.below(0x7ff),
        3 => 1 + r.below(60),
        4 => 0x7fe - r.below(60),
        5 => (1023 + r.range(0, 64)) as u64,
        _ => (1023 + r.range(-30, 30)) as u64,
    };
    let m = (1u64 << 52) - 1;
    let man = match r.below(7) {
        0 => 0,
        1 => m,
        2 => 1 << r.below(52),
        3 => r.u64() & m & !((1u64 << r.below(52)) - 1),
        4 => (r.u64() & m) | ((1 << r.below(52)) - 1),
        _ => r.u64() & m,
    };
    sign | (exp << 52) | man
}

fn rand_f32(r: &mut Rng) -> u32 {
    let sign = (r.below(2) as u32) << 31;
    let exp: u32 = match r.below(10) {
        0 => 0,
        1 => 0xff,
        2 => r.below(0xff) as u32,
        3 => 1 + r.below(20) as u32,
        4 => 0xfe - r.below(20) as u32,
        5 => (127 + r.range(0, 64)) as u32,
        _ => (127 + r.range(-20, 20)) as u32,
    };
    let m = (1u32 << 23) - 1;
    let man = match r.below(7) {
        0 => 0,
        1 => m,
        2 => 1 << r.below(23),
        3 => (r.u64() as u32) & m & !((1u32 << r.below(23)) - 1),
        4 => ((r.u64() as u32) & m) | ((1 << r.below(23)) - 1),
        _ => (r.u64() as u32) & m,
    };
    sign | (exp << 23) | man
}

fn f64_value(r: &mut Rng) -> u64 {
    match r.below(10) {
        0..=2 => {
            let v = r.pick(&f64_edges());
            if r.chance(30) {
                v ^ (1 << 63)
            } else {
                v
            }
        }
        3..=6 => rand_f64(r),
        7 => d(r.range(-40, 40) as f64 / 4.0),
        8 => (0x7ff << 52) | (r.below(2) << 63) | (r.u64() & ((1 << 52) - 1)) | 1,
        _ => r.u64(),
    }
}

fn f32_value(r: &mut Rng) -> u32 {
    match r.below(10) {
        0..=2 => {
            let v = r.pick(&f32_edges());
            if r.chance(30) {
                v ^ (1 << 31)
            } else {
                v
            }
        }
        3..=6 => rand_f32(r),
        7 => s(r.range(-40, 40) as f32 / 4.0),
        8 => (0xff << 23) | ((r.below(2) as u32) << 31) | (r.u64() as u32 & 0x7f_ffff) | 1,
        _ => r.u64() as u32,
    }
}

fn boxed(v: u32) -> u64 {
    0xffff_ffff_0000_0000 | u64::from(v)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Fmt {
    S,
    D,
}

impl Fmt {
    fn sfx(self) -> &'static str {
        match self {
            Fmt::S => "s",
            Fmt::D => "d",
        }
    }
}

/// A value for an f register, and what it holds (None: neither a boxed single nor a chosen double).
fn f_reg_value(r: &mut Rng) -> (u64, Option<Fmt>) {
    match r.below(20) {
        0..=8 => (boxed(f32_value(r)), Some(Fmt::S)),
        9..=17 => (f64_value(r), Some(Fmt::D)),
        18 => {
            // A single that is not NaN-boxed.
            let upper = if r.chance(50) { 0 } else { r.u64() as u32 >> 1 };
            ((u64::from(upper) << 32) | u64::from(f32_value(r)), None)
        }
        _ => (r.u64(), None),
    }
}

// ---------------------------------------------------------------- programs

/// One generated instruction (sometimes a few, e.g. `li` or an LR/SC sequence).
/// `{L}` in its lines names its forward branch target, `skip` items ahead;
/// `{T}` names its `data` (lines for the data section), `{S}` the program's
/// code slot (8 writable, executable bytes: `nop; ret` at first).
#[derive(Clone, Debug, Default)]
struct Item {
    name: String,
    lines: Vec<String>,
    skip: Option<usize>,
    data: Vec<String>,
}

#[derive(Clone, Debug)]
struct Program {
    x: [u64; 32],
    f: [u64; 32],
    fcsr: u64,
    buf: [u64; BUF_BYTES / 8],
    items: Vec<Item>,
}

/// Destination registers: all but x0 and the two scratch-buffer pointers x2 and x9.
const XD: &[usize] = &[
    1, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,
    28, 29, 30, 31,
];
/// Compressed-form destinations (x8-x15 without x9).
const CXD: &[usize] = &[8, 10, 11, 12, 13, 14, 15];
const RMS: &[&str] = &["rne", "rtz", "rdn", "rup", "rmm", "dyn", "dyn"];

/// 32-bit encodings that are illegal in RV64GC (QEMU runs with Zba/Zbb/Zbc/Zbs
/// and H turned off, so their encodings are illegal there too). Not here, on
/// purpose: a misaligned SC with no reservation, which QEMU 7.2 fails without
/// trapping (the spec says it raises a misaligned or access fault, as wio does),
/// and CSRRS/CSRRC on a read-only CSR with a register rs1 that holds zero, which
/// QEMU 7.2 lets read (the spec says it still writes, so it is illegal, as in wio).
const ILLEGAL32: &[(&str, u32)] = &[
    ("0xffffffff", 0xffff_ffff),
    ("slli funct6=1", 0x0400_9093),
    ("srli funct6=2", 0x0800_d093),
    ("srai funct6=0x11", 0x4400_d093),
    ("slliw shamt[5]", 0x0200_909b),
    ("srliw shamt[5]", 0x0200_d09b),
    ("sraiw shamt[5]", 0x4200_d09b),
    ("op-imm-32 funct3=2", 0x0000_a09b),
    ("op funct7=2", 0x0420_80b3),
    ("andn (Zbb)", 0x4020_f0b3),
    ("sh1add (Zba)", 0x20a5_a533),
    ("op-32 funct7=1 funct3=1", 0x0220_90bb),
    ("branch funct3=2", 0x0020_a463),
    ("load funct3=7", 0x0001_7083),
    ("store funct3=4", 0x0011_4023),
    ("jalr funct3=1", 0x0000_9067),
    ("amo funct3=0", 0x0021_00af),
    ("amo funct5=5", 0x2821_20af),
    ("amo funct5=6", 0x3021_20af),
    ("lr.w rs2=1", 0x1011_20af),
    ("fmv.x.w funct3=2", 0xe000_a0d3),
    ("fclass.s rs2=1", 0xe010_90d3),
    ("feq.s funct3=3", 0xa020_b0d3),
    ("fsgnj.d funct3=3", 0x2220_b0d3),
    ("fmin.s funct3=2", 0x2820_a0d3),
    ("fsqrt.s rs2=1", 0x5810_80d3),
    ("fadd.h", 0x0420_80d3),
    ("fadd.q", 0x0620_80d3),
    ("fcvt.s.q", 0x4030_80d3),
    ("fcvt.w.s rs2=4", 0xc040_90d3),
    ("fcvt.s.w rs2=5", 0xd050_80d3),
    ("fmv.w.x rs2=1", 0xf010_80d3),
    ("fmv.w.x funct3=1", 0xf000_90d3),
    ("flh", 0x0001_1087),
    ("flq", 0x0001_4087),
    ("fsq", 0x0011_4027),
    ("fmadd.h", 0x1c20_80c3),
    ("custom-0", 0x0000_008b),
    ("custom-1", 0x0000_00ab),
    ("custom-2", 0x0000_00db),
    ("custom-3", 0x0000_00fb),
    ("op-v", 0x0000_00d7),
    ("vsetvli", 0x0000_f0d7),
    ("system funct3=4", 0x0000_40f3),
    ("uret", 0x0020_0073),
    ("csrw cycle", 0xc000_9073),
    // rs1 = x2 (never zero): QEMU 7.2 decides "writes" from rs1's value, not its number.
    ("csrrs x1, time, x2", 0xc011_20f3),
    ("csrr mstatus", 0x3000_20f3),
    ("csrr mhartid", 0xf140_20f3),
    ("csrr hstatus", 0x6000_20f3),
    ("csrr vsstatus", 0x2000_20f3),
    ("csrr 0x7c0", 0x7c00_20f3),
    ("csrr utvec", 0x0050_20f3),
    ("csrr vstart", 0x0080_20f3),
    ("csrr seed", 0x0150_20f3),
    ("csrr 0x800", 0x8000_20f3),
    ("csrr 0xcc0", 0xcc00_20f3),
];

/// Reserved or illegal 16-bit encodings.
const ILLEGAL16: &[(&str, u16)] = &[
    ("c.illegal", 0x0000),
    ("c.addi4spn imm=0", 0x0004),
    ("c.lwsp rd=0", 0x4002),
    ("c.ldsp rd=0", 0x6002),
    ("c.jr rs1=0", 0x8002),
    ("c.lui imm=0", 0x6081),
    ("c.addi16sp imm=0", 0x6101),
    ("c.addiw rd=0", 0x2005),
    ("c.subw-group 10", 0x9c41),
    ("c.subw-group 11", 0x9c61),
    ("q0 funct3=4", 0x8004),
];

/// One entry of the generator's menu.
type Maker<'a> = fn(&mut Gen<'a>);

struct Gen<'a> {
    r: &'a mut Rng,
    items: Vec<Item>,
    recent_x: Vec<usize>,
    ftag: [Option<Fmt>; 32],
    exclude: &'a [String],
}

fn excluded(exclude: &[String], name: &str) -> bool {
    exclude.iter().any(|e| match e.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == e,
    })
}

impl Gen<'_> {
    fn push(&mut self, name: &str, lines: Vec<String>) {
        self.push_skip(name, lines, None);
    }
    fn push_skip(&mut self, name: &str, lines: Vec<String>, skip: Option<usize>) {
        if excluded(self.exclude, name) {
            return;
        }
        self.items.push(Item {
            name: name.to_string(),
            lines,
            skip,
            data: Vec::new(),
        });
    }
    fn wrote_x(&mut self, r: usize) {
        if r != 0 {
            self.recent_x.push(r);
            if self.recent_x.len() > 8 {
                self.recent_x.remove(0);
            }
        }
    }
    /// A destination (x0 now and then: those are HINTs, results dropped).
    fn xd(&mut self) -> usize {
        let r = if self.r.chance(3) { 0 } else { self.r.pick(XD) };
        self.wrote_x(r);
        r
    }
    fn xd_nz(&mut self) -> usize {
        let r = self.r.pick(XD);
        self.wrote_x(r);
        r
    }
    fn cxd(&mut self) -> usize {
        let r = self.r.pick(CXD);
        self.wrote_x(r);
        r
    }
    /// A source, often one written recently.
    fn xs(&mut self) -> usize {
        if !self.recent_x.is_empty() && self.r.chance(40) {
            self.r.pick(&self.recent_x.clone())
        } else if self.r.chance(5) {
            0
        } else {
            self.r.below(32) as usize
        }
    }
    fn fd(&mut self, fmt: Fmt) -> usize {
        let r = self.r.below(32) as usize;
        self.ftag[r] = Some(fmt);
        r
    }
    /// A source register, usually one that holds a value of `fmt`.
    fn fs(&mut self, fmt: Fmt) -> usize {
        let of_fmt: Vec<usize> = (0..32).filter(|&i| self.ftag[i] == Some(fmt)).collect();
        if !of_fmt.is_empty() && self.r.chance(75) {
            self.r.pick(&of_fmt)
        } else {
            self.r.below(32) as usize
        }
    }
    fn rm(&mut self) -> &'static str {
        self.r.pick(RMS)
    }
    /// A raw rm field value that is legal (0-4 or 7 = dynamic).
    fn rm_bits(&mut self) -> u32 {
        self.r.pick(&[0, 1, 2, 3, 4, 7, 7])
    }
    fn fmt(&mut self) -> Fmt {
        if self.r.chance(50) {
            Fmt::S
        } else {
            Fmt::D
        }
    }

    fn li(&mut self, rd: usize, v: u64) {
        self.push("li", vec![format!("li x{rd}, {:#x}", v)]);
    }
    /// Loads an edge value into an f register: `li` to a temporary, then fmv.
    fn f_const(&mut self, fr: usize, fmt: Fmt, bits: u64) {
        let t = self.xd_nz();
        let mv = match fmt {
            Fmt::S => "fmv.w.x",
            Fmt::D => "fmv.d.x",
        };
        self.push(
            "fconst",
            vec![format!("li x{t}, {:#x}", bits), format!("{mv} f{fr}, x{t}")],
        );
        self.ftag[fr] = Some(fmt);
    }
    fn f_edge_bits(&mut self, fmt: Fmt) -> u64 {
        match fmt {
            Fmt::S => u64::from(f32_value(self.r)),
            Fmt::D => f64_value(self.r),
        }
    }
    /// Two related values: equal, negated, the two zeros, neighbours.
    fn f_pair(&mut self, fmt: Fmt) -> (u64, u64) {
        let v = self.f_edge_bits(fmt);
        let sign = match fmt {
            Fmt::S => 1 << 31,
            Fmt::D => 1 << 63,
        };
        match self.r.below(5) {
            0 => (v, v),
            1 => (v, v ^ sign),
            2 => {
                if self.r.chance(50) {
                    (0, sign)
                } else {
                    (sign, 0)
                }
            }
            3 => (v, (v & !sign).wrapping_add(1) | (v & sign)),
            _ => (v, (v ^ sign).wrapping_sub(1)),
        }
    }
    /// Sources for a binary operation, sometimes loaded with related values.
    fn f_sources(&mut self, fmt: Fmt) -> (usize, usize) {
        let a = self.fs(fmt);
        if self.r.chance(15) {
            let b = loop {
                let b = self.r.below(32) as usize;
                if b != a {
                    break b;
                }
            };
            let (va, vb) = self.f_pair(fmt);
            let mask = match fmt {
                Fmt::S => 0xffff_ffff,
                Fmt::D => u64::MAX,
            };
            self.f_const(a, fmt, va & mask);
            self.f_const(b, fmt, vb & mask);
            return (a, b);
        }
        let b = if self.r.chance(10) { a } else { self.fs(fmt) };
        self.maybe_f_const(a, fmt);
        if b != a {
            self.maybe_f_const(b, fmt);
        }
        (a, b)
    }
    /// Maybe reload source `fr` with an edge value first.
    fn maybe_f_const(&mut self, fr: usize, fmt: Fmt) {
        if self.r.chance(25) {
            let v = self.f_edge_bits(fmt);
            self.f_const(fr, fmt, v);
        }
    }

    // ---- integer

    fn alu_rr(&mut self) {
        let op = self.r.pick(&[
            "add", "sub", "sll", "slt", "sltu", "xor", "srl", "sra", "or", "and", "addw", "subw",
            "sllw", "srlw", "sraw",
        ]);
        let (a, b) = (self.xs(), self.xs());
        if XD.contains(&b) && self.r.chance(15) {
            let v = int_value(self.r);
            self.li(b, v);
        }
        let rd = if self.r.chance(20) && XD.contains(&a) {
            a
        } else {
            self.xd()
        };
        self.push(op, vec![format!("{op} x{rd}, x{a}, x{b}")]);
    }

    fn alu_imm(&mut self) {
        let op = self.r.pick(&[
            "addi", "slti", "sltiu", "xori", "ori", "andi", "slli", "srli", "srai", "addiw",
            "slliw", "srliw", "sraiw",
        ]);
        let imm = match op {
            "slli" | "srli" | "srai" => self.r.below(64) as i64,
            "slliw" | "srliw" | "sraiw" => self.r.below(32) as i64,
            _ => match self.r.below(4) {
                0 => self.r.pick(&[0, 1, -1, 2047, -2048, 0x7f0, -0x800 + 1]),
                1 => self.r.range(-32, 31),
                _ => self.r.range(-2048, 2047),
            },
        };
        let a = self.xs();
        let rd = self.xd();
        self.push(op, vec![format!("{op} x{rd}, x{a}, {imm}")]);
    }

    fn upper(&mut self) {
        let op = self.r.pick(&["lui", "auipc"]);
        let imm = match self.r.below(3) {
            0 => self.r.pick(&[0, 0xfffff, 0x80000, 0x7ffff, 1]),
            _ => self.r.below(1 << 20),
        };
        let rd = self.xd();
        self.push(op, vec![format!("{op} x{rd}, {imm:#x}")]);
    }

    fn muldiv(&mut self) {
        let op = self.r.pick(&[
            "mul", "mulh", "mulhsu", "mulhu", "div", "divu", "rem", "remu", "mulw", "divw",
            "divuw", "remw", "remuw",
        ]);
        let (a, b) = (self.xs(), self.xs());
        if XD.contains(&a) && self.r.chance(50) {
            let v = muldiv_value(self.r);
            self.li(a, v);
        }
        if XD.contains(&b) && self.r.chance(50) {
            let v = muldiv_value(self.r);
            self.li(b, v);
        }
        let rd = self.xd();
        self.push(op, vec![format!("{op} x{rd}, x{a}, x{b}")]);
    }

    fn int_const(&mut self) {
        let rd = self.xd_nz();
        let v = int_value(self.r);
        self.li(rd, v);
    }

    /// A base register and an in-buffer offset for an access of `size` bytes.
    fn addr(&mut self, size: i64) -> (usize, i64) {
        let off = self.r.range(0, BUF_BYTES as i64 - size);
        let off = match self.r.below(10) {
            0..=3 => off & !(size - 1),
            // Across the page boundary at x9.
            4 => 256 - self.r.range(1, size),
            _ => off,
        };
        if self.r.chance(50) {
            (2, off)
        } else {
            (9, off - 256)
        }
    }

    fn load(&mut self) {
        let (op, size) = self.r.pick(&[
            ("lb", 1),
            ("lh", 2),
            ("lw", 4),
            ("ld", 8),
            ("lbu", 1),
            ("lhu", 2),
            ("lwu", 4),
        ]);
        let (base, off) = self.addr(size);
        let rd = self.xd();
        self.push(op, vec![format!("{op} x{rd}, {off}(x{base})")]);
    }

    fn store(&mut self) {
        let (op, size) = self.r.pick(&[("sb", 1), ("sh", 2), ("sw", 4), ("sd", 8)]);
        let (base, off) = self.addr(size);
        let v = self.xs();
        self.push(op, vec![format!("{op} x{v}, {off}(x{base})")]);
    }

    fn skip(&mut self) -> usize {
        self.r.range(1, 4) as usize
    }

    fn branch(&mut self) {
        let op = self.r.pick(&["beq", "bne", "blt", "bge", "bltu", "bgeu"]);
        let a = self.xs();
        let b = match self.r.below(4) {
            0 => a,
            1 => 0,
            _ => self.xs(),
        };
        let skip = self.skip();
        self.push_skip(op, vec![format!("{op} x{a}, x{b}, {{L}}")], Some(skip));
    }

    fn jal(&mut self) {
        let rd = self.xd();
        let skip = self.skip();
        self.push_skip("jal", vec![format!("jal x{rd}, {{L}}")], Some(skip));
    }

    fn jalr(&mut self) {
        let t = self.xd_nz();
        let rd = if self.r.chance(30) { t } else { self.xd() };
        let skip = self.skip();
        // The target's low bit is cleared: aim at L+1 half the time.
        let (plus, off) = self.r.pick(&[(0, 0), (1, -1), (1, 0), (8, -8), (0, 0)]);
        self.push_skip(
            "jalr",
            vec![
                format!("lla x{t}, {{L}}+{plus}"),
                format!("jalr x{rd}, {off}(x{t})"),
            ],
            Some(skip),
        );
    }

    fn aq_rl(&mut self) -> &'static str {
        self.r.pick(&["", ".aq", ".rl", ".aqrl"])
    }

    fn amo(&mut self) {
        let op = self.r.pick(&[
            "amoswap", "amoadd", "amoxor", "amoand", "amoor", "amomin", "amomax", "amominu",
            "amomaxu",
        ]);
        let (w, size) = if self.r.chance(50) {
            ("w", 4)
        } else {
            ("d", 8)
        };
        let ord = self.aq_rl();
        let src = self.xs();
        let mut lines = Vec::new();
        let base = if self.r.chance(30) {
            2
        } else {
            let t = self.xd_nz();
            let off = self.r.range(0, (BUF_BYTES as i64 - size) / size) * size;
            lines.push(format!("addi x{t}, x2, {off}"));
            t
        };
        let rd = self.xd();
        lines.push(format!("{op}.{w}{ord} x{rd}, x{src}, (x{base})"));
        self.push(&format!("{op}.{w}"), lines);
    }

    fn lrsc(&mut self) {
        let (w, size) = if self.r.chance(50) {
            ("w", 4)
        } else {
            ("d", 8)
        };
        let t = self.xd_nz();
        let off = self.r.range(0, (BUF_BYTES as i64 - size) / size) * size;
        let mut lines = vec![format!("addi x{t}, x2, {off}")];
        let other = match self.r.below(5) {
            // SC to an address 128 bytes away: it must fail.
            0 => {
                let u = loop {
                    let u = self.xd_nz();
                    if u != t {
                        break u;
                    }
                };
                lines.push(format!(
                    "addi x{u}, x{t}, {}",
                    if off >= 256 { -128 } else { 128 }
                ));
                Some(u)
            }
            _ => None,
        };
        let pick_not = |g: &mut Gen, avoid: &[usize]| loop {
            let r = g.xd();
            if !avoid.contains(&r) {
                break r;
            }
        };
        let avoid: Vec<usize> = [Some(t), other].into_iter().flatten().collect();
        let rd = pick_not(self, &avoid);
        let ord = self.aq_rl();
        lines.push(format!("lr.{w}{ord} x{rd}, (x{t})"));
        for _ in 0..self.r.below(3) {
            let a = self.xs();
            let rd = pick_not(self, &avoid);
            let imm = self.r.range(-2048, 2047);
            lines.push(format!("xori x{rd}, x{a}, {imm}"));
        }
        let v = self.xs();
        let rd2 = pick_not(self, &avoid);
        let ord = self.aq_rl();
        lines.push(format!(
            "sc.{w}{ord} x{rd2}, x{v}, (x{})",
            other.unwrap_or(t)
        ));
        if self.r.chance(20) {
            // A second SC: the reservation is gone.
            let rd3 = pick_not(self, &avoid);
            lines.push(format!("sc.{w} x{rd3}, x{v}, (x{t})"));
        }
        self.push(&format!("lr/sc.{w}"), lines);
    }

    fn fence(&mut self) {
        let (name, line) = self.r.pick(&[
            ("fence", "fence"),
            ("fence", "fence rw, rw"),
            ("fence", "fence r, w"),
            ("fence.tso", "fence.tso"),
            ("fence.i", "fence.i"),
            ("pause", ".4byte 0x0100000f"),
            ("fence fm=15", ".4byte 0xf330000f"),
            ("fence rs1,rd!=0", ".4byte 0x0ff0808f"),
            ("fence.i imm!=0", ".4byte 0x0010908f"),
        ]);
        self.push(name, vec![line.to_string()]);
    }

    // ---- compressed (written as c.* so the 16-bit form is certain)

    fn compressed(&mut self) {
        let k = self.r.below(30);
        let nz6 = |g: &mut Gen| loop {
            let v = g.r.range(-32, 31);
            if v != 0 {
                break v;
            }
        };
        match k {
            0 => {
                let rd = self.cxd();
                let imm = self.r.range(1, 255) * 4;
                self.push("c.addi4spn", vec![format!("c.addi4spn x{rd}, x2, {imm}")]);
            }
            1 => {
                let rd = self.cxd();
                let off = self.r.range(0, 31) * 4;
                self.push("c.lw", vec![format!("c.lw x{rd}, {off}(x9)")]);
            }
            2 => {
                let rd = self.cxd();
                let off = self.r.range(0, 31) * 8;
                self.push("c.ld", vec![format!("c.ld x{rd}, {off}(x9)")]);
            }
            3 => {
                let fd = self.r.range(8, 15) as usize;
                self.ftag[fd] = Some(Fmt::D);
                let off = self.r.range(0, 31) * 8;
                self.push("c.fld", vec![format!("c.fld f{fd}, {off}(x9)")]);
            }
            4 => {
                let rs = self.r.range(8, 15);
                let off = self.r.range(0, 31) * 4;
                self.push("c.sw", vec![format!("c.sw x{rs}, {off}(x9)")]);
            }
            5 => {
                let rs = self.r.range(8, 15);
                let off = self.r.range(0, 31) * 8;
                self.push("c.sd", vec![format!("c.sd x{rs}, {off}(x9)")]);
            }
            6 => {
                let fs = self.r.range(8, 15);
                let off = self.r.range(0, 31) * 8;
                self.push("c.fsd", vec![format!("c.fsd f{fs}, {off}(x9)")]);
            }
            7 => self.push("c.nop", vec!["c.nop".into()]),
            8 => {
                let rd = self.xd_nz();
                let imm = nz6(self);
                self.push("c.addi", vec![format!("c.addi x{rd}, {imm}")]);
            }
            9 => {
                let rd = self.xd_nz();
                let imm = self.r.range(-32, 31);
                self.push("c.addiw", vec![format!("c.addiw x{rd}, {imm}")]);
            }
            10 => {
                let rd = self.xd_nz();
                let imm = self.r.range(-32, 31);
                self.push("c.li", vec![format!("c.li x{rd}, {imm}")]);
            }
            11 => {
                let rd = self.xd_nz();
                let imm = nz6(self);
                let imm = (imm as u64) & 0xfffff;
                self.push("c.lui", vec![format!("c.lui x{rd}, {imm:#x}")]);
            }
            12 | 13 => {
                let op = if k == 12 { "c.srli" } else { "c.srai" };
                let rd = self.cxd();
                let sh = self.r.range(1, 63);
                self.push(op, vec![format!("{op} x{rd}, {sh}")]);
            }
            14 => {
                let rd = self.cxd();
                let imm = self.r.range(-32, 31);
                self.push("c.andi", vec![format!("c.andi x{rd}, {imm}")]);
            }
            15 => {
                let op = self
                    .r
                    .pick(&["c.sub", "c.xor", "c.or", "c.and", "c.subw", "c.addw"]);
                let rs = self.r.range(8, 15);
                let rd = self.cxd();
                self.push(op, vec![format!("{op} x{rd}, x{rs}")]);
            }
            16 => {
                let rd = self.xd_nz();
                let sh = self.r.range(1, 63);
                self.push("c.slli", vec![format!("c.slli x{rd}, {sh}")]);
            }
            17 => {
                let rs = loop {
                    let r = self.xs();
                    if r != 0 {
                        break r;
                    }
                };
                let rd = self.xd_nz();
                self.push("c.mv", vec![format!("c.mv x{rd}, x{rs}")]);
            }
            18 => {
                let rs = loop {
                    let r = self.xs();
                    if r != 0 {
                        break r;
                    }
                };
                let rd = self.xd_nz();
                self.push("c.add", vec![format!("c.add x{rd}, x{rs}")]);
            }
            19 => {
                let (op, step, max) =
                    self.r
                        .pick(&[("c.lwsp", 4, 63), ("c.ldsp", 8, 63), ("c.fldsp", 8, 63)]);
                let off = self.r.range(0, max) * step;
                if op == "c.fldsp" {
                    let fd = self.fd(Fmt::D);
                    self.push(op, vec![format!("{op} f{fd}, {off}(x2)")]);
                } else {
                    let rd = self.xd_nz();
                    self.push(op, vec![format!("{op} x{rd}, {off}(x2)")]);
                }
            }
            20 => {
                let (op, step, max) =
                    self.r
                        .pick(&[("c.swsp", 4, 63), ("c.sdsp", 8, 63), ("c.fsdsp", 8, 63)]);
                let off = self.r.range(0, max) * step;
                let reg = if op == "c.fsdsp" {
                    format!("f{}", self.r.below(32))
                } else {
                    format!("x{}", self.xs())
                };
                self.push(op, vec![format!("{op} {reg}, {off}(x2)")]);
            }
            21 => {
                // Move the buffer pointer, access through it, move it back.
                let dlt = loop {
                    let v = self.r.range(-16, 16) * 16;
                    if v != 0 {
                        break v;
                    }
                };
                let lo = (-dlt).max(0) / 8;
                let hi = (504 - dlt).min(504) / 8;
                let off = self.r.range(lo, hi) * 8;
                let access = if self.r.chance(50) {
                    let rd = self.xd_nz();
                    format!("c.ldsp x{rd}, {off}(x2)")
                } else {
                    format!("c.sdsp x{}, {off}(x2)", self.xs())
                };
                self.push(
                    "c.addi16sp",
                    vec![
                        format!("c.addi16sp x2, {dlt}"),
                        access,
                        format!("c.addi16sp x2, {}", -dlt),
                    ],
                );
            }
            22 => {
                let skip = self.skip();
                self.push_skip("c.j", vec!["c.j {L}".into()], Some(skip));
            }
            23 | 24 => {
                let op = if k == 23 { "c.beqz" } else { "c.bnez" };
                let rs = self.r.range(8, 15);
                let skip = self.skip();
                self.push_skip(op, vec![format!("{op} x{rs}, {{L}}")], Some(skip));
            }
            25 | 26 => {
                let op = if k == 25 { "c.jr" } else { "c.jalr" };
                let t = self.xd_nz();
                if op == "c.jalr" {
                    self.wrote_x(1);
                }
                let skip = self.skip();
                self.push_skip(
                    op,
                    vec![format!("lla x{t}, {{L}}"), format!("{op} x{t}")],
                    Some(skip),
                );
            }
            _ => {
                // Plain instructions that the assembler compresses by itself.
                let rd = self.cxd();
                let rs = self.r.range(8, 15);
                let line = match self.r.below(4) {
                    0 => format!("add x{rd}, x{rd}, x{rs}"),
                    1 => format!("addi x{rd}, x{rd}, {}", nz6(self)),
                    2 => format!("and x{rd}, x{rd}, x{rs}"),
                    _ => format!("addw x{rd}, x{rd}, x{rs}"),
                };
                let name = line.split(' ').next().unwrap().to_string();
                self.push(&format!("{name}(rvc)"), vec![line]);
            }
        }
    }

    /// HINT encodings of the C extension, as raw parcels (the assembler will not emit them).
    fn hint(&mut self) {
        let imm6 = |g: &mut Gen| g.r.range(1, 63) as u16;
        let (name, h): (&str, u16) = match self.r.below(8) {
            0 => {
                let i = imm6(self);
                ("hint:c.nop", ((i >> 5) << 12) | ((i & 31) << 2) | 1)
            }
            1 => {
                let rd = self.xd_nz() as u16;
                ("hint:c.addi0", (rd << 7) | 1)
            }
            2 => {
                let i = self.r.range(0, 63) as u16;
                (
                    "hint:c.li",
                    (0b010 << 13) | ((i >> 5) << 12) | ((i & 31) << 2) | 1,
                )
            }
            3 => {
                let i = imm6(self);
                (
                    "hint:c.lui",
                    (0b011 << 13) | ((i >> 5) << 12) | ((i & 31) << 2) | 1,
                )
            }
            4 => {
                let rs = self.r.range(1, 31) as u16;
                ("hint:c.mv", (0b100 << 13) | (rs << 2) | 2)
            }
            5 => {
                let rs = self.r.range(1, 31) as u16;
                ("hint:c.add", (0b100 << 13) | (1 << 12) | (rs << 2) | 2)
            }
            6 => {
                let rd = self.xd_nz() as u16;
                ("hint:c.slli0", (rd << 7) | 2)
            }
            _ => {
                let rd = self.r.range(0, 7) as u16;
                let f = self.r.below(2) as u16;
                ("hint:c.srxi0", (0b100 << 13) | (f << 10) | (rd << 7) | 1)
            }
        };
        self.push(name, vec![format!(".2byte {h:#06x}")]);
    }

    // ---- floating point

    fn fp_arith(&mut self) {
        let fmt = self.fmt();
        let op = self.r.pick(&["fadd", "fsub", "fmul", "fdiv"]);
        let (a, b) = self.f_sources(fmt);
        let rm = self.rm();
        let rd = self.fd(fmt);
        let sfx = fmt.sfx();
        self.push(
            &format!("{op}.{sfx}"),
            vec![format!("{op}.{sfx} f{rd}, f{a}, f{b}, {rm}")],
        );
    }

    fn fp_sqrt(&mut self) {
        let fmt = self.fmt();
        let a = self.fs(fmt);
        self.maybe_f_const(a, fmt);
        let rm = self.rm();
        let rd = self.fd(fmt);
        let sfx = fmt.sfx();
        self.push(
            &format!("fsqrt.{sfx}"),
            vec![format!("fsqrt.{sfx} f{rd}, f{a}, {rm}")],
        );
    }

    fn fp_binary_norm(&mut self, ops: &[&'static str]) {
        let fmt = self.fmt();
        let op = self.r.pick(ops);
        let (a, b) = self.f_sources(fmt);
        let rd = self.fd(fmt);
        let sfx = fmt.sfx();
        self.push(
            &format!("{op}.{sfx}"),
            vec![format!("{op}.{sfx} f{rd}, f{a}, f{b}")],
        );
    }

    fn fp_fma(&mut self) {
        let fmt = self.fmt();
        let op = self.r.pick(&["fmadd", "fmsub", "fnmsub", "fnmadd"]);
        let rs: Vec<usize> = (0..3).map(|_| self.fs(fmt)).collect();
        for &r in &rs {
            self.maybe_f_const(r, fmt);
        }
        let rm = self.rm();
        let rd = self.fd(fmt);
        let sfx = fmt.sfx();
        self.push(
            &format!("{op}.{sfx}"),
            vec![format!(
                "{op}.{sfx} f{rd}, f{}, f{}, f{}, {rm}",
                rs[0], rs[1], rs[2]
            )],
        );
    }

    /// a*b + c where c cancels the rounded product: the result is the product's rounding error.
    fn fp_fma_cancel(&mut self) {
        let fmt = self.fmt();
        let op = self.r.pick(&["fmadd", "fmsub", "fnmsub", "fnmadd"]);
        let regs = loop {
            let v: Vec<usize> = (0..3).map(|_| self.r.below(32) as usize).collect();
            if v[0] != v[1] && v[1] != v[2] && v[0] != v[2] {
                break v;
            }
        };
        let (a, b, c) = match fmt {
            Fmt::D => {
                let norm = |r: &mut Rng| {
                    let e = (1023 + r.range(-40, 40)) as u64;
                    (r.below(2) << 63) | (e << 52) | (r.u64() & ((1 << 52) - 1))
                };
                let (a, b) = (norm(self.r), norm(self.r));
                let p = f64::from_bits(a) * f64::from_bits(b);
                // fmadd/fnmadd: a*b + c / -(a*b) - c cancel with c = -p; fmsub/fnmsub with c = p.
                let c = if op == "fmadd" || op == "fnmadd" {
                    -p
                } else {
                    p
                };
                (a, b, c.to_bits())
            }
            Fmt::S => {
                let norm = |r: &mut Rng| {
                    let e = (127 + r.range(-20, 20)) as u32;
                    ((r.below(2) as u32) << 31) | (e << 23) | (r.u64() as u32 & 0x7f_ffff)
                };
                let (a, b) = (norm(self.r), norm(self.r));
                let p = f32::from_bits(a) * f32::from_bits(b);
                let c = if op == "fmadd" || op == "fnmadd" {
                    -p
                } else {
                    p
                };
                (u64::from(a), u64::from(b), u64::from(c.to_bits()))
            }
        };
        self.f_const(regs[0], fmt, a);
        self.f_const(regs[1], fmt, b);
        self.f_const(regs[2], fmt, c);
        let rm = self.rm();
        let rd = self.fd(fmt);
        let sfx = fmt.sfx();
        self.push(
            &format!("{op}.{sfx}"),
            vec![format!(
                "{op}.{sfx} f{rd}, f{}, f{}, f{}, {rm}",
                regs[0], regs[1], regs[2]
            )],
        );
    }

    fn fp_to_int(&mut self) {
        let fmt = self.fmt();
        let ty = self.r.pick(&["w", "wu", "l", "lu"]);
        let a = self.fs(fmt);
        if self.r.chance(35) {
            let v = match fmt {
                Fmt::S => u64::from(self.r.pick(&f32_edges())) ^ (self.r.below(2) << 31),
                Fmt::D => self.r.pick(&f64_edges()) ^ (self.r.below(2) << 63),
            };
            self.f_const(a, fmt, v);
        } else {
            self.maybe_f_const(a, fmt);
        }
        let rm = self.rm();
        let rd = self.xd();
        let sfx = fmt.sfx();
        self.push(
            &format!("fcvt.{ty}.{sfx}"),
            vec![format!("fcvt.{ty}.{sfx} x{rd}, f{a}, {rm}")],
        );
    }

    fn int_to_fp(&mut self) {
        let fmt = self.fmt();
        let ty = self.r.pick(&["w", "wu", "l", "lu"]);
        let a = self.xs();
        if XD.contains(&a) && self.r.chance(40) {
            let v = int_value(self.r);
            self.li(a, v);
        }
        let rd = self.fd(fmt);
        let sfx = fmt.sfx();
        let name = format!("fcvt.{sfx}.{ty}");
        if fmt == Fmt::D && (ty == "w" || ty == "wu") {
            // Exact conversions: the assembler takes no rounding mode, so encode it.
            let rm = self.rm_bits();
            let rs2 = if ty == "w" { 0 } else { 1 };
            self.push(
                &name,
                vec![format!(".insn r 0x53, {rm}, 0x69, f{rd}, x{a}, x{rs2}")],
            );
        } else {
            let rm = self.rm();
            self.push(&name, vec![format!("{name} f{rd}, x{a}, {rm}")]);
        }
    }

    fn fp_to_fp(&mut self) {
        if self.r.chance(50) {
            let a = self.fs(Fmt::D);
            self.maybe_f_const(a, Fmt::D);
            let rm = self.rm();
            let rd = self.fd(Fmt::S);
            self.push("fcvt.s.d", vec![format!("fcvt.s.d f{rd}, f{a}, {rm}")]);
        } else {
            let a = self.fs(Fmt::S);
            self.maybe_f_const(a, Fmt::S);
            let rm = self.rm_bits();
            let rd = self.fd(Fmt::D);
            self.push(
                "fcvt.d.s",
                vec![format!(".insn r 0x53, {rm}, 0x21, f{rd}, f{a}, x0")],
            );
        }
    }

    fn fp_move(&mut self) {
        match self.r.below(4) {
            0 | 1 => {
                let op = if self.r.chance(50) {
                    "fmv.x.w"
                } else {
                    "fmv.x.d"
                };
                let a = self.r.below(32);
                let rd = self.xd();
                self.push(op, vec![format!("{op} x{rd}, f{a}")]);
            }
            _ => {
                let (op, fmt) = if self.r.chance(50) {
                    ("fmv.w.x", Fmt::S)
                } else {
                    ("fmv.d.x", Fmt::D)
                };
                let a = self.xs();
                let rd = self.fd(fmt);
                self.push(op, vec![format!("{op} f{rd}, x{a}")]);
            }
        }
    }

    fn fp_compare(&mut self) {
        let fmt = self.fmt();
        let op = self.r.pick(&["feq", "flt", "fle"]);
        let (a, b) = self.f_sources(fmt);
        let rd = self.xd();
        let sfx = fmt.sfx();
        self.push(
            &format!("{op}.{sfx}"),
            vec![format!("{op}.{sfx} x{rd}, f{a}, f{b}")],
        );
    }

    fn fp_class(&mut self) {
        let fmt = self.fmt();
        let a = self.fs(fmt);
        self.maybe_f_const(a, fmt);
        let rd = self.xd();
        let sfx = fmt.sfx();
        self.push(
            &format!("fclass.{sfx}"),
            vec![format!("fclass.{sfx} x{rd}, f{a}")],
        );
    }

    fn fp_mem(&mut self) {
        let (op, size) = self
            .r
            .pick(&[("flw", 4), ("fld", 8), ("fsw", 4), ("fsd", 8)]);
        let (base, off) = self.addr(size);
        let line = if op.starts_with("fl") {
            let fd = self.fd(if size == 4 { Fmt::S } else { Fmt::D });
            format!("{op} f{fd}, {off}(x{base})")
        } else {
            format!("{op} f{}, {off}(x{base})", self.r.below(32))
        };
        self.push(op, vec![line]);
    }

    fn fp_const(&mut self) {
        let fmt = self.fmt();
        let r = self.fd(fmt);
        let v = self.f_edge_bits(fmt);
        self.f_const(r, fmt, v);
    }

    fn fcsr(&mut self) {
        let rd = self.xd();
        match self.r.below(12) {
            0 => self.push("frflags", vec![format!("frflags x{rd}")]),
            1 => self.push("frrm", vec![format!("frrm x{rd}")]),
            2 => self.push("frcsr", vec![format!("frcsr x{rd}")]),
            3 => {
                let v = self.xs();
                self.push("fsflags", vec![format!("fsflags x{rd}, x{v}")]);
            }
            4 => {
                let op = self.r.pick(&["csrrwi", "csrrsi", "csrrci"]);
                let imm = self.r.below(32);
                self.push(
                    &format!("{op} fflags"),
                    vec![format!("{op} x{rd}, fflags, {imm}")],
                );
            }
            5 => {
                let imm = self.r.below(5);
                self.push("fsrmi", vec![format!("csrrwi x{rd}, frm, {imm}")]);
            }
            6 => {
                // Clearing bits of a legal frm (0-4) leaves it legal.
                let imm = self.r.below(32);
                self.push("csrrci frm", vec![format!("csrrci x{rd}, frm, {imm}")]);
            }
            7 => {
                let v = self.xs();
                self.push("csrrs fflags", vec![format!("csrrs x{rd}, fflags, x{v}")]);
            }
            8 => {
                let v = self.xs();
                let op = self.r.pick(&["csrrc", "csrrc"]);
                self.push(
                    &format!("{op} fcsr"),
                    vec![format!("{op} x{rd}, fcsr, x{v}")],
                );
            }
            9 => {
                // fscsr / fsrm with a value whose rounding-mode bits are legal.
                let t = self.xd_nz();
                let (csr, v) = if self.r.chance(50) {
                    let v = (self.r.u64() & !0xe0) | (self.r.below(5) << 5);
                    ("fcsr", v)
                } else {
                    ("frm", (self.r.u64() & !7) | self.r.below(5))
                };
                self.push(
                    &format!("csrrw {csr}"),
                    vec![
                        format!("li x{t}, {v:#x}"),
                        format!("csrrw x{rd}, {csr}, x{t}"),
                    ],
                );
            }
            10 => {
                // Set flag bits of fcsr without touching frm.
                let t = self.xd_nz();
                let v = self.r.u64() & !0xe0;
                self.push(
                    "csrrs fcsr",
                    vec![
                        format!("li x{t}, {v:#x}"),
                        format!("csrrs x{rd}, fcsr, x{t}"),
                    ],
                );
            }
            _ => {
                let v = self.xs();
                self.push("csrrc frm", vec![format!("csrrc x{rd}, frm, x{v}")]);
            }
        }
    }

    /// An instruction that traps: illegal encodings (each checked to be illegal in
    /// RV64GC), reserved rounding modes, misaligned AMOs, unmapped addresses,
    /// breakpoints; or an invalid frm, which makes later dynamic-rounding
    /// instructions illegal.
    fn trap(&mut self) {
        match self.r.below(9) {
            0..=2 => {
                let (name, w) = self.r.pick(ILLEGAL32);
                self.push(
                    &format!("illegal:{name}"),
                    vec![format!(".4byte {w:#010x}  # {name}")],
                );
            }
            3 => {
                let (name, h) = self.r.pick(ILLEGAL16);
                self.push(
                    &format!("illegal:{name}"),
                    vec![format!(".2byte {h:#06x}  # {name}")],
                );
            }
            4 => {
                // A reserved static rounding mode (5, 6), also on exact conversions.
                let rm = self.r.range(5, 6);
                let (name, f7, rs2, int_src) = self.r.pick(&[
                    ("fadd.s", 0x00, None, false),
                    ("fmul.d", 0x09, None, false),
                    ("fsqrt.d", 0x2d, Some(0), false),
                    ("fcvt.s.d", 0x20, Some(1), false),
                    ("fcvt.d.s", 0x21, Some(0), false),
                    ("fcvt.w.d", 0x61, Some(0), false),
                    ("fcvt.d.w", 0x69, Some(0), true),
                    ("fcvt.s.lu", 0x68, Some(3), true),
                ]);
                let a = if int_src {
                    format!("x{}", self.xs())
                } else {
                    format!("f{}", self.r.below(32))
                };
                let b = match rs2 {
                    Some(n) => format!("x{n}"),
                    None => format!("f{}", self.r.below(32)),
                };
                let rd = if name.starts_with("fcvt.w") {
                    format!("x{}", self.xd())
                } else {
                    format!("f{}", self.r.below(32))
                };
                self.push(
                    &format!("rm={rm}:{name}"),
                    vec![format!(".insn r 0x53, {rm}, {f7:#x}, {rd}, {a}, {b}")],
                );
            }
            5 => {
                // frm = 5..7: later dynamic-rounding instructions are illegal.
                let rd = self.xd();
                let v = self.r.range(5, 7);
                if self.r.chance(50) {
                    self.push("frm:=invalid", vec![format!("csrrwi x{rd}, frm, {v}")]);
                } else {
                    let t = self.xd_nz();
                    let v = (self.r.u64() & !0xe0) | ((v as u64) << 5);
                    self.push(
                        "fcsr:=invalid frm",
                        vec![
                            format!("li x{t}, {v:#x}"),
                            format!("csrrw x{rd}, fcsr, x{t}"),
                        ],
                    );
                }
                for _ in 0..self.r.below(4) {
                    self.fp_arith();
                }
            }
            6 => {
                // Misaligned AMO or LR (a misaligned SC: see ILLEGAL32's note).
                let t = self.xd_nz();
                let (w, size) = self.r.pick(&[("w", 4), ("d", 8)]);
                let off =
                    self.r.range(0, (BUF_BYTES as i64 - 8) / 8) * 8 + self.r.range(1, size - 1);
                let rd = self.xd();
                let src = self.xs();
                let op = self.r.pick(&["amoadd", "amoswap", "amomaxu", "lr"]);
                let insn = if op == "lr" {
                    format!("lr.{w} x{rd}, (x{t})")
                } else {
                    format!("{op}.{w} x{rd}, x{src}, (x{t})")
                };
                self.push(
                    &format!("misaligned {op}.{w}"),
                    vec![format!("addi x{t}, x2, {off}"), insn],
                );
            }
            7 => {
                // Unmapped (low) addresses: load, store, fetch.
                let t = self.xd_nz();
                let a = self.r.range(0, 0xfff0);
                let (name, insn) = match self.r.below(5) {
                    0 => ("load", format!("ld x{}, 8(x{t})", self.xd())),
                    1 => ("load", format!("lbu x{}, -1(x{t})", self.xd())),
                    2 => ("store", format!("sw x{}, 4(x{t})", self.xs())),
                    3 => ("fp store", format!("fsd f{}, 0(x{t})", self.r.below(32))),
                    _ => ("fetch", format!("jalr x{}, 0(x{t})", self.xd())),
                };
                self.push(
                    &format!("unmapped {name}"),
                    vec![format!("li x{t}, {a:#x}"), insn],
                );
            }
            _ => {
                if self.r.chance(50) {
                    self.push("ebreak", vec!["ebreak".into()]);
                } else {
                    self.push("c.ebreak", vec!["c.ebreak".into()]);
                }
            }
        }
    }

    /// A short loop: backward branches and jumps (the items' branches only go forwards).
    fn r#loop(&mut self) {
        let c = self.r.pick(CXD);
        let n = self.r.range(1, 4);
        let d = loop {
            let d = self.r.pick(XD);
            if d != c {
                break d;
            }
        };
        let a = self.xs();
        let body = match self.r.below(3) {
            0 => format!("add x{d}, x{d}, x{a}"),
            1 => format!("xori x{d}, x{a}, {}", self.r.range(-2048, 2047)),
            _ => format!("c.slli x{d}, {}", self.r.range(1, 63)),
        };
        self.wrote_x(d);
        self.wrote_x(c);
        let (name, lines) = match self.r.below(5) {
            0 => (
                "loop:bnez",
                vec![
                    format!("li x{c}, {n}"),
                    "1:".into(),
                    body,
                    format!("addi x{c}, x{c}, -1"),
                    format!("bne x{c}, x0, 1b"),
                ],
            ),
            1 => (
                "loop:c.bnez",
                vec![
                    format!("li x{c}, {n}"),
                    "1:".into(),
                    body,
                    format!("c.addi x{c}, -1"),
                    format!("c.bnez x{c}, 1b"),
                ],
            ),
            2 => (
                "loop:blt",
                vec![
                    format!("li x{c}, {n}"),
                    "1:".into(),
                    body,
                    format!("addi x{c}, x{c}, -1"),
                    format!("blt x0, x{c}, 1b"),
                ],
            ),
            3 => (
                "loop:c.j",
                vec![
                    format!("li x{c}, {n}"),
                    "c.j 2f".into(),
                    "1:".into(),
                    body,
                    format!("addi x{c}, x{c}, -1"),
                    format!("c.beqz x{c}, 3f"),
                    "2:".into(),
                    "c.j 1b".into(),
                    "3:".into(),
                ],
            ),
            _ => {
                let link = loop {
                    let r = self.xd();
                    if r != c {
                        break r;
                    }
                };
                (
                    "loop:jal",
                    vec![
                        format!("li x{c}, {n}"),
                        "jal x0, 2f".into(),
                        "1:".into(),
                        body,
                        format!("addi x{c}, x{c}, -1"),
                        format!("beq x{c}, x0, 3f"),
                        "2:".into(),
                        ".option push".into(),
                        ".option norvc".into(),
                        format!("jal x{link}, 1b"),
                        ".option pop".into(),
                        "3:".into(),
                    ],
                )
            }
        };
        self.push(name, lines);
    }

    /// Self-modifying code: copy an instruction into the code slot, FENCE.I, call it.
    fn smc(&mut self) {
        let regs = loop {
            let v: Vec<usize> = (0..3).map(|_| self.r.pick(XD)).collect();
            if v[0] != v[1] && v[1] != v[2] && v[0] != v[2] && !v.contains(&1) {
                break v;
            }
        };
        let (slot, tpl, word) = (regs[0], regs[1], regs[2]);
        let rd = loop {
            let r = self.r.pick(XD);
            if r != 1 {
                break r;
            }
        };
        let (a, b) = (self.xs(), self.xs());
        let mut rvc = false;
        let insn = match self.r.below(5) {
            0 => {
                let op = self
                    .r
                    .pick(&["add", "sub", "xor", "sraw", "mulh", "divu", "remw"]);
                format!("{op} x{rd}, x{a}, x{b}")
            }
            1 => {
                let op = self.r.pick(&["addi", "xori", "sltiu", "addiw"]);
                format!("{op} x{rd}, x{a}, {}", self.r.range(-2048, 2047))
            }
            2 => format!("slli x{rd}, x{a}, {}", self.r.below(64)),
            3 => {
                // Two compressed instructions fill the word: the slot's length changes.
                rvc = true;
                let b = loop {
                    let b = self.xs();
                    if b != 0 {
                        break b;
                    }
                };
                match self.r.below(3) {
                    0 => format!("c.addi x{rd}, {}; c.nop", self.r.range(1, 31)),
                    1 => format!("c.add x{rd}, x{b}; c.nop"),
                    _ => format!("c.mv x{rd}, x{b}; c.slli x{rd}, {}", self.r.range(1, 63)),
                }
            }
            _ => {
                let fmt = self.fmt();
                let op = self.r.pick(&["fadd", "fmul", "fdiv"]);
                let (fa, fb) = (self.fs(fmt), self.fs(fmt));
                let fd = self.fd(fmt);
                let rm = self.rm();
                format!("{op}.{} f{fd}, f{fa}, f{fb}, {rm}", fmt.sfx())
            }
        };
        self.wrote_x(rd);
        if excluded(self.exclude, "smc") {
            return;
        }
        self.items.push(Item {
            name: "smc".into(),
            lines: vec![
                format!("lla x{slot}, {{S}}"),
                format!("lla x{tpl}, {{T}}"),
                format!("lwu x{word}, 0(x{tpl})"),
                format!("sw x{word}, 0(x{slot})"),
                "fence.i".into(),
                format!("jalr x1, 0(x{slot})  # runs: {insn}"),
            ],
            skip: None,
            data: vec![
                ".balign 4".into(),
                "{T}:".into(),
                ".option push".into(),
                if rvc { ".option rvc" } else { ".option norvc" }.into(),
                insn,
                ".option pop".into(),
            ],
        });
    }

    fn one(&mut self) {
        let menu: &[(u64, Maker<'_>)] = &[
            (8, Gen::alu_rr),
            (8, Gen::alu_imm),
            (2, Gen::upper),
            (8, Gen::muldiv),
            (2, Gen::int_const),
            (5, Gen::load),
            (5, Gen::store),
            (3, Gen::branch),
            (1, Gen::jal),
            (1, Gen::jalr),
            (3, Gen::amo),
            (2, Gen::lrsc),
            (1, Gen::fence),
            (8, Gen::compressed),
            (1, Gen::hint),
            (8, Gen::fp_arith),
            (2, Gen::fp_sqrt),
            (3, |g| g.fp_binary_norm(&["fmin", "fmax"])),
            (3, |g| g.fp_binary_norm(&["fsgnj", "fsgnjn", "fsgnjx"])),
            (5, Gen::fp_fma),
            (1, Gen::fp_fma_cancel),
            (4, Gen::fp_to_int),
            (4, Gen::int_to_fp),
            (2, Gen::fp_to_fp),
            (2, Gen::fp_move),
            (3, Gen::fp_compare),
            (2, Gen::fp_class),
            (3, Gen::fp_mem),
            (2, Gen::fp_const),
            (3, Gen::fcsr),
            (1, Gen::smc),
            (1, Gen::r#loop),
        ];
        let total: u64 = menu.iter().map(|m| m.0).sum();
        let mut k = self.r.below(total);
        for (w, f) in menu {
            if k < *w {
                f(self);
                return;
            }
            k -= w;
        }
    }
}

fn generate(seed: u64, index: u64, len: usize, exclude: &[String]) -> Program {
    let mut r = Rng::new(seed ^ index.wrapping_mul(0xd134_2543_de82_ef95));
    let mut x = [0u64; 32];
    for v in x.iter_mut().skip(1) {
        *v = int_value(&mut r);
    }
    let mut f = [0u64; 32];
    let mut ftag = [None; 32];
    for i in 0..32 {
        let (v, t) = f_reg_value(&mut r);
        f[i] = v;
        ftag[i] = t;
    }
    let fcsr = (r.below(5) << 5) | if r.chance(30) { r.below(32) } else { 0 };
    let mut buf = [0u64; BUF_BYTES / 8];
    for w in buf.iter_mut() {
        *w = match r.below(3) {
            0 => int_value(&mut r),
            1 => f64_value(&mut r),
            _ => boxed(f32_value(&mut r)) ^ (r.u64() << 32),
        };
    }
    let mut g = Gen {
        r: &mut r,
        items: Vec::new(),
        recent_x: Vec::new(),
        ftag,
        exclude,
    };
    let mut guard = 0;
    while g.items.len() < len && guard < 100 * len {
        g.one();
        guard += 1;
    }
    g.items.truncate(len);
    // A quarter of the programs get one instruction that traps (or makes dynamic
    // rounding illegal) somewhere: the trap and the state at it are compared too.
    if g.r.chance(25) {
        let at = g.r.below(g.items.len() as u64 + 1) as usize;
        let before = g.items.len();
        g.trap();
        let added: Vec<Item> = g.items.drain(before..).collect();
        for (i, it) in added.into_iter().enumerate() {
            g.items.insert(at + i, it);
        }
        // Branches that now land elsewhere are harmless: targets stay forward.
    }
    let items = g.items;
    Program {
        x,
        f,
        fcsr,
        buf,
        items,
    }
}

// ---------------------------------------------------------------- assembly

/// One program of a batch: its label prefix, the program, and how many items to keep.
struct Job<'a> {
    tag: String,
    prog: &'a Program,
    keep: usize,
}

fn emit(asm: &mut String, data: &mut String, job: &Job) {
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

fn batch_source(jobs: &[Job]) -> String {
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

const LINKER_SCRIPT: &str = "ENTRY(_start)
SECTIONS {
  . = 0x80000000;
  .text : { *(.text) }
  . = ALIGN(0x1000);
  .data : { *(.data) }
  . = ALIGN(0x1000);
  .smc : { *(.smc) }
}
";

// ---------------------------------------------------------------- tools

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|d| {
            let p = d.join(name);
            p.is_file()
                && fs::metadata(&p).is_ok_and(|m| {
                    use std::os::unix::fs::PermissionsExt;
                    m.permissions().mode() & 0o111 != 0
                })
        })
    })
}

struct Ctx {
    dir: PathBuf,
    keep: bool,
    counter: AtomicUsize,
}

impl Ctx {
    /// None (after printing why) when a tool is missing.
    fn new(test: &str) -> Option<Ctx> {
        for tool in [
            "qemu-riscv64",
            "riscv64-linux-gnu-as",
            "riscv64-linux-gnu-ld",
        ] {
            if !on_path(tool) {
                let msg = format!(
                    "SKIPPED: differential: `{tool}` is not on PATH \
                     (apt-get install qemu-user gcc-riscv64-linux-gnu)"
                );
                println!("{msg}");
                eprintln!("{msg}");
                return None;
            }
        }
        let dir = std::env::temp_dir().join(format!("wio-diff-{}-{test}", std::process::id()));
        fs::create_dir_all(&dir).expect("temp dir");
        fs::write(dir.join("link.ld"), LINKER_SCRIPT).expect("linker script");
        let keep = std::env::var("WIO_DIFF_KEEP").is_ok_and(|v| v == "1");
        if keep {
            println!("differential: keeping generated files in {}", dir.display());
        }
        Some(Ctx {
            dir,
            keep,
            counter: AtomicUsize::new(0),
        })
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        if !self.keep {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

fn run_tool(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    if !out.status.success() {
        panic!(
            "{what} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Assembles and links `jobs` into one ELF; returns its path.
fn build(ctx: &Ctx, jobs: &[Job]) -> PathBuf {
    let n = ctx.counter.fetch_add(1, Ordering::Relaxed);
    let src = ctx.dir.join(format!("b{n}.S"));
    let obj = ctx.dir.join(format!("b{n}.o"));
    let elf = ctx.dir.join(format!("b{n}.elf"));
    fs::write(&src, batch_source(jobs)).expect("write asm");
    run_tool(
        Command::new("riscv64-linux-gnu-as")
            .args(["-march=rv64gc", "-mabi=lp64d", "-mno-relax", "-o"])
            .arg(&obj)
            .arg(&src),
        &format!("assembling {}", src.display()),
    );
    run_tool(
        Command::new("riscv64-linux-gnu-ld")
            .args(["--no-relax", "--no-warn-rwx-segments"])
            .arg("-T")
            .arg(ctx.dir.join("link.ld"))
            .arg("-o")
            .arg(&elf)
            .arg(&obj),
        &format!("linking {}", obj.display()),
    );
    if !ctx.keep {
        let _ = fs::remove_file(&obj);
    }
    elf
}

// ---------------------------------------------------------------- running

fn u64_at(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().unwrap())
}
fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().unwrap())
}
fn u16_at(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes(b[off..off + 2].try_into().unwrap())
}

/// RAM holding the ELF's loadable segments at their addresses.
fn load_elf(elf: &[u8]) -> Ram {
    assert_eq!(&elf[..4], b"\x7fELF", "not an ELF");
    let phoff = u64_at(elf, 32) as usize;
    let phentsize = u16_at(elf, 54) as usize;
    let phnum = u16_at(elf, 56) as usize;
    let mut segs = Vec::new();
    for i in 0..phnum {
        let ph = phoff + i * phentsize;
        if u32_at(elf, ph) != 1 {
            continue; // not PT_LOAD
        }
        let off = u64_at(elf, ph + 8) as usize;
        let paddr = u64_at(elf, ph + 24);
        let filesz = u64_at(elf, ph + 32) as usize;
        let memsz = u64_at(elf, ph + 40);
        segs.push((paddr, &elf[off..off + filesz], memsz));
    }
    let end = segs.iter().map(|s| s.0 + s.2).max().expect("no segment");
    let size = ((end - BASE + 0xffff) & !0xfff) as usize;
    let mut ram = Ram::new(BASE, size);
    for (addr, bytes, _) in segs {
        assert!(ram.load(addr, bytes), "segment at {addr:#x} outside RAM");
    }
    ram
}

/// Addresses of one program in the image, from the table at BASE.
#[derive(Clone, Copy, Debug)]
struct Entry {
    entry: u64,
    buf: u64,
    last: u64,
    end: u64,
    ecall_end: u64,
}

struct Image {
    ram: Ram,
    stub: u64,
    trap_end: u64,
    /// Where wio's trap vector saves x10-x12, scause, sepc, stval.
    save: u64,
    entries: Vec<Entry>,
}

fn image(elf_path: &Path) -> Image {
    let elf = fs::read(elf_path).expect("read ELF");
    let ram = load_elf(&elf);
    let word = |a: u64| u64_at(ram.slice(a, 8).expect("table in RAM"), 0);
    let n = word(BASE + 24) as usize;
    let entries = (0..n)
        .map(|i| {
            let e = BASE + 32 + 40 * i as u64;
            Entry {
                entry: word(e),
                buf: word(e + 8),
                last: word(e + 16),
                end: word(e + 24),
                ecall_end: word(e + 32),
            }
        })
        .collect();
    Image {
        stub: word(BASE),
        trap_end: word(BASE + 8),
        save: word(BASE + 16),
        ram,
        entries,
    }
}

/// Runs program `e` of the image in wio; its dump block and buffer, or why it did not finish.
fn run_wio(img: &Image, e: &Entry) -> Result<Vec<u8>, String> {
    let mut hart = Hart::new(img.ram.clone(), img.stub, 100);
    hart.enter_supervisor(img.stub, 0, 0);
    hart.x[5] = e.entry;
    let stop = hart.run(&mut NoDevices, BUDGET);
    match stop {
        Stop::SbiCall if hart.pc == e.ecall_end => Ok(hart
            .ram
            .slice(e.buf - STATE_BYTES as u64, OUT_BYTES as u64)
            .expect("dump in RAM")
            .to_vec()),
        Stop::SbiCall if hart.pc == img.trap_end => trap_record(img, e, &hart),
        other => Err(format!(
            "wio stopped with {other:?} at pc {:#x} without reaching the program's ecall",
            hart.pc
        )),
    }
}

/// The state at a trap, laid out as QEMU's signal handler writes it.
fn trap_record(img: &Image, e: &Entry, hart: &Hart) -> Result<Vec<u8>, String> {
    let saved = |i: u64| u64_at(hart.ram.slice(img.save + 8 * i, 8).expect("save area"), 0);
    let (cause, epc, tval) = (saved(3), saved(4), saved(5));
    // The signal Linux sends for the exception, and its si_addr.
    let (signal, addr) = match cause {
        2 => (4, epc),                          // illegal instruction: SIGILL
        3 => (5, epc),                          // breakpoint: SIGTRAP
        4 | 6 => (7, tval),                     // misaligned: SIGBUS
        1 | 5 | 7 | 12 | 13 | 15 => (11, tval), // access or page fault: SIGSEGV
        _ => {
            return Err(format!(
                "wio trapped with cause {cause:#x} (sepc={epc:#x} stval={tval:#x})"
            ))
        }
    };
    let mut slots = [0u64; SLOTS];
    slots[0] = TRAP_MAGIC | signal;
    slots[1..32].copy_from_slice(&hart.x[1..32]);
    for (i, r) in (10..13).enumerate() {
        slots[r] = saved(i as u64);
    }
    slots[32..64].copy_from_slice(&hart.fp.f);
    slots[SLOT_FCSR] = u64::from(hart.fp.fflags) | (u64::from(hart.fp.frm) << 5);
    slots[SLOT_TRAP_PC] = epc;
    slots[SLOT_TRAP_ADDR] = addr;
    let mut out: Vec<u8> = slots.iter().flat_map(|v| v.to_le_bytes()).collect();
    out.extend_from_slice(
        hart.ram
            .slice(e.buf, BUF_BYTES as u64)
            .expect("buffer in RAM"),
    );
    Ok(out)
}

/// What one program did in both.
struct Outcome {
    qemu: Result<Vec<u8>, String>,
    wio: Result<Vec<u8>, String>,
    /// Encoded bytes of the program's last kept item.
    last_bytes: Vec<u8>,
}

impl Outcome {
    fn differs(&self) -> bool {
        match (&self.qemu, &self.wio) {
            (Ok(q), Ok(w)) => q != w,
            _ => true,
        }
    }
}

/// Waits for `child`, killing it after `limit`; None when it was killed.
fn wait_for(mut child: std::process::Child, limit: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for qemu-riscv64") {
            return Some(status);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// `patch` (tests of this harness only) replaces 32-bit words in wio's copy of the image.
fn run_batch(ctx: &Ctx, jobs: &[Job], patch: Option<(u32, u32)>) -> Vec<Outcome> {
    let elf = build(ctx, jobs);
    let out_path = elf.with_extension("out");
    let err_path = elf.with_extension("err");
    let child = Command::new("qemu-riscv64")
        .args(["-cpu", QEMU_CPU])
        .arg(&elf)
        .stdin(Stdio::null())
        .stdout(fs::File::create(&out_path).expect("qemu output file"))
        .stderr(fs::File::create(&err_path).expect("qemu stderr file"))
        .spawn()
        .expect("start qemu-riscv64");
    let mut img = image(&elf);
    assert_eq!(img.entries.len(), jobs.len());
    if let Some((from, to)) = patch {
        let mut bytes = img.ram.bytes().to_vec();
        let mut hits = 0;
        for off in (0..bytes.len() - 4).step_by(2) {
            if u32_at(&bytes, off) == from {
                bytes[off..off + 4].copy_from_slice(&to.to_le_bytes());
                hits += 1;
            }
        }
        assert!(hits > 0, "patch word {from:#x} not found");
        assert!(img.ram.load(BASE, &bytes));
    }
    let wio: Vec<Result<Vec<u8>, String>> = img.entries.iter().map(|e| run_wio(&img, e)).collect();
    let status = wait_for(child, QEMU_TIMEOUT);
    let out = fs::read(&out_path).expect("qemu output");
    let qemu_err = format!(
        "qemu-riscv64 exited with {} after {} bytes: {}",
        status.map_or_else(|| "a timeout".to_string(), |s| s.to_string()),
        out.len(),
        fs::read_to_string(&err_path).unwrap_or_default().trim()
    );
    let status_ok = status.is_some_and(|s| s.success());
    if !ctx.keep {
        let _ = fs::remove_file(&out_path);
        let _ = fs::remove_file(&err_path);
        let _ = fs::remove_file(&elf);
        let _ = fs::remove_file(elf.with_extension("S"));
    }
    // A program that QEMU could not finish takes the rest of its batch down: run those again.
    let done = out.len() / OUT_BYTES;
    let rerun = if done + 1 < jobs.len() && !status_ok {
        run_batch(ctx, &jobs[done + 1..], patch)
    } else {
        Vec::new()
    };
    let mut outcomes: Vec<Outcome> = img
        .entries
        .iter()
        .zip(wio)
        .enumerate()
        .map(|(i, (e, w))| {
            let chunk = out.get(i * OUT_BYTES..(i + 1) * OUT_BYTES);
            let qemu = match chunk {
                Some(c) if status_ok || out.len() >= (i + 1) * OUT_BYTES => Ok(c.to_vec()),
                _ => Err(qemu_err.clone()),
            };
            let last_bytes = img
                .ram
                .slice(e.last, e.end - e.last)
                .map(<[u8]>::to_vec)
                .unwrap_or_default();
            Outcome {
                qemu,
                wio: w,
                last_bytes,
            }
        })
        .collect();
    for (i, o) in rerun.into_iter().enumerate() {
        outcomes[done + 1 + i].qemu = o.qemu;
    }
    outcomes
}

// ---------------------------------------------------------------- reporting

fn slot_name(s: usize) -> String {
    match s {
        0 => "trap".to_string(),
        1..=31 => format!("x{s}"),
        32..=63 => format!("f{}", s - 32),
        SLOT_FCSR => "fcsr".to_string(),
        SLOT_TRAP_PC => "trap pc".to_string(),
        SLOT_TRAP_ADDR => "trap addr".to_string(),
        _ => "spare".to_string(),
    }
}

fn fcsr_text(v: u64) -> String {
    let names = ["NX", "UF", "OF", "DZ", "NV"];
    let flags: Vec<&str> = (0..5)
        .rev()
        .filter(|b| v >> b & 1 != 0)
        .map(|b| names[b])
        .collect();
    format!(
        "{v:#x} (frm={} flags={})",
        (v >> 5) & 7,
        if flags.is_empty() {
            "-".to_string()
        } else {
            flags.join("|")
        }
    )
}

fn value_text(s: usize, v: u64) -> String {
    match s {
        SLOT_FCSR => fcsr_text(v),
        0 if v & TRAP_MAGIC == TRAP_MAGIC => {
            let sig = v & 0xff;
            let name = match sig {
                4 => "SIGILL",
                5 => "SIGTRAP",
                7 => "SIGBUS",
                11 => "SIGSEGV",
                _ => "?",
            };
            format!("signal {sig} ({name})")
        }
        0 => "none".to_string(),
        _ => format!("{v:#018x}"),
    }
}

/// Lines "name: qemu=… wio=…" for every difference.
fn diff_lines(q: &[u8], w: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    for s in 0..SLOTS {
        let (a, b) = (u64_at(q, 8 * s), u64_at(w, 8 * s));
        if a != b {
            out.push(format!(
                "{:>5}: qemu={}  wio={}",
                slot_name(s),
                value_text(s, a),
                value_text(s, b)
            ));
        }
    }
    for i in 0..BUF_BYTES / 8 {
        let off = STATE_BYTES + 8 * i;
        let (a, b) = (u64_at(q, off), u64_at(w, off));
        if a != b {
            out.push(format!(
                "mem[buf+{:#05x}]: qemu={a:#018x}  wio={b:#018x}",
                8 * i
            ));
        }
    }
    out
}

fn outcome_text(o: &Outcome) -> String {
    match (&o.qemu, &o.wio) {
        (Ok(q), Ok(w)) => diff_lines(q, w).join("\n    "),
        (q, w) => format!(
            "qemu: {}\n    wio: {}",
            q.as_ref().map_or_else(|e| e.clone(), |_| "ok".into()),
            w.as_ref().map_or_else(|e| e.clone(), |_| "ok".into())
        ),
    }
}

/// The item's encoding as instruction parcels.
fn words_text(b: &[u8]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i + 2 <= b.len() {
        let lo = u16_at(b, i);
        if lo & 3 != 3 {
            out.push(format!("{lo:#06x}"));
            i += 2;
        } else if i + 4 <= b.len() {
            out.push(format!("{:#010x}", u32_at(b, i)));
            i += 4;
        } else {
            break;
        }
    }
    out.join(" ")
}

/// Registers an item names (x<n>, f<n>).
fn regs_named(item: &Item) -> Vec<usize> {
    let mut regs = Vec::new();
    for line in &item.lines {
        for tok in line.split(|c: char| !c.is_ascii_alphanumeric()) {
            let slot = match tok.as_bytes().first() {
                Some(b'x') => tok[1..].parse::<usize>().ok(),
                Some(b'f') => tok[1..].parse::<usize>().ok().map(|n| n + 32),
                _ => None,
            };
            if let Some(s) = slot.filter(|&s| s < 64) {
                if !regs.contains(&s) {
                    regs.push(s);
                }
            }
        }
    }
    regs
}

fn program_text(p: &Program, keep: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "    initial state:");
    for (i, v) in p.x.iter().enumerate().skip(1) {
        let _ = writeln!(out, "      x{i} = {v:#018x}");
    }
    for (i, v) in p.f.iter().enumerate() {
        let _ = writeln!(out, "      f{i} = {v:#018x}");
    }
    let _ = writeln!(out, "      fcsr = {}", fcsr_text(p.fcsr));
    let _ = writeln!(
        out,
        "      (x2 = scratch buffer, x9 = x2 + 256; buffer contents are generated too)"
    );
    let _ = writeln!(out, "    body:");
    for (j, it) in p.items.iter().take(keep).enumerate() {
        let skip = it
            .skip
            .map(|s| format!("   [target: before item {}]", j + 1 + s));
        let _ = writeln!(
            out,
            "      {j:>3}: {}{}",
            it.lines.join("; "),
            skip.unwrap_or_default()
        );
    }
    out
}

struct Finding {
    /// Name of the first diverging item (or a description when it could not be shrunk).
    name: String,
    text: String,
}

/// Finds the first diverging item of failing program `p` and re-checks it alone.
fn shrink(ctx: &Ctx, label: &str, p: &Program, patch: Option<(u32, u32)>) -> Finding {
    let jobs: Vec<Job> = (0..=p.items.len())
        .map(|k| Job {
            tag: format!("s{k}"),
            prog: p,
            keep: k,
        })
        .collect();
    let outs = run_batch(ctx, &jobs, patch);
    let Some(k) = outs.iter().position(Outcome::differs) else {
        return Finding {
            name: "(not reproducible)".into(),
            text: format!("{label}: the mismatch did not reproduce when re-run by prefixes"),
        };
    };
    if k == 0 {
        return Finding {
            name: "(prologue/epilogue)".into(),
            text: format!(
                "{label}: differs with an empty body:\n    {}",
                outcome_text(&outs[0])
            ),
        };
    }
    let item = &p.items[k - 1];
    let before = outs[k - 1]
        .qemu
        .as_ref()
        .expect("prefix ran in qemu")
        .clone();
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{label}: first divergence at item {} of {}: `{}`  [{}]",
        k - 1,
        p.items.len(),
        item.lines.join("; "),
        words_text(&outs[k].last_bytes)
    );
    // The item alone, started from the state just before it.
    let mut single = Program {
        x: [0; 32],
        f: [0; 32],
        fcsr: u64_at(&before, SLOT_FCSR * 8),
        buf: [0; BUF_BYTES / 8],
        items: vec![item.clone()],
    };
    for i in 0..32 {
        single.x[i] = u64_at(&before, 8 * i);
        single.f[i] = u64_at(&before, 8 * (32 + i));
    }
    for (i, w) in single.buf.iter_mut().enumerate() {
        *w = u64_at(&before, STATE_BYTES + 8 * i);
    }
    let alone = run_batch(
        ctx,
        &[Job {
            tag: "one".into(),
            prog: &single,
            keep: 1,
        }],
        patch,
    );
    let _ = writeln!(text, "    state before (registers it names, and fcsr):");
    for s in regs_named(item) {
        let _ = writeln!(
            text,
            "      {:>4} = {}",
            slot_name(s),
            value_text(s, u64_at(&before, 8 * s))
        );
    }
    let _ = writeln!(text, "      fcsr = {}", fcsr_text(single.fcsr));
    if alone[0].differs() {
        let _ = writeln!(
            text,
            "    reproduced alone (one-instruction program from that state); after it:\n    {}",
            outcome_text(&alone[0])
        );
    } else {
        let _ = writeln!(
            text,
            "    NOT reproduced alone; after the prefix:\n    {}\n  prefix program:\n{}",
            outcome_text(&outs[k]),
            program_text(p, k)
        );
    }
    Finding {
        name: item.name.clone(),
        text,
    }
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
            .map(|&i| generate(seed, i, len, exclude))
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
    let Some(ctx) = Ctx::new("main") else {
        return;
    };
    let start = Instant::now();
    let seed = env_u64("WIO_DIFF_SEED", 0x5eed);
    let count = env_u64("WIO_DIFF_PROGRAMS", 1000);
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
        "differential: seed {seed:#x}, {} programs x {len} instructions vs qemu-riscv64: \
         {failures} differ ({:.1} s)",
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
    let Some(ctx) = Ctx::new("selftest") else {
        return;
    };
    let add = 0x0073_02b3; // add x5, x6, x7
    let sub = 0x4073_02b3; // sub x5, x6, x7
    let mut p = generate(1, 0, 0, &[]);
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
