//! The core-local interruptor (CLINT, SiFive layout) of a machine whose M-mode is the
//! guest's: msip (the M-mode software interrupt), mtimecmp and mtime. It is part of the
//! hart here because both of its timers are the hart's own: mtime is the `time` CSR
//! (the instruction clock divided by the timebase) and mtimecmp is the compare value
//! the timer interrupt (MTIP) fires at, so reading the clock never leaves the
//! interpreter. Writes to mtime are ignored: the clock is wio's, and it never goes back.
//!
//! A write to mtimecmp makes [`crate::Hart::run`] return [`crate::Stop::TimerSet`] so the
//! machine can add its seeded interrupt latency, as it does for the SBI timer.

use crate::csr::irq;
use crate::hart::Hart;

/// Physical base of the CLINT window (as on QEMU's `virt` board).
pub const BASE: u64 = 0x0200_0000;
/// Size of the CLINT window.
pub const SIZE: u64 = 0x1_0000;
/// Offset of hart 0's msip register (4 bytes).
pub const MSIP: u64 = 0x0;
/// Offset of hart 0's mtimecmp (8 bytes).
pub const MTIMECMP: u64 = 0x4000;
/// Offset of mtime (8 bytes).
pub const MTIME: u64 = 0xbff8;

/// Replaces the `size` bytes at byte `shift` of `old` with the low bytes of `value`.
fn merge(old: u64, shift: u64, size: u8, value: u64) -> u64 {
    let mask = if size >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * u64::from(size))) - 1
    };
    (old & !(mask << (8 * shift))) | ((value & mask) << (8 * shift))
}

impl Hart {
    /// Whether physical `paddr` is in the CLINT window of this hart (M-mode guests only).
    #[inline]
    pub(crate) fn clint_claims(&self, paddr: u64) -> bool {
        self.firmware && paddr.wrapping_sub(BASE) < SIZE
    }

    /// Reads `size` bytes at CLINT offset `off` (naturally aligned 4- and 8-byte
    /// accesses; anything else is an access fault).
    pub(crate) fn clint_read(&self, off: u64, size: u8) -> Option<u64> {
        if !(size == 4 || size == 8) || !off.is_multiple_of(u64::from(size)) {
            return None;
        }
        let (reg, value) = match off & !7 {
            MSIP => (MSIP, u64::from(self.mip_sw & irq::MSI != 0)),
            MTIMECMP => (MTIMECMP, self.timecmp),
            MTIME => (MTIME, self.time()),
            _ => return Some(0),
        };
        let shift = off - reg;
        Some(if size == 8 {
            value
        } else {
            (value >> (8 * shift)) & 0xffff_ffff
        })
    }

    /// Writes `size` bytes at CLINT offset `off`; false is an access fault.
    pub(crate) fn clint_write(&mut self, off: u64, size: u8, value: u64) -> bool {
        if !(size == 4 || size == 8) || !off.is_multiple_of(u64::from(size)) {
            return false;
        }
        match off & !7 {
            MSIP if off == MSIP => {
                if value & 1 != 0 {
                    self.mip_sw |= irq::MSI;
                } else {
                    self.mip_sw &= !irq::MSI;
                }
                self.irq_dirty = true;
            }
            MTIMECMP => {
                // The latency is the machine's to add (Stop::TimerSet): none until then.
                self.timecmp = merge(self.timecmp, off - MTIMECMP, size, value);
                self.timer_delay = 0;
                self.timer_written = true;
                self.irq_dirty = true;
            }
            _ => {} // mtime and the reserved space: writes ignored
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::merge;

    #[test]
    fn halves_merge_into_the_64_bit_register() {
        assert_eq!(merge(u64::MAX, 0, 4, 0x1234), 0xffff_ffff_0000_1234);
        assert_eq!(merge(0, 4, 4, 0x1), 0x1_0000_0000);
        assert_eq!(merge(7, 0, 8, 9), 9);
    }
}
