//! The CMOS real-time clock (MC146818) at ports 0x70/0x71, on the virtual clock.
//!
//! The date is `epoch + virtual time`, where the epoch comes from `--epoch`
//! (never from the host clock). Time registers follow status register B's
//! binary/BCD and 12/24-hour bits; the update-in-progress flag is set in the
//! last 244 us of every virtual second, as on hardware. Guest writes to the
//! time registers are stored in CMOS RAM but do not move the clock.
//! Alarm, periodic and update interrupts are not modelled.

const REG_SECONDS: u8 = 0x00;
const REG_MINUTES: u8 = 0x02;
const REG_HOURS: u8 = 0x04;
const REG_WEEKDAY: u8 = 0x06;
const REG_DAY: u8 = 0x07;
const REG_MONTH: u8 = 0x08;
const REG_YEAR: u8 = 0x09;
const REG_A: u8 = 0x0a;
const REG_B: u8 = 0x0b;
const REG_C: u8 = 0x0c;
const REG_D: u8 = 0x0d;
const REG_CENTURY: u8 = 0x32;
const B_24H: u8 = 0x02;
const B_BINARY: u8 = 0x04;
const UIP_WINDOW_NS: u64 = 244_000;

/// A civil UTC date and time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CivilTime {
    /// Full year, e.g. 2026.
    pub year: i64,
    /// 1..=12.
    pub month: u32,
    /// 1..=31.
    pub day: u32,
    /// 0..=23.
    pub hour: u32,
    /// 0..=59.
    pub minute: u32,
    /// 0..=59.
    pub second: u32,
    /// 0 = Sunday.
    pub weekday: u32,
}

/// Converts seconds since 1970-01-01T00:00:00Z to a civil date (proleptic Gregorian).
pub fn civil_from_unix(secs: i64) -> CivilTime {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Days-to-civil after Howard Hinnant's public-domain algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    CivilTime {
        year,
        month,
        day,
        hour: (rem / 3600) as u32,
        minute: (rem / 60 % 60) as u32,
        second: (rem % 60) as u32,
        weekday: (days + 4).rem_euclid(7) as u32,
    }
}

/// Parses an RFC 3339 UTC timestamp ("2026-01-01T00:00:00Z", offsets allowed) to Unix seconds.
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> { s.get(r)?.parse::<i64>().ok() };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        rest = &frac[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6
            && (rest.starts_with('+') || rest.starts_with('-'))
            && &rest[3..4] == ":" =>
        {
            let h: i64 = rest[1..3].parse().ok()?;
            let m: i64 = rest[4..6].parse().ok()?;
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            sign * (h * 3600 + m * 60)
        }
        _ => return None,
    };
    // Civil-to-days (Hinnant).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    if civil_from_unix(days * 86_400).day as i64 != day {
        return None; // e.g. February 30th
    }
    Some(days * 86_400 + hour * 3600 + minute * 60 + second.min(59) - offset)
}

/// The CMOS RTC and its 128 bytes of RAM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rtc {
    epoch_unix: i64,
    index: u8,
    ram: [u8; 128],
}

/// The RTC as a snapshot keeps it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RtcState {
    epoch_unix: i64,
    index: u8,
    ram: Vec<u8>,
}

impl Rtc {
    /// An RTC whose virtual time 0 is `epoch_unix`, reporting `mem_bytes` of RAM in CMOS.
    pub fn new(epoch_unix: i64, mem_bytes: u64) -> Rtc {
        let mut ram = [0u8; 128];
        ram[usize::from(REG_A)] = 0x26;
        ram[usize::from(REG_B)] = B_24H;
        ram[usize::from(REG_D)] = 0x80;
        // Extended memory in KiB above 1 MiB (capped at 63 MiB), and in 64 KiB above 16 MiB.
        let ext_kib = (mem_bytes.saturating_sub(1 << 20) >> 10).min(0xfc00) as u16;
        ram[0x30..0x32].copy_from_slice(&ext_kib.to_le_bytes());
        ram[0x17..0x19].copy_from_slice(&ext_kib.to_le_bytes());
        let above16 = (mem_bytes.saturating_sub(16 << 20) >> 16).min(0xffff) as u16;
        ram[0x34..0x36].copy_from_slice(&above16.to_le_bytes());
        Rtc {
            epoch_unix,
            index: 0,
            ram,
        }
    }

    /// Whether `port` belongs to the RTC.
    pub fn handles(port: u16) -> bool {
        matches!(port, 0x70 | 0x71)
    }

    /// Steps the wall clock by `delta_s` seconds (a clock fault): the guest's next read sees
    /// the jump; virtual time itself does not move.
    pub fn step(&mut self, delta_s: i64) {
        self.epoch_unix = self.epoch_unix.saturating_add(delta_s);
    }

    /// The civil time at virtual time `now_ns`.
    pub fn time_at(&self, now_ns: u64) -> CivilTime {
        civil_from_unix(
            self.epoch_unix
                .saturating_add((now_ns / 1_000_000_000) as i64),
        )
    }

    fn encode(&self, v: u32) -> u8 {
        if self.ram[usize::from(REG_B)] & B_BINARY != 0 {
            v as u8
        } else {
            (((v / 10) << 4) | (v % 10)) as u8
        }
    }

    /// Port read at virtual time `now_ns`.
    pub fn read(&mut self, port: u16, now_ns: u64) -> u8 {
        if port == 0x70 {
            return 0xff;
        }
        let t = self.time_at(now_ns);
        match self.index {
            REG_SECONDS => self.encode(t.second),
            REG_MINUTES => self.encode(t.minute),
            REG_HOURS => {
                if self.ram[usize::from(REG_B)] & B_24H != 0 {
                    self.encode(t.hour)
                } else {
                    let h12 = if t.hour.is_multiple_of(12) {
                        12
                    } else {
                        t.hour % 12
                    };
                    self.encode(h12) | if t.hour >= 12 { 0x80 } else { 0 }
                }
            }
            REG_WEEKDAY => self.encode(t.weekday + 1),
            REG_DAY => self.encode(t.day),
            REG_MONTH => self.encode(t.month),
            REG_YEAR => self.encode(t.year.rem_euclid(100) as u32),
            REG_CENTURY => self.encode(t.year.div_euclid(100).clamp(0, 99) as u32),
            REG_A => {
                let uip = now_ns % 1_000_000_000 >= 1_000_000_000 - UIP_WINDOW_NS;
                (self.ram[usize::from(REG_A)] & 0x7f) | if uip { 0x80 } else { 0 }
            }
            REG_C => 0,
            i => self.ram[usize::from(i)],
        }
    }

    /// Port write.
    pub fn write(&mut self, port: u16, value: u8) {
        if port == 0x70 {
            // Bit 7 is the NMI mask, not part of the index.
            self.index = value & 0x7f;
        } else {
            match self.index {
                REG_C | REG_D => {}
                REG_A => self.ram[usize::from(REG_A)] = value & 0x7f,
                i => self.ram[usize::from(i)] = value,
            }
        }
    }
}

/// A snapshot keeps the epoch, the index register and the CMOS RAM; a restore refuses RAM
/// that is not 128 bytes.
impl crate::snapshot::persist::Persist for Rtc {
    type State = RtcState;
    type Args<'a> = ();
    type Error = crate::devices::StateError;

    fn save(&self) -> RtcState {
        RtcState {
            epoch_unix: self.epoch_unix,
            index: self.index,
            ram: self.ram.to_vec(),
        }
    }

    fn restore(_: (), s: &RtcState) -> Result<Rtc, crate::devices::StateError> {
        Ok(Rtc {
            epoch_unix: s.epoch_unix,
            index: s.index,
            ram: s
                .ram
                .as_slice()
                .try_into()
                .map_err(|_| crate::devices::StateError::RtcRam { len: s.ram.len() })?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        let t = civil_from_unix(0);
        assert_eq!((t.year, t.month, t.day, t.weekday), (1970, 1, 1, 4));
        let t = civil_from_unix(1_709_210_096); // 2024-02-29T12:34:56Z
        assert_eq!(
            (t.year, t.month, t.day, t.hour, t.minute, t.second),
            (2024, 2, 29, 12, 34, 56)
        );
    }

    #[test]
    fn parses_rfc3339() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339("2024-02-29T12:34:56Z"), Some(1_709_210_096));
        assert_eq!(
            parse_rfc3339("2024-02-29T14:34:56.5+02:00"),
            Some(1_709_210_096)
        );
        assert_eq!(parse_rfc3339("2023-02-29T00:00:00Z"), None);
        assert_eq!(parse_rfc3339("yesterday"), None);
        assert_eq!(parse_rfc3339("2024-13-01T00:00:00Z"), None);
    }

    #[test]
    fn reads_bcd_and_binary_time() {
        let mut rtc = Rtc::new(1_709_210_096, 256 << 20);
        rtc.write(0x70, REG_SECONDS);
        assert_eq!(rtc.read(0x71, 0), 0x56);
        assert_eq!(rtc.read(0x71, 3_000_000_000), 0x59);
        rtc.write(0x70, REG_B);
        rtc.write(0x71, B_24H | B_BINARY);
        rtc.write(0x70, REG_HOURS);
        assert_eq!(rtc.read(0x71, 0), 12);
        rtc.write(0x70, REG_CENTURY);
        assert_eq!(rtc.read(0x71, 0), 20);
    }

    #[test]
    fn update_in_progress_near_second_boundary() {
        let mut rtc = Rtc::new(0, 0);
        rtc.write(0x70, REG_A);
        assert_eq!(rtc.read(0x71, 500_000_000) & 0x80, 0);
        assert_eq!(rtc.read(0x71, 999_900_000) & 0x80, 0x80);
    }
}
