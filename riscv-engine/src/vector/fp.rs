//! The OPFVV and OPFVF instructions (funct3 1 and 5 of OP-V): floating point on FP32 and
//! FP64 elements (SEW 32 and 64; there is no half precision), computed by the scalar FPU's
//! integer-only softfloat so results and flags are the same bits on every host.
//! Arithmetic, min/max, sign injection, fused multiply-adds, compares into masks, square
//! root, classify, conversions (single-width, widening, narrowing, round-to-odd),
//! reductions (ordered and unordered, both computed in element order), widening forms,
//! slide-by-one, merges and scalar moves, and the 7-bit estimates (`estimate`).

use super::int::{ones, Ops};
use super::{group_ok, illegal, overlap_ok};
use crate::csr::mstatus;
use crate::fpu::arith::{self, Fused};
use crate::fpu::compare::{self, Comparison, SignInjection};
use crate::fpu::convert::{self, IntType};
use crate::fpu::flags;
use crate::fpu::format::{Format, RoundingMode, DOUBLE, SINGLE};
use crate::hart::Hart;
use crate::trap::Trap;

/// The format of elements of `bytes` bytes, if floating point has one.
fn format(bytes: usize) -> Option<Format> {
    match bytes {
        4 => Some(SINGLE),
        8 => Some(DOUBLE),
        _ => None,
    }
}

/// `a - b`.
fn sub(fmt: Format, a: u64, b: u64, mode: RoundingMode, fl: &mut u8) -> u64 {
    arith::add(fmt, a, b ^ fmt.sign_bit(), mode, fl)
}

/// The integer conversion type of elements of `bytes` bytes (32 or 64 bits).
fn int_type(bytes: usize, signed: bool) -> Option<IntType> {
    match (bytes, signed) {
        (4, true) => Some(IntType::W),
        (4, false) => Some(IntType::Wu),
        (8, true) => Some(IntType::L),
        (8, false) => Some(IntType::Lu),
        _ => None,
    }
}

/// A float of `fmt` converted to an integer of `bytes` bytes (2, 4 or 8), saturating.
fn to_int(fmt: Format, bytes: usize, signed: bool, a: u64, mode: RoundingMode, fl: &mut u8) -> u64 {
    if bytes == 2 {
        // Through 32 bits, then saturated to 16: out of range is invalid only.
        let mut f = 0;
        let ty = if signed { IntType::W } else { IntType::Wu };
        let wide = convert::float_to_int(fmt, ty, a, mode, &mut f);
        let (lo, hi) = if signed {
            (-32768i64, 32767i64)
        } else {
            (0, 65535)
        };
        let v = if signed {
            i64::from(wide as i32)
        } else {
            i64::from(wide as u32)
        };
        if v < lo || v > hi || f & flags::NV != 0 {
            *fl |= flags::NV;
            let nan_or_pos = fmt.is_nan(a) || !fmt.is_neg(a);
            return (if nan_or_pos { hi } else { lo }) as u64 & 0xffff;
        }
        *fl |= f;
        return v as u64 & 0xffff;
    }
    let ty = int_type(bytes, signed).unwrap_or(IntType::L);
    convert::float_to_int(fmt, ty, a, mode, fl) & ones(bytes)
}

/// An integer of `bytes` bytes (2, 4 or 8) converted to `fmt`.
fn from_int(
    fmt: Format,
    bytes: usize,
    signed: bool,
    x: u64,
    mode: RoundingMode,
    fl: &mut u8,
) -> u64 {
    // Sign- or zero-extended to 64 bits, the conversion is the same value.
    let wide = if signed {
        super::int::sx(x, bytes) as u64
    } else {
        x & ones(bytes)
    };
    let ty = if signed { IntType::L } else { IntType::Lu };
    convert::int_to_float(fmt, ty, wide, mode, fl)
}

/// A float narrowed from DOUBLE to SINGLE, rounding to odd.
fn narrow_odd(a: u64, fl: &mut u8) -> u64 {
    let mut f = 0;
    let r = convert::float_to_float(DOUBLE, SINGLE, a, RoundingMode::TowardZero, &mut f);
    *fl |= f;
    if f & flags::NX != 0 && !SINGLE.is_nan(r) {
        r | 1
    } else {
        r
    }
}

impl Hart {
    /// OPFVV (funct3 1) and OPFVF (funct3 5).
    pub(crate) fn vector_fp(&mut self, i: u32) -> Result<(), Trap> {
        let vv = (i >> 12) & 7 == 1;
        let bad = || illegal(i);
        if self.mstatus & mstatus::FS == 0 {
            return Err(bad());
        }
        let mode = RoundingMode::from_bits(self.fp.frm).ok_or_else(bad)?;
        let o = Ops::decode(i, 0, vv, false);
        let f1 = self.fp.f[o.vs1];
        let v = self.vu();
        let (sew, lmul8, lregs) = (v.sew(), v.lmul8(), v.lmul_regs());
        let (vl, vstart) = (v.vl as usize, v.vstart as usize);
        let aligned = |r: usize| group_ok(r, lregs);
        let mut fl = 0u8;
        // The scalar operand, NaN-unboxed for FP32.
        let scalar = |bytes: usize| match bytes {
            4 if f1 >> 32 == 0xffff_ffff => f1 & 0xffff_ffff,
            4 => SINGLE.canonical_nan(),
            _ => f1,
        };
        let f6 = o.f6;
        // VFUNARY0 conversions have their own element widths.
        if vv && f6 == 0b010010 {
            return self.vector_fp_convert(i, &o, mode);
        }
        let wide_op = f6 >= 0b110000;
        let fmt = if wide_op && !matches!(f6, 0b110001 | 0b110011) {
            if sew != 4 || lmul8 > 32 {
                return Err(bad());
            }
            SINGLE
        } else {
            format(sew).ok_or_else(bad)?
        };
        let mut wrote_f = false;
        match (f6, vv) {
            // vfmv.f.s
            (0b010000, true) => {
                if o.vs1 != 0 || !o.vm {
                    return Err(bad());
                }
                let e = v.get(o.vs2, sew, 0);
                self.fp.f[o.vd] = if sew == 4 {
                    crate::fpu::nan_box_s(e as u32)
                } else {
                    e
                };
                wrote_f = true;
            }
            // vfmv.s.f
            (0b010000, false) => {
                if o.vs2 != 0 || !o.vm {
                    return Err(bad());
                }
                if vstart < vl {
                    v.set(o.vd, sew, 0, scalar(sew));
                }
            }
            // vfmerge.vfm / vfmv.v.f
            (0b010111, false) => {
                if (o.vm && o.vs2 != 0) || (!o.vm && o.vd == 0) || !aligned(o.vd) || !aligned(o.vs2)
                {
                    return Err(bad());
                }
                let b = scalar(sew);
                for e in vstart..vl {
                    let r = if o.vm || v.mask_bit(0, e) {
                        b
                    } else {
                        v.get(o.vs2, sew, e)
                    };
                    v.set(o.vd, sew, e, r);
                }
            }
            // vfslide1up / vfslide1down
            (0b001110 | 0b001111, false) => {
                let up = f6 == 0b001110;
                let disjoint = o.vd + lregs <= o.vs2 || o.vs2 + lregs <= o.vd;
                if !aligned(o.vd) || !aligned(o.vs2) || (!o.vm && o.vd == 0) || (up && !disjoint) {
                    return Err(bad());
                }
                let src: Vec<u64> = (0..vl).map(|e| v.get(o.vs2, sew, e)).collect();
                let b = scalar(sew);
                for e in vstart..vl {
                    if v.active(o.vm, e) {
                        let r = match (up, e) {
                            (true, 0) => b,
                            (true, e) => src[e - 1],
                            (false, e) if e + 1 == vl => b,
                            (false, e) => src[e + 1],
                        };
                        v.set(o.vd, sew, e, r);
                    }
                }
            }
            // Compares: vmfeq, vmfle, vmflt, vmfne (vv, vf); vmfgt, vmfge (vf).
            (0b011000 | 0b011001 | 0b011011 | 0b011100, _) | (0b011101 | 0b011111, false) => {
                if !aligned(o.vs2)
                    || (vv && !aligned(o.vs1))
                    || !overlap_ok(o.vd, 1, 0, o.vs2, lregs, sew, lmul8)
                    || (vv && !overlap_ok(o.vd, 1, 0, o.vs1, lregs, sew, lmul8))
                {
                    return Err(bad());
                }
                for e in vstart..vl {
                    if !v.active(o.vm, e) {
                        continue;
                    }
                    let a = v.get(o.vs2, sew, e);
                    let b = if vv {
                        v.get(o.vs1, sew, e)
                    } else {
                        scalar(sew)
                    };
                    let bit = match f6 {
                        0b011000 => compare::compare(fmt, Comparison::Eq, a, b, &mut fl),
                        0b011001 => compare::compare(fmt, Comparison::Le, a, b, &mut fl),
                        0b011011 => compare::compare(fmt, Comparison::Lt, a, b, &mut fl),
                        0b011100 => !compare::compare(fmt, Comparison::Eq, a, b, &mut fl),
                        0b011101 => compare::compare(fmt, Comparison::Lt, b, a, &mut fl),
                        _ => compare::compare(fmt, Comparison::Le, b, a, &mut fl),
                    };
                    v.set_mask_bit(o.vd, e, bit);
                }
            }
            // VFUNARY1: vfsqrt, vfrsqrt7, vfrec7, vfclass.
            (0b010011, true) => {
                if !aligned(o.vd) || !aligned(o.vs2) || (!o.vm && o.vd == 0) {
                    return Err(bad());
                }
                if !matches!(o.vs1, 0 | 4 | 5 | 0x10) {
                    return Err(bad());
                }
                for e in vstart..vl {
                    if v.active(o.vm, e) {
                        let a = v.get(o.vs2, sew, e);
                        let r = match o.vs1 {
                            0 => arith::sqrt(fmt, a, mode, &mut fl),
                            4 => super::estimate::rsqrt7(fmt, a, &mut fl),
                            5 => super::estimate::rec7(fmt, a, mode, &mut fl),
                            _ => compare::classify(fmt, a),
                        };
                        v.set(o.vd, sew, e, r);
                    }
                }
            }
            // Reductions: vfredusum, vfredosum, vfredmin, vfredmax; vfwredusum, vfwredosum.
            (0b000001 | 0b000011 | 0b000101 | 0b000111 | 0b110001 | 0b110011, true) => {
                let widen = f6 >= 0b110000;
                if vstart != 0 || !aligned(o.vs2) || (widen && (sew != 4)) {
                    return Err(bad());
                }
                if vl == 0 {
                    return self.fp_done(fl, wrote_f);
                }
                let (ofmt, obytes) = if widen { (DOUBLE, 8) } else { (fmt, sew) };
                let mut acc = v.get(o.vs1, obytes, 0);
                for e in 0..vl {
                    if !v.active(o.vm, e) {
                        continue;
                    }
                    let mut x = v.get(o.vs2, sew, e);
                    if widen {
                        x = convert::float_to_float(SINGLE, DOUBLE, x, mode, &mut fl);
                    }
                    acc = match f6 {
                        0b000101 => compare::min_max(ofmt, false, acc, x, &mut fl),
                        0b000111 => compare::min_max(ofmt, true, acc, x, &mut fl),
                        _ => arith::add(ofmt, acc, x, mode, &mut fl),
                    };
                }
                v.set(o.vd, obytes, 0, acc);
            }
            _ => {
                self.vector_fp_elementwise(i, &o, fmt, scalar(sew), mode, &mut fl)?;
            }
        }
        self.fp_done(fl, wrote_f)
    }

    /// Accrues `fl` into fflags and marks the FP state dirty when anything changed.
    fn fp_done(&mut self, fl: u8, wrote_f: bool) -> Result<(), Trap> {
        if fl != 0 || wrote_f {
            self.fp.fflags |= fl;
            self.fs_dirty();
        }
        Ok(())
    }

    /// The element-wise arithmetic: single-width and widening.
    fn vector_fp_elementwise(
        &mut self,
        i: u32,
        o: &Ops,
        fmt: Format,
        b_scalar: u64,
        mode: RoundingMode,
        fl: &mut u8,
    ) -> Result<(), Trap> {
        let f6 = o.f6;
        let bad = || illegal(i);
        let v = self.vu();
        let (sew, lmul8) = (v.sew(), v.lmul8());
        let (vl, vstart) = (v.vl as usize, v.vstart as usize);
        let known_vv = matches!(f6, 0b000000 | 0b000010 | 0b000100 | 0b000110 | 0b001000..=0b001010 | 0b100000 | 0b100100 | 0b101000..=0b101111 | 0b110000 | 0b110010 | 0b110100 | 0b110110 | 0b111000 | 0b111100..=0b111111);
        let known_vf = known_vv || matches!(f6, 0b100001 | 0b100111);
        if !(if o.vv { known_vv } else { known_vf }) {
            return Err(bad());
        }
        let widening = f6 >= 0b110000;
        let dfmt = if widening { DOUBLE } else { fmt };
        let wide_vs2 = matches!(f6, 0b110100 | 0b110110);
        let (dw, _, s2w) = o.layout(sew, lmul8, widening, wide_vs2).ok_or_else(bad)?;
        for e in vstart..vl {
            if !v.active(o.vm, e) {
                continue;
            }
            let mut a = v.get(o.vs2, s2w, e);
            let mut b = if o.vv { v.get(o.vs1, sew, e) } else { b_scalar };
            let d = v.get(o.vd, dw, e);
            if widening {
                if !wide_vs2 {
                    a = convert::float_to_float(SINGLE, DOUBLE, a, mode, fl);
                }
                b = convert::float_to_float(SINGLE, DOUBLE, b, mode, fl);
            }
            let f = dfmt;
            let r = match f6 {
                0b000000 | 0b110000 | 0b110100 => arith::add(f, a, b, mode, fl),
                0b000010 | 0b110010 | 0b110110 => sub(f, a, b, mode, fl),
                0b100111 => sub(f, b, a, mode, fl),
                0b000100 => compare::min_max(f, false, a, b, fl),
                0b000110 => compare::min_max(f, true, a, b, fl),
                0b001000 => compare::sign_inject(f, SignInjection::Copy, a, b),
                0b001001 => compare::sign_inject(f, SignInjection::Negate, a, b),
                0b001010 => compare::sign_inject(f, SignInjection::Xor, a, b),
                0b100000 => arith::div(f, a, b, mode, fl),
                0b100001 => arith::div(f, b, a, mode, fl),
                0b100100 | 0b111000 => arith::mul(f, a, b, mode, fl),
                // vd = ±(vd * vs1) ± vs2
                0b101000 => arith::fma(f, Fused::Madd, [d, b, a], mode, fl),
                0b101001 => arith::fma(f, Fused::Nmadd, [d, b, a], mode, fl),
                0b101010 => arith::fma(f, Fused::Msub, [d, b, a], mode, fl),
                0b101011 => arith::fma(f, Fused::Nmsub, [d, b, a], mode, fl),
                // vd = ±(vs1 * vs2) ± vd
                0b101100 | 0b111100 => arith::fma(f, Fused::Madd, [b, a, d], mode, fl),
                0b101101 | 0b111101 => arith::fma(f, Fused::Nmadd, [b, a, d], mode, fl),
                0b101110 | 0b111110 => arith::fma(f, Fused::Msub, [b, a, d], mode, fl),
                _ => arith::fma(f, Fused::Nmsub, [b, a, d], mode, fl),
            };
            v.set(o.vd, dw, e, r);
        }
        Ok(())
    }

    /// VFUNARY0: conversions between floats and integers, single-width, widening and
    /// narrowing.
    fn vector_fp_convert(&mut self, i: u32, o: &Ops, mode: RoundingMode) -> Result<(), Trap> {
        let bad = || illegal(i);
        let v = self.vu();
        let (sew, lmul8, lregs) = (v.sew(), v.lmul8(), v.lmul_regs());
        let (vl, vstart) = (v.vl as usize, v.vstart as usize);
        let kind = o.vs1;
        let rtz = matches!(kind & 0b111, 0b110 | 0b111);
        let mode = if rtz { RoundingMode::TowardZero } else { mode };
        let signed = kind & 1 == 1;
        // (source bytes, destination bytes)
        let (sb, db) = match kind >> 3 {
            0 => (sew, sew),
            1 => (sew, 2 * sew),
            _ => (2 * sew, sew),
        };
        // Which side is a float: 0..=1 float to int, 2..=3 int to float, 4 float to float,
        // 5 float to float rounding to odd, 6..=7 float to int (rtz).
        let op = kind & 0b111;
        let legal_kind = match kind >> 3 {
            0 => matches!(op, 0..=3 | 6 | 7),
            1 => matches!(op, 0..=4 | 6 | 7),
            2 => matches!(op, 0..=7),
            _ => false,
        };
        if !legal_kind || db > 8 || sb > 8 {
            return Err(bad());
        }
        let float_side = |bytes: usize| format(bytes).ok_or_else(bad);
        let (from_f, to_f) = match op {
            0 | 1 | 6 | 7 => (Some(float_side(sb)?), None),
            2 | 3 => (None, Some(float_side(db)?)),
            _ => (Some(float_side(sb)?), Some(float_side(db)?)),
        };
        let (dregs, sregs) = match kind >> 3 {
            0 => (lregs, lregs),
            1 => ((2 * lmul8 / 8).max(1), lregs),
            _ => (lregs, (2 * lmul8 / 8).max(1)),
        };
        let semul8 = if kind >> 3 == 2 { 2 * lmul8 } else { lmul8 };
        if lmul8 * 2 > 64 && kind >> 3 != 0
            || !group_ok(o.vd, dregs)
            || !group_ok(o.vs2, sregs)
            || (!o.vm && o.vd == 0)
            || !overlap_ok(o.vd, dregs, db, o.vs2, sregs, sb, semul8)
        {
            return Err(bad());
        }
        let mut fl = 0u8;
        for e in vstart..vl {
            if !v.active(o.vm, e) {
                continue;
            }
            let a = v.get(o.vs2, sb, e);
            let r = match (from_f, to_f, op) {
                (Some(f), None, _) => to_int(f, db, signed, a, mode, &mut fl),
                (None, Some(t), _) => from_int(t, sb, signed, a, mode, &mut fl),
                (Some(_), Some(_), 5) => narrow_odd(a, &mut fl),
                (Some(f), Some(t), _) => convert::float_to_float(f, t, a, mode, &mut fl),
                _ => return Err(bad()),
            };
            v.set(o.vd, db, e, r & ones(db));
        }
        self.fp_done(fl, false)
    }
}
