//! Trap entry and return, and interrupt selection: how the hart enters an M- or S-mode
//! handler for an exception or interrupt (delegation, xepc/xcause/xtval, the mstatus
//! stack), how SRET/MRET unwind it, and which interrupt is deliverable now. Kept apart
//! from the CSR file (`csr::access`) because this is the privileged architecture's
//! control transfer, not register access.

use crate::bus::Bus;
use crate::csr::{cause, irq, mstatus, Priv};
use crate::hart::Hart;

impl Hart {
    /// The effective mip: software bits, the timer, and the external line.
    pub fn mip(&self, bus: &dyn Bus) -> u64 {
        self.mip_with(bus.external_interrupt())
    }

    /// The effective mip given the external line's level.
    pub fn mip_with(&self, external: bool) -> u64 {
        let mut mip = self.mip_sw;
        if self.cycles >= self.timer_deadline() {
            // The SBI timer (wio's SBI sets STIP), or the CLINT's (MTIP) for M-mode guests.
            mip |= if self.firmware { irq::MTI } else { irq::STI };
        }
        if external {
            mip |= irq::SEI;
        }
        mip
    }

    /// The interrupt to take now, if any (highest priority first).
    pub fn pending_interrupt(&self, bus: &dyn Bus) -> Option<u64> {
        self.pending_interrupt_with(bus.external_interrupt())
    }

    /// The interrupt to take now given the external line's level, if any.
    pub fn pending_interrupt_with(&self, external: bool) -> Option<u64> {
        let pending = self.mip_with(external) & self.mie;
        if pending == 0 {
            return None;
        }
        let m_enabled = self.prv < Priv::Machine || self.mstatus & mstatus::MIE != 0;
        let s_enabled = self.prv < Priv::Supervisor
            || (self.prv == Priv::Supervisor && self.mstatus & mstatus::SIE != 0);
        let m = if m_enabled {
            pending & !self.mideleg
        } else {
            0
        };
        let s = if s_enabled && self.prv != Priv::Machine {
            pending & self.mideleg
        } else {
            0
        };
        for set in [m, s] {
            for bit in [11u64, 3, 7, 9, 1, 5] {
                if set & (1 << bit) != 0 {
                    return Some(bit);
                }
            }
        }
        None
    }

    /// Enters the trap handler for exception or interrupt `cause` (interrupt bit included).
    pub fn take_trap(&mut self, cause: u64, tval: u64) {
        let interrupt = cause & cause::INTERRUPT != 0;
        let code = cause & !cause::INTERRUPT;
        let deleg = if interrupt {
            self.mideleg
        } else {
            self.medeleg
        };
        let epc = self.pc;
        if self.prv <= Priv::Supervisor && code < 64 && (deleg >> code) & 1 != 0 {
            self.scause = cause;
            self.sepc = epc;
            self.stval = tval;
            let mut s = self.mstatus;
            s = if s & mstatus::SIE != 0 {
                s | mstatus::SPIE
            } else {
                s & !mstatus::SPIE
            };
            s = if self.prv == Priv::Supervisor {
                s | mstatus::SPP
            } else {
                s & !mstatus::SPP
            };
            s &= !mstatus::SIE;
            self.mstatus = s;
            self.prv = Priv::Supervisor;
            self.pc = trap_vector(self.stvec, interrupt, code);
        } else {
            self.mcause = cause;
            self.mepc = epc;
            self.mtval = tval;
            let mut s = self.mstatus;
            s = if s & mstatus::MIE != 0 {
                s | mstatus::MPIE
            } else {
                s & !mstatus::MPIE
            };
            s = (s & !mstatus::MPP) | ((self.prv as u64) << mstatus::MPP_SHIFT);
            s &= !mstatus::MIE;
            self.mstatus = s;
            self.prv = Priv::Machine;
            self.pc = trap_vector(self.mtvec, interrupt, code);
        }
        self.irq_dirty = true;
        self.forget_data_pages();
    }

    /// SRET/MRET bookkeeping.
    pub(crate) fn xret(&mut self, machine: bool) {
        let s = self.mstatus;
        if machine {
            let mpp = Priv::from_bits(s >> mstatus::MPP_SHIFT);
            let mut n = if s & mstatus::MPIE != 0 {
                s | mstatus::MIE
            } else {
                s & !mstatus::MIE
            };
            n |= mstatus::MPIE;
            n &= !mstatus::MPP;
            if mpp != Priv::Machine {
                n &= !mstatus::MPRV;
            }
            self.mstatus = n;
            self.prv = mpp;
            self.pc = self.mepc;
        } else {
            let spp = if s & mstatus::SPP != 0 {
                Priv::Supervisor
            } else {
                Priv::User
            };
            let mut n = if s & mstatus::SPIE != 0 {
                s | mstatus::SIE
            } else {
                s & !mstatus::SIE
            };
            n |= mstatus::SPIE;
            n &= !mstatus::SPP;
            n &= !mstatus::MPRV;
            self.mstatus = n;
            self.prv = spp;
            self.pc = self.sepc;
        }
        self.irq_dirty = true;
        self.forget_data_pages();
    }
}

fn trap_vector(tvec: u64, interrupt: bool, code: u64) -> u64 {
    let base = tvec & !3;
    if interrupt && tvec & 3 == 1 {
        base + 4 * code
    } else {
        base
    }
}
