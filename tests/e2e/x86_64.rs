//! End-to-end tests of `wio run` with the built-in x86-64 test guest on KVM.
//! Each test skips loudly (SKIPPED: …) where /dev/kvm cannot be used.

#![forbid(unsafe_code)]

use wio_e2e_tests::{
    console_line, field, kvm_host, require_kvm, run_with_summary, scratch, stdout, wio, KvmHost,
};

/// Virtual ns for `ticks` PIT input clocks (1.193182 MHz), rounded up like wio's PIT.
fn pit_ns(ticks: u64) -> u64 {
    (ticks * 1_000_000_000).div_ceil(1_193_182)
}

#[test]
fn twenty_runs_of_one_seed_are_identical() {
    if !require_kvm("twenty_runs_of_one_seed_are_identical") {
        return;
    }
    let (first_out, first) = run_with_summary(&["--seed", "7", "--no-summary"]);
    assert_eq!(
        first["exit_status"],
        0,
        "stderr: {}",
        String::from_utf8_lossy(&first_out.stderr)
    );
    assert!(stdout(&first_out).contains("test guest: ok"));
    for i in 1..20 {
        let (out, s) = run_with_summary(&["--seed", "7", "--no-summary"]);
        assert_eq!(
            s["trace_hash"], first["trace_hash"],
            "run {i} trace differs"
        );
        assert_eq!(
            s["virtual_ns"], first["virtual_ns"],
            "run {i} virtual time differs"
        );
        assert_eq!(s["exits"], first["exits"], "run {i} exit counts differ");
        assert_eq!(out.stdout, first_out.stdout, "run {i} console differs");
    }
}

#[test]
fn different_seeds_give_different_traces_and_guest_entropy() {
    if !require_kvm("different_seeds_give_different_traces_and_guest_entropy") {
        return;
    }
    let mut hashes = std::collections::BTreeSet::new();
    let mut rng_lines = std::collections::BTreeSet::new();
    let mut entropy_lines = std::collections::BTreeSet::new();
    let mut virtio_lines = std::collections::BTreeSet::new();
    for seed in ["1", "2", "3", "4", "5"] {
        let (out, s) = run_with_summary(&["--seed", seed, "--no-summary"]);
        assert_eq!(s["exit_status"], 0);
        let text = stdout(&out);
        hashes.insert(s["trace_hash"].as_str().unwrap().to_string());
        rng_lines.insert(
            console_line(&text, "rng-seed:")
                .expect("rng-seed line")
                .to_string(),
        );
        entropy_lines.insert(
            console_line(&text, "entropy:")
                .expect("entropy line")
                .to_string(),
        );
        let virtio = console_line(&text, "virtio-rng:").expect("virtio-rng line");
        assert!(
            virtio.contains("irqs=1"),
            "one completion interrupt: {virtio}"
        );
        virtio_lines.insert(
            virtio
                .split_whitespace()
                .nth(1)
                .unwrap_or_default()
                .to_string(),
        );
    }
    assert_eq!(hashes.len(), 5, "trace hashes: {hashes:?}");
    assert_eq!(
        rng_lines.len(),
        5,
        "guest-observed setup_data RNG seeds: {rng_lines:?}"
    );
    assert_eq!(
        entropy_lines.len(),
        5,
        "guest-observed paravirt entropy: {entropy_lines:?}"
    );
    assert_eq!(
        virtio_lines.len(),
        5,
        "virtio-rng bytes (same device model as riscv64): {virtio_lines:?}"
    );
}

#[test]
fn guest_time_matches_its_pit_programming() {
    if !require_kvm("guest_time_matches_its_pit_programming") {
        return;
    }
    // The PIT model itself, to the nanosecond: no timing noise.
    let (out, s) = run_with_summary(&["--seed", "11", "--no-summary", "--sched-noise", "off"]);
    assert_eq!(s["exit_status"], 0);
    let text = stdout(&out);

    // 100 periodic ticks at 1 kHz (divisor 1193) = 100 periods of virtual time.
    let line = console_line(&text, "pit-mode2-1khz:").expect("mode 2 line");
    assert_eq!(field(line, "ticks"), Some(100));
    let ns = field(line, "ns").expect("ns");
    let expected = pit_ns(100 * 1193);
    assert!(
        ns.abs_diff(expected) <= 1_000,
        "mode 2: {ns} ns vs {expected} ns"
    );
    assert!(
        ns.abs_diff(100_000_000) < 100_000,
        "100 ticks at ~1 kHz should be ~100 ms: {ns}"
    );

    let line = console_line(&text, "pit-mode3-100hz:").expect("mode 3 line");
    let ns = field(line, "ns").expect("ns");
    assert!(ns.abs_diff(pit_ns(10 * 11932)) <= 1_000, "mode 3: {ns}");

    let line = console_line(&text, "pit-mode0-oneshot:").expect("mode 0 line");
    let ns = field(line, "ns").expect("ns");
    let expected = pit_ns(23864);
    assert!(
        ns >= expected && ns - expected < 20_000,
        "one-shot: {ns} vs {expected}"
    );
}

#[test]
fn ten_second_hlt_sleep_is_reported_correctly() {
    if !require_kvm("ten_second_hlt_sleep_is_reported_correctly") {
        return;
    }
    let (out, s) = run_with_summary(&[
        "--seed",
        "3",
        "--no-summary",
        "--epoch",
        "2030-06-15T23:59:55Z",
        "--sched-noise",
        "off",
    ]);
    assert_eq!(s["exit_status"], 0);
    let text = stdout(&out);
    let line = console_line(&text, "sleep-10s:").expect("sleep line");
    let ns = field(line, "ns").expect("ns");
    let expected = pit_ns(200 * 59659);
    assert!(ns.abs_diff(expected) <= 1_000, "sleep: {ns} vs {expected}");
    assert!(
        ns.abs_diff(10_000_000_000) < 1_000_000,
        "sleep should be 10 virtual s: {ns}"
    );
    assert_eq!(field(line, "rtc-seconds"), Some(10));
    // The TSC the paravirt port reports runs at the advertised 2 GHz.
    let tsc = field(line, "tsc").expect("tsc");
    assert!(tsc >= 2 * ns, "tsc {tsc} for {ns} ns");
    // The RTC starts at --epoch and crosses midnight during the sleep.
    assert!(text.contains("rtc: 2030-06-15T23:59:5"), "{text}");
    assert!(text.contains("rtc: 2030-06-16T00:00:0"), "{text}");
    // Almost all of the run is idle time the clock jumped over.
    let idle = s["idle_ns"].as_u64().unwrap();
    let total = s["virtual_ns"].as_u64().unwrap();
    assert!(idle > total * 99 / 100, "idle {idle} of {total}");
}

#[test]
fn trace_file_chain_matches_summary_hash() {
    if !require_kvm("trace_file_chain_matches_summary_hash") {
        return;
    }
    let dir = scratch("trace");
    let trace = dir.join("run.jsonl");
    let (_, with_file) = run_with_summary(&[
        "--seed",
        "9",
        "--no-summary",
        "--quiet",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    let (_, without) = run_with_summary(&["--seed", "9", "--no-summary", "--quiet"]);
    assert_eq!(
        with_file["trace_hash"], without["trace_hash"],
        "writing the trace must not change it"
    );
    let out = wio(&["verify-trace", trace.to_str().unwrap()]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        with_file["trace_hash"].as_str().unwrap()
    );
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(text.lines().any(|l| l.contains("\"ev\":\"irq\"")));
    assert!(text.lines().any(|l| l.contains("test guest: ok")));
    // Any edit breaks the chain.
    std::fs::write(&trace, text.replacen("\"vector\":32", "\"vector\":33", 1)).unwrap();
    let out = wio(&["verify-trace", trace.to_str().unwrap()]);
    assert!(!out.status.success());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn cpuid_profile_is_set_and_checked() {
    if !require_kvm("cpuid_profile_is_set_and_checked") {
        return;
    }
    let (out, s) = run_with_summary(&["--seed", "1", "--no-summary"]);
    let text = stdout(&out);
    let warnings: Vec<String> = s["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect();
    match kvm_host() {
        KvmHost::Hardware => {
            // KVM_GET_CPUID2 reads back the profile, and the guest's own CPUID agrees.
            assert!(warnings.is_empty(), "{warnings:?}");
            assert!(text.contains("cpuid: profile in force"), "{text}");
        }
        _ => {
            // PVM ignores the profile: wio must detect that and say so, never hide it.
            assert!(warnings.iter().any(|w| w.contains("CPUID")), "{warnings:?}");
            // The in-guest check is the part this host cannot run.
            wio_e2e_tests::skip(
                "cpuid_profile_is_set_and_checked",
                wio_e2e_tests::Capability::HardwareKvm,
                "the in-guest CPUID profile check: this KVM does not enforce KVM_SET_CPUID2 (wio warned so); it runs on VT-x/AMD-V (ci/l1.sh)",
            );
        }
    }
}

#[test]
fn guest_status_passes_through() {
    if !require_kvm("guest_status_passes_through") {
        return;
    }
    let out = wio(&[
        "run",
        "--seed",
        "1",
        "--quiet",
        "--no-summary",
        "--cmdline",
        "status=5",
    ]);
    assert_eq!(out.status.code(), Some(5));
    let out = wio(&[
        "run",
        "--seed",
        "1",
        "--quiet",
        "--no-summary",
        "--cmdline",
        "status=150",
    ]);
    assert_eq!(out.status.code(), Some(99), "statuses above 99 are clamped");
}

#[test]
fn triple_fault_is_a_crash_not_a_panic() {
    if !require_kvm("triple_fault_is_a_crash_not_a_panic") {
        return;
    }
    let (out, s) = run_with_summary(&["--seed", "1", "--no-summary", "--cmdline", "fault"]);
    assert_eq!(out.status.code(), Some(103));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("guest crashed"), "{err}");
    assert!(err.contains("RIP 0x"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(s["exit_status"].is_null());
    assert_eq!(s["wio_exit_code"], 103);
}

#[test]
fn spinning_guest_is_reported_as_nondeterministic() {
    if !require_kvm("spinning_guest_is_reported_as_nondeterministic") {
        return;
    }
    let out = wio(&[
        "run",
        "--seed",
        "1",
        "--no-summary",
        "--cmdline",
        "spin",
        "--watchdog-ms",
        "300",
    ]);
    assert_eq!(out.status.code(), Some(104));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("determinism failure"), "{err}");
    assert!(err.contains("RIP 0x"), "{err}");
}

#[test]
fn virtual_time_limit_stops_the_run() {
    if !require_kvm("virtual_time_limit_stops_the_run") {
        return;
    }
    let out = wio(&[
        "run",
        "--seed",
        "1",
        "--quiet",
        "--no-summary",
        "--cmdline",
        "idle=30",
        "--max-virtual-secs",
        "5",
    ]);
    assert_eq!(out.status.code(), Some(106));
}

#[test]
fn until_stops_the_test_guest_at_a_console_line_the_same_way_each_time() {
    if !require_kvm("until_stops_the_test_guest_at_a_console_line_the_same_way_each_time") {
        return;
    }
    let args = [
        "--seed",
        "3",
        "--no-summary",
        "--until",
        "console:rtc: 2026",
    ];
    let (out, s) = run_with_summary(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(s["stopped_at"], "rtc: 2026");
    assert!(
        s["exit_status"].is_null(),
        "no guest status at --until: {s}"
    );
    let text = stdout(&out);
    assert!(text.contains("rtc: 2026-01-01T00:00:00Z"), "{text}");
    assert!(
        !text.contains("sleep-10s"),
        "the run went past its --until line: {text}"
    );
    let (again_out, again) = run_with_summary(&args);
    assert_eq!(again["trace_hash"], s["trace_hash"]);
    assert_eq!(again["virtual_ns"], s["virtual_ns"]);
    assert_eq!(again_out.stdout, out.stdout);
}

#[test]
fn timing_noise_moves_pit_interrupts_within_its_bound_and_repeats_per_seed() {
    if !require_kvm("timing_noise_moves_pit_interrupts_within_its_bound_and_repeats_per_seed") {
        return;
    }
    let mut lines = std::collections::BTreeSet::new();
    for seed in ["11", "12", "13"] {
        let (out, s) = run_with_summary(&["--seed", seed, "--no-summary"]);
        assert_eq!(
            s["exit_status"], 0,
            "the default (light) noise stays within the guest's checks"
        );
        let text = stdout(&out);
        let line = console_line(&text, "pit-mode2-1khz:").expect("mode 2 line");
        let ns = field(line, "ns").expect("ns");
        // Light noise delays each interrupt by at most 10 us: a span between two of them
        // moves by at most that much.
        assert!(
            ns.abs_diff(pit_ns(100 * 1193)) <= 10_000,
            "mode 2 with noise: {ns}"
        );
        lines.insert(line.to_string());
        let (again, _) = run_with_summary(&["--seed", seed, "--no-summary"]);
        assert_eq!(again.stdout, out.stdout, "seed {seed} repeats");
    }
    assert!(lines.len() >= 2, "seeds move the interrupts: {lines:?}");
}

#[test]
fn ctrl_c_ends_a_spinning_guest_promptly_with_a_complete_trace() {
    if !require_kvm("ctrl_c_ends_a_spinning_guest_promptly_with_a_complete_trace") {
        return;
    }
    let dir = wio_e2e_tests::scratch("ctrl-c");
    let trace = dir.join("spin.jsonl");
    // A guest that loops without exits: only the signal can end it before the watchdog.
    let child = std::process::Command::new(wio_e2e_tests::wio_bin())
        .args([
            "run",
            "--cmdline",
            "spin",
            "--watchdog-ms",
            "60000",
            "--quiet",
            "--trace",
        ])
        .arg(&trace)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn wio");
    let (out, took) = wio_e2e_tests::interrupt_after(
        child,
        wio_e2e_tests::StopSignal::Int,
        std::time::Duration::from_millis(1500),
    );
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(took.as_secs() < 5, "took {took:?} after Ctrl-C");
    // The trace is whole: its chain verifies and its last line is the run's end.
    let v = wio(&["verify-trace", trace.to_str().unwrap()]);
    assert_eq!(
        v.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&v.stderr)
    );
    let text = std::fs::read_to_string(&trace).unwrap();
    let last = text.lines().last().unwrap();
    assert!(last.contains("\"code\":130"), "{last}");
}

#[test]
fn a_signal_that_interrupts_kvm_run_changes_nothing_the_guest_sees() {
    if !require_kvm("a_signal_that_interrupts_kvm_run_changes_nothing_the_guest_sees") {
        return;
    }
    use std::io::BufRead;
    let (out, plain) = run_with_summary(&["--seed", "7", "--no-summary"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "the run without signals: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The same run, its vCPU thread hit by a signal with a handler (the watchdog's
    // SIGRTMIN+1, here not from the watchdog) every 2 ms from its first console line on:
    // each one stops KVM_RUN at a point host timing chose, which must not become an exit.
    let dir = scratch("stray-signals");
    let summary = dir.join("s.json");
    // wio's stderr goes to a file, so a failure below says what wio said.
    let stderr_path = dir.join("stderr.txt");
    let mut child = std::process::Command::new(wio_e2e_tests::wio_bin())
        .args(["run", "--seed", "7", "--no-summary", "--summary-json"])
        .arg(&summary)
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&stderr_path).expect("stderr file"))
        .spawn()
        .expect("spawn wio");
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().expect("a console line").unwrap();
    let sig = (SIGRTMIN + 1).to_string();
    let mut sent = 0;
    while child.try_wait().unwrap().is_none() {
        let _ = std::process::Command::new("kill")
            .args([format!("-{sig}"), child.id().to_string()])
            .status();
        sent += 1;
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    for _ in lines {}
    let status = child.wait().unwrap();
    let said = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    assert_eq!(
        status.code(),
        Some(0),
        "{status} after {sent} signals (first line {first:?}); wio said: {said}"
    );
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    for key in ["trace_hash", "exits", "virtual_ns", "console_sha256"] {
        assert_eq!(
            s[key], plain[key],
            "{key} changed under {sent} signals; summaries:\n{s}\n{plain}"
        );
    }
    println!("{sent} signals, same run");
}

/// SIGRTMIN on Linux with glibc (the first real-time signal glibc leaves to programs).
const SIGRTMIN: i32 = 34;
