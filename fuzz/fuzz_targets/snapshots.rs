//! Hostile snapshot files, every input one: the first byte picks a machine snapshot or a
//! world snapshot, raw (header, length and checksum checks first) or as a body in a valid
//! envelope (the harness computes length and checksum, so the fuzzer reaches the
//! metadata, machine state and memory-run decoders behind them).
//!
//! Invariants: no panic; every refusal is an error value (the binary turns it into its
//! documented exit code); bounded memory (run with an RSS limit: a snapshot claiming a
//! huge memory or state must be refused before anything that size is allocated).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

#[path = "common/envelope.rs"]
mod envelope;
use envelope::envelope;

/// Snapshot files decoded over the whole fuzzing run (printed every 2^18).
static DECODED: AtomicU64 = AtomicU64::new(0);

fuzz_target!(|data: &[u8]| {
    let Some((&kind, body)) = data.split_first() else {
        return;
    };
    let n = DECODED.fetch_add(1, Ordering::Relaxed) + 1;
    if n % (1 << 18) == 0 {
        eprintln!("snapshots: {n} snapshot files decoded");
    }
    let path = Path::new("fuzz.snap");
    match kind % 4 {
        0 => {
            let _ = wio::snapshot::Snapshot::decode(path, body);
        }
        1 => {
            let _ = wio::world::snapshot::decode(path, body);
        }
        2 => {
            let f = envelope(wio::snapshot::MAGIC, wio::snapshot::FORMAT_VERSION, body);
            let _ = wio::snapshot::Snapshot::decode(path, &f);
        }
        _ => {
            let f = envelope(
                wio::snapshot::WORLD_MAGIC,
                wio::world::snapshot::FORMAT_VERSION,
                body,
            );
            let _ = wio::world::snapshot::decode(path, &f);
        }
    }
});
