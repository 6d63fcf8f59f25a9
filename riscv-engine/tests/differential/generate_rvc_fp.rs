//! Generator makers for the C extension (every RV64C form written explicitly, and HINT
//! encodings) and for F and D (arithmetic, fused multiply-adds, conversions, moves,
//! compares, classify, loads and stores, constants).

use super::*;

impl Gen<'_> {
    // ---- compressed (written as c.* so the 16-bit form is certain)

    pub(crate) fn compressed(&mut self) {
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
    pub(crate) fn hint(&mut self) {
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

    pub(crate) fn fp_arith(&mut self) {
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

    pub(crate) fn fp_sqrt(&mut self) {
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

    pub(crate) fn fp_binary_norm(&mut self, ops: &[&'static str]) {
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

    pub(crate) fn fp_fma(&mut self) {
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
    pub(crate) fn fp_fma_cancel(&mut self) {
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

    pub(crate) fn fp_to_int(&mut self) {
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

    pub(crate) fn int_to_fp(&mut self) {
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

    pub(crate) fn fp_to_fp(&mut self) {
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

    pub(crate) fn fp_move(&mut self) {
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

    pub(crate) fn fp_compare(&mut self) {
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

    pub(crate) fn fp_class(&mut self) {
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

    pub(crate) fn fp_mem(&mut self) {
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

    pub(crate) fn fp_const(&mut self) {
        let fmt = self.fmt();
        let r = self.fd(fmt);
        let v = self.f_edge_bits(fmt);
        self.f_const(r, fmt, v);
    }
}
