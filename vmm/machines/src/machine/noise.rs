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

    /// (largest gap between stalls in instructions, longest stall in ns) of a running CPU
    /// (see [`Stalls`]); None when off. Light: gaps of up to 10^6 instructions (1 ms at the
    /// nominal rate, 0.5 ms on average), stalls of up to 20 us (10 us on average): a busy
    /// CPU loses about 2 % of its time, and a 4 ms tick's phase against a program wanders
    /// by tens of microseconds per tick. Heavy: gaps of up to 400,000 instructions, stalls
    /// of up to 100 us (a busy CPU loses about 20 % of its time).
    pub fn stall_bounds(self) -> Option<(u64, u64)> {
        match self {
            SchedNoise::Off => None,
            SchedNoise::Light => Some((1_000_000, 20_000)),
            SchedNoise::Heavy => Some((400_000, 100_000)),
        }
    }

    /// The longest stall of a CPU waking from a long idle, in ns (0 when off).
    pub fn wake_bound_ns(self) -> u64 {
        match self {
            SchedNoise::Off => 0,
            SchedNoise::Light => 40_000,
            SchedNoise::Heavy => 200_000,
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

/// Seeded stalls of a running CPU: from time to time it executes nothing for a while, as a
/// real one does behind cache misses, an SMT sibling, an SMI or a host that runs something
/// else (a VM's steal time). Timer latency moves where an interrupt lands by a fraction of
/// the interval the guest asked for; a stall moves how much work the guest gets done
/// between two points of virtual time, so the tick's phase against a program, and where
/// each wake-up lands in another thread's work, wander from branch to branch: that is what
/// reaches a race shorter than one tick. riscv64 only (an x86-64 vCPU stops only at exits).
///
/// A stall comes after a seeded number of retired instructions and lasts a seeded length of
/// virtual time ([`SchedNoise::stall_bounds`]), both drawn from their own stream
/// (`stream_names::SCHED_NOISE_STALL`). Counting instructions, not time, means an idle CPU
/// never stalls (it has no work to delay). A CPU that wakes from an idle of at least
/// [`WAKE_IDLE_NS`] stalls too, for up to [`SchedNoise::wake_bound_ns`] (the exit latency of
/// a deep idle state, tens of microseconds on real CPUs): so the time at which a program
/// wakes from a sleep, and what it reads from the clock then, spreads over that much in
/// every branch, which timer latency alone (a fraction of the interval, at most 10 us)
/// does not. A restore with another seed re-keys the stream
/// and draws the next stall from the branch point, so a branch's stalls are its own from
/// its first instruction.
pub struct Stalls {
    level: SchedNoise,
    stream: Stream,
    /// The machine's instruction count at which the next stall comes (u64::MAX: none).
    next_at: u64,
    /// Virtual ns where the stall under way ends (0 or past: none).
    end_ns: u64,
}

/// [`Stalls`] as a snapshot keeps them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StallsState {
    level: SchedNoise,
    stream: SavedStream,
    next_at: u64,
    end_ns: u64,
}

/// The longest pause a branch starts with (see [`Stalls::branched`]): one tick at 100 Hz.
pub const BRANCH_PAUSE_NS: u64 = 10_000_000;
/// The shortest idle after which a CPU's wake-up stalls (as it leaves a deep idle state).
pub const WAKE_IDLE_NS: u64 = 100_000;

impl Stalls {
    /// Stalls of `level` drawn from `seed`, the first one a gap after instruction
    /// `instructions`.
    pub fn new(level: SchedNoise, seed: RunSeed, instructions: u64) -> Stalls {
        let mut s = Stalls {
            level,
            stream: seed.stream(stream_names::SCHED_NOISE_STALL),
            next_at: u64::MAX,
            end_ns: 0,
        };
        s.draw_next(instructions);
        s
    }

    /// A branch's stalls (a restore with another seed, at instruction count `instructions`
    /// and virtual time `now_ns`): drawn from `seed`, and the branch starts with a pause
    /// of up to [`BRANCH_PAUSE_NS`], as a restored VM resumes some time after it was
    /// frozen. That pause makes the phase of the guest's periodic tick against the work
    /// after the branch point uniform over every tick up to 100 Hz, so a race shorter than
    /// a tick meets the tick anywhere in it (or not at all) depending on the seed.
    pub fn branched(level: SchedNoise, seed: RunSeed, instructions: u64, now_ns: u64) -> Stalls {
        let mut s = Stalls::new(level, seed, instructions);
        if level != SchedNoise::Off {
            s.end_ns = now_ns.saturating_add(s.stream.range_inclusive(0, BRANCH_PAUSE_NS));
        }
        s
    }

    /// None at all (a snapshot from a wio without stalls continues as it ran).
    pub fn none(seed: RunSeed) -> Stalls {
        Stalls {
            level: SchedNoise::Off,
            stream: seed.stream(stream_names::SCHED_NOISE_STALL),
            next_at: u64::MAX,
            end_ns: 0,
        }
    }

    fn draw_next(&mut self, instructions: u64) {
        self.next_at = match self.level.stall_bounds() {
            None => u64::MAX,
            Some((gap, _)) => instructions.saturating_add(self.stream.range_inclusive(1_000, gap)),
        };
    }

    /// How many more instructions the CPU retires before its next stall, at instruction
    /// count `instructions` (u64::MAX: none; 0: it is due).
    #[inline]
    pub fn instructions_left(&self, instructions: u64) -> u64 {
        self.next_at.saturating_sub(instructions)
    }

    /// Where the stall under way ends, if the CPU is stalled at `now_ns`.
    #[inline]
    pub fn stalled_until(&self, now_ns: u64) -> Option<u64> {
        (self.end_ns > now_ns).then_some(self.end_ns)
    }

    /// The CPU woke at `now_ns` from an idle of `idle_ns`: after a long one it stalls (a
    /// seeded exit latency). Returns the stall's length in ns (0: none, no draw).
    pub fn woke(&mut self, now_ns: u64, idle_ns: u64) -> u64 {
        let bound = self.level.wake_bound_ns();
        if bound == 0 || idle_ns < WAKE_IDLE_NS {
            return 0;
        }
        let len = self.stream.range_inclusive(0, bound);
        self.end_ns = self.end_ns.max(now_ns.saturating_add(len));
        len
    }

    /// The CPU ran to its next stall (instruction count `instructions`, virtual time
    /// `now_ns`): the stall starts, and the next one is drawn. Returns its length in ns.
    pub fn begin(&mut self, now_ns: u64, instructions: u64) -> u64 {
        let len = match self.level.stall_bounds() {
            None => 0,
            Some((_, len)) => self.stream.range_inclusive(0, len),
        };
        self.end_ns = now_ns.saturating_add(len);
        self.draw_next(instructions);
        len
    }
}

impl crate::snapshot::persist::Persist for Stalls {
    type State = StallsState;
    type Args<'a> = ();
    type Error = std::convert::Infallible;

    fn save(&self) -> StallsState {
        StallsState {
            level: self.level,
            stream: self.stream.save(),
            next_at: self.next_at,
            end_ns: self.end_ns,
        }
    }

    fn restore((): (), s: &StallsState) -> Result<Stalls, Self::Error> {
        Ok(Stalls {
            level: s.level,
            stream: Stream::resume(&s.stream, None),
            next_at: s.next_at,
            end_ns: s.end_ns,
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

    /// Stalls come within their bounds, from their seed; a re-keyed branch draws other
    /// ones from its branch point, the same seed the same ones; off never stalls.
    #[test]
    fn stalls_are_bounded_seeded_and_resumable() {
        let off = Stalls::new(SchedNoise::Off, RunSeed(1), 0);
        assert_eq!(off.instructions_left(0), u64::MAX);
        assert_eq!(off.stalled_until(0), None);
        // (instruction count, length) of the first 300 stalls of a busy CPU.
        let run = |level, seed| {
            let mut s = Stalls::new(level, RunSeed(seed), 0);
            let (mut at, mut now) = (0u64, 0u64);
            (0..300)
                .map(|_| {
                    let left = s.instructions_left(at);
                    at += left;
                    now += left;
                    assert_eq!(s.instructions_left(at), 0, "due once it ran to it");
                    let len = s.begin(now, at);
                    assert_eq!(s.stalled_until(now), (len > 0).then_some(now + len));
                    now += len;
                    (left, len)
                })
                .collect::<Vec<_>>()
        };
        for level in [SchedNoise::Light, SchedNoise::Heavy] {
            let (gap, longest) = level.stall_bounds().unwrap();
            let a = run(level, 1);
            assert_eq!(a, run(level, 1));
            assert_ne!(a, run(level, 2));
            assert!(a
                .iter()
                .all(|(g, l)| (1_000..=gap).contains(g) && *l <= longest));
            assert!(a.iter().any(|(_, l)| *l > longest / 2), "the range is used");
            let busy: u64 = a.iter().map(|(g, _)| g).sum();
            let stalled: u64 = a.iter().map(|(_, l)| l).sum();
            let share = stalled * 100 / (busy + stalled);
            assert!((1..=30).contains(&share), "{level:?}: {share} % stalled");
        }
        let mut s = Stalls::new(SchedNoise::Light, RunSeed(3), 0);
        let left = s.instructions_left(0);
        s.begin(left, left);
        let saved = s.save();
        let mut same = Stalls::restore((), &saved).unwrap();
        assert_eq!(same.instructions_left(left), s.instructions_left(left));
        assert_eq!(same.begin(9, 9), s.begin(9, 9));
        let other = Stalls::new(SchedNoise::Light, RunSeed(4), left);
        assert_ne!(other.instructions_left(left), same.instructions_left(left));
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
