//! CPU-timing noise: seeds that move where the guest is preempted.
//!
//! Without it a branch's seed changes device timing only, and a race between two threads
//! that never touch I/O comes out the same in every branch. With it each timer interrupt
//! is taken a seeded number of nanoseconds after the time the guest asked for (interrupt
//! latency, as on real hardware): preemption lands on other instructions, so the
//! interleavings differ per seed, and still repeat bit for bit for one seed. The draws
//! come from their own stream (`stream_names::SCHED_NOISE_TIMER`), re-keyed when a
//! snapshot is restored with another seed, so removing them shifts no other stream.
//!
//! riscv64 applies the latency to the SBI timer on the exact instruction; x86-64 to the
//! PIT's interrupt events, which reach the guest at its next exit or interrupt window.
//!
//! The level also sets the riscv64 machine's clock drift ([`drift_ppm`]): its oscillator
//! (the instruction count its guest's timer and `time` CSR read) runs a seeded number of
//! ppm fast or slow against virtual time, where device events, the network and other
//! machines live; off: none, light: up to ±100 ppm (a real crystal), heavy: ±1000 ppm.
//! It is drawn from its own stream (`stream_names::CLOCK_DRIFT`) at boot, and drawn again
//! from the new seed's stream when a snapshot is restored with another seed. Drift is
//! riscv64-only for now: x86-64 time comes from its virtual TSC and exit cost model.

use serde::{Deserialize, Serialize};
use wio_scheduler::{stream_names, RunSeed, SavedStream, Stream};

/// How much timing noise a run's seed adds (`--sched-noise`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum SchedNoise {
    /// None: interrupts land exactly when the guest asked (the behaviour before noise).
    Off,
    /// Up to 1/64 of the interval the guest asked for, at most 10 µs per interrupt: enough to
    /// move preemption by thousands of instructions, small enough that a guest measuring
    /// its timer's periods (the x86-64 test guest allows 20 µs) still sees them right.
    #[default]
    Light,
    /// Up to 1/4 of the interval, at most 2 ms per interrupt.
    Heavy,
}

impl SchedNoise {
    /// (divisor of the requested interval, cap in ns) of the extra latency.
    fn bounds(self) -> Option<(u64, u64)> {
        match self {
            SchedNoise::Off => None,
            SchedNoise::Light => Some((64, 10_000)),
            SchedNoise::Heavy => Some((4, 2_000_000)),
        }
    }

    /// The largest clock drift of the level, in ppm either way.
    pub fn drift_bound_ppm(self) -> i32 {
        match self {
            SchedNoise::Off => 0,
            SchedNoise::Light => 100,
            SchedNoise::Heavy => 1000,
        }
    }

    /// The name the trace and `--help` use.
    pub fn name(self) -> &'static str {
        match self {
            SchedNoise::Off => "off",
            SchedNoise::Light => "light",
            SchedNoise::Heavy => "heavy",
        }
    }
}

/// A machine's clock drift in ppm (positive: its oscillator runs fast) for `level`:
/// uniform in ±[`SchedNoise::drift_bound_ppm`], the first draw of `seed`'s
/// `stream_names::CLOCK_DRIFT` stream; 0 with no draw when off.
pub fn drift_ppm(level: SchedNoise, seed: RunSeed) -> i32 {
    let bound = level.drift_bound_ppm();
    if bound == 0 {
        return 0;
    }
    let span = 2 * bound.unsigned_abs();
    let draw = seed
        .stream(stream_names::CLOCK_DRIFT)
        .range_inclusive(0, u64::from(span));
    // draw <= span = 2 * bound, so the difference is within ±bound.
    i32::try_from(draw).map_or(0, |d| d - bound)
}

/// The timer-latency draws of one machine.
pub struct TimerNoise {
    level: SchedNoise,
    stream: Stream,
}

/// [`TimerNoise`] as a snapshot keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TimerNoiseState {
    level: SchedNoise,
    stream: SavedStream,
}

impl TimerNoise {
    /// Noise of `level` drawn from `seed`.
    pub fn new(level: SchedNoise, seed: RunSeed) -> TimerNoise {
        TimerNoise {
            level,
            stream: seed.stream(stream_names::SCHED_NOISE_TIMER),
        }
    }

    /// The extra latency in ns of a timer interrupt the guest asked for `interval_ns` from
    /// now: uniform in [0, min(interval / divisor, cap)]. One draw per call unless off.
    pub fn delay_ns(&mut self, interval_ns: u64) -> u64 {
        match self.level.bounds() {
            None => 0,
            Some((divisor, cap)) => self
                .stream
                .range_inclusive(0, (interval_ns / divisor).min(cap)),
        }
    }

    /// Its level.
    pub fn level(&self) -> SchedNoise {
        self.level
    }
}

/// A snapshot keeps the level and the stream's position; a restore with `reseed` re-keys
/// the draws (a branch with another seed).
impl crate::snapshot::persist::Persist for TimerNoise {
    type State = TimerNoiseState;
    type Args<'a> = Option<RunSeed>;
    type Error = std::convert::Infallible;

    fn save(&self) -> TimerNoiseState {
        TimerNoiseState {
            level: self.level,
            stream: self.stream.save(),
        }
    }

    fn restore(reseed: Option<RunSeed>, s: &TimerNoiseState) -> Result<TimerNoise, Self::Error> {
        Ok(TimerNoise {
            level: s.level,
            stream: Stream::resume(&s.stream, reseed),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::persist::Persist;

    #[test]
    fn delays_are_bounded_seeded_and_resumable() {
        let mut off = TimerNoise::new(SchedNoise::Off, RunSeed(1));
        assert_eq!(off.delay_ns(4_000_000), 0);
        let draws = |seed| {
            let mut n = TimerNoise::new(SchedNoise::Light, RunSeed(seed));
            (0..200).map(|_| n.delay_ns(4_000_000)).collect::<Vec<_>>()
        };
        let a = draws(1);
        assert_eq!(a, draws(1));
        assert_ne!(a, draws(2));
        assert!(a.iter().all(|d| *d <= 10_000));
        assert!(a.iter().any(|d| *d > 5_000), "the range is used");
        let mut heavy = TimerNoise::new(SchedNoise::Heavy, RunSeed(1));
        assert!((0..200).all(|_| heavy.delay_ns(1_000) <= 250));
        let mut n = TimerNoise::new(SchedNoise::Heavy, RunSeed(3));
        n.delay_ns(10);
        let saved = n.save();
        let mut same = TimerNoise::restore(None, &saved).unwrap();
        assert_eq!(same.delay_ns(1 << 30), n.delay_ns(1 << 30));
        let mut other = TimerNoise::restore(Some(RunSeed(4)), &saved).unwrap();
        let mut again = TimerNoise::restore(None, &saved).unwrap();
        let (o, g): (Vec<u64>, Vec<u64>) = (0..8)
            .map(|_| (other.delay_ns(1 << 30), again.delay_ns(1 << 30)))
            .unzip();
        assert_ne!(o, g, "a re-keyed branch draws other delays");
    }

    #[test]
    fn drifts_are_bounded_and_seeded() {
        assert!((0..100).all(|s| drift_ppm(SchedNoise::Off, RunSeed(s)) == 0));
        for level in [SchedNoise::Light, SchedNoise::Heavy] {
            let bound = level.drift_bound_ppm();
            let drifts: Vec<i32> = (0..400).map(|s| drift_ppm(level, RunSeed(s))).collect();
            assert!(drifts.iter().all(|d| d.abs() <= bound), "{level:?}");
            assert!(bound <= wio_clock::MAX_DRIFT_PPM);
            // Same seed, same drift; the seeds spread over the range, both signs.
            assert_eq!(drifts[7], drift_ppm(level, RunSeed(7)));
            let distinct: std::collections::BTreeSet<i32> = drifts.iter().copied().collect();
            assert!(
                distinct.len() > 100,
                "{level:?}: {} distinct",
                distinct.len()
            );
            assert!(drifts.iter().any(|d| *d > bound / 2));
            assert!(drifts.iter().any(|d| *d < -bound / 2));
            let differ = (0..100u64)
                .filter(|s| drift_ppm(level, RunSeed(*s)) != drift_ppm(level, RunSeed(s + 1000)))
                .count();
            assert!(differ > 90, "{level:?}: only {differ} of 100 seeds differ");
        }
        assert_eq!(SchedNoise::Light.drift_bound_ppm(), 100);
        assert_eq!(SchedNoise::Heavy.drift_bound_ppm(), 1000);
    }
}
