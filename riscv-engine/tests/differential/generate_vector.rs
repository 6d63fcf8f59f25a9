//! Vector instructions (RVV 1.0, integer and memory) for `differential_vector`: a
//! prologue that fills v0-v31 from the scratch buffer and picks a configuration, then
//! random configurations, arithmetic, compares, carries, merges, narrowing and widening
//! forms, reductions, permutations, mask instructions and every kind of load and store.
//! Register groups are usually aligned to the current LMUL (sometimes not, which both
//! machines must refuse alike); the assembly's epilogue (`assembly::emit`) stores v0-v31
//! and the vector CSRs where they are compared.

use super::*;

/// VLEN of the harts on both sides (bits): 32 registers fill the 512-byte buffer.
pub(crate) const VLEN: u32 = 128;

const LMULS: [(usize, &str); 7] = [
    (1, "mf8"),
    (2, "mf4"),
    (4, "mf2"),
    (8, "m1"),
    (16, "m2"),
    (32, "m4"),
    (64, "m8"),
];

impl Gen<'_> {
    /// A legal configuration as a vsetvli (or vsetivli) line; remembers SEW and LMUL.
    fn vconfig(&mut self) -> Vec<String> {
        let sew = self.r.pick(&[1usize, 2, 4, 8]);
        let legal: Vec<(usize, &str)> = LMULS.iter().copied().filter(|(l, _)| sew <= *l).collect();
        let (lmul8, name) = self.r.pick(&legal);
        self.vsew = sew;
        self.vlmul8 = lmul8;
        let vlmax = VLEN as u64 / 8 * lmul8 as u64 / 8 / sew as u64;
        let policy = format!(
            "e{}, {name}, {}, {}",
            8 * sew,
            self.r.pick(&["ta", "tu"]),
            self.r.pick(&["ma", "mu"])
        );
        match self.r.below(3) {
            0 => vec![format!("vsetvli x31, x0, {policy}")],
            1 => vec![format!(
                "vsetivli x31, {}, {policy}",
                self.r.below(vlmax.min(31) + 1)
            )],
            _ => vec![
                format!("li x31, {}", self.r.below(vlmax + 4)),
                format!("vsetvli x31, x31, {policy}"),
            ],
        }
    }

    /// The program's first item: v0-v31 loaded from the buffer, then a configuration.
    pub(crate) fn vector_prologue(&mut self) -> Item {
        // (vcsr and vstart too: QEMU runs a batch's programs in one process, where an
        // earlier program's vxrm, vxsat or a trap's vstart would otherwise carry over.)
        let mut lines = vec![
            "csrwi vcsr, 0".to_string(),
            "csrwi vstart, 0".to_string(),
            "vsetvli x31, x0, e8, m8, ta, ma".to_string(),
            "vl8re8.v v0, (x2)".to_string(),
        ];
        for (k, reg) in [(1, 8), (2, 16), (3, 24)] {
            lines.push(format!("addi x31, x2, {}", 128 * k));
            lines.push(format!("vl8re8.v v{reg}, (x31)"));
        }
        lines.extend(self.vconfig());
        Item {
            name: "vector prologue".into(),
            lines,
            ..Item::default()
        }
    }

    /// A register group start for `regs` registers (aligned but for 1 in 100: both
    /// machines must refuse those alike).
    fn vreg(&mut self, regs: usize) -> usize {
        if self.r.chance(1) {
            return self.r.below(32) as usize;
        }
        regs * self.r.below((32 / regs) as u64) as usize
    }

    /// Like [`Gen::vreg`], but (nearly always) not overlapping the groups in `avoid`
    /// (start, registers): overlaps the spec reserves are then rare.
    fn vreg_avoiding(&mut self, regs: usize, avoid: &[(usize, usize)]) -> usize {
        let mut r = self.vreg(regs);
        for _ in 0..16 {
            if avoid.iter().all(|&(a, n)| r + regs <= a || a + n <= r) {
                break;
            }
            r = self.vreg(regs);
        }
        r
    }

    fn lregs(&self) -> usize {
        (self.vlmul8 / 8).max(1)
    }

    /// A widening form's registers: vd (2 * LMUL), vs2 (2 * LMUL for a .w form, else
    /// apart from vd) and, for a vector second operand (`form` ending in v), vs1 apart
    /// from vd.
    fn widening_operands(
        &mut self,
        form: &str,
        l: usize,
        wide: usize,
    ) -> (usize, usize, Option<usize>) {
        let vd = self.vreg(wide);
        let vs2 = if form.starts_with('w') {
            self.vreg(wide)
        } else {
            self.vreg_avoiding(l, &[(vd, wide)])
        };
        let vs1 = form
            .ends_with('v')
            .then(|| self.vreg_avoiding(l, &[(vd, wide)]));
        (vd, vs2, vs1)
    }

    /// ", v0.t" now and then (never for a destination v0, which masked forms refuse).
    fn vmask(&mut self, vd: usize) -> &'static str {
        if vd != 0 && self.r.chance(30) {
            ", v0.t"
        } else {
            ""
        }
    }

    /// The last operand of a .vv / .vx / .vi form.
    fn vlast(&mut self, form: &str, uimm: bool) -> String {
        match form {
            "vv" | "wv" | "vs" | "mm" | "vvm" => format!("v{}", self.vreg(self.lregs())),
            "vx" | "wx" | "vxm" => format!("x{}", self.xs()),
            _ => {
                if uimm {
                    self.r.below(32).to_string()
                } else {
                    (self.r.below(32) as i64 - 16).to_string()
                }
            }
        }
    }

    /// One vector instruction (or a short sequence).
    pub(crate) fn vector(&mut self) {
        let l = self.lregs();
        match self.r.below(17) {
            14..=16 => self.vector_fp(),
            0 => {
                let lines = self.vconfig();
                self.push("vsetvli", lines);
            }
            1..=3 => {
                const OPS: &[(&str, &[&str], bool)] = &[
                    ("vadd", &["vv", "vx", "vi"], false),
                    ("vsub", &["vv", "vx"], false),
                    ("vrsub", &["vx", "vi"], false),
                    ("vminu", &["vv", "vx"], false),
                    ("vmin", &["vv", "vx"], false),
                    ("vmaxu", &["vv", "vx"], false),
                    ("vmax", &["vv", "vx"], false),
                    ("vand", &["vv", "vx", "vi"], false),
                    ("vor", &["vv", "vx", "vi"], false),
                    ("vxor", &["vv", "vx", "vi"], false),
                    ("vsll", &["vv", "vx", "vi"], true),
                    ("vsrl", &["vv", "vx", "vi"], true),
                    ("vsra", &["vv", "vx", "vi"], true),
                    ("vsaddu", &["vv", "vx", "vi"], false),
                    ("vsadd", &["vv", "vx", "vi"], false),
                    ("vssubu", &["vv", "vx"], false),
                    ("vssub", &["vv", "vx"], false),
                    ("vsmul", &["vv", "vx"], false),
                    ("vssrl", &["vv", "vx", "vi"], true),
                    ("vssra", &["vv", "vx", "vi"], true),
                    ("vmul", &["vv", "vx"], false),
                    ("vmulh", &["vv", "vx"], false),
                    ("vmulhu", &["vv", "vx"], false),
                    ("vmulhsu", &["vv", "vx"], false),
                    ("vdivu", &["vv", "vx"], false),
                    ("vdiv", &["vv", "vx"], false),
                    ("vremu", &["vv", "vx"], false),
                    ("vrem", &["vv", "vx"], false),
                    ("vaaddu", &["vv", "vx"], false),
                    ("vaadd", &["vv", "vx"], false),
                    ("vasubu", &["vv", "vx"], false),
                    ("vasub", &["vv", "vx"], false),
                ];
                let (op, forms, uimm) = self.r.pick(OPS);
                let form = self.r.pick(forms);
                let (vd, vs2) = (self.vreg(l), self.vreg(l));
                let last = self.vlast(form, uimm);
                let m = self.vmask(vd);
                let mut lines = Vec::new();
                if self.r.chance(20) {
                    lines.push(format!("csrwi vxrm, {}", self.r.below(4)));
                }
                lines.push(format!("{op}.{form} v{vd}, v{vs2}, {last}{m}"));
                self.push(op, lines);
            }
            4 => {
                // Multiply-add: vd, vs1/rs1, vs2 order.
                let op = self.r.pick(&["vmacc", "vnmsac", "vmadd", "vnmsub"]);
                let form = self.r.pick(&["vv", "vx"]);
                let (vd, vs2) = (self.vreg(l), self.vreg(l));
                let first = self.vlast(form, false);
                let m = self.vmask(vd);
                self.push(op, vec![format!("{op}.{form} v{vd}, {first}, v{vs2}{m}")]);
            }
            5 => {
                // Compares into a mask register.
                let (op, forms): (&str, &[&str]) = self.r.pick(&[
                    ("vmseq", &["vv", "vx", "vi"][..]),
                    ("vmsne", &["vv", "vx", "vi"]),
                    ("vmsltu", &["vv", "vx"]),
                    ("vmslt", &["vv", "vx"]),
                    ("vmsleu", &["vv", "vx", "vi"]),
                    ("vmsle", &["vv", "vx", "vi"]),
                    ("vmsgtu", &["vx", "vi"]),
                    ("vmsgt", &["vx", "vi"]),
                ]);
                let form = self.r.pick(forms);
                let (vd, vs2) = (self.r.below(32) as usize, self.vreg(l));
                let last = self.vlast(form, false);
                let m = self.vmask(vd);
                self.push(op, vec![format!("{op}.{form} v{vd}, v{vs2}, {last}{m}")]);
            }
            6 => {
                // Carries, merges and moves.
                let vd = self.vreg(l).max(l);
                let vs2 = self.vreg(l);
                let line = match self.r.below(8) {
                    0 => format!("vadc.vvm v{vd}, v{vs2}, {}, v0", self.vlast("vv", false)),
                    1 => format!("vadc.vxm v{vd}, v{vs2}, x{}, v0", self.xs()),
                    2 => format!("vsbc.vvm v{vd}, v{vs2}, {}, v0", self.vlast("vv", false)),
                    3 => {
                        let md = self.r.below(32);
                        let (f, carry) = (self.r.pick(&["vmadc", "vmsbc"]), self.r.chance(50));
                        let form = if carry { "vvm" } else { "vv" };
                        let tail = if carry { ", v0" } else { "" };
                        format!(
                            "{f}.{form} v{md}, v{vs2}, {}{tail}",
                            self.vlast("vv", false)
                        )
                    }
                    4 => format!("vmerge.vvm v{vd}, v{vs2}, {}, v0", self.vlast("vv", false)),
                    5 => format!("vmerge.vim v{vd}, v{vs2}, {}, v0", self.vlast("vi", false)),
                    6 => match self.r.below(3) {
                        0 => format!("vmv.v.v v{vd}, {}", self.vlast("vv", false)),
                        1 => format!("vmv.v.x v{vd}, x{}", self.xs()),
                        _ => format!("vmv.v.i v{vd}, {}", self.vlast("vi", false)),
                    },
                    _ => {
                        let nr = self.r.pick(&[1usize, 2, 4, 8]);
                        let (a, b) = (self.vreg(nr), self.vreg(nr));
                        format!("vmv{nr}r.v v{a}, v{b}")
                    }
                };
                self.push("vector move", vec![line]);
            }
            7 if self.vsew <= 4 && self.vlmul8 <= 32 => {
                // Narrowing and widening.
                let wide = (2 * self.vlmul8 / 8).max(1);
                let line = if self.r.chance(40) {
                    let op = self.r.pick(&["vnsrl", "vnsra", "vnclipu", "vnclip"]);
                    let form = self.r.pick(&["wv", "wx", "wi"]);
                    let vs2 = self.vreg(wide);
                    let vd = if self.r.chance(30) {
                        vs2
                    } else {
                        self.vreg_avoiding(l, &[(vs2, wide)])
                    };
                    let last = self.vlast(form, true);
                    let m = self.vmask(vd);
                    format!("{op}.{form} v{vd}, v{vs2}, {last}{m}")
                } else {
                    let (op, forms): (&str, &[&str]) = self.r.pick(&[
                        ("vwaddu", &["vv", "vx", "wv", "wx"][..]),
                        ("vwadd", &["vv", "vx", "wv", "wx"]),
                        ("vwsubu", &["vv", "vx", "wv", "wx"]),
                        ("vwsub", &["vv", "vx", "wv", "wx"]),
                        ("vwmulu", &["vv", "vx"]),
                        ("vwmul", &["vv", "vx"]),
                        ("vwmulsu", &["vv", "vx"]),
                    ]);
                    let form = self.r.pick(forms);
                    let (vd, vs2, vs1) = self.widening_operands(form, l, wide);
                    let last = match vs1 {
                        Some(r) => format!("v{r}"),
                        None => self.vlast(form, false),
                    };
                    let m = self.vmask(vd);
                    if self.r.chance(30) {
                        let op = self.r.pick(&["vwmaccu", "vwmacc", "vwmaccsu", "vwmaccus"]);
                        let form = if op == "vwmaccus" {
                            "vx"
                        } else {
                            self.r.pick(&["vv", "vx"])
                        };
                        let first = if form == "vv" {
                            format!("v{}", self.vreg_avoiding(l, &[(vd, wide)]))
                        } else {
                            self.vlast(form, false)
                        };
                        let vs2 = self.vreg_avoiding(l, &[(vd, wide)]);
                        format!("{op}.{form} v{vd}, {first}, v{vs2}{m}")
                    } else {
                        format!("{op}.{form} v{vd}, v{vs2}, {last}{m}")
                    }
                };
                self.push("vector narrow/widen", vec![line]);
            }
            8 => {
                // Reductions.
                let mut op = self.r.pick(&[
                    "vredsum",
                    "vredand",
                    "vredor",
                    "vredxor",
                    "vredminu",
                    "vredmin",
                    "vredmaxu",
                    "vredmax",
                    "vwredsumu",
                    "vwredsum",
                ]);
                if op.starts_with("vw") && self.vsew == 8 {
                    op = "vredsum";
                }
                let (vd, vs2, vs1) = (self.r.below(32), self.vreg(l), self.r.below(32));
                let m = self.vmask(vd as usize);
                self.push(op, vec![format!("{op}.vs v{vd}, v{vs2}, v{vs1}{m}")]);
            }
            9 => {
                // Permutations (the destination apart from the sources, as they require).
                let vs2 = self.vreg(l);
                let vd = self.vreg_avoiding(l, &[(vs2, l), (0, 1)]);
                let m = self.vmask(vd);
                let line = match self.r.below(6) {
                    0 => {
                        let vs1 = self.vreg_avoiding(l, &[(vd, l)]);
                        format!("vrgather.vv v{vd}, v{vs2}, v{vs1}{m}")
                    }
                    1 => format!("vrgather.vx v{vd}, v{vs2}, x{}{m}", self.xs()),
                    2 => format!("vrgather.vi v{vd}, v{vs2}, {}{m}", self.r.below(32)),
                    3 => {
                        let op = self.r.pick(&["vslideup", "vslidedown"]);
                        if self.r.chance(50) {
                            format!("{op}.vi v{vd}, v{vs2}, {}{m}", self.r.below(32))
                        } else {
                            let x = self.xd_nz();
                            let offset = self.r.below(40);
                            self.li(x, offset);
                            format!("{op}.vx v{vd}, v{vs2}, x{x}{m}")
                        }
                    }
                    4 => {
                        let op = self.r.pick(&["vslide1up", "vslide1down"]);
                        format!("{op}.vx v{vd}, v{vs2}, x{}{m}", self.xs())
                    }
                    _ => {
                        let vs1 = self.vreg_avoiding(1, &[(vd, l)]);
                        format!("vcompress.vm v{vd}, v{vs2}, v{vs1}")
                    }
                };
                self.push("vector permute", vec![line]);
            }
            10 => {
                // Mask instructions, scalar moves, iota, id, extensions.
                let line = match self.r.below(9) {
                    0 => {
                        let op = self.r.pick(&[
                            "vmandn", "vmand", "vmor", "vmxor", "vmorn", "vmnand", "vmnor",
                            "vmxnor",
                        ]);
                        format!(
                            "{op}.mm v{}, v{}, v{}",
                            self.r.below(32),
                            self.r.below(32),
                            self.r.below(32)
                        )
                    }
                    1 => {
                        let (op, vs2) = (self.r.pick(&["vcpop.m", "vfirst.m"]), self.r.below(32));
                        let rd = self.xd();
                        let m = if self.r.chance(30) { ", v0.t" } else { "" };
                        format!("{op} x{rd}, v{vs2}{m}")
                    }
                    2 => {
                        let op = self.r.pick(&["vmsbf.m", "vmsif.m", "vmsof.m"]);
                        let vs2 = self.r.below(32) as usize;
                        let vd = self.vreg_avoiding(1, &[(vs2, 1)]);
                        let m = self.vmask(vd);
                        format!("{op} v{vd}, v{vs2}{m}")
                    }
                    3 => {
                        let vs2 = self.r.below(32) as usize;
                        let vd = self.vreg_avoiding(l, &[(vs2, 1), (0, 1)]);
                        let m = self.vmask(vd);
                        format!("viota.m v{vd}, v{vs2}{m}")
                    }
                    4 => {
                        let vd = self.vreg(l);
                        let m = self.vmask(vd);
                        format!("vid.v v{vd}{m}")
                    }
                    5 => format!("vmv.x.s x{}, v{}", self.xd(), self.r.below(32)),
                    6 => format!("vmv.s.x v{}, x{}", self.r.below(32), self.xs()),
                    _ => {
                        let f = self.r.pick(&[2usize, 4, 8]);
                        let f = if self.vsew < f || self.vlmul8 < f {
                            2
                        } else {
                            f
                        };
                        let src = (self.vlmul8 / f / 8).max(1);
                        let op = self.r.pick(&["vzext", "vsext"]);
                        let vd = self.vreg(l);
                        let vs2 = self.vreg_avoiding(src, &[(vd, l)]);
                        let m = self.vmask(vd);
                        format!("{op}.vf{f} v{vd}, v{vs2}{m}")
                    }
                };
                self.push("vector mask", vec![line]);
            }
            _ => self.vector_mem(),
        }
    }

    /// A vector floating-point instruction (FP32/FP64 elements; other SEWs make most of
    /// them illegal, which both machines must agree on).
    fn vector_fp(&mut self) {
        // The round-towards-zero and round-to-odd conversions (vf[w|n]cvt.rtz.*,
        // vfncvt.rod.f.f.w) are left out: QEMU 7.2 aborts on them (an assertion in its
        // translator, decode_save_opc), taking the whole batch with it; the unit tests
        // cover them.
        // QEMU 7.2 computes half precision at SEW 16 (it predates Zvfh); the spec (and wio)
        // make those illegal without Zvfh. Only the conversions that read or write FP32
        // at SEW 16 are legal there, so those alone are generated at SEW 8 and 16.
        if self.vsew < 4 {
            if self.vsew == 2 {
                let l = self.lregs();
                let wide = (2 * self.vlmul8 / 8).max(1);
                let (op, narrow) = self.r.pick(&[
                    ("vfncvt.xu.f.w", true),
                    ("vfncvt.x.f.w", true),
                    ("vfwcvt.f.xu.v", false),
                    ("vfwcvt.f.x.v", false),
                ]);
                let (dregs, sregs) = if narrow { (l, wide) } else { (wide, l) };
                let vs2 = self.vreg(sregs);
                let vd = self.vreg_avoiding(dregs, &[(vs2, sregs)]);
                let m = self.vmask(vd);
                let x = self.xd_nz();
                let lmul = LMULS
                    .iter()
                    .find(|(l, _)| *l == self.vlmul8)
                    .map_or("m1", |l| l.1);
                let config = format!("vsetvli x{x}, x0, e16, {lmul}, tu, mu");
                self.push("vector fp", vec![config, format!("{op} v{vd}, v{vs2}{m}")]);
            }
            return;
        }
        let l = self.lregs();
        let wide = (2 * self.vlmul8 / 8).max(1);
        let fs = self.r.below(32);
        let line = match self.r.below(9) {
            0 | 1 => {
                let (op, forms): (&str, &[&str]) = self.r.pick(&[
                    ("vfadd", &["vv", "vf"][..]),
                    ("vfsub", &["vv", "vf"]),
                    ("vfrsub", &["vf"]),
                    ("vfmin", &["vv", "vf"]),
                    ("vfmax", &["vv", "vf"]),
                    ("vfsgnj", &["vv", "vf"]),
                    ("vfsgnjn", &["vv", "vf"]),
                    ("vfsgnjx", &["vv", "vf"]),
                    ("vfdiv", &["vv", "vf"]),
                    ("vfrdiv", &["vf"]),
                    ("vfmul", &["vv", "vf"]),
                ]);
                let form = self.r.pick(forms);
                let (vd, vs2) = (self.vreg(l), self.vreg(l));
                let last = if form == "vv" {
                    format!("v{}", self.vreg(l))
                } else {
                    format!("f{fs}")
                };
                let m = self.vmask(vd);
                format!("{op}.{form} v{vd}, v{vs2}, {last}{m}")
            }
            2 => {
                let op = self.r.pick(&[
                    "vfmacc", "vfnmacc", "vfmsac", "vfnmsac", "vfmadd", "vfnmadd", "vfmsub",
                    "vfnmsub",
                ]);
                let (vd, vs2) = (self.vreg(l), self.vreg(l));
                let first = if self.r.chance(50) {
                    format!("v{}", self.vreg(l))
                } else {
                    format!("f{fs}")
                };
                let form = if first.starts_with('v') { "vv" } else { "vf" };
                let m = self.vmask(vd);
                format!("{op}.{form} v{vd}, {first}, v{vs2}{m}")
            }
            3 => {
                let (op, forms): (&str, &[&str]) = self.r.pick(&[
                    ("vmfeq", &["vv", "vf"][..]),
                    ("vmfle", &["vv", "vf"]),
                    ("vmflt", &["vv", "vf"]),
                    ("vmfne", &["vv", "vf"]),
                    ("vmfgt", &["vf"]),
                    ("vmfge", &["vf"]),
                ]);
                let form = self.r.pick(forms);
                let (vd, vs2) = (self.r.below(32) as usize, self.vreg(l));
                let last = if form == "vv" {
                    format!("v{}", self.vreg(l))
                } else {
                    format!("f{fs}")
                };
                let m = self.vmask(vd);
                format!("{op}.{form} v{vd}, v{vs2}, {last}{m}")
            }
            4 if self.vsew == 8 => {
                // (Widening from FP64 would be 128 bits; narrowing to SEW 64 has no source.)
                let (vd, vs2) = (self.vreg(l), self.vreg(l));
                let m = self.vmask(vd);
                let op = self.r.pick(&[
                    "vfsqrt.v",
                    "vfclass.v",
                    "vfcvt.x.f.v",
                    "vfcvt.f.xu.v",
                    "vfrsqrt7.v",
                    "vfrec7.v",
                ]);
                format!("{op} v{vd}, v{vs2}{m}")
            }
            4 => {
                // Unary: sqrt, class and the conversions.
                let (op, dw, sw) = self.r.pick(&[
                    ("vfsqrt.v", 1usize, 1usize),
                    ("vfclass.v", 1, 1),
                    ("vfrsqrt7.v", 1, 1),
                    ("vfrec7.v", 1, 1),
                    ("vfcvt.xu.f.v", 1, 1),
                    ("vfcvt.x.f.v", 1, 1),
                    ("vfcvt.f.xu.v", 1, 1),
                    ("vfcvt.f.x.v", 1, 1),
                    ("vfwcvt.xu.f.v", 2, 1),
                    ("vfwcvt.x.f.v", 2, 1),
                    ("vfwcvt.f.xu.v", 2, 1),
                    ("vfwcvt.f.x.v", 2, 1),
                    ("vfwcvt.f.f.v", 2, 1),
                    ("vfncvt.xu.f.w", 1, 2),
                    ("vfncvt.x.f.w", 1, 2),
                    ("vfncvt.f.xu.w", 1, 2),
                    ("vfncvt.f.x.w", 1, 2),
                    ("vfncvt.f.f.w", 1, 2),
                ]);
                let (dregs, sregs) = (
                    if dw == 2 { wide } else { l },
                    if sw == 2 { wide } else { l },
                );
                let vs2 = self.vreg(sregs);
                let vd = self.vreg_avoiding(dregs, &[(vs2, sregs)]);
                let m = self.vmask(vd);
                format!("{op} v{vd}, v{vs2}{m}")
            }
            5 => {
                let op = self.r.pick(&[
                    "vfredusum",
                    "vfredosum",
                    "vfredmin",
                    "vfredmax",
                    "vfwredusum",
                    "vfwredosum",
                ]);
                let (vd, vs2, vs1) = (self.r.below(32), self.vreg(l), self.r.below(32));
                let m = self.vmask(vd as usize);
                format!("{op}.vs v{vd}, v{vs2}, v{vs1}{m}")
            }
            6 | 7 if self.vsew == 4 => {
                // Widening.
                let (op, forms): (&str, &[&str]) = self.r.pick(&[
                    ("vfwadd", &["vv", "vf", "wv", "wf"][..]),
                    ("vfwsub", &["vv", "vf", "wv", "wf"]),
                    ("vfwmul", &["vv", "vf"]),
                    ("vfwmacc", &["vv", "vf"]),
                    ("vfwnmacc", &["vv", "vf"]),
                    ("vfwmsac", &["vv", "vf"]),
                    ("vfwnmsac", &["vv", "vf"]),
                ]);
                let form = self.r.pick(forms);
                let (vd, vs2, vs1) = self.widening_operands(form, l, wide);
                let other = vs1.map_or(format!("f{fs}"), |r| format!("v{r}"));
                let m = self.vmask(vd);
                if op.contains("macc") || op.contains("msac") {
                    format!("{op}.{form} v{vd}, {other}, v{vs2}{m}")
                } else {
                    format!("{op}.{form} v{vd}, v{vs2}, {other}{m}")
                }
            }
            _ => {
                let vd = self.vreg(l);
                match self.r.below(5) {
                    0 => format!("vfmv.f.s f{fs}, v{}", self.r.below(32)),
                    1 => format!("vfmv.s.f v{}, f{fs}", self.r.below(32)),
                    2 => format!("vfmv.v.f v{vd}, f{fs}"),
                    3 => format!(
                        "vfmerge.vfm v{}, v{}, f{fs}, v0",
                        self.vreg(l).max(l),
                        self.vreg(l)
                    ),
                    _ => {
                        let op = self.r.pick(&["vfslide1up", "vfslide1down"]);
                        let vs2 = self.vreg(l);
                        let vd = self.vreg_avoiding(l, &[(vs2, l), (0, 1)]);
                        format!("{op}.vf v{vd}, v{vs2}, f{fs}")
                    }
                }
            }
        };
        // The configuration this generator assumes first (a branch may have skipped the
        // last vsetvli, and FP legality depends on SEW).
        let x = self.xd_nz();
        let lmul = LMULS
            .iter()
            .find(|(l, _)| *l == self.vlmul8)
            .map_or("m1", |l| l.1);
        let config = format!("vsetvli x{x}, x0, e{}, {lmul}, tu, mu", 8 * self.vsew);
        self.push("vector fp", vec![config, line]);
    }

    /// A vector load or store through the buffer (x2 its start, x9 its middle).
    fn vector_mem(&mut self) {
        let legal: Vec<usize> = [8usize, 16, 32, 64]
            .into_iter()
            .filter(|e| {
                let emul8 = e / 8 * self.vlmul8 / self.vsew;
                (1..=64).contains(&emul8) && e / 8 * self.vlmul8 >= self.vsew
            })
            .collect();
        let eew = if legal.is_empty() || self.r.chance(3) {
            self.r.pick(&[8usize, 16, 32, 64])
        } else {
            self.r.pick(&legal)
        };
        let base = if self.r.chance(50) { 2 } else { 9 };
        let store = self.r.chance(40);
        let emul = (eew * self.vlmul8 / (8 * self.vsew) / 8).clamp(1, 8);
        let vd = self.vreg(emul);
        let m = self.vmask(if store { 1 } else { vd });
        let l = if store { "vs" } else { "vl" };
        let mut lines = Vec::new();
        let name;
        match self.r.below(7) {
            0 | 1 => {
                let ff = if !store && self.r.chance(25) {
                    "ff"
                } else {
                    ""
                };
                name = "vector unit-stride";
                lines.push(format!(
                    "{}e{eew}{ff}.v v{vd}, (x{base}){m}",
                    if store { "vs" } else { "vl" }
                ));
            }
            2 => {
                name = "vector strided";
                let x = self.xd_nz();
                // From the middle (x9), every element within the buffer: a stride of at
                // most 240 / VLMAX bytes either way (a wild store would write the next
                // program's data in QEMU's one process, and not in wio's fresh copy).
                let vlmax = (VLEN as usize / 8 * self.vlmul8 / 8 / self.vsew).max(1);
                let most = (240 / vlmax) as u64;
                lines.push(format!(
                    "li x{x}, {}",
                    self.r.below(2 * most + 1) as i64 - most as i64
                ));
                lines.push(format!("{l}se{eew}.v v{vd}, (x9), x{x}{m}"));
            }
            3 => {
                // Indexed: offsets from random data, masked to 0..120 in steps of 8.
                name = "vector indexed";
                let ireg = self.vreg_avoiding(self.lregs(), &[(vd, self.lregs())]);
                let src = self.vreg(self.lregs());
                let x = self.xd_nz();
                // The configuration this generator assumes (a branch may have skipped the
                // last vsetvli), so that the mask bounds every index.
                let lmul = LMULS
                    .iter()
                    .find(|(l, _)| *l == self.vlmul8)
                    .map_or("m1", |l| l.1);
                lines.push(format!(
                    "vsetvli x{x}, x0, e{}, {lmul}, tu, mu",
                    8 * self.vsew
                ));
                lines.push(format!("li x{x}, 0x78"));
                lines.push(format!("vand.vx v{ireg}, v{src}, x{x}"));
                let kind = self.r.pick(&["u", "o"]);
                let ieew = 8 * self.vsew;
                let data = if store { "vs" } else { "vl" };
                lines.push(format!("{data}{kind}xei{ieew}.v v{vd}, (x2), v{ireg}{m}"));
            }
            4 => {
                name = "vector segment";
                let nf = 2 + self.r.below((8 / emul as u64).clamp(2, 4) - 1);
                let op = if store { "vsseg" } else { "vlseg" };
                lines.push(format!("{op}{nf}e{eew}.v v{vd}, (x{base}){m}"));
            }
            5 => {
                name = "vector whole register";
                let nr = self.r.pick(&[1usize, 2, 4, 8]);
                let r = self.vreg(nr);
                if store {
                    lines.push(format!("vs{nr}r.v v{r}, (x2)"));
                } else {
                    lines.push(format!("vl{nr}re{eew}.v v{r}, (x2)"));
                }
            }
            _ => {
                name = "vector mask load/store";
                let r = self.r.below(32);
                lines.push(format!(
                    "{}.v v{r}, (x{base})",
                    if store { "vsm" } else { "vlm" }
                ));
            }
        }
        self.push(name, lines);
    }
}
