//! The vector extension (RVV 1.0) as wio's hart implements it: 32 vector registers of VLEN
//! bits (a machine's configuration, 128 to 4096), ELEN 64, the `vtype`/`vl`/`vstart`/
//! `vxrm`/`vxsat`/`vlenb` CSRs, and `mstatus.VS` (off: every vector instruction and CSR is
//! illegal; any write marks it dirty).
//!
//! Every instruction of the V extension: the configuration instructions
//! (`vset{i}vl{i}`), every load and store form (`mem`), the integer instructions of
//! OPIVV/OPIVX/OPIVI (`int`) and of OPMVV/OPMVX (`mvv`), floating point on FP32/FP64 (`fp`,
//! with the 7-bit estimates in `estimate`). A machine gets the unit with an ISA string that
//! has `v` (`--isa rv64gcv`, `_zvl<N>b` for VLEN; see [`crate::Isa`]); a snapshot keeps its
//! state ([`VectorState`], a section of its own).
//!
//! Policies, chosen as QEMU 7.2 does so the two can be compared: tail and inactive elements
//! are left undisturbed (the "agnostic" settings allow that), `vl` = min(AVL, VLMAX).
//! Element `i` of the register group starting at `vd` with EEW `e` bytes is at byte
//! `vd * VLENB + i * e` of the register file (little-endian), which is what the spec's
//! register-group layout is.

mod estimate;
mod fp;
mod int;
mod mem;
mod mvv;
pub(crate) mod unit;

pub(crate) use mem::vector_width;

use crate::bus::Bus;
use crate::hart::Hart;
use crate::trap::{Flow, Trap};

use unit::{addr, legal_vtype};
pub(crate) use unit::{Vector, VILL, VS};
pub use unit::{VectorState, VLEN_RANGE};

/// Whether a group of `regs` registers starting at `reg` is aligned and inside v0..v31.
pub(crate) fn group_ok(reg: usize, regs: usize) -> bool {
    reg.is_multiple_of(regs) && reg + regs <= 32
}

/// The spec's rule (5.2) for a destination group overlapping a source group of another
/// element width: allowed when the widths are equal, when a narrower destination sits in
/// the lowest-numbered part of the source, or when a wider destination has the source
/// (of EMUL at least 1) in its highest-numbered part.
pub(crate) fn overlap_ok(
    d: usize,
    d_regs: usize,
    d_eew: usize,
    s: usize,
    s_regs: usize,
    s_eew: usize,
    s_emul8: usize,
) -> bool {
    let disjoint = d + d_regs <= s || s + s_regs <= d;
    if disjoint || d_eew == s_eew {
        return true;
    }
    if d_eew < s_eew {
        return d == s;
    }
    s_emul8 >= 8 && s + s_regs == d + d_regs
}

fn illegal(i: u32) -> Trap {
    Trap::new(crate::csr::cause::ILLEGAL_INSN, u64::from(i))
}

impl Hart {
    /// The vector unit, if the hart has one and mstatus.VS is on; `Err` (illegal
    /// instruction `i`) otherwise.
    pub(crate) fn vector_on(&mut self, i: u32) -> Result<&mut Vector, Trap> {
        if self.mstatus & VS == 0 {
            return Err(illegal(i));
        }
        self.vector.as_deref_mut().ok_or_else(|| illegal(i))
    }

    /// Marks the vector state dirty.
    pub(crate) fn vs_dirty(&mut self) {
        self.mstatus |= VS;
    }

    /// Whether the hart has a vector unit.
    pub(crate) fn has_vector(&self) -> bool {
        self.vector.is_some()
    }

    /// The vector unit's state, if the hart has one (a snapshot keeps it beside the
    /// [`crate::HartState`], in a section of its own).
    pub fn save_vector(&self) -> Option<VectorState> {
        self.vector.as_deref().map(unit::Vector::save)
    }

    /// Flips the bits of `mask` in 64-bit lane `lane` (modulo the lanes of VLEN) of vector
    /// register `reg` (a single-event upset): (the lane, its value before, after), or
    /// `None` for a hart without the vector extension.
    pub fn flip_vreg_bits(&mut self, reg: u8, lane: u8, mask: u64) -> Option<(usize, u64, u64)> {
        let v = self.vector.as_deref_mut()?;
        let lane = usize::from(lane) % (v.vlenb / 8);
        let reg = usize::from(reg & 31);
        let before = v.get(reg, 8, lane);
        // (Not mstatus.VS: an upset is not a write by software.)
        v.set(reg, 8, lane, before ^ mask);
        Some((lane, before, before ^ mask))
    }

    /// Puts a saved vector state into this hart's unit; refused (and nothing changed) if
    /// the hart has none or it does not fit.
    pub fn load_vector(&mut self, s: &VectorState) -> Result<(), crate::StateError> {
        match self.vector.as_deref_mut() {
            Some(v) => v.load(s),
            None => Err(crate::StateError::Invalid(
                "a vector unit state for a hart without the vector extension".into(),
            )),
        }
    }

    /// After a debugger changed the vector registers: mstatus.VS turns dirty, as after a
    /// vector instruction, so that a kernel saves them, unless the unit is off (it stays
    /// off).
    pub fn vector_written(&mut self) {
        if self.mstatus & VS != 0 {
            self.vs_dirty();
        }
    }

    /// Turns mstatus.VS on (dirty) where the hart has a vector unit, as a kernel does for a
    /// process that uses vectors (the differential test runs user code so).
    pub fn enable_vector(&mut self) {
        if self.has_vector() {
            self.vs_dirty();
        }
    }

    /// Reads vector CSR `csr`: `None` if it is not one, `Some(Err)` if illegal now.
    pub(crate) fn vector_csr_read(&self, csr: u16) -> Option<Result<u64, ()>> {
        let known = matches!(
            csr,
            addr::VSTART
                | addr::VXSAT
                | addr::VXRM
                | addr::VCSR
                | addr::VL
                | addr::VTYPE
                | addr::VLENB
        );
        if !known {
            return None;
        }
        let Some(v) = self.vector.as_deref().filter(|_| self.mstatus & VS != 0) else {
            return Some(Err(()));
        };
        Some(Ok(match csr {
            addr::VSTART => v.vstart,
            addr::VXSAT => u64::from(v.vxsat),
            addr::VXRM => u64::from(v.vxrm),
            addr::VCSR => u64::from(v.vxsat) | (u64::from(v.vxrm) << 1),
            addr::VL => v.vl,
            addr::VTYPE => v.vtype,
            _ => v.vlenb as u64,
        }))
    }

    /// Writes vector CSR `csr` (read-only ones were refused by the caller's numbering
    /// check): `None` if it is not one, `Some(Err)` if illegal now.
    pub(crate) fn vector_csr_write(&mut self, csr: u16, value: u64) -> Option<Result<(), ()>> {
        if !matches!(csr, addr::VSTART | addr::VXSAT | addr::VXRM | addr::VCSR) {
            return None;
        }
        if self.mstatus & VS == 0 {
            return Some(Err(()));
        }
        let Some(v) = self.vector.as_deref_mut() else {
            return Some(Err(()));
        };
        match csr {
            // Enough bits to hold any element index (VLMAX <= 8 * VLEN / 8).
            addr::VSTART => v.vstart = value & (v.vlenb as u64 * 8 - 1),
            addr::VXSAT => v.vxsat = value & 1 != 0,
            addr::VXRM => v.vxrm = (value & 3) as u8,
            _ => {
                v.vxsat = value & 1 != 0;
                v.vxrm = ((value >> 1) & 3) as u8;
            }
        }
        self.vs_dirty();
        Some(Ok(()))
    }

    /// OP-V (major opcode 0x57): configuration, integer and (not yet) floating point.
    pub(crate) fn vector_op(&mut self, bus: &mut dyn Bus, i: u32) -> Result<Flow, Trap> {
        let _ = bus;
        let f3 = (i >> 12) & 7;
        if f3 == 7 {
            return self.vset(i);
        }
        let v = self.vector_on(i)?;
        if v.vtype & VILL != 0 {
            return Err(illegal(i));
        }
        let x1 = self.x[((i >> 15) & 31) as usize];
        match f3 {
            0 | 3 | 4 => self.vector_int(i, x1)?,
            2 | 6 => self.vector_mvv(i, x1)?,
            _ => self.vector_fp(i)?,
        }
        self.vs_dirty();
        if let Some(v) = self.vector.as_deref_mut() {
            v.vstart = 0;
        }
        Ok(Flow::Next)
    }

    /// vsetvli, vsetivli, vsetvl.
    fn vset(&mut self, i: u32) -> Result<Flow, Trap> {
        let rd = ((i >> 7) & 31) as usize;
        let rs1 = ((i >> 15) & 31) as usize;
        let (vtype, avl) = if i >> 31 == 0 {
            (u64::from((i >> 20) & 0x7ff), None)
        } else if i >> 30 == 3 {
            (u64::from((i >> 20) & 0x3ff), Some(rs1 as u64))
        } else if (i >> 25) & 0x3f == 0 {
            (self.x[((i >> 20) & 31) as usize], None)
        } else {
            return Err(illegal(i));
        };
        let avl_x = self.x[rs1];
        let v = self.vector_on(i)?;
        let avl = match avl {
            Some(imm) => imm,
            None if rs1 != 0 => avl_x,
            None if rd != 0 => u64::MAX,
            None => v.vl,
        };
        if legal_vtype(vtype) {
            v.vtype = vtype;
            v.vl = avl.min(v.vlmax() as u64);
        } else {
            v.vtype = VILL;
            v.vl = 0;
        }
        v.vstart = 0;
        let vl = v.vl;
        if rd != 0 {
            self.x[rd] = vl;
        }
        self.vs_dirty();
        Ok(Flow::Next)
    }
}

#[cfg(test)]
mod tests;
