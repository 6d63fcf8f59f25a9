//! End-to-end tests of guided exploration (`wio explore --budget`) on the small riscv64
//! guest: a bug planted behind three 1-in-16 choices (`wio-planted sdk 3`, a `sometimes`
//! promise per stage) is reached by guided search where a flat exploration of as many
//! branches does not reach it, and the failing branch's path reproduces it bit for bit; the
//! tree and report are the same for one or two worker threads; bad input is a one-line
//! error; SIGTERM keeps the finished branches. Need the guests built by
//! images/build-all-riscv64.sh. Worlds: `guided_worlds.rs`.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use wio_e2e_tests::{
    guided_explore, interrupt_after, read_report as report, require_riscv_guests, run_with_summary,
    scratch, stderr, wio, wio_env, StopSignal,
};

/// The small guest's kernel arguments with the planted bug of `form` and `depth` (no other
/// workload after it).
fn planted_cmdline(form: &str, depth: u32) -> String {
    format!(
        "console=ttyS0 earlycon=sbi kfence.sample_interval=0 panic=-1 random.trust_cpu=off wio.planted={form},{depth} wio.busy_steps=0"
    )
}

/// A snapshot of the planted program at its setup-complete (before its first choice).
fn planted_snapshot(dir: &Path, form: &str, depth: u32) -> PathBuf {
    let snap = dir.join(format!("planted-{form}-{depth}.snap"));
    let o = wio(&[
        "run",
        "--arch",
        "riscv64",
        "--seed",
        "1",
        "--quiet",
        "--no-summary",
        "--cmdline",
        &planted_cmdline(form, depth),
        "--snapshot-at",
        "setup-complete",
        "--snapshot-out",
        snap.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    snap
}

fn guided(snap: &Path, budget: u64, jobs: u32, rep: &Path) -> std::process::Output {
    guided_explore(snap, budget, jobs, &[], rep)
}

/// The deepest planted stage any result reached.
fn deepest_stage(r: &serde_json::Value) -> u64 {
    r["results"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|res| res["promises"].as_array().cloned().unwrap_or_default())
        .filter(|p| p["passes"].as_u64().unwrap_or(0) > 0)
        .filter_map(|p| {
            p["message"]
                .as_str()?
                .strip_prefix("planted stage ")?
                .parse()
                .ok()
        })
        .max()
        .unwrap_or(0)
}

#[test]
fn guided_search_reaches_a_bug_behind_three_rare_choices_and_its_path_reproduces() {
    let test = "guided_search_reaches_a_bug_behind_three_rare_choices_and_its_path_reproduces";
    if !require_riscv_guests(test) {
        return;
    }
    let dir = scratch("guided-planted");
    let snap = planted_snapshot(&dir, "sdk", 3);
    // Flat: 400 seeds of the snapshot. The bug needs three 1-in-16 choices (1 in 4096).
    let flat = dir.join("flat.json");
    let o = wio(&[
        "explore",
        "--from",
        snap.to_str().unwrap(),
        "--seeds",
        "0..400",
        "--jobs",
        "2",
        "--report",
        flat.to_str().unwrap(),
    ]);
    assert!(o.status.code().is_some(), "{}", stderr(&o));
    let flat = report(&flat);
    let flat_failing = flat["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["failed"] == true)
        .count();
    assert_eq!(
        flat_failing, 0,
        "flat search does not reach the bug in 400 seeds"
    );
    assert!(deepest_stage(&flat) < 3);
    // Guided: 400 branches.
    let rep = dir.join("guided.json");
    let o = guided(&snap, 400, 2, &rep);
    assert_eq!(
        o.status.code(),
        Some(1),
        "the bug fails the exploration: {}",
        stderr(&o)
    );
    let r = report(&rep);
    assert_eq!(r["complete"], true);
    assert_eq!(r["question"]["guided"]["budget"], 400);
    let results = r["results"].as_array().unwrap();
    assert_eq!(results.len(), 400);
    let first = results
        .iter()
        .find(|res| res["failed"] == true)
        .expect("guided search reaches the planted bug in 400 branches");
    let violated = first["promises"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["message"] == "planted bug not reached" && p["status"] == "violated");
    assert!(violated, "{first}");
    // The tree: moments at depth 2 or more, each stage's first true among what was new.
    let moments = r["tree"]["moments"].as_array().unwrap();
    assert!(moments.iter().any(|m| m["depth"].as_u64() >= Some(2)));
    for stage in 1..=3 {
        let text = format!("promise \"planted stage {stage}\" true");
        assert!(
            moments.iter().any(|m| m["new"]
                .as_array()
                .is_some_and(|n| n.iter().any(|w| w == &text[..]))),
            "a moment for stage {stage}"
        );
    }
    assert_eq!(
        r["tree"]["growth"].as_array().unwrap().len(),
        400,
        "growth has one entry per branch"
    );
    // Its path: `wio run --from SNAP --path P` gives the same trace and the same violation.
    let path = first["path"].as_str().unwrap();
    assert!(path.contains('@'), "a path through moments: {path}");
    assert!(first["reproduce"].as_str().unwrap().contains("--path"));
    let (o, summary) = run_with_summary(&["--from", snap.to_str().unwrap(), "--path", path]);
    assert_eq!(o.status.code(), Some(108), "{}", stderr(&o));
    assert_eq!(summary["trace_hash"], first["trace_hash"], "bit for bit");
    // A branch that passed reproduces too.
    let ok = results
        .iter()
        .rev()
        .find(|res| res["failed"] == false)
        .unwrap();
    let (o, summary) = run_with_summary(&[
        "--from",
        snap.to_str().unwrap(),
        "--path",
        ok["path"].as_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(summary["trace_hash"], ok["trace_hash"]);
}

#[test]
fn a_guided_exploration_is_the_same_on_one_or_two_threads() {
    let test = "a_guided_exploration_is_the_same_on_one_or_two_threads";
    if !require_riscv_guests(test) {
        return;
    }
    let dir = scratch("guided-jobs");
    let snap = planted_snapshot(&dir, "sdk", 3);
    let one = dir.join("one.json");
    let two = dir.join("two.json");
    for (jobs, rep) in [(1, &one), (2, &two)] {
        let o = guided(&snap, 96, jobs, rep);
        assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    }
    let (a, b) = (report(&one), report(&two));
    assert!(
        a["tree"]["moments"].as_array().unwrap().len() > 1,
        "moments kept"
    );
    assert_eq!(a, b, "the same tree and results whatever --jobs");
    // Moments copied whole (WIO_MOMENTS=copy) give the same search: keeping only the
    // pages a branch wrote, over its parent's, is invisible (and smaller).
    let copy = dir.join("copy.json");
    let o = wio_env(
        &[
            "explore",
            "--from",
            snap.to_str().unwrap(),
            "--budget",
            "96",
            "--jobs",
            "2",
            "--report",
            copy.to_str().unwrap(),
        ],
        "WIO_MOMENTS",
        "copy",
    );
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    let bytes = |r: &mut serde_json::Value| -> u64 {
        let moments = r["tree"]["moments"].as_array_mut().unwrap();
        moments
            .iter_mut()
            .map(|m| m["bytes"].take().as_u64().unwrap())
            .sum()
    };
    let (mut layered, mut whole) = (a.clone(), report(&copy));
    let (lb, wb) = (bytes(&mut layered), bytes(&mut whole));
    assert_eq!(
        layered, whole,
        "the same tree and results with moments copied whole"
    );
    assert!(
        lb < wb,
        "layered moments hold less: {lb} against {wb} bytes"
    );
    // Beside the report, its coverage growth as a picture.
    let plot = std::fs::read_to_string(one.with_extension("growth.svg")).unwrap();
    assert!(
        plot.starts_with("<svg") && plot.contains("96 branches"),
        "{plot}"
    );
    // Another search seed is another search.
    let other = dir.join("other.json");
    let o = wio(&[
        "explore",
        "--from",
        snap.to_str().unwrap(),
        "--budget",
        "96",
        "--search-seed",
        "7",
        "--report",
        other.to_str().unwrap(),
    ]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    assert_ne!(report(&other)["results"], a["results"]);
    // A guided report is one search: `wio report merge` refuses it in one line.
    let o = wio(&[
        "report",
        "merge",
        one.to_str().unwrap(),
        two.to_str().unwrap(),
        "--out",
        dir.join("merged.json").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(100), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is a guided exploration's report"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
}

#[test]
fn guided_bad_input_is_a_one_line_error_and_sigterm_keeps_the_finished_branches() {
    let test = "guided_bad_input_is_a_one_line_error_and_sigterm_keeps_the_finished_branches";
    if !require_riscv_guests(test) {
        return;
    }
    let dir = scratch("guided-bad");
    let snap = planted_snapshot(&dir, "sdk", 2);
    let s = snap.to_str().unwrap();
    let rep = dir.join("r.json");
    let r = rep.to_str().unwrap();
    for (args, says) in [
        (
            vec!["explore", "--from", s, "--budget", "0", "--report", r],
            "--budget 0",
        ),
        (
            vec![
                "explore",
                "--from",
                s,
                "--strategy",
                "guided",
                "--seeds",
                "0..4",
            ],
            "--strategy guided",
        ),
        (
            vec![
                "explore",
                "--from",
                s,
                "--strategy",
                "flat",
                "--budget",
                "4",
            ],
            "--strategy flat",
        ),
        (
            vec![
                "explore",
                "--from",
                s,
                "--budget",
                "4",
                "--signals",
                "edges",
            ],
            "is not a signal",
        ),
        (
            vec![
                "explore",
                "--from",
                s,
                "--strategy",
                "deep",
                "--budget",
                "4",
            ],
            "deep",
        ),
        (vec!["run", "--from", s, "--path", "1@x,2"], "--path"),
        (vec!["run", "--from", s, "--path", "5@1,6"], "does not fit"),
        (
            vec!["run", "--from", s, "--path", "5@999999999999999,6"],
            "does not fit",
        ),
    ] {
        let o = wio(&args);
        let err = stderr(&o);
        assert!(
            matches!(o.status.code(), Some(2 | 100)),
            "{args:?}: {:?} {err}",
            o.status.code()
        );
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // SIGTERM: the report of the branches that finished, marked incomplete (sent once a
    // checkpoint shows a round or more done, however loaded the host).
    let child = std::process::Command::new(wio_e2e_tests::wio_bin())
        .args([
            "explore",
            "--from",
            s,
            "--budget",
            "100000",
            "--jobs",
            "2",
            "--checkpoint-secs",
            "0",
            "--report",
            r,
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let ckpt = dir.join("r.json.checkpoint");
    let started = std::time::Instant::now();
    while !ckpt.exists() && started.elapsed().as_secs() < 120 {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let (out, took) = interrupt_after(
        child,
        StopSignal::Term,
        std::time::Duration::from_millis(500),
    );
    assert!(took.as_secs() < 30, "stops promptly: {took:?}");
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let rep = report(&rep);
    assert_eq!(rep["complete"], false);
    let n = rep["results"].as_array().unwrap().len();
    assert!((16..100_000).contains(&n), "{n} branches kept");
    assert_eq!(rep["tree"]["growth"].as_array().unwrap().len(), n);
    assert!(ckpt.exists(), "the checkpoint stays for --resume");
}

#[test]
fn kill_9_in_a_guided_exploration_then_resume_gives_the_uninterrupted_report() {
    let test = "kill_9_in_a_guided_exploration_then_resume_gives_the_uninterrupted_report";
    if !require_riscv_guests(test) {
        return;
    }
    let dir = scratch("guided-resume");
    let snap = planted_snapshot(&dir, "sdk", 3);
    let s = snap.to_str().unwrap();
    let whole = dir.join("whole.json");
    let o = guided(&snap, 128, 2, &whole);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    let cut = dir.join("cut.json");
    let c = cut.to_str().unwrap();
    let ckpt = dir.join("cut.json.checkpoint");
    let args = [
        "explore",
        "--from",
        s,
        "--budget",
        "128",
        "--jobs",
        "2",
        "--checkpoint-secs",
        "0",
        "--report",
        c,
    ];
    let mut child = std::process::Command::new(wio_e2e_tests::wio_bin())
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait for a checkpoint of a few rounds, then kill -9 (no chance to write anything).
    let started = std::time::Instant::now();
    loop {
        let done = std::fs::read(&ckpt)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .map_or(0, |v| v["results"].as_array().map_or(0, Vec::len));
        if done >= 48 || started.elapsed().as_secs() > 120 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(ckpt.exists(), "a checkpoint was written");
    assert!(!cut.exists(), "killed before its report");
    // Other options than the checkpoint's: refused.
    let o = wio(&[
        "explore", "--from", s, "--budget", "64", "--resume", "--report", c,
    ]);
    assert_eq!(o.status.code(), Some(100), "{}", stderr(&o));
    assert!(stderr(&o).contains("another exploration"), "{}", stderr(&o));
    // Resume (on one thread): the same report as the uninterrupted run, checkpoint gone.
    let mut resumed = args.to_vec();
    resumed[6] = "1";
    resumed.push("--resume");
    let o = wio(&resumed);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    assert!(stderr(&o).contains("resuming after"), "{}", stderr(&o));
    assert_eq!(
        report(&cut),
        report(&whole),
        "the uninterrupted run's report"
    );
    assert!(
        !ckpt.exists(),
        "a complete exploration removes its checkpoint"
    );
    // Nothing to resume now: a one-line error.
    let o = wio(&resumed);
    assert_eq!(o.status.code(), Some(100), "{}", stderr(&o));
    assert!(stderr(&o).contains("no checkpoint"), "{}", stderr(&o));
}

#[test]
fn coverage_edges_from_an_instrumented_program_guide_the_search() {
    let test = "coverage_edges_from_an_instrumented_program_guide_the_search";
    if !require_riscv_guests(test) {
        return;
    }
    // The planted bug's `edges` form: no stage promises; each stage passed reports a
    // coverage edge as notify_coverage does through libvoidstar.so. Only those edges show
    // progress (the console shows none).
    let dir = scratch("guided-sdk-edges");
    let snap = planted_snapshot(&dir, "edges", 3);
    let rep = dir.join("guided.json");
    let o = guided_explore(&snap, 600, 2, &["--signals", "sdk-coverage"], &rep);
    assert_eq!(
        o.status.code(),
        Some(1),
        "the bug is reached: {}",
        stderr(&o)
    );
    let r = report(&rep);
    let moments = r["tree"]["moments"].as_array().unwrap();
    for stage in 1..=2 {
        let text = format!("sdk edge wio-planted:{stage}");
        assert!(
            moments.iter().any(|m| m["new"]
                .as_array()
                .is_some_and(|n| n.iter().any(|w| w == &text[..]))),
            "a moment for stage {stage}'s edge: {moments:?}"
        );
    }
    // Without the signal, nothing marks the stages: no moment beyond the root.
    let rep = dir.join("blind.json");
    let o = guided_explore(&snap, 48, 2, &["--signals", "console"], &rep);
    assert!(o.status.code().is_some(), "{}", stderr(&o));
    let r = report(&rep);
    let moments = r["tree"]["moments"].as_array().unwrap();
    assert!(
        moments.iter().all(|m| m["new"].as_array().is_none_or(|n| n
            .iter()
            .all(|w| !w.as_str().unwrap_or("").starts_with("sdk edge")))),
        "sdk edges are marked only when observed"
    );
}
