//! End-to-end tests of what a branch's seed changes after a restore, for the guest's own
//! randomness: entropy forks. A snapshot's guest memory holds the kernel's CRNG state; the
//! VM generation ID (`microsoft,vmgenid`, re-drawn at every restore with another seed)
//! makes the kernel reseed it at the branch point, so what programs read from
//! `/dev/urandom` and `getrandom`, and where ASLR puts them, differs in every branch, while
//! one seed stays bit-identical. They need images/build-all-riscv64.sh.

#![forbid(unsafe_code)]

use std::path::Path;
use wio_e2e_tests::{
    console_line, require_riscv_guests, riscv_guest_artifact, run_with_summary, scratch, stdout,
};

/// What the kernel prints when the VM generation ID changed and it reseeded its CRNG.
const RESEEDED: &str = "crng reseeded due to virtual machine fork";

/// The lines of a branch's console that come from the guest's randomness.
fn randomness(text: &str) -> [Option<String>; 3] {
    [
        "workload: urandom:",
        "probe: getrandom:",
        // ASLR: the stack, brk and mmap addresses.
        "probe: stack:",
    ]
    .map(|p| console_line(text, p).map(str::to_string))
}

/// Takes a snapshot of `guest` (extra `wio run` arguments) booted with seed 3 where its init
/// starts, before its workload reads random bytes; returns the console up to there.
fn snapshot(snap: &Path, guest: &[&str]) -> String {
    snapshot_at(snap, guest, "console:wio-init: start")
}

/// [`snapshot`] at another point (`--snapshot-at` syntax).
fn snapshot_at(snap: &Path, guest: &[&str], at: &str) -> String {
    let mut args = vec!["--arch", "riscv64", "--seed", "3", "--no-summary"];
    args.extend_from_slice(guest);
    args.extend_from_slice(&[
        "--snapshot-at",
        at,
        "--snapshot-out",
        snap.to_str().unwrap(),
    ]);
    let (out, s) = run_with_summary(&args);
    assert_eq!(s["exit_status"], 0, "{}", stdout(&out));
    stdout(&out)
}

/// Runs branches of `snap` with `seeds`, two at a time: (seed, console, trace hash).
fn branches(snap: &Path, seeds: &[u64]) -> Vec<(u64, String, String)> {
    let from = snap.to_str().unwrap();
    let mut out = Vec::new();
    for pair in seeds.chunks(2) {
        let runs: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = pair
                .iter()
                .map(|&seed| {
                    s.spawn(move || {
                        let seed_text = seed.to_string();
                        let (o, sum) = run_with_summary(&[
                            "--from",
                            from,
                            "--seed",
                            &seed_text,
                            "--no-summary",
                        ]);
                        assert_eq!(sum["exit_status"], 0, "seed {seed}: {}", stdout(&o));
                        (
                            seed,
                            stdout(&o),
                            sum["trace_hash"].as_str().unwrap().to_string(),
                        )
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        out.extend(runs);
    }
    out
}

/// Every branch of `runs` (seed, console, trace hash) reseeded its CRNG, and each line of
/// [`randomness`] is there in every one and differs from every other branch's.
fn assert_entropy_forked(runs: &[(u64, String, String)]) {
    for (seed, text, _) in runs {
        assert!(text.contains(RESEEDED), "seed {seed}: {text}");
        assert!(
            randomness(text).iter().all(Option::is_some),
            "seed {seed}: {text}"
        );
    }
    for part in 0..3 {
        let values: Vec<Option<String>> = runs
            .iter()
            .map(|(_, t, _)| randomness(t)[part].clone())
            .collect();
        let distinct: std::collections::BTreeSet<&Option<String>> = values.iter().collect();
        assert_eq!(
            distinct.len(),
            values.len(),
            "line {part} repeats across {} branches: {values:#?}",
            runs.len()
        );
    }
}

#[test]
fn entropy_forks_in_every_branch_of_the_small_guest_and_one_seed_stays_identical() {
    if !require_riscv_guests("entropy_forks_in_every_branch_of_the_small_guest") {
        return;
    }
    let dir = scratch("entropy-small");
    let snap = dir.join("start.snap");
    let before = snapshot(&snap, &[]);
    let seeds: Vec<u64> = (100..120).collect();
    let runs = branches(&snap, &seeds);
    // Every branch reseeded its CRNG at the branch point, and every random thing a program
    // started after it sees differs from every other branch's: the first 16 bytes of
    // /dev/urandom (read 2.5 ms after the restore), getrandom, the stack, brk and mmap
    // addresses.
    assert_entropy_forked(&runs);
    // One seed stays bit-identical; the snapshot's own seed continues the original run,
    // with no new generation (nothing forked).
    let again = branches(&snap, &[seeds[0], 3]);
    assert_eq!(
        again[0].1, runs[0].1,
        "seed {} twice: same console",
        seeds[0]
    );
    assert_eq!(again[0].2, runs[0].2, "seed {} twice: same trace", seeds[0]);
    let own = &again[1].1;
    assert!(!own.contains(RESEEDED), "{own}");
    let (whole, _) = run_with_summary(&["--arch", "riscv64", "--seed", "3", "--no-summary"]);
    let whole = stdout(&whole);
    assert_eq!(
        randomness(own),
        randomness(&whole),
        "the snapshot's own seed continues the original run"
    );
    assert!(
        whole.starts_with(before.trim_end()),
        "the snapshot came from that run"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn entropy_forks_in_branches_of_debians_unmodified_kernel() {
    if !require_riscv_guests("entropy_forks_in_branches_of_debians_unmodified_kernel") {
        return;
    }
    assert!(riscv_guest_artifact("RISCV64_DEBIAN_IMAGE").is_some());
    let dir = scratch("entropy-debian");
    let snap = dir.join("start.snap");
    // At the kernel's "Run /init" line: well before the workload reads /dev/urandom (at
    // "wio-init: start" the serial port may show that line only after the workload, whose
    // first command reads it, already ran).
    snapshot_at(
        &snap,
        &["--guest", "debian"],
        "console:Run /init as init process",
    );
    // 20 branches: every one reseeded its CRNG, and what a program started after the
    // branch point reads from /dev/urandom and getrandom, and where ASLR puts its stack,
    // brk and mmap, differs in every one.
    let seeds: Vec<u64> = (100..120).collect();
    let runs = branches(&snap, &seeds);
    assert_entropy_forked(&runs);
    // One seed stays bit-identical.
    let again = branches(&snap, &[seeds[3]]);
    assert_eq!(
        again[0].1, runs[3].1,
        "seed {} twice: same console",
        seeds[3]
    );
    assert_eq!(again[0].2, runs[3].2, "seed {} twice: same trace", seeds[3]);
    let _ = std::fs::remove_dir_all(dir);
}
