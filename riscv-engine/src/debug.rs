//! What a debugger sees of the hart: CSRs read without privilege checks or side effects,
//! virtual addresses translated through the guest's page tables without touching the
//! TLB or the A/D bits, guest memory read and written by virtual or physical address,
//! and breakpoints.
//!
//! Breakpoints never patch guest memory (the guest could read the patch, and a replay
//! must see the same bytes): while any is set, [`Hart::run`] runs instruction by
//! instruction (no blocks, no compiled code) and stops with [`Stop::Breakpoint`] before
//! executing an instruction at a breakpoint's pc. Executing the same instructions one by
//! one computes exactly what blocks and compiled code compute, so a debugged run stays
//! the run it would have been.

use crate::bus::{Bus, NoDevices};
use crate::csr::{addr, mstatus, Priv};
use crate::hart::Hart;
use crate::trap::Stop;

/// Most breakpoints a hart holds (a debugger sets a handful).
pub const MAX_BREAKPOINTS: usize = 256;

impl Hart {
    /// Sets the breakpoints (virtual pcs); an empty list turns breakpoint checks off.
    /// Returns false (and changes nothing) for more than [`MAX_BREAKPOINTS`].
    pub fn set_breakpoints(&mut self, pcs: &[u64]) -> bool {
        if pcs.len() > MAX_BREAKPOINTS {
            return false;
        }
        let mut v = pcs.to_vec();
        v.sort_unstable();
        v.dedup();
        self.breakpoints = v;
        true
    }

    /// The breakpoints set.
    pub fn breakpoints(&self) -> &[u64] {
        &self.breakpoints
    }

    /// [`Hart::run`] with breakpoints: the same loop, one instruction at a time, stopping
    /// before an instruction at a breakpoint (also the first one: the caller steps over
    /// the breakpoint it is resuming from with no breakpoints set).
    pub(crate) fn run_debug(&mut self, bus: &mut dyn Bus, until_cycles: u64) -> Stop {
        loop {
            let chunk_end = match self.next_chunk(bus, until_cycles) {
                Ok(end) => end,
                Err(stop) => return stop,
            };
            while self.cycles < chunk_end && !self.irq_dirty {
                let pc = self.pc;
                if self.breakpoints.binary_search(&pc).is_ok() {
                    return Stop::Breakpoint;
                }
                if self.exec_cached(bus, pc).is_some() {
                    continue;
                }
                if let Some(stop) = self.step(bus) {
                    return stop;
                }
            }
        }
    }

    /// CSR `csr` as the hart holds it, whatever the privilege level (None: wio's hart
    /// has no such CSR). The external interrupt line reads low in mip/sip.
    pub fn debug_csr(&self, csr: u16) -> Option<u64> {
        match csr {
            // Read even while the FPU is off, which M-mode software could not.
            addr::FFLAGS | addr::FRM | addr::FCSR => Some(self.fp_csr(csr)),
            _ => self.csr_read_at(csr, &NoDevices, Priv::Machine).ok(),
        }
    }

    /// Translates virtual `va` as a data access at the current privilege would (Sv39 or
    /// bare), without permission checks, TLB fills or A/D updates; None when unmapped.
    pub fn debug_translate(&self, va: u64) -> Option<u64> {
        let prv = if self.mstatus & mstatus::MPRV != 0 && self.prv == Priv::Machine {
            Priv::from_bits((self.mstatus >> 11) & 3)
        } else {
            self.prv
        };
        if prv == Priv::Machine || self.satp >> 60 == 0 {
            return Some(va);
        }
        let top = (va as i64) >> 38;
        if top != 0 && top != -1 {
            return None;
        }
        let mut table = (self.satp & ((1 << 44) - 1)) << 12;
        for level in (0..3).rev() {
            let vpn_i = (va >> (12 + 9 * level)) & 0x1ff;
            let off = self.ram.offset(table + vpn_i * 8, 8)?;
            let entry = self.ram.read_at(off, 8);
            if entry & 1 == 0 {
                return None;
            }
            let ppn = (entry >> 10) & ((1 << 44) - 1);
            if entry & 0b1010 == 0 {
                table = ppn << 12;
                continue;
            }
            let page_mask = (1u64 << (12 + 9 * level)) - 1;
            return Some(((ppn << 12) & !page_mask) | (va & page_mask));
        }
        None
    }

    /// The pieces of `len` bytes at `addr` (virtual when `virt`) in RAM: (offset in the
    /// range, physical address, length), page by page, up to the first unmapped byte.
    fn debug_pieces(&self, addr: u64, len: usize, virt: bool) -> Vec<(usize, u64, usize)> {
        let mut pieces = Vec::new();
        let mut done = 0;
        while done < len {
            let a = addr.wrapping_add(done as u64);
            let pa = if virt {
                self.debug_translate(a)
            } else {
                Some(a)
            };
            let Some(pa) = pa else { break };
            let n = ((0x1000 - (a & 0xfff)) as usize).min(len - done);
            if self.ram.offset(pa, n as u64).is_none() {
                break;
            }
            pieces.push((done, pa, n));
            done += n;
        }
        pieces
    }

    /// Reads guest RAM at `addr` (virtual when `virt`, else physical) into `buf`; returns
    /// how many bytes were readable from the start (stops at the first unmapped byte or
    /// the end of RAM).
    pub fn debug_read(&self, addr: u64, buf: &mut [u8], virt: bool) -> usize {
        let mut done = 0;
        for (at, pa, n) in self.debug_pieces(addr, buf.len(), virt) {
            if let Some(s) = self.ram.slice(pa, n as u64) {
                buf[at..at + n].copy_from_slice(s);
                done = at + n;
            }
        }
        done
    }

    /// Writes `data` to guest RAM at `addr` (virtual when `virt`); returns how many bytes
    /// were written from the start. Decoded and compiled code is checked against memory
    /// again before it next runs, as after FENCE.I.
    pub fn debug_write(&mut self, addr: u64, data: &[u8], virt: bool) -> usize {
        let mut done = 0;
        for (at, pa, n) in self.debug_pieces(addr, data.len(), virt) {
            if self.ram.load(pa, &data[at..at + n]) {
                done = at + n;
            }
        }
        if done > 0 {
            self.icache.uncheck_all();
            self.forget_data_pages();
            self.reservation = crate::hart::NO_RESERVATION;
        }
        done
    }

    /// Flips the bits of `mask` in the RAM byte at physical `addr` (an upset): the next
    /// instruction sees them, fetched code included (decoded and compiled code is checked
    /// against memory again). An LR reservation is kept: radiation is not a store.
    /// Returns the byte before and after; None when `addr` is not RAM.
    pub fn flip_ram_bits(&mut self, addr: u64, mask: u8) -> Option<(u8, u8)> {
        let off = self.ram.offset(addr, 1)?;
        let v = self.ram.read_at(off, 1) as u8;
        self.ram.write_at(off, 1, u64::from(v ^ mask));
        self.icache.uncheck_all();
        Some((v, v ^ mask))
    }

    /// Flips the bits of `mask` in CSR `csr` as if M-mode software wrote it (its write
    /// rules and effects apply: WARL fields, TLB flushes). Returns the value before and
    /// after; None when the hart has no such writable CSR.
    pub fn flip_csr_bits(&mut self, csr: u16, mask: u64) -> Option<(u64, u64)> {
        let before = self.debug_csr(csr)?;
        let prv = self.prv;
        self.prv = Priv::Machine;
        let ok = self.csr_write(csr, before ^ mask).is_ok();
        self.prv = prv;
        self.irq_dirty = true;
        ok.then(|| (before, self.debug_csr(csr).unwrap_or(before ^ mask)))
    }
}
