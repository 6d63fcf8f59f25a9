//! `wio bench --race`: what CPU-timing noise buys and what it costs, side by side.
//!
//! - Search: the small riscv64 guest runs `wio-race` (two processes adding to one shared
//!   counter with plain loads and stores, `images/probe/wio-race.c`); a snapshot is taken
//!   at its `race: start` line and N branches with seeds 0..N run to its result line. The
//!   number of distinct results is how many interleavings the seeds reached (goal: at
//!   least 90 of 100 with the default noise; without noise every branch is the same).
//! - Cost: the Debian guest boots to its workload's end with the default noise and with
//!   none, alternating, and the ratio of the median wall times is printed.

use serde_json::json;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;
use wio_machines::arch::riscv64::DEFAULT_CMDLINE;
use wio_machines::builder;
use wio_machines::error::{BenchError, BenchFailure, Result, WioError};
use wio_machines::machine::noise::SchedNoise;
use wio_machines::machine::{driver, Arch, RunConfig};

const RACE_START: &str = "race: start";
const RACE_RESULT: &str = "race: counter=";

/// Distinct race results over `branches` branches of a snapshot taken at the race's start
/// with `noise`; returns (distinct, an example result).
fn distinct_results(dir: &Path, noise: SchedNoise, branches: u64) -> Result<(usize, String)> {
    let snap = dir.join(format!("race-{}.snap", noise.name()));
    let cfg = RunConfig {
        guest: Some("small".into()),
        cmdline: Some(format!("{DEFAULT_CMDLINE} wio.race=1")),
        epoch_unix: 1_767_225_600,
        sched_noise: noise,
        snapshots: wio_machines::snapshot::plan::SnapshotPlan {
            at: vec![wio_machines::snapshot::plan::SnapshotAt::Console(
                RACE_START.into(),
            )],
            out: snap.to_string_lossy().into_owned(),
        },
        until: Some(RACE_START.into()),
        ..RunConfig::with_seed(1)
    };
    let wall = Instant::now();
    let run = driver::run(builder::boot(Arch::Riscv64, &cfg, wall)?, &cfg, wall);
    run.outcome?;
    if !snap.exists() {
        return Err(BenchFailure::StaleGuest {
            guest: "race guest",
            reached: format!("printed {RACE_START:?}"),
            needs: "wio-race",
        }
        .into());
    }
    let loaded = builder::load(&snap, &RunConfig::with_seed(1))?;
    let cancel = AtomicBool::new(false);
    let mut results = BTreeSet::new();
    for seed in 0..branches {
        let end = driver::run_branch(
            loaded.as_ref(),
            seed,
            Some(RACE_RESULT),
            &[],
            0,
            None,
            &cancel,
        )?
        .filter(|e| e.stopped_at_until)
        .ok_or_else(|| {
            WioError::from(BenchFailure::BranchMissed {
                branch: format!("race branch {seed}"),
                what: format!("its result {RACE_RESULT:?}"),
            })
        })?;
        let line = end
            .lines
            .into_iter()
            .find(|(text, _)| text == RACE_RESULT)
            .map(|(_, line)| line)
            .unwrap_or_default();
        results.insert(line);
    }
    let _ = std::fs::remove_file(&snap);
    let example = results.iter().next().cloned().unwrap_or_default();
    Ok((results.len(), example))
}

/// Runs the race figures and prints them; returns them as JSON.
pub fn figures(branches: u64, rounds: u32) -> Result<serde_json::Value> {
    if branches == 0 {
        return Err(BenchError::RaceBranches.into());
    }
    let dir = crate::scratch_dir("wio-bench-race", "bench folder")?;
    let mut doc = serde_json::Map::new();
    for noise in [SchedNoise::default(), SchedNoise::Off] {
        eprintln!(
            "bench: race, {branches} branches of one snapshot, --sched-noise {}…",
            noise.name()
        );
        let started = Instant::now();
        let (distinct, example) = distinct_results(&dir, noise, branches)?;
        let secs = started.elapsed().as_secs_f64();
        println!(
            "race outcomes, noise {:<6} {distinct:>8} distinct of {branches} branches (e.g. {example:?}; {secs:.1} s{})",
            noise.name(),
            if noise == SchedNoise::default() { "; goal >= 90%" } else { "" }
        );
        doc.insert(
            format!("distinct_{}", noise.name()),
            json!({ "distinct": distinct, "branches": branches, "seconds": secs }),
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    let mut on = Vec::new();
    let mut off = Vec::new();
    for round in 1..=rounds.max(1) {
        eprintln!(
            "bench: Debian boot, round {round}/{}: noise {} then off…",
            rounds.max(1),
            SchedNoise::default().name()
        );
        on.push(super::debian_boot_secs(SchedNoise::default(), false)?);
        off.push(super::debian_boot_secs(SchedNoise::Off, false)?);
    }
    let (on, off) = (super::median(on), super::median(off));
    println!(
        "Debian boot wall time       {:>8.2} s noise {} / {:.2} s off = {:.3} (goal < 1.05)",
        on,
        SchedNoise::default().name(),
        off,
        on / off
    );
    doc.insert(
        "debian_boot".into(),
        json!({ "noise_s": on, "off_s": off, "ratio": on / off }),
    );
    Ok(serde_json::Value::Object(doc))
}
