//! A cascaded pair of Intel 8259A programmable interrupt controllers.
//!
//! Edge-triggered, fixed priority (IRQ 0 highest), with the initialization
//! sequence (ICW1-4), the interrupt mask (OCW1), non-specific and specific
//! EOI (OCW2) and IRR/ISR reads (OCW3). Rotation and special mask mode are
//! accepted and ignored: neither Linux nor the test guest relies on them.

/// One 8259A.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Pic8259 {
    irr: u8,
    isr: u8,
    imr: u8,
    vector_base: u8,
    /// Which ICW is expected next (0 = initialized, 2..=4 during init).
    init_step: u8,
    needs_icw4: bool,
    auto_eoi: bool,
    read_isr: bool,
    /// Input lines currently high, for edge detection.
    lines: u8,
}

impl Pic8259 {
    /// Highest-priority unmasked requested IRQ not blocked by one in service.
    fn pending(&self) -> Option<u8> {
        let requests = self.irr & !self.imr;
        if requests == 0 {
            return None;
        }
        let irq = requests.trailing_zeros() as u8;
        // An IRQ in service blocks it and everything of lower priority.
        if self.isr != 0 && self.isr.trailing_zeros() as u8 <= irq {
            return None;
        }
        Some(irq)
    }

    /// Sets input line `irq` to `level`; a rising edge requests the interrupt.
    fn set_line(&mut self, irq: u8, level: bool) {
        let bit = 1u8 << irq;
        if level && self.lines & bit == 0 {
            self.irr |= bit;
        }
        if level {
            self.lines |= bit;
        } else {
            self.lines &= !bit;
        }
    }

    /// Moves `irq` from requested to in-service; returns its vector.
    fn acknowledge(&mut self, irq: u8) -> u8 {
        let bit = 1u8 << irq;
        self.irr &= !bit;
        if !self.auto_eoi {
            self.isr |= bit;
        }
        self.vector_base.wrapping_add(irq)
    }

    fn write_command(&mut self, value: u8) {
        if value & 0x10 != 0 {
            // ICW1: start initialization.
            self.init_step = 2;
            self.needs_icw4 = value & 0x01 != 0;
            self.imr = 0;
            self.isr = 0;
            self.irr = 0;
            self.auto_eoi = false;
            self.read_isr = false;
        } else if value & 0x08 != 0 {
            // OCW3.
            if value & 0x02 != 0 {
                self.read_isr = value & 0x01 != 0;
            }
        } else {
            // OCW2.
            match value >> 5 {
                // Non-specific EOI: clear the highest-priority in-service bit.
                0b001 | 0b101 if self.isr != 0 => self.isr &= self.isr - 1,
                0b011 | 0b111 => self.isr &= !(1 << (value & 7)),
                _ => {}
            }
        }
    }

    fn write_data(&mut self, value: u8) {
        match self.init_step {
            2 => {
                self.vector_base = value & 0xf8;
                self.init_step = 3;
            }
            3 => self.init_step = if self.needs_icw4 { 4 } else { 0 },
            4 => {
                self.auto_eoi = value & 0x02 != 0;
                self.init_step = 0;
            }
            _ => self.imr = value,
        }
    }

    fn read_command(&self) -> u8 {
        if self.read_isr {
            self.isr
        } else {
            self.irr
        }
    }
}

/// The master/slave pair at ports 0x20-0x21 and 0xa0-0xa1, slave on master IRQ 2.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PicPair {
    master: Pic8259,
    slave: Pic8259,
}

/// The cascade input of the master.
const CASCADE_IRQ: u8 = 2;

impl PicPair {
    /// Whether `port` belongs to the pair.
    pub fn handles(port: u16) -> bool {
        matches!(port, 0x20 | 0x21 | 0xa0 | 0xa1)
    }

    /// Raises (edge) interrupt line `irq` (0..=15).
    pub fn raise(&mut self, irq: u8) {
        self.set_level(irq, true);
        self.set_level(irq, false);
    }

    /// Sets line `irq` (0..=15) to a level.
    pub fn set_level(&mut self, irq: u8, level: bool) {
        assert!(irq < 16, "8259 pair has 16 lines");
        if irq < 8 {
            self.master.set_line(irq, level);
        } else {
            self.slave.set_line(irq - 8, level);
            self.update_cascade();
        }
    }

    fn update_cascade(&mut self) {
        let slave_pending = self.slave.pending().is_some();
        self.master.set_line(CASCADE_IRQ, slave_pending);
    }

    /// Whether an interrupt is waiting for the CPU.
    pub fn has_pending(&self) -> bool {
        self.master.pending().is_some()
    }

    /// Acknowledges the highest-priority pending interrupt and returns its vector (INTA cycle).
    pub fn acknowledge(&mut self) -> Option<u8> {
        let irq = self.master.pending()?;
        if irq == CASCADE_IRQ {
            let vector = match self.slave.pending() {
                Some(s) => self.slave.acknowledge(s),
                // Spurious IRQ 15 when the request went away.
                None => self.slave.vector_base.wrapping_add(7),
            };
            self.master.acknowledge(CASCADE_IRQ);
            self.master.lines &= !(1 << CASCADE_IRQ);
            self.update_cascade();
            Some(vector)
        } else {
            Some(self.master.acknowledge(irq))
        }
    }

    /// Port read.
    pub fn read(&mut self, port: u16) -> u8 {
        match port {
            0x20 => self.master.read_command(),
            0x21 => self.master.imr,
            0xa0 => self.slave.read_command(),
            _ => self.slave.imr,
        }
    }

    /// Port write.
    pub fn write(&mut self, port: u16, value: u8) {
        match port {
            0x20 => self.master.write_command(value),
            0x21 => self.master.write_data(value),
            0xa0 => {
                self.slave.write_command(value);
                self.update_cascade();
            }
            _ => {
                self.slave.write_data(value);
                self.update_cascade();
            }
        }
    }
}

// The two 8259s are their registers; an initialization step outside the sequence just
// restarts it at the next ICW1, so every saved value is one the pair can hold.
crate::persist_registers!(PicPair);

#[cfg(test)]
mod tests {
    use super::*;

    fn initialized() -> PicPair {
        let mut p = PicPair::default();
        for (port, v) in [
            (0x20, 0x11),
            (0xa0, 0x11),
            (0x21, 0x20),
            (0xa1, 0x28),
            (0x21, 4),
            (0xa1, 2),
            (0x21, 1),
            (0xa1, 1),
            (0x21, 0),
            (0xa1, 0),
        ] {
            p.write(port, v);
        }
        p
    }

    #[test]
    fn delivers_master_irq_with_remapped_vector() {
        let mut p = initialized();
        p.raise(0);
        assert!(p.has_pending());
        assert_eq!(p.acknowledge(), Some(0x20));
        assert!(!p.has_pending());
    }

    #[test]
    fn in_service_blocks_lower_priority_until_eoi() {
        let mut p = initialized();
        p.raise(3);
        assert_eq!(p.acknowledge(), Some(0x23));
        p.raise(4);
        assert!(!p.has_pending(), "IRQ 4 waits behind IRQ 3 in service");
        p.raise(1);
        assert!(p.has_pending(), "IRQ 1 preempts IRQ 3");
        assert_eq!(p.acknowledge(), Some(0x21));
        p.write(0x20, 0x20); // EOI for IRQ 1
        assert!(!p.has_pending());
        p.write(0x20, 0x63); // specific EOI for IRQ 3
        assert_eq!(p.acknowledge(), Some(0x24));
    }

    #[test]
    fn masked_irq_stays_requested() {
        let mut p = initialized();
        p.write(0x21, 0x01);
        p.raise(0);
        assert!(!p.has_pending());
        p.write(0x20, 0x0a); // OCW3: read IRR
        assert_eq!(p.read(0x20), 0x01);
        p.write(0x21, 0x00);
        assert_eq!(p.acknowledge(), Some(0x20));
    }

    #[test]
    fn slave_irq_goes_through_cascade() {
        let mut p = initialized();
        p.raise(8);
        assert_eq!(p.acknowledge(), Some(0x28));
        p.write(0xa0, 0x20);
        p.write(0x20, 0x20);
        assert!(!p.has_pending());
        p.raise(12);
        assert_eq!(p.acknowledge(), Some(0x2c));
    }
}
