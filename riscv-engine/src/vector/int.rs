//! The OPIVV, OPIVX and OPIVI instructions (funct3 0, 4, 3 of OP-V): single-width integer
//! and fixed-point arithmetic, compares into masks, add/subtract with carry, merges and
//! moves, narrowing shifts and clips, gathers and slides, whole-register moves and the
//! widening sum reductions.

use super::{group_ok, illegal, overlap_ok, Vector};
use crate::hart::Hart;
use crate::trap::Trap;

/// `v` (of `bytes` bytes) sign-extended.
#[inline]
pub(crate) fn sx(v: u64, bytes: usize) -> i64 {
    let shift = 64 - 8 * bytes as u32;
    ((v << shift) as i64) >> shift
}

/// All ones in an element of `bytes` bytes.
#[inline]
pub(crate) fn ones(bytes: usize) -> u64 {
    u64::MAX >> (64 - 8 * bytes as u32)
}

/// The fixed-point rounding increment of shifting `v` right by `d` under `vxrm`.
pub(crate) fn round_bit(v: u128, d: u32, vxrm: u8) -> u128 {
    if d == 0 {
        return 0;
    }
    let bit = |n: u32| (v >> n) & 1;
    let below = |n: u32| v & ((1u128 << n) - 1) != 0;
    match vxrm {
        0 => bit(d - 1),
        1 => bit(d - 1) & u128::from((d > 1 && below(d - 1)) || bit(d) == 1),
        2 => 0,
        _ => u128::from(bit(d) == 0 && below(d)),
    }
}

/// `v` shifted right by `d` with rounding (unsigned).
fn roundoff_u(v: u128, d: u32, vxrm: u8) -> u128 {
    (v >> d) + round_bit(v, d, vxrm)
}

/// `v` shifted right arithmetically by `d` with rounding.
fn roundoff_s(v: i128, d: u32, vxrm: u8) -> i128 {
    (v >> d) + round_bit(v as u128, d, vxrm) as i128
}

/// Operands of one instruction.
pub(crate) struct Ops {
    pub(crate) f6: u32,
    pub(crate) vm: bool,
    pub(crate) vd: usize,
    pub(crate) vs2: usize,
    pub(crate) vs1: usize,
    /// The scalar operand: x[rs1] (.vx), the immediate (.vi; sign-extended), unused (.vv).
    pub(crate) scalar: u64,
    /// .vv (the second operand is vs1's element).
    pub(crate) vv: bool,
}

impl Ops {
    pub(crate) fn decode(i: u32, x1: u64, vv: bool, imm: bool) -> Ops {
        let vs1 = ((i >> 15) & 31) as usize;
        Ops {
            f6: i >> 26,
            vm: (i >> 25) & 1 != 0,
            vd: ((i >> 7) & 31) as usize,
            vs2: ((i >> 20) & 31) as usize,
            vs1,
            scalar: if imm {
                ((vs1 as i64) << 59 >> 59) as u64
            } else {
                x1
            },
            vv,
        }
    }

    /// The element widths of a single-width or widening (`widening`) arithmetic form at SEW
    /// `sew` bytes and LMUL `lmul8` eighths, checked against the spec's register rules
    /// (groups aligned, a masked vd not v0, and for widening forms the overlaps 5.2
    /// allows): (destination EEW, its registers, vs2's EEW), or `None` (illegal). A
    /// `wide_vs2` form (.wv/.wx/.wf) reads vs2 at the destination's width.
    pub(crate) fn layout(
        &self,
        sew: usize,
        lmul8: usize,
        widening: bool,
        wide_vs2: bool,
    ) -> Option<(usize, usize, usize)> {
        let lregs = (lmul8 / 8).max(1);
        let (dw, dregs) = if widening {
            if 2 * sew > 8 || lmul8 > 32 {
                return None;
            }
            (2 * sew, (2 * lmul8 / 8).max(1))
        } else {
            (sew, lregs)
        };
        let (s2w, s2regs) = if wide_vs2 { (dw, dregs) } else { (sew, lregs) };
        let mut ok = group_ok(self.vd, dregs)
            && group_ok(self.vs2, s2regs)
            && (!self.vv || group_ok(self.vs1, lregs))
            && (self.vm || self.vd != 0);
        if widening {
            let s2emul8 = if wide_vs2 { 2 * lmul8 } else { lmul8 };
            ok &= overlap_ok(self.vd, dregs, dw, self.vs2, s2regs, s2w, s2emul8);
            ok &= !self.vv || overlap_ok(self.vd, dregs, dw, self.vs1, lregs, sew, lmul8);
        }
        ok.then_some((dw, dregs, s2w))
    }

    /// The second operand for element `i` (SEW `sew` bytes), truncated to SEW.
    #[inline]
    pub(crate) fn b(&self, v: &Vector, sew: usize, i: usize) -> u64 {
        if self.vv {
            v.get(self.vs1, sew, i)
        } else {
            self.scalar & ones(sew)
        }
    }
}

impl Hart {
    /// OPIVV (funct3 0), OPIVI (3), OPIVX (4).
    pub(crate) fn vector_int(&mut self, i: u32, x1: u64) -> Result<(), Trap> {
        let f3 = (i >> 12) & 7;
        let o = Ops::decode(i, x1, f3 == 0, f3 == 3);
        let v = self.vu();
        let (sew, lregs, vl, vstart) = (v.sew(), v.lmul_regs(), v.vl as usize, v.vstart as usize);
        let vxrm = v.vxrm;
        let bad = || illegal(i);
        let uimm = (o.vs1 & 31) as u64;
        // Which form each funct6 takes (vv, vx, vi), as the spec's table has it.
        let (has_vv, has_vx, has_vi) = match o.f6 {
            0b000000 | 0b001001 | 0b001010 | 0b001011 | 0b001100 | 0b010111 | 0b011000
            | 0b011001 | 0b100000 | 0b100001 | 0b100101 | 0b101000 | 0b101001 | 0b101010
            | 0b101011 | 0b101100 | 0b101101 | 0b101110 | 0b101111 | 0b010000 | 0b010001 => {
                (true, true, true)
            }
            0b000010 | 0b000100 | 0b000101 | 0b000110 | 0b000111 | 0b010010 | 0b010011
            | 0b011010 | 0b011011 | 0b100010 | 0b100011 => (true, true, false),
            0b000011 | 0b011110 | 0b011111 | 0b001111 => (false, true, true),
            0b011100 | 0b011101 => (true, true, true),
            0b001110 => (true, true, true), // vrgatherei16.vv / vslideup.vx/.vi
            0b100111 => (true, true, true), // vsmul.vv/.vx, vmv<nr>r.v (.vi)
            0b110000 | 0b110001 => (true, false, false),
            _ => return Err(bad()),
        };
        let form_ok = match f3 {
            0 => has_vv,
            4 => has_vx,
            _ => has_vi,
        };
        if !form_ok {
            return Err(bad());
        }
        let aligned = |r: usize| group_ok(r, lregs);
        let single = o.vv.then_some(o.vs1);
        let sources_ok = aligned(o.vs2) && single.is_none_or(aligned);
        match o.f6 {
            // vmv<nr>r.v: whole registers, whatever vtype says.
            0b100111 if f3 == 3 => {
                let nr = uimm as usize + 1;
                if !nr.is_power_of_two() || nr > 8 || !group_ok(o.vd, nr) || !group_ok(o.vs2, nr) {
                    return Err(bad());
                }
                let v = self.vu();
                let evl = nr * v.vlenb / sew;
                for e in vstart..evl {
                    let x = v.get(o.vs2, sew, e);
                    v.set(o.vd, sew, e, x);
                }
                return Ok(());
            }
            // Compares and carry-outs: mask results.
            0b011000..=0b011111 | 0b010001 | 0b010011 => {
                if !sources_ok
                    || !overlap_ok(o.vd, 1, 0, o.vs2, lregs, sew, v.lmul8())
                    || single.is_some_and(|s| !overlap_ok(o.vd, 1, 0, s, lregs, sew, v.lmul8()))
                {
                    return Err(bad());
                }
                let imm_b = o.scalar & ones(sew);
                for e in vstart..vl {
                    let carry_form = o.f6 == 0b010001 || o.f6 == 0b010011;
                    if !carry_form && !v.active(o.vm, e) {
                        continue;
                    }
                    let a = v.get(o.vs2, sew, e);
                    let b = if o.vv { v.get(o.vs1, sew, e) } else { imm_b };
                    let (sa, sb) = (sx(a, sew), sx(b, sew));
                    let bit = match o.f6 {
                        0b011000 => a == b,
                        0b011001 => a != b,
                        0b011010 => a < b,
                        0b011011 => sa < sb,
                        0b011100 => a <= b,
                        0b011101 => sa <= sb,
                        0b011110 => a > b,
                        0b011111 => sa > sb,
                        f6 => {
                            // vmadc / vmsbc: the carry (borrow) out, with v0's bit as the
                            // carry in when vm = 0.
                            let c = u128::from(!o.vm && v.mask_bit(0, e));
                            let (a, b) = (u128::from(a), u128::from(b));
                            if f6 == 0b010001 {
                                (a + b + c) >> (8 * sew) != 0
                            } else {
                                a < b + c
                            }
                        }
                    };
                    v.set_mask_bit(o.vd, e, bit);
                }
                return Ok(());
            }
            // Narrowing: vs2 holds 2*SEW elements.
            0b101100..=0b101111 => {
                let wide = 2 * sew;
                let wregs = (2 * v.lmul8() / 8).max(1);
                if wide > 8
                    || v.lmul8() > 32
                    || !group_ok(o.vs2, wregs)
                    || !aligned(o.vd)
                    || single.is_some_and(|s| !aligned(s))
                    || (!o.vm && o.vd == 0)
                    || !overlap_ok(o.vd, lregs, sew, o.vs2, wregs, wide, 2 * v.lmul8())
                {
                    return Err(bad());
                }
                let mut sat = false;
                for e in vstart..vl {
                    if !v.active(o.vm, e) {
                        continue;
                    }
                    let a = v.get(o.vs2, wide, e);
                    let sh = (if o.vv {
                        v.get(o.vs1, sew, e)
                    } else if f3 == 3 {
                        uimm
                    } else {
                        o.scalar
                    } & (8 * wide as u64 - 1)) as u32;
                    let r = match o.f6 {
                        0b101100 => a >> sh,
                        0b101101 => (sx(a, wide) >> sh) as u64,
                        0b101110 => {
                            let r = roundoff_u(u128::from(a), sh, vxrm);
                            if r > u128::from(ones(sew)) {
                                sat = true;
                                ones(sew)
                            } else {
                                r as u64
                            }
                        }
                        _ => {
                            let r = roundoff_s(i128::from(sx(a, wide)), sh, vxrm);
                            let (lo, hi) = (
                                i128::from(sx(1 << (8 * sew - 1), sew)),
                                i128::from(sx(ones(sew) >> 1, sew)),
                            );
                            if r < lo || r > hi {
                                sat = true;
                            }
                            r.clamp(lo, hi) as u64
                        }
                    };
                    v.set(o.vd, sew, e, r & ones(sew));
                }
                v.vxsat |= sat;
                return Ok(());
            }
            // vwredsumu / vwredsum: vd[0] (2*SEW) = vs1[0] + the sum of active vs2 elements.
            0b110000 | 0b110001 => {
                if 2 * sew > 8 || !aligned(o.vs2) {
                    return Err(bad());
                }
                if vstart != 0 {
                    return Err(bad());
                }
                if vl == 0 {
                    return Ok(());
                }
                let signed = o.f6 == 0b110001;
                let mut acc = v.get(o.vs1, 2 * sew, 0);
                for e in 0..vl {
                    if v.active(o.vm, e) {
                        let x = v.get(o.vs2, sew, e);
                        let x = if signed { sx(x, sew) as u64 } else { x };
                        acc = acc.wrapping_add(x);
                    }
                }
                v.set(o.vd, 2 * sew, 0, acc & ones(2 * sew));
                return Ok(());
            }
            _ => {}
        }
        // The rest write SEW elements to vd.
        let no_v0 = o.vm || o.vd != 0 || matches!(o.f6, 0b010111);
        if !sources_ok || !aligned(o.vd) || !no_v0 {
            return Err(bad());
        }
        match o.f6 {
            // vrgather, vrgatherei16, vslideup, vslidedown
            0b001100 | 0b001110 | 0b001111 => return self.vector_permute(i, &o, f3, uimm),
            // vadc / vsbc need vm = 0 and vd != v0
            0b010000 | 0b010010 if o.vm || o.vd == 0 => return Err(bad()),
            // vmerge (vm = 0) / vmv.v.* (vm = 1, vs2 = v0)
            0b010111 if o.vm && o.vs2 != 0 => return Err(bad()),
            0b010111 if !o.vm && o.vd == 0 => return Err(bad()),
            _ => {}
        }
        let shift_mask = 8 * sew as u64 - 1;
        let imm_b =
            if f3 == 3 && matches!(o.f6, 0b100101 | 0b101000 | 0b101001 | 0b101010 | 0b101011) {
                uimm
            } else {
                o.scalar & ones(sew)
            };
        let v = self.vu();
        let (min, max) = (sx(1 << (8 * sew - 1), sew), sx(ones(sew) >> 1, sew));
        let mut sat = false;
        for e in vstart..vl {
            let carry = matches!(o.f6, 0b010000 | 0b010010);
            let merge = o.f6 == 0b010111;
            if !carry && !merge && !v.active(o.vm, e) {
                continue;
            }
            let a = v.get(o.vs2, sew, e);
            let b = if o.vv { v.get(o.vs1, sew, e) } else { imm_b };
            let (sa, sb) = (sx(a, sew), sx(b, sew));
            let saturate = |r: i128, sat: &mut bool| -> u64 {
                if r < i128::from(min) || r > i128::from(max) {
                    *sat = true;
                }
                r.clamp(i128::from(min), i128::from(max)) as u64
            };
            let r = match o.f6 {
                0b000000 => a.wrapping_add(b),
                0b000010 => a.wrapping_sub(b),
                0b000011 => b.wrapping_sub(a),
                0b000100 => a.min(b),
                0b000101 => sa.min(sb) as u64,
                0b000110 => a.max(b),
                0b000111 => sa.max(sb) as u64,
                0b001001 => a & b,
                0b001010 => a | b,
                0b001011 => a ^ b,
                0b010000 => a.wrapping_add(b).wrapping_add(u64::from(v.mask_bit(0, e))),
                0b010010 => a.wrapping_sub(b).wrapping_sub(u64::from(v.mask_bit(0, e))),
                0b010111 => {
                    if o.vm || v.mask_bit(0, e) {
                        b
                    } else {
                        a
                    }
                }
                0b100000 => match a.checked_add(b).filter(|s| *s <= ones(sew)) {
                    Some(s) => s,
                    None => {
                        sat = true;
                        ones(sew)
                    }
                },
                0b100001 => saturate(i128::from(sa) + i128::from(sb), &mut sat),
                0b100010 => match a.checked_sub(b) {
                    Some(s) => s,
                    None => {
                        sat = true;
                        0
                    }
                },
                0b100011 => saturate(i128::from(sa) - i128::from(sb), &mut sat),
                0b100101 => a << (b & shift_mask),
                0b100111 => {
                    // vsmul: (a * b) >> (SEW - 1), rounded, saturated.
                    let p = i128::from(sa) * i128::from(sb);
                    saturate(roundoff_s(p, 8 * sew as u32 - 1, vxrm), &mut sat)
                }
                0b101000 => a >> (b & shift_mask),
                0b101001 => (sa >> (b & shift_mask)) as u64,
                0b101010 => roundoff_u(u128::from(a), (b & shift_mask) as u32, vxrm) as u64,
                0b101011 => roundoff_s(i128::from(sa), (b & shift_mask) as u32, vxrm) as u64,
                _ => return Err(bad()),
            };
            v.set(o.vd, sew, e, r & ones(sew));
        }
        v.vxsat |= sat;
        Ok(())
    }

    /// vrgather(.vv/.vx/.vi), vrgatherei16.vv, vslideup and vslidedown (.vx/.vi).
    fn vector_permute(&mut self, i: u32, o: &Ops, f3: u32, uimm: u64) -> Result<(), Trap> {
        let v = self.vu();
        let (sew, lregs, vl, vstart) = (v.sew(), v.lmul_regs(), v.vl as usize, v.vstart as usize);
        let vlmax = v.vlmax() as u64;
        let disjoint = |a: usize, an: usize, b: usize, bn: usize| a + an <= b || b + bn <= a;
        let ei16 = o.f6 == 0b001110 && f3 == 0;
        let offset = if f3 == 3 { uimm } else { o.scalar };
        // The destination may not overlap a source group (nor, masked, v0).
        let (iregs, ieew) = if ei16 {
            let emul8 = 2 * v.lmul8() / sew;
            if !(1..=64).contains(&emul8) || !group_ok(o.vs1, (emul8 / 8).max(1)) {
                return Err(illegal(i));
            }
            ((emul8 / 8).max(1), 2)
        } else {
            (lregs, sew)
        };
        let vs1_overlaps =
            (o.f6 == 0b001100 || ei16) && o.vv && !disjoint(o.vd, lregs, o.vs1, iregs);
        let slide_down = o.f6 == 0b001111;
        if (!slide_down && !disjoint(o.vd, lregs, o.vs2, lregs)) || vs1_overlaps {
            return Err(illegal(i));
        }
        let src: Vec<u64> = (0..vlmax as usize).map(|e| v.get(o.vs2, sew, e)).collect();
        for e in vstart..vl {
            if !v.active(o.vm, e) {
                continue;
            }
            let r = match o.f6 {
                0b001110 if !ei16 => {
                    // vslideup: elements below the offset stay.
                    if (e as u64) < offset {
                        continue;
                    }
                    src[e - offset as usize]
                }
                0b001111 => {
                    let from = (e as u64).checked_add(offset);
                    from.filter(|f| *f < vlmax).map_or(0, |f| src[f as usize])
                }
                _ => {
                    let index = if o.vv { v.get(o.vs1, ieew, e) } else { offset };
                    if index < vlmax {
                        src[index as usize]
                    } else {
                        0
                    }
                }
            };
            v.set(o.vd, sew, e, r);
        }
        Ok(())
    }
}
