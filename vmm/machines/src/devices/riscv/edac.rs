//! The EDAC unit of ECC memory (`wio,edac`): the status side of the memory controller
//! whose SECDED check is the hart's (`wio_riscv::ecc`). It counts corrected and
//! uncorrectable errors, latches the address of the last of each, and raises its PLIC
//! line while an enabled status bit is set; software polls or takes the interrupt and
//! writes the status bits back to clear them.
//!
//! Registers (32-bit):
//! - 0x00 STATUS: bit 0 a corrected error happened, bit 1 an uncorrectable one (write 1 to clear)
//! - 0x04 CONTROL: bit 0 interrupt on corrected errors, bit 1 on uncorrectable ones (reset: both)
//! - 0x08 CE_COUNT, 0x0c UE_COUNT (saturating; write anything to zero)
//! - 0x10/0x14 LAST_CE_ADDR low/high, 0x18/0x1c LAST_UE_ADDR low/high

use serde::{Deserialize, Serialize};

/// Register offsets.
pub mod reg {
    /// Status bits.
    pub const STATUS: u64 = 0x00;
    /// Interrupt enables.
    pub const CONTROL: u64 = 0x04;
    /// Corrected errors.
    pub const CE_COUNT: u64 = 0x08;
    /// Uncorrectable errors.
    pub const UE_COUNT: u64 = 0x0c;
    /// Last corrected error's word address, low half.
    pub const LAST_CE_LO: u64 = 0x10;
    /// High half.
    pub const LAST_CE_HI: u64 = 0x14;
    /// Last uncorrectable error's word address, low half.
    pub const LAST_UE_LO: u64 = 0x18;
    /// High half.
    pub const LAST_UE_HI: u64 = 0x1c;
}

/// Status bit: a corrected error.
pub const CE: u32 = 1;
/// Status bit: an uncorrectable error.
pub const UE: u32 = 2;

/// The EDAC unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edac {
    status: u32,
    control: u32,
    /// Corrected errors since the count was last cleared.
    pub ce_count: u32,
    /// Uncorrectable errors since the count was last cleared.
    pub ue_count: u32,
    last_ce: u64,
    last_ue: u64,
}

impl Default for Edac {
    fn default() -> Edac {
        Edac {
            status: 0,
            control: CE | UE,
            ce_count: 0,
            ue_count: 0,
            last_ce: 0,
            last_ue: 0,
        }
    }
}

impl Edac {
    /// The memory controller found an error in the word at `paddr`.
    pub fn record(&mut self, paddr: u64, corrected: bool) {
        if corrected {
            self.status |= CE;
            self.ce_count = self.ce_count.saturating_add(1);
            self.last_ce = paddr;
        } else {
            self.status |= UE;
            self.ue_count = self.ue_count.saturating_add(1);
            self.last_ue = paddr;
        }
    }

    /// The level of its interrupt line.
    pub fn irq(&self) -> bool {
        self.status & self.control != 0
    }

    /// A 32-bit register read.
    pub fn read(&self, offset: u64) -> u32 {
        match offset {
            reg::STATUS => self.status,
            reg::CONTROL => self.control,
            reg::CE_COUNT => self.ce_count,
            reg::UE_COUNT => self.ue_count,
            reg::LAST_CE_LO => self.last_ce as u32,
            reg::LAST_CE_HI => (self.last_ce >> 32) as u32,
            reg::LAST_UE_LO => self.last_ue as u32,
            reg::LAST_UE_HI => (self.last_ue >> 32) as u32,
            _ => 0,
        }
    }

    /// A 32-bit register write.
    pub fn write(&mut self, offset: u64, value: u32) {
        match offset {
            reg::STATUS => self.status &= !(value & (CE | UE)),
            reg::CONTROL => self.control = value & (CE | UE),
            reg::CE_COUNT => self.ce_count = 0,
            reg::UE_COUNT => self.ue_count = 0,
            _ => {}
        }
    }
}

impl Edac {
    /// The EDAC unit is its registers: a restore refuses status or control bits other than CE
    /// and UE.
    fn check_saved(s: &Edac) -> Result<(), crate::devices::StateError> {
        use crate::devices::check_register as check;
        check(
            "EDAC",
            "status",
            u64::from(s.status),
            s.status & !(CE | UE) == 0,
        )?;
        check(
            "EDAC",
            "control",
            u64::from(s.control),
            s.control & !(CE | UE) == 0,
        )?;
        Ok(())
    }
}

crate::persist_registers!(Edac, Edac::check_saved);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_latches_and_clears() {
        let mut e = Edac::default();
        assert!(!e.irq());
        e.record(0x8000_0100, true);
        e.record(0x8000_0200, false);
        assert!(e.irq());
        assert_eq!(e.read(reg::STATUS), CE | UE);
        assert_eq!(e.read(reg::LAST_CE_LO), 0x8000_0100);
        assert_eq!(e.read(reg::LAST_UE_LO), 0x8000_0200);
        e.write(reg::STATUS, CE);
        assert_eq!(e.read(reg::STATUS), UE);
        e.write(reg::CONTROL, CE);
        assert!(!e.irq(), "UE interrupt off");
        e.write(reg::CE_COUNT, 0);
        assert_eq!(e.read(reg::CE_COUNT), 0);
        assert_eq!(
            e.read(reg::LAST_CE_LO),
            0x8000_0100,
            "clearing the count keeps the address"
        );
    }
}
