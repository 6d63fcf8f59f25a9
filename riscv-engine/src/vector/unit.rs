//! The vector unit's state (a leaf: the hart holds it, the instructions in the parent
//! module work on it): the register file, the vector CSRs, and the element and mask
//! accessors that lay register groups out as the spec does.

/// The smallest and largest VLEN (bits) a hart may have.
pub const VLEN_RANGE: std::ops::RangeInclusive<u32> = 128..=4096;
/// The largest element, in bits.
pub(crate) const ELEN: u32 = 64;
/// mstatus.VS (bits 10:9) and its dirty value.
pub(crate) const VS: u64 = 3 << 9;
/// vtype.vill.
pub(crate) const VILL: u64 = 1 << 63;

/// The vector CSRs' numbers.
pub(crate) mod addr {
    pub const VSTART: u16 = 0x008;
    pub const VXSAT: u16 = 0x009;
    pub const VXRM: u16 = 0x00a;
    pub const VCSR: u16 = 0x00f;
    pub const VL: u16 = 0xc20;
    pub const VTYPE: u16 = 0xc21;
    pub const VLENB: u16 = 0xc22;
}

/// The vector unit's architectural state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Vector {
    /// VLEN in bytes.
    pub(crate) vlenb: usize,
    /// v0..v31, `vlenb` bytes each.
    pub(crate) regs: Box<[u8]>,
    pub(crate) vtype: u64,
    pub(crate) vl: u64,
    pub(crate) vstart: u64,
    pub(crate) vxrm: u8,
    pub(crate) vxsat: bool,
}

impl Vector {
    /// A unit of `vlen` bits (checked by the caller against [`VLEN_RANGE`]), as reset
    /// leaves it: registers zero, vtype.vill set (no configuration yet), vl 0.
    pub(crate) fn new(vlen: u32) -> Vector {
        let vlenb = (vlen / 8) as usize;
        let mut v = Vector {
            vlenb,
            regs: vec![0; 32 * vlenb].into_boxed_slice(),
            vtype: 0,
            vl: 0,
            vstart: 0,
            vxrm: 0,
            vxsat: false,
        };
        v.reset();
        v
    }

    /// Puts the unit back where reset leaves it, in place (a snapshot restore does this
    /// on every branch: no allocation).
    pub(crate) fn reset(&mut self) {
        self.regs.fill(0);
        self.vtype = VILL;
        self.vl = 0;
        self.vstart = 0;
        self.vxrm = 0;
        self.vxsat = false;
    }

    /// SEW in bytes.
    pub(crate) fn sew(&self) -> usize {
        1 << ((self.vtype >> 3) & 7)
    }

    /// LMUL in eighths (1 = 1/8 ... 64 = 8).
    pub(crate) fn lmul8(&self) -> usize {
        lmul8(self.vtype).unwrap_or(8)
    }

    /// Registers a group of this LMUL occupies (fractional: 1).
    pub(crate) fn lmul_regs(&self) -> usize {
        (self.lmul8() / 8).max(1)
    }

    /// VLMAX of the current vtype.
    pub(crate) fn vlmax(&self) -> usize {
        self.vlmax_of(self.vtype)
    }

    /// VLMAX of `vtype` on this unit (LMUL * VLEN / SEW).
    fn vlmax_of(&self, vtype: u64) -> usize {
        let sew = 1 << ((vtype >> 3) & 7);
        self.vlenb * lmul8(vtype).unwrap_or(8) / 8 / sew
    }

    /// Element `i` (of `eew` bytes) of the group at `reg`, zero-extended.
    #[inline]
    pub(crate) fn get(&self, reg: usize, eew: usize, i: usize) -> u64 {
        let at = reg * self.vlenb + i * eew;
        let mut b = [0u8; 8];
        b[..eew].copy_from_slice(&self.regs[at..at + eew]);
        u64::from_le_bytes(b)
    }

    /// Sets element `i` (of `eew` bytes) of the group at `reg` to the low bytes of `v`.
    #[inline]
    pub(crate) fn set(&mut self, reg: usize, eew: usize, i: usize, v: u64) {
        let at = reg * self.vlenb + i * eew;
        self.regs[at..at + eew].copy_from_slice(&v.to_le_bytes()[..eew]);
    }

    /// Bit `i` of the mask register `reg`.
    #[inline]
    pub(crate) fn mask_bit(&self, reg: usize, i: usize) -> bool {
        self.regs[reg * self.vlenb + i / 8] >> (i % 8) & 1 != 0
    }

    /// Sets bit `i` of the mask register `reg`.
    #[inline]
    pub(crate) fn set_mask_bit(&mut self, reg: usize, i: usize, on: bool) {
        let byte = &mut self.regs[reg * self.vlenb + i / 8];
        *byte = (*byte & !(1 << (i % 8))) | (u8::from(on) << (i % 8));
    }

    /// Element `i` is active: unmasked (`vm`), or its bit of v0 is set.
    #[inline]
    pub(crate) fn active(&self, vm: bool, i: usize) -> bool {
        vm || self.mask_bit(0, i)
    }
}

/// LMUL in eighths for vtype's vlmul field, `None` for the reserved value.
fn lmul8(vtype: u64) -> Option<usize> {
    match vtype & 7 {
        v @ 0..=3 => Some(8 << v),
        5 => Some(1),
        6 => Some(2),
        7 => Some(4),
        _ => None,
    }
}

/// Whether `vtype` is one this hart supports (else vill).
pub(crate) fn legal_vtype(vtype: u64) -> bool {
    let sew_bits = 8u32 << ((vtype >> 3) & 7);
    let reserved = vtype >> 8 != 0 || (vtype >> 3) & 7 > 3;
    match lmul8(vtype) {
        // SEW <= LMUL * ELEN: a fractional LMUL must still hold one element.
        Some(l) => !reserved && sew_bits as usize * 8 <= ELEN as usize * l,
        None => false,
    }
}

/// The vector unit's state as a snapshot keeps it (see [`crate::Hart::save_vector`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct VectorState {
    /// VLEN in bytes (checked against the restoring hart's).
    pub vlenb: u32,
    /// v0..v31, `vlenb` bytes each.
    pub regs: Vec<u8>,
    /// vtype.
    pub vtype: u64,
    /// vl.
    pub vl: u64,
    /// vstart.
    pub vstart: u64,
    /// vxrm.
    pub vxrm: u8,
    /// vxsat.
    pub vxsat: bool,
}

impl Vector {
    /// The state, for a snapshot.
    pub(crate) fn save(&self) -> VectorState {
        VectorState {
            vlenb: self.vlenb as u32,
            regs: self.regs.to_vec(),
            vtype: self.vtype,
            vl: self.vl,
            vstart: self.vstart,
            vxrm: self.vxrm,
            vxsat: self.vxsat,
        }
    }

    /// Loads a saved state, checking that it fits this unit and that every field holds a
    /// value a running unit can (a legal vtype or vill alone, vl <= VLMAX, vxrm < 4).
    pub(crate) fn load(&mut self, s: &VectorState) -> Result<(), crate::StateError> {
        if s.vlenb as usize != self.vlenb {
            return Err(crate::StateError::Mismatch {
                what: "VLEN in bytes",
                saved: u64::from(s.vlenb),
                here: self.vlenb as u64,
            });
        }
        let vill_only = s.vtype == VILL && s.vl == 0;
        let legal = legal_vtype(s.vtype) && s.vl <= self.vlmax_of(s.vtype) as u64;
        if s.regs.len() != self.regs.len()
            || !(vill_only || legal)
            || s.vxrm > 3
            || s.vstart >= self.vlenb as u64 * 8
        {
            return Err(crate::StateError::Invalid("vector unit state".into()));
        }
        self.regs.copy_from_slice(&s.regs);
        self.vtype = s.vtype;
        self.vl = s.vl;
        self.vstart = s.vstart;
        self.vxrm = s.vxrm;
        self.vxsat = s.vxsat;
        Ok(())
    }
}
