//! Generator makers for fcsr/frm/fflags accesses, traps (illegal encodings, misaligned
//! AMOs, unmapped accesses, breakpoints), short loops and self-modifying code with
//! FENCE.I; the menu that picks one item, and `generate`, which builds program *i* of a seed.

use super::*;

impl Gen<'_> {
    pub(crate) fn fcsr(&mut self) {
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
    pub(crate) fn trap(&mut self) {
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
    pub(crate) fn r#loop(&mut self) {
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
    pub(crate) fn smc(&mut self) {
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

    pub(crate) fn one(&mut self) {
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
            // Only with `bitmanip` (weight 0 otherwise: the menu's draws are unchanged).
            (if self.bitmanip { 12 } else { 0 }, Gen::bitmanip),
            (if self.vector { 60 } else { 0 }, Gen::vector),
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

/// Program `index` of `seed`; with `bitmanip`, Zba/Zbb/Zbc/Zbs instructions join the
/// menu (without it, every program is what it was before they existed).
pub(crate) fn generate(
    seed: u64,
    index: u64,
    len: usize,
    exclude: &[String],
    bitmanip: bool,
    vector: bool,
) -> Program {
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
        bitmanip,
        vector,
        vsew: 1,
        vlmul8: 8,
    };
    let prologue = vector.then(|| g.vector_prologue());
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
    let mut items = g.items;
    if let Some(p) = prologue {
        items.insert(0, p);
    }
    Program {
        x,
        f,
        fcsr,
        buf,
        items,
        vector,
    }
}
