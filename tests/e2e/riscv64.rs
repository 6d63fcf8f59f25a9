//! End-to-end tests of riscv64 Linux guests on wio's interpreter: determinism
//! of whole boots, seeded entropy and ASLR, the virtual clock, preemption of
//! compute-bound processes, Debian's unmodified kernel, and the block compiler's
//! invisibility (a compiled and an interpreted boot are identical).
//! They need the guests built by images/build-all-riscv64.sh (ci/test.sh builds
//! them) and skip loudly (SKIPPED: …) otherwise.

#![forbid(unsafe_code)]

use wio_e2e_tests::{
    console_line, console_lines, require_riscv_artifact, require_riscv_guests, run_with_summary,
    skip, stdout, wio, Capability,
};

fn boot(seed: u64, extra: &[&str]) -> (std::process::Output, serde_json::Value) {
    let seed = seed.to_string();
    let mut args = vec![
        "--arch",
        "riscv64",
        "--guest",
        "small",
        "--seed",
        seed.as_str(),
        "--no-summary",
    ];
    args.extend_from_slice(extra);
    let (out, s) = run_with_summary(&args);
    assert_eq!(
        s["exit_status"],
        0,
        "guest failed; stderr: {}\nstdout: {}",
        String::from_utf8_lossy(&out.stderr),
        stdout(&out)
    );
    (out, s)
}

#[test]
fn ten_boots_of_one_seed_are_identical() {
    if !require_riscv_guests("ten_boots_of_one_seed_are_identical") {
        return;
    }
    let (first_out, first) = boot(11, &[]);
    assert!(stdout(&first_out).contains("wio-init: done status=0"));
    // The interpreter does not count the interrupts its hart takes: no made-up zero, in
    // the JSON or in the human summary.
    assert!(first.get("interrupts").is_none(), "{first}");
    let (o, _) = run_with_summary(&[
        "--arch", "riscv64", "--guest", "small", "--seed", "11", "--quiet",
    ]);
    let human = String::from_utf8_lossy(&o.stderr);
    assert!(human.contains("exits "), "{human}");
    assert!(!human.contains("interrupts"), "{human}");
    for i in 1..10 {
        let (out, s) = boot(11, &[]);
        assert_eq!(
            s["trace_hash"], first["trace_hash"],
            "boot {i}: trace differs"
        );
        assert_eq!(
            s["instructions"], first["instructions"],
            "boot {i}: instruction count differs"
        );
        assert_eq!(
            s["virtual_ns"], first["virtual_ns"],
            "boot {i}: virtual time differs"
        );
        assert_eq!(out.stdout, first_out.stdout, "boot {i}: console differs");
    }
}

#[test]
fn seeds_change_entropy_and_aslr_and_repeat_for_one_seed() {
    if !require_riscv_guests("seeds_change_entropy_and_aslr_and_repeat_for_one_seed") {
        return;
    }
    let observed = |seed: u64| {
        let (out, _) = boot(seed, &[]);
        let text = stdout(&out);
        let pick = |prefix: &str| {
            console_line(&text, prefix)
                .unwrap_or_else(|| panic!("no {prefix} line in:\n{text}"))
                .to_string()
        };
        (
            pick("workload: urandom:"),
            pick("probe: getrandom:"),
            pick("probe: stack:"),
            pick("workload: hwrng:"),
        )
    };
    let a = observed(1);
    let b = observed(2);
    let c = observed(3);
    assert_eq!(a, observed(1), "seed 1 must repeat exactly");
    for (x, y) in [(&a, &b), (&a, &c), (&b, &c)] {
        assert_ne!(x.0, y.0, "/dev/urandom bytes must differ between seeds");
        assert_ne!(x.1, y.1, "getrandom bytes must differ between seeds");
        assert_ne!(x.2, y.2, "ASLR addresses must differ between seeds");
        assert_ne!(
            x.3, y.3,
            "virtio-rng bytes (/dev/hwrng) must differ between seeds"
        );
    }
}

#[test]
fn date_and_clock_gettime_follow_the_virtual_clock() {
    if !require_riscv_guests("date_and_clock_gettime_follow_the_virtual_clock") {
        return;
    }
    let epoch: u64 = 1_903_867_200; // 2030-05-01T12:00:00Z
    let (out, s) = boot(5, &["--epoch", "2030-05-01T12:00:00Z"]);
    let text = stdout(&out);
    let date = console_line(&text, "workload: date:").expect("date line");
    assert!(
        date.contains("May  1 12:00:0") && date.contains("2030"),
        "{date}"
    );
    let probe = console_line(&text, "probe: realtime:").expect("probe clock line");
    let words: Vec<&str> = probe.split_whitespace().collect();
    let realtime: f64 = words[2].parse().expect("realtime seconds");
    let monotonic: f64 = words[4].parse().expect("monotonic seconds");
    let virtual_secs = s["virtual_ns"].as_u64().unwrap() as f64 / 1e9;
    // Linux sets the system clock from the RTC's whole seconds plus half a second (rtc_hctosys).
    assert!(
        realtime >= epoch as f64 && realtime <= epoch as f64 + virtual_secs + 0.5,
        "realtime {realtime} outside [epoch, epoch + run + 0.5]"
    );
    assert!(
        monotonic > 0.0 && monotonic <= virtual_secs,
        "monotonic {monotonic} vs run of {virtual_secs} s"
    );
}

#[test]
fn compute_bound_processes_are_preempted_identically() {
    if !require_riscv_guests("compute_bound_processes_are_preempted_identically") {
        return;
    }
    // Long enough busy loops that each worker is preempted by the timer many times.
    let extra = [
        "--cmdline",
        "console=ttyS0 panic=-1 wio.busy_iters=5000 wio.busy_steps=4",
    ];
    let (out1, s1) = boot(8, &extra);
    let (out2, s2) = boot(8, &extra);
    let order1 = console_lines(&stdout(&out1), "workload: worker ").join("\n");
    let order2 = console_lines(&stdout(&out2), "workload: worker ").join("\n");
    assert_eq!(
        order1, order2,
        "the interleaving of the two workers must repeat"
    );
    assert_eq!(s1["trace_hash"], s2["trace_hash"]);
    assert_eq!(s1["instructions"], s2["instructions"]);
    // Both workers made progress before either finished: they were time-sliced.
    let lines: Vec<&str> = order1.lines().collect();
    assert_eq!(lines.len(), 8, "{order1}");
    let first_b = lines
        .iter()
        .position(|l| l.contains("worker B"))
        .expect("worker B ran");
    let last_a = lines
        .iter()
        .rposition(|l| l.contains("worker A"))
        .expect("worker A ran");
    assert!(first_b < last_a, "workers were not interleaved:\n{order1}");
}

/// `--isa` (and a world node's `isa`) gives the hart Zba/Zbb/Zbs: Linux finds them in
/// the device tree and uses them (a run differs from one without, and repeats itself), a
/// snapshot's restore keeps them, and what wio does not implement is a one-line error.
#[test]
fn bit_manipulation_extensions_reach_linux_and_snapshots_keep_them() {
    if !require_riscv_guests("bit_manipulation_extensions_reach_linux_and_snapshots_keep_them") {
        return;
    }
    let dir = wio_e2e_tests::scratch("isa");
    let world = wio_e2e_tests::write_file(
        &dir,
        "isa.toml",
        "[[node]]\nname = \"a\"\nisa = \"rv64gc_zba_zbb_zbs\"\nrun = \"grep -m1 isa /proc/cpuinfo\"\n",
    );
    let o = wio(&["sim", &world, "--seed", "1"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let isa = console_line(&stdout(&o), "a | isa")
        .unwrap_or_default()
        .to_string();
    assert!(isa.ends_with("_zba_zbb_zbs"), "{isa}\n{}", stdout(&o));
    // A world snapshot keeps the node's ISA: its restore ends as the uninterrupted run.
    let wsnap = dir.join("isa-world.snap");
    let o = wio(&[
        "sim",
        &world,
        "--seed",
        "1",
        "--snapshot-at",
        "50ms",
        "--snapshot-out",
        wsnap.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let world_trace = |o: &std::process::Output| {
        console_line(&String::from_utf8_lossy(&o.stderr), "world trace")
            .unwrap_or_default()
            .to_string()
    };
    let whole = wio(&["sim", &world, "--seed", "1"]);
    let restored = wio(&["sim", "--from", wsnap.to_str().unwrap()]);
    assert!(
        !world_trace(&whole).is_empty(),
        "{}",
        String::from_utf8_lossy(&whole.stderr)
    );
    assert_eq!(world_trace(&restored), world_trace(&whole));
    assert!(console_line(&stdout(&restored), "a | isa").is_some_and(|l| l.ends_with("_zbs")));

    let zb = ["--isa", "rv64gc_zba_zbb_zbs"];
    let (_, with) = boot(5, &zb);
    let (_, again) = boot(5, &zb);
    let (_, without) = boot(5, &[]);
    assert_eq!(
        with["trace_hash"], again["trace_hash"],
        "same seed, same ISA"
    );
    assert_ne!(
        with["trace_hash"], without["trace_hash"],
        "the kernel uses Zbb"
    );
    assert_eq!(with["isa"], "rv64gc_zba_zbb_zbs", "{with}");
    assert!(
        without.get("isa").is_none(),
        "plain rv64gc is not named: {without}"
    );

    // A restore of a snapshot taken with the extensions runs with them: the same run.
    let snap = dir.join("zb.snap");
    let o = wio(&[
        "run",
        "--arch",
        "riscv64",
        "--seed",
        "5",
        "--quiet",
        "--isa",
        "rv64gcb",
        "--snapshot-at",
        "0.5s",
        "--snapshot-out",
        snap.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (_, restored) = run_with_summary(&["--from", snap.to_str().unwrap(), "--quiet"]);
    assert_eq!(restored["trace_hash"], with["trace_hash"], "{restored}");
    assert_eq!(restored["isa"], "rv64gc_zba_zbb_zbs");

    for (args, says) in [
        (&["--isa", "rv64gcv_zvl100b"][..], "VLEN 100"),
        (&["--isa", "rv64gc_zbkb"], "zbkb"),
        (&["--isa", "rv64gc_zve32x"], "zve32x"),
        (&["--isa", "x281"], "profile: x280"),
        (&["--vlen", "100"], "--vlen 100: VLEN 100"),
        (
            &["--isa", "rv64gcb", "--vlen", "256"],
            "no vector extension",
        ),
    ] {
        let mut cmd = vec!["run", "--arch", "riscv64"];
        cmd.extend_from_slice(args);
        let o = wio(&cmd);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_ne!(o.status.code(), Some(0));
        assert!(
            err.contains(says) && err.trim().lines().count() <= 2,
            "{err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn debian_kernel_boots_the_workload() {
    if !require_riscv_guests("debian_kernel_boots_the_workload") {
        return;
    }
    let (out, s) = run_with_summary(&[
        "--arch",
        "riscv64",
        "--guest",
        "debian",
        "--seed",
        "1",
        "--no-summary",
    ]);
    let text = stdout(&out);
    assert_eq!(s["exit_status"], 0, "{text}");
    assert!(text.contains("Debian"), "{text}");
    assert!(text.contains("wio-init: modules loaded"), "{text}");
    assert!(text.contains("wio-init: done status=0"), "{text}");
}

#[test]
fn bad_riscv_inputs_are_one_line_errors() {
    let dir = wio_e2e_tests::scratch("rv-bad");
    let junk = dir.join("Image");
    std::fs::write(&junk, vec![0u8; 4096]).unwrap();
    let out = wio(&[
        "run",
        "--arch",
        "riscv64",
        "--kernel",
        junk.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(101));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no RISC-V Image header"));
    // A real-looking Image with a corrupt initramfs.
    let mut image = vec![0u8; 8192];
    image[48..56].copy_from_slice(b"RISCV\0\0\0");
    image[56..60].copy_from_slice(b"RSC\x05");
    std::fs::write(&junk, &image).unwrap();
    let initrd = dir.join("initrd.gz");
    std::fs::write(&initrd, [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3]).unwrap();
    let out = wio(&[
        "run",
        "--arch",
        "riscv64",
        "--kernel",
        junk.to_str().unwrap(),
        "--initrd",
        initrd.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(101), "{err}");
    assert!(err.contains("initrd") && err.contains("gzip"), "{err}");
    // An x86 kernel passed as riscv64.
    let mut bz = vec![0u8; 8192];
    bz[0x202..0x206].copy_from_slice(b"HdrS");
    std::fs::write(&junk, &bz).unwrap();
    let out = wio(&[
        "run",
        "--arch",
        "riscv64",
        "--kernel",
        junk.to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("x86 bzImage"));
    // Too little memory for the kernel.
    let mut big = image.clone();
    big.resize(20 << 20, 0);
    std::fs::write(&junk, &big).unwrap();
    let out = wio(&[
        "run",
        "--arch",
        "riscv64",
        "--kernel",
        junk.to_str().unwrap(),
        "--mem",
        "16",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("raise --mem"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn virtio_rng_completions_are_scheduled_and_traced() {
    if !require_riscv_guests("virtio_rng_completions_are_scheduled_and_traced") {
        return;
    }
    let dir = wio_e2e_tests::scratch("rv-trace");
    let trace = dir.join("t.jsonl");
    let (_, s) = boot(4, &["--trace", trace.to_str().unwrap()]);
    let text = std::fs::read_to_string(&trace).unwrap();
    let completions: Vec<serde_json::Value> = text
        .lines()
        .filter(|l| l.contains("\"ev\":\"virtio\""))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!completions.is_empty(), "the guest used the virtio-rng");
    for c in &completions {
        // Served exactly at the virtual time its latency (drawn from the seed) made it due.
        assert_eq!(c["t"], c["due"], "{c}");
        assert!(c["error"].is_null(), "{c}");
    }
    let out = wio(&["verify-trace", trace.to_str().unwrap()]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        s["trace_hash"].as_str().unwrap()
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The built ext4 root disk, or None after skipping `test`.
fn rootfs(test: &str) -> Option<std::path::PathBuf> {
    require_riscv_artifact(test, "RISCV64_ROOTFS", Capability::RiscvGuests)
}

/// Whether e2fsprogs' `tool` is here; skips the part of `test` that reads the disk back
/// if not.
fn have(test: &str, tool: &str) -> bool {
    let ok = std::process::Command::new(tool).arg("-V").output().is_ok();
    if !ok {
        skip(
            test,
            Capability::E2fsprogs,
            &format!("the check of the persisted disk needs {tool}, which is not installed (apt-get install e2fsprogs)"),
        );
    }
    ok
}

#[test]
fn disk_root_keeps_flushed_data_loses_the_rest_and_never_touches_the_base() {
    let test = "disk_root_keeps_flushed_data_loses_the_rest_and_never_touches_the_base";
    if !require_riscv_guests(test) {
        return;
    }
    let Some(base) = rootfs(test) else { return };
    let before = std::fs::read(&base).unwrap();
    let dir = wio_e2e_tests::scratch("rv-disk");
    let persisted = dir.join("after.ext4");
    let (out, s) = run_with_summary(&[
        "--arch",
        "riscv64",
        "--seed",
        "6",
        "--no-summary",
        base.to_str().unwrap(),
        "--persist",
        persisted.to_str().unwrap(),
    ]);
    let text = stdout(&out);
    assert_eq!(s["exit_status"], 0, "{text}");
    assert!(text.contains("EXT4-fs (vda): mounted"), "{text}");
    let durable_line = console_line(&text, "workload: disk: durable")
        .expect("disk workload line")
        .to_string();
    assert!(s["disk"]["flushes"].as_u64().unwrap() > 0);
    assert!(s["disk"]["durable_chunks"].as_u64().unwrap() > 0);
    assert!(
        s["disk"]["unflushed_chunks"].as_u64().unwrap() >= 16,
        "the O_DIRECT write was never flushed: {}",
        s["disk"]
    );
    assert!(
        std::fs::read(&base).unwrap() == before,
        "the base image must never change"
    );
    if have(test, "e2fsck") && have(test, "debugfs") {
        // Replay the journal as a mount would, then read the files back.
        let fsck = std::process::Command::new("e2fsck")
            .args(["-fy", persisted.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            matches!(fsck.status.code(), Some(0) | Some(1)),
            "{}",
            String::from_utf8_lossy(&fsck.stdout)
        );
        let cat = std::process::Command::new("debugfs")
            .args(["-R", "cat /data/durable.txt", persisted.to_str().unwrap()])
            .output()
            .unwrap();
        let content = String::from_utf8_lossy(&cat.stdout).trim().to_string();
        assert!(
            durable_line.contains(&content) && content.starts_with("durable "),
            "{content:?} vs {durable_line:?}"
        );
        let ls = std::process::Command::new("debugfs")
            .args(["-R", "ls /data", persisted.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            !String::from_utf8_lossy(&ls.stdout).contains("unflushed.bin"),
            "unflushed data must not survive the crash"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn disk_completion_order_follows_the_seed() {
    if !require_riscv_guests("disk_completion_order_follows_the_seed") {
        return;
    }
    let Some(base) = rootfs("disk_completion_order_follows_the_seed") else {
        return;
    };
    let dir = wio_e2e_tests::scratch("rv-order");
    let order = |seed: &str, name: &str| {
        let trace = dir.join(name);
        let (_, s) = run_with_summary(&[
            "--arch",
            "riscv64",
            "--seed",
            seed,
            "--no-summary",
            "--quiet",
            base.to_str().unwrap(),
            "--trace",
            trace.to_str().unwrap(),
        ]);
        assert_eq!(s["exit_status"], 0);
        let heads: Vec<String> = std::fs::read_to_string(&trace)
            .unwrap()
            .lines()
            .filter(|l| l.contains("\"ev\":\"virtio\"") && l.contains("\"device\":2"))
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                format!("{}@{}", v["head"], v["t"])
            })
            .collect();
        (heads, s["trace_hash"].clone())
    };
    let (a1, h1) = order("1", "a1.jsonl");
    let (a2, h2) = order("1", "a2.jsonl");
    let (b, hb) = order("2", "b.jsonl");
    assert!(a1.len() > 20, "the guest did disk I/O: {}", a1.len());
    assert_eq!(a1, a2, "one seed, one completion order");
    assert_eq!(h1, h2);
    assert_ne!(a1, b, "another seed, another completion schedule");
    assert_ne!(h1, hb);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bad_disk_images_are_one_line_errors() {
    let dir = wio_e2e_tests::scratch("rv-baddisk");
    let tiny = dir.join("tiny.img");
    std::fs::write(&tiny, [0u8; 100]).unwrap();
    for (disk, needle) in [
        ("/nonexistent/disk.img", "No such file"),
        (dir.to_str().unwrap(), "not a regular file"),
        (tiny.to_str().unwrap(), "smaller than one 512-byte sector"),
    ] {
        let out = wio(&[
            "run",
            "--arch",
            "riscv64",
            "--kernel",
            "/nonexistent/Image",
            disk,
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(101), "{err}");
        assert!(err.contains(needle), "{err}");
        assert_eq!(
            err.lines().filter(|l| l.starts_with("wio: error:")).count(),
            1,
            "{err}"
        );
    }
    // x86-64 attaches disks too (virtio-blk in slot 2): the same one-line error.
    let out = wio(&["run", "--seed", "1", tiny.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(101),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn network_ping_reaches_the_peer_and_the_pcap_follows_the_seed() {
    if !require_riscv_guests("network_ping_reaches_the_peer_and_the_pcap_follows_the_seed") {
        return;
    }
    let dir = wio_e2e_tests::scratch("rv-net");
    let capture = |seed: u64, name: &str| {
        let pcap = dir.join(name);
        let (out, _) = boot(seed, &["--pcap", pcap.to_str().unwrap()]);
        let text = stdout(&out);
        let line = console_line(&text, "workload: net:")
            .unwrap_or_else(|| panic!("no net line:\n{text}"))
            .to_string();
        (line, std::fs::read(&pcap).unwrap(), pcap)
    };
    let (line1, bytes1, pcap1) = capture(21, "a.pcap");
    assert!(line1.contains("3 replies"), "{line1}");
    let (out, _) = boot(21, &[]);
    let text = stdout(&out);
    assert_eq!(
        console_line(&text, "workload: tcp echo:"),
        Some("workload: tcp echo: hello-over-tcp"),
        "TCP echo through the peer's smoltcp stack"
    );
    let (_, bytes1b, _) = capture(21, "b.pcap");
    assert_eq!(bytes1, bytes1b, "one seed, byte-identical capture");
    let (_, bytes2, _) = capture(22, "c.pcap");
    assert_ne!(bytes1, bytes2, "another seed, another link timing");
    assert_eq!(
        &bytes1[..4],
        &0xa1b2_3c4du32.to_le_bytes(),
        "pcap with nanosecond timestamps"
    );
    match std::process::Command::new("tcpdump")
        .args(["-nn", "-r", pcap1.to_str().unwrap()])
        .output()
    {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(text.contains("ARP, Reply 10.0.2.2 is-at"), "{text}");
            assert_eq!(text.matches("ICMP echo reply").count(), 3, "{text}");
            assert!(
                text.contains("10.0.2.2.7 > 10.0.2.15") && text.contains("Flags [S.]"),
                "TCP handshake in the capture: {text}"
            );
        }
        Ok(out) => panic!(
            "tcpdump cannot read the pcap: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => skip(
            "network_ping_reaches_the_peer_and_the_pcap_follows_the_seed",
            Capability::Tcpdump,
            &format!(
                "the tcpdump check of the pcap cannot run tcpdump ({e}) (apt-get install tcpdump)"
            ),
        ),
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn debian_redis_server_runs_and_answers_deterministically() {
    if !require_riscv_guests("debian_redis_server_runs_and_answers_deterministically") {
        return;
    }
    let Some(disk) = require_riscv_artifact(
        "debian_redis_server_runs_and_answers_deterministically",
        "RISCV64_REDIS_ROOTFS",
        Capability::RiscvGuests,
    ) else {
        return;
    };
    let (out1, s1) = boot(12, &[disk.to_str().unwrap()]);
    let (out2, s2) = boot(12, &[disk.to_str().unwrap()]);
    let text = stdout(&out1);
    let line =
        console_line(&text, "workload: redis:").unwrap_or_else(|| panic!("no redis line:\n{text}"));
    assert!(
        line.contains("ping=PONG") && line.contains("incr=2"),
        "{line}"
    );
    assert_eq!(out1.stdout, out2.stdout, "one seed, one console");
    assert_eq!(s1["trace_hash"], s2["trace_hash"]);
}

#[test]
fn ten_runs_with_heavy_disk_and_network_io_are_identical() {
    if !require_riscv_guests("ten_runs_with_heavy_disk_and_network_io_are_identical") {
        return;
    }
    let Some(disk) = rootfs("ten_runs_with_heavy_disk_and_network_io_are_identical") else {
        return;
    };
    // The I/O benchmark workload: 16 MiB of O_DIRECT disk I/O and 100 pings over a lossy link.
    let args = [
        disk.to_str().unwrap(),
        "--cmdline",
        "console=ttyS0 panic=-1 root=/dev/vda rw rootfstype=ext4 init=/init wio.bench=1",
        "--net-loss-ppm",
        "50000",
        "--net-dup-ppm",
        "20000",
    ];
    let (first_out, first) = boot(31, &args);
    assert!(
        first["disk"]["writes"].as_u64().unwrap() > 200,
        "{}",
        first["disk"]
    );
    assert!(stdout(&first_out).contains("bench: net done"));
    for i in 1..10 {
        let (out, s) = boot(31, &args);
        assert_eq!(s["trace_hash"], first["trace_hash"], "run {i}");
        assert_eq!(s["instructions"], first["instructions"], "run {i}");
        assert_eq!(out.stdout, first_out.stdout, "run {i}");
    }
}

#[test]
fn compiled_and_interpreted_boots_are_identical() {
    // The block compiler must be invisible: a boot with it and one interpreting every
    // block (WIO_NO_JIT=1) give the same trace, console and instruction count.
    if !require_riscv_guests("compiled_and_interpreted_boots_are_identical") {
        return;
    }
    let dir = wio_e2e_tests::scratch("nojit");
    let mut sums = Vec::new();
    for (i, no_jit) in ["0", "1"].iter().enumerate() {
        let path = dir.join(format!("s{i}.json"));
        let args = [
            "run",
            "--arch",
            "riscv64",
            "--guest",
            "small",
            "--seed",
            "5",
            "--no-summary",
            "--summary-json",
            path.to_str().expect("utf-8 path"),
        ];
        let out = wio_e2e_tests::wio_env(&args, "WIO_NO_JIT", no_jit);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!("no summary ({e}): {}", String::from_utf8_lossy(&out.stderr))
        });
        let s: serde_json::Value = serde_json::from_str(&text).expect("summary is JSON");
        assert_eq!(s["exit_status"], 0, "{}", stdout(&out));
        sums.push(s);
    }
    for key in ["trace_hash", "console_sha256", "instructions", "virtual_ns"] {
        assert_eq!(sums[0][key], sums[1][key], "{key}");
    }
}
