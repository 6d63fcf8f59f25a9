//! Guest code coverage seen by the engine, with no instrumentation in the guest: edges
//! between control-flow targets of user-mode code, hashed AFL-style into a map of
//! [`MAP_SIZE`] counters, each edge's hit count in buckets (1, 2, ... 8, then powers of
//! two), so a loop that runs one more time is something new.
//!
//! - Where: the run loop notes every pc it dispatches that is not the next instruction of
//!   the one before (a jump or branch target, a trap handler, a return to user mode): the
//!   starts of blocks. Only in user mode (the programs under test; the kernel is noise).
//!   While coverage is on, user-mode blocks run one at a time, compiled or interpreted
//!   (a compiled block does not chain to the next, which would skip the run loop), so
//!   every target comes back to the loop; the kernel's blocks chain as ever. The edges are
//!   the same whether a block ran compiled or interpreted (a unit test compares them), and
//!   the hart computes exactly the same thing either way.
//! - What: a location is the pc itself for code below 2 GiB (where executables linked at a
//!   fixed address live: the same in every process and every branch), and the pc's offset
//!   in its 4 KiB page above (position-independent executables, shared libraries and the
//!   vDSO, which ASLR moves by whole pages: the exact pc would make every process's edges
//!   new); the edge is `hash(location) ^ (hash(previous location) >> 1)`, as AFL does.
//! - Not part of the hart's state: snapshots never hold it; a guided exploration's moments
//!   carry it in memory ([`Coverage`] is `Clone`), so a branch from a moment counts on
//!   from its parent's counts.

/// Bits of an edge's index.
pub const MAP_BITS: u32 = 18;
/// Counters in the map.
pub const MAP_SIZE: usize = 1 << MAP_BITS;
/// Code below this address is taken to be at a fixed address (see the module doc).
pub const FIXED_BELOW: u64 = 1 << 31;
/// Buckets a counter passes through (1..=8, 9-15, 16-31, 32-63, 64-127, 128+).
pub const BUCKETS: u32 = 13;

/// Address spaces whose last location is remembered (by a hash of `satp`).
const SPACES: usize = 64;

/// The coverage map of one run.
#[derive(Clone)]
pub struct Coverage {
    counts: Box<[u8; MAP_SIZE]>,
    /// The previous location's hash (shifted), per address space: a process's edges go
    /// from its own previous location, whatever ran between.
    prev: [u32; SPACES],
    /// Left user mode since the last location (a trap: the next user pc is where the
    /// process resumes, or a signal handler; not an edge, since where a timer interrupt
    /// lands is timing, not code).
    away: bool,
    /// (edge index << 4 | bucket) of each counter that reached a new bucket, not yet taken.
    fresh: Vec<u32>,
}

impl std::fmt::Debug for Coverage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Coverage")
            .field("edges", &self.edges())
            .field("fresh", &self.fresh.len())
            .finish()
    }
}

impl Default for Coverage {
    fn default() -> Coverage {
        Coverage {
            counts: vec![0u8; MAP_SIZE]
                .into_boxed_slice()
                .try_into()
                .expect("MAP_SIZE counters"),
            prev: [0; SPACES],
            away: false,
            fresh: Vec::new(),
        }
    }
}

/// A counter's bucket: its count up to 8, then one per power of two (0: never hit).
pub fn bucket(count: u8) -> u32 {
    match count {
        0..=8 => u32::from(count),
        9..=15 => 9,
        16..=31 => 10,
        32..=63 => 11,
        64..=127 => 12,
        128..=255 => 13,
    }
}

/// A location's hash (see the module doc), [`MAP_BITS`] wide: a multiplicative hash keeps
/// nearby locations apart in the map.
#[inline(always)]
fn location(pc: u64) -> u32 {
    let key = if pc < FIXED_BELOW {
        pc
    } else {
        (pc & 0xfff) | 1 << 63
    };
    (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - MAP_BITS)) as u32
}

impl Coverage {
    /// Notes that the hart runs outside user mode.
    #[inline]
    pub(crate) fn away(&mut self) {
        self.away = true;
    }

    /// Notes a control-flow target at `pc` of user mode, in the address space `satp`.
    #[inline]
    pub(crate) fn hit(&mut self, pc: u64, satp: u64) {
        let cur = location(pc);
        let space = (satp.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58) as usize % SPACES;
        let prev = std::mem::replace(&mut self.prev[space], cur >> 1);
        if std::mem::take(&mut self.away) {
            return;
        }
        let idx = ((cur ^ prev) as usize) & (MAP_SIZE - 1);
        let c = &mut self.counts[idx];
        let before = *c;
        if before == u8::MAX {
            return;
        }
        *c = before + 1;
        let b = bucket(before + 1);
        if b != bucket(before) {
            self.fresh.push((idx as u32) << 4 | b);
        }
    }

    /// The counters that reached a new bucket since the last call, in the order they did
    /// (each as edge index << 4 | bucket).
    pub fn take_fresh(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.fresh)
    }

    /// Edges hit at least once.
    pub fn edges(&self) -> usize {
        self.counts.iter().filter(|c| **c > 0).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_and_fresh_counters() {
        assert_eq!(
            (0..=20u8).map(bucket).collect::<Vec<_>>(),
            vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 9, 9, 9, 9, 10, 10, 10, 10, 10]
        );
        assert_eq!(bucket(255), BUCKETS);
        let mut c = Coverage::default();
        // A loop: the same two targets again and again.
        for _ in 0..10 {
            c.hit(0x1000, 7);
            c.hit(0x1040, 7);
        }
        let fresh = c.take_fresh();
        // Each of the loop's edges passes buckets 1..=9 (the entry edge only bucket 1).
        assert!(fresh.len() >= 18 && fresh.len() <= 3 * 9, "{}", fresh.len());
        assert!(c.take_fresh().is_empty());
        // ASLR moves code by pages: above FIXED_BELOW the same offsets in another page are
        // the same edges; below it, another page is other code.
        let hits = |a: u64, b: u64| {
            let mut d = Coverage::default();
            for _ in 0..10 {
                d.hit(a, 7);
                d.hit(b, 7);
            }
            d.take_fresh()
        };
        assert_eq!(
            hits(0x3f_7f00_1000, 0x3f_7f00_1040),
            hits(0x3f_1234_5000, 0x3f_1234_5040)
        );
        assert_ne!(hits(0x1_1000, 0x1_1040), hits(0x2_1000, 0x2_1040));
        assert_eq!(hits(0x1000, 0x1040), fresh);
        assert!(c.edges() >= 2);
        // Saturating counters stay at the last bucket.
        for _ in 0..1000 {
            c.hit(0x1000, 7);
            c.hit(0x1040, 7);
        }
        let late = c.take_fresh();
        assert!(late.iter().all(|f| f & 0xf <= BUCKETS));
        // Another process between two locations of one process changes none of its edges,
        // and the first location after a trap is no edge.
        let run = |other: bool| {
            let mut d = Coverage::default();
            for _ in 0..5 {
                d.hit(0x1000, 7);
                if other {
                    d.hit(0x5000, 9);
                    d.away();
                    d.hit(0x9000, 9);
                }
                d.hit(0x1040, 7);
            }
            d.take_fresh()
        };
        let (alone, shared) = (run(false), run(true));
        assert!(alone.iter().all(|f| shared.contains(f)));
    }
}
