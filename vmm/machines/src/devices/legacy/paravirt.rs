//! wio's paravirt port: lets a guest read the virtual clock and virtual TSC
//! (what "trapping RDTSC" returns), and seed-derived entropy, without RDTSC.
//!
//! Protocol: write a 32-bit selector to [`SELECT_PORT`]; the 64-bit value is
//! latched at that moment; read its low half at [`LOW_PORT`] and its high
//! half at [`HIGH_PORT`].

/// Selector port.
pub const SELECT_PORT: u16 = 0x510;
/// Low 32 bits of the latched value.
pub const LOW_PORT: u16 = 0x514;
/// High 32 bits of the latched value.
pub const HIGH_PORT: u16 = 0x518;

/// What a selector asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selector {
    /// Virtual ns since the run's epoch.
    VirtualNs,
    /// Virtual TSC ticks.
    VirtualTsc,
    /// Virtual TSC frequency in Hz.
    TscHz,
    /// 64 bits from the seed's "paravirt-entropy" stream.
    Entropy,
    /// "Snapshot here": the guest asks for a snapshot at this point (`--snapshot-at guest`).
    /// Latches 0 whether or not a snapshot is taken, so the guest runs the same either way.
    SnapshotHere,
    /// The guest kernel announces that it reads time only through this port (wio's
    /// determinism patches, `guest-kernel/x86_64`), so the run's summary need not warn that
    /// its RDTSC reads reach host time. Latches 0 (the acknowledgement the kernel checks).
    Announce,
}

impl Selector {
    /// Decodes a selector value.
    pub fn from_u32(v: u32) -> Option<Selector> {
        match v {
            0 => Some(Selector::VirtualNs),
            1 => Some(Selector::VirtualTsc),
            2 => Some(Selector::TscHz),
            3 => Some(Selector::Entropy),
            4 => Some(Selector::SnapshotHere),
            5 => Some(Selector::Announce),
            _ => None,
        }
    }
}

/// The latch behind the three ports.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Paravirt {
    latched: u64,
    /// A kernel announced itself ([`Selector::Announce`]) in this run or before the
    /// snapshot it was restored from (a restored run warns exactly when its boot would).
    announced: bool,
}

impl Paravirt {
    /// Whether `port` belongs to the paravirt device.
    pub fn handles(port: u16) -> bool {
        (SELECT_PORT..HIGH_PORT + 4).contains(&port)
    }

    /// Latches a value for the following reads.
    pub fn latch(&mut self, value: u64) {
        self.latched = value;
    }

    /// Records a kernel's announcement ([`Selector::Announce`]).
    pub fn announce(&mut self) {
        self.announced = true;
    }

    /// Whether a kernel announced itself in this run (or before its snapshot).
    pub fn announced(&self) -> bool {
        self.announced
    }

    /// Port read: the low or high half of the latched value (all ones elsewhere).
    pub fn read(&self, port: u16) -> u32 {
        match port {
            LOW_PORT => self.latched as u32,
            HIGH_PORT => (self.latched >> 32) as u32,
            _ => u32::MAX,
        }
    }
}

// The port is its latched value and whether the kernel announced itself.
crate::persist_registers!(Paravirt);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latch_splits_halves() {
        let mut p = Paravirt::default();
        p.latch(0x1122_3344_5566_7788);
        assert_eq!(p.read(LOW_PORT), 0x5566_7788);
        assert_eq!(p.read(HIGH_PORT), 0x1122_3344);
        assert_eq!(Selector::from_u32(9), None);
        assert_eq!(Selector::from_u32(5), Some(Selector::Announce));
        assert!(!p.announced());
        p.announce();
        assert!(p.announced());
    }
}
