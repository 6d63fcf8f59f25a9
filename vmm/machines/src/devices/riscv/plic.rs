//! The platform-level interrupt controller (PLIC), with one context: hart 0's
//! supervisor external interrupt. Sources are level-triggered: a source is
//! pending while its line is high and it is not being served; claiming it
//! hides it until the guest writes the completion.

/// Number of interrupt sources (1..=31; source 0 does not exist).
pub const SOURCES: u32 = 32;

const PRIORITY_BASE: u64 = 0x0;
const PENDING_BASE: u64 = 0x1000;
const ENABLE_BASE: u64 = 0x2000;
const CONTEXT_BASE: u64 = 0x20_0000;

/// The PLIC.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Plic {
    priority: [u32; SOURCES as usize],
    /// Lines currently high.
    level: u32,
    /// Sources claimed and not yet completed.
    in_service: u32,
    /// Sources whose edge was latched (for devices that only pulse).
    latched: u32,
    enable: u32,
    threshold: u32,
}

impl Plic {
    /// Sets source `irq`'s line level (level-triggered devices such as virtio-mmio).
    pub fn set_level(&mut self, irq: u32, high: bool) {
        if irq == 0 || irq >= SOURCES {
            return;
        }
        if high {
            self.level |= 1 << irq;
        } else {
            self.level &= !(1 << irq);
        }
    }

    /// Latches a pulse on source `irq` (pending until claimed).
    pub fn pulse(&mut self, irq: u32) {
        if irq != 0 && irq < SOURCES {
            self.latched |= 1 << irq;
        }
    }

    fn pending(&self) -> u32 {
        (self.level | self.latched) & !self.in_service & !1
    }

    /// The best claimable source for the context, if any.
    fn best(&self) -> Option<u32> {
        let candidates = self.pending() & self.enable;
        let mut best: Option<(u32, u32)> = None;
        for irq in 1..SOURCES {
            if candidates & (1 << irq) == 0 {
                continue;
            }
            let p = self.priority[irq as usize];
            if p > self.threshold && best.is_none_or(|(_, bp)| p > bp) {
                best = Some((irq, p));
            }
        }
        best.map(|(irq, _)| irq)
    }

    /// Whether the context's external interrupt line is high.
    pub fn interrupt_pending(&self) -> bool {
        self.best().is_some()
    }

    /// MMIO read at `offset` from the PLIC base (32-bit registers).
    pub fn read(&mut self, offset: u64) -> u32 {
        match offset {
            o if (PRIORITY_BASE..PRIORITY_BASE + 4 * u64::from(SOURCES)).contains(&o) => {
                self.priority[(o / 4) as usize]
            }
            PENDING_BASE => self.pending(),
            ENABLE_BASE => self.enable,
            CONTEXT_BASE => self.threshold,
            o if o == CONTEXT_BASE + 4 => {
                // Claim.
                match self.best() {
                    Some(irq) => {
                        self.in_service |= 1 << irq;
                        self.latched &= !(1 << irq);
                        irq
                    }
                    None => 0,
                }
            }
            _ => 0,
        }
    }

    /// MMIO write at `offset`.
    pub fn write(&mut self, offset: u64, value: u32) {
        match offset {
            // Source 0 does not exist: its priority stays 0.
            o if o != 0 && (PRIORITY_BASE..PRIORITY_BASE + 4 * u64::from(SOURCES)).contains(&o) => {
                self.priority[(o / 4) as usize] = value & 7;
            }
            ENABLE_BASE => self.enable = value & !1,
            CONTEXT_BASE => self.threshold = value & 7,
            // Complete.
            o if o == CONTEXT_BASE + 4 && value < SOURCES => self.in_service &= !(1 << value),
            _ => {}
        }
    }
}

impl Plic {
    /// The PLIC is its registers: a snapshot keeps them as they are, and a restore refuses
    /// values the guest can never write (priorities and threshold above 7, or a bit set for
    /// source 0, which does not exist).
    fn check_saved(s: &Plic) -> Result<(), crate::devices::StateError> {
        use crate::devices::check_register as check;
        for p in s.priority {
            check("PLIC", "priority", u64::from(p), p <= 7)?;
        }
        check(
            "PLIC",
            "threshold",
            u64::from(s.threshold),
            s.threshold <= 7,
        )?;
        for (name, mask) in [
            ("level", s.level),
            ("in-service", s.in_service),
            ("latched", s.latched),
            ("enable", s.enable),
        ] {
            check("PLIC", name, u64::from(mask), mask & 1 == 0)?;
        }
        Ok(())
    }
}

crate::persist_registers!(Plic, Plic::check_saved);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claim_and_complete() {
        let mut p = Plic::default();
        p.write(10 * 4, 1);
        p.write(ENABLE_BASE, 1 << 10);
        assert!(!p.interrupt_pending());
        p.set_level(10, true);
        assert!(p.interrupt_pending());
        assert_eq!(p.read(CONTEXT_BASE + 4), 10);
        assert!(!p.interrupt_pending(), "claimed sources are hidden");
        assert_eq!(p.read(CONTEXT_BASE + 4), 0);
        p.write(CONTEXT_BASE + 4, 10);
        assert!(p.interrupt_pending(), "line still high after completion");
        p.set_level(10, false);
        assert!(!p.interrupt_pending());
    }

    #[test]
    fn threshold_and_priority() {
        let mut p = Plic::default();
        p.write(3 * 4, 2);
        p.write(5 * 4, 5);
        p.write(ENABLE_BASE, (1 << 3) | (1 << 5));
        p.pulse(3);
        p.pulse(5);
        assert_eq!(p.read(CONTEXT_BASE + 4), 5, "higher priority first");
        p.write(CONTEXT_BASE, 2);
        assert!(
            !p.interrupt_pending(),
            "priority 2 is not above threshold 2"
        );
        p.write(CONTEXT_BASE, 1);
        assert_eq!(p.read(CONTEXT_BASE + 4), 3);
    }
}
