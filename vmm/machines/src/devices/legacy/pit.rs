//! The Intel 8254 programmable interval timer on the virtual clock.
//!
//! Channel 0 drives IRQ 0; channel 2's gate and output are on port 0x61 (as
//! Linux's calibration loop expects). Modes 0 (interrupt on terminal count),
//! 2 (rate generator) and 3 (square wave) are modelled exactly in input
//! clocks: the k-th terminal count of a periodic channel happens at
//! `start + ceil(k * reload * 1e9 / 1_193_182)` virtual ns, so there is no
//! drift however long the guest runs. Modes 1, 4 and 5 behave like mode 0
//! (no hardware gate triggers exist here). BCD counting is not supported.

/// The PIT's input clock in Hz.
pub const PIT_HZ: u64 = 1_193_182;

/// Virtual ns at which `ticks` input clocks have elapsed (rounded up).
pub fn ns_of_ticks(ticks: u64) -> u64 {
    let ns = (u128::from(ticks) * 1_000_000_000).div_ceil(u128::from(PIT_HZ));
    u64::try_from(ns).unwrap_or(u64::MAX)
}

/// Whole input clocks elapsed in `ns` virtual ns.
pub fn ticks_in(ns: u64) -> u64 {
    (u128::from(ns) * u128::from(PIT_HZ) / 1_000_000_000) as u64
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum Access {
    #[default]
    LoHi,
    Lo,
    Hi,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Channel {
    mode: u8,
    access: Access,
    reload: u64,
    /// Virtual ns at which counting started; None until a count is written (and the gate is on).
    start_ns: Option<u64>,
    /// Low byte written in LoHi access, waiting for the high byte.
    pending_low: Option<u8>,
    /// Latched count and whether its low byte was already read.
    latched: Option<u16>,
    latch_low_read: bool,
    /// In LoHi access, whether the next read returns the high byte.
    read_high: bool,
    /// Index k of the next terminal count to report as an interrupt (channel 0).
    next_irq: u64,
}

impl Channel {
    fn elapsed(&self, now_ns: u64) -> Option<u64> {
        self.start_ns.map(|s| ticks_in(now_ns.saturating_sub(s)))
    }

    fn periodic(&self) -> bool {
        matches!(self.mode, 2 | 3)
    }

    fn count(&self, now_ns: u64) -> u16 {
        let Some(e) = self.elapsed(now_ns) else {
            return self.reload as u16;
        };
        let r = self.reload;
        let v = match self.mode {
            2 => r - e % r,
            3 => (r - (2 * e) % r) & !1,
            _ if e < r => r - e,
            _ => 0x1_0000 - (e - r) % 0x1_0000,
        };
        v as u16
    }

    fn output(&self, now_ns: u64) -> bool {
        let Some(e) = self.elapsed(now_ns) else {
            return self.mode != 0;
        };
        let r = self.reload;
        match self.mode {
            2 => e % r != r - 1,
            3 => e % r < r.div_ceil(2),
            _ => e >= r,
        }
    }

    fn write_count(&mut self, value: u8, now_ns: u64, gate: bool) -> bool {
        let full = match self.access {
            Access::Lo => Some(u64::from(value)),
            Access::Hi => Some(u64::from(value) << 8),
            Access::LoHi => match self.pending_low.take() {
                None => {
                    self.pending_low = Some(value);
                    None
                }
                Some(low) => Some(u64::from(low) | (u64::from(value) << 8)),
            },
        };
        let Some(count) = full else { return false };
        self.reload = if count == 0 { 0x1_0000 } else { count };
        self.start_ns = gate.then_some(now_ns);
        self.next_irq = 1;
        true
    }

    fn read(&mut self, now_ns: u64) -> u8 {
        if let Some(l) = self.latched {
            if self.access == Access::LoHi && !self.latch_low_read {
                self.latch_low_read = true;
                return l as u8;
            }
            self.latched = None;
            self.latch_low_read = false;
            return if self.access == Access::Lo {
                l as u8
            } else {
                (l >> 8) as u8
            };
        }
        let c = self.count(now_ns);
        match self.access {
            Access::Lo => c as u8,
            Access::Hi => (c >> 8) as u8,
            Access::LoHi => {
                self.read_high = !self.read_high;
                if self.read_high {
                    c as u8
                } else {
                    (c >> 8) as u8
                }
            }
        }
    }
}

/// The three-channel 8254 at ports 0x40-0x43, plus port 0x61 (channel 2 gate/output).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Pit {
    channels: [Channel; 3],
    /// Port 0x61 bits 0 (channel 2 gate) and 1 (speaker enable).
    port61: u8,
}

impl Default for Pit {
    fn default() -> Self {
        let ch = Channel {
            reload: 0x1_0000,
            ..Default::default()
        };
        Pit {
            channels: [ch.clone(), ch.clone(), ch],
            port61: 0,
        }
    }
}

impl Pit {
    /// Whether `port` belongs to the PIT (including port 0x61).
    pub fn handles(port: u16) -> bool {
        matches!(port, 0x40..=0x43 | 0x61)
    }

    /// Port write at virtual time `now_ns`; returns true when channel 0's schedule changed.
    pub fn write(&mut self, port: u16, value: u8, now_ns: u64) -> bool {
        match port {
            0x40..=0x42 => {
                let i = usize::from(port - 0x40);
                let gate = i != 2 || self.port61 & 1 != 0;
                self.channels[i].write_count(value, now_ns, gate) && i == 0
            }
            0x43 => self.command(value, now_ns),
            _ => {
                let was = self.port61 & 1 != 0;
                self.port61 = value & 0x03;
                let ch2 = &mut self.channels[2];
                if !was && value & 1 != 0 {
                    ch2.start_ns = Some(now_ns); // rising gate (re)starts channel 2
                } else if value & 1 == 0 {
                    ch2.start_ns = None;
                }
                false
            }
        }
    }

    fn command(&mut self, value: u8, now_ns: u64) -> bool {
        let sel = usize::from(value >> 6);
        if sel == 3 {
            // Read-back: latch counts of the selected channels (status latching unsupported).
            if value & 0x20 == 0 {
                for i in 0..3 {
                    if value & (2 << i) != 0 {
                        let c = self.channels[i].count(now_ns);
                        self.channels[i].latched.get_or_insert(c);
                    }
                }
            }
            return false;
        }
        let ch = &mut self.channels[sel];
        let access = (value >> 4) & 3;
        if access == 0 {
            let c = ch.count(now_ns);
            ch.latched.get_or_insert(c);
            return false;
        }
        ch.access = match access {
            1 => Access::Lo,
            2 => Access::Hi,
            _ => Access::LoHi,
        };
        let mode = (value >> 1) & 7;
        ch.mode = if mode >= 6 { mode - 4 } else { mode };
        ch.pending_low = None;
        ch.read_high = false;
        // Programming a mode stops the channel until the new count arrives.
        ch.start_ns = None;
        sel == 0
    }

    /// Port read at virtual time `now_ns`.
    pub fn read(&mut self, port: u16, now_ns: u64) -> u8 {
        match port {
            0x40..=0x42 => self.channels[usize::from(port - 0x40)].read(now_ns),
            0x43 => 0xff,
            _ => {
                let out = self.channels[2].output(now_ns);
                self.port61 | if out { 0x20 } else { 0 }
            }
        }
    }

    /// Virtual time of channel 0's next interrupt, if it will raise one.
    pub fn next_irq0(&self) -> Option<u64> {
        let ch = &self.channels[0];
        let start = ch.start_ns?;
        if !ch.periodic() && ch.next_irq > 1 {
            return None;
        }
        let ticks = ch.next_irq.checked_mul(ch.reload)?;
        start.checked_add(ns_of_ticks(ticks))
    }

    /// Records that channel 0's pending interrupt was delivered to the PIC.
    pub fn irq0_delivered(&mut self) {
        self.channels[0].next_irq += 1;
    }

    /// Channel 0's mode and reload value, for the trace.
    pub fn channel0(&self) -> (u8, u64) {
        (self.channels[0].mode, self.channels[0].reload)
    }
}

impl Pit {
    /// The PIT is its channels' registers; a restore refuses a mode above 5 (the guest's writes
    /// fold 6 and 7 onto 2 and 3) or a reload value above 65536.
    fn check_saved(s: &Pit) -> Result<(), crate::devices::StateError> {
        use crate::devices::check_register as check;
        for ch in &s.channels {
            check("PIT", "mode", u64::from(ch.mode), ch.mode <= 5)?;
            check("PIT", "reload", ch.reload, ch.reload <= 0x1_0000)?;
        }
        Ok(())
    }
}

crate::persist_registers!(Pit, Pit::check_saved);

#[cfg(test)]
mod tests {
    use super::*;

    fn program(pit: &mut Pit, mode: u8, count: u16, now: u64) -> bool {
        pit.write(0x43, 0x30 | (mode << 1), now);
        pit.write(0x40, count as u8, now);
        pit.write(0x40, (count >> 8) as u8, now)
    }

    #[test]
    fn conversions_round_the_right_way() {
        assert_eq!(ns_of_ticks(PIT_HZ), 1_000_000_000);
        assert_eq!(ns_of_ticks(1), 839); // 838.09.. rounded up
        assert_eq!(ticks_in(839), 1);
        assert_eq!(ticks_in(838), 0);
    }

    #[test]
    fn mode2_ticks_without_drift() {
        let mut pit = Pit::default();
        assert!(program(&mut pit, 2, 1193, 5_000));
        for k in 1..=1000u64 {
            let t = pit.next_irq0().unwrap();
            assert_eq!(t, 5_000 + ns_of_ticks(k * 1193));
            pit.irq0_delivered();
        }
        // 1000 ticks at divisor 1193 = 999.847 ms.
        assert_eq!(
            pit.next_irq0().unwrap() - 5_000 - ns_of_ticks(1000 * 1193),
            ns_of_ticks(1001 * 1193) - ns_of_ticks(1000 * 1193)
        );
    }

    #[test]
    fn mode0_fires_once() {
        let mut pit = Pit::default();
        program(&mut pit, 0, 23864, 0);
        assert_eq!(pit.next_irq0(), Some(ns_of_ticks(23864)));
        pit.irq0_delivered();
        assert_eq!(pit.next_irq0(), None);
    }

    #[test]
    fn mode3_is_periodic() {
        let mut pit = Pit::default();
        program(&mut pit, 3, 11932, 0);
        pit.irq0_delivered();
        assert_eq!(pit.next_irq0(), Some(ns_of_ticks(2 * 11932)));
    }

    #[test]
    fn half_written_count_does_not_start() {
        let mut pit = Pit::default();
        pit.write(0x43, 0x34, 0);
        assert!(!pit.write(0x40, 0xa9, 0));
        assert_eq!(pit.next_irq0(), None);
        assert!(pit.write(0x40, 0x04, 10));
        assert_eq!(pit.next_irq0(), Some(10 + ns_of_ticks(0x4a9)));
    }

    #[test]
    fn latched_count_reads_down() {
        let mut pit = Pit::default();
        program(&mut pit, 2, 1000, 0);
        pit.write(0x43, 0x00, ns_of_ticks(250));
        let lo = pit.read(0x40, ns_of_ticks(900));
        let hi = pit.read(0x40, ns_of_ticks(900));
        assert_eq!(u16::from(lo) | (u16::from(hi) << 8), 750);
    }

    #[test]
    fn channel2_output_on_port61_after_terminal_count() {
        let mut pit = Pit::default();
        pit.write(0x61, 0x01, 0);
        pit.write(0x43, 0xb0, 0); // channel 2, lohi, mode 0
        pit.write(0x42, 0xff, 100);
        pit.write(0x42, 0x00, 100);
        assert_eq!(pit.read(0x61, 100) & 0x20, 0);
        assert_eq!(pit.read(0x61, 100 + ns_of_ticks(255)) & 0x20, 0x20);
    }
}
