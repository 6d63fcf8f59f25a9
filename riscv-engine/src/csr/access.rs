//! CSR reads and writes: privilege and read-only checks, the views sstatus/sie/sip give
//! of their machine-level registers, the counters' enable bits, and the side effects of
//! writes (interrupt re-evaluation, TLB and shortcut flushes). The register numbers and
//! bit fields are in the parent module.

use super::{addr, irq, mstatus, Priv, DEFAULT_MEDELEG, MISA};
use crate::bus::Bus;
use crate::hart::Hart;

impl Hart {
    fn fs_off(&self) -> bool {
        self.mstatus & mstatus::FS == 0
    }

    /// Marks the FP state dirty (any write to an f register or fcsr).
    #[inline]
    pub(crate) fn fs_dirty(&mut self) {
        self.mstatus |= mstatus::FS_DIRTY;
    }

    fn sstatus_sd(&self, value: u64) -> u64 {
        let vs_dirty = self.mstatus & crate::vector::unit::VS == crate::vector::unit::VS;
        if self.mstatus & mstatus::FS == mstatus::FS_DIRTY || vs_dirty {
            value | mstatus::SD
        } else {
            value & !mstatus::SD
        }
    }

    /// mstatus.VS where the hart has a vector unit (else those bits stay zero).
    fn vs_bits(&self) -> u64 {
        if self.has_vector() {
            crate::vector::unit::VS
        } else {
            0
        }
    }

    /// After an mstatus or sstatus write (`before`: mstatus as it was): an interrupt may
    /// have become deliverable, and the load/store shortcuts (which had their permission
    /// checked once) go when the effective data privilege or its checks changed
    /// ([`mstatus::DATA_ACCESS`]). TLB entries keep the leaf's flags and are checked against
    /// the current privilege, SUM and MXR on every hit, and fetches never depend on these
    /// bits, so nothing else is flushed: M-mode firmware writes mstatus on every trap, and
    /// Linux sstatus at every interrupt disable and enable (SIE), which would otherwise
    /// cost the kernel its caches each time.
    fn status_written(&mut self, before: u64) {
        self.irq_dirty = true;
        if (before ^ self.mstatus) & mstatus::DATA_ACCESS != 0 {
            self.forget_data_pages();
        }
    }

    /// mcycle (and cycle) as software sees it: the clock's cycles plus what its writes set.
    fn mcycle(&self) -> u64 {
        self.cycles.wrapping_add(self.counter_bias[0])
    }

    /// minstret (and instret) as software sees it.
    fn minstret(&self) -> u64 {
        self.instret.wrapping_add(self.counter_bias[1])
    }

    /// Whether software at `prv` may read counter `bit` (cycle 1, time 2, instret 4).
    fn counter_allowed(&self, prv: Priv, bit: u64) -> bool {
        match prv {
            Priv::Machine => true,
            Priv::Supervisor => self.mcounteren & bit != 0,
            Priv::User => self.mcounteren & bit != 0 && self.scounteren & bit != 0,
        }
    }

    /// fflags, frm or fcsr (`csr` is one of them).
    pub(crate) fn fp_csr(&self, csr: u16) -> u64 {
        match csr {
            addr::FFLAGS => u64::from(self.fp.fflags),
            addr::FRM => u64::from(self.fp.frm),
            _ => u64::from(self.fp.fflags) | (u64::from(self.fp.frm) << 5),
        }
    }

    /// Reads CSR `csr`, checking privilege; `bus` supplies the external interrupt line for mip/sip.
    pub(crate) fn csr_read(&self, csr: u16, bus: &dyn Bus) -> Result<u64, ()> {
        self.csr_read_at(csr, bus, self.prv)
    }

    /// [`Hart::csr_read`] as software at privilege `prv` would read it (a debugger
    /// reads as M-mode).
    pub(crate) fn csr_read_at(&self, csr: u16, bus: &dyn Bus, prv: Priv) -> Result<u64, ()> {
        if (csr >> 8) & 3 > prv as u16 {
            return Err(());
        }
        if let Some(read) = self.vector_csr_read(csr) {
            return read;
        }
        let v = match csr {
            addr::FFLAGS | addr::FRM | addr::FCSR if self.fs_off() => return Err(()),
            addr::FFLAGS | addr::FRM | addr::FCSR => self.fp_csr(csr),
            addr::CYCLE if self.counter_allowed(prv, 1) => self.mcycle(),
            addr::TIME if self.counter_allowed(prv, 2) => self.time(),
            addr::INSTRET if self.counter_allowed(prv, 4) => self.minstret(),
            addr::SSTATUS => {
                self.sstatus_sd(self.mstatus & (mstatus::SSTATUS_MASK | self.vs_bits()))
            }
            addr::SIE => self.mie & self.mideleg,
            addr::STVEC => self.stvec,
            addr::SCOUNTEREN => self.scounteren,
            addr::SENVCFG => self.senvcfg,
            addr::SSCRATCH => self.sscratch,
            addr::SEPC => self.sepc,
            addr::SCAUSE => self.scause,
            addr::STVAL => self.stval,
            addr::SIP => self.mip(bus) & self.mideleg,
            addr::SATP => {
                if prv == Priv::Supervisor && self.mstatus & mstatus::TVM != 0 {
                    return Err(());
                }
                self.satp
            }
            addr::MVENDORID | addr::MARCHID | addr::MIMPID | addr::MHARTID | addr::MCONFIGPTR => 0,
            addr::MSTATUS => self.sstatus_sd(self.mstatus),
            addr::MISA => MISA | (u64::from(self.has_vector()) << 21), // V is bit 21
            addr::MEDELEG => self.medeleg,
            addr::MIDELEG => self.mideleg,
            addr::MIE => self.mie,
            addr::MTVEC => self.mtvec,
            addr::MCOUNTEREN => self.mcounteren,
            addr::MENVCFG => self.menvcfg,
            addr::MSCRATCH => self.mscratch,
            addr::MEPC => self.mepc,
            addr::MCAUSE => self.mcause,
            addr::MTVAL => self.mtval,
            addr::MIP => self.mip(bus),
            addr::MCYCLE => self.mcycle(),
            addr::MINSTRET => self.minstret(),
            // Sixteen PMP entries; the rest of the 64 read as zero (WARL), odd pmpcfg
            // registers do not exist on RV64.
            addr::PMPCFG0..=addr::PMPCFG15 => {
                let n = usize::from(csr - addr::PMPCFG0);
                if !n.is_multiple_of(2) {
                    return Err(());
                }
                self.pmp.read_cfg(n).unwrap_or(0)
            }
            addr::PMPADDR0..=addr::PMPADDR63 => self
                .pmp
                .read_addr(usize::from(csr - addr::PMPADDR0))
                .unwrap_or(0),
            // Counters cannot be inhibited, and there are no event counters: read-only
            // zero (WARL), as firmware probing for them expects.
            addr::MCOUNTINHIBIT
            | addr::MHPMEVENT3..=addr::MHPMEVENT31
            | addr::MHPMCOUNTER3..=addr::MHPMCOUNTER31 => 0,
            _ => return Err(()),
        };
        Ok(v)
    }

    /// The value a CSRRS/CSRRC of `csr` modifies, given what it read (`read`): the
    /// software-writable interrupt-pending bits for mip and sip (the privileged spec: only
    /// the software-writable SEIP takes part in the read-modify-write), else `read`.
    pub(crate) fn csr_rmw_base(&self, csr: u16, read: u64) -> u64 {
        match csr {
            addr::MIP => self.mip_sw,
            addr::SIP => self.mip_sw & self.mideleg,
            _ => read,
        }
    }

    /// Writes CSR `csr` (the caller checked it is not read-only).
    pub(crate) fn csr_write(&mut self, csr: u16, value: u64) -> Result<(), ()> {
        if (csr >> 8) & 3 > self.prv as u16 || csr >> 10 == 3 {
            return Err(());
        }
        if let Some(written) = self.vector_csr_write(csr, value) {
            return written;
        }
        match csr {
            addr::FFLAGS | addr::FRM | addr::FCSR if self.fs_off() => return Err(()),
            addr::FFLAGS => {
                self.fp.fflags = (value & 0x1f) as u8;
                self.fs_dirty();
            }
            addr::FRM => {
                self.fp.frm = (value & 7) as u8;
                self.fs_dirty();
            }
            addr::FCSR => {
                self.fp.fflags = (value & 0x1f) as u8;
                self.fp.frm = ((value >> 5) & 7) as u8;
                self.fs_dirty();
            }
            addr::SSTATUS => {
                let before = self.mstatus;
                let mask = (mstatus::SSTATUS_MASK & mstatus::WRITABLE) | self.vs_bits();
                self.mstatus = (self.mstatus & !mask) | (value & mask);
                self.status_written(before);
            }
            addr::SIE => {
                self.mie = (self.mie & !self.mideleg) | (value & self.mideleg);
                self.irq_dirty = true;
            }
            addr::STVEC => self.stvec = value & !2,
            addr::SCOUNTEREN => self.scounteren = value & 7,
            addr::SENVCFG => self.senvcfg = value & 1,
            addr::SSCRATCH => self.sscratch = value,
            addr::SEPC => self.sepc = value & !1,
            addr::SCAUSE => self.scause = value,
            addr::STVAL => self.stval = value,
            addr::SIP => {
                // Only SSIP is writable from S-mode.
                let mask = irq::SSI & self.mideleg;
                self.mip_sw = (self.mip_sw & !mask) | (value & mask);
                self.irq_dirty = true;
            }
            addr::SATP => {
                if self.prv == Priv::Supervisor && self.mstatus & mstatus::TVM != 0 {
                    return Err(());
                }
                // Bare and Sv39 only, no ASID bits; other modes leave satp unchanged.
                let mode = value >> 60;
                if mode == 0 || mode == 8 {
                    self.satp = value & ((0xf << 60) | ((1 << 44) - 1));
                    self.flush_tlb();
                }
            }
            addr::MSTATUS => {
                let before = self.mstatus;
                let writable = mstatus::WRITABLE | self.vs_bits();
                self.mstatus = (self.mstatus & !writable) | (value & writable);
                // MPP = 2 is reserved: keep it legal.
                if (self.mstatus >> mstatus::MPP_SHIFT) & 3 == 2 {
                    self.mstatus &= !mstatus::MPP;
                }
                self.status_written(before);
            }
            addr::MISA => {}
            addr::MEDELEG => self.medeleg = value & DEFAULT_MEDELEG,
            addr::MIDELEG => {
                self.mideleg = value & irq::S_MASK;
                self.irq_dirty = true;
            }
            addr::MIE => {
                self.mie = value & irq::ALL;
                self.irq_dirty = true;
            }
            addr::MTVEC => self.mtvec = value & !2,
            addr::MCOUNTEREN => self.mcounteren = value & 7,
            addr::MENVCFG => self.menvcfg = value & 1,
            addr::MSCRATCH => self.mscratch = value,
            addr::MEPC => self.mepc = value & !1,
            addr::MCAUSE => self.mcause = value,
            addr::MTVAL => self.mtval = value,
            addr::MIP => {
                let mask = irq::SSI | irq::STI | irq::SEI;
                self.mip_sw = (self.mip_sw & !mask) | (value & mask);
                self.irq_dirty = true;
            }
            // The clock is wio's: a write moves what the counter reads, not the clock.
            // This instruction's cycle is already counted; its retirement is not, and
            // the spec suppresses it: the next instruction reads minstret as written.
            addr::MCYCLE => self.counter_bias[0] = value.wrapping_sub(self.cycles),
            addr::MINSTRET => {
                self.counter_bias[1] = value.wrapping_sub(self.instret.wrapping_add(1))
            }
            addr::PMPCFG0..=addr::PMPCFG15 => {
                let n = usize::from(csr - addr::PMPCFG0);
                if !n.is_multiple_of(2) {
                    return Err(());
                }
                if self.pmp.write_cfg(n, value) {
                    self.pmp_changed();
                }
            }
            addr::PMPADDR0..=addr::PMPADDR63 => {
                if self
                    .pmp
                    .write_addr(usize::from(csr - addr::PMPADDR0), value)
                {
                    self.pmp_changed();
                }
            }
            addr::MCOUNTINHIBIT
            | addr::MHPMEVENT3..=addr::MHPMEVENT31
            | addr::MHPMCOUNTER3..=addr::MHPMCOUNTER31 => {}
            _ => return Err(()),
        }
        Ok(())
    }
}
