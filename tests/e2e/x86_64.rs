//! End-to-end tests of `wio run` with the built-in x86-64 test guest on KVM.
//! Each test skips loudly (SKIPPED: …) where /dev/kvm cannot be used.

#![forbid(unsafe_code)]

use wio_e2e_tests::{
    console_line, field, kvm_host, require_kvm, run_with_summary, scratch, stderr, stdout, wio,
    KvmHost,
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
            eprintln!("SKIPPED: in-guest CPUID profile check: this host's KVM is not hardware virtualization, and it does not enforce KVM_SET_CPUID2 (wio reported: {warnings:?})");
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
    let (out, took) = wio_e2e_tests::interrupt_after(child, std::time::Duration::from_millis(1500));
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

/// `--watchdog-ms` for Linux guests inside L1: under TCG a kernel's decompressor runs for
/// seconds without an exit (the default 5 s cut Debian's kernel there now and then).
const LINUX_WATCHDOG_MS: &str = "60000";

#[test]
fn debian_amd64_kernel_runs_the_workload_on_virtio_found_through_acpi_and_powers_off() {
    let test = "debian_amd64_kernel_runs_the_workload_on_virtio_found_through_acpi_and_powers_off";
    let (Some(kernel), Some(initrd)) = (
        std::env::var_os("WIO_X86_LINUX_KERNEL"),
        std::env::var_os("WIO_X86_LINUX_INITRD"),
    ) else {
        println!(
            "SKIPPED: {test}: no WIO_X86_LINUX_KERNEL/INITRD (ci/l1.sh sets them inside its L1)"
        );
        return;
    };
    if wio_e2e_tests::kvm_host() != wio_e2e_tests::KvmHost::Hardware {
        println!("SKIPPED: {test}: Linux needs hardware virtualization (this host's KVM is not)");
        return;
    }
    let (kernel, initrd) = (kernel.to_str().unwrap(), initrd.to_str().unwrap());
    let dir = scratch("x86-debian");
    let snap = dir.join("boot.snap");
    let trace = dir.join("trace.jsonl");
    let boot = |more: &[&str]| {
        let mut args = vec![
            "--kernel",
            kernel,
            "--initrd",
            initrd,
            "--seed",
            "1",
            "--watchdog-ms",
            LINUX_WATCHDOG_MS,
            "--no-summary",
        ];
        args.extend(more);
        let (out, s) = run_with_summary(&args);
        (stdout(&out), s)
    };
    let (text1, s1) = boot(&["--trace", trace.to_str().unwrap()]);
    // The second boot also writes a snapshot before init (which starts at about 36 ms).
    let (text2, s2) = boot(&[
        "--snapshot-at",
        "20ms",
        "--snapshot-out",
        snap.to_str().unwrap(),
    ]);
    // Debian's unmodified kernel finds the virtio slots in wio's ACPI tables (it takes no
    // virtio_mmio.device=), loads its own virtio modules from the initramfs and runs the
    // same workload as the small kernel: hwrng, ping and TCP echo to the peer, the probe,
    // two workers; then it powers off through ACPI S5 with the init's status.
    for (text, s) in [(&text1, &s1), (&text2, &s2)] {
        assert_eq!(s["exit_status"], 0, "{text}\n{s}");
        assert!(text.contains("wio-init: done status=0"), "{text}");
        assert!(
            line_of(text, "wio-init: modules loaded:").contains("virtio_mmio"),
            "{text}"
        );
        assert!(
            line_of(text, "workload: net:").contains("3 replies"),
            "{text}"
        );
        assert_eq!(
            line_of(text, "workload: tcp echo:"),
            "workload: tcp echo: hello-over-tcp"
        );
        assert_eq!(
            line_of(text, "workload: workers exited:"),
            "workload: workers exited: 0 0"
        );
        assert!(
            text.contains("ACPI: PM: Preparing to enter system sleep state S5"),
            "{text}"
        );
        assert!(s["virtual_ns"].as_u64().unwrap() < 10_000_000_000, "{s}");
        // A few hundred virtio accesses, no local-APIC probing storm (once 139,000).
        let mmio = s["exits"]["mmio"].as_u64().unwrap_or(0);
        assert!(mmio < 2_000, "{mmio} MMIO exits: {s}");
    }
    let power_off = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .find(|l| l.contains("\"power-off\""))
        .map(str::to_string);
    assert!(
        power_off.as_deref().is_some_and(|l| l.contains("ACPI S5")),
        "{power_off:?}"
    );
    // The virtio-rng's bytes come from the seed: the same in both runs.
    assert_eq!(
        line_of(&text1, "workload: hwrng:"),
        line_of(&text2, "workload: hwrng:")
    );
    // What this unmodified kernel derives from the hardware TSC differs between runs of one
    // seed: its CRNG (urandom, getrandom, AT_RANDOM, ASLR) and the kernel timers it
    // randomizes (network timers: the virtual time the workload takes). wio says so in the
    // summary; the differences are reported, not asserted (README "x86-64 hosts").
    assert!(
        s1["warnings"].to_string().contains("RDTSC"),
        "no determinism warning: {}",
        s1["warnings"]
    );
    // A run restored from a snapshot of this kernel warns too (rule 5: never hidden).
    let (out, restored) =
        run_with_summary(&["--from", snap.to_str().unwrap(), "--quiet", "--no-summary"]);
    assert_eq!(restored["exit_status"], 0, "{}", stderr(&out));
    assert!(
        restored["warnings"].to_string().contains("RDTSC"),
        "restored run without the determinism warning: {}",
        restored["warnings"]
    );
    let differ: Vec<&str> = ["workload: urandom:", "probe: getrandom:", "probe: stack:"]
        .into_iter()
        .filter(|p| console_line(&text1, p) != console_line(&text2, p))
        .collect();
    println!(
        "{test}: two runs of seed 1: exits {} / {}, virtual ns {} / {}; lines that differ: {differ:?}",
        s1["exits"], s2["exits"], s1["virtual_ns"], s2["virtual_ns"]
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// wio's small x86-64 kernel (guest-kernel/x86_64, with the determinism patches) and its
/// busybox workload initramfs (images/x86_64-initramfs.sh), as ci/l1.sh hands them to the
/// tests inside its L1: `None` (the test skips, saying why) anywhere else.
fn small_kernel(test: &str) -> Option<(String, String)> {
    let (Some(kernel), Some(initrd)) = (
        std::env::var("WIO_X86_SMALL_KERNEL").ok(),
        std::env::var("WIO_X86_SMALL_INITRD").ok(),
    ) else {
        println!(
            "SKIPPED: {test}: no WIO_X86_SMALL_KERNEL/INITRD (ci/l1.sh builds them and sets them inside its L1)"
        );
        return None;
    };
    if kvm_host() != KvmHost::Hardware {
        println!("SKIPPED: {test}: Linux needs hardware virtualization (this host's KVM is not)");
        return None;
    }
    Some((kernel, initrd))
}

/// The console line starting with `prefix`, or a panic showing the console.
fn line_of<'a>(text: &'a str, prefix: &str) -> &'a str {
    console_line(text, prefix).unwrap_or_else(|| panic!("no {prefix:?} line in:\n{text}"))
}

/// The number after `key` in `line` (digits only).
fn number_after(line: &str, key: &str) -> u64 {
    let at = line
        .find(key)
        .unwrap_or_else(|| panic!("no {key:?} in {line:?}"))
        + key.len();
    line[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap_or_else(|_| panic!("no number after {key:?} in {line:?}"))
}

#[test]
fn small_kernel_is_bit_identical_per_seed_and_its_seed_moves_entropy_aslr_and_rdtsc() {
    let test = "small_kernel_is_bit_identical_per_seed_and_its_seed_moves_entropy_aslr_and_rdtsc";
    let Some((kernel, initrd)) = small_kernel(test) else {
        return;
    };
    let boot = |seed: &str| {
        let (out, s) = run_with_summary(&[
            "--kernel",
            &kernel,
            "--initrd",
            &initrd,
            "--mem",
            "256",
            "--seed",
            seed,
            "--watchdog-ms",
            LINUX_WATCHDOG_MS,
            "--no-summary",
        ]);
        (stdout(&out), s)
    };
    let (text1, s1) = boot("1");
    let (text1b, s1b) = boot("1");
    let (text2, s2) = boot("2");
    assert_eq!(s1["exit_status"], 0, "{text1}\n{s1}");
    assert!(text1.contains("wio-init: done status=0"), "{text1}");
    // Same seed, same bits: trace, console, exits, virtual time.
    for key in ["trace_hash", "console_sha256", "exits", "virtual_ns"] {
        assert_eq!(
            s1[key], s1b[key],
            "{key} differs between two runs of seed 1"
        );
    }
    assert_eq!(text1, text1b);
    // The kernel announced its patches: no RDTSC warning (Debian's kernel gets one).
    assert!(
        !s1["warnings"].to_string().contains("RDTSC"),
        "{}",
        s1["warnings"]
    );
    // Another seed changes what the guest observes: its CRNG (urandom, getrandom, AT_RANDOM),
    // the virtio-rng, and every ASLR'd address.
    assert_ne!(s1["trace_hash"], s2["trace_hash"]);
    for prefix in [
        "workload: urandom:",
        "workload: hwrng:",
        "probe: getrandom:",
        "probe: at_random:",
    ] {
        assert_ne!(line_of(&text1, prefix), line_of(&text2, prefix), "{prefix}");
    }
    let (a1, a2) = (
        line_of(&text1, "probe: stack:"),
        line_of(&text2, "probe: stack:"),
    );
    for key in ["stack: ", "brk: ", "mmap: "] {
        let word = |l: &str| {
            l.split(key)
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .to_string()
        };
        assert_ne!(
            word(a1),
            word(a2),
            "ASLR: {key} same for seeds 1 and 2: {a1}"
        );
    }
    // User-space RDTSC is trapped and served from the virtual TSC (2 GHz): across `sleep 1`
    // it advances by one virtual second, never less, and by less than a millisecond more
    // (the kernel's clocksource is the same virtual TSC and its high-resolution timer fires
    // on the PIT in one-shot mode); the kernel's monotonic clock agrees within 0.1 ms.
    let slept = line_of(&text1, "clock: slept 1 s:");
    let mono = number_after(slept, "monotonic +");
    let tsc = number_after(slept, "tsc +");
    assert!((1_000_000_000..1_001_000_000).contains(&mono), "{slept}");
    assert!((2_000_000_000..2_002_000_000).contains(&tsc), "{slept}");
    assert!((tsc / 2).abs_diff(mono) < 100_000, "{slept}");
    assert!(s1["virtual_ns"].as_u64().unwrap() > 1_000_000_000, "{s1}");
    // virtio-net: the simulated link's peer answers ping and TCP echo.
    assert!(
        line_of(&text1, "workload: net:").contains("3 replies"),
        "{text1}"
    );
    assert!(
        line_of(&text1, "workload: tcp echo:").contains("hello-over-tcp"),
        "{text1}"
    );
    println!(
        "{test}: seed 1 {} ({} exits, {} virtual ns), seed 2 {}; {slept}",
        s1["trace_hash"], s1["exits"], s1["virtual_ns"], s2["trace_hash"]
    );
}

#[test]
fn small_kernel_snapshot_mid_run_restores_to_the_same_end_and_explores() {
    let test = "small_kernel_snapshot_mid_run_restores_to_the_same_end_and_explores";
    let Some((kernel, initrd)) = small_kernel(test) else {
        return;
    };
    let dir = scratch("x86-small-snap");
    let snap = dir.join("mid.snap");
    let base = [
        "--kernel",
        kernel.as_str(),
        "--initrd",
        initrd.as_str(),
        "--mem",
        "256",
        "--seed",
        "3",
        "--watchdog-ms",
        LINUX_WATCHDOG_MS,
        "--quiet",
        "--no-summary",
    ];
    let (_, plain) = run_with_summary(&base);
    assert_eq!(plain["exit_status"], 0, "{plain}");
    // 0.5 s virtual: after init started, inside the workload (before its one-second sleep).
    let mut args = base.to_vec();
    args.extend([
        "--snapshot-at",
        "0.5s",
        "--snapshot-out",
        snap.to_str().unwrap(),
    ]);
    let (out, full) = run_with_summary(&args);
    assert_eq!(
        full["trace_hash"],
        plain["trace_hash"],
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (out, restored) =
        run_with_summary(&["--from", snap.to_str().unwrap(), "--quiet", "--no-summary"]);
    for key in ["trace_hash", "console_sha256", "virtual_ns", "exit_status"] {
        assert_eq!(
            restored[key],
            plain[key],
            "restored run: {key} differs ({})",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The snapshot remembers that this kernel announced wio's patches: no RDTSC warning.
    assert!(
        !restored["warnings"].to_string().contains("RDTSC"),
        "{}",
        restored["warnings"]
    );
    // Branches of the snapshot: each its own seed; the snapshot's own seed ends as the run did.
    let rep = dir.join("explore.json");
    let o = wio_e2e_tests::explore_to(&snap, "2..5", &rep, &["--match", "clock: slept 1 s"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&rep).unwrap()).unwrap();
    let results = r["results"].as_array().expect("results");
    assert_eq!(results.len(), 3);
    let hashes: std::collections::BTreeSet<String> = results
        .iter()
        .map(|x| x["trace_hash"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(hashes.len(), 3, "three seeds, three traces: {r}");
    assert_eq!(
        results[1]["trace_hash"], plain["trace_hash"],
        "seed 3's branch is the run"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn small_kernel_serves_debians_redis_from_a_virtio_blk_root() {
    let test = "small_kernel_serves_debians_redis_from_a_virtio_blk_root";
    let Some((kernel, _)) = small_kernel(test) else {
        return;
    };
    let Ok(rootfs) = std::env::var("WIO_X86_REDIS_ROOTFS") else {
        println!("SKIPPED: {test}: no WIO_X86_REDIS_ROOTFS (ci/l1.sh builds it with images/x86_64-rootfs.sh --redis)");
        return;
    };
    let before = std::fs::read(&rootfs).unwrap();
    let boot = || {
        let (out, s) = run_with_summary(&[
            "--kernel",
            &kernel,
            "--mem",
            "256",
            "--seed",
            "1",
            "--watchdog-ms",
            LINUX_WATCHDOG_MS,
            "--no-summary",
            &rootfs,
        ]);
        (stdout(&out), s)
    };
    let (text1, s1) = boot();
    let (text2, s2) = boot();
    assert_eq!(s1["exit_status"], 0, "{text1}\n{s1}");
    let redis = line_of(&text1, "workload: redis:");
    assert!(
        redis.contains("ping=PONG") && redis.contains("incr=2"),
        "{redis}"
    );
    assert_eq!(s2["exit_status"], 0, "{text2}\n{s2}");
    assert!(s1["disk"]["writes"].as_u64().unwrap() > 0, "{s1}");
    // Same seed, same bits, disk included. (Before stray signals stopped counting as exits,
    // about one run in twelve inside L1 parted at this workload's O_DIRECT phase; after, 56 of
    // 56 matched. The mechanism is not identified: this catches it if it comes back.)
    assert_eq!(
        s1["trace_hash"], s2["trace_hash"],
        "two runs of seed 1 differ"
    );
    assert_eq!(text1, text2);
    assert!(
        std::fs::read(&rootfs).unwrap() == before,
        "the base image must never change"
    );
    println!("{test}: {redis}; trace {}", s1["trace_hash"]);
}

#[test]
fn a_signal_that_interrupts_kvm_run_changes_nothing_the_guest_sees() {
    if !require_kvm("a_signal_that_interrupts_kvm_run_changes_nothing_the_guest_sees") {
        return;
    }
    use std::io::BufRead;
    let (_, plain) = run_with_summary(&["--seed", "7", "--no-summary"]);
    // The same run, its vCPU thread hit by a signal with a handler (the watchdog's
    // SIGRTMIN+1, here not from the watchdog) every 2 ms from its first console line on:
    // each one stops KVM_RUN at a point host timing chose, which must not become an exit.
    let dir = scratch("stray-signals");
    let summary = dir.join("s.json");
    let mut child = std::process::Command::new(wio_e2e_tests::wio_bin())
        .args(["run", "--seed", "7", "--no-summary", "--summary-json"])
        .arg(&summary)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
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
    assert_eq!(child.wait().unwrap().code(), Some(0), "after {first:?}");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    for key in ["trace_hash", "exits", "virtual_ns", "console_sha256"] {
        assert_eq!(s[key], plain[key], "{key} changed under {sent} signals");
    }
    println!("{sent} signals, same run");
}

/// SIGRTMIN on Linux with glibc (the first real-time signal glibc leaves to programs).
const SIGRTMIN: i32 = 34;
