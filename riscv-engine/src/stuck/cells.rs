//! Sticking and freeing bits, and forcing them after stores (the types are in the
//! parent module).

use super::MAX_STUCK_BYTES;
use crate::hart::Hart;

impl Hart {
    /// Sticks bit `bit` of the RAM byte at `paddr` at `value` (0 or 1) from now on.
    /// Returns the byte before and after, or None when `paddr` is not RAM (or too many
    /// bytes have stuck bits already).
    pub fn stick_bit(&mut self, paddr: u64, bit: u8, value: bool) -> Option<(u8, u8)> {
        let off = self.ram.offset(paddr, 1)?;
        if !self.stuck.bytes.contains_key(&paddr) && self.stuck.bytes.len() >= MAX_STUCK_BYTES {
            return None;
        }
        let m = 1u8 << (bit & 7);
        let e = self.stuck.bytes.entry(paddr).or_insert((0, 0));
        e.0 |= m;
        e.1 = if value { e.1 | m } else { e.1 & !m };
        let (mask, values) = *e;
        let before = self.ram.read_at(off, 1) as u8;
        let after = (before & !mask) | (values & mask);
        self.ram.write_at(off, 1, u64::from(after));
        // Stores to this page must force the bit; cached instructions may have changed.
        self.memory_faulted();
        Some((before, after))
    }

    /// Frees bit `bit` of the byte at `paddr` (it keeps its value until written).
    pub fn release_bit(&mut self, paddr: u64, bit: u8) {
        let m = 1u8 << (bit & 7);
        if let Some(e) = self.stuck.bytes.get_mut(&paddr) {
            e.0 &= !m;
            e.1 &= !m;
            if e.0 == 0 {
                self.stuck.bytes.remove(&paddr);
            }
        }
    }

    /// Bytes with stuck bits: (address, mask, values), in address order.
    pub fn stuck_bits(&self) -> Vec<(u64, u8, u8)> {
        self.stuck
            .bytes
            .iter()
            .map(|(&a, &(m, v))| (a, m, v))
            .collect()
    }

    /// Whether the 4 KiB page of `paddr` holds stuck bits.
    #[inline]
    pub(crate) fn stuck_page(&self, paddr: u64) -> bool {
        crate::ecc::page_has_key(&self.stuck.bytes, paddr)
    }

    /// Forces the stuck bits of the `size` bytes just written at `paddr` (RAM).
    #[inline]
    pub(crate) fn force_stuck(&mut self, paddr: u64, size: u8) {
        if self.stuck.bytes.is_empty() {
            return;
        }
        let end = paddr + u64::from(size);
        let hits: Vec<(u64, (u8, u8))> = self
            .stuck
            .bytes
            .range(paddr..end)
            .map(|(&a, &e)| (a, e))
            .collect();
        for (a, (mask, values)) in hits {
            if let Some(off) = self.ram.offset(a, 1) {
                let b = self.ram.read_at(off, 1) as u8;
                self.ram
                    .write_at(off, 1, u64::from((b & !mask) | (values & mask)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::bus::NoDevices;
    use crate::hart::Hart;
    use crate::ram::Ram;

    const BASE: u64 = 0x8000_0000;

    #[test]
    fn stuck_bits_survive_stores_until_released() {
        let mut h = Hart::new(Ram::new(BASE, 1 << 16), BASE, 100);
        let mut bus = NoDevices;
        h.store(&mut bus, BASE + 0x40, 8, 0).unwrap();
        assert_eq!(h.stick_bit(BASE + 0x41, 3, true), Some((0, 8)));
        assert_eq!(h.load(&mut bus, BASE + 0x40, 8), Ok(0x800));
        h.store(&mut bus, BASE + 0x40, 8, 0).unwrap();
        assert_eq!(h.load(&mut bus, BASE + 0x40, 8), Ok(0x800), "stuck at 1");
        h.stick_bit(BASE + 0x41, 0, false);
        h.store(&mut bus, BASE + 0x40, 2, 0xffff).unwrap();
        assert_eq!(h.load(&mut bus, BASE + 0x40, 2), Ok(0xfeff));
        assert_eq!(h.stuck_bits(), vec![(BASE + 0x41, 0b1001, 0b1000)]);
        h.release_bit(BASE + 0x41, 0);
        h.release_bit(BASE + 0x41, 3);
        h.store(&mut bus, BASE + 0x40, 2, 0).unwrap();
        assert_eq!(h.load(&mut bus, BASE + 0x40, 2), Ok(0));
        assert!(h.stuck_bits().is_empty());
        assert_eq!(h.stick_bit(0x10, 0, true), None);
    }
}
