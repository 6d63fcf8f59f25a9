//! End-to-end tests of `wio explore` on riscv64 guests: fifty branches of one snapshot
//! match their individual reruns, and are the same with the snapshot's code caches and
//! without; shards merge into the whole exploration and failing seeds reproduce; Ctrl-C and SIGTERM keep the finished seeds; CPU-timing noise lets seeds reach
//! other interleavings of a race that does no I/O. Need the guests built by
//! images/build-all-riscv64.sh.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use wio_e2e_tests::{
    interrupt_after, read_report as report, require_riscv_guests, run_with_summary, scratch,
    stderr, stdout, until_lines, wio, wio_env, StopSignal,
};

/// A snapshot late in the small guest's workload, shared by the exploration tests.
fn late_snapshot(dir: &Path) -> PathBuf {
    late_snapshot_with(dir, "late.snap", "0")
}

/// [`late_snapshot`] named `name`, taken with WIO_WARM_CACHES set to `warm`.
fn late_snapshot_with(dir: &Path, name: &str, warm: &str) -> PathBuf {
    let snap = dir.join(name);
    let args = [
        "run",
        "--arch",
        "riscv64",
        "--seed",
        "42",
        "--quiet",
        "--no-summary",
        "--snapshot-at",
        "1.8s",
        "--snapshot-out",
        snap.to_str().unwrap(),
    ];
    let o = wio_env(&args, "WIO_WARM_CACHES", warm);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    snap
}

const UNTIL: &str = "console:probe: getrandom";

#[test]
fn fifty_branches_match_their_individual_reruns() {
    if !require_riscv_guests("fifty_branches_match_their_individual_reruns") {
        return;
    }
    let dir = scratch("explore-fifty");
    let snap = late_snapshot(&dir);
    let rep = dir.join("report.json");
    let o = wio(&[
        "explore",
        "--from",
        snap.to_str().unwrap(),
        "--seeds",
        "1000..1050",
        "--jobs",
        "2",
        "--until",
        UNTIL,
        "--match",
        "probe: realtime",
        "--report",
        rep.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("50 seeds, 0 failing"), "{}", stdout(&o));
    let r = report(&rep);
    assert_eq!(r["complete"], true);
    assert_eq!(
        r["question"]["learn_from"], 1000,
        "the first seed taught the others"
    );
    let results = r["results"].as_array().unwrap();
    assert_eq!(results.len(), 50);
    let mut distinct = std::collections::BTreeSet::new();
    for res in results {
        let seed = res["seed"].as_u64().unwrap();
        assert_eq!(res["ended"], "until", "seed {seed}: {res}");
        distinct.insert(res["trace_hash"].as_str().unwrap().to_string());
        // Every branch but the first seed's started with the code that branch taught (see
        // explore's `warm`); its reproduce line, and so the rerun, says so.
        let reproduce = res["reproduce"].as_str().unwrap();
        let seed_text = seed.to_string();
        let mut args = vec![
            "--from",
            snap.to_str().unwrap(),
            "--seed",
            &seed_text,
            "--until",
            UNTIL,
            "--quiet",
            "--no-summary",
        ];
        if seed == 1000 {
            assert!(!reproduce.contains("--learn-from"), "{reproduce}");
        } else {
            assert!(
                reproduce.ends_with("--learn-from 1000 --until 'console:probe: getrandom'"),
                "{reproduce}"
            );
            args.extend(["--learn-from", "1000"]);
        }
        let (_, alone) = run_with_summary(&args);
        assert_eq!(
            alone["trace_hash"], res["trace_hash"],
            "seed {seed}: the rerun differs from its branch"
        );
        assert_eq!(alone["virtual_ns"], res["virtual_ns"], "seed {seed}");
    }
    assert!(
        distinct.len() >= 45,
        "seeds change the future: only {} distinct traces",
        distinct.len()
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn branches_are_the_same_with_the_snapshots_code_caches_and_without() {
    // Warm branches: with WIO_WARM_CACHES=1 a restore starts with the decoded instructions
    // and blocks the snapshot keeps (section `code-cache`); without, only with the
    // instructions checked since the last fence. Every branch's trace must be the same both
    // ways (the caches are invisible to the guest).
    if !require_riscv_guests("branches_are_the_same_with_the_snapshots_code_caches_and_without") {
        return;
    }
    let dir = scratch("explore-warm");
    let snap = late_snapshot_with(&dir, "warm.snap", "1");
    let info = wio(&["snapshot", "info", snap.to_str().unwrap()]);
    assert!(stdout(&info).contains("code-cache ("), "{}", stdout(&info));
    let hashes: Vec<_> = ["0", "1"]
        .into_iter()
        .map(|warm| branch_hashes(&dir, &snap, ("WIO_WARM_CACHES", warm)).0)
        .collect();
    assert_eq!(hashes[0], hashes[1], "warm and cold branches differ");
    let distinct: std::collections::BTreeSet<_> = hashes[0].iter().map(|h| &h.1).collect();
    assert!(
        distinct.len() >= 35,
        "seeds change the future: {}",
        distinct.len()
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// Explores seeds 2000..2040 of `snap` to [`UNTIL`] on 2 jobs with the environment
/// variable `env` set; every branch's (seed, trace hash, virtual ns), and explore's stderr.
fn branch_hashes(dir: &Path, snap: &Path, env: (&str, &str)) -> (Vec<(u64, String, u64)>, String) {
    let rep = dir.join(format!("report-{}-{}.json", env.0, env.1));
    let args = [
        "explore",
        "--from",
        snap.to_str().unwrap(),
        "--seeds",
        "2000..2040",
        "--jobs",
        "2",
        "--until",
        UNTIL,
        "--report",
        rep.to_str().unwrap(),
    ];
    let o = wio_env(&args, env.0, env.1);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = report(&rep);
    let by_seed: Vec<(u64, String, u64)> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|res| {
            (
                res["seed"].as_u64().unwrap(),
                res["trace_hash"].as_str().unwrap().to_string(),
                res["virtual_ns"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(by_seed.len(), 40);
    (by_seed, stderr(&o))
}

#[test]
fn branches_are_the_same_with_what_the_first_branch_learned_and_without() {
    // Warm branches: the first seed's branch runs first and the snapshot learns the code it
    // decoded and built; every other branch starts with it (each instruction compared with
    // its own memory at first use). WIO_COLD_BRANCHES=1 turns that off. Every branch's
    // trace must be the same both ways.
    if !require_riscv_guests("branches_are_the_same_with_what_the_first_branch_learned_and_without")
    {
        return;
    }
    let dir = scratch("explore-learned");
    let snap = late_snapshot(&dir);
    let (warm, told) = branch_hashes(&dir, &snap, ("WIO_COLD_BRANCHES", "0"));
    let (cold, quiet) = branch_hashes(&dir, &snap, ("WIO_COLD_BRANCHES", "1"));
    assert!(
        told.contains("the other branches start with the code seed 2000's branch decoded"),
        "{told}"
    );
    assert!(!quiet.contains("start with the code"), "{quiet}");
    assert_eq!(
        warm, cold,
        "branches with and without the learned code differ"
    );
    let distinct: std::collections::BTreeSet<_> = warm.iter().map(|h| &h.1).collect();
    assert!(
        distinct.len() >= 35,
        "seeds change the future: {}",
        distinct.len()
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn shards_merge_into_the_whole_exploration_and_failures_are_reproducible() {
    if !require_riscv_guests(
        "shards_merge_into_the_whole_exploration_and_failures_are_reproducible",
    ) {
        return;
    }
    let dir = scratch("explore-shards");
    let snap = late_snapshot(&dir);
    let explore = |extra: &[&str], out: &Path| {
        let mut args = vec![
            "explore",
            "--from",
            snap.to_str().unwrap(),
            "--seeds",
            "0..=7",
            "--jobs",
            "2",
            "--until",
            UNTIL,
            // Every seed's console shows this line before the one it stops at: every seed
            // fails, with a reproduce line. (A line after it, such as the probe's realtime
            // line, is seen only when it reached the console in the same step.)
            "--fail-on",
            "workload: uptime",
            "--report",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        wio(&args)
    };
    let whole = dir.join("whole.json");
    let o = explore(&[], &whole);
    assert_eq!(
        o.status.code(),
        Some(1),
        "failing seeds exit 1: {}",
        stderr(&o)
    );
    assert!(stdout(&o).contains("8 seeds, 8 failing"), "{}", stdout(&o));
    let first = report(&whole)["results"][0].clone();
    assert_eq!(first["failed"], true);
    // The reproduce line, run by a shell as printed, gives the same trace.
    let repro = first["reproduce"].as_str().unwrap();
    let rest = repro.strip_prefix("wio run ").expect("a wio run command");
    let summary = dir.join("repro.json");
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "'{}' run --quiet --no-summary --summary-json '{}' {rest}",
            wio_e2e_tests::wio_bin().display(),
            summary.display()
        ))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{repro}: {}", stderr(&o));
    assert_eq!(
        report(&summary)["trace_hash"],
        first["trace_hash"],
        "{repro}"
    );
    let (s0, s1) = (dir.join("s0.json"), dir.join("s1.json"));
    assert_eq!(explore(&["--shard", "0/2"], &s0).status.code(), Some(1));
    assert_eq!(explore(&["--shard", "1/2"], &s1).status.code(), Some(1));
    assert_eq!(report(&s0)["results"].as_array().unwrap().len(), 4);
    let merged = dir.join("merged.json");
    let o = wio(&[
        "report",
        "merge",
        s0.to_str().unwrap(),
        s1.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let (m, w) = (report(&merged), report(&whole));
    assert_eq!(m["results"], w["results"], "shards add up to the whole");
    assert_eq!(m["complete"], true);
    // A missing shard is named; --allow-partial merges what is there, marked incomplete.
    let o = wio(&[
        "report",
        "merge",
        s0.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(100), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("shard(s) 1 of 2 are missing"),
        "{}",
        stderr(&o)
    );
    let partial = dir.join("partial.json");
    let o = wio(&[
        "report",
        "merge",
        s0.to_str().unwrap(),
        "--allow-partial",
        "--out",
        partial.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert_eq!(report(&partial)["complete"], false);
    assert_eq!(report(&partial)["results"].as_array().unwrap().len(), 4);
    // A shard given twice is merged once, and said.
    let o = wio(&[
        "report",
        "merge",
        s0.to_str().unwrap(),
        s1.to_str().unwrap(),
        s0.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("shard 0 is in"), "{}", stderr(&o));
    assert_eq!(report(&merged)["results"], w["results"]);
    // A report of another exploration does not merge.
    let other = dir.join("other.json");
    let mut x = report(&s1);
    x["question"]["seeds"]["end"] = serde_json::json!(99);
    std::fs::write(&other, x.to_string()).unwrap();
    let o = wio(&[
        "report",
        "merge",
        s0.to_str().unwrap(),
        other.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(100), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(dir);
}

/// Explores many seeds, sends `signal` after a few finished, and checks that wio ends
/// promptly with 130 (the README's code for an interrupted run) and writes the report of
/// the finished seeds, marked incomplete.
fn an_exploration_stopped_by(test: &str, signal: StopSignal) {
    if !require_riscv_guests(test) {
        return;
    }
    let dir = scratch(&format!("explore-{}", signal.name()));
    let snap = late_snapshot(&dir);
    let rep = dir.join("partial.json");
    let child = std::process::Command::new(wio_e2e_tests::wio_bin())
        .args([
            "explore",
            "--from",
            snap.to_str().unwrap(),
            "--seeds",
            "0..100000",
            "--jobs",
            "2",
            "--report",
            rep.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until a few branches finished, then send the signal.
    let (out, took) = interrupt_after(child, signal, std::time::Duration::from_secs(5));
    assert!(
        took.as_secs() < 55,
        "SIG{} stops promptly: {took:?}",
        signal.name()
    );
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("wio: interrupted; the "),
        "{}",
        stderr(&out)
    );
    let r = report(&rep);
    assert_eq!(r["complete"], false);
    let n = r["results"].as_array().unwrap().len();
    assert!(n >= 1, "finished seeds are kept: {}", stderr(&out));
    assert!(n < 100_000);
    // A branch the signal cut short is abandoned, not reported as a seed the signal ended.
    let cut: Vec<&serde_json::Value> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| {
            x["error"]
                .as_str()
                .is_some_and(|e| e.contains("interrupted"))
        })
        .collect();
    assert!(cut.is_empty(), "{cut:?}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_interrupted_exploration_keeps_the_finished_seeds() {
    an_exploration_stopped_by(
        "an_interrupted_exploration_keeps_the_finished_seeds",
        StopSignal::Int,
    );
}

/// SIGTERM (`kill`, a Kubernetes pod stop) is Ctrl-C: the same partial report, exit 130.
#[test]
fn a_terminated_exploration_keeps_the_finished_seeds() {
    an_exploration_stopped_by(
        "a_terminated_exploration_keeps_the_finished_seeds",
        StopSignal::Term,
    );
}

/// Snapshots the small guest (booted with `wio.race=1`) at the start of its race between
/// two processes, with `--sched-noise noise`, and explores seeds 0..8 to the race's result;
/// returns the result lines by seed, the snapshot and the report.
fn race_results(dir: &Path, noise: &str) -> (Vec<String>, PathBuf, serde_json::Value) {
    let snap = dir.join(format!("race-{noise}.snap"));
    let o = wio(&[
        "run",
        "--arch",
        "riscv64",
        "--seed",
        "1",
        "--cmdline",
        "console=ttyS0 earlycon=sbi kfence.sample_interval=0 panic=-1 random.trust_cpu=off wio.race=1",
        "--sched-noise",
        noise,
        "--quiet",
        "--no-summary",
        "--snapshot-at",
        "console:race: start",
        "--snapshot-out",
        snap.to_str().unwrap(),
        "--until",
        "console:race: start",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (lines, r) = race_explore(&snap, &dir.join(format!("race-{noise}.json")), &[]);
    (lines, snap, r)
}

/// Explores seeds 0..8 of the race snapshot `snap` to the race's result (`extra`: more
/// `wio explore` arguments), reporting to `rep`: the result lines by seed and the report.
fn race_explore(snap: &Path, rep: &Path, extra: &[&str]) -> (Vec<String>, serde_json::Value) {
    let mut args = vec![
        "explore",
        "--from",
        snap.to_str().unwrap(),
        "--seeds",
        "0..8",
        "--until",
        "console:race: counter=",
        "--report",
        rep.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = wio(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = report(rep);
    (until_lines(&r), r)
}

/// The summary of one branch of the race snapshot `snap` with `seed` run to the race's
/// result (`extra`: more `wio run` arguments).
fn race_rerun(snap: &Path, seed: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "--from",
        snap.to_str().unwrap(),
        "--seed",
        seed,
        "--until",
        "console:race: counter=",
        "--quiet",
        "--no-summary",
    ];
    args.extend_from_slice(extra);
    run_with_summary(&args).1
}

#[test]
fn timing_noise_lets_seeds_find_other_interleavings_of_a_race_without_io() {
    if !require_riscv_guests(
        "timing_noise_lets_seeds_find_other_interleavings_of_a_race_without_io",
    ) {
        return;
    }
    let dir = scratch("race-noise");
    // Without noise a branch's seed moves device timing and the guest's entropy (the VM
    // generation ID reseeds its CRNG), which moves the race a little...
    let (off, _, _) = race_results(&dir, "off");
    assert!(off[0].starts_with("race: counter="), "{off:?}");
    let distinct_off: std::collections::BTreeSet<&String> = off.iter().collect();
    // ...with the default noise the seeds reach other interleavings, many more.
    let (light, snap, r) = race_results(&dir, "light");
    let distinct: std::collections::BTreeSet<&String> = light.iter().collect();
    assert!(
        distinct.len() >= 6 && distinct.len() > distinct_off.len(),
        "only {} distinct results ({} without noise): {light:?} / {off:?}",
        distinct.len(),
        distinct_off.len()
    );
    // ...and each one repeats bit for bit from its seed.
    let res = &r["results"][5];
    let again = race_rerun(&snap, "5", &[]);
    assert_eq!(again["trace_hash"], res["trace_hash"]);
    assert_eq!(again["virtual_ns"], res["virtual_ns"]);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_branch_takes_another_noise_level_than_its_snapshot_and_reproduces_with_it() {
    if !require_riscv_guests("a_branch_takes_another_noise_level_than_its_snapshot") {
        return;
    }
    let dir = scratch("race-relevel");
    // A snapshot taken without timing noise: its branches reach few interleavings...
    let (off, snap, _) = race_results(&dir, "off");
    let distinct_off: std::collections::BTreeSet<&String> = off.iter().collect();
    // ...and the same branches explored with light noise from the snapshot point on many.
    let (lines, r) = race_explore(
        &snap,
        &dir.join("race-relevel.json"),
        &["--sched-noise", "light"],
    );
    assert_eq!(r["question"]["sched_noise"], "light", "{}", r["question"]);
    let distinct: std::collections::BTreeSet<&String> = lines.iter().collect();
    assert!(
        distinct.len() >= 6 && distinct.len() > distinct_off.len(),
        "{} distinct with light noise, {} without: {lines:?}",
        distinct.len(),
        distinct_off.len()
    );
    // Each seed's reproduce line carries the level and gives its trace bit for bit.
    let res = &r["results"][3];
    let line = res["reproduce"].as_str().unwrap();
    assert!(line.contains("--sched-noise light"), "{line}");
    let again = race_rerun(&snap, "3", &["--sched-noise", "light"]);
    assert_eq!(again["trace_hash"], res["trace_hash"], "{line}");
    // The snapshot's own level given again changes nothing: the same trace as without it.
    assert_eq!(
        race_rerun(&snap, "3", &[])["trace_hash"],
        race_rerun(&snap, "3", &["--sched-noise", "off"])["trace_hash"]
    );
    let _ = std::fs::remove_dir_all(dir);
}
