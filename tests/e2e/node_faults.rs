//! End-to-end tests of node and disk-integrity faults on riscv64, each observed from inside
//! the guest: a power cut then a restart (the second boot finds the file it synced, not
//! the one it never flushed), a pause (the guest's clock jumps over the time its CPU was
//! stopped), bit-rot (the guest's filesystem finds checksums that no longer match), and
//! an error on the n-th write only. Each run twice with one seed gives one trace. They
//! need images/build-all-riscv64.sh.

#![forbid(unsafe_code)]

use std::path::PathBuf;
use wio_e2e_tests::{
    console_line, console_lines, require_riscv_artifact, require_riscv_guests, run_with_summary,
    scratch, stderr, stdout, write_file, Capability,
};

fn rootfs(test: &str) -> Option<PathBuf> {
    require_riscv_artifact(test, "RISCV64_ROOTFS", Capability::RiscvGuests)
}

/// The root-disk command line; `crash` is the workload's wio.crash mode.
fn disk_cmdline(crash: &str) -> String {
    format!("console=ttyS0 earlycon=sbi panic=-1 random.trust_cpu=off root=/dev/vda rw rootfstype=ext4 init=/init wio.crash={crash}")
}

#[test]
fn a_crash_restarts_the_machine_from_its_durable_disk() {
    let test = "a_crash_restarts_the_machine_from_its_durable_disk";
    let Some(disk) = rootfs(test) else { return };
    let disk = disk.to_str().unwrap();
    let dir = scratch("node-crash");
    let cmdline = disk_cmdline("wait");
    let base = [
        "--arch",
        "riscv64",
        "--seed",
        "3",
        disk,
        "--cmdline",
        &cmdline,
    ];
    // Where the workload has synced durable.txt and written unflushed.bin (O_DIRECT, no
    // flush) and waits: the power is cut 50 ms later (well before ext4's 5 s commit).
    let mut args = base.to_vec();
    args.extend([
        "--quiet",
        "--no-summary",
        "--until",
        "console:waiting for a power cut",
    ]);
    let (o, waiting) = run_with_summary(&args);
    assert_eq!(
        waiting["stopped_at"],
        "waiting for a power cut",
        "{}",
        stderr(&o)
    );
    let cut = waiting["virtual_ns"].as_u64().unwrap() + 50_000_000;
    let plan = write_file(
        &dir,
        "crash.json",
        &format!(
            r#"{{"faults": [{{"at_ns": {cut}, "duration_ns": 300000000, "target": "node", "kind": "crash", "params": {{"unflushed": "lost"}}}}]}}"#
        ),
    );
    let trace = dir.join("trace.jsonl");
    let snap = dir.join("before.snap");
    let mut args = base.to_vec();
    args.extend(["--no-summary", "--fault-plan", &plan, "--trace"]);
    args.push(trace.to_str().unwrap());
    args.extend(["--snapshot-at", "1s", "--snapshot-out"]);
    args.push(snap.to_str().unwrap());
    let (out, s) = run_with_summary(&args);
    let text = stdout(&out);
    assert_eq!(s["exit_status"], 0, "{}", stderr(&out));
    assert_eq!(s["restarts"], 1, "{s}");
    assert_eq!(s["stopped_ns"], 300_000_000u64, "{s}");
    // Both boots are on the console; the second found the synced file, not the unflushed.
    assert_eq!(console_lines(&text, "Linux version").len(), 2, "{text}");
    let durable = console_line(&text, "workload: disk: durable ").unwrap();
    let content = durable["workload: disk: ".len()..]
        .split(" (synced)")
        .next()
        .unwrap();
    let after = console_line(&text, "workload: disk: after restart: ").unwrap();
    assert_eq!(
        after,
        format!("workload: disk: after restart: {content}; unflushed.bin: absent"),
        "{text}"
    );
    assert!(
        text.contains("EXT4-fs (vda): recovery complete"),
        "the journal replayed"
    );
    // The trace has the cut and the second boot, at the planned times.
    let event = |ev: &str| wio_e2e_tests::trace_event(&trace, ev);
    assert_eq!(event("power-off")["t"], cut);
    assert_eq!(event("boot")["t"], cut + 300_000_000);
    assert_eq!(event("boot")["boot"], 2);
    // One seed, one run; and a machine restored from before the cut reboots the same way
    // (it reads the kernel again from where the snapshot says it was).
    let mut args = base.to_vec();
    args.extend(["--quiet", "--no-summary", "--fault-plan", &plan]);
    let (_, again) = run_with_summary(&args);
    assert_eq!(again["trace_hash"], s["trace_hash"]);
    let (o, restored) = run_with_summary(&[
        "--from",
        snap.to_str().unwrap(),
        disk,
        "--quiet",
        "--no-summary",
    ]);
    assert_eq!(restored["trace_hash"], s["trace_hash"], "{}", stderr(&o));
    assert_eq!(restored["restarts"], 1);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_pause_stops_the_cpu_while_time_goes_on() {
    let test = "a_pause_stops_the_cpu_while_time_goes_on";
    if !require_riscv_guests(test) {
        return;
    }
    let dir = scratch("node-pause");
    // The small guest pings the peer at about 0.1, 1.1 and 2.1 s; the CPU stops for 1.5 s
    // from 0.5 s.
    let plan = write_file(
        &dir,
        "pause.json",
        r#"{"faults": [{"at_ns": 500000000, "duration_ns": 1500000000, "target": "node", "kind": "pause"}]}"#,
    );
    let base = ["--arch", "riscv64", "--seed", "1", "--no-summary"];
    let (clean_out, clean) = run_with_summary(&base);
    let mut args = base.to_vec();
    args.extend(["--fault-plan", &plan]);
    let (out, s) = run_with_summary(&args);
    assert_eq!(s["exit_status"], 0, "{}", stderr(&out));
    assert_eq!(s["stopped_ns"], 1_500_000_000u64, "{s}");
    assert_eq!(s["restarts"], 0);
    // The guest's clock ran on while its CPU stood still: its uptime at the same point of
    // the workload is later (by less than the pause: the pings' one-second waits absorb
    // part of it; measured 0.9 s).
    let uptime = |t: &str| -> f64 {
        console_line(t, "workload: uptime: ").unwrap()["workload: uptime: ".len()..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let gap = uptime(&stdout(&out)) - uptime(&stdout(&clean_out));
    assert!((0.5..=1.6).contains(&gap), "uptime moved by {gap} s");
    assert_ne!(s["trace_hash"], clean["trace_hash"]);
    let mut args = base.to_vec();
    args.extend(["--quiet", "--fault-plan", &plan]);
    let (_, again) = run_with_summary(&args);
    assert_eq!(again["trace_hash"], s["trace_hash"]);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bit_rot_corrupts_what_the_guest_reads() {
    let test = "bit_rot_corrupts_what_the_guest_reads";
    let Some(disk) = rootfs(test) else { return };
    let dir = scratch("disk-rot");
    // 2% of the sectors read during the first 2 s rot: ext4 finds bad checksums.
    let plan = write_file(
        &dir,
        "rot.json",
        r#"{"faults": [{"at_ns": 0, "duration_ns": 2000000000, "target": "disk", "kind": "bit-rot", "params": {"ppm": 20000}}]}"#,
    );
    let cmdline = disk_cmdline("0");
    // Which sectors rot is the seed's: some seeds rot a file the boot needs (init dies, the
    // kernel panics) before ext4 reads a bad metadata block. The first of a few seeds whose
    // guest sees ext4 report the corruption is the one checked (which one depends on the
    // root disk's layout, so it may move when the image changes).
    let args_of = |seed: &str| -> Vec<String> {
        [
            "--arch",
            "riscv64",
            "--seed",
            seed,
            disk.to_str().unwrap(),
            "--cmdline",
            &cmdline,
            "--no-summary",
            "--fault-plan",
            &plan,
            "--until",
            "console:EXT4-fs error",
            "--max-virtual-secs",
            "30",
        ]
        .map(str::to_string)
        .to_vec()
    };
    let mut found = None;
    let mut tried = Vec::new();
    for seed in ["3", "4", "5", "6", "7", "8"] {
        let args = args_of(seed);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let (out, s) = run_with_summary(&refs);
        if s["stopped_at"] == "EXT4-fs error" {
            found = Some((args, s));
            break;
        }
        tried.push(format!("seed {seed}: {}", stderr(&out).trim()));
    }
    let (args, s) =
        found.unwrap_or_else(|| panic!("no seed's guest saw ext4 report rot: {tried:#?}"));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert!(s["disk"]["rotted_sectors"].as_u64().unwrap() > 0, "{s}");
    let (_, again) = run_with_summary(&args);
    assert_eq!(again["trace_hash"], s["trace_hash"]);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn only_the_nth_write_fails() {
    let test = "only_the_nth_write_fails";
    let Some(disk) = rootfs(test) else { return };
    let dir = scratch("disk-nth");
    // From 1 s on, the 2nd write or flush fails, and no other.
    let plan = write_file(
        &dir,
        "nth.json",
        r#"{"faults": [{"at_ns": 1000000000, "duration_ns": 20000000000, "target": "disk", "kind": "error", "params": {"op": "write", "nth": 2}}]}"#,
    );
    let cmdline = disk_cmdline("0");
    let args = [
        "--arch",
        "riscv64",
        "--seed",
        "2",
        disk.to_str().unwrap(),
        "--cmdline",
        &cmdline,
        "--no-summary",
        "--fault-plan",
        &plan,
        "--until",
        "console:I/O error",
        "--max-virtual-secs",
        "30",
    ];
    let (out, s) = run_with_summary(&args);
    assert_eq!(s["stopped_at"], "I/O error", "{}", stderr(&out));
    assert_eq!(s["disk"]["errors"], 1, "exactly one request failed: {s}");
    let (_, again) = run_with_summary(&args);
    assert_eq!(again["trace_hash"], s["trace_hash"]);
    let _ = std::fs::remove_dir_all(dir);
}
