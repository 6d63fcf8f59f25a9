//! Sv39 address translation: the kinds of access, PTE bits, the permission rule and a
//! small software TLB. Plain types with no knowledge of the hart; the page-table walk and
//! the hart's loads and stores through it are in `mmu::translate`. Accessed and dirty
//! bits are set by the walker (as hardware with Svadu does), so the guest never takes a
//! page fault just to set them.

mod translate;

/// The kind of access being translated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Instruction fetch.
    Exec,
    /// Data load.
    Load,
    /// Data store (and AMO).
    Store,
}

/// PTE bits.
pub mod pte {
    /// Valid.
    pub const V: u64 = 1 << 0;
    /// Readable.
    pub const R: u64 = 1 << 1;
    /// Writable.
    pub const W: u64 = 1 << 2;
    /// Executable.
    pub const X: u64 = 1 << 3;
    /// User-accessible.
    pub const U: u64 = 1 << 4;
    /// Accessed.
    pub const A: u64 = 1 << 6;
    /// Dirty.
    pub const D: u64 = 1 << 7;
    /// Reserved and extension bits (N, PBMT, bits 53..=63) that must be zero here.
    pub const RESERVED: u64 = 0xffc0_0000_0000_0000;
}

const TLB_ENTRIES: usize = 256;

/// One cached translation of a 4 KiB virtual page.
#[derive(Debug, Clone, Copy, Default)]
pub struct TlbEntry {
    /// Virtual page number + 1 (0 = empty).
    pub tag: u64,
    /// The TLB generation the entry belongs to.
    pub generation: u32,
    /// Physical address of the page.
    pub page: u64,
    /// The leaf PTE's permission and status bits.
    pub flags: u64,
}

/// A direct-mapped TLB.
#[derive(Debug, Clone)]
pub struct Tlb {
    pub(crate) entries: Box<[TlbEntry; TLB_ENTRIES]>,
    /// Entries of older generations are invalid: a flush is one increment.
    pub(crate) generation: u32,
}

impl Default for Tlb {
    fn default() -> Self {
        Tlb {
            entries: Box::new([TlbEntry::default(); TLB_ENTRIES]),
            generation: 1,
        }
    }
}

impl Tlb {
    /// Looks up the entry for virtual page `vpn`.
    #[inline]
    pub fn lookup(&self, vpn: u64) -> Option<&TlbEntry> {
        let e = &self.entries[(vpn as usize) & (TLB_ENTRIES - 1)];
        (e.tag == vpn + 1 && e.generation == self.generation).then_some(e)
    }

    /// Caches a translation.
    #[inline]
    pub fn insert(&mut self, vpn: u64, page: u64, flags: u64) {
        self.entries[(vpn as usize) & (TLB_ENTRIES - 1)] = TlbEntry {
            tag: vpn + 1,
            generation: self.generation,
            page,
            flags,
        };
    }

    /// Forgets the translation of virtual page `vpn`, if cached.
    pub fn invalidate(&mut self, vpn: u64) {
        let e = &mut self.entries[(vpn as usize) & (TLB_ENTRIES - 1)];
        if e.tag == vpn + 1 {
            e.tag = 0;
        }
    }

    /// Forgets every translation (SFENCE.VMA, satp writes) in O(1).
    pub fn flush(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            for e in self.entries.iter_mut() {
                e.tag = 0;
            }
            self.generation = 1;
        }
    }
}

/// Whether a leaf PTE with `flags` permits `access` at supervisor (`supervisor`) or user level.
pub fn permits(flags: u64, access: Access, supervisor: bool, sum: bool, mxr: bool) -> bool {
    let user_page = flags & pte::U != 0;
    if supervisor {
        if user_page && (!sum || access == Access::Exec) {
            return false;
        }
    } else if !user_page {
        return false;
    }
    match access {
        Access::Exec => flags & pte::X != 0,
        Access::Load => flags & pte::R != 0 || (mxr && flags & pte::X != 0),
        Access::Store => flags & pte::W != 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_rules() {
        let rx = pte::V | pte::R | pte::X;
        assert!(permits(rx, Access::Exec, true, false, false));
        assert!(!permits(rx, Access::Store, true, false, false));
        let user = pte::V | pte::R | pte::W | pte::U;
        assert!(
            !permits(user, Access::Load, true, false, false),
            "S needs SUM for U pages"
        );
        assert!(permits(user, Access::Load, true, true, false));
        assert!(
            !permits(user | pte::X, Access::Exec, true, true, false),
            "S never executes U pages"
        );
        assert!(
            !permits(rx, Access::Load, false, false, false),
            "U cannot touch S pages"
        );
        let xo = pte::V | pte::X;
        assert!(!permits(xo, Access::Load, true, false, false));
        assert!(
            permits(xo, Access::Load, true, false, true),
            "MXR makes X readable"
        );
    }

    #[test]
    fn tlb_hits_and_flushes() {
        let mut t = Tlb::default();
        t.insert(0x12345, 0x8000_0000, pte::R);
        assert_eq!(t.lookup(0x12345).map(|e| e.page), Some(0x8000_0000));
        assert!(t.lookup(0x12345 + 256).is_none());
        t.flush();
        assert!(t.lookup(0x12345).is_none());
    }
}
