//! End-to-end tests of promises (riscv64): a race that breaks an `always` promise only
//! under some seeds, found by exploring and reproduced bit for bit; promises from the
//! shell (a `sometimes` never reached fails the run; events; seeded random numbers); a
//! hostile program flooding the channel with lines, malformed and oversized JSON and a
//! huge random request, all counted while the run goes on; a Python program instrumented
//! with the real Antithesis SDK (PyPI `antithesis`), whose assertions, catalogue and random
//! numbers go through libvoidstar.so to wio. They need images/build-all-riscv64.sh.

#![forbid(unsafe_code)]

use wio_e2e_tests::{
    console_line, require_riscv_guests, run_with_summary, scratch, stderr, stdout,
    summary_promise as promise, wio,
};

fn cmdline(extra: &str) -> String {
    format!("console=ttyS0 earlycon=sbi panic=-1 random.trust_cpu=off {extra}")
}

#[test]
fn exploring_finds_the_seeds_where_a_race_breaks_a_promise_and_replays_one() {
    if !require_riscv_guests(
        "exploring_finds_the_seeds_where_a_race_breaks_a_promise_and_replays_one",
    ) {
        return;
    }
    let dir = scratch("promises-race");
    let snap = dir.join("bank.snap");
    let report = dir.join("report.json");
    let junit = dir.join("junit.xml");
    // wio-bank: two processes move money with a non-atomic read-read-write-write; the
    // branch point is where the program declares its setup complete.
    let cl = cmdline("wio.bank=300000,100");
    let (o, boot) = run_with_summary(&[
        "--arch",
        "riscv64",
        "--seed",
        "1",
        "--cmdline",
        &cl,
        "--quiet",
        "--no-summary",
        "--snapshot-at",
        "setup-complete",
        "--snapshot-out",
        snap.to_str().unwrap(),
    ]);
    assert!(snap.exists(), "{}", stderr(&o));
    assert!(
        boot["promises"]["setup_complete_ns"].as_u64().is_some(),
        "{}",
        boot["promises"]
    );
    let out = wio(&[
        "explore",
        "--from",
        snap.to_str().unwrap(),
        "--seeds",
        "0..16",
        "--jobs",
        "2",
        "--report",
        report.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "failures found: {}",
        stderr(&out)
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let results = r["results"].as_array().unwrap();
    let failing: Vec<&serde_json::Value> = results.iter().filter(|x| x["failed"] == true).collect();
    assert!(
        !failing.is_empty() && failing.len() < results.len(),
        "the race breaks the promise under some seeds, not all: {} of {}",
        failing.len(),
        results.len()
    );
    for f in &failing {
        let p = f["promises"].as_array().unwrap();
        assert!(
            p.iter()
                .any(|p| p["id"] == "money is conserved" && p["status"] == "violated"),
            "{f}"
        );
    }
    let conserved = r["promises"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "money is conserved")
        .unwrap();
    assert_eq!(conserved["passed"], false);
    assert_eq!(conserved["seeds_violated"], failing.len());
    let (seed, cmd) = (
        conserved["first_failing_seed"][0].as_u64().unwrap(),
        conserved["first_failing_seed"][1]
            .as_str()
            .unwrap()
            .to_string(),
    );
    assert_eq!(seed, failing[0]["seed"].as_u64().unwrap());
    let table = stdout(&out);
    assert!(table.contains("FAILED   Always"), "{table}");
    assert!(
        table.contains(&format!("first failing seed {seed}: {cmd}")),
        "{table}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("name=\"money is conserved\">"), "{xml}");
    assert!(
        xml.contains("<testcase classname=\"promise.Reachable\" name=\"both workers finished\"/>"),
        "{xml}"
    );
    // The reproduce line brings the failure back bit for bit, and the summary names it.
    let words: Vec<&str> = cmd.split_whitespace().collect();
    assert_eq!(&words[..2], &["wio", "run"], "{cmd}");
    let (o, s) = run_with_summary(&[&words[2..], &["--quiet", "--no-summary"]].concat());
    assert_eq!(o.status.code(), Some(108), "{}", stderr(&o));
    assert_eq!(s["trace_hash"], failing[0]["trace_hash"]);
    assert_eq!(promise(&s, "money is conserved")["status"], "violated");
    assert!(promise(&s, "money is conserved")["first_failure_details"]
        .as_str()
        .unwrap()
        .contains("\"a\":"));
    assert!(
        stderr(&o).contains("VIOLATED Always \"money is conserved\""),
        "{}",
        stderr(&o)
    );
    // --stop-on-violation ends the run there.
    let (o, stopped) = run_with_summary(
        &[
            &words[2..],
            &["--quiet", "--no-summary", "--stop-on-violation"],
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(108));
    assert!(
        stopped["error"]
            .as_str()
            .unwrap()
            .contains("--stop-on-violation"),
        "{stopped}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn shell_promises_events_and_seeded_numbers() {
    if !require_riscv_guests("shell_promises_events_and_seeded_numbers") {
        return;
    }
    let cl = cmdline("wio.promises=demo");
    let run = |seed: &str| {
        run_with_summary(&[
            "--arch",
            "riscv64",
            "--seed",
            seed,
            "--cmdline",
            &cl,
            "--no-summary",
        ])
    };
    let (o, s) = run("1");
    // A `sometimes` registered at start and never reached fails the run.
    assert_eq!(o.status.code(), Some(108), "{}", stderr(&o));
    assert_eq!(promise(&s, "the disk filled up")["status"], "unreached");
    assert_eq!(promise(&s, "uname works")["status"], "passed");
    assert_eq!(s["promises"]["events"]["demo"], 1);
    assert_eq!(s["promises"]["channel"]["random_requests"], 2);
    assert!(
        stderr(&o).contains("NEVER REACHED Sometimes \"the disk filled up\""),
        "{}",
        stderr(&o)
    );
    let numbers = |o: &std::process::Output| {
        console_line(&stdout(o), "workload: wio-random: ")
            .unwrap()
            .to_string()
    };
    let (again, s2) = run("1");
    assert_eq!(numbers(&again), numbers(&o), "one seed, the same numbers");
    assert_eq!(s2["trace_hash"], s["trace_hash"]);
    let (other, _) = run("2");
    assert_ne!(numbers(&other), numbers(&o), "another seed, other numbers");
}

#[test]
fn a_hostile_program_is_counted_not_obeyed() {
    if !require_riscv_guests("a_hostile_program_is_counted_not_obeyed") {
        return;
    }
    let cl = cmdline("wio.promises=flood");
    let (o, s) = run_with_summary(&[
        "--arch",
        "riscv64",
        "--seed",
        "1",
        "--cmdline",
        &cl,
        "--no-summary",
    ]);
    assert_eq!(s["exit_status"], 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("workload: flood done"));
    let p = &s["promises"];
    assert_eq!(
        p["events"]["flood"], 27_000,
        "every line of the flood counted: {p}"
    );
    assert_eq!(p["malformed"], 3, "{p}");
    assert_eq!(p["channel"]["overlong_lines"], 1, "{p}");
    assert!(
        p["channel"]["random_refused"].as_u64().unwrap() > 500_000,
        "{p}"
    );
    assert_eq!(promise(&s, "still standing")["status"], "passed");
}

#[test]
fn a_fault_profile_can_start_when_setup_is_complete() {
    if !require_riscv_guests("a_fault_profile_can_start_when_setup_is_complete") {
        return;
    }
    let dir = scratch("promises-after-setup");
    let profile = dir.join("after.toml");
    std::fs::write(
        &profile,
        "after = \"setup-complete\"\nstart_ms = 1\nend_ms = 30\n[[rule]]\nkind = \"pause\"\ncount = [2, 2]\nduration_ms = [5, 10]\n",
    )
    .unwrap();
    let cl = cmdline("wio.bank=300000,100");
    let (o, s) = run_with_summary(&[
        "--arch",
        "riscv64",
        "--seed",
        "3",
        "--cmdline",
        &cl,
        "--quiet",
        "--no-summary",
        "--faults",
        profile.to_str().unwrap(),
    ]);
    let setup = s["promises"]["setup_complete_ns"].as_u64().unwrap();
    let faults = s["faults"].as_array().unwrap();
    assert_eq!(faults.len(), 2, "{}", stderr(&o));
    for f in faults {
        let at = f["at_ns"].as_u64().unwrap();
        assert!(
            (setup + 1_000_000..setup + 30_000_000).contains(&at),
            "{f} vs setup at {setup}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_python_program_instrumented_with_the_antithesis_sdk_reports_to_wio() {
    let name = "a_python_program_instrumented_with_the_antithesis_sdk_reports_to_wio";
    if !require_riscv_guests(name) {
        return;
    }
    let Some(disk) = wio_e2e_tests::require_riscv_artifact(
        name,
        "RISCV64_PYTHON_ROOTFS",
        wio_e2e_tests::Capability::RiscvGuests,
    ) else {
        return;
    };
    let disk = disk.to_str().unwrap().to_string();
    // The PyPI `antithesis` SDK, unmodified, in Debian's python3.13; the program is
    // images/probe/antithesis_demo.py (a primary and a replica under a seeded workload).
    let run = |seed: &str, mode: &str| {
        let cl = cmdline(&format!(
            "root=/dev/vda rw rootfstype=ext4 init=/init wio.crash=0 wio.pysdk={mode}"
        ));
        run_with_summary(&[
            "--arch",
            "riscv64",
            "--seed",
            seed,
            &disk,
            "--cmdline",
            &cl,
            "--no-summary",
        ])
    };
    let line = |o: &std::process::Output, prefix: &str| {
        console_line(&stdout(o), prefix)
            .unwrap_or_else(|| panic!("no {prefix:?} line:\n{}", stdout(o)))
            .to_string()
    };
    let (o, s) = run("1", "1");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(s["exit_status"], 0);
    // The SDK chose its libvoidstar.so handler (not the local-file or no-op one).
    assert_eq!(
        line(&o, "pysdk: handler:"),
        "pysdk: handler: VoidstarHandler"
    );
    assert!(stdout(&o).contains("pysdk: done"));
    let p = &s["promises"];
    assert_eq!(p["list"].as_array().unwrap().len(), 4, "{p}");
    for (id, display, status, passes) in [
        (
            "the replica matches the primary after a sync",
            "Always",
            "passed",
            1,
        ),
        ("a delete removed a key", "Sometimes", "passed", 1),
        ("the workload finished", "Reachable", "passed", 1),
        // Only in the catalogue the SDK registered at start: never reached, which is
        // what an Unreachable must be.
        (
            "the replica holds a key nobody wrote",
            "Unreachable",
            "passed",
            0,
        ),
    ] {
        let v = promise(&s, id);
        assert_eq!(v["display_type"], display, "{v}");
        assert_eq!(v["status"], status, "{v}");
        assert_eq!(v["passes"], passes, "{v}");
    }
    assert_eq!(
        promise(&s, "the replica holds a key nobody wrote")["must_hit"],
        false
    );
    assert!(p["setup_complete_ns"].as_u64().is_some(), "{p}");
    assert_eq!(p["events"]["pysdk_demo"], 1, "{p}");
    assert_eq!(p["malformed"], 0, "{p}");
    // The SDK introduced itself through fuzz_json_data.
    let sdks = p["sdks"].as_array().unwrap();
    assert_eq!(sdks.len(), 1, "{p}");
    let sdk: serde_json::Value = serde_json::from_str(sdks[0].as_str().unwrap()).unwrap();
    assert_eq!(sdk["language"]["name"], "Python", "{sdk}");
    assert!(sdk["language"]["version"]
        .as_str()
        .unwrap()
        .starts_with("3.13"));
    assert_eq!(sdk["sdk_version"], "0.4.0", "{sdk}");
    // Every get_random went through fuzz_get_random to wio.random, one u64 each: four
    // draws, two choices for each of the 24 steps and a value for each put.
    let ops = line(&o, "pysdk: ops:");
    let puts = ops.split_whitespace().filter(|w| *w == "put").count() as u64;
    let c = &p["channel"];
    assert_eq!(c["random_requests"], 4 + 2 * 24 + puts, "{c}");
    assert_eq!(c["random_bytes"], (4 + 2 * 24 + puts) * 8, "{c}");
    // Same seed: the same numbers and the same run; another seed: other numbers.
    let (again, s2) = run("1", "1");
    assert_eq!(line(&again, "pysdk: random:"), line(&o, "pysdk: random:"));
    assert_eq!(s2["trace_hash"], s["trace_hash"]);
    assert_eq!(again.stdout, o.stdout);
    let (other, _) = run("2", "1");
    assert_ne!(line(&other, "pysdk: random:"), line(&o, "pysdk: random:"));
    assert_ne!(line(&other, "pysdk: ops:"), ops);
    // The demo's bug (a sync loses the newest write) breaks the Always: the run fails
    // and the summary names it with the SDK's details.
    let (bug, sb) = run("1", "bug");
    assert_eq!(bug.status.code(), Some(108), "{}", stderr(&bug));
    let v = promise(&sb, "the replica matches the primary after a sync");
    assert_eq!(v["status"], "violated", "{v}");
    assert!(
        v["first_failure_details"]
            .as_str()
            .unwrap()
            .contains("\"replica\":"),
        "{v}"
    );
    assert!(
        stderr(&bug).contains("VIOLATED Always \"the replica matches the primary after a sync\""),
        "{}",
        stderr(&bug)
    );
    assert_eq!(line(&bug, "pysdk: random:"), line(&o, "pysdk: random:"));
}
