//! Generated programs: the item and program model, the generator's register and operand
//! choices, and its integer, memory, control-flow, atomic and fence instructions. The
//! compressed and floating-point makers are in `generate_rvc_fp`, the rest of the menu
//! (fcsr, traps, loops, self-modifying code) and `generate` in `generate_special`.

use super::*;

/// One generated instruction (sometimes a few, e.g. `li` or an LR/SC sequence).
/// `{L}` in its lines names its forward branch target, `skip` items ahead;
/// `{T}` names its `data` (lines for the data section), `{S}` the program's
/// code slot (8 writable, executable bytes: `nop; ret` at first).
#[derive(Clone, Debug, Default)]
pub(crate) struct Item {
    pub(crate) name: String,
    pub(crate) lines: Vec<String>,
    pub(crate) skip: Option<usize>,
    pub(crate) data: Vec<String>,
}

#[derive(Clone, Debug)]
pub(crate) struct Program {
    pub(crate) x: [u64; 32],
    pub(crate) f: [u64; 32],
    pub(crate) fcsr: u64,
    pub(crate) buf: [u64; BUF_BYTES / 8],
    pub(crate) items: Vec<Item>,
    /// A vector program: the assembly's epilogue stores v0-v31 and the vector CSRs.
    pub(crate) vector: bool,
}

/// Destination registers: all but x0 and the two scratch-buffer pointers x2 and x9.
pub(crate) const XD: &[usize] = &[
    1, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,
    28, 29, 30, 31,
];
/// Compressed-form destinations (x8-x15 without x9).
pub(crate) const CXD: &[usize] = &[8, 10, 11, 12, 13, 14, 15];
pub(crate) const RMS: &[&str] = &["rne", "rtz", "rdn", "rup", "rmm", "dyn", "dyn"];

/// 32-bit encodings that are illegal in RV64GC (QEMU runs with Zba/Zbb/Zbc/Zbs
/// and H turned off, so their encodings are illegal there too). Not here, on
/// purpose: a misaligned SC with no reservation, which QEMU 7.2 fails without
/// trapping (the spec says it raises a misaligned or access fault, as wio does),
/// and CSRRS/CSRRC on a read-only CSR with a register rs1 that holds zero, which
/// QEMU 7.2 lets read (the spec says it still writes, so it is illegal, as in wio).
pub(crate) const ILLEGAL32: &[(&str, u32)] = &[
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
pub(crate) const ILLEGAL16: &[(&str, u16)] = &[
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
pub(crate) type Maker<'a> = fn(&mut Gen<'a>);

pub(crate) struct Gen<'a> {
    pub(crate) r: &'a mut Rng,
    pub(crate) items: Vec<Item>,
    pub(crate) recent_x: Vec<usize>,
    pub(crate) ftag: [Option<Fmt>; 32],
    pub(crate) exclude: &'a [String],
    /// Zba/Zbb/Zbc/Zbs instructions are on the menu.
    pub(crate) bitmanip: bool,
    /// Vector instructions are on the menu (see `generate_vector`).
    pub(crate) vector: bool,
    /// The vector configuration the program has set: SEW in bytes, LMUL in eighths.
    pub(crate) vsew: usize,
    pub(crate) vlmul8: usize,
}

pub(crate) fn excluded(exclude: &[String], name: &str) -> bool {
    exclude.iter().any(|e| match e.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == e,
    })
}

impl Gen<'_> {
    pub(crate) fn push(&mut self, name: &str, lines: Vec<String>) {
        self.push_skip(name, lines, None);
    }
    pub(crate) fn push_skip(&mut self, name: &str, lines: Vec<String>, skip: Option<usize>) {
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
    pub(crate) fn wrote_x(&mut self, r: usize) {
        if r != 0 {
            self.recent_x.push(r);
            if self.recent_x.len() > 8 {
                self.recent_x.remove(0);
            }
        }
    }
    /// A destination (x0 now and then: those are HINTs, results dropped).
    pub(crate) fn xd(&mut self) -> usize {
        let r = if self.r.chance(3) { 0 } else { self.r.pick(XD) };
        self.wrote_x(r);
        r
    }
    pub(crate) fn xd_nz(&mut self) -> usize {
        let r = self.r.pick(XD);
        self.wrote_x(r);
        r
    }
    pub(crate) fn cxd(&mut self) -> usize {
        let r = self.r.pick(CXD);
        self.wrote_x(r);
        r
    }
    /// A source, often one written recently.
    pub(crate) fn xs(&mut self) -> usize {
        if !self.recent_x.is_empty() && self.r.chance(40) {
            self.r.pick(&self.recent_x.clone())
        } else if self.r.chance(5) {
            0
        } else {
            self.r.below(32) as usize
        }
    }
    pub(crate) fn fd(&mut self, fmt: Fmt) -> usize {
        let r = self.r.below(32) as usize;
        self.ftag[r] = Some(fmt);
        r
    }
    /// A source register, usually one that holds a value of `fmt`.
    pub(crate) fn fs(&mut self, fmt: Fmt) -> usize {
        let of_fmt: Vec<usize> = (0..32).filter(|&i| self.ftag[i] == Some(fmt)).collect();
        if !of_fmt.is_empty() && self.r.chance(75) {
            self.r.pick(&of_fmt)
        } else {
            self.r.below(32) as usize
        }
    }
    pub(crate) fn rm(&mut self) -> &'static str {
        self.r.pick(RMS)
    }
    /// A raw rm field value that is legal (0-4 or 7 = dynamic).
    pub(crate) fn rm_bits(&mut self) -> u32 {
        self.r.pick(&[0, 1, 2, 3, 4, 7, 7])
    }
    pub(crate) fn fmt(&mut self) -> Fmt {
        if self.r.chance(50) {
            Fmt::S
        } else {
            Fmt::D
        }
    }

    pub(crate) fn li(&mut self, rd: usize, v: u64) {
        self.push("li", vec![format!("li x{rd}, {:#x}", v)]);
    }
    /// Loads an edge value into an f register: `li` to a temporary, then fmv.
    pub(crate) fn f_const(&mut self, fr: usize, fmt: Fmt, bits: u64) {
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
    pub(crate) fn f_edge_bits(&mut self, fmt: Fmt) -> u64 {
        match fmt {
            Fmt::S => u64::from(f32_value(self.r)),
            Fmt::D => f64_value(self.r),
        }
    }
    /// Two related values: equal, negated, the two zeros, neighbours.
    pub(crate) fn f_pair(&mut self, fmt: Fmt) -> (u64, u64) {
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
    pub(crate) fn f_sources(&mut self, fmt: Fmt) -> (usize, usize) {
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
    pub(crate) fn maybe_f_const(&mut self, fr: usize, fmt: Fmt) {
        if self.r.chance(25) {
            let v = self.f_edge_bits(fmt);
            self.f_const(fr, fmt, v);
        }
    }

    // ---- integer

    pub(crate) fn alu_rr(&mut self) {
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

    /// A Zba/Zbb/Zbc/Zbs instruction: register-register, unary, or with an immediate.
    pub(crate) fn bitmanip(&mut self) {
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
        let line = match self.r.below(3) {
            0 => {
                let op = self.r.pick(&[
                    "add.uw",
                    "sh1add",
                    "sh2add",
                    "sh3add",
                    "sh1add.uw",
                    "sh2add.uw",
                    "sh3add.uw",
                    "andn",
                    "orn",
                    "xnor",
                    "max",
                    "maxu",
                    "min",
                    "minu",
                    "rol",
                    "ror",
                    "rolw",
                    "rorw",
                    "clmul",
                    "clmulh",
                    "clmulr",
                    "bclr",
                    "bext",
                    "binv",
                    "bset",
                ]);
                (op, format!("{op} x{rd}, x{a}, x{b}"))
            }
            1 => {
                let op = self.r.pick(&[
                    "clz", "clzw", "ctz", "ctzw", "cpop", "cpopw", "sext.b", "sext.h", "zext.h",
                    "orc.b", "rev8",
                ]);
                if op == "ctzw" {
                    // QEMU 7.2's ctzw counts on into the upper word when the lower one
                    // is zero (0x43f0_0000_0000_0000 gives 52, not 32 as the spec says
                    // and wio does): its operand gets a non-zero lower word, in the same
                    // item (nothing can land between the two).
                    let src = self.xd();
                    let v = int_value(self.r) | 1 << self.r.below(32);
                    let lines = vec![format!("li x{src}, {v:#x}"), format!("{op} x{rd}, x{src}")];
                    return self.push(op, lines);
                }
                (op, format!("{op} x{rd}, x{a}"))
            }
            _ => {
                let op = self.r.pick(&[
                    "slli.uw", "rori", "roriw", "bclri", "bexti", "binvi", "bseti",
                ]);
                let shamt = self.r.below(if op == "roriw" { 32 } else { 64 });
                (op, format!("{op} x{rd}, x{a}, {shamt}"))
            }
        };
        self.push(line.0, vec![line.1]);
    }

    pub(crate) fn alu_imm(&mut self) {
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

    pub(crate) fn upper(&mut self) {
        let op = self.r.pick(&["lui", "auipc"]);
        let imm = match self.r.below(3) {
            0 => self.r.pick(&[0, 0xfffff, 0x80000, 0x7ffff, 1]),
            _ => self.r.below(1 << 20),
        };
        let rd = self.xd();
        self.push(op, vec![format!("{op} x{rd}, {imm:#x}")]);
    }

    pub(crate) fn muldiv(&mut self) {
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

    pub(crate) fn int_const(&mut self) {
        let rd = self.xd_nz();
        let v = int_value(self.r);
        self.li(rd, v);
    }

    /// A base register and an in-buffer offset for an access of `size` bytes.
    pub(crate) fn addr(&mut self, size: i64) -> (usize, i64) {
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

    pub(crate) fn load(&mut self) {
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

    pub(crate) fn store(&mut self) {
        let (op, size) = self.r.pick(&[("sb", 1), ("sh", 2), ("sw", 4), ("sd", 8)]);
        let (base, off) = self.addr(size);
        let v = self.xs();
        self.push(op, vec![format!("{op} x{v}, {off}(x{base})")]);
    }

    pub(crate) fn skip(&mut self) -> usize {
        self.r.range(1, 4) as usize
    }

    pub(crate) fn branch(&mut self) {
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

    pub(crate) fn jal(&mut self) {
        let rd = self.xd();
        let skip = self.skip();
        self.push_skip("jal", vec![format!("jal x{rd}, {{L}}")], Some(skip));
    }

    pub(crate) fn jalr(&mut self) {
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

    pub(crate) fn aq_rl(&mut self) -> &'static str {
        self.r.pick(&["", ".aq", ".rl", ".aqrl"])
    }

    pub(crate) fn amo(&mut self) {
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

    pub(crate) fn lrsc(&mut self) {
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

    pub(crate) fn fence(&mut self) {
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
}
