//! Disk faults the machine injects into virtio-blk ([`DiskFault`]), in force between
//! [`Block::start_fault`](super::Block::start_fault) and
//! [`Block::end_fault`](super::Block::end_fault), and what a power cut does to the
//! disk's volatile write cache ([`Unflushed`]).
//!
//! Draws come from the device's own streams, one per kind that needs them: bit-rot from
//! `name/bit-rot` (drawn only while a bit-rot fault is in force, once per sector read),
//! torn writes from `name/torn` (drawn only at a power cut that tears). A run without
//! faults draws exactly what it drew before faults existed.

use super::disk::{Disk, CHUNK, SECTOR};
use std::collections::BTreeMap;
use wio_scheduler::{stream_names, RunSeed, SavedStream, Stream};

/// Which requests a disk fault hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DiskOp {
    /// Reads.
    Read,
    /// Writes and flushes.
    Write,
    /// Reads, writes and flushes.
    Any,
}

/// virtio-blk request types the faults look at.
pub(crate) const T_IN: u32 = 0;
pub(crate) const T_OUT: u32 = 1;
pub(crate) const T_FLUSH: u32 = 4;

impl DiskOp {
    /// Whether requests of virtio-blk type `kind` are hit (GET_ID and unknown types never are).
    pub(crate) fn hits(self, kind: u32) -> bool {
        match kind {
            T_IN => matches!(self, DiskOp::Read | DiskOp::Any),
            T_OUT | T_FLUSH => matches!(self, DiskOp::Write | DiskOp::Any),
            _ => false,
        }
    }
}

/// A disk fault in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum DiskFault {
    /// Matching requests fail with VIRTIO_BLK_S_IOERR and change nothing (EIO in the guest).
    Error(DiskOp),
    /// Only the `nth` matching request (1 = the first) performed while the fault is in
    /// force fails, once.
    ErrorNth {
        /// Which requests are counted.
        op: DiskOp,
        /// Which one of them fails.
        nth: u64,
    },
    /// Every request takes `extra_ns` longer (a latency spike).
    Latency {
        /// Virtual ns added to every request's latency.
        extra_ns: u64,
    },
    /// Each sector read has a probability of ppm / 10^6 to have rotted: one bit of it,
    /// drawn, is flipped on the disk (durably: every later read sees it too), before the
    /// read returns it.
    BitRot {
        /// Sectors rotted, per million read.
        ppm: u64,
    },
}

/// What a power cut does to the writes the disk holds in its volatile cache (written,
/// never flushed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unflushed {
    /// All are lost (a drive cache without power-loss protection).
    #[default]
    Lost,
    /// Each cached 4 KiB chunk keeps a drawn number of its leading sectors (0 to 8): a
    /// multi-sector write reaches the platter in part (a torn write).
    Torn,
    /// All reach the disk (a drive with power-loss protection).
    Kept,
}

/// Denominator of the per-million rates.
const PPM: u64 = 1_000_000;

/// The faults in force on one block device, how many matching requests each has seen,
/// and the streams their draws come from.
pub(crate) struct Faults {
    in_force: BTreeMap<u64, (DiskFault, u64)>,
    rot: Stream,
    torn: Stream,
}

/// What a snapshot keeps of the faults.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct FaultsState {
    in_force: Vec<(u64, DiskFault, u64)>,
    rot: SavedStream,
    torn: SavedStream,
}

impl Faults {
    /// No fault in force; draws come from `seed`'s streams `name/bit-rot` and `name/torn`.
    pub(crate) fn new(seed: RunSeed, name: &str) -> Faults {
        Faults {
            in_force: BTreeMap::new(),
            rot: seed.stream(&stream_names::sub(name, stream_names::BIT_ROT)),
            torn: seed.stream(&stream_names::sub(name, stream_names::TORN)),
        }
    }

    pub(crate) fn start(&mut self, id: u64, fault: DiskFault) {
        self.in_force.insert(id, (fault, 0));
    }

    pub(crate) fn end(&mut self, id: u64) {
        self.in_force.remove(&id);
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, DiskFault)> + '_ {
        self.in_force.iter().map(|(id, (f, _))| (*id, *f))
    }

    /// Whether a request of type `kind`, about to be performed, fails. Counts it for every
    /// n-th-request fault it matches (so call once per request).
    pub(crate) fn fails(&mut self, kind: u32) -> bool {
        let mut fail = false;
        for (fault, seen) in self.in_force.values_mut() {
            match *fault {
                DiskFault::Error(op) if op.hits(kind) => fail = true,
                DiskFault::ErrorNth { op, nth } if op.hits(kind) => {
                    *seen += 1;
                    fail |= *seen == nth;
                }
                _ => {}
            }
        }
        fail
    }

    /// The latency the faults in force add to a request.
    pub(crate) fn latency(&self) -> u64 {
        self.in_force.values().fold(0u64, |sum, (f, _)| match f {
            DiskFault::Latency { extra_ns } => sum.saturating_add(*extra_ns),
            _ => sum,
        })
    }

    /// A read of `len` bytes at `offset` is about to be served: for each sector it covers
    /// and each bit-rot fault in force, one draw; a sector that rots gets one drawn bit
    /// flipped on `disk`. Returns how many sectors rotted.
    pub(crate) fn rot(&mut self, disk: &mut Disk, offset: u64, len: u64) -> u64 {
        let rates: Vec<u64> = self
            .in_force
            .values()
            .filter_map(|(f, _)| match f {
                DiskFault::BitRot { ppm } => Some(*ppm),
                _ => None,
            })
            .collect();
        if rates.is_empty() || len == 0 {
            return 0;
        }
        let first = offset / SECTOR;
        let last = (offset + len - 1) / SECTOR;
        let mut rotted = 0;
        for sector in first..=last {
            for ppm in &rates {
                if self.rot.below(PPM) < *ppm {
                    let bit = self.rot.below(SECTOR * 8);
                    if disk
                        .flip_bit(sector * SECTOR + bit / 8, (bit % 8) as u8)
                        .is_ok()
                    {
                        rotted += 1;
                    }
                }
            }
        }
        rotted
    }

    /// A power cut: the disk's volatile cache goes as `unflushed` says (torn chunks keep a
    /// number of leading sectors drawn from the torn stream, chunk by chunk in index order).
    pub(crate) fn power_cut(&mut self, disk: &mut Disk, unflushed: Unflushed) {
        match unflushed {
            Unflushed::Lost => disk.crash(),
            Unflushed::Kept => disk.flush(),
            Unflushed::Torn => {
                let sectors = CHUNK / SECTOR;
                let torn = &mut self.torn;
                disk.crash_torn(|_| torn.below(sectors + 1));
            }
        }
    }

    pub(crate) fn save(&self) -> FaultsState {
        FaultsState {
            in_force: self
                .in_force
                .iter()
                .map(|(id, (f, seen))| (*id, *f, *seen))
                .collect(),
            rot: self.rot.save(),
            torn: self.torn.save(),
        }
    }

    pub(crate) fn load(&mut self, s: FaultsState, reseed: Option<RunSeed>) {
        self.in_force = s
            .in_force
            .into_iter()
            .map(|(id, f, seen)| (id, (f, seen)))
            .collect();
        self.rot = Stream::resume(&s.rot, reseed);
        self.torn = Stream::resume(&s.torn, reseed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disk(bytes: &[u8], tag: &str) -> Disk {
        let dir = std::env::temp_dir().join(format!("wio-blk-faults-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("base.img");
        std::fs::write(&p, bytes).unwrap();
        Disk::open(&p).unwrap()
    }

    #[test]
    fn the_nth_matching_request_fails_once() {
        let mut f = Faults::new(RunSeed(1), "blk");
        f.start(
            7,
            DiskFault::ErrorNth {
                op: DiskOp::Write,
                nth: 3,
            },
        );
        let got: Vec<bool> = [T_IN, T_OUT, T_OUT, T_IN, T_FLUSH, T_OUT, T_OUT]
            .iter()
            .map(|k| f.fails(*k))
            .collect();
        // Writes and flushes count: the third of them (the flush) fails, nothing else.
        assert_eq!(got, [false, false, false, false, true, false, false]);
        f.start(8, DiskFault::Error(DiskOp::Read));
        assert!(f.fails(T_IN));
        f.end(8);
        assert!(!f.fails(T_IN));
    }

    #[test]
    fn bit_rot_flips_one_bit_per_rotted_sector_durably_and_draws_only_in_force() {
        let base = vec![0u8; 4 * 4096];
        let mut d = disk(&base, "rot");
        let mut f = Faults::new(RunSeed(3), "blk");
        assert_eq!(f.rot(&mut d, 0, 4096), 0, "no fault, no rot");
        f.start(1, DiskFault::BitRot { ppm: 1_000_000 });
        assert_eq!(f.rot(&mut d, 512, 1024), 2, "every sector read rots");
        let mut buf = vec![0u8; 4 * 4096];
        d.read(0, &mut buf).unwrap();
        let ones: Vec<u32> = buf
            .chunks(SECTOR as usize)
            .map(|s| s.iter().map(|b| b.count_ones()).sum())
            .collect();
        assert_eq!(&ones[..4], &[0, 1, 1, 0], "one bit in each sector read");
        assert_eq!(d.durable_chunks(), 1, "the rot is on the disk");
        d.crash();
        d.read(0, &mut buf).unwrap();
        assert_eq!(buf.iter().map(|b| b.count_ones()).sum::<u32>(), 2);
        // Same seed, same rot.
        let mut d2 = disk(&base, "rot2");
        let mut f2 = Faults::new(RunSeed(3), "blk");
        f2.start(1, DiskFault::BitRot { ppm: 1_000_000 });
        f2.rot(&mut d2, 512, 1024);
        let mut buf2 = vec![0u8; 4 * 4096];
        d2.read(0, &mut buf2).unwrap();
        assert_eq!(buf, buf2);
        f.end(1);
        assert_eq!(f.rot(&mut d, 0, 4096), 0);
    }

    #[test]
    fn a_power_cut_loses_keeps_or_tears_the_cache() {
        let base = vec![0u8; 8 * 4096];
        for (how, tag) in [(Unflushed::Lost, "lost"), (Unflushed::Kept, "kept")] {
            let mut d = disk(&base, tag);
            d.write(0, &[1u8; 8192]).unwrap();
            Faults::new(RunSeed(1), "blk").power_cut(&mut d, how);
            let mut buf = vec![0u8; 8192];
            d.read(0, &mut buf).unwrap();
            let want = if how == Unflushed::Kept { 1 } else { 0 };
            assert!(buf.iter().all(|b| *b == want), "{how:?}");
            assert_eq!(d.volatile_chunks(), 0);
        }
        // Torn: each cached chunk keeps a drawn prefix of whole sectors; over many chunks
        // some keep none, some all, some part; the same seed tears the same way.
        let torn = |seed: u64| {
            let mut d = disk(&base, &format!("torn{seed}"));
            d.write(0, &[1u8; 8 * 4096]).unwrap();
            Faults::new(RunSeed(seed), "blk").power_cut(&mut d, Unflushed::Torn);
            let mut buf = vec![0u8; 8 * 4096];
            d.read(0, &mut buf).unwrap();
            buf.chunks(CHUNK as usize)
                .map(|c| {
                    let kept = c.iter().take_while(|b| **b == 1).count();
                    assert!(
                        c[kept..].iter().all(|b| *b == 0),
                        "a prefix, then the old data"
                    );
                    assert_eq!(kept % SECTOR as usize, 0, "whole sectors");
                    kept / SECTOR as usize
                })
                .collect::<Vec<_>>()
        };
        let a = torn(5);
        assert_eq!(a, torn(5));
        assert_ne!(a, torn(6));
        assert!(a.iter().any(|k| (1..8).contains(k)), "{a:?}");
    }
}
