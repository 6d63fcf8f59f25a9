//! End-to-end tests of wio's spaceflight targets on riscv64: M-mode guests (Debian's
//! unmodified OpenSBI under Debian's kernel, bare-metal ELF programs) and radiation
//! faults. They need the artifacts of images/build-all-riscv64.sh (ci/test.sh builds
//! them) and skip loudly (SKIPPED: …) otherwise.

#![forbid(unsafe_code)]

use wio_e2e_tests::{require_riscv_guests, riscv_guest_artifact, run_with_summary, stdout};

/// Boots Debian's kernel and initramfs under OpenSBI fw_dynamic with `seed`.
fn opensbi_boot(seed: u64, extra: &[&str]) -> (String, serde_json::Value) {
    let fw = riscv_guest_artifact("RISCV64_OPENSBI_FW_DYNAMIC").expect("OpenSBI in the manifest");
    assert!(fw.is_file(), "no OpenSBI at {fw:?}");
    let kernel = riscv_guest_artifact("RISCV64_DEBIAN_IMAGE").expect("Debian kernel");
    let initrd = riscv_guest_artifact("RISCV64_DEBIAN_INITRAMFS").expect("Debian initramfs");
    let seed = seed.to_string();
    let mut args = vec![
        "--arch",
        "riscv64",
        "--firmware",
        fw.to_str().unwrap(),
        "--kernel",
        kernel.to_str().unwrap(),
        "--initrd",
        initrd.to_str().unwrap(),
        "--seed",
        &seed,
        "--no-summary",
    ];
    args.extend_from_slice(extra);
    let (out, s) = run_with_summary(&args);
    (stdout(&out), s)
}

#[test]
fn opensbi_boots_the_debian_kernel_to_its_workload_twice_identically() {
    if !require_riscv_guests("opensbi_boots_the_debian_kernel_to_its_workload_twice_identically") {
        return;
    }
    if wio_e2e_tests::require_riscv_artifact(
        "opensbi_boots_the_debian_kernel_to_its_workload_twice_identically",
        "RISCV64_OPENSBI_FW_DYNAMIC",
        wio_e2e_tests::Capability::RiscvOpensbi,
    )
    .is_none()
    {
        return;
    }
    let (text1, s1) = opensbi_boot(3, &[]);
    assert_eq!(s1["exit_status"], 0, "{text1}");
    // OpenSBI itself ran (its banner, our CLINT as its timer, the syscon power-off it
    // found in the device tree) and Linux used its SBI, not wio's.
    for needle in [
        "OpenSBI v",
        "Platform Timer Device       : aclint-mtimer @ 10000000Hz",
        "Platform Shutdown Device    : syscon-poweroff",
        "Boot HART PMP Count         : 16",
        "SBI implementation ID=0x1 ",
        "wio-init: modules loaded",
        "workload: tcp echo: hello-over-tcp",
        "wio-init: done status=0",
    ] {
        assert!(text1.contains(needle), "missing {needle:?}:\n{text1}");
    }
    assert!(s1["exits"]["mtimecmp"].as_u64().unwrap_or(0) > 10, "{s1}");
    assert_eq!(
        s1["exits"]["sbi"],
        serde_json::Value::Null,
        "wio's SBI served calls: {s1}"
    );
    let (text2, s2) = opensbi_boot(3, &[]);
    assert_eq!(s1["trace_hash"], s2["trace_hash"]);
    assert_eq!(text1, text2);
    // Another seed moves what the guest sees (its entropy at least).
    let (text3, s3) = opensbi_boot(4, &[]);
    assert_eq!(s3["exit_status"], 0);
    assert_ne!(s1["trace_hash"], s3["trace_hash"]);
    let urandom = |t: &str| {
        t.lines()
            .find(|l| l.starts_with("workload: urandom"))
            .map(str::to_string)
    };
    assert!(urandom(&text1).is_some());
    assert_ne!(urandom(&text1), urandom(&text3));
    // A snapshot in the middle (firmware state, PMP, CLINT timer) restores to the same end.
    let dir = wio_e2e_tests::scratch("opensbi");
    let snap = dir.join("mid.snap");
    let (_, s4) = opensbi_boot(
        3,
        &[
            "--quiet",
            "--snapshot-at",
            "2s",
            "--snapshot-out",
            snap.to_str().unwrap(),
        ],
    );
    assert_eq!(s4["trace_hash"], s1["trace_hash"]);
    let (_, s5) = run_with_summary(&[
        "--from",
        snap.to_str().unwrap(),
        "--seed",
        "3",
        "--quiet",
        "--no-summary",
    ]);
    assert_eq!(s5["trace_hash"], s1["trace_hash"], "restored run diverged");
}

/// The flight-software example's ELF, or None (after a skip) when not built.
fn flight_elf(test: &str) -> Option<String> {
    flight_artifact(test, "RISCV64_FLIGHT_ELF")
}

/// The flight build's artifact the manifest names `key` (RISCV64_FLIGHT_ELF, or
/// RISCV64_FLIGHT_VECTOR_ELF: the vector variant), or None (after a skip) when not built.
fn flight_artifact(test: &str, key: &str) -> Option<String> {
    let p =
        wio_e2e_tests::require_riscv_artifact(test, key, wio_e2e_tests::Capability::RiscvFlight)?;
    Some(p.to_str().expect("a UTF-8 path").to_string())
}

/// Runs the flight example with `seed`, protection `protect` ("on"/"off") and `extra`.
fn fly(elf: &str, seed: u64, protect: &str, extra: &[&str]) -> (String, serde_json::Value) {
    let seed = seed.to_string();
    let cmdline = format!("protect={protect}");
    let mut args = vec![
        "--arch",
        "riscv64",
        "--kernel",
        elf,
        "--mem",
        "64",
        "--seed",
        &seed,
        "--cmdline",
        &cmdline,
        "--no-summary",
    ];
    args.extend_from_slice(extra);
    let (out, s) = run_with_summary(&args);
    (stdout(&out), s)
}

fn promise_status<'a>(s: &'a serde_json::Value, id: &str) -> &'a str {
    s["promises"]["list"]
        .as_array()
        .and_then(|l| l.iter().find(|p| p["id"] == id))
        .and_then(|p| p["status"].as_str())
        .unwrap_or("absent")
}

const ENVELOPE: &str = "actuator command within its safe envelope";
const WATCHDOG: &str = "watchdog never fires";

/// Byte 1 of copy 0 of the command limit (state[0][3] at 0x80010000 + 12).
const LIMIT_BYTE: u64 = 0x8001_000d;

fn plan(dir: &std::path::Path, name: &str, fault: &str) -> String {
    wio_e2e_tests::write_file(dir, name, &format!("{{\"faults\": [{fault}]}}"))
}

#[test]
fn bare_metal_flight_software_runs_twice_per_seed_identically() {
    let Some(elf) = flight_elf("bare_metal_flight_software_runs_twice_per_seed_identically") else {
        return;
    };
    let (text1, s1) = fly(&elf, 1, "on", &[]);
    assert_eq!(s1["exit_status"], 0, "{text1}");
    assert!(text1.contains("protection on"), "{text1}");
    assert!(text1.contains("flight: done after 6000 ms"), "{text1}");
    for id in [ENVELOPE, WATCHDOG, "a maneuver completes"] {
        assert_eq!(promise_status(&s1, id), "passed", "{id}: {s1}");
    }
    let (text2, s2) = fly(&elf, 1, "on", &[]);
    assert_eq!((&text1, &s1["trace_hash"]), (&text2, &s2["trace_hash"]));
    // Under radiation and ECC, a run restored from a mid-flight snapshot ends the same.
    let geo = concat!(env!("CARGO_MANIFEST_DIR"), "/../images/flight/geo.toml");
    let dir = wio_e2e_tests::scratch("flight-snap");
    let snap = dir.join("mid.snap");
    let radiated = ["--ecc", "--faults", geo, "--quiet"];
    let (_, r1) = fly(&elf, 9, "off", &radiated);
    assert!(
        r1["faults"].as_array().is_some_and(|f| !f.is_empty()),
        "{r1}"
    );
    let mut with_snap = radiated.to_vec();
    with_snap.extend_from_slice(&[
        "--snapshot-at",
        "2500ms",
        "--snapshot-out",
        snap.to_str().unwrap(),
    ]);
    let (_, r2) = fly(&elf, 9, "off", &with_snap);
    let (_, r3) = run_with_summary(&[
        "--from",
        snap.to_str().unwrap(),
        "--seed",
        "9",
        "--quiet",
        "--no-summary",
    ]);
    assert_eq!(r1["trace_hash"], r2["trace_hash"]);
    assert_eq!(
        r1["trace_hash"], r3["trace_hash"],
        "restored flight diverged"
    );
    // Another seed moves the sensor noise and disturbance, hence the run.
    let (_, s3) = fly(&elf, 2, "on", &[]);
    assert_eq!(s3["exit_status"], 0);
    assert_ne!(s1["trace_hash"], s3["trace_hash"]);
}

#[test]
fn a_planned_bit_flip_reaches_the_guest_at_its_time_and_ecc_corrects_or_reports_it() {
    let Some(elf) = flight_elf(
        "a_planned_bit_flip_reaches_the_guest_at_its_time_and_ecc_corrects_or_reports_it",
    ) else {
        return;
    };
    let dir = wio_e2e_tests::scratch("upset");
    let single = plan(
        &dir,
        "single.json",
        &format!("{{\"at_ns\": 1000000000, \"target\": \"node\", \"kind\": \"upset\", \"params\": {{\"place\": {{\"ram\": {LIMIT_BYTE}}}, \"bit\": 4}}}}"),
    );
    let double = plan(
        &dir,
        "double.json",
        &format!("{{\"at_ns\": 1000000000, \"target\": \"node\", \"kind\": \"upset\", \"params\": {{\"place\": {{\"ram\": {LIMIT_BYTE}}}, \"bit\": 4, \"width\": 2}}}}"),
    );
    let trace = dir.join("t.jsonl");
    let trace = trace.to_str().unwrap();
    let events = |kind: &str| -> Vec<serde_json::Value> {
        std::fs::read_to_string(trace)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|e| e["ev"] == kind)
            .collect()
    };
    // Without ECC, the flipped limit (500 ^ 4096) is what the loop uses: the first slew
    // commands beyond the envelope.
    let (_, s) = fly(&elf, 1, "off", &["--fault-plan", &single, "--trace", trace]);
    assert_eq!(promise_status(&s, ENVELOPE), "violated", "{s}");
    let up = events("upset");
    assert_eq!(up.len(), 1);
    assert_eq!(
        up[0]["t"], 1_000_000_000u64,
        "the flip lands at its planned time"
    );
    assert_eq!(
        (up[0]["before"].as_u64(), up[0]["after"].as_u64()),
        (Some(1), Some(17))
    );
    let text = std::fs::read_to_string(trace).unwrap();
    assert!(
        text.contains("\\\"limit\\\":4596"),
        "the guest saw the flipped limit"
    );
    // With ECC the single flip is corrected at the next read of the word, within the
    // next 1 ms control cycle, and reported by the EDAC unit; nothing breaks.
    let (_, s) = fly(
        &elf,
        1,
        "off",
        &["--ecc", "--fault-plan", &single, "--trace", trace],
    );
    assert_eq!(s["exit_status"], 0, "{s}");
    assert_eq!(promise_status(&s, ENVELOPE), "passed");
    let ecc = events("ecc");
    assert_eq!(ecc.len(), 1, "{ecc:?}");
    assert_eq!(ecc[0]["error"], "corrected");
    assert_eq!(ecc[0]["word"], LIMIT_BYTE & !7);
    let t = ecc[0]["t"].as_u64().unwrap();
    assert!(
        (1_000_000_000..1_001_000_000).contains(&t),
        "corrected at {t}"
    );
    // Two bits of one word: uncorrectable; the load faults, the loop stops, the watchdog
    // resets the machine and the program reports it.
    let (text, s) = fly(
        &elf,
        1,
        "off",
        &["--ecc", "--fault-plan", &double, "--trace", trace],
    );
    assert_eq!(events("ecc")[0]["error"], "uncorrectable");
    assert!(
        text.contains("flight: trap mcause=0x5"),
        "load access fault:\n{text}"
    );
    assert!(text.contains("reset cause watchdog"), "{text}");
    assert_eq!(events("watchdog-reset").len(), 1);
    assert_eq!(promise_status(&s, WATCHDOG), "violated", "{s}");
    assert_eq!(s["restarts"], 1);
}

#[test]
fn stuck_bits_break_the_unprotected_loop_and_tmr_outvotes_them() {
    let Some(elf) = flight_elf("stuck_bits_break_the_unprotected_loop_and_tmr_outvotes_them")
    else {
        return;
    };
    let dir = wio_e2e_tests::scratch("stuck");
    let stuck = plan(
        &dir,
        "stuck.json",
        &format!("{{\"at_ns\": 1000000000, \"duration_ns\": 2000000000, \"target\": \"node\", \"kind\": \"stuck\", \"params\": {{\"ram\": {LIMIT_BYTE}, \"bit\": 4, \"value\": 1}}}}"),
    );
    let (_, s) = fly(&elf, 1, "off", &["--fault-plan", &stuck]);
    assert_eq!(promise_status(&s, ENVELOPE), "violated", "{s}");
    let (text, s) = fly(&elf, 1, "on", &["--fault-plan", &stuck]);
    assert_eq!(s["exit_status"], 0, "{text}");
    assert_eq!(promise_status(&s, ENVELOPE), "passed");
    // The scrubber rewrote the stuck copy every 10 ms of the 2 s.
    let repairs: u64 = text
        .lines()
        .find_map(|l| l.split("scrub repairs ").nth(1))
        .and_then(|n| n.trim().parse().ok())
        .expect("a scrub count");
    assert!((190..=210).contains(&repairs), "{repairs} repairs\n{text}");
}

#[test]
fn exploring_a_geo_profile_breaks_the_unprotected_loop_and_not_the_protected_one() {
    let Some(elf) =
        flight_elf("exploring_a_geo_profile_breaks_the_unprotected_loop_and_not_the_protected_one")
    else {
        return;
    };
    let geo = concat!(env!("CARGO_MANIFEST_DIR"), "/../images/flight/geo.toml");
    let dir = wio_e2e_tests::scratch("geo");
    let mut reports = Vec::new();
    for protect in ["off", "on"] {
        let snap = dir.join(format!("{protect}.snap"));
        let (_, s) = fly(
            &elf,
            0,
            protect,
            &[
                "--faults",
                geo,
                "--snapshot-at",
                "setup-complete",
                "--snapshot-out",
                snap.to_str().unwrap(),
                "--quiet",
            ],
        );
        assert_eq!(s["exit_status"], 0, "{s}");
        let report = dir.join(format!("{protect}.json"));
        wio_e2e_tests::explore_to(&snap, "0..40", &report, &["--exit-zero"]);
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        reports.push(r["results"].as_array().unwrap().clone());
    }
    let (off, on) = (&reports[0], &reports[1]);
    assert_eq!(off.len(), 40);
    assert_eq!(on.len(), 40);
    let failing = |r: &[serde_json::Value]| -> Vec<u64> {
        r.iter()
            .filter(|x| x["failed"] == true)
            .map(|x| x["seed"].as_u64().unwrap())
            .collect()
    };
    let off_failing = failing(off);
    assert!(
        off_failing.len() >= 5,
        "only {off_failing:?} failed without protection"
    );
    assert_eq!(failing(on), Vec::<u64>::new(), "protected seeds failed");
    for (a, b) in off.iter().zip(on) {
        assert_eq!(a["seed"], b["seed"]);
        assert_eq!(a["faults"], b["faults"], "the same upsets hit both");
        assert!(!a["faults"].as_array().unwrap().is_empty());
    }
    println!("geo: without protection seeds {off_failing:?} failed of 40; with it none");
}

#[test]
fn a_failing_radiation_seed_shrinks_to_the_upsets_that_matter() {
    if flight_elf("a_failing_radiation_seed_shrinks_to_the_upsets_that_matter").is_none() {
        return;
    }
    let dir = wio_e2e_tests::scratch("flight-shrink");
    let Shrunk {
        snap,
        minimal,
        report: r,
        plan,
        ..
    } = explore_and_shrink("world.toml", &dir, "0..10");
    let failing = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["failed"] == true)
        .count();
    assert!(failing > 0, "no seed of 10 failed: {r}");
    let faults = plan["nodes"][0][1]["faults"].as_array().unwrap();
    assert!(!faults.is_empty() && faults.len() <= 2, "{plan}");
    assert!(faults.iter().all(|f| f["kind"] == "upset"));
    // The minimal plan alone still breaks the promise.
    let seed = plan["seed"].as_u64().unwrap().to_string();
    let (_, s) = wio_e2e_tests::with_summary(
        "sim",
        &[
            "--from",
            snap.to_str().unwrap(),
            "--seed",
            &seed,
            "--fault-plan",
            minimal.to_str().unwrap(),
            "--quiet",
        ],
    );
    // (A world summary lists the promises judged over its nodes.)
    let violated = s["promises"]
        .as_array()
        .is_some_and(|l| l.iter().any(|p| p["status"] == "violated"));
    assert!(violated, "{s}");
}

/// A world of the flight example (`images/flight/WORLD`) snapshotted at setup-complete
/// (seed 0), explored over `seeds` and its first failing seed shrunk: the snapshot, the
/// exploration's report, the minimal plan and shrink's story.
struct Shrunk {
    snap: std::path::PathBuf,
    minimal: std::path::PathBuf,
    report: serde_json::Value,
    plan: serde_json::Value,
    story: String,
}

fn explore_and_shrink(world: &str, dir: &std::path::Path, seeds: &str) -> Shrunk {
    let world = format!("{}/../images/flight/{world}", env!("CARGO_MANIFEST_DIR"));
    let snap = dir.join("world.snap");
    let out = wio_e2e_tests::wio(&[
        "sim",
        &world,
        "--seed",
        "0",
        "--quiet",
        "--snapshot-at",
        "setup-complete",
        "--snapshot-out",
        snap.to_str().unwrap(),
    ]);
    assert!(snap.exists(), "{}", wio_e2e_tests::stderr(&out));
    let report = dir.join("world.json");
    wio_e2e_tests::explore_to(&snap, seeds, &report, &["--exit-zero"]);
    let minimal = dir.join("min.json");
    let out = wio_e2e_tests::wio(&[
        "shrink",
        "--report",
        report.to_str().unwrap(),
        "--out",
        minimal.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        wio_e2e_tests::stderr(&out)
    );
    let read = |p: &std::path::Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    Shrunk {
        report: read(&report),
        plan: read(&minimal),
        story: stdout(&out),
        snap,
        minimal,
    }
}

/// The last line of a flight: peak command, settled samples and scrub repairs.
fn flight_result(text: &str) -> &str {
    text.lines()
        .find(|l| l.starts_with("flight: done after"))
        .unwrap_or_else(|| panic!("no result line:\n{text}"))
}

#[test]
fn the_vector_flight_computes_what_the_scalar_one_does_and_its_registers_are_what_radiation_breaks()
{
    let test = "the_vector_flight_computes_what_the_scalar_one_does_and_its_registers_are_what_radiation_breaks";
    let vector = flight_artifact(test, "RISCV64_FLIGHT_VECTOR_ELF");
    let (Some(scalar), Some(vector)) = (flight_elf(test), vector) else {
        return;
    };
    let vec_isa = ["--isa", "rv64gcv"];
    // Same commands as the scalar loop (the result line sums up every cycle's command),
    // per seed, and the same bits twice.
    for seed in [1, 2] {
        let (s_text, _) = fly(&scalar, seed, "on", &[]);
        let (v_text, v1) = fly(&vector, seed, "on", &vec_isa);
        assert!(v_text.contains("vector variant, VLEN 512 bits"), "{v_text}");
        assert_eq!(flight_result(&s_text), flight_result(&v_text));
        assert_eq!(v1["exit_status"], 0);
        assert_eq!(promise_status(&v1, ENVELOPE), "passed", "{v1}");
        let (_, v2) = fly(&vector, seed, "on", &vec_isa);
        assert_eq!(v1["trace_hash"], v2["trace_hash"]);
    }
    // The X280's profile, and another VLEN: the same loop, the same result.
    let (s_text, _) = fly(&scalar, 1, "on", &[]);
    let (x_text, x) = fly(&vector, 1, "on", &["--isa", "x280"]);
    assert_eq!(x["isa"], "rv64gcv_zba_zbb_zvl512b", "{x}");
    assert_eq!(flight_result(&s_text), flight_result(&x_text));
    let (v_text, _) = fly(&vector, 1, "on", &["--vlen", "128"]);
    assert!(v_text.contains("VLEN 128 bits"), "{v_text}");
    assert_eq!(flight_result(&s_text), flight_result(&v_text));
    // On a hart without vectors it says so and stops (status 3), before any vector code.
    let (text, s) = fly(&vector, 1, "on", &[]);
    assert_eq!(s["exit_status"], 3, "{text}");
    assert!(text.contains("has no vector unit"), "{text}");

    // Side by side under the same upsets (RAM and vector registers, geo-vector.toml): the
    // working copy in v8 is refreshed every 10 ms, so TMR in RAM does not save it; a
    // refresh every 1 ms cycle does.
    let profile = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../images/flight/geo-vector.toml"
    );
    let dir = wio_e2e_tests::scratch("flight-vector");
    let mut reports = Vec::new();
    for (name, cmdline) in [("frame", "on"), ("cycle", "on refresh=cycle")] {
        let snap = dir.join(format!("{name}.snap"));
        let mut extra = vec!["--faults", profile, "--snapshot-at", "setup-complete"];
        extra.extend_from_slice(&["--snapshot-out", snap.to_str().unwrap(), "--quiet"]);
        extra.extend_from_slice(&vec_isa);
        let (_, s) = fly(&vector, 0, cmdline, &extra);
        assert_eq!(s["exit_status"], 0, "{s}");
        let report = dir.join(format!("{name}.json"));
        wio_e2e_tests::explore_to(&snap, "0..40", &report, &["--exit-zero"]);
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        reports.push(r["results"].as_array().unwrap().clone());
    }
    let failing = |r: &[serde_json::Value]| -> Vec<u64> {
        r.iter()
            .filter(|x| x["failed"] == true)
            .map(|x| x["seed"].as_u64().unwrap())
            .collect()
    };
    let (frame, cycle) = (&reports[0], &reports[1]);
    assert!(failing(frame).len() >= 3, "{:?}", failing(frame));
    assert_eq!(failing(cycle), Vec::<u64>::new());
    for (a, b) in frame.iter().zip(cycle) {
        assert_eq!(a["faults"], b["faults"], "the same upsets hit both");
        let vregs = a["faults"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["params"]["place"]["v"].is_array())
            .count();
        assert!(vregs > 100, "{vregs} vector-register upsets");
    }

    // As a world, a failing seed shrinks to one upset: of v8, in the 64-bit lane holding
    // the gain KD and the command limit (the lane wraps at VLEN 512: 8 lanes).
    let Shrunk { plan, story, .. } = explore_and_shrink("world-vector.toml", &dir, "0..20");
    let faults = plan["nodes"][0][1]["faults"].as_array().unwrap();
    assert_eq!(faults.len(), 1, "{plan}");
    let place = &faults[0]["params"]["place"]["v"];
    assert_eq!(place[0], 8, "{plan}");
    assert_eq!(place[1].as_u64().unwrap() % 8, 1, "{plan}");
    assert!(story.contains("upset (node) {\"bit\""), "{story}");
    println!(
        "vector flight: frame refresh failed {:?} of 40, cycle refresh none; shrunk to {place}",
        failing(frame)
    );
}
