//! End-to-end tests of the seccomp sandbox (`wio_machines::sandbox`): a forbidden system call from a
//! wio thread ends the run with a message naming it (exit 107); under the filter a riscv64
//! boot, a 3-node world and an exploration give the same trace hashes as with
//! `--no-sandbox`, and the summaries say which it was. They need images/build-all-riscv64.sh.

#![forbid(unsafe_code)]

use wio_e2e_tests::{
    explore_to, read_report, require_riscv_guests, riscv_snapshot, scratch, stderr, wio_env,
    with_summary, write_file,
};

/// Three nodes that ping each other by name and talk TCP (also a reference run of
/// `ci/trace_hashes.sh`).
const WORLD: &str = include_str!("../worlds/three-nodes.toml");

#[test]
fn a_forbidden_call_from_a_wio_thread_ends_the_run_naming_it() {
    if !require_riscv_guests("a_forbidden_call_from_a_wio_thread_ends_the_run_naming_it") {
        return;
    }
    let args = ["run", "--arch", "riscv64", "--seed", "42", "--quiet"];
    let out = wio_env(&args, "WIO_SANDBOX_PROBE", "socket");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(107), "{err}");
    assert!(
        err.contains("sandbox: thread wio-probe made the system call socket (41)"),
        "the message names the thread and the call: {err}"
    );
    assert!(err.contains("--no-sandbox"), "it says what to do: {err}");
    // The same probe with the sandbox off: the call is made and the run goes on.
    let mut off = vec!["--no-sandbox"];
    off.extend_from_slice(&args);
    let out = wio_env(&off, "WIO_SANDBOX_PROBE", "socket");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // A probe that does not exist is a usage error, not a silent no-op.
    let out = wio_env(&args, "WIO_SANDBOX_PROBE", "execve");
    assert_eq!(out.status.code(), Some(100), "{}", stderr(&out));
}

#[test]
fn a_boot_a_world_and_an_exploration_hash_the_same_under_the_filter() {
    if !require_riscv_guests("a_boot_a_world_and_an_exploration_hash_the_same_under_the_filter") {
        return;
    }
    // One riscv64 boot to its end.
    let boot = ["--arch", "riscv64", "--seed", "7", "--quiet"];
    let (on, s_on) = with_summary("run", &boot);
    assert_eq!(on.status.code(), Some(0), "{}", stderr(&on));
    assert_eq!(s_on["sandbox"], "on (seccomp)");
    let (off, s_off) = with_summary("run", &[&["--no-sandbox"][..], &boot].concat());
    assert_eq!(off.status.code(), Some(0), "{}", stderr(&off));
    assert_eq!(s_off["sandbox"], "off (--no-sandbox)");
    assert_eq!(s_on["trace_hash"], s_off["trace_hash"]);

    // A 3-node world: its node threads start before the filter and get it (TSYNC).
    let dir = scratch("sandbox");
    let world = write_file(&dir, "world.toml", WORLD);
    let (on, w_on) = with_summary("sim", &[&world, "--seed", "1", "--quiet"]);
    assert_eq!(on.status.code(), Some(0), "{}", stderr(&on));
    assert_eq!(w_on["sandbox"], "on (seccomp)");
    let (off, w_off) = with_summary("sim", &[&world, "--seed", "1", "--quiet", "--no-sandbox"]);
    assert_eq!(off.status.code(), Some(0), "{}", stderr(&off));
    assert_eq!(w_off["sandbox"], "off (--no-sandbox)");
    assert_eq!(w_on["world_trace_hash"], w_off["world_trace_hash"]);

    // An exploration: workers started after the filter, copy-on-write branches (memfd).
    let snap = dir.join("start.snap");
    riscv_snapshot(&snap, 3, "1.8s");
    let hashes = |extra: &[&str], name: &str| -> Vec<String> {
        let rep = dir.join(name);
        let out = explore_to(&snap, "0..4", &rep, extra);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        read_report(&rep)["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|r| r["trace_hash"].as_str().expect("a trace hash").to_string())
            .collect()
    };
    let on = hashes(&[], "on.json");
    assert_eq!(on.len(), 4);
    assert_eq!(on, hashes(&["--no-sandbox"], "off.json"));
}

/// Descriptors wio inherits from its parent (a harness's pipes, a shell's redirections)
/// are closed when it enters the sandbox: a guest that got hold of a device model could
/// reach nothing through them. What wio opened itself (its trace) stays open.
#[test]
fn inherited_descriptors_are_closed_when_the_sandbox_comes_in() {
    if !require_riscv_guests("inherited_descriptors_are_closed_when_the_sandbox_comes_in") {
        return;
    }
    let dir = scratch("sandbox-fds");
    let trace = dir.join("t.jsonl");
    let trace = trace.to_str().expect("utf-8 temp path");
    // bash opens 7 and 8 without close-on-exec, then becomes wio.
    let out = std::process::Command::new("bash")
        .args([
            "-c",
            "exec 7</dev/null 8>/dev/null; exec \"$0\" \"$@\"",
            wio_e2e_tests::wio_bin()
                .to_str()
                .expect("utf-8 binary path"),
            "run",
            "--arch",
            "riscv64",
            "--seed",
            "42",
            "--quiet",
            "--no-summary",
            "--trace",
            trace,
        ])
        .env("WIO_SANDBOX_PROBE", "fds")
        .output()
        .expect("spawn bash");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let line = err
        .lines()
        .find_map(|l| l.strip_prefix("sandbox: open descriptors: "))
        .unwrap_or_else(|| panic!("the probe lists the descriptors: {err}"));
    let fds: Vec<u32> = line.split(' ').filter_map(|f| f.parse().ok()).collect();
    assert!(
        !fds.contains(&7) && !fds.contains(&8),
        "inherited 7 and 8 closed: {line}"
    );
    assert!(
        fds.starts_with(&[0, 1, 2]),
        "stdin, stdout and stderr stay: {line}"
    );
    assert!(fds.len() >= 4, "the trace wio opened stays open: {line}");
}

/// A descriptor the command line names as a file stays open: a shell's process
/// substitution (`--summary-json >(cat > FILE)`, i.e. /dev/fd/63) gets the summary, which
/// wio opens only at the end of the run, after the sandbox came in.
#[test]
fn a_descriptor_named_on_the_command_line_stays_open() {
    if !require_riscv_guests("a_descriptor_named_on_the_command_line_stays_open") {
        return;
    }
    let dir = scratch("sandbox-named-fd");
    let out_file = dir.join("summary.json");
    let script = format!(
        "\"$0\" run --arch riscv64 --seed 42 --quiet --no-summary --summary-json >(cat > '{}'); status=$?; wait; exit $status",
        out_file.display()
    );
    let out = std::process::Command::new("bash")
        .args([
            "-c",
            &script,
            wio_e2e_tests::wio_bin()
                .to_str()
                .expect("utf-8 binary path"),
        ])
        .output()
        .expect("spawn bash");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(&out_file).expect("the summary came through the pipe");
    let summary: serde_json::Value = serde_json::from_str(&text).expect("a JSON summary");
    assert_eq!(summary["seed"], 42, "{text}");
}
