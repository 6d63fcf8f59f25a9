//! End-to-end tests of snapshots on riscv64 guests: a restored run continues
//! exactly as the uninterrupted one, at several points of a Linux boot and its
//! workload; a restore with another seed shares the past and changes the
//! future (and re-draws the clock drift); disk writes in a snapshot survive as
//! a crash leaves them; the guest can ask for a snapshot itself; damaged or
//! mismatched snapshots are one-line errors. Linux tests need the guests built by images/build-all-riscv64.sh.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use wio_e2e_tests::{require_riscv_guests, run_with_summary, scratch, stderr, stdout, wio};

/// Snapshot files a run wrote into `dir`, in the order of their virtual times.
fn snapshots_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            let name = p.file_name()?.to_str()?.to_string();
            let ns = name
                .strip_prefix("snap-")?
                .strip_suffix(".snap")?
                .parse()
                .ok()?;
            Some((ns, p))
        })
        .collect();
    v.sort();
    v.into_iter().map(|(_, p)| p).collect()
}

fn same_end(a: &serde_json::Value, b: &serde_json::Value, what: &str) {
    for key in [
        "trace_hash",
        "trace_lines",
        "virtual_ns",
        "instructions",
        "console_sha256",
        "exit_status",
    ] {
        assert_eq!(a[key], b[key], "{what}: {key} differs");
    }
}

#[test]
fn restores_at_five_points_of_a_boot_continue_exactly() {
    if !require_riscv_guests("restores_at_five_points_of_a_boot_continue_exactly") {
        return;
    }
    let dir = scratch("snap-five");
    let out_tpl = dir.join("snap-{ns}.snap");
    let base = [
        "--arch",
        "riscv64",
        "--seed",
        "5",
        "--quiet",
        "--no-summary",
    ];
    let (_, plain) = run_with_summary(&base);
    let mut args = base.to_vec();
    // Early boot, the kernel starting init, the workload starting, mid-workload, near the end.
    for at in [
        "30ms",
        "console:Run /init",
        "console:wio-init: start",
        "1s",
        "2s",
    ] {
        args.extend(["--snapshot-at", at]);
    }
    args.extend(["--snapshot-out", out_tpl.to_str().unwrap()]);
    let (out, full) = run_with_summary(&args);
    same_end(&full, &plain, "taking snapshots changed the run");
    let snaps = snapshots_in(&dir);
    assert_eq!(snaps.len(), 5, "{}", stderr(&out));
    for snap in &snaps {
        let (out, restored) =
            run_with_summary(&["--from", snap.to_str().unwrap(), "--quiet", "--no-summary"]);
        same_end(
            &restored,
            &plain,
            &format!("restore of {} ({})", snap.display(), stderr(&out)),
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_new_seed_shares_the_past_and_changes_the_future() {
    if !require_riscv_guests("a_new_seed_shares_the_past_and_changes_the_future") {
        return;
    }
    let dir = scratch("snap-reseed");
    let snap = dir.join("start.snap");
    let (out, _) = run_with_summary(&[
        "--arch",
        "riscv64",
        "--seed",
        "3",
        "--no-summary",
        "--snapshot-at",
        "console:wio-init: start",
        "--snapshot-out",
        snap.to_str().unwrap(),
    ]);
    let before = stdout(&out);
    let from = snap.to_str().unwrap();
    let branch = |seed: &str| run_with_summary(&["--from", from, "--seed", seed, "--no-summary"]);
    let (a_out, a) = branch("100");
    let (b_out, b) = branch("100");
    let (c_out, c) = branch("101");
    assert_eq!(a["trace_hash"], b["trace_hash"], "one seed, one future");
    assert_eq!(a_out.stdout, b_out.stdout);
    assert_ne!(
        a["trace_hash"], c["trace_hash"],
        "another seed, another future"
    );
    assert_eq!(a["seed"], 100);
    // The guest sees other entropy after the branch point, and the same history before it.
    let probe = |s: &str| {
        s.lines()
            .find(|l| l.starts_with("probe: getrandom:"))
            .map(str::to_string)
    };
    let (pa, pc, p0) = (
        probe(&stdout(&a_out)),
        probe(&stdout(&c_out)),
        probe(&before),
    );
    assert!(pa.is_some() && pc.is_some(), "{}", stdout(&a_out));
    assert_ne!(pa, pc, "getrandom differs between branch seeds");
    assert_ne!(pa, p0, "and from the original run's future");
    let _ = std::fs::remove_dir_all(dir);
}

/// The `clock-drift` trace events of a trace file: (ppm, the ppm it replaced).
fn drifts_in(trace: &Path) -> Vec<(i64, Option<i64>)> {
    std::fs::read_to_string(trace)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("trace line is JSON"))
        .filter(|v| v["ev"] == "clock-drift")
        .map(|v| (v["ppm"].as_i64().expect("ppm"), v["from_ppm"].as_i64()))
        .collect()
}

/// Seed 4 drifts +41 ppm at boot (a fast oscillator: some ns hold two cycles); branches
/// with seeds 2 and 12 re-draw -22 and +67 ppm (the values are not asserted, only that
/// they come from the seed and differ).
#[test]
fn clock_drift_follows_the_seed_and_a_restore_redraws_it() {
    if !require_riscv_guests("clock_drift_follows_the_seed_and_a_restore_redraws_it") {
        return;
    }
    let dir = scratch("snap-drift");
    let (snap, trace) = (dir.join("1s.snap"), dir.join("boot.jsonl"));
    let boot = |extra: &[&str]| {
        let mut args = vec![
            "--arch",
            "riscv64",
            "--seed",
            "4",
            "--quiet",
            "--no-summary",
        ];
        args.extend_from_slice(extra);
        let (_, s) = run_with_summary(&args);
        assert_eq!(s["exit_status"], 0, "{extra:?}");
        s
    };
    let (snap_s, trace_s) = (snap.to_str().unwrap(), trace.to_str().unwrap());
    let first = boot(&[
        "--trace",
        trace_s,
        "--snapshot-at",
        "1s",
        "--snapshot-out",
        snap_s,
    ]);
    same_end(&first, &boot(&[]), "one seed, one drift");
    let off = boot(&["--sched-noise", "off"]);
    assert_ne!(first["trace_hash"], off["trace_hash"]);
    assert_ne!(first["virtual_ns"], off["virtual_ns"]);
    let booted = drifts_in(&trace);
    assert_eq!(booted.len(), 1, "one drift at boot: {booted:?}");
    let (ppm, _) = booted[0];
    assert!(ppm.abs() <= 100, "light noise drifts up to 100 ppm: {ppm}");
    // Restores with two other seeds each re-draw the drift, from the snapshot's.
    let branch = |seed: &str| {
        let t = dir.join(format!("branch-{seed}.jsonl"));
        let args = ["--from", snap_s, "--seed", seed, "--quiet", "--no-summary"];
        let (_, s) = run_with_summary(&[&args[..], &["--trace", t.to_str().unwrap()]].concat());
        assert_eq!(s["exit_status"], 0);
        drifts_in(&t)
    };
    let (two, twelve) = (branch("2"), branch("12"));
    assert_eq!(two.len(), 1, "{two:?}");
    assert_eq!(twelve.len(), 1, "{twelve:?}");
    assert_eq!((two[0].1, twelve[0].1), (Some(ppm), Some(ppm)));
    assert_ne!(two[0].0, twelve[0].0, "seeds 2 and 12 drift differently");
    assert!(two[0].0.abs() <= 100 && twelve[0].0.abs() <= 100);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn disk_writes_in_a_snapshot_survive_as_the_crash_leaves_them() {
    if !require_riscv_guests("disk_writes_in_a_snapshot_survive_as_the_crash_leaves_them") {
        return;
    }
    let Some(base) = wio_e2e_tests::require_riscv_artifact(
        "disk_writes_in_a_snapshot_survive_as_the_crash_leaves_them",
        "RISCV64_ROOTFS",
        wio_e2e_tests::Capability::RiscvGuests,
    ) else {
        return;
    };
    let before = std::fs::read(&base).unwrap();
    let dir = scratch("snap-disk");
    let snap = dir.join("written.snap");
    let persisted_full = dir.join("full.ext4");
    let persisted_restored = dir.join("restored.ext4");
    // Snapshot after the synced file and the unflushed O_DIRECT write, before the crash.
    let (out, full) = run_with_summary(&[
        "--arch",
        "riscv64",
        "--seed",
        "6",
        "--no-summary",
        base.to_str().unwrap(),
        "--persist",
        persisted_full.to_str().unwrap(),
        "--snapshot-at",
        "console:workload: disk: durable",
        "--snapshot-out",
        snap.to_str().unwrap(),
    ]);
    assert_eq!(full["exit_status"], 0, "{}", stderr(&out));
    assert!(snap.exists(), "{}", stderr(&out));
    let (out, restored) = run_with_summary(&[
        "--from",
        snap.to_str().unwrap(),
        "--no-summary",
        "--quiet",
        "--persist",
        persisted_restored.to_str().unwrap(),
    ]);
    same_end(
        &restored,
        &full,
        &format!("disk restore ({})", stderr(&out)),
    );
    assert_eq!(restored["disk"], full["disk"]);
    assert!(
        full["disk"]["unflushed_chunks"].as_u64().unwrap() >= 16,
        "the snapshot held the unflushed write and the crash dropped it: {}",
        restored["disk"]
    );
    assert_eq!(
        std::fs::read(&persisted_full).unwrap(),
        std::fs::read(&persisted_restored).unwrap(),
        "the restored run leaves the same durable disk"
    );
    assert!(
        std::fs::read(&base).unwrap() == before,
        "the base image must never change"
    );
    // Branches of the disk snapshot share its overlay copy-on-write; each matches its rerun.
    let rep = dir.join("disk-explore.json");
    let o = wio(&[
        "explore",
        "--from",
        snap.to_str().unwrap(),
        "--seeds",
        "0..4",
        "--jobs",
        "2",
        "--report",
        rep.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&rep).unwrap()).unwrap();
    let third = &r["results"][2];
    let (_, alone) = run_with_summary(&[
        "--from",
        snap.to_str().unwrap(),
        "--seed",
        "2",
        "--quiet",
        "--no-summary",
    ]);
    assert_eq!(alone["trace_hash"], third["trace_hash"]);
    // A wrong base image is refused, naming the disk.
    let other = dir.join("other.ext4");
    let mut bytes = before.clone();
    bytes[2048] ^= 0xff;
    std::fs::write(&other, &bytes).unwrap();
    let o = wio(&[
        "run",
        "--from",
        snap.to_str().unwrap(),
        other.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(101), "{}", stderr(&o));
    assert!(stderr(&o).contains("not the base image the snapshot was taken on"));
    let _ = std::fs::remove_dir_all(dir);
}

/// A tiny S-mode riscv64 "kernel" (Image format) that asks wio for a snapshot
/// through the SBI WIO extension, computes, prints through the legacy SBI console
/// and powers off.
fn sbi_guest() -> Vec<u8> {
    fn i(op: u32, rd: u32, f3: u32, rs1: u32, imm: i32) -> u32 {
        ((imm as u32 & 0xfff) << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | op
    }
    fn addi(rd: u32, rs1: u32, imm: i32) -> u32 {
        i(0x13, rd, 0, rs1, imm)
    }
    fn lui(rd: u32, imm20: u32) -> u32 {
        (imm20 << 12) | (rd << 7) | 0x37
    }
    fn li(rd: u32, v: u32) -> [u32; 2] {
        let lo = ((v & 0xfff) as i32) << 20 >> 20;
        let hi = v.wrapping_sub(lo as u32) >> 12;
        [lui(rd, hi), addi(rd, rd, lo)]
    }
    fn bne_back(rs1: u32, rs2: u32, back_bytes: i32) -> u32 {
        let o = (-back_bytes) as u32;
        (((o >> 12) & 1) << 31)
            | (((o >> 5) & 0x3f) << 25)
            | (rs2 << 20)
            | (rs1 << 15)
            | (1 << 12)
            | (((o >> 1) & 0xf) << 8)
            | (((o >> 11) & 1) << 7)
            | 0x63
    }
    const ECALL: u32 = 0x73;
    let (a0, a1, a6, a7, t0, t1) = (10, 11, 16, 17, 5, 6);
    let mut code: Vec<u32> = Vec::new();
    let putc = |code: &mut Vec<u32>, c: u8| {
        code.extend(li(a7, 1));
        code.push(addi(a0, 0, i32::from(c)));
        code.push(ECALL);
    };
    for c in b"before\n" {
        putc(&mut code, *c);
    }
    code.extend(li(a7, 0x0A57_494F));
    code.push(addi(a6, 0, 0));
    code.push(addi(a0, 0, 7));
    code.push(ECALL);
    // t0 counts 200000 iterations of t1 += t0.
    code.extend(li(t0, 200_000));
    code.push(addi(t1, t1, 3));
    code.push(addi(t0, t0, -1));
    code.push(bne_back(t0, 0, 8));
    for c in b"after\n" {
        putc(&mut code, *c);
    }
    code.extend(li(a7, 0x5352_5354)); // SRST: shutdown, no reason
    code.push(addi(a6, 0, 0));
    code.push(addi(a0, 0, 0));
    code.push(addi(a1, 0, 0));
    code.push(ECALL);
    let mut image = vec![0u8; 64];
    image[0..4].copy_from_slice(&0x0400_006fu32.to_le_bytes()); // j +64
    image[8..16].copy_from_slice(&0x20_0000u64.to_le_bytes());
    image[48..56].copy_from_slice(b"RISCV\0\0\0");
    image[56..60].copy_from_slice(b"RSC\x05");
    for w in code {
        image.extend_from_slice(&w.to_le_bytes());
    }
    let size = image.len() as u64;
    image[16..24].copy_from_slice(&size.to_le_bytes());
    image
}

#[test]
fn the_guest_asks_for_a_snapshot_through_sbi() {
    let dir = scratch("snap-sbi");
    let kernel = dir.join("sbi.Image");
    std::fs::write(&kernel, sbi_guest()).unwrap();
    let snap = dir.join("guest.snap");
    let common = ["--no-summary", "--quiet"];
    let (out, plain) = run_with_summary(&[
        "--arch",
        "riscv64",
        "--kernel",
        kernel.to_str().unwrap(),
        "--mem",
        "64",
        common[0],
    ]);
    assert_eq!(plain["exit_status"], 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("before\nafter\n"), "{}", stdout(&out));
    let (out, full) = run_with_summary(&[
        "--arch",
        "riscv64",
        "--kernel",
        kernel.to_str().unwrap(),
        "--mem",
        "64",
        "--snapshot-at",
        "guest",
        "--snapshot-out",
        snap.to_str().unwrap(),
        common[0],
        common[1],
    ]);
    same_end(
        &full,
        &plain,
        "the guest's snapshot request changed the run",
    );
    assert!(
        stderr(&out).contains("guest request (tag 7)"),
        "{}",
        stderr(&out)
    );
    let (out, restored) = run_with_summary(&["--from", snap.to_str().unwrap(), common[0]]);
    assert_eq!(stdout(&out), "after\n", "only the future is printed again");
    same_end(&restored, &plain, "restore of the guest's snapshot");
    let _ = std::fs::remove_dir_all(dir);
}

/// Runs the SBI guest with `--snapshot-at guest`, writing the snapshot to `out`.
fn snapshot_sbi_guest(kernel: &Path, out: &Path) -> std::process::Output {
    wio(&[
        "run",
        "--arch",
        "riscv64",
        "--kernel",
        kernel.to_str().unwrap(),
        "--mem",
        "64",
        "--snapshot-at",
        "guest",
        "--snapshot-out",
        out.to_str().unwrap(),
        "--quiet",
        "--no-summary",
    ])
}

#[test]
fn damaged_or_foreign_snapshots_are_one_line_errors() {
    let dir = scratch("snap-bad");
    let kernel = dir.join("sbi.Image");
    std::fs::write(&kernel, sbi_guest()).unwrap();
    let snap = dir.join("good.snap");
    let o = snapshot_sbi_guest(&kernel, &snap);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let good = std::fs::read(&snap).unwrap();
    let check = |name: &str, bytes: &[u8], code: i32, needle: &str| {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        let o = wio(&["run", "--from", p.to_str().unwrap(), "--quiet"]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(code), "{name}: {err}");
        assert!(err.contains(needle), "{name}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{name}: one line: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
    };
    check("truncated.snap", &good[..good.len() / 2], 101, "truncated");
    let mut corrupt = good.clone();
    let mid = corrupt.len() / 2;
    corrupt[mid] ^= 0x55;
    check("corrupt.snap", &corrupt, 101, "checksum");
    let mut version = good.clone();
    version[8] = 9;
    check("version.snap", &version, 101, "format version 9");
    check("empty.snap", b"", 101, "not a wio snapshot");
    // One damaged section is named (its own checksum fails first).
    let sections = sections_of(&good);
    let names: Vec<&str> = sections.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names.first(), Some(&"meta"), "{names:?}");
    assert_eq!(names.last(), Some(&"memory"), "{names:?}");
    for want in [
        "hart", "plic", "uart", "events", "faults", "promises", "virtio.0",
    ] {
        assert!(names.contains(&want), "{want} in {names:?}");
    }
    let plic = sections.iter().find(|s| s.name == "plic").unwrap();
    let mut b = good.clone();
    b[plic.payload.start] ^= 0x40;
    check(
        "plic.snap",
        &b,
        101,
        "section `plic` does not match its checksum",
    );
    // A section whose checksum holds but whose state its component refuses is named too:
    // a PLIC priority of 9 (the guest can write at most 7).
    let mut b = good.clone();
    assert_eq!(b[plic.payload.start], 0, "priority of source 0");
    b[plic.payload.start] = 9;
    reseal(&mut b, &sections);
    check(
        "plic-refused.snap",
        &b,
        101,
        "has a `plic` section this machine refuses: saved PLIC register priority holds 0x9",
    );
    // Valid containers around damaged machine state (checksums recomputed): the restore
    // refuses or runs (a damaged hart may well loop forever: each try gets 2 wall seconds),
    // but never panics.
    let state: Vec<&Section> = sections
        .iter()
        .filter(|s| s.name != "meta" && s.name != "memory")
        .collect();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut codes = Vec::new();
    for round in 0..24 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut b = good.clone();
        for k in 0..1 + round % 4 {
            let section = state[(x >> (16 * k)) as usize % state.len()];
            let len = section.payload.len();
            if len > 0 {
                let at = section.payload.start + ((x >> (8 * k)) as usize % len.min(4096));
                b[at] ^= (x >> 40) as u8 | 1;
            }
        }
        reseal(&mut b, &sections);
        let p = dir.join("mutated.snap");
        std::fs::write(&p, &b).unwrap();
        let o = std::process::Command::new("timeout")
            .arg("2")
            .arg(wio_e2e_tests::wio_bin())
            .args([
                "run",
                "--from",
                p.to_str().unwrap(),
                "--quiet",
                "--no-summary",
            ])
            .output()
            .unwrap();
        let err = stderr(&o);
        assert!(!err.contains("panicked"), "round {round}: {err}");
        codes.push(o.status.code());
    }
    eprintln!("exit codes of restores of damaged machine states: {codes:?}");
    check(
        "text.snap",
        b"hello world, not a snapshot",
        101,
        "not a wio snapshot",
    );
    let o = wio(&["run", "--from", dir.join("missing.snap").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(101), "{}", stderr(&o));
    let o = wio(&["run", "--from", snap.to_str().unwrap(), "--arch", "x86_64"]);
    assert_eq!(o.status.code(), Some(100), "{}", stderr(&o));
    assert!(stderr(&o).contains("riscv64 guest"), "{}", stderr(&o));
    let o = wio(&[
        "run",
        "--from",
        snap.to_str().unwrap(),
        "--kernel",
        kernel.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(100), "{}", stderr(&o));
    let o = wio(&["run", "--arch", "riscv64", "--snapshot-at", "soon"]);
    assert_eq!(o.status.code(), Some(100), "{}", stderr(&o));
    assert!(stderr(&o).contains("--snapshot-at"), "{}", stderr(&o));
    // A snapshot directory that cannot be written is an output error and leaves nothing.
    let o = snapshot_sbi_guest(&kernel, &dir.join("no/such/dir/x.snap"));
    assert_eq!(o.status.code(), Some(105), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_snapshot_that_cannot_be_written_leaves_no_file_behind() {
    let dir = scratch("snap-full");
    let kernel = dir.join("sbi.Image");
    std::fs::write(&kernel, sbi_guest()).unwrap();
    let out = dir.join("full.snap");
    // A file-size limit of 4 KiB makes the write fail part-way, as a full disk does.
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -f 8; exec '{}' run --arch riscv64 --kernel '{}' --mem 64 --snapshot-at guest --snapshot-out '{}' --quiet --no-summary",
            wio_e2e_tests::wio_bin().display(),
            kernel.display(),
            out.display()
        ))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(105), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot write snapshot"),
        "{}",
        stderr(&o)
    );
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "sbi.Image")
        .collect();
    assert!(
        left.is_empty(),
        "nothing that looks like a snapshot is left: {left:?}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn x86_64_snapshots_at_a_guest_request_a_console_line_and_a_time_restore_exactly() {
    if !wio_e2e_tests::require_kvm(
        "x86_64_snapshots_at_a_guest_request_a_console_line_and_a_time_restore_exactly",
    ) {
        return;
    }
    let dir = scratch("snap-x86");
    let tpl = dir.join("snap-{ns}.snap");
    let base = ["--seed", "4", "--cmdline", "snap", "--no-summary"];
    let (out, plain) = run_with_summary(&base);
    assert_eq!(plain["exit_status"], 0, "{}", stdout(&out));
    let mut args = base.to_vec();
    // The guest asks right after its CPUID report; then a console line; 5 s is inside its
    // 10-second PIT sleep.
    args.extend([
        "--snapshot-at",
        "guest",
        "--snapshot-at",
        "console:pit-mode3",
        "--snapshot-at",
        "5s",
        "--snapshot-out",
        tpl.to_str().unwrap(),
    ]);
    let (out, full) = run_with_summary(&args);
    for key in [
        "trace_hash",
        "virtual_ns",
        "console_sha256",
        "exit_status",
        "exits",
    ] {
        assert_eq!(full[key], plain[key], "taking snapshots changed {key}");
    }
    let before_entropy = |s: &str| {
        s.lines()
            .find(|l| l.starts_with("entropy: "))
            .map(str::to_string)
    };
    let original_entropy = before_entropy(&stdout(&out));
    let snaps = snapshots_in(&dir);
    assert_eq!(snaps.len(), 3, "{}", stderr(&out));
    for snap in &snaps {
        let (out, restored) = run_with_summary(&["--from", snap.to_str().unwrap(), "--no-summary"]);
        for key in [
            "trace_hash",
            "virtual_ns",
            "console_sha256",
            "exit_status",
            "exits",
        ] {
            assert_eq!(
                restored[key],
                plain[key],
                "restore of {}: {key} differs ({})",
                snap.display(),
                stderr(&out)
            );
        }
    }
    // Another seed from the guest's snapshot: the paravirt entropy after it differs.
    let (out, branch) = run_with_summary(&[
        "--from",
        snaps[0].to_str().unwrap(),
        "--seed",
        "9",
        "--no-summary",
    ]);
    assert_eq!(branch["exit_status"], 0);
    assert_ne!(branch["trace_hash"], plain["trace_hash"]);
    assert_ne!(before_entropy(&stdout(&out)), original_entropy);
    // Exploring the guest's snapshot: the original seed's branch is the original run, and a
    // branch equals its rerun.
    let rep = dir.join("x86-explore.json");
    let o = wio(&[
        "explore",
        "--from",
        snaps[0].to_str().unwrap(),
        "--seeds",
        "3..=5",
        "--jobs",
        "2",
        "--match",
        "test guest: ok",
        "--report",
        rep.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&rep).unwrap()).unwrap();
    assert_eq!(r["results"][1]["seed"], 4);
    assert_eq!(r["results"][1]["trace_hash"], plain["trace_hash"]);
    assert_eq!(r["results"][0]["matched"][0], "test guest: ok");
    let (_, alone) = run_with_summary(&[
        "--from",
        snaps[0].to_str().unwrap(),
        "--seed",
        "5",
        "--quiet",
        "--no-summary",
    ]);
    assert_eq!(alone["trace_hash"], r["results"][2]["trace_hash"]);
    // An x86-64 snapshot is refused by the riscv64 machine, naming the architecture.
    let o = wio(&[
        "run",
        "--from",
        snaps[0].to_str().unwrap(),
        "--arch",
        "riscv64",
    ]);
    assert_eq!(o.status.code(), Some(100), "{}", stderr(&o));
    assert!(stderr(&o).contains("x86_64 guest"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn two_identical_runs_write_byte_identical_snapshots() {
    if !require_riscv_guests("two_identical_runs_write_byte_identical_snapshots") {
        return;
    }
    let dir = scratch("snap-bytes");
    let snap = |name: &str| {
        let path = dir.join(name);
        let out = wio(&[
            "run",
            "--arch",
            "riscv64",
            "--seed",
            "5",
            "--quiet",
            "--no-summary",
            // After "Run /init": the console markers seen so far are in the snapshot.
            "--snapshot-at",
            "console:wio-init: start",
            "--snapshot-out",
            path.to_str().unwrap(),
            "--until",
            "console:wio-init: start",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        std::fs::read(&path).unwrap()
    };
    let a = snap("a.snap");
    let b = snap("b.snap");
    assert!(a.len() > 1 << 20);
    assert!(
        a == b,
        "the two snapshots differ: a snapshot must be a function of the run"
    );
}

/// One section of a snapshot file (see vmm/machines/src/snapshot/sections.rs for the layout).
struct Section {
    name: String,
    /// Where its SHA-256 is.
    digest_at: usize,
    /// Where its payload is.
    payload: std::ops::Range<usize>,
}

/// Bytes before a snapshot file's first section: magic, major, minor, length, count.
const HEADER: usize = 8 + 4 + 4 + 8 + 4;

/// The sections of a snapshot file's bytes.
fn sections_of(bytes: &[u8]) -> Vec<Section> {
    let count = u32::from_le_bytes(bytes[24..28].try_into().unwrap());
    let mut at = HEADER;
    let mut out = Vec::new();
    for _ in 0..count {
        let n = bytes[at] as usize;
        let name = String::from_utf8(bytes[at + 1..at + 1 + n].to_vec()).unwrap();
        at += 1 + n;
        let len = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
        let digest_at = at + 8;
        at += 40;
        out.push(Section {
            name,
            digest_at,
            payload: at..at + len,
        });
        at += len;
    }
    assert_eq!(at, bytes.len() - 32, "sections end at the trailer");
    out
}

/// Recomputes every section's SHA-256 and the trailer (the SHA-256 of everything but the
/// payloads), so damaged payloads reach the decoders behind the checksums.
fn reseal(bytes: &mut [u8], sections: &[Section]) {
    use sha2::{Digest, Sha256};
    for s in sections {
        let d = Sha256::digest(&bytes[s.payload.clone()]);
        bytes[s.digest_at..s.digest_at + 32].copy_from_slice(&d);
    }
    let mut trailer = Sha256::new();
    let mut from = 0;
    for s in sections {
        trailer.update(&bytes[from..s.payload.start]);
        from = s.payload.end;
    }
    trailer.update(&bytes[from..bytes.len() - 32]);
    let n = bytes.len();
    let sum = trailer.finalize();
    bytes[n - 32..].copy_from_slice(&sum);
}
