//! Tests of [`InstructionClock`]: the exact old conversions at drift 0, and the rounding
//! properties (inverse conversions, monotone time, continuity across re-keys) at many
//! drifts, rates and anchors, over many values.

use super::*;

/// A small deterministic generator of test values (xorshift64*).
struct Values(u64);

impl Values {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Values spread over every magnitude (small, ns-scale, years, near u64::MAX).
    fn spread(&mut self) -> u64 {
        let v = self.next();
        v >> (self.next() % 64)
    }
}

const DRIFTS: [i32; 11] = [
    -MAX_DRIFT_PPM,
    -1000,
    -100,
    -7,
    -1,
    0,
    1,
    13,
    100,
    1000,
    MAX_DRIFT_PPM,
];

/// Clocks at every drift, two rates, and re-keyed at several anchors (including a chain
/// of re-keys).
fn clocks() -> Vec<InstructionClock> {
    let mut out = Vec::new();
    for ns in [1, 3] {
        for ppm in DRIFTS {
            let c = InstructionClock::with_drift(ns, ppm).unwrap();
            out.push(c);
            out.push(c.rekeyed(12_345, -ppm).unwrap());
            out.push(c.rekeyed(2_000_000_007, ppm / 2).unwrap());
            out.push(
                c.rekeyed(1 << 40, MAX_DRIFT_PPM)
                    .unwrap()
                    .rekeyed((1 << 40) + 999, -MAX_DRIFT_PPM)
                    .unwrap(),
            );
        }
    }
    out
}

/// Every conversion of `c` around `t` and `count` keeps its promise.
fn check_at(c: &InstructionClock, t: u64, count: u64) {
    let t = t.min(u64::MAX - 1);
    let vt = VirtualTime::from_ns(t);
    let first = c.count_at_or_after(vt);
    assert!(c.time_at(first) >= vt, "{c:?} t={t} first={first}");
    if first > 0 && first != u64::MAX {
        assert!(c.time_at(first - 1) < vt, "{c:?} t={t} first={first}");
    }
    let last = c.count_before(vt);
    if c.time_at(0) <= vt {
        assert!(c.time_at(last) <= vt, "{c:?} t={t} last={last}");
        assert!(c.time_at(last + 1) > vt, "{c:?} t={t} last={last}");
        assert!(first <= last + 1, "{c:?} t={t}");
    } else {
        assert_eq!((last, first), (0, 0), "{c:?} t={t}");
    }
    let count = count.min(u64::MAX - 2);
    assert!(c.time_at(count) <= c.time_at(count + 1), "{c:?} {count}");
    let at = c.time_at(count);
    if at < VirtualTime::from_ns(u64::MAX - 1) {
        // (Beyond that, times saturate: 584 years.)
        assert!(c.count_at_or_after(at) <= count, "{c:?} {count}");
        assert!(c.count_before(at) >= count, "{c:?} {count}");
    }
    // Lengths.
    let n = c.count_of(t);
    assert!(c.ns_of(n) >= t || n == u64::MAX, "{c:?} ns={t}");
    if n > 0 && n != u64::MAX {
        assert!(c.ns_of(n - 1) < t, "{c:?} ns={t}");
    }
}

#[test]
fn conversions_round_the_right_way() {
    let c = InstructionClock::new(3);
    assert_eq!(c.time_at(4).as_ns(), 12);
    assert_eq!(c.count_before(VirtualTime::from_ns(13)), 4);
    assert_eq!(c.count_at_or_after(VirtualTime::from_ns(13)), 5);
    assert_eq!(c.count_at_or_after(VirtualTime::from_ns(12)), 4);
    assert_eq!(c.count_at_or_after(VirtualTime::MAX), u64::MAX);
    assert_eq!(c.time_at(u64::MAX), VirtualTime::MAX);
    let one = InstructionClock::new(1);
    assert_eq!(
        one.count_at_or_after(VirtualTime::from_ns(u64::MAX - 1)),
        u64::MAX - 1
    );
}

/// Drift 0 converts exactly as the clock did before drift existed (same traces).
#[test]
fn no_drift_is_the_nominal_clock() {
    let mut v = Values(0x9e37_79b9_7f4a_7c15);
    for ns in [1u64, 3, 7, 1000] {
        let plain = InstructionClock::new(ns);
        let rekeyed = plain
            .rekeyed(5_000_000, 0)
            .unwrap()
            .rekeyed(77_777_777, 0)
            .unwrap();
        for i in 0..20_000u64 {
            let x = if i < 2_000 { i } else { v.spread() }.min(u64::MAX - 1);
            let t = VirtualTime::from_ns(x);
            assert_eq!(plain.time_at(x).as_ns(), x.saturating_mul(ns), "{ns} {x}");
            assert_eq!(plain.count_before(t), x / ns, "{ns} {x}");
            assert_eq!(plain.count_at_or_after(t), x.div_ceil(ns), "{ns} {x}");
            assert_eq!(plain.ns_of(x), x.saturating_mul(ns), "{ns} {x}");
            assert_eq!(plain.count_of(x), x.div_ceil(ns), "{ns} {x}");
            if x >= 77_777_777 {
                assert_eq!(rekeyed.time_at(x), plain.time_at(x), "{ns} {x}");
                assert_eq!(rekeyed.count_before(t), plain.count_before(t));
                assert_eq!(rekeyed.count_at_or_after(t), plain.count_at_or_after(t));
            }
        }
    }
}

#[test]
fn never_stays_never() {
    for c in clocks() {
        assert_eq!(c.time_at(u64::MAX), VirtualTime::MAX, "{c:?}");
        assert_eq!(c.count_before(VirtualTime::MAX), u64::MAX, "{c:?}");
        assert_eq!(c.count_at_or_after(VirtualTime::MAX), u64::MAX, "{c:?}");
    }
}

#[test]
fn conversions_are_inverse_and_monotone_at_every_drift() {
    let mut v = Values(42);
    for c in clocks() {
        // Dense: every value near the start and near each anchor used above.
        for base in [0u64, 12_345, 2_000_000_007, 1 << 40] {
            for d in 0..1_500 {
                let x = (base + d).saturating_sub(700);
                check_at(&c, x, x);
            }
        }
        // Spread over the whole range.
        for _ in 0..3_000 {
            check_at(&c, v.spread(), v.spread());
        }
        // Time never goes backwards along a walk of the counter.
        let mut count = 0u64;
        let mut last = c.time_at(0);
        for _ in 0..3_000 {
            count = count.saturating_add(v.next() >> (20 + v.next() % 44));
            let t = c.time_at(count);
            assert!(t >= last, "{c:?} at {count}");
            last = t;
        }
    }
}

/// A positive drift is a fast oscillator: more instructions per virtual ns.
#[test]
fn drift_sets_the_rate() {
    let second = |ppm| {
        InstructionClock::with_drift(1, ppm)
            .unwrap()
            .time_at(1_000_000_000)
            .as_ns()
    };
    assert_eq!(second(0), 1_000_000_000);
    assert_eq!(second(100), 999_900_009); // 10^15 / 1_000_100, rounded down
    assert_eq!(second(-100), 1_000_100_010); // 10^15 / 999_900
    assert_eq!(second(MAX_DRIFT_PPM), 990_099_009);
    assert_eq!(second(-MAX_DRIFT_PPM), 1_010_101_010);
    let fast = InstructionClock::with_drift(1, 1000).unwrap();
    let t = VirtualTime::from_ns(1_000_000_000);
    assert_eq!(fast.count_at_or_after(t), 1_001_000_000);
    assert_eq!(fast.count_of(1_000_000_000), 1_001_000_000);
    assert_eq!(fast.ns_of(1_001_000_000), 1_000_000_000);
}

#[test]
fn rekeying_keeps_time_continuous() {
    let mut v = Values(7);
    for c in clocks() {
        let mut clock = c;
        let mut count = 0u64;
        for _ in 0..300 {
            count = count.saturating_add(v.next() >> 30).min(u64::MAX - 2);
            let before = clock.time_at(count);
            let ppm = DRIFTS[(v.next() % DRIFTS.len() as u64) as usize];
            let next = clock.rekeyed(count, ppm).unwrap();
            assert_eq!(next.time_at(count), before, "{clock:?} at {count}");
            assert!(next.time_at(count + 1) >= before);
            assert_eq!(next.drift_ppm(), ppm);
            check_at(&next, before.as_ns(), count);
            clock = next;
        }
    }
}

#[test]
fn bounds_are_checked() {
    assert!(InstructionClock::with_drift(1, MAX_DRIFT_PPM).is_ok());
    assert!(InstructionClock::with_drift(1, -MAX_DRIFT_PPM).is_ok());
    assert_eq!(
        InstructionClock::with_drift(1, MAX_DRIFT_PPM + 1),
        Err(InstructionClockError::Drift(MAX_DRIFT_PPM + 1))
    );
    assert_eq!(
        InstructionClock::with_drift(1, i32::MIN),
        Err(InstructionClockError::Drift(i32::MIN))
    );
    assert_eq!(
        InstructionClock::with_drift(0, 0),
        Err(InstructionClockError::Duration(0))
    );
    assert!(InstructionClock::with_drift(MAX_NS_PER_INSTRUCTION + 1, 0).is_err());
    let c = InstructionClock::new(1);
    assert!(c.rekeyed(10, -MAX_DRIFT_PPM - 1).is_err());
}

#[test]
fn serialized_clocks_are_checked() {
    let c = InstructionClock::with_drift(1, -250)
        .unwrap()
        .rekeyed(1_000, 37)
        .unwrap();
    let json = serde_json::to_string(&c).unwrap();
    assert_eq!(serde_json::from_str::<InstructionClock>(&json).unwrap(), c);
    let bad = json.replace("\"drift_ppm\":37", "\"drift_ppm\":20000");
    assert_ne!(bad, json);
    assert!(serde_json::from_str::<InstructionClock>(&bad).is_err());
}
