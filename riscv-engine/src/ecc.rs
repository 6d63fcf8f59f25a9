//! SECDED error-correcting memory: RAM as a (72, 64) code, one codeword per aligned
//! 8-byte word, the way flight computers' EDAC memory controllers protect it. Optional
//! (`Hart::set_ecc`); off, an upset flips the stored bit and software sees it.
//!
//! Model: an upset flips a bit of the stored codeword, which the data RAM does not show
//! (it keeps what software wrote); the flipped bits are kept per word here. The memory
//! controller checks a word when software touches it: one flipped bit is corrected
//! (the data was right; the corrected word is written back, clearing the error) and
//! reported to the platform as a corrected error; two or more are detected and reported
//! as uncorrectable, and the access faults (load, store or fetch access fault). A store
//! of the whole word writes a fresh codeword and clears its errors; a narrower store is a
//! read-modify-write and is checked first.
//!
//! Checked: loads, stores, AMOs and instruction fetches of the hart. Not checked: page
//! table walks and device DMA (they read the data as written). Words with errors take
//! the hart's slow access path: the one-page load/store shortcuts skip their pages, and
//! an upset drops the shortcuts and makes cached instructions be fetched again.

use crate::bus::Bus;
use crate::hart::Hart;
use crate::mmu::Access;
use crate::trap::Trap;
use std::collections::BTreeMap;

/// Most words with pending errors kept; upsets of further words are refused (and traced
/// as missed by the machine).
pub const MAX_ERROR_WORDS: usize = 65_536;

/// What a memory check found, for [`Bus::memory_error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryError {
    /// One bit was wrong and was corrected.
    Corrected,
    /// Two or more bits were wrong: the access faults.
    Uncorrectable,
}

/// The codeword errors of ECC memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ecc {
    /// ECC is on.
    pub(crate) enabled: bool,
    /// Flipped bits of each word that has some (word address -> mask over its 64 data
    /// bits).
    pub(crate) errors: BTreeMap<u64, u64>,
}

impl Hart {
    /// Turns SECDED ECC on RAM on or off (off forgets pending errors).
    pub fn set_ecc(&mut self, on: bool) {
        self.ecc.enabled = on;
        if !on {
            self.ecc.errors.clear();
        }
    }

    /// Whether RAM is ECC memory.
    pub fn ecc(&self) -> bool {
        self.ecc.enabled
    }

    /// The words with pending errors and their flipped bits, in address order.
    pub fn ecc_errors(&self) -> Vec<(u64, u64)> {
        self.ecc.errors.iter().map(|(&a, &m)| (a, m)).collect()
    }

    /// An upset of `width` adjacent bits from bit `bit` of the byte at physical `paddr`,
    /// in ECC memory: the stored codeword changes, the data does not. Returns how many
    /// bits of the word are now wrong, or None when `paddr` is not RAM (or too many words
    /// already have errors).
    pub fn ecc_upset(&mut self, paddr: u64, bit: u8, width: u8) -> Option<u32> {
        self.ram.offset(paddr, 1)?;
        let word = paddr & !7;
        if !self.ecc.errors.contains_key(&word) && self.ecc.errors.len() >= MAX_ERROR_WORDS {
            return None;
        }
        let byte_bits = ((1u64 << width.min(8)) - 1) << bit.min(7);
        let flips = (byte_bits & 0xff) << (8 * (paddr & 7));
        let mask = self.ecc.errors.entry(word).or_insert(0);
        *mask ^= flips;
        let n = mask.count_ones();
        if n == 0 {
            self.ecc.errors.remove(&word);
        }
        self.ecc_changed();
        Some(n)
    }

    /// Drops the shortcuts that would read or write a word with errors without checking
    /// it, and makes cached instructions be fetched (and checked) again.
    fn ecc_changed(&mut self) {
        self.forget_data_pages();
        self.icache.uncheck_all();
    }

    /// Whether the 4 KiB page of `paddr` holds a word with errors.
    #[inline]
    pub(crate) fn ecc_page(&self, paddr: u64) -> bool {
        if self.ecc.errors.is_empty() {
            return false;
        }
        let page = paddr & !0xfff;
        self.ecc.errors.range(page..page + 0x1000).next().is_some()
    }

    /// Checks an access of `size` bytes at physical RAM address `paddr`: corrects and
    /// reports single errors, reports and refuses (access fault) double ones. A store
    /// covering a whole word clears that word's errors.
    #[inline]
    pub(crate) fn ecc_access(
        &mut self,
        bus: &mut dyn Bus,
        paddr: u64,
        size: u8,
        access: Access,
    ) -> Result<(), Trap> {
        if self.ecc.errors.is_empty() {
            return Ok(());
        }
        self.ecc_access_slow(bus, paddr, size, access)
    }

    #[inline(never)]
    fn ecc_access_slow(
        &mut self,
        bus: &mut dyn Bus,
        paddr: u64,
        size: u8,
        access: Access,
    ) -> Result<(), Trap> {
        let end = paddr + u64::from(size);
        let mut word = paddr & !7;
        while word < end {
            if let Some(&mask) = self.ecc.errors.get(&word) {
                let whole = access == Access::Store && paddr <= word && end >= word + 8;
                if whole {
                    self.ecc.errors.remove(&word);
                } else if mask.count_ones() == 1 {
                    self.ecc.errors.remove(&word);
                    bus.memory_error(word, MemoryError::Corrected, self.cycles);
                } else {
                    bus.memory_error(word, MemoryError::Uncorrectable, self.cycles);
                    return Err(Self::access_fault(access, paddr));
                }
            }
            word += 8;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ram::Ram;

    #[derive(Default)]
    struct Reports(Vec<(u64, MemoryError)>);

    impl Bus for Reports {
        fn mmio_read(&mut self, _: u64, _: u8, _: u64) -> Option<u64> {
            None
        }
        fn mmio_write(&mut self, _: u64, _: u8, _: u64, _: u64) -> bool {
            false
        }
        fn external_interrupt(&self) -> bool {
            false
        }
        fn memory_error(&mut self, paddr: u64, kind: MemoryError, _: u64) {
            self.0.push((paddr, kind));
        }
    }

    const BASE: u64 = 0x8000_0000;

    #[test]
    fn single_errors_are_corrected_double_ones_fault() {
        let mut h = Hart::new(Ram::new(BASE, 1 << 16), BASE, 100);
        h.ram
            .load(BASE + 0x100, &0x1122_3344_5566_7788u64.to_le_bytes());
        let mut bus = Reports::default();
        h.set_ecc(true);
        assert_eq!(h.ecc_upset(BASE + 0x101, 3, 1), Some(1));
        assert!(h.ecc_page(BASE + 0x180) && !h.ecc_page(BASE + 0x1000));
        // The data never changed; the read corrects and reports once.
        assert_eq!(h.load(&mut bus, BASE + 0x100, 8), Ok(0x1122_3344_5566_7788));
        assert_eq!(bus.0, vec![(BASE + 0x100, MemoryError::Corrected)]);
        assert!(h.ecc_errors().is_empty());
        // Two bits in one word: detected, the load faults, the error stays.
        h.ecc_upset(BASE + 0x108, 0, 1);
        h.ecc_upset(BASE + 0x10f, 7, 1);
        assert!(h.load(&mut bus, BASE + 0x10c, 2).is_err());
        assert_eq!(bus.0[1], (BASE + 0x108, MemoryError::Uncorrectable));
        // A byte store is a read-modify-write: it faults too; a whole-word store clears.
        assert!(h.store(&mut bus, BASE + 0x108, 1, 0).is_err());
        assert!(h.store(&mut bus, BASE + 0x108, 8, 5).is_ok());
        assert!(h.ecc_errors().is_empty());
        assert_eq!(h.load(&mut bus, BASE + 0x108, 8), Ok(5));
        // A 2-bit upset in one byte is a double error; flipping the same bit twice none.
        assert_eq!(h.ecc_upset(BASE + 0x200, 2, 2), Some(2));
        assert_eq!(h.ecc_upset(BASE + 0x300, 1, 1), Some(1));
        assert_eq!(h.ecc_upset(BASE + 0x300, 1, 1), Some(0));
        assert_eq!(h.ecc_errors(), vec![(BASE + 0x200, 0b1100)]);
        assert_eq!(h.ecc_upset(0x10, 0, 1), None, "not RAM");
    }
}
