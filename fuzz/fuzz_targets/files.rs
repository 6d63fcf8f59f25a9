//! Hostile files: the fuzzer's bytes as each kind of file wio reads from another machine
//! or a user (the first byte picks which): machine snapshots, world snapshots, traces
//! (verify-trace), exploration reports, scenario files, fault plans, fault profiles (then
//! drawn), world fault plans; and snapshot sections inside a valid container (the harness
//! computes the length and checksum, so the fuzzer reaches the decoders behind them).
//!
//! Invariants: no panic; every refusal is an error value (the binary turns it into its
//! documented exit code); bounded memory (run with an RSS limit: a profile or plan that
//! asks for millions of faults must be refused, not drawn).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "common/snapshot.rs"]
mod snapshot;
use std::path::Path;
use wio_machines::faults::plan::{FaultPlan, Targets};
use wio_machines::faults::profile::Profile;

fuzz_target!(|data: &[u8]| {
    let Some((&kind, body)) = data.split_first() else {
        return;
    };
    let text = std::str::from_utf8(body).ok();
    match kind % 10 {
        // Raw machine and world snapshots (and, 8 and 9, their sections in a container).
        0 | 1 => snapshot::decode("files", kind % 10, body),
        8 | 9 => snapshot::decode("files", kind % 10 - 6, body),
        2 => {
            if let Some(t) = text {
                let _ = wio_machines::trace::verify(t);
            }
        }
        3 => {
            if let Some(Ok(mut r)) = text.map(serde_json::from_str::<wio_search::explore::Report>) {
                r.judge_promises();
            }
        }
        4 => {
            if let Some(t) = text {
                let _ = wio_world::scenario::Scenario::parse_in(t, Path::new("/nonexistent"));
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
                        ram: true,
                    };
                    let _ = p.draw(wio_scheduler::RunSeed(1), has);
                }
            }
        }
        _ => {
            if let Some(t) = text {
                let _ = serde_json::from_str::<wio_world::faults::WorldPlan>(t);
            }
        }
    }
});
