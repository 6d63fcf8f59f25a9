//! A minimal x86-64 assembler: exactly the instruction forms the block compiler
//! emits, encoded by hand (REX, ModRM, SIB, 32-bit displacements), with forward
//! labels patched when bound and backward jumps to positions already emitted.

/// A general-purpose x86-64 register (its encoding number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub(crate) enum R {
    Rax = 0,
    Rcx = 1,
    Rdx = 2,
    Rbx = 3,
    Rsp = 4,
    Rbp = 5,
    Rsi = 6,
    Rdi = 7,
    R8 = 8,
    R11 = 11,
    R12 = 12,
}

/// A memory operand.
#[derive(Debug, Clone, Copy)]
pub(crate) enum M {
    /// `[base + disp]`.
    Base(R, i32),
    /// `[base + index * 8 + disp]`.
    Index8(R, R, i32),
    /// `[base + index]`.
    Index1(R, R),
}

/// Condition codes (the low nibble of Jcc/SETcc/CMOVcc).
#[derive(Debug, Clone, Copy)]
#[allow(missing_docs)]
pub(crate) enum Cc {
    B = 0x2,
    Ae = 0x3,
    E = 0x4,
    Ne = 0x5,
    A = 0x7,
    L = 0xc,
    Ge = 0xd,
}

/// Arithmetic group-1 operations (the /digit of 0x81 and the base of the r, r/m form).
#[derive(Debug, Clone, Copy)]
#[allow(missing_docs)]
pub(crate) enum Alu {
    Add = 0,
    Or = 1,
    And = 4,
    Sub = 5,
    Xor = 6,
    Cmp = 7,
}

/// Shift operations (the /digit of 0xC1 / 0xD3).
#[derive(Debug, Clone, Copy)]
#[allow(missing_docs)]
pub(crate) enum Shift {
    Shl = 4,
    Shr = 5,
    Sar = 7,
}

/// A forward jump whose 32-bit displacement is patched by [`Asm::bind`].
#[derive(Debug)]
#[must_use]
pub(crate) struct Label {
    patches: Vec<usize>,
}

/// The code being assembled.
#[derive(Debug, Default)]
pub(crate) struct Asm {
    pub(crate) code: Vec<u8>,
}

impl Asm {
    fn byte(&mut self, b: u8) {
        self.code.push(b);
    }

    fn d32(&mut self, v: i32) {
        self.code.extend_from_slice(&v.to_le_bytes());
    }

    /// REX prefix (emitted when any bit is set or `force` asks for byte registers).
    fn rex(&mut self, w: bool, reg: u8, index: u8, base: u8, force: bool) {
        let rex = 0x40
            | (u8::from(w) << 3)
            | (((reg >> 3) & 1) << 2)
            | (((index >> 3) & 1) << 1)
            | ((base >> 3) & 1);
        if rex != 0x40 || force {
            self.byte(rex);
        }
    }

    /// Emits `[prefix] REX opcode modrm...` for a register/memory operand pair.
    fn op_m(&mut self, w: bool, opcode: &[u8], reg: u8, m: M) {
        match m {
            M::Base(b, disp) => {
                self.rex(w, reg, 0, b as u8, false);
                self.code.extend_from_slice(opcode);
                let bl = b as u8 & 7;
                self.byte(0x80 | ((reg & 7) << 3) | bl);
                if bl == 4 {
                    self.byte(0x24); // SIB: no index, base rsp/r12
                }
                self.d32(disp);
            }
            M::Index8(b, i, disp) => {
                assert!(i != R::Rsp, "rsp cannot be an index");
                self.rex(w, reg, i as u8, b as u8, false);
                self.code.extend_from_slice(opcode);
                self.byte(0x84 | ((reg & 7) << 3));
                self.byte(0xc0 | ((i as u8 & 7) << 3) | (b as u8 & 7));
                self.d32(disp);
            }
            M::Index1(b, i) => {
                assert!(i != R::Rsp, "rsp cannot be an index");
                assert!(b as u8 & 7 != 5, "rbp/r13 base needs a displacement");
                self.rex(w, reg, i as u8, b as u8, false);
                self.code.extend_from_slice(opcode);
                self.byte(0x04 | ((reg & 7) << 3));
                self.byte(((i as u8 & 7) << 3) | (b as u8 & 7));
            }
        }
    }

    /// Emits `REX opcode modrm` for two registers (`reg` in ModRM.reg, `rm` in ModRM.rm).
    fn op_r(&mut self, w: bool, opcode: &[u8], reg: u8, rm: R) {
        self.rex(w, reg, 0, rm as u8, false);
        self.code.extend_from_slice(opcode);
        self.byte(0xc0 | ((reg & 7) << 3) | (rm as u8 & 7));
    }

    /// `mov r64, [m]`.
    pub(crate) fn load64(&mut self, r: R, m: M) {
        self.op_m(true, &[0x8b], r as u8, m);
    }

    /// `mov [m], r64`.
    pub(crate) fn store64(&mut self, m: M, r: R) {
        self.op_m(true, &[0x89], r as u8, m);
    }

    /// `mov r32, [m]` (zero-extends).
    pub(crate) fn load32(&mut self, r: R, m: M) {
        self.op_m(false, &[0x8b], r as u8, m);
    }

    /// `movsxd r64, dword [m]`.
    pub(crate) fn load32s(&mut self, r: R, m: M) {
        self.op_m(true, &[0x63], r as u8, m);
    }

    /// `movzx r32, word [m]` / `movsx r64, word [m]`.
    pub(crate) fn load16(&mut self, r: R, m: M, signed: bool) {
        if signed {
            self.op_m(true, &[0x0f, 0xbf], r as u8, m);
        } else {
            self.op_m(false, &[0x0f, 0xb7], r as u8, m);
        }
    }

    /// `movzx r32, byte [m]` / `movsx r64, byte [m]`.
    pub(crate) fn load8(&mut self, r: R, m: M, signed: bool) {
        if signed {
            self.op_m(true, &[0x0f, 0xbe], r as u8, m);
        } else {
            self.op_m(false, &[0x0f, 0xb6], r as u8, m);
        }
    }

    /// `mov [m], r` of `size` bytes (1, 2, 4, 8); `r` must be rax, rcx or rdx for bytes.
    pub(crate) fn store_sized(&mut self, m: M, r: R, size: u8) {
        match size {
            1 => {
                assert!((r as u8) < 4, "byte stores use al/cl/dl/bl");
                self.op_m(false, &[0x88], r as u8, m);
            }
            2 => {
                self.byte(0x66);
                self.op_m(false, &[0x89], r as u8, m);
            }
            4 => self.op_m(false, &[0x89], r as u8, m),
            _ => self.op_m(true, &[0x89], r as u8, m),
        }
    }

    /// `mov dst, src` (64-bit).
    pub(crate) fn mov_rr(&mut self, dst: R, src: R) {
        self.op_r(true, &[0x89], src as u8, dst);
    }

    /// Loads a 64-bit constant with the shortest encoding.
    pub(crate) fn mov_imm(&mut self, r: R, v: u64) {
        if v <= u64::from(u32::MAX) {
            // mov r32, imm32 zero-extends.
            self.rex(false, 0, 0, r as u8, false);
            self.byte(0xb8 | (r as u8 & 7));
            self.d32(v as u32 as i32);
        } else if (v as i64) >= i64::from(i32::MIN) && (v as i64) <= i64::from(i32::MAX) {
            // mov r/m64, simm32.
            self.op_r(true, &[0xc7], 0, r);
            self.d32(v as i64 as i32);
        } else {
            self.rex(true, 0, 0, r as u8, false);
            self.byte(0xb8 | (r as u8 & 7));
            self.code.extend_from_slice(&v.to_le_bytes());
        }
    }

    /// `op dst, src` (64-bit, or 32-bit when `!w`).
    pub(crate) fn alu_rr(&mut self, op: Alu, dst: R, src: R, w: bool) {
        self.op_r(w, &[(op as u8) << 3 | 0x01], src as u8, dst);
    }

    /// `op r, simm32` (64-bit, or 32-bit when `!w`).
    pub(crate) fn alu_ri(&mut self, op: Alu, r: R, imm: i32, w: bool) {
        self.op_r(w, &[0x81], op as u8, r);
        self.d32(imm);
    }

    /// `op qword [m], simm32`.
    pub(crate) fn alu_mi(&mut self, op: Alu, m: M, imm: i32) {
        self.op_m(true, &[0x81], op as u8, m);
        self.d32(imm);
    }

    /// `op r, [m]` (64-bit, or 32-bit when `!w`).
    pub(crate) fn alu_rm(&mut self, op: Alu, r: R, m: M, w: bool) {
        self.op_m(w, &[(op as u8) << 3 | 0x03], r as u8, m);
    }

    /// `shift r, imm8` (64-bit, or 32-bit when `!w`).
    pub(crate) fn shift_ri(&mut self, op: Shift, r: R, imm: u8, w: bool) {
        self.op_r(w, &[0xc1], op as u8, r);
        self.byte(imm);
    }

    /// `shift r, cl` (64-bit, or 32-bit when `!w`; the CPU masks the count as RISC-V does).
    pub(crate) fn shift_rcl(&mut self, op: Shift, r: R, w: bool) {
        self.op_r(w, &[0xd3], op as u8, r);
    }

    /// `imul dst, src` (64-bit, or 32-bit when `!w`).
    pub(crate) fn imul_rr(&mut self, dst: R, src: R, w: bool) {
        self.op_r(w, &[0x0f, 0xaf], dst as u8, src);
    }

    /// `imul dst, src, imm32` (64-bit).
    pub(crate) fn imul_rri(&mut self, dst: R, src: R, imm: i32) {
        self.op_r(true, &[0x69], dst as u8, src);
        self.d32(imm);
    }

    /// `jmp r`.
    pub(crate) fn jmp_r(&mut self, r: R) {
        self.op_r(false, &[0xff], 4, r);
    }

    /// `mul src` (unsigned rdx:rax = rax * src) or, `signed`, `imul src`.
    pub(crate) fn mul_wide(&mut self, src: R, signed: bool) {
        self.op_r(true, &[0xf7], if signed { 5 } else { 4 }, src);
    }

    /// `movsxd dst, src32`.
    pub(crate) fn movsxd(&mut self, dst: R, src: R) {
        self.op_r(true, &[0x63], dst as u8, src);
    }

    /// `setcc r8; movzx r32, r8` for rax/rcx/rdx/rbx (leaves 0 or 1 in the full register).
    pub(crate) fn setcc(&mut self, cc: Cc, r: R) {
        assert!((r as u8) < 4, "setcc uses al/cl/dl/bl");
        self.op_r(false, &[0x0f, 0x90 | cc as u8], 0, r);
        self.op_r(false, &[0x0f, 0xb6], r as u8, r);
    }

    /// `test a, b` (64-bit).
    pub(crate) fn test_rr(&mut self, a: R, b: R) {
        self.op_r(true, &[0x85], b as u8, a);
    }

    /// `push r`.
    pub(crate) fn push(&mut self, r: R) {
        self.rex(false, 0, 0, r as u8, false);
        self.byte(0x50 | (r as u8 & 7));
    }

    /// `pop r`.
    pub(crate) fn pop(&mut self, r: R) {
        self.rex(false, 0, 0, r as u8, false);
        self.byte(0x58 | (r as u8 & 7));
    }

    /// `ret`.
    pub(crate) fn ret(&mut self) {
        self.byte(0xc3);
    }

    /// `call r`.
    pub(crate) fn call_r(&mut self, r: R) {
        self.op_r(false, &[0xff], 2, r);
    }

    /// A label not yet bound.
    pub(crate) fn label(&self) -> Label {
        Label {
            patches: Vec::new(),
        }
    }

    /// `jcc label`.
    pub(crate) fn jcc(&mut self, cc: Cc, l: &mut Label) {
        self.byte(0x0f);
        self.byte(0x80 | cc as u8);
        l.patches.push(self.code.len());
        self.d32(0);
    }

    /// `jmp` back to `target`, a position already emitted.
    pub(crate) fn jmp_back(&mut self, target: usize) {
        self.byte(0xe9);
        let rel = target as i64 - (self.code.len() as i64 + 4);
        self.d32(i32::try_from(rel).expect("a block's code is far under 2 GiB"));
    }

    /// Binds `l` here: every jump to it lands at the current position.
    pub(crate) fn bind(&mut self, l: Label) {
        let here = self.code.len();
        for at in l.patches {
            let rel = (here - (at + 4)) as i32;
            self.code[at..at + 4].copy_from_slice(&rel.to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Encodings checked against a reference assembler's output.
    #[test]
    fn encodings() {
        type Emit = Box<dyn Fn(&mut Asm)>;
        let cases: Vec<(Emit, &[u8])> = vec![
            // mov rax, [rbx+0x10]
            (
                Box::new(|a| a.load64(R::Rax, M::Base(R::Rbx, 0x10))),
                &[0x48, 0x8b, 0x83, 0x10, 0, 0, 0],
            ),
            // mov [rbx+0x20], rcx
            (
                Box::new(|a| a.store64(M::Base(R::Rbx, 0x20), R::Rcx)),
                &[0x48, 0x89, 0x8b, 0x20, 0, 0, 0],
            ),
            // cmp rsi, [rbx+rdx*8+0x100]
            (
                Box::new(|a| a.alu_rm(Alu::Cmp, R::Rsi, M::Index8(R::Rbx, R::Rdx, 0x100), true)),
                &[0x48, 0x3b, 0xb4, 0xd3, 0x00, 0x01, 0, 0],
            ),
            // movzx eax, byte [rsi+rax]
            (
                Box::new(|a| a.load8(R::Rax, M::Index1(R::Rsi, R::Rax), false)),
                &[0x0f, 0xb6, 0x04, 0x06],
            ),
            // movsx rax, word [rsi+rax]
            (
                Box::new(|a| a.load16(R::Rax, M::Index1(R::Rsi, R::Rax), true)),
                &[0x48, 0x0f, 0xbf, 0x04, 0x06],
            ),
            // movsxd rax, dword [rsi+rax]
            (
                Box::new(|a| a.load32s(R::Rax, M::Index1(R::Rsi, R::Rax))),
                &[0x48, 0x63, 0x04, 0x06],
            ),
            // mov word [rsi+rax], cx
            (
                Box::new(|a| a.store_sized(M::Index1(R::Rsi, R::Rax), R::Rcx, 2)),
                &[0x66, 0x89, 0x0c, 0x06],
            ),
            // mov byte [rsi+rax], cl
            (
                Box::new(|a| a.store_sized(M::Index1(R::Rsi, R::Rax), R::Rcx, 1)),
                &[0x88, 0x0c, 0x06],
            ),
            // mov rdi, r12
            (Box::new(|a| a.mov_rr(R::Rdi, R::R12)), &[0x4c, 0x89, 0xe7]),
            // add rax, -5
            (
                Box::new(|a| a.alu_ri(Alu::Add, R::Rax, -5, true)),
                &[0x48, 0x81, 0xc0, 0xfb, 0xff, 0xff, 0xff],
            ),
            // and esi, 0xfff
            (
                Box::new(|a| a.alu_ri(Alu::And, R::Rsi, 0xfff, false)),
                &[0x81, 0xe6, 0xff, 0x0f, 0, 0],
            ),
            // sub rax, rcx
            (
                Box::new(|a| a.alu_rr(Alu::Sub, R::Rax, R::Rcx, true)),
                &[0x48, 0x29, 0xc8],
            ),
            // add qword [rbx+8], 3
            (
                Box::new(|a| a.alu_mi(Alu::Add, M::Base(R::Rbx, 8), 3)),
                &[0x48, 0x81, 0x83, 0x08, 0, 0, 0, 0x03, 0, 0, 0],
            ),
            // shr rcx, 12
            (
                Box::new(|a| a.shift_ri(Shift::Shr, R::Rcx, 12, true)),
                &[0x48, 0xc1, 0xe9, 0x0c],
            ),
            // sar eax, cl
            (
                Box::new(|a| a.shift_rcl(Shift::Sar, R::Rax, false)),
                &[0xd3, 0xf8],
            ),
            // imul rax, rcx
            (
                Box::new(|a| a.imul_rr(R::Rax, R::Rcx, true)),
                &[0x48, 0x0f, 0xaf, 0xc1],
            ),
            // movsxd rax, eax
            (Box::new(|a| a.movsxd(R::Rax, R::Rax)), &[0x48, 0x63, 0xc0]),
            // setl dl; movzx edx, dl
            (
                Box::new(|a| a.setcc(Cc::L, R::Rdx)),
                &[0x0f, 0x9c, 0xc2, 0x0f, 0xb6, 0xd2],
            ),
            // test rdx, rdx
            (Box::new(|a| a.test_rr(R::Rdx, R::Rdx)), &[0x48, 0x85, 0xd2]),
            // cmp esi, [rbx+rdx*8+8]
            (
                Box::new(|a| a.alu_rm(Alu::Cmp, R::Rsi, M::Index8(R::Rbx, R::Rdx, 8), false)),
                &[0x3b, 0xb4, 0xd3, 0x08, 0, 0, 0],
            ),
            // cmp qword [rbx+0x40], -1
            (
                Box::new(|a| a.alu_mi(Alu::Cmp, M::Base(R::Rbx, 0x40), -1)),
                &[0x48, 0x81, 0xbb, 0x40, 0, 0, 0, 0xff, 0xff, 0xff, 0xff],
            ),
            // mov r8, rcx
            (Box::new(|a| a.mov_rr(R::R8, R::Rcx)), &[0x49, 0x89, 0xc8]),
            // imul rdx, rdx, 72
            (
                Box::new(|a| a.imul_rri(R::Rdx, R::Rdx, 72)),
                &[0x48, 0x69, 0xd2, 72, 0, 0, 0],
            ),
            // mul rcx; imul rcx
            (Box::new(|a| a.mul_wide(R::Rcx, false)), &[0x48, 0xf7, 0xe1]),
            (Box::new(|a| a.mul_wide(R::Rcx, true)), &[0x48, 0xf7, 0xe9]),
            // jmp rax
            (Box::new(|a| a.jmp_r(R::Rax)), &[0xff, 0xe0]),
            // cmp rsi, [r12+0x18]
            (
                Box::new(|a| a.alu_rm(Alu::Cmp, R::Rsi, M::Base(R::R12, 0x18), true)),
                &[0x49, 0x3b, 0xb4, 0x24, 0x18, 0, 0, 0],
            ),
            // push r12; pop r12; call r11
            (Box::new(|a| a.push(R::R12)), &[0x41, 0x54]),
            (Box::new(|a| a.pop(R::R12)), &[0x41, 0x5c]),
            (Box::new(|a| a.call_r(R::R11)), &[0x41, 0xff, 0xd3]),
            // mov eax, 0x1234 ; mov rax, -1 ; movabs rax, 0x123456789
            (
                Box::new(|a| a.mov_imm(R::Rax, 0x1234)),
                &[0xb8, 0x34, 0x12, 0, 0],
            ),
            (
                Box::new(|a| a.mov_imm(R::Rax, u64::MAX)),
                &[0x48, 0xc7, 0xc0, 0xff, 0xff, 0xff, 0xff],
            ),
            (
                Box::new(|a| a.mov_imm(R::R11, 0x1_2345_6789)),
                &[0x49, 0xbb, 0x89, 0x67, 0x45, 0x23, 0x01, 0, 0, 0],
            ),
        ];
        for (i, (emit, want)) in cases.iter().enumerate() {
            let mut a = Asm::default();
            emit(&mut a);
            assert_eq!(a.code, *want, "case {i}");
        }
    }

    #[test]
    fn labels_patch_forward_jumps() {
        let mut a = Asm::default();
        let mut l = a.label();
        let mut m = a.label();
        a.jcc(Cc::Ne, &mut l);
        a.jcc(Cc::E, &mut m);
        a.jcc(Cc::B, &mut l);
        a.ret();
        a.bind(l);
        a.bind(m);
        #[rustfmt::skip]
        let want = [0x0f, 0x85, 13, 0, 0, 0, 0x0f, 0x84, 7, 0, 0, 0, 0x0f, 0x82, 1, 0, 0, 0, 0xc3];
        assert_eq!(a.code, want);
    }

    #[test]
    fn backward_jumps_land_on_their_target() {
        let mut a = Asm::default();
        a.ret();
        a.jmp_back(0);
        a.jmp_back(a.code.len());
        assert_eq!(
            a.code,
            [0xc3, 0xe9, 0xfa, 0xff, 0xff, 0xff, 0xe9, 0xfb, 0xff, 0xff, 0xff]
        );
    }
}
