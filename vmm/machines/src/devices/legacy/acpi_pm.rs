//! The ACPI PM1a register blocks of wio's PC (what the FADT of `arch::x86_64::acpi`
//! points at): the event block (status and enable, 16 bits each) and the control block.
//! Nothing raises an ACPI event, so status reads 0 and enable only keeps what is written;
//! control reads SCI_EN (the machine is always in ACPI mode). Writing SLP_EN with the
//! SLP_TYP of `\_S5` is the guest powering the machine off: Linux's ACPI power-off.

/// First port of the PM1a event block (status at +0, enable at +2).
pub const EVT_PORT: u16 = 0x600;
/// First port of the PM1a control block.
pub const CNT_PORT: u16 = 0x604;
/// The SLP_TYP value `\_S5` gives: soft off.
pub const S5_SLP_TYP: u16 = 5;

const SCI_EN: u16 = 1;
const SLP_TYP_SHIFT: u16 = 10;
const SLP_EN: u16 = 1 << 13;

/// The PM1a blocks.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AcpiPm {
    enable: u16,
    control: u16,
    powered_off: bool,
}

impl AcpiPm {
    /// Whether `port` belongs to the PM1a blocks.
    pub fn handles(port: u16) -> bool {
        (EVT_PORT..EVT_PORT + 4).contains(&port) || (CNT_PORT..CNT_PORT + 2).contains(&port)
    }

    fn byte(value: u16, port: u16) -> u8 {
        (value >> (8 * (port & 1))) as u8
    }

    fn set_byte(value: &mut u16, port: u16, byte: u8) {
        let shift = 8 * (port & 1);
        *value = (*value & !(0xff << shift)) | (u16::from(byte) << shift);
    }

    /// Port read.
    pub fn read(&self, port: u16) -> u8 {
        match port {
            p if p < EVT_PORT + 2 => 0, // status: no event ever
            p if p < EVT_PORT + 4 => Self::byte(self.enable, p),
            p => Self::byte(self.control | SCI_EN, p),
        }
    }

    /// Port write. Writing SLP_EN (bit 13) with SLP_TYP (bits 10-12) of S5 powers off.
    pub fn write(&mut self, port: u16, value: u8) {
        match port {
            p if p < EVT_PORT + 2 => {} // status: write-one-to-clear of nothing
            p if p < EVT_PORT + 4 => Self::set_byte(&mut self.enable, p, value),
            p => {
                Self::set_byte(&mut self.control, p, value);
                if self.control & SLP_EN != 0 {
                    if (self.control >> SLP_TYP_SHIFT) & 7 == S5_SLP_TYP {
                        self.powered_off = true;
                    }
                    self.control &= !SLP_EN; // SLP_EN reads as 0
                }
            }
        }
    }

    /// Whether the guest entered S5.
    pub fn powered_off(&self) -> bool {
        self.powered_off
    }
}

// The PM1a blocks are their registers and whether the guest switched the machine off.
crate::persist_registers!(AcpiPm);

#[cfg(test)]
mod tests {
    use super::*;

    fn outw(pm: &mut AcpiPm, port: u16, v: u16) {
        pm.write(port, v as u8);
        pm.write(port + 1, (v >> 8) as u8);
    }

    #[test]
    fn s5_with_slp_en_powers_off_and_nothing_else_does() {
        let mut pm = AcpiPm::default();
        assert!(AcpiPm::handles(0x600) && AcpiPm::handles(0x605));
        assert!(!AcpiPm::handles(0x606) && !AcpiPm::handles(0x5ff));
        assert_eq!(pm.read(CNT_PORT) & 1, 1, "SCI_EN: in ACPI mode");
        // Linux writes SLP_TYP first, then SLP_TYP | SLP_EN.
        outw(&mut pm, CNT_PORT, S5_SLP_TYP << 10);
        assert!(!pm.powered_off());
        outw(&mut pm, CNT_PORT, 3 << 10 | SLP_EN); // S3: not offered, ignored
        assert!(!pm.powered_off());
        outw(&mut pm, CNT_PORT, S5_SLP_TYP << 10 | SLP_EN);
        assert!(pm.powered_off());
    }

    #[test]
    fn enable_keeps_what_is_written_and_status_reads_zero() {
        let mut pm = AcpiPm::default();
        outw(&mut pm, EVT_PORT + 2, 0x0120);
        assert_eq!((pm.read(EVT_PORT + 2), pm.read(EVT_PORT + 3)), (0x20, 0x01));
        outw(&mut pm, EVT_PORT, 0xffff);
        assert_eq!((pm.read(EVT_PORT), pm.read(EVT_PORT + 1)), (0, 0));
    }
}
