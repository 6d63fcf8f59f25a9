//! Hostile files: the fuzzer's bytes as each kind of file wio reads from another machine
//! or a user (the first byte picks which): machine snapshots, world snapshots, traces
//! (verify-trace), exploration reports, scenario files, fault plans, fault profiles (then
//! drawn), world fault plans; and snapshot bodies inside a valid envelope (the harness
//! computes the length and checksum, so the fuzzer reaches the decoders behind them).
//!
//! Invariants: no panic; every refusal is an error value (the binary turns it into its
//! documented exit code); bounded memory (run with an RSS limit: a profile or plan that
//! asks for millions of faults must be refused, not drawn).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "common/envelope.rs"]
mod envelope;
use envelope::envelope;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use wio::faults::plan::{FaultPlan, Targets};
use wio::faults::profile::Profile;

/// Snapshot files (machine and world, raw and in a valid envelope) decoded over the
/// whole fuzzing run (printed every 2^18).
static SNAPSHOTS: AtomicU64 = AtomicU64::new(0);

fuzz_target!(|data: &[u8]| {
    let Some((&kind, body)) = data.split_first() else {
        return;
    };
    if matches!(kind % 10, 0 | 1 | 8 | 9) {
        let n = SNAPSHOTS.fetch_add(1, Ordering::Relaxed) + 1;
        if n % (1 << 18) == 0 {
            eprintln!("files: {n} snapshot files decoded");
        }
    }
    let path = Path::new("fuzz.input");
    let text = std::str::from_utf8(body).ok();
    match kind % 10 {
        0 => {
            let _ = wio::snapshot::Snapshot::decode(path, body);
        }
        1 => {
            let _ = wio::world::snapshot::decode(path, body);
        }
        2 => {
            if let Some(t) = text {
                let _ = wio::trace::verify(t);
            }
        }
        3 => {
            if let Some(Ok(mut r)) = text.map(serde_json::from_str::<wio::explore::Report>) {
                r.judge_promises();
            }
        }
        4 => {
            if let Some(t) = text {
                let _ = wio::world::scenario::Scenario::parse_in(t, Path::new("/nonexistent"));
            }
        }
        5 => {
            if let Some(Ok(mut plan)) = text.map(serde_json::from_str::<FaultPlan>) {
                if plan.check().is_ok() {
                    plan.sort();
                    let _ = plan.to_json();
                }
            }
        }
        6 => {
            if let Some(Ok(p)) = text.map(toml::from_str::<Profile>) {
                if p.check().is_ok() {
                    let has = Targets {
                        disk: true,
                        node: true,
                    };
                    let _ = p.draw(wio_scheduler::RunSeed(1), has);
                }
            }
        }
        7 => {
            if let Some(t) = text {
                let _ = serde_json::from_str::<wio::world::faults::WorldPlan>(t);
            }
        }
        8 => {
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
