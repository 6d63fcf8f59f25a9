//! The hart's side of Sv39: translating virtual addresses (TLB lookup, then the page-table
//! walk, which sets accessed and dirty bits), loads and stores through the per-page
//! shortcuts, physical accesses to RAM or devices, and the fences that forget cached
//! translations (TLB, superpages, load/store shortcuts and the decoded instructions of a
//! page).

use super::{permits, pte, Access};
use crate::bus::Bus;
use crate::csr::{cause, mstatus, Priv};
use crate::hart::{Hart, MAX_SUPERPAGES, NO_RESERVATION, PMP_MEMO};
use crate::icache::{Block, ICache, BLOCK_ENTRIES, ICACHE_ENTRIES};
use crate::pmp::Verdict;
use crate::trap::Trap;

impl Hart {
    /// Flushes cached translations and decoded instructions (SBI remote fences to self).
    /// Decoded instructions are only unchecked (see [`ICache`]): each is fetched again,
    /// through a fresh page walk, at its next use, and kept if its bytes are unchanged.
    pub fn flush_tlb(&mut self) {
        self.tlb.flush();
        self.icache.uncheck_all();
        self.forget_data_pages();
        self.superpages.clear();
        self.superpages_overflow = false;
    }

    /// Remembers that a superpage translation covering [base, base + size) was cached
    /// (its 4 KiB pieces may sit anywhere in the caches).
    fn note_superpage(&mut self, base: u64, size: u64) {
        if self.superpages.iter().any(|&(b, s)| b == base && s == size) {
            return;
        }
        if self.superpages.len() < MAX_SUPERPAGES {
            self.superpages.push((base, size));
        } else {
            self.superpages_overflow = true;
        }
    }

    /// SFENCE.VMA for one virtual address: forgets what the caches hold for its page (TLB
    /// entry, decoded instructions and blocks in it, the instruction that ends in it, the
    /// load/store shortcuts). When a cached superpage covers the address, its pieces could be
    /// anywhere, so everything is flushed instead.
    pub fn flush_tlb_page(&mut self, vaddr: u64) {
        if self.superpages_overflow
            || self
                .superpages
                .iter()
                .any(|&(b, s)| vaddr.wrapping_sub(b) < s)
        {
            self.flush_tlb();
            return;
        }
        let page = vaddr & !0xfff;
        self.tlb.invalidate(vaddr >> 12);
        self.load_pages.forget(vaddr);
        self.store_pages.forget(vaddr);
        if !self.icache.may_hold_code(vaddr) {
            // Most single-page fences follow a page fault on data: no decoded code to forget.
            return;
        }
        // Slots the restored snapshot backs and the hart has not reached since forget the
        // page too (see `icache::backing`).
        let first = ICache::slot(page);
        self.icache
            .forget_backed(page, (first, 2048), (Block::slot(page), 2048));
        self.icache.touch_entry(ICache::slot(page.wrapping_sub(2)));
        for k in 0..2048 {
            let e = &mut self.icache.entries[(first + k) & (ICACHE_ENTRIES - 1)];
            if e.pc >> 12 == page >> 12 {
                e.pc = u64::MAX;
            }
        }
        // A 4-byte instruction starting 2 bytes before the page was fetched through it too.
        let before = page.wrapping_sub(2);
        let e = &mut self.icache.entries[ICache::slot(before)];
        if e.pc == before {
            e.pc = u64::MAX;
        }
        let first = Block::slot(page);
        for k in 0..2048 {
            let b = &mut self.icache.blocks[(first + k) & (BLOCK_ENTRIES - 1)];
            if b.pc >> 12 == page >> 12 {
                b.pc = u64::MAX;
            }
        }
    }

    fn effective_priv(&self, access: Access) -> Priv {
        if access != Access::Exec && self.mstatus & mstatus::MPRV != 0 {
            Priv::from_bits(self.mstatus >> mstatus::MPP_SHIFT)
        } else {
            self.prv
        }
    }

    /// Whether PMP lets software at `prv` make an access of `len` bytes at physical
    /// `paddr` (always, unless M-mode is the guest's: see `pmp`).
    #[inline]
    pub(crate) fn pmp_allows(&mut self, paddr: u64, len: u64, access: Access, prv: Priv) -> bool {
        if !self.firmware || (prv == Priv::Machine && !self.pmp_locked) {
            return true;
        }
        let page = paddr >> 12;
        let kind = (prv as u64) << 2 | access as u64;
        let tag = (page << 4 | kind) + 1;
        let slot = (page as usize ^ kind as usize) % PMP_MEMO;
        if self.pmp_pages[slot] == tag && (paddr & 0xfff) + len <= 0x1000 {
            return true;
        }
        let machine = prv == Priv::Machine;
        if self.pmp.check(page << 12, 0x1000, access, machine) == Verdict::Allow {
            self.pmp_pages[slot] = tag;
            if (paddr & 0xfff) + len <= 0x1000 {
                return true;
            }
        }
        self.pmp.check(paddr, len, access, machine) == Verdict::Allow
    }

    /// [`Hart::pmp_allows`] for a data access at the effective privilege, as an access
    /// fault (tval: the virtual address) when refused.
    #[inline]
    fn pmp_data(&mut self, paddr: u64, len: u64, access: Access, vaddr: u64) -> Result<(), Trap> {
        if self.pmp_allows(paddr, len, access, self.effective_priv(access)) {
            Ok(())
        } else {
            Err(Self::access_fault(access, vaddr))
        }
    }

    /// Whether a whole 4 KiB page may be reached through the load/store shortcuts.
    #[inline]
    fn pmp_page(&mut self, page: u64, access: Access) -> bool {
        self.pmp_allows(page, 0x1000, access, self.effective_priv(access))
    }

    fn page_fault(access: Access, vaddr: u64) -> Trap {
        let cause = match access {
            Access::Exec => cause::INSN_PAGE_FAULT,
            Access::Load => cause::LOAD_PAGE_FAULT,
            Access::Store => cause::STORE_PAGE_FAULT,
        };
        Trap::new(cause, vaddr)
    }

    pub(crate) fn access_fault(access: Access, addr: u64) -> Trap {
        let cause = match access {
            Access::Exec => cause::INSN_ACCESS,
            Access::Load => cause::LOAD_ACCESS,
            Access::Store => cause::STORE_ACCESS,
        };
        Trap::new(cause, addr)
    }

    /// Translates a virtual address to a physical one for `access`.
    #[inline]
    pub fn translate(&mut self, vaddr: u64, access: Access) -> Result<u64, Trap> {
        let prv = self.effective_priv(access);
        if prv == Priv::Machine || self.satp >> 60 == 0 {
            return Ok(vaddr);
        }
        let vpn = vaddr >> 12;
        if let Some(e) = self.tlb.lookup(vpn) {
            let sum = self.mstatus & mstatus::SUM != 0;
            let mxr = self.mstatus & mstatus::MXR != 0;
            if permits(e.flags, access, prv == Priv::Supervisor, sum, mxr)
                && (access != Access::Store || e.flags & pte::D != 0)
            {
                return Ok(e.page | (vaddr & 0xfff));
            }
        }
        self.walk(vaddr, access, prv)
    }

    fn walk(&mut self, vaddr: u64, access: Access, prv: Priv) -> Result<u64, Trap> {
        // Sv39: bits 63..39 must equal bit 38.
        let top = (vaddr as i64) >> 38;
        if top != 0 && top != -1 {
            return Err(Self::page_fault(access, vaddr));
        }
        let mut table = (self.satp & ((1 << 44) - 1)) << 12;
        for level in (0..3).rev() {
            let vpn_i = (vaddr >> (12 + 9 * level)) & 0x1ff;
            let pte_addr = table + vpn_i * 8;
            let off = self
                .ram
                .offset(pte_addr, 8)
                .ok_or_else(|| Self::access_fault(access, vaddr))?;
            let mut entry = self.ram.read_at(off, 8);
            if entry & pte::V == 0
                || (entry & pte::R == 0 && entry & pte::W != 0)
                || entry & pte::RESERVED != 0
            {
                return Err(Self::page_fault(access, vaddr));
            }
            let ppn = (entry >> 10) & ((1 << 44) - 1);
            if entry & (pte::R | pte::X) == 0 {
                if level == 0 {
                    return Err(Self::page_fault(access, vaddr));
                }
                table = ppn << 12;
                continue;
            }
            // Leaf: superpages must be aligned.
            if level > 0 && ppn & ((1 << (9 * level)) - 1) != 0 {
                return Err(Self::page_fault(access, vaddr));
            }
            let sum = self.mstatus & mstatus::SUM != 0;
            let mxr = self.mstatus & mstatus::MXR != 0;
            if !permits(entry, access, prv == Priv::Supervisor, sum, mxr) {
                return Err(Self::page_fault(access, vaddr));
            }
            let wanted = pte::A | if access == Access::Store { pte::D } else { 0 };
            if entry & wanted != wanted {
                entry |= wanted;
                self.ram.write_at(off, 8, entry);
            }
            let page_mask = (1u64 << (12 + 9 * level)) - 1;
            let phys_page = ((ppn << 12) & !page_mask) | (vaddr & page_mask & !0xfff);
            // A clean page is cached without D so the first store walks again and sets it.
            self.tlb.insert(vaddr >> 12, phys_page, entry);
            if level > 0 {
                self.note_superpage(vaddr & !page_mask, page_mask + 1);
            }
            return Ok(phys_page | (vaddr & 0xfff));
        }
        Err(Self::page_fault(access, vaddr))
    }

    /// Reads `size` bytes at physical `paddr` from RAM or a device.
    #[inline]
    fn read_phys(
        &mut self,
        bus: &mut dyn Bus,
        paddr: u64,
        size: u8,
        access: Access,
    ) -> Result<u64, Trap> {
        if let Some(off) = self.ram.offset(paddr, u64::from(size)) {
            self.ecc_access(bus, paddr, size, access)?;
            return Ok(self.ram.read_at(off, size));
        }
        self.irq_dirty = true;
        if self.clint_claims(paddr) {
            return self
                .clint_read(paddr - crate::clint::BASE, size)
                .ok_or_else(|| Self::access_fault(access, paddr));
        }
        bus.mmio_read(paddr, size, self.cycles)
            .ok_or_else(|| Self::access_fault(access, paddr))
    }

    #[inline]
    fn write_phys(
        &mut self,
        bus: &mut dyn Bus,
        paddr: u64,
        size: u8,
        value: u64,
    ) -> Result<(), Trap> {
        if let Some(off) = self.ram.offset(paddr, u64::from(size)) {
            self.ecc_access(bus, paddr, size, Access::Store)?;
            self.ram.write_at(off, size, value);
            self.force_stuck(paddr, size);
            if self.reservation != NO_RESERVATION && self.reservation >> 3 == paddr >> 3 {
                self.reservation = NO_RESERVATION;
            }
            return Ok(());
        }
        self.irq_dirty = true;
        if self.clint_claims(paddr) {
            return if self.clint_write(paddr - crate::clint::BASE, size, value) {
                Ok(())
            } else {
                Err(Self::access_fault(Access::Store, paddr))
            };
        }
        if bus.mmio_write(paddr, size, value, self.cycles) {
            Ok(())
        } else {
            Err(Self::access_fault(Access::Store, paddr))
        }
    }

    /// Loads `size` bytes at virtual `vaddr` (misaligned accesses are supported).
    #[inline(always)]
    pub fn load(&mut self, bus: &mut dyn Bus, vaddr: u64, size: u8) -> Result<u64, Trap> {
        // Fast path: same page as the last load, access within the page.
        if (vaddr & 0xfff) + u64::from(size) <= 0x1000 {
            if let Some(page) = self.load_pages.get(vaddr) {
                return Ok(self.ram.read_at(page + (vaddr & 0xfff) as usize, size));
            }
        }
        self.load_slow(bus, vaddr, size)
    }

    #[inline(never)]
    fn load_slow(&mut self, bus: &mut dyn Bus, vaddr: u64, size: u8) -> Result<u64, Trap> {
        if (vaddr & 0xfff) + u64::from(size) <= 0x1000 {
            let p = self.translate(vaddr, Access::Load)?;
            self.pmp_data(p, u64::from(size), Access::Load, vaddr)?;
            if let Some(off) = self.ram.offset(p & !0xfff, 0x1000) {
                if self.pmp_page(p & !0xfff, Access::Load) && !self.ecc_page(p) {
                    self.load_pages.insert(vaddr, off);
                }
            }
            return self.read_phys(bus, p, size, Access::Load);
        }
        let mut v = 0u64;
        for i in 0..u64::from(size) {
            let va = vaddr.wrapping_add(i);
            let p = self.translate(va, Access::Load)?;
            self.pmp_data(p, 1, Access::Load, va)?;
            v |= self.read_phys(bus, p, 1, Access::Load)? << (8 * i);
        }
        Ok(v)
    }

    /// Stores the low `size` bytes of `value` at virtual `vaddr`.
    #[inline(always)]
    pub fn store(
        &mut self,
        bus: &mut dyn Bus,
        vaddr: u64,
        size: u8,
        value: u64,
    ) -> Result<(), Trap> {
        // Fast path: same (dirty) page as the last store, no LR reservation to break.
        if (vaddr & 0xfff) + u64::from(size) <= 0x1000 && self.reservation == NO_RESERVATION {
            if let Some(page) = self.store_pages.get(vaddr) {
                self.ram
                    .write_at(page + (vaddr & 0xfff) as usize, size, value);
                return Ok(());
            }
        }
        self.store_slow(bus, vaddr, size, value)
    }

    #[inline(never)]
    fn store_slow(
        &mut self,
        bus: &mut dyn Bus,
        vaddr: u64,
        size: u8,
        value: u64,
    ) -> Result<(), Trap> {
        if (vaddr & 0xfff) + u64::from(size) <= 0x1000 {
            let p = self.translate(vaddr, Access::Store)?;
            self.pmp_data(p, u64::from(size), Access::Store, vaddr)?;
            if let Some(off) = self.ram.offset(p & !0xfff, 0x1000) {
                if self.pmp_page(p & !0xfff, Access::Store)
                    && !self.ecc_page(p)
                    && !self.stuck_page(p)
                {
                    self.store_pages.insert(vaddr, off);
                }
            }
            return self.write_phys(bus, p, size, value);
        }
        // Translate every byte first so a fault leaves memory untouched.
        let mut phys = [0u64; 8];
        for (i, slot) in phys.iter_mut().enumerate().take(usize::from(size)) {
            let va = vaddr.wrapping_add(i as u64);
            *slot = self.translate(va, Access::Store)?;
            self.pmp_data(*slot, 1, Access::Store, va)?;
        }
        for (i, &p) in phys.iter().enumerate().take(usize::from(size)) {
            self.write_phys(bus, p, 1, value >> (8 * i))?;
        }
        Ok(())
    }

    /// Translates an AMO/LR/SC address: must be naturally aligned and in RAM.
    pub(crate) fn amo_address(
        &mut self,
        bus: &mut dyn Bus,
        vaddr: u64,
        size: u8,
        access: Access,
    ) -> Result<usize, Trap> {
        if !vaddr.is_multiple_of(u64::from(size)) {
            let c = if access == Access::Load {
                cause::LOAD_MISALIGNED
            } else {
                cause::STORE_MISALIGNED
            };
            return Err(Trap::new(c, vaddr));
        }
        let p = self.translate(vaddr, access)?;
        // AMOs read and write: both permissions are needed (LR only reads).
        self.pmp_data(p, u64::from(size), access, vaddr)?;
        if access == Access::Store {
            self.pmp_data(p, u64::from(size), Access::Load, vaddr)?;
        }
        let off = self
            .ram
            .offset(p, u64::from(size))
            .ok_or_else(|| Self::access_fault(access, p))?;
        // The read of a read-modify-write (and LR's read) goes through the memory
        // controller's check.
        self.ecc_access(bus, p, size, Access::Load)
            .map_err(|_| Self::access_fault(access, p))?;
        Ok(off)
    }
}
