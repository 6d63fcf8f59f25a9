//! End-to-end tests of what a branch's seed changes after a restore, for a race shorter
//! than one scheduler tick on Debian's unmodified kernel: two POSIX threads
//! (`images/probe/wio-threads.c`, booted with `wio.threads=1`) add to one counter with a
//! plain load and store for 2 ms, yielding and sleeping 100 us inside, snapshotted just
//! before. Timer latency alone moved such a race into few outcomes; seeded CPU stalls (and
//! a branch's pause, which puts the tick anywhere against the race) move how much work
//! each thread gets done between two wake-ups. They need images/build-all-riscv64.sh.

#![forbid(unsafe_code)]

use std::collections::BTreeSet;
use std::path::Path;
use wio_e2e_tests::{
    explore_to, field, read_report, require_riscv_guests, riscv_guest_artifact, run_with_summary,
    scratch, stderr, stdout, until_lines, wio,
};

/// Debian's kernel with wio's deterministic arguments and the two-thread race.
const CMDLINE: &str =
    "console=ttyS0 earlycon=sbi kfence.sample_interval=0 panic=-1 random.trust_cpu=off wio.threads=1";

/// What the race prints at its end.
const RESULT: &str = "console:threads: counter=";

/// Snapshots Debian booted with seed 3 (and `extra`) where the race program says it is
/// ready, 5 ms before its threads start.
fn race_snapshot(snap: &Path, extra: &[&str]) {
    let mut args = vec![
        "run",
        "--arch",
        "riscv64",
        "--guest",
        "debian",
        "--seed",
        "3",
        "--cmdline",
        CMDLINE,
        "--quiet",
        "--no-summary",
        "--snapshot-at",
        "console:threads: ready",
        "--snapshot-out",
        snap.to_str().unwrap(),
        "--until",
        "console:threads: ready",
    ];
    args.extend_from_slice(extra);
    let o = wio(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// The race's result line of each branch of `snap` with seeds 100..120 (`extra`: more
/// `wio explore` arguments), and the report.
fn race_branches(snap: &Path, rep: &Path, extra: &[&str]) -> (Vec<String>, serde_json::Value) {
    let mut args = vec!["--until", RESULT];
    args.extend_from_slice(extra);
    let o = explore_to(snap, "100..120", rep, &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = read_report(rep);
    (until_lines(&r), r)
}

/// The counters the branches ended with (the race's outcome), checking each race lasted
/// under one 4 ms tick.
fn counters(lines: &[String]) -> Vec<u64> {
    lines
        .iter()
        .map(|l| {
            let elapsed = field(l, "elapsed_us").unwrap_or_else(|| panic!("{l}"));
            assert!(elapsed < 4_000, "the race lasted {elapsed} us: {l}");
            field(l, "counter").unwrap_or_else(|| panic!("{l}"))
        })
        .collect()
}

#[test]
fn a_race_shorter_than_a_tick_on_debian_takes_many_outcomes_and_one_seed_repeats() {
    if !require_riscv_guests("a_race_shorter_than_a_tick_on_debian_takes_many_outcomes") {
        return;
    }
    assert!(riscv_guest_artifact("RISCV64_DEBIAN_IMAGE").is_some());
    let dir = scratch("short-race");
    let snap = dir.join("race.snap");
    race_snapshot(&snap, &[]);
    // Under the default settings at least 15 of 20 branches end with a counter of their own.
    let (lines, r) = race_branches(&snap, &dir.join("light.json"), &[]);
    let light = counters(&lines);
    let distinct: BTreeSet<u64> = light.iter().copied().collect();
    assert!(
        distinct.len() >= 15,
        "only {} distinct outcomes in 20 branches: {lines:#?}",
        distinct.len()
    );
    // The noise is what moves it: the same branches with none reach fewer outcomes.
    let (lines_off, _) = race_branches(&snap, &dir.join("off.json"), &["--sched-noise", "off"]);
    let off: BTreeSet<u64> = counters(&lines_off).into_iter().collect();
    assert!(
        off.len() < distinct.len(),
        "{} outcomes without noise, {} with: {lines_off:#?}",
        off.len(),
        distinct.len()
    );
    // One seed stays bit-identical: its branch run again gives the same trace and line.
    let res = &r["results"][7];
    let (o, again) = run_with_summary(&[
        "--from",
        snap.to_str().unwrap(),
        "--seed",
        "107",
        "--until",
        RESULT,
        "--no-summary",
    ]);
    assert_eq!(again["trace_hash"], res["trace_hash"], "{}", stdout(&o));
    assert!(stdout(&o).contains(res["until_line"].as_str().unwrap()));
    let _ = std::fs::remove_dir_all(dir);
}
