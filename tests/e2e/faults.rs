//! End-to-end tests of fault plans: each kind observed from inside the guest (a network
//! partition loses pings, then they come back; a disk error reaches the guest's I/O; an
//! RTC step moves the clock the guest reads), identical runs per seed, a plan written by
//! one run and replayed by another giving the same trace, restores with another seed
//! re-drawing the faults still to come (and explore reports listing each seed's faults,
//! which its reproduce line brings back), and bad plans and profiles as one-line errors
//! naming the field. riscv64 tests need images/build-all-riscv64.sh.

#![forbid(unsafe_code)]

use std::path::Path;
use wio_e2e_tests::{
    console_line, require_kvm, require_riscv_guests, run_with_summary, scratch, stderr, stdout,
    wio, write_file,
};

/// The small guest pings the peer at about 0.1, 1.1 and 2.1 s of virtual time.
const PARTITION: &str = r#"{"faults": [
  {"at_ns": 500000000, "duration_ns": 1000000000, "target": "net", "kind": "partition", "params": {"direction": "both"}},
  {"at_ns": 1000000000, "target": "clock", "kind": "rtc-step", "params": {"delta_s": 3600}}
]}"#;

#[test]
fn a_partition_loses_pings_then_heals_and_an_rtc_step_moves_the_guests_clock() {
    if !require_riscv_guests(
        "a_partition_loses_pings_then_heals_and_an_rtc_step_moves_the_guests_clock",
    ) {
        return;
    }
    let dir = scratch("faults-net");
    let plan = write_file(&dir, "plan.json", PARTITION);
    let (clean_out, clean) =
        run_with_summary(&["--arch", "riscv64", "--seed", "1", "--no-summary"]);
    let (out, s) = run_with_summary(&[
        "--arch",
        "riscv64",
        "--seed",
        "1",
        "--no-summary",
        "--fault-plan",
        &plan,
    ]);
    assert_eq!(s["exit_status"], 0, "{}", stderr(&out));
    let text = stdout(&out);
    let clean_text = stdout(&clean_out);
    assert!(
        clean_text.contains("workload: net: 3 replies"),
        "{clean_text}"
    );
    // The second ping falls in the partition; the third, after it, is answered.
    let net = console_line(&text, "workload: net:").unwrap();
    assert!(net.starts_with("workload: net: 2 replies"), "{net}");
    // The RTC the guest reads jumped an hour.
    let rtc = |t: &str| -> i64 {
        console_line(t, "workload: rtc: ").unwrap()["workload: rtc: ".len()..]
            .trim()
            .parse()
            .unwrap()
    };
    let jump = rtc(&text) - rtc(&clean_text);
    assert!((3599..=3601).contains(&jump), "rtc moved by {jump} s");
    // The summary lists both faults, and the trace has a line for each edge.
    let faults = s["faults"].as_array().unwrap();
    assert_eq!(faults.len(), 2, "{s}");
    assert_eq!(faults[0]["kind"], "partition");
    assert_eq!(faults[0]["ended"], true);
    assert_eq!(faults[1]["kind"], "rtc-step");
    assert!(clean["faults"].is_null(), "no plan, no faults listed");
    let (_, again) = run_with_summary(&[
        "--arch",
        "riscv64",
        "--seed",
        "1",
        "--quiet",
        "--no-summary",
        "--fault-plan",
        &plan,
    ]);
    assert_eq!(again["trace_hash"], s["trace_hash"]);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_drawn_plan_written_out_and_replayed_gives_the_same_trace() {
    if !require_riscv_guests("a_drawn_plan_written_out_and_replayed_gives_the_same_trace") {
        return;
    }
    let dir = scratch("faults-replay");
    let out_plan = dir.join("drawn.json");
    let (o, drawn) = run_with_summary(&[
        "--arch",
        "riscv64",
        "--seed",
        "4",
        "--quiet",
        "--no-summary",
        "--faults",
        "heavy",
        "--fault-plan-out",
        out_plan.to_str().unwrap(),
        "--max-virtual-secs",
        "60",
    ]);
    assert!(out_plan.exists(), "{}", stderr(&o));
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out_plan).unwrap()).unwrap();
    assert!(
        !plan["faults"].as_array().unwrap().is_empty(),
        "heavy draws faults: {plan}"
    );
    let (_, replayed) = run_with_summary(&[
        "--arch",
        "riscv64",
        "--seed",
        "4",
        "--quiet",
        "--no-summary",
        "--fault-plan",
        out_plan.to_str().unwrap(),
        "--max-virtual-secs",
        "60",
    ]);
    assert_eq!(replayed["trace_hash"], drawn["trace_hash"]);
    // Another seed draws another plan.
    let other_plan = dir.join("other.json");
    wio(&[
        "run",
        "--arch",
        "riscv64",
        "--seed",
        "5",
        "--quiet",
        "--no-summary",
        "--faults",
        "heavy",
        "--fault-plan-out",
        other_plan.to_str().unwrap(),
        "--max-virtual-secs",
        "1",
    ]);
    assert_ne!(
        std::fs::read_to_string(&other_plan).unwrap(),
        std::fs::read_to_string(&out_plan).unwrap()
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_disk_error_reaches_the_guests_io() {
    if !require_riscv_guests("a_disk_error_reaches_the_guests_io") {
        return;
    }
    let Some(rootfs) = wio_e2e_tests::require_riscv_artifact(
        "a_disk_error_reaches_the_guests_io",
        "RISCV64_ROOTFS",
        wio_e2e_tests::Capability::RiscvGuests,
    ) else {
        return;
    };
    let dir = scratch("faults-disk");
    // The workload writes and syncs a file at about 2.11 s of virtual time; writes fail
    // from 2.1 s for 200 ms. The run stops at the guest kernel's first I/O error report
    // (after the error a crashed journal keeps the guest busy for a long time).
    let plan = write_file(
        &dir,
        "plan.json",
        r#"{"faults": [{"at_ns": 2100000000, "duration_ns": 200000000, "target": "disk", "kind": "error", "params": {"op": "write"}}]}"#,
    );
    let (out, s) = run_with_summary(&[
        "--arch",
        "riscv64",
        "--seed",
        "2",
        "--no-summary",
        "--fault-plan",
        &plan,
        rootfs.to_str().unwrap(),
        "--until",
        "console:I/O error",
        "--max-virtual-secs",
        "30",
    ]);
    assert_eq!(
        s["stopped_at"],
        "I/O error",
        "the guest saw no I/O error: {}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("op 0x1:(WRITE)"), "a write failed");
    assert!(s["disk"]["errors"].as_u64().unwrap() > 0, "{s}");
    assert_eq!(s["faults"][0]["kind"], "error");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_x86_64_test_guest_sees_an_rtc_step() {
    if !require_kvm("the_x86_64_test_guest_sees_an_rtc_step") {
        return;
    }
    let dir = scratch("faults-x86");
    let plan = write_file(
        &dir,
        "plan.json",
        r#"{"faults": [{"at_ns": 5000000000, "target": "clock", "kind": "rtc-step", "params": {"delta_s": 7200}}]}"#,
    );
    let (out, s) = run_with_summary(&["--seed", "3", "--no-summary", "--fault-plan", &plan]);
    let text = stdout(&out);
    // The guest reads the CMOS RTC before and after its 10 s sleep: two hours more.
    assert!(text.contains("rtc: 2026-01-01T02:00:10Z"), "{text}");
    assert!(text.contains("FAIL rtc did not advance 10 s"), "{text}");
    assert_eq!(
        s["exit_status"], 1,
        "the guest's own check fails on the jump"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bad_plans_and_profiles_are_one_line_errors_naming_the_field() {
    let dir = scratch("faults-bad");
    let cases = [
        (
            write_file(
                &dir,
                "target.json",
                r#"{"faults": [{"at_ns": 1, "target": "disk", "kind": "partition", "params": {"direction": "both"}}]}"#,
            ),
            "--fault-plan",
            101,
            "faults[0].target",
        ),
        (
            write_file(
                &dir,
                "ppm.json",
                r#"{"faults": [{"at_ns": 1, "target": "net", "kind": "loss", "params": {"ppm": 7000000}}]}"#,
            ),
            "--fault-plan",
            101,
            "faults[0].params.ppm",
        ),
        (
            write_file(
                &dir,
                "kind.json",
                r#"{"faults": [{"at_ns": 1, "target": "net", "kind": "meteor"}]}"#,
            ),
            "--fault-plan",
            101,
            "meteor",
        ),
        (
            write_file(
                &dir,
                "p.toml",
                "[[rule]]\nkind = \"loss\"\nvalue = [5, 1]\n",
            ),
            "--faults",
            101,
            "rule[0].value",
        ),
        (
            write_file(&dir, "kind.toml", "[[rule]]\nkind = \"meteor\"\n"),
            "--faults",
            101,
            "line 2, rule.kind: unknown variant `meteor`, expected one of `partition`",
        ),
        (
            write_file(
                &dir,
                "choice.toml",
                "[[rule]]\nkind = \"error\"\nchoices = [\"both\"]\n",
            ),
            "--faults",
            101,
            "rule[0].choices: \"both\" is not a choice of error: read, write, any",
        ),
        ("mild".to_string(), "--faults", 100, "none, light, heavy"),
        (
            write_file(
                &dir,
                "nodisk.json",
                r#"{"faults": [{"at_ns": 1, "duration_ns": 5, "target": "disk", "kind": "error", "params": {"op": "read"}}]}"#,
            ),
            "--fault-plan",
            100,
            "no disk",
        ),
    ];
    for (arg, flag, code, needle) in cases {
        let o = wio(&["run", "--arch", "riscv64", "--seed", "1", flag, &arg]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(code), "{flag} {arg}: {err}");
        assert!(err.contains(needle), "{flag} {arg}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A profile whose window (0.2 s to 2.2 s) straddles the snapshot point (1 s) of
/// [`profile_snapshot`], with enough faults that two seeds draw different futures.
const STRADDLING: &str = r#"start_ms = 200
end_ms = 2200
[[rule]]
kind = "loss"
count = [3, 3]
duration_ms = [100, 400]
value = [300000, 1000000]
[[rule]]
kind = "delay"
count = [3, 3]
duration_ms = [100, 400]
value = [1000000, 100000000]
[[rule]]
kind = "partition"
count = [2, 2]
duration_ms = [100, 600]
choices = ["both", "to-guest", "from-guest"]
[[rule]]
kind = "rtc-step"
count = [1, 1]
value = [-3600, 3600]
"#;

/// When [`profile_snapshot`] snapshots (virtual ns; the snapshot is at the first step
/// boundary after it).
const SNAPSHOT_NS: u64 = 1_000_000_000;

/// Boots the small guest with seed 1 and the [`STRADDLING`] profile, snapshotting at
/// 1 s; returns the snapshot, the original run's summary and its plan (JSON).
fn profile_snapshot(dir: &Path) -> (String, serde_json::Value, serde_json::Value) {
    let profile = write_file(dir, "straddling.toml", STRADDLING);
    let snap = dir.join("faults.snap");
    let plan = dir.join("original-plan.json");
    let (o, s) = run_with_summary(&[
        "--arch",
        "riscv64",
        "--seed",
        "1",
        "--quiet",
        "--no-summary",
        "--faults",
        &profile,
        "--fault-plan-out",
        plan.to_str().unwrap(),
        "--snapshot-at",
        "1s",
        "--snapshot-out",
        snap.to_str().unwrap(),
    ]);
    assert_eq!(s["exit_status"], 0, "{}", stderr(&o));
    (snap.to_str().unwrap().to_string(), s, read_json(&plan))
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The faults of a plan (JSON) that start at or before / after the snapshot point.
fn past_and_future(plan: &serde_json::Value) -> (Vec<serde_json::Value>, Vec<serde_json::Value>) {
    plan["faults"]
        .as_array()
        .unwrap()
        .iter()
        .cloned()
        .partition(|f| f["at_ns"].as_u64().unwrap() <= SNAPSHOT_NS)
}

#[test]
fn a_restore_with_another_seed_redraws_the_faults_still_to_come() {
    if !require_riscv_guests("a_restore_with_another_seed_redraws_the_faults_still_to_come") {
        return;
    }
    let dir = scratch("faults-redraw");
    let (snap, original, original_plan) = profile_snapshot(&dir);
    let (past, future) = past_and_future(&original_plan);
    assert!(!past.is_empty() && !future.is_empty(), "{original_plan}");
    // Restores the snapshot with `extra` arguments; returns the summary, the plan the
    // restored run went on with and its trace.
    let restore = |name: &str, extra: &[&str]| {
        let plan = dir.join(format!("{name}-plan.json"));
        let trace = dir.join(format!("{name}.trace"));
        let mut args = vec![
            "--from",
            &snap,
            "--quiet",
            "--no-summary",
            "--fault-plan-out",
            plan.to_str().unwrap(),
            "--trace",
            trace.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let (o, s) = run_with_summary(&args);
        assert_eq!(s["exit_status"], 0, "{name}: {}", stderr(&o));
        (
            s,
            read_json(&plan),
            std::fs::read_to_string(&trace).unwrap(),
        )
    };
    // The snapshot's own seed continues the original run bit for bit, plan included.
    let (same, same_plan, same_trace) = restore("same", &[]);
    assert_eq!(same["trace_hash"], original["trace_hash"]);
    assert_eq!(same_plan, original_plan);
    assert!(!same_trace.contains("\"fault-plan\""), "nothing re-drawn");

    // Another seed: the started faults stay, the future is drawn again from the profile.
    let (a, a_plan, a_trace) = restore("seed7", &["--seed", "7"]);
    let (a_past, a_future) = past_and_future(&a_plan);
    assert_eq!(a_past, past, "started faults stay");
    assert_ne!(a_future, future, "seed 7 draws its own future");
    let line = a_trace
        .lines()
        .find(|l| l.contains("\"ev\":\"fault-plan\""))
        .expect("the trace says the future was re-drawn");
    let line: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(line["why"], "reseed");
    assert_eq!(line["kept"], past.len());
    assert_eq!(line["dropped"], future.len());
    assert_eq!(line["future"], a_future.len());
    // The same seed again: the same faults, the same trace.
    let (again, again_plan, _) = restore("seed7-again", &["--seed", "7"]);
    assert_eq!(again["trace_hash"], a["trace_hash"]);
    assert_eq!(again["faults"], a["faults"]);
    assert_eq!(again_plan, a_plan);
    // Another seed, other faults.
    let (b, b_plan, _) = restore("seed8", &["--seed", "8"]);
    assert_eq!(past_and_future(&b_plan).0, past);
    assert_ne!(b["faults"], a["faults"], "seeds 7 and 8 apply other faults");
    assert_ne!(b["trace_hash"], a["trace_hash"]);

    // The plan seed 7 wrote, given back exactly, replays seed 7's faults.
    let a_plan_file = dir.join("seed7-plan.json");
    let (given, given_plan, given_trace) = restore(
        "given",
        &["--seed", "7", "--fault-plan", a_plan_file.to_str().unwrap()],
    );
    assert_eq!(given_plan, a_plan);
    assert_eq!(given["faults"], a["faults"]);
    assert_eq!(given["console_sha256"], a["console_sha256"]);
    assert!(given_trace.contains("\"why\":\"plan\""));
    // --faults none on a restore: no faults from the snapshot point on.
    let (_, none_plan, _) = restore("none", &["--seed", "7", "--faults", "none"]);
    assert_eq!(past_and_future(&none_plan), (past, Vec::new()));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn explore_reports_each_seeds_faults_and_its_reproduce_line_brings_them_back() {
    if !require_riscv_guests(
        "explore_reports_each_seeds_faults_and_its_reproduce_line_brings_them_back",
    ) {
        return;
    }
    let dir = scratch("faults-explore");
    let (snap, _, _) = profile_snapshot(&dir);
    let rep = dir.join("report.json");
    let o = wio(&[
        "explore",
        "--from",
        &snap,
        "--seeds",
        "7..9",
        "--jobs",
        "2",
        // Every seed shows it: every seed fails and its faults are printed.
        "--fail-on",
        "workers exited",
        "--report",
        rep.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("  with faults: "), "{}", stdout(&o));
    let r = read_json(&rep);
    let (seven, eight) = (&r["results"][0], &r["results"][1]);
    assert!(!seven["faults"].as_array().unwrap().is_empty(), "{seven}");
    assert_ne!(seven["faults"], eight["faults"]);
    // The reproduce line, run by a shell as printed, brings back the trace and the faults.
    let rest = seven["reproduce"]
        .as_str()
        .unwrap()
        .strip_prefix("wio run ")
        .expect("a wio run command");
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
    assert_eq!(o.status.code(), Some(0), "{rest}: {}", stderr(&o));
    let s = read_json(&summary);
    assert_eq!(s["trace_hash"], seven["trace_hash"]);
    assert_eq!(s["faults"], seven["faults"]);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_x86_64_restore_with_another_seed_redraws_its_rtc_steps() {
    if !require_kvm("an_x86_64_restore_with_another_seed_redraws_its_rtc_steps") {
        return;
    }
    let dir = scratch("faults-x86-redraw");
    let profile = write_file(&dir,
        "steps.toml",
        "start_ms = 1000\nend_ms = 12000\n[[rule]]\nkind = \"rtc-step\"\ncount = [4, 4]\nvalue = [-7200, 7200]\n",
    );
    let snap = dir.join("x86.snap");
    let o = wio(&[
        "run",
        "--seed",
        "3",
        "--quiet",
        "--no-summary",
        "--faults",
        &profile,
        "--snapshot-at",
        "5s",
        "--snapshot-out",
        snap.to_str().unwrap(),
    ]);
    assert!(snap.exists(), "{}", stderr(&o));
    let restore = |seed: &str| {
        let (o, s) = run_with_summary(&[
            "--from",
            snap.to_str().unwrap(),
            "--seed",
            seed,
            "--quiet",
            "--no-summary",
        ]);
        // The test guest's own check fails when its RTC jumps: any status, but a status.
        assert!(s["exit_status"].is_u64(), "{}", stderr(&o));
        s
    };
    let (a, again, b) = (restore("7"), restore("7"), restore("8"));
    assert_eq!(again["trace_hash"], a["trace_hash"]);
    assert_eq!(again["faults"], a["faults"]);
    assert_ne!(
        b["faults"], a["faults"],
        "seeds 7 and 8 step the RTC differently"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn x86_64_node_faults_restart_or_pause_the_test_guest_the_same_way_each_run() {
    if !require_kvm("x86_64_node_faults_restart_or_pause_the_test_guest_the_same_way_each_run") {
        return;
    }
    let dir = scratch("faults-x86-node");
    // A power cut at 5 s (inside the guest's 10 s sleep), the power back 1 s later.
    let crash = write_file(
        &dir,
        "crash.json",
        r#"{"faults": [{"at_ns": 5000000000, "duration_ns": 1000000000, "target": "node", "kind": "crash", "params": {"unflushed": "lost"}}]}"#,
    );
    let trace = dir.join("crash.jsonl");
    let snap = dir.join("before.snap");
    let (out, s) = run_with_summary(&[
        "--seed",
        "3",
        "--no-summary",
        "--fault-plan",
        &crash,
        "--trace",
        trace.to_str().unwrap(),
        "--snapshot-at",
        "3s",
        "--snapshot-out",
        snap.to_str().unwrap(),
    ]);
    let text = stdout(&out);
    assert_eq!(s["exit_status"], 0, "{}\n{text}", stderr(&out));
    assert_eq!(s["restarts"], 1, "{s}");
    assert_eq!(s["stopped_ns"], 1_000_000_000u64, "{s}");
    // Every x86-64 summary says where the machine can interrupt its guest.
    assert!(
        s["preemption"]
            .as_str()
            .is_some_and(|p| p.starts_with("at exits only")),
        "{s}"
    );
    // Two boots on the console; the second ran the whole guest from the start, 6 s in.
    assert_eq!(text.matches("wio x86-64 test guest").count(), 2, "{text}");
    assert_eq!(text.matches("test guest: ok").count(), 1, "{text}");
    let v = s["virtual_ns"].as_u64().unwrap();
    assert!((16_000_000_000..17_000_000_000).contains(&v), "{s}");
    let at = |ev: &str| wio_e2e_tests::trace_event(&trace, ev);
    assert_eq!(at("power-off")["t"], 5_000_000_000u64);
    assert_eq!(at("boot")["t"], 6_000_000_000u64);
    assert_eq!(at("boot")["boot"], 2);
    // One seed, one run; a machine restored from before the cut boots again the same way.
    let (_, again) = run_with_summary(&["--seed", "3", "--no-summary", "--fault-plan", &crash]);
    assert_eq!(again["trace_hash"], s["trace_hash"]);
    let (o, restored) = run_with_summary(&["--from", snap.to_str().unwrap(), "--no-summary"]);
    assert_eq!(restored["trace_hash"], s["trace_hash"], "{}", stderr(&o));
    assert_eq!(restored["restarts"], 1);

    // A pause of 2 s at 5 s: the vCPU stops while time goes on, so the guest's 10 s sleep
    // measures about 12 s (its own check fails on it).
    let pause = write_file(
        &dir,
        "pause.json",
        r#"{"faults": [{"at_ns": 5000000000, "duration_ns": 2000000000, "target": "node", "kind": "pause"}]}"#,
    );
    let (out, p) = run_with_summary(&["--seed", "3", "--no-summary", "--fault-plan", &pause]);
    let text = stdout(&out);
    assert_eq!(p["stopped_ns"], 2_000_000_000u64, "{p}");
    assert_eq!(p["restarts"], 0);
    let slept: u64 = console_line(&text, "sleep-10s: ns=")
        .and_then(|l| l["sleep-10s: ns=".len()..].split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no sleep line: {text}"));
    assert!(
        (11_500_000_000..12_100_000_000).contains(&slept),
        "slept {slept} ns: {text}"
    );
    let (_, again) = run_with_summary(&["--seed", "3", "--no-summary", "--fault-plan", &pause]);
    assert_eq!(again["trace_hash"], p["trace_hash"]);

    // Upsets are the interpreter's: an x86-64 machine refuses them, saying so.
    let upset = write_file(
        &dir,
        "upset.json",
        r#"{"faults": [{"at_ns": 1000, "target": "node", "kind": "upset", "params": {"place": {"ram": 4096}, "bit": 1}}]}"#,
    );
    let o = wio(&["run", "--seed", "3", "--fault-plan", &upset]);
    assert_eq!(o.status.code(), Some(100), "{}", stderr(&o));
    assert!(stderr(&o).contains("faults[0] (upset)"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(dir);
}
