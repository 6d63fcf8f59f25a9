//! Vector loads and stores (LOAD-FP / STORE-FP with a vector width): unit-stride,
//! strided and indexed (ordered and unordered, which one hart runs alike), each with
//! segments (`nf`), masking and `vstart`; fault-only-first loads; whole-register loads
//! and stores; mask loads and stores. An access that faults at element `i` traps with
//! `vstart = i`, the elements before it done (a fault-only-first load past element 0
//! instead ends there, `vl = i`).

use super::{group_ok, illegal, overlap_ok, Vector, VILL};
use crate::bus::Bus;
use crate::hart::Hart;
use crate::trap::{Flow, Trap};

/// How elements are addressed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Unit,
    Strided(u64),
    /// Indexed through the group at this register, whose elements are this many bytes.
    Indexed(usize, usize),
    FaultOnlyFirst,
    /// Whole registers: `nf` registers, ignoring vtype and vl.
    Whole,
    /// A mask register's ceil(vl / 8) bytes.
    Mask,
}

/// One decoded access.
struct Access {
    mode: Mode,
    /// Data element width in bytes.
    eew: usize,
    /// Fields per segment.
    nf: usize,
    /// Registers each field's group occupies.
    regs: usize,
    /// Elements to run through (`vstart` on).
    evl: usize,
    vm: bool,
    reg: usize,
    base: u64,
}

/// The element width in bytes of a vector load/store width field, if it is one.
pub(crate) fn vector_width(f3: u32) -> Option<usize> {
    match f3 {
        0 => Some(1),
        5 => Some(2),
        6 => Some(4),
        7 => Some(8),
        _ => None,
    }
}

impl Hart {
    /// A vector load (`store` false) or store of instruction `i`.
    pub(crate) fn vector_mem(
        &mut self,
        bus: &mut dyn Bus,
        i: u32,
        store: bool,
    ) -> Result<Flow, Trap> {
        let a = self.vector_access(i, store)?;
        let vstart = self.vu().vstart as usize;
        let mut vl_cut = None;
        for e in vstart..a.evl {
            if !self.vu().active(a.vm, e) {
                continue;
            }
            for f in 0..a.nf {
                let (addr, width, reg, idx) = self.element_address(&a, e, f);
                let result = if store {
                    let value = self.vu().get(reg, width, idx);
                    self.store(bus, addr, width as u8, value)
                } else {
                    self.load(bus, addr, width as u8)
                        .map(|value| self.vu().set(reg, width, idx, value))
                };
                if let Err(t) = result {
                    if a.mode == Mode::FaultOnlyFirst && e > 0 {
                        vl_cut = Some(e);
                        break;
                    }
                    self.vu().vstart = e as u64;
                    if !store {
                        self.vs_dirty();
                    }
                    return Err(t);
                }
            }
            if vl_cut.is_some() {
                break;
            }
        }
        let v = self.vu();
        if let Some(cut) = vl_cut {
            v.vl = cut as u64;
        }
        let changed = !store || v.vstart != 0;
        v.vstart = 0;
        if changed {
            self.vs_dirty();
        }
        Ok(Flow::Next)
    }

    /// The vector unit (present: the caller went through `vector_on`).
    pub(crate) fn vu(&mut self) -> &mut Vector {
        self.vector
            .as_deref_mut()
            .expect("a vector instruction runs only on a hart with a vector unit")
    }

    /// Address, width, register and element index of field `f` of element `e`.
    fn element_address(&mut self, a: &Access, e: usize, f: usize) -> (u64, usize, usize, usize) {
        let reg = a.reg + f * a.regs;
        let at = |off: u64| a.base.wrapping_add(off);
        match a.mode {
            Mode::Unit | Mode::FaultOnlyFirst => {
                (at(((e * a.nf + f) * a.eew) as u64), a.eew, reg, e)
            }
            Mode::Strided(stride) => (
                at((e as u64)
                    .wrapping_mul(stride)
                    .wrapping_add((f * a.eew) as u64)),
                a.eew,
                reg,
                e,
            ),
            Mode::Indexed(vs2, ieew) => {
                let index = self.vu().get(vs2, ieew, e);
                (at(index.wrapping_add((f * a.eew) as u64)), a.eew, reg, e)
            }
            Mode::Whole => (at((e * a.eew) as u64), a.eew, a.reg, e),
            Mode::Mask => (at(e as u64), 1, a.reg, e),
        }
    }

    /// Decodes and checks a vector load/store: `Err` is its illegal-instruction trap.
    fn vector_access(&mut self, i: u32, store: bool) -> Result<Access, Trap> {
        let eew = vector_width((i >> 12) & 7).ok_or_else(|| illegal(i))?;
        let nf = ((i >> 29) & 7) as usize + 1;
        let mop = (i >> 26) & 3;
        let vm = (i >> 25) & 1 != 0;
        let field = ((i >> 20) & 31) as usize;
        let reg = ((i >> 7) & 31) as usize;
        let base = self.x[((i >> 15) & 31) as usize];
        let stride = self.x[field];
        let v = self.vector_on(i)?;
        if (i >> 28) & 1 != 0 {
            return Err(illegal(i)); // mew: element widths over 64 bits
        }
        // A masked load may not write v0 (it holds the mask).
        let masked_into_v0 = !store && !vm && reg == 0;
        let mode = match (mop, field) {
            (0, 8) => Mode::Whole,
            (0, 0xb) => Mode::Mask,
            (0, 0x10) if !store => Mode::FaultOnlyFirst,
            (0, 0) => Mode::Unit,
            (0, _) => return Err(illegal(i)),
            (2, _) => Mode::Strided(stride),
            _ => Mode::Indexed(field, eew),
        };
        let access = |mode, eew, nf, regs, evl| Access {
            mode,
            eew,
            nf,
            regs,
            evl,
            vm,
            reg,
            base,
        };
        match mode {
            Mode::Whole => {
                // vl<nf>re<eew>.v / vs<nf>r.v: nf of 1, 2, 4 or 8 whole registers.
                if !vm || !nf.is_power_of_two() || !group_ok(reg, nf) || (store && eew != 1) {
                    return Err(illegal(i));
                }
                let evl = nf * v.vlenb / eew;
                return Ok(access(mode, eew, 1, nf, evl));
            }
            _ if v.vtype & VILL != 0 => return Err(illegal(i)),
            Mode::Mask => {
                if !vm || nf != 1 || eew != 1 {
                    return Err(illegal(i));
                }
                let evl = (v.vl as usize).div_ceil(8);
                return Ok(access(mode, 1, 1, 1, evl));
            }
            _ => {}
        }
        let (sew, lmul8) = (v.sew(), v.lmul8());
        let vl = v.vl as usize;
        if let Mode::Indexed(vs2, ieew) = mode {
            // Data: SEW at LMUL; indices: EEW at EMUL = EEW / SEW * LMUL.
            let iemul8 = ieew * lmul8 / sew;
            let (dregs, iregs) = (v.lmul_regs(), (iemul8 / 8).max(1));
            let ok = (1..=64).contains(&iemul8)
                && nf * dregs <= 8
                && group_ok(reg, dregs)
                && reg + nf * dregs <= 32
                && group_ok(vs2, iregs)
                && !masked_into_v0
                && (store || overlap_ok(reg, nf * dregs, sew, vs2, iregs, ieew, iemul8))
                && (store || nf == 1 || reg + nf * dregs <= vs2 || vs2 + iregs <= reg);
            if !ok {
                return Err(illegal(i));
            }
            return Ok(access(mode, sew, nf, dregs, vl));
        }
        // Unit-stride, strided, fault-only-first: EEW at EMUL = EEW / SEW * LMUL.
        let emul8 = eew * lmul8 / sew;
        let regs = (emul8 / 8).max(1);
        let ok = (1..=64).contains(&emul8)
            && eew * lmul8 % sew == 0
            && nf * regs <= 8
            && group_ok(reg, regs)
            && reg + nf * regs <= 32
            && !masked_into_v0;
        if !ok {
            return Err(illegal(i));
        }
        Ok(access(mode, eew, nf, regs, vl))
    }
}
