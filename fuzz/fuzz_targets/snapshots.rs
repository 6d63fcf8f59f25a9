//! Hostile snapshot files, every input one: the first byte picks a machine snapshot or a
//! world snapshot, raw (header, length and checksum checks first) or as sections in a valid
//! container (the harness computes lengths and checksums, so the fuzzer reaches the
//! metadata, world-state and memory-run decoders behind them).
//!
//! Invariants: no panic; every refusal is an error value (the binary turns it into its
//! documented exit code); bounded memory (run with an RSS limit: a snapshot claiming a
//! huge memory or state must be refused before anything that size is allocated).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "common/snapshot.rs"]
mod snapshot;

fuzz_target!(|data: &[u8]| {
    if let Some((&mode, body)) = data.split_first() {
        snapshot::decode("snapshots", mode, body);
    }
});
