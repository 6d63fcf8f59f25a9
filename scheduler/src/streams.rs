//! Named random streams split from the run seed.
//!
//! Every random decision in a run (device latencies, fault injection,
//! scheduling jitter, ...) draws from a *named* stream. Each stream's ChaCha20
//! key is derived from the run seed and the stream's name alone:
//!
//! ```text
//! key = SHA-256(b"wio-stream-v1\0" || seed.to_le_bytes() || name.as_bytes())
//! ```
//!
//! so adding a new stream, or drawing more or fewer values from one, never
//! changes the values any other stream produces. The seed is fixed-length and
//! the name comes last, so distinct `(seed, name)` pairs hash distinct inputs.
//!
//! The sampling algorithms below are part of the determinism contract:
//! changing any of them changes guest-visible values for existing seeds.

use std::collections::BTreeMap;

use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};
use sha2::{Digest, Sha256};

/// Domain separator for stream key derivation; bump the version if the
/// derivation ever changes so old and new keys cannot collide.
const STREAM_KEY_DOMAIN: &[u8] = b"wio-stream-v1\0";

/// The 64-bit seed that every guest-visible value of a run derives from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct RunSeed(pub u64);

impl RunSeed {
    /// The stream called `name` for this seed, at its start.
    ///
    /// Calling this twice with the same name yields two independent copies
    /// that produce identical sequences.
    pub fn stream(&self, name: &str) -> Stream {
        Stream {
            seed: *self,
            name: name.to_owned(),
            rng: ChaCha20Rng::from_seed(self.stream_key(name)),
        }
    }

    /// The 32-byte ChaCha20 key for stream `name` (see the module docs).
    fn stream_key(&self, name: &str) -> [u8; 32] {
        let mut hasher = Sha256::new();
        hasher.update(STREAM_KEY_DOMAIN);
        hasher.update(self.0.to_le_bytes());
        hasher.update(name.as_bytes());
        hasher.finalize().into()
    }
}

/// How far a [`Stream`] has advanced, in 32-bit ChaCha words.
///
/// Saved in snapshots so a stream can be recreated with [`Stream::restore`]
/// and continue exactly where it left off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamPosition(pub u128);

/// A stream as a snapshot records it (see [`Stream::save`] and [`Stream::resume`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SavedStream {
    /// The seed it was keyed from.
    pub seed: u64,
    /// Its name.
    pub name: String,
    /// Its position in 32-bit words.
    pub position: u128,
}

/// One named deterministic random stream (ChaCha20) derived from a [`RunSeed`].
#[derive(Debug, Clone)]
pub struct Stream {
    /// The seed the key was derived from (kept for snapshots).
    seed: RunSeed,
    /// The name the key was derived from.
    name: String,
    /// The generator; its key is never exposed.
    rng: ChaCha20Rng,
}

impl Stream {
    /// Recreates stream `name` of `seed` at a position saved earlier with
    /// [`Stream::position`]; it then continues with identical values.
    pub fn restore(seed: RunSeed, name: &str, pos: StreamPosition) -> Stream {
        let mut stream = seed.stream(name);
        stream.rng.set_word_pos(pos.0);
        stream
    }

    /// What a snapshot keeps of this stream: seed, name and position.
    pub fn save(&self) -> SavedStream {
        SavedStream {
            seed: self.seed.0,
            name: self.name.clone(),
            position: self.rng.get_word_pos(),
        }
    }

    /// Recreates a saved stream. With `reseed` naming another seed than the saved one, the
    /// stream is re-keyed instead: the same name under the new seed, from its start, so a
    /// branch restored with a new seed draws a different future (and the past stays shared).
    pub fn resume(saved: &SavedStream, reseed: Option<RunSeed>) -> Stream {
        match reseed {
            Some(seed) if seed.0 != saved.seed => seed.stream(&saved.name),
            _ => Stream::restore(
                RunSeed(saved.seed),
                &saved.name,
                StreamPosition(saved.position),
            ),
        }
    }

    /// The stream's name, as given when it was created.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The current position, for snapshots (see [`Stream::restore`]).
    pub fn position(&self) -> StreamPosition {
        StreamPosition(self.rng.get_word_pos())
    }

    /// The next uniformly random `u64` (consumes two words).
    pub fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// The next uniformly random `u32` (consumes one word).
    pub fn next_u32(&mut self) -> u32 {
        self.rng.next_u32()
    }

    /// Fills `dest` with random bytes. Consumes whole words; the unused bytes
    /// of a final partial word are discarded.
    pub fn fill_bytes(&mut self, dest: &mut [u8]) {
        self.rng.fill_bytes(dest);
    }

    /// A uniform value in `[0, n)` without modulo bias.
    ///
    /// Algorithm (fixed for determinism): draw `x = next_u64()` until
    /// `x >= 2^64 mod n`, then return `x % n`. The accepted range has a size
    /// that is a multiple of `n`, so every result is equally likely.
    ///
    /// # Panics
    ///
    /// Panics if `n` is 0 (the range would be empty).
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "Stream::below called with n == 0");
        // 2^64 mod n, computed without 128-bit arithmetic.
        let threshold = n.wrapping_neg() % n;
        loop {
            let x = self.next_u64();
            if x >= threshold {
                return x % n;
            }
        }
    }

    /// A uniform value in `[lo, hi]`.
    ///
    /// # Panics
    ///
    /// Panics if `lo > hi`.
    pub fn range_inclusive(&mut self, lo: u64, hi: u64) -> u64 {
        assert!(lo <= hi, "Stream::range_inclusive called with lo > hi");
        match (hi - lo).checked_add(1) {
            Some(span) => lo + self.below(span),
            // The full u64 range: every value is valid.
            None => self.next_u64(),
        }
    }

    /// True with probability `numerator / denominator` (always if
    /// `numerator >= denominator`).
    ///
    /// It always draws exactly one [`Stream::below`]`(denominator)`, whatever
    /// the numerator, so tuning a probability does not shift how much of the
    /// stream later draws see.
    ///
    /// # Panics
    ///
    /// Panics if `denominator` is 0.
    pub fn chance(&mut self, numerator: u64, denominator: u64) -> bool {
        assert!(
            denominator > 0,
            "Stream::chance called with denominator == 0"
        );
        self.below(denominator) < numerator
    }

    /// A uniform `f64` in `[0, 1)` built from the top 53 bits of one `u64`,
    /// so every value is an exact multiple of `2^-53`.
    pub fn unit_f64(&mut self) -> f64 {
        const SCALE: f64 = 1.0 / (1u64 << 53) as f64;
        (self.next_u64() >> 11) as f64 * SCALE
    }

    /// An exponentially distributed duration with mean `mean_ns`, rounded
    /// down to whole ns and clamped to `1000 * mean_ns`.
    ///
    /// Uses the inverse CDF `-mean * ln(1 - u)` with `u` the top 53 bits of one `u64`,
    /// so it consumes exactly one `u64`. The logarithm is computed in integers
    /// ([`neg_ln_q32`]), never by the host's math library, so every host draws the same
    /// durations. The clamp bounds the (astronomically unlikely) tail so a single draw
    /// cannot stall a run.
    pub fn exponential_ns(&mut self, mean_ns: u64) -> u64 {
        // 1 - u = m / 2^53 with m in [1, 2^53].
        let m = (1u64 << 53) - (self.next_u64() >> 11);
        let max_ns = mean_ns.saturating_mul(1000);
        let sample = (u128::from(mean_ns) * u128::from(neg_ln_q32(m))) >> 32;
        u64::try_from(sample).unwrap_or(u64::MAX).min(max_ns)
    }
}

/// ln(2) in fixed point with 64 fractional bits.
const LN2_Q64: u128 = 0xB172_17F7_D1CF_79AB;

/// `-ln(m / 2^53)` for `1 <= m <= 2^53`, in fixed point with 32 fractional bits, computed
/// with integer arithmetic only (bit-identical on every host): `log2(m)` by its leading
/// bit and 32 steps of squaring the mantissa, then times ln(2).
///
/// # Panics
/// If `m` is 0 or above 2^53 (callers form `m` so it never is).
pub fn neg_ln_q32(m: u64) -> u64 {
    assert!(m > 0 && m <= 1 << 53, "neg_ln_q32 takes 1..=2^53");
    let e = u64::from(63 - m.leading_zeros());
    // The mantissa m / 2^e in [1, 2), with 62 fractional bits.
    let mut y = u128::from(m) << (62 - e);
    let mut frac = 0u64;
    for bit in (0..32).rev() {
        y = (y * y) >> 62;
        if y >= 2u128 << 62 {
            y >>= 1;
            frac |= 1 << bit;
        }
    }
    let log2_m = (e << 32) | frac;
    let neg_log2 = (53u64 << 32) - log2_m;
    ((u128::from(neg_log2) * LN2_Q64) >> 64) as u64
}

/// The registry of all named streams of a run, created lazily by name.
///
/// Kept in a `BTreeMap` so that listing positions for a snapshot is in name
/// order, independent of the order streams were first used.
#[derive(Debug, Clone)]
pub struct Streams {
    /// The run seed every stream is derived from.
    seed: RunSeed,
    /// Streams created so far, by name.
    streams: BTreeMap<String, Stream>,
}

impl Streams {
    /// An empty registry for `seed`; streams are created on first use.
    pub fn new(seed: RunSeed) -> Self {
        Self {
            seed,
            streams: BTreeMap::new(),
        }
    }

    /// Recreates a registry from a snapshot's [`Streams::positions`] list.
    pub fn restore(seed: RunSeed, positions: &[(String, StreamPosition)]) -> Self {
        let streams = positions
            .iter()
            .map(|(name, pos)| (name.clone(), Stream::restore(seed, name, *pos)))
            .collect();
        Self { seed, streams }
    }

    /// The stream called `name`, created at its start on first use.
    pub fn get(&mut self, name: &str) -> &mut Stream {
        let seed = self.seed;
        self.streams
            .entry(name.to_owned())
            .or_insert_with(|| seed.stream(name))
    }

    /// The run seed this registry derives streams from.
    pub fn seed(&self) -> RunSeed {
        self.seed
    }

    /// The position of every stream used so far, in name order, for snapshots.
    pub fn positions(&self) -> Vec<(String, StreamPosition)> {
        self.streams
            .iter()
            .map(|(name, stream)| (name.clone(), stream.position()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take_u64(stream: &mut Stream, n: usize) -> Vec<u64> {
        (0..n).map(|_| stream.next_u64()).collect()
    }

    #[test]
    fn same_seed_and_name_same_sequence() {
        let mut a = RunSeed(42).stream("disk");
        let mut b = RunSeed(42).stream("disk");
        assert_eq!(take_u64(&mut a, 1000), take_u64(&mut b, 1000));
        assert_eq!(a.name(), "disk");
    }

    /// Pins the key derivation and ChaCha20 output: if this value changes,
    /// every existing seed replays differently, which must be deliberate
    /// (bump the `wio-stream-v1` domain tag when doing so).
    #[test]
    fn regression_first_u64_of_seed0_test() {
        assert_eq!(RunSeed(0).stream("test").next_u64(), PINNED_SEED0_TEST);
    }
    /// Computed once from this implementation and cross-checked against an
    /// independent SHA-256 + ChaCha20 (RFC 7539 block, nonce 0, counter 0)
    /// implementation: the first two output words, little-endian.
    const PINNED_SEED0_TEST: u64 = 6_016_507_714_670_798_048;

    #[test]
    fn different_seeds_differ() {
        let a = take_u64(&mut RunSeed(1).stream("x"), 16);
        let b = take_u64(&mut RunSeed(2).stream("x"), 16);
        assert_ne!(a, b);
    }

    #[test]
    fn different_names_differ() {
        let a = take_u64(&mut RunSeed(1).stream("x"), 16);
        let b = take_u64(&mut RunSeed(1).stream("y"), 16);
        assert_ne!(a, b);
    }

    #[test]
    fn streams_are_independent() {
        let alone = {
            let mut streams = Streams::new(RunSeed(9));
            take_u64(streams.get("b"), 100)
        };
        let mut streams = Streams::new(RunSeed(9));
        let mut interleaved = Vec::new();
        for i in 0..100 {
            for _ in 0..(i % 4) {
                streams.get("a").next_u64();
            }
            streams.get("a").fill_bytes(&mut [0u8; 7]);
            interleaved.push(streams.get("b").next_u64());
        }
        assert_eq!(alone, interleaved);
    }

    #[test]
    fn below_in_range_and_covers_small_range() {
        let mut s = RunSeed(3).stream("below");
        for n in [1u64, 2, 3, 7, 10] {
            let mut seen = vec![false; n as usize];
            for _ in 0..1000 {
                let v = s.below(n);
                assert!(v < n);
                seen[v as usize] = true;
            }
            assert!(seen.iter().all(|&b| b), "n = {n}: {seen:?}");
        }
        for n in [u64::MAX, (1 << 63) + 1, 1 << 40] {
            for _ in 0..100 {
                assert!(s.below(n) < n);
            }
        }
    }

    #[test]
    #[should_panic(expected = "n == 0")]
    fn below_zero_panics() {
        RunSeed(0).stream("x").below(0);
    }

    #[test]
    fn range_inclusive_bounds() {
        let mut s = RunSeed(4).stream("range");
        let mut seen = [false; 3];
        for _ in 0..300 {
            let v = s.range_inclusive(10, 12);
            assert!((10..=12).contains(&v));
            seen[(v - 10) as usize] = true;
        }
        assert_eq!(seen, [true; 3]);
        assert_eq!(s.range_inclusive(5, 5), 5);
        s.range_inclusive(0, u64::MAX);
        assert!(s.range_inclusive(u64::MAX - 1, u64::MAX) >= u64::MAX - 1);
    }

    #[test]
    fn chance_extremes() {
        let mut s = RunSeed(5).stream("chance");
        for n in [1u64, 2, 10, 1_000_000] {
            for _ in 0..200 {
                assert!(!s.chance(0, n));
                assert!(s.chance(n, n));
                assert!(s.chance(n + 1, n));
            }
        }
    }

    #[test]
    fn chance_is_roughly_fair() {
        let mut s = RunSeed(6).stream("fair");
        let hits = (0..10_000).filter(|_| s.chance(1, 4)).count();
        assert!((2_200..2_800).contains(&hits), "{hits}");
    }

    #[test]
    fn unit_f64_in_range() {
        let mut s = RunSeed(7).stream("unit");
        for _ in 0..10_000 {
            let u = s.unit_f64();
            assert!((0.0..1.0).contains(&u));
        }
    }

    #[test]
    fn integer_logarithm_matches_the_real_one() {
        assert_eq!(neg_ln_q32(1 << 53), 0);
        for m in [1u64, 2, 3, 1000, 123_456_789, (1 << 52) + 17, (1 << 53) - 1] {
            let want = -((m as f64) / (1u64 << 53) as f64).ln();
            let got = neg_ln_q32(m) as f64 / (1u64 << 32) as f64;
            assert!((got - want).abs() < 1e-8, "m={m}: {got} vs {want}");
        }
        // Pinned: these values are part of every run's device timing.
        assert_eq!(neg_ln_q32(1), 157_783_357_006);
        assert_eq!(neg_ln_q32(1 << 52), 2_977_044_471);
    }

    #[test]
    fn exponential_clamped_and_mean_plausible() {
        let mut s = RunSeed(8).stream("exp");
        assert_eq!(s.exponential_ns(0), 0);
        let mean = 1_000u64;
        let n = 20_000u64;
        let mut total = 0u64;
        for _ in 0..n {
            let v = s.exponential_ns(mean);
            assert!(v <= 1000 * mean);
            total += v;
        }
        let avg = total / n;
        assert!((900..1100).contains(&avg), "{avg}");
        // Huge means saturate instead of overflowing or panicking.
        let _ = s.exponential_ns(u64::MAX);
    }

    #[test]
    fn restore_continues_identically() {
        let mut s = RunSeed(10).stream("snap");
        s.next_u32();
        s.fill_bytes(&mut [0u8; 13]);
        take_u64(&mut s, 37);
        let pos = s.position();
        let mut restored = Stream::restore(RunSeed(10), "snap", pos);
        assert_eq!(restored.position(), pos);
        assert_eq!(restored.name(), "snap");
        assert_eq!(take_u64(&mut s, 500), take_u64(&mut restored, 500));
        assert_eq!(s.next_u32(), restored.next_u32());
    }

    #[test]
    fn registry_positions_and_restore() {
        let mut streams = Streams::new(RunSeed(11));
        assert_eq!(streams.seed(), RunSeed(11));
        streams.get("zeta").next_u64();
        streams.get("alpha").next_u32();
        let positions = streams.positions();
        let names: Vec<&str> = positions.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["alpha", "zeta"]);
        assert_eq!(positions[0].1, StreamPosition(1));
        assert_eq!(positions[1].1, StreamPosition(2));

        let mut restored = Streams::restore(RunSeed(11), &positions);
        assert_eq!(restored.positions(), positions);
        for name in ["alpha", "zeta", "new"] {
            assert_eq!(
                take_u64(streams.get(name), 50),
                take_u64(restored.get(name), 50)
            );
        }
    }

    #[test]
    fn saved_stream_resumes_or_rekeys() {
        let mut a = RunSeed(7).stream("net/link");
        a.next_u64();
        let saved = a.save();
        assert_eq!(saved.seed, 7);
        let mut same = Stream::resume(&saved, None);
        let mut same_seed = Stream::resume(&saved, Some(RunSeed(7)));
        let expected = a.next_u64();
        assert_eq!(same.next_u64(), expected);
        assert_eq!(same_seed.next_u64(), expected);
        let mut other = Stream::resume(&saved, Some(RunSeed(8)));
        assert_eq!(other.next_u64(), RunSeed(8).stream("net/link").next_u64());
        assert_ne!(
            Stream::resume(&saved, Some(RunSeed(8))).next_u64(),
            expected
        );
    }
}
