//! The Goldfish real-time clock (Android emulator's RTC, "google,goldfish-rtc"),
//! which Debian's riscv64 kernel has built in: Linux reads the date from it at
//! boot. Its time is `--epoch` plus virtual time, never the host's clock.
//!
//! Registers: TIME_LOW (0x00; reading it latches TIME_HIGH), TIME_HIGH (0x04),
//! alarm registers (accepted; alarms are not modelled and never fire).

const TIME_LOW: u64 = 0x00;
const TIME_HIGH: u64 = 0x04;

/// The RTC.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GoldfishRtc {
    epoch_ns: u64,
    /// What the guest set minus what the clock said, in ns (guest `hwclock -w`).
    offset_ns: i128,
    latched_high: u32,
    pending_low: Option<u32>,
}

impl GoldfishRtc {
    /// An RTC reading `epoch_unix` seconds at virtual time 0.
    pub fn new(epoch_unix: u64) -> GoldfishRtc {
        GoldfishRtc {
            epoch_ns: epoch_unix.saturating_mul(1_000_000_000),
            offset_ns: 0,
            latched_high: 0,
            pending_low: None,
        }
    }

    fn now(&self, virtual_ns: u64) -> u64 {
        let t = i128::from(self.epoch_ns) + i128::from(virtual_ns) + self.offset_ns;
        t.clamp(0, i128::from(u64::MAX)) as u64
    }

    /// Steps the wall clock by `delta_s` seconds (a clock fault): the guest's next read sees
    /// the jump; virtual time itself does not move.
    pub fn step(&mut self, delta_s: i64) {
        self.offset_ns += i128::from(delta_s) * 1_000_000_000;
    }

    /// 32-bit register read at virtual time `virtual_ns`.
    pub fn read(&mut self, offset: u64, virtual_ns: u64) -> u32 {
        match offset {
            TIME_LOW => {
                let t = self.now(virtual_ns);
                self.latched_high = (t >> 32) as u32;
                t as u32
            }
            TIME_HIGH => self.latched_high,
            _ => 0,
        }
    }

    /// 32-bit register write: setting the time moves the RTC's offset, not the virtual clock.
    pub fn write(&mut self, offset: u64, value: u32, virtual_ns: u64) {
        match offset {
            TIME_LOW => self.pending_low = Some(value),
            TIME_HIGH => {
                let low = self.pending_low.take().unwrap_or(0);
                let wanted = (u64::from(value) << 32) | u64::from(low);
                self.offset_ns =
                    i128::from(wanted) - i128::from(self.epoch_ns) - i128::from(virtual_ns);
            }
            _ => {}
        }
    }
}

// The RTC is its registers and the offset RTC-step faults added; every value is one the
// device can hold (its reads clamp).
crate::persist_registers!(GoldfishRtc);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_epoch_plus_virtual_time() {
        let mut rtc = GoldfishRtc::new(1_767_225_600); // 2026-01-01
        let low = rtc.read(TIME_LOW, 1_500_000_000);
        let high = rtc.read(TIME_HIGH, 9_999_999_999);
        let t = (u64::from(high) << 32) | u64::from(low);
        assert_eq!(t, 1_767_225_600 * 1_000_000_000 + 1_500_000_000);
    }

    #[test]
    fn guest_can_set_the_time() {
        let mut rtc = GoldfishRtc::new(0);
        let want: u64 = 5_000_000_000_000;
        rtc.write(TIME_LOW, want as u32, 100);
        rtc.write(TIME_HIGH, (want >> 32) as u32, 100);
        let low = rtc.read(TIME_LOW, 200);
        let t = (u64::from(rtc.read(TIME_HIGH, 200)) << 32) | u64::from(low);
        assert_eq!(t, want + 100);
    }
}
