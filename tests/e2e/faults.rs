//! End-to-end tests of fault plans: each kind observed from inside the guest (a network
//! partition loses pings, then they come back; a disk error reaches the guest's I/O; an
//! RTC step moves the clock the guest reads), identical runs per seed, a plan written by
//! one run and replayed by another giving the same trace, and bad plans and profiles as
//! one-line errors naming the field. riscv64 tests need images/build-all-riscv64.sh.

#![forbid(unsafe_code)]

use std::path::Path;
use wio_e2e_tests::{
    console_line, require_kvm, require_riscv_guests, riscv_guest_artifact, run_with_summary,
    scratch, wio,
};

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

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
    let plan = write(&dir, "plan.json", PARTITION);
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
    let Some(rootfs) = riscv_guest_artifact("RISCV64_ROOTFS") else {
        eprintln!("SKIPPED: a_disk_error_reaches_the_guests_io: no RISCV64_ROOTFS");
        return;
    };
    let dir = scratch("faults-disk");
    // The workload writes and syncs a file at about 2.11 s of virtual time; writes fail
    // from 2.1 s for 200 ms. The run stops at the guest kernel's first I/O error report
    // (after the error a crashed journal keeps the guest busy for a long time).
    let plan = write(
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
    let plan = write(
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
            write(
                &dir,
                "target.json",
                r#"{"faults": [{"at_ns": 1, "target": "disk", "kind": "partition", "params": {"direction": "both"}}]}"#,
            ),
            "--fault-plan",
            101,
            "faults[0].target",
        ),
        (
            write(
                &dir,
                "ppm.json",
                r#"{"faults": [{"at_ns": 1, "target": "net", "kind": "loss", "params": {"ppm": 7000000}}]}"#,
            ),
            "--fault-plan",
            101,
            "faults[0].params.ppm",
        ),
        (
            write(
                &dir,
                "kind.json",
                r#"{"faults": [{"at_ns": 1, "target": "net", "kind": "meteor"}]}"#,
            ),
            "--fault-plan",
            101,
            "meteor",
        ),
        (
            write(
                &dir,
                "p.toml",
                "[[rule]]\nkind = \"loss\"\nvalue = [5, 1]\n",
            ),
            "--faults",
            101,
            "rule[0].value",
        ),
        ("mild".to_string(), "--faults", 100, "none, light, heavy"),
        (
            write(
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
