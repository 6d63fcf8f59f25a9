//! Warm branches of a flat exploration: the branch of the range's first seed runs first,
//! alone, and the snapshot learns the code it decoded and built
//! ([`wio_machines::machine::LoadedSnapshot::learn`]); every other branch waits for it and
//! starts with that code instead of decoding, building and compiling again what each
//! branch before it did. Learned instructions are fetched and compared at their first use
//! and learned blocks fetched again when first entered, so every branch sees its own
//! memory, as a cold one does.
//!
//! Deterministic whatever the scheduling: which branch teaches is fixed by the range (its
//! first seed, whatever the shard: a shard without that seed runs it first to learn and
//! reports nothing of it), and no other branch starts before it ended. WIO_COLD_BRANCHES=1
//! turns it off (every branch starts from the snapshot's caches alone). riscv64 machines
//! learn, alone or as the nodes of a world (each node's snapshot from its own machine).

use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// The first branch's lesson, and the gate the other branches wait at.
pub(super) struct Warmup {
    /// The seed whose branch teaches (None: no learning).
    pub(super) seed: Option<u64>,
    /// Whether the teaching branch has ended.
    done: Mutex<bool>,
    ended: Condvar,
}

impl Warmup {
    /// Learning from `seed`'s branch (the range's first), unless `cold`.
    pub(super) fn new(seed: u64, cold: bool) -> Warmup {
        Warmup {
            seed: (!cold).then_some(seed),
            done: Mutex::new(cold),
            ended: Condvar::new(),
        }
    }

    /// Whether WIO_COLD_BRANCHES asks for branches without learning.
    pub(super) fn cold_asked() -> bool {
        std::env::var_os("WIO_COLD_BRANCHES").is_some_and(|v| !v.is_empty() && v != "0")
    }

    /// Whether `seed`'s branch is the one that teaches.
    pub(super) fn teaches(&self, seed: u64) -> bool {
        self.seed == Some(seed)
    }

    /// The teaching branch ended (or will never run): the others may start.
    pub(super) fn finish(&self) {
        if let Ok(mut d) = self.done.lock() {
            *d = true;
        }
        self.ended.notify_all();
    }

    /// Waits until the teaching branch has ended, or `stopping` says the exploration stops.
    pub(super) fn wait(&self, stopping: &dyn Fn() -> bool) {
        let Ok(mut d) = self.done.lock() else {
            return;
        };
        while !*d && !stopping() {
            match self.ended.wait_timeout(d, Duration::from_millis(50)) {
                Ok((g, _)) => d = g,
                Err(_) => return,
            }
        }
    }
}
