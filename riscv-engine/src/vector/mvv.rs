//! The OPMVV and OPMVX instructions (funct3 2 and 6 of OP-V): reductions, averaging
//! add/subtract, slide-by-one, scalar moves, extensions, mask instructions (logic, counts,
//! set-before/including/only-first, iota, id), compress, multiply, divide, multiply-add and
//! the widening forms.

use super::int::{ones, round_bit, sx, Ops};
use super::{group_ok, illegal, overlap_ok};
use crate::exec::muldiv;
use crate::hart::Hart;
use crate::trap::Trap;

impl Hart {
    /// OPMVV (funct3 2) and OPMVX (funct3 6).
    pub(crate) fn vector_mvv(&mut self, i: u32, x1: u64) -> Result<(), Trap> {
        let vv = (i >> 12) & 7 == 2;
        let o = Ops::decode(i, x1, vv, false);
        let rd = o.vd;
        let v = self.vu();
        let (sew, lmul8, lregs) = (v.sew(), v.lmul8(), v.lmul_regs());
        let (vl, vstart) = (v.vl as usize, v.vstart as usize);
        let bad = || illegal(i);
        let aligned = |r: usize| group_ok(r, lregs);
        match (o.f6, vv) {
            // Reductions: vd[0] = vs1[0] op the active elements of vs2.
            (0b000000..=0b000111, true) => {
                if vstart != 0 || !aligned(o.vs2) {
                    return Err(bad());
                }
                if vl == 0 {
                    return Ok(());
                }
                let mut acc = v.get(o.vs1, sew, 0);
                for e in 0..vl {
                    if !v.active(o.vm, e) {
                        continue;
                    }
                    let x = v.get(o.vs2, sew, e);
                    let (sa, sx_) = (sx(acc, sew), sx(x, sew));
                    acc = match o.f6 {
                        0 => acc.wrapping_add(x),
                        1 => acc & x,
                        2 => acc | x,
                        3 => acc ^ x,
                        4 => acc.min(x),
                        5 => sa.min(sx_) as u64,
                        6 => acc.max(x),
                        _ => sa.max(sx_) as u64,
                    } & ones(sew);
                }
                v.set(o.vd, sew, 0, acc);
                Ok(())
            }
            // vmv.x.s, vcpop.m, vfirst.m
            (0b010000, true) => {
                let r = match o.vs1 {
                    0 => sx(v.get(o.vs2, sew, 0), sew) as u64,
                    0x10 | 0x11 if vstart != 0 => return Err(bad()),
                    0x10 => (0..vl)
                        .filter(|&e| v.active(o.vm, e) && v.mask_bit(o.vs2, e))
                        .count() as u64,
                    0x11 => (0..vl)
                        .find(|&e| v.active(o.vm, e) && v.mask_bit(o.vs2, e))
                        .map_or(u64::MAX, |e| e as u64),
                    _ => return Err(bad()),
                };
                if o.vs1 == 0 && !o.vm {
                    return Err(bad());
                }
                if rd != 0 {
                    self.x[rd] = r;
                }
                Ok(())
            }
            // vmv.s.x
            (0b010000, false) => {
                if o.vs2 != 0 || !o.vm {
                    return Err(bad());
                }
                if vstart < vl {
                    v.set(o.vd, sew, 0, x1 & ones(sew));
                }
                Ok(())
            }
            // vzext / vsext .vf2/.vf4/.vf8
            (0b010010, true) => {
                let (factor, signed) = match o.vs1 {
                    2 => (8, false),
                    3 => (8, true),
                    4 => (4, false),
                    5 => (4, true),
                    6 => (2, false),
                    7 => (2, true),
                    _ => return Err(bad()),
                };
                let (src_eew, src_emul8) = (sew / factor, lmul8 / factor);
                if src_eew == 0 || src_emul8 == 0 {
                    return Err(bad());
                }
                let sregs = (src_emul8 / 8).max(1);
                if !aligned(o.vd)
                    || !group_ok(o.vs2, sregs)
                    || (!o.vm && o.vd == 0)
                    || !overlap_ok(o.vd, lregs, sew, o.vs2, sregs, src_eew, src_emul8)
                {
                    return Err(bad());
                }
                for e in vstart..vl {
                    if v.active(o.vm, e) {
                        let x = v.get(o.vs2, src_eew, e);
                        let x = if signed { sx(x, src_eew) as u64 } else { x };
                        v.set(o.vd, sew, e, x & ones(sew));
                    }
                }
                Ok(())
            }
            // vmsbf, vmsof, vmsif, viota, vid
            (0b010100, true) => {
                match o.vs1 {
                    1..=3 => {
                        let overlap = o.vd == o.vs2 || (!o.vm && o.vd == 0);
                        if vstart != 0 || overlap {
                            return Err(bad());
                        }
                        let mut found = false;
                        for e in 0..vl {
                            if !v.active(o.vm, e) {
                                continue;
                            }
                            let here = v.mask_bit(o.vs2, e);
                            let bit = match o.vs1 {
                                1 => !found && !here,
                                2 => !found && here,
                                _ => !found,
                            };
                            found |= here;
                            v.set_mask_bit(o.vd, e, bit);
                        }
                    }
                    0x10 => {
                        let overlap = o.vd <= o.vs2 && o.vs2 < o.vd + lregs;
                        if vstart != 0 || !aligned(o.vd) || overlap || (!o.vm && o.vd == 0) {
                            return Err(bad());
                        }
                        let mut count = 0u64;
                        for e in 0..vl {
                            if v.active(o.vm, e) {
                                v.set(o.vd, sew, e, count & ones(sew));
                                count += u64::from(v.mask_bit(o.vs2, e));
                            }
                        }
                    }
                    0x11 => {
                        if o.vs2 != 0 || !aligned(o.vd) || (!o.vm && o.vd == 0) {
                            return Err(bad());
                        }
                        for e in vstart..vl {
                            if v.active(o.vm, e) {
                                v.set(o.vd, sew, e, e as u64 & ones(sew));
                            }
                        }
                    }
                    _ => return Err(bad()),
                }
                Ok(())
            }
            // vcompress.vm
            (0b010111, true) => {
                let disjoint =
                    |a: usize, an: usize, b: usize, bn: usize| a + an <= b || b + bn <= a;
                if vstart != 0
                    || !o.vm
                    || !aligned(o.vd)
                    || !aligned(o.vs2)
                    || !disjoint(o.vd, lregs, o.vs2, lregs)
                    || !disjoint(o.vd, lregs, o.vs1, 1)
                {
                    return Err(bad());
                }
                let mut out = 0;
                for e in 0..vl {
                    if v.mask_bit(o.vs1, e) {
                        let x = v.get(o.vs2, sew, e);
                        v.set(o.vd, sew, out, x);
                        out += 1;
                    }
                }
                Ok(())
            }
            // Mask logic: vmandn, vmand, vmor, vmxor, vmorn, vmnand, vmnor, vmxnor.
            (0b011000..=0b011111, true) => {
                if !o.vm {
                    return Err(bad());
                }
                for e in vstart..vl {
                    let (a, b) = (v.mask_bit(o.vs2, e), v.mask_bit(o.vs1, e));
                    let bit = match o.f6 {
                        0b011000 => a && !b,
                        0b011001 => a && b,
                        0b011010 => a || b,
                        0b011011 => a ^ b,
                        0b011100 => a || !b,
                        0b011101 => !(a && b),
                        0b011110 => !(a || b),
                        _ => a == b,
                    };
                    v.set_mask_bit(o.vd, e, bit);
                }
                Ok(())
            }
            // vslide1up / vslide1down .vx
            (0b001110 | 0b001111, false) => {
                let up = o.f6 == 0b001110;
                let disjoint = o.vd + lregs <= o.vs2 || o.vs2 + lregs <= o.vd;
                if !aligned(o.vd) || !aligned(o.vs2) || (!o.vm && o.vd == 0) || (up && !disjoint) {
                    return Err(bad());
                }
                let src: Vec<u64> = (0..vl).map(|e| v.get(o.vs2, sew, e)).collect();
                for e in vstart..vl {
                    if !v.active(o.vm, e) {
                        continue;
                    }
                    let r = match (up, e) {
                        (true, 0) => x1,
                        (true, e) => src[e - 1],
                        (false, e) if e + 1 == vl => x1,
                        (false, e) => src[e + 1],
                    };
                    v.set(o.vd, sew, e, r & ones(sew));
                }
                Ok(())
            }
            _ => self.vector_mul_add(i, &o),
        }
    }

    /// Averaging add/subtract, multiply, divide, multiply-add and the widening forms.
    fn vector_mul_add(&mut self, i: u32, o: &Ops) -> Result<(), Trap> {
        let v = self.vu();
        let (sew, lmul8) = (v.sew(), v.lmul8());
        let (vl, vstart, vxrm) = (v.vl as usize, v.vstart as usize, v.vxrm);
        let bad = || illegal(i);
        let widening = o.f6 >= 0b110000;
        let known = matches!(o.f6, 0b001000..=0b001011 | 0b100000..=0b100111 | 0b101001 | 0b101011 | 0b101101 | 0b101111 | 0b110000..=0b110111 | 0b111000 | 0b111010 | 0b111011 | 0b111100..=0b111111);
        if !known || (o.f6 == 0b111110 && o.vv) {
            return Err(bad());
        }
        // Widening: vd (and for .w forms vs2) hold 2*SEW at 2*LMUL.
        let wide_vs2 = matches!(o.f6, 0b110100..=0b110111);
        let (dw, _, s2w) = o.layout(sew, lmul8, widening, wide_vs2).ok_or_else(bad)?;
        let sew_bits = 8 * sew as u32;
        for e in vstart..vl {
            if !v.active(o.vm, e) {
                continue;
            }
            let a = v.get(o.vs2, s2w, e);
            let b = o.b(v, sew, e);
            let d = v.get(o.vd, dw, e);
            let (sa, sb) = (sx(a, s2w), sx(b, sew));
            let r = match o.f6 {
                // vaaddu, vaadd, vasubu, vasub: (a +- b) >> 1, rounded.
                0b001000..=0b001011 => {
                    let wide: i128 = match o.f6 {
                        0b001000 => i128::from(a) + i128::from(b),
                        0b001001 => i128::from(sa) + i128::from(sb),
                        0b001010 => i128::from(a) - i128::from(b),
                        _ => i128::from(sa) - i128::from(sb),
                    };
                    ((wide >> 1) + round_bit(wide as u128, 1, vxrm) as i128) as u64
                }
                // vdivu, vdiv, vremu, vrem on SEW elements (RISC-V's results for zero and overflow).
                0b100000..=0b100011 => {
                    let f3 = [5, 4, 7, 6][(o.f6 & 3) as usize];
                    // The 64-bit operation on zero- (unsigned) or sign-extended (signed)
                    // operands, truncated to SEW, gives SEW's results, overflow included.
                    let signed = f3 == 4 || f3 == 6;
                    let (x, y) = if signed {
                        (sa as u64, sb as u64)
                    } else {
                        (a, b)
                    };
                    muldiv(f3, false, x, y)
                }
                0b100100 => ((u128::from(a) * u128::from(b)) >> sew_bits) as u64,
                0b100101 => a.wrapping_mul(b),
                0b100110 => ((i128::from(sa) * i128::from(b)) >> sew_bits) as u64,
                0b100111 => ((i128::from(sa) * i128::from(sb)) >> sew_bits) as u64,
                // vmadd: vd = vs1 * vd + vs2; vnmsub: vd = -(vs1 * vd) + vs2.
                0b101001 => b.wrapping_mul(d).wrapping_add(a),
                0b101011 => a.wrapping_sub(b.wrapping_mul(d)),
                0b101101 => d.wrapping_add(a.wrapping_mul(b)),
                0b101111 => d.wrapping_sub(a.wrapping_mul(b)),
                // Widening add/subtract (.vv/.vx and .wv/.wx).
                0b110000 | 0b110100 => a.wrapping_add(b),
                0b110001 | 0b110101 => (sa as u64).wrapping_add(sb as u64),
                0b110010 | 0b110110 => a.wrapping_sub(b),
                0b110011 | 0b110111 => (sa as u64).wrapping_sub(sb as u64),
                0b111000 => a.wrapping_mul(b),
                0b111010 => (sa as u64).wrapping_mul(b),
                0b111011 => (sa as u64).wrapping_mul(sb as u64),
                0b111100 => d.wrapping_add(a.wrapping_mul(b)),
                0b111101 => d.wrapping_add((sa as u64).wrapping_mul(sb as u64)),
                // vwmaccus.vx: unsigned x[rs1] * signed vs2; vwmaccsu: signed vs1 * unsigned vs2.
                0b111110 => d.wrapping_add(b.wrapping_mul(sa as u64)),
                _ => d.wrapping_add((sb as u64).wrapping_mul(a)),
            };
            v.set(o.vd, dw, e, r & ones(dw));
        }
        Ok(())
    }
}
