//! End-to-end tests of Linux guests on the x86-64 KVM engine: Debian's unmodified amd64
//! kernel and wio's small kernel with the determinism patches, with the busybox workload,
//! a redis root disk, snapshots and explore. They need hardware virtualization and the
//! guests ci/l1.sh builds: each test skips loudly (SKIPPED: ...) anywhere else.

#![forbid(unsafe_code)]

use wio_e2e_tests::{
    console_line, line_of, require_hardware_kvm, run_with_summary, scratch, skip, stderr, stdout,
    x86_small_kernel, x86_small_kernel_and_redis_disk, Capability, LINUX_WATCHDOG_MS,
};

#[test]
fn debian_amd64_kernel_runs_the_workload_on_virtio_found_through_acpi_and_powers_off() {
    let test = "debian_amd64_kernel_runs_the_workload_on_virtio_found_through_acpi_and_powers_off";
    let Some((kernel, initrd)) = debian_kernel(test) else {
        return;
    };
    let (kernel, initrd) = (kernel.as_str(), initrd.as_str());
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
    // summary; the differences are reported, not asserted (docs/x86_64.md).
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

/// What the kernel prints when the VM generation ID changed and it reseeded its CRNG.
const RESEEDED: &str = "crng reseeded due to virtual machine fork";

#[test]
fn debian_amd64_kernel_reseeds_its_crng_when_a_branch_changes_the_vm_generation_id() {
    let test = "debian_amd64_kernel_reseeds_its_crng_when_a_branch_changes_the_vm_generation_id";
    let Some((kernel, initrd)) = debian_kernel(test) else {
        return;
    };
    let (kernel, initrd) = (kernel.as_str(), initrd.as_str());
    let dir = scratch("x86-vmgenid");
    let snap = dir.join("init.snap");
    // A snapshot where the kernel starts init: its ACPI devices are bound by then.
    let (out, s) = run_with_summary(&[
        "--kernel",
        kernel,
        "--initrd",
        initrd,
        "--seed",
        "1",
        "--watchdog-ms",
        LINUX_WATCHDOG_MS,
        "--no-summary",
        "--snapshot-at",
        "console:Run /init as init process",
        "--snapshot-out",
        snap.to_str().unwrap(),
    ]);
    let boot = stdout(&out);
    assert_eq!(s["exit_status"], 0, "{boot}\n{s}");
    // The kernel took wio's DSDT (the ID's device, the event device and its _EVT) without
    // a complaint, and found the ID at boot: it does not reseed then.
    for bad in [
        "ACPI Error",
        "ACPI BIOS Error",
        "ACPI Warning",
        "_EVT",
        "vmgenid",
    ] {
        assert!(!boot.contains(bad), "{bad:?} at boot: {boot}");
    }
    assert!(!boot.contains(RESEEDED), "{boot}");
    let branch = |seed: &str, trace: &std::path::Path| {
        let (out, s) = run_with_summary(&[
            "--from",
            snap.to_str().unwrap(),
            "--seed",
            seed,
            "--trace",
            trace.to_str().unwrap(),
            "--no-summary",
        ]);
        let text = stdout(&out);
        assert_eq!(s["exit_status"], 0, "seed {seed}: {text}\n{}", stderr(&out));
        assert!(
            text.contains("wio-init: done status=0"),
            "seed {seed}: {text}"
        );
        let events = std::fs::read_to_string(trace).unwrap();
        (text, events)
    };
    // A branch with another seed: a new ID and the event device's interrupt; Linux's
    // vmgenid driver reads the new bytes and reseeds the CRNG before the workload runs.
    let (text, events) = branch("7", &dir.join("seed7.jsonl"));
    assert!(text.contains(RESEEDED), "seed 7: {text}");
    let reseed_line = text.lines().position(|l| l.contains(RESEEDED)).unwrap();
    let workload_line = text
        .lines()
        .position(|l| l.starts_with("workload: urandom:"))
        .unwrap_or(usize::MAX);
    assert!(
        reseed_line < workload_line,
        "the CRNG was reseeded after the workload read /dev/urandom: {text}"
    );
    assert_eq!(
        events.lines().filter(|l| l.contains("\"vmgenid\"")).count(),
        1,
        "{events}"
    );
    // The snapshot's own seed is the same generation: no new ID, no reseed.
    let (text, events) = branch("1", &dir.join("seed1.jsonl"));
    assert!(!text.contains(RESEEDED), "seed 1: {text}");
    assert!(!events.contains("\"vmgenid\""), "{events}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Debian's amd64 kernel and the workload initramfs with its virtio modules, as ci/l1.sh
/// hands them to the tests inside its L1 on hardware virtualization: `None` (the test
/// skips, saying why) anywhere else.
fn debian_kernel(test: &str) -> Option<(String, String)> {
    let (Some(kernel), Some(initrd)) = (
        std::env::var("WIO_X86_LINUX_KERNEL").ok(),
        std::env::var("WIO_X86_LINUX_INITRD").ok(),
    ) else {
        skip(
            test,
            Capability::X86Linux,
            "no WIO_X86_LINUX_KERNEL/INITRD (run ci/l1.sh, which sets them inside its L1)",
        );
        return None;
    };
    require_hardware_kvm(test, "an x86-64 Linux guest").then_some((kernel, initrd))
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
    let Some((kernel, initrd)) = x86_small_kernel(test) else {
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
    let Some((kernel, initrd)) = x86_small_kernel(test) else {
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
    let Some((kernel, rootfs)) = x86_small_kernel_and_redis_disk(test) else {
        return;
    };
    let before = std::fs::read(&rootfs).unwrap();
    let dir = scratch("x86-redis");
    let boot = |n: usize| {
        let trace = dir.join(format!("trace-{n}.jsonl"));
        let (out, s) = run_with_summary(&[
            "--trace",
            trace.to_str().expect("utf-8 temp path"),
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
    let (text1, s1) = boot(1);
    let (text2, s2) = boot(2);
    assert_eq!(s1["exit_status"], 0, "{text1}\n{s1}");
    let redis = line_of(&text1, "workload: redis:");
    assert!(
        redis.contains("ping=PONG") && redis.contains("incr=2"),
        "{redis}"
    );
    assert_eq!(s2["exit_status"], 0, "{text2}\n{s2}");
    assert!(s1["disk"]["writes"].as_u64().unwrap() > 0, "{s1}");
    // Same seed, same bits, disk included. Inside L1 this workload met both ways a run can
    // part there: stray signals counted as exits, and interrupt windows reported inside an
    // STI shadow that nested SVM lost (docs/x86_64.md); this catches either if it returns.
    // Where they part, should they: the first trace line that differs, and the one before.
    let traces = [1, 2]
        .map(|n| std::fs::read_to_string(dir.join(format!("trace-{n}.jsonl"))).unwrap_or_default());
    let (t1, t2): (Vec<&str>, Vec<&str>) =
        (traces[0].lines().collect(), traces[1].lines().collect());
    let part = t1.iter().zip(&t2).position(|(a, b)| a != b);
    assert_eq!(
        s1["trace_hash"], s2["trace_hash"],
        "two runs of seed 1 differ ({} and {} trace lines); first difference at line {part:?}:\n  before: {:?}\n  run 1: {:?}\n  run 2: {:?}",
        t1.len(),
        t2.len(),
        part.and_then(|i| i.checked_sub(1)).and_then(|i| t1.get(i)),
        part.and_then(|i| t1.get(i)),
        part.and_then(|i| t2.get(i)),
    );
    assert_eq!(text1, text2);
    assert!(
        std::fs::read(&rootfs).unwrap() == before,
        "the base image must never change"
    );
    println!("{test}: {redis}; trace {}", s1["trace_hash"]);
    let _ = std::fs::remove_dir_all(dir);
}
