//! Physical memory protection (PMP): 16 entries of pmpcfg/pmpaddr, as M-mode firmware
//! (OpenSBI, a bare-metal monitor) programs them to fence S/U software out of its memory,
//! and the access check the privileged architecture defines: the lowest-numbered entry
//! that matches every byte of an access decides; a partial match fails; no match
//! succeeds for M and fails for S/U; M-mode is checked only against locked entries.
//!
//! Enforced only on machines whose M-mode is the guest's (`Hart::enter_firmware`): with
//! wio's built-in SBI no software can program PMP, and a PMP with no entries set would
//! fence S-mode out of everything. Grain: 4 bytes (G = 0). Not checked: the implicit
//! accesses of Sv39 page-table walks.

use crate::mmu::Access;
use serde::{Deserialize, Serialize};

/// Number of PMP entries.
pub const ENTRIES: usize = 16;

/// pmpcfg byte fields.
#[allow(missing_docs)]
pub mod cfg {
    pub const R: u8 = 1 << 0;
    pub const W: u8 = 1 << 1;
    pub const X: u8 = 1 << 2;
    pub const A_SHIFT: u8 = 3;
    pub const A: u8 = 3 << 3;
    pub const L: u8 = 1 << 7;
    /// Address matching modes (the A field).
    pub const OFF: u8 = 0;
    pub const TOR: u8 = 1;
    pub const NA4: u8 = 2;
    pub const NAPOT: u8 = 3;
}

/// pmpaddr holds physical address bits 55..2.
const ADDR_MASK: u64 = (1 << 54) - 1;

/// The PMP registers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pmp {
    /// Configuration byte of each entry (R, W, X, A, L).
    pub cfg: [u8; ENTRIES],
    /// Address register of each entry.
    pub addr: [u64; ENTRIES],
    /// The active entries' byte ranges and configuration bytes, in priority order:
    /// derived from `cfg` and `addr` by [`Pmp::compile`] after every change, so a check
    /// is a few comparisons (not part of a snapshot: rebuilt on load).
    #[serde(skip)]
    active: Vec<(u64, u64, u8)>,
}

/// What an access check concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Allowed.
    Allow,
    /// Refused: an access fault.
    Deny,
}

impl Pmp {
    /// Whether any entry is locked (then M-mode accesses are checked too).
    pub fn any_locked(&self) -> bool {
        self.cfg.iter().any(|c| c & cfg::L != 0)
    }

    fn locked(&self, i: usize) -> bool {
        self.cfg[i] & cfg::L != 0
    }

    /// Entry `i`'s address is locked: by its own L bit, or as the top of a locked TOR
    /// entry above it.
    fn addr_locked(&self, i: usize) -> bool {
        self.locked(i)
            || (i + 1 < ENTRIES
                && self.locked(i + 1)
                && (self.cfg[i + 1] & cfg::A) >> cfg::A_SHIFT == cfg::TOR)
    }

    /// Rebuilds the active ranges from the registers (call after any change).
    pub fn compile(&mut self) {
        self.active = (0..ENTRIES)
            .filter_map(|i| self.range(i).map(|(lo, hi)| (lo, hi, self.cfg[i])))
            .collect();
    }

    /// Reads pmpcfg register `n` (even n only on RV64: 0 or 2), 8 entries per register.
    pub fn read_cfg(&self, n: usize) -> Option<u64> {
        if !n.is_multiple_of(2) || n / 2 >= ENTRIES / 8 {
            return None;
        }
        let base = n / 2 * 8;
        let mut v = 0u64;
        for k in 0..8 {
            v |= u64::from(self.cfg[base + k]) << (8 * k);
        }
        Some(v)
    }

    /// Writes pmpcfg register `n`: locked entries keep their byte; W without R is
    /// reserved and is stored as no permission (WARL).
    pub fn write_cfg(&mut self, n: usize, value: u64) -> bool {
        if !n.is_multiple_of(2) || n / 2 >= ENTRIES / 8 {
            return false;
        }
        let base = n / 2 * 8;
        for k in 0..8 {
            let i = base + k;
            if self.locked(i) {
                continue;
            }
            let mut b = (value >> (8 * k)) as u8 & (cfg::R | cfg::W | cfg::X | cfg::A | cfg::L);
            if b & cfg::W != 0 && b & cfg::R == 0 {
                b &= !(cfg::W | cfg::R);
            }
            self.cfg[i] = b;
        }
        self.compile();
        true
    }

    /// Reads pmpaddr `i`.
    pub fn read_addr(&self, i: usize) -> Option<u64> {
        self.addr.get(i).copied()
    }

    /// Writes pmpaddr `i` (ignored when locked).
    pub fn write_addr(&mut self, i: usize, value: u64) -> bool {
        if i >= ENTRIES {
            return false;
        }
        if !self.addr_locked(i) {
            self.addr[i] = value & ADDR_MASK;
            self.compile();
        }
        true
    }

    /// The byte range [lo, hi) entry `i` covers, or None when it is off.
    fn range(&self, i: usize) -> Option<(u64, u64)> {
        let a = self.addr[i];
        match (self.cfg[i] & cfg::A) >> cfg::A_SHIFT {
            cfg::TOR => {
                let lo = if i == 0 { 0 } else { self.addr[i - 1] << 2 };
                Some((lo, a << 2))
            }
            cfg::NA4 => Some((a << 2, (a << 2) + 4)),
            cfg::NAPOT => {
                // The count of trailing ones gives the size: 2^(ones + 3) bytes.
                let ones = a.trailing_ones();
                if ones >= 54 {
                    return Some((0, 1 << 56));
                }
                let size = 1u64 << (ones + 3);
                let base = (a & !((1u64 << ones) - 1)) << 2;
                Some((base & !(size - 1), (base & !(size - 1)) + size))
            }
            _ => None,
        }
    }

    /// Checks an access of `len` bytes at physical `addr` made at M-mode (`machine`) or
    /// below.
    pub fn check(&self, addr: u64, len: u64, access: Access, machine: bool) -> Verdict {
        let end = addr.saturating_add(len);
        for &(lo, hi, cfg) in &self.active {
            let hits_first = addr >= lo && addr < hi;
            let hits_any = addr < hi && end > lo;
            if !hits_any {
                continue;
            }
            if !hits_first || end > hi {
                // A partial match fails whatever the mode.
                return Verdict::Deny;
            }
            if machine && cfg & cfg::L == 0 {
                return Verdict::Allow;
            }
            let bit = match access {
                Access::Load => cfg::R,
                Access::Store => cfg::W,
                Access::Exec => cfg::X,
            };
            return if cfg & bit != 0 {
                Verdict::Allow
            } else {
                Verdict::Deny
            };
        }
        if machine {
            Verdict::Allow
        } else {
            Verdict::Deny
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn napot(base: u64, size: u64) -> u64 {
        (base >> 2) | ((size >> 3) - 1)
    }

    #[test]
    fn opensbi_like_layout_fences_s_mode_out_of_the_firmware() {
        let mut p = Pmp::default();
        // Entry 0: firmware at 0x8000_0000 (512 KiB), no permissions for S/U.
        assert!(p.write_addr(0, napot(0x8000_0000, 0x8_0000)));
        // Entry 1: everything else, RWX.
        assert!(p.write_addr(1, u64::MAX));
        let c = u64::from(cfg::NAPOT << cfg::A_SHIFT)
            | (u64::from(cfg::NAPOT << cfg::A_SHIFT | cfg::R | cfg::W | cfg::X) << 8);
        assert!(p.write_cfg(0, c));
        assert_eq!(p.read_cfg(0), Some(c));
        assert_eq!(p.check(0x8000_1000, 8, Access::Load, false), Verdict::Deny);
        assert_eq!(p.check(0x8000_1000, 8, Access::Load, true), Verdict::Allow);
        assert_eq!(p.check(0x8020_0000, 4, Access::Exec, false), Verdict::Allow);
        assert_eq!(
            p.check(0x1000_0000, 1, Access::Store, false),
            Verdict::Allow
        );
        // An access straddling the firmware's end fails (partial match).
        assert_eq!(p.check(0x8007_fffc, 8, Access::Load, false), Verdict::Deny);
        // Odd pmpcfg registers do not exist on RV64.
        assert_eq!(p.read_cfg(1), None);
    }

    #[test]
    fn no_match_fails_below_m_and_locked_entries_bind_m() {
        let mut p = Pmp::default();
        assert_eq!(p.check(0x8000_0000, 4, Access::Load, false), Verdict::Deny);
        assert_eq!(p.check(0x8000_0000, 4, Access::Load, true), Verdict::Allow);
        // TOR [0x8000_0000, 0x8000_1000) read-only and locked.
        p.write_addr(0, 0x8000_0000 >> 2);
        p.write_addr(1, 0x8000_1000 >> 2);
        p.write_cfg(
            0,
            u64::from(cfg::TOR << cfg::A_SHIFT | cfg::R | cfg::L) << 8,
        );
        assert_eq!(p.check(0x8000_0800, 4, Access::Store, true), Verdict::Deny);
        assert_eq!(p.check(0x8000_0800, 4, Access::Load, true), Verdict::Allow);
        // Locked: neither its cfg nor its address (nor the TOR base below it) change.
        p.write_cfg(0, 0);
        p.write_addr(1, 0);
        p.write_addr(0, 0);
        assert_eq!(p.addr[0], 0x8000_0000 >> 2);
        assert_eq!(p.addr[1], 0x8000_1000 >> 2);
        assert_eq!(p.cfg[1] & cfg::L, cfg::L);
        // W without R is reserved: stored as no permission.
        p.write_cfg(2, u64::from(cfg::NA4 << cfg::A_SHIFT | cfg::W));
        assert_eq!(p.cfg[8], cfg::NA4 << cfg::A_SHIFT);
    }
}
