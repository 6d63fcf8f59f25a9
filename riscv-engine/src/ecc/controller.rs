//! The memory controller's side of ECC: upsets into codewords, the check on every
//! access, and what the hart's caches must forget (the types are in the parent module).

use super::{page_has_key, MemoryError, MAX_ERROR_WORDS};
use crate::bus::Bus;
use crate::hart::Hart;
use crate::mmu::Access;
use crate::trap::Trap;

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
        // The shortcuts would read or write the word without the check.
        self.memory_faulted();
        Some(n)
    }

    /// Whether the 4 KiB page of `paddr` holds a word with errors.
    #[inline]
    pub(crate) fn ecc_page(&self, paddr: u64) -> bool {
        page_has_key(&self.ecc.errors, paddr)
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
    use super::super::MemoryError;
    use crate::bus::Bus;
    use crate::hart::Hart;
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
