//! End-to-end tests of `wio sim` (riscv64): three nodes on one virtual clock ping each
//! other by name and hold a TCP conversation through the world's switch; one seed gives
//! one world trace, another seed another; bad scenarios are one-line errors naming the
//! line. They need images/build-all-riscv64.sh.

#![forbid(unsafe_code)]

use wio_e2e_tests::{require_riscv_guests, scratch, stderr, stdout, wio, with_summary, write_file};

/// Three nodes that ping each other by name and talk TCP (also a reference run of
/// `ci/trace_hashes.sh`).
const WORLD: &str = include_str!("../worlds/three-nodes.toml");

fn sim(args: &[&str]) -> (std::process::Output, serde_json::Value) {
    with_summary("sim", args)
}

/// The first line node `node` printed that is made of numbers only (a workload's result).
fn numbers(text: &str, node: &str) -> Vec<f64> {
    let prefix = format!("{node} | ");
    text.lines()
        .filter_map(|l| l.strip_prefix(prefix.as_str()))
        .find(|l| !l.trim().is_empty() && l.split_whitespace().all(|w| w.parse::<f64>().is_ok()))
        .unwrap_or_else(|| panic!("no line of numbers from {node}: {text}"))
        .split_whitespace()
        .map(|w| w.parse().unwrap())
        .collect()
}

#[test]
fn three_nodes_ping_and_talk_tcp_and_one_seed_is_one_world() {
    if !require_riscv_guests("three_nodes_ping_and_talk_tcp_and_one_seed_is_one_world") {
        return;
    }
    let dir = scratch("sim-world");
    let world = write_file(&dir, "world.toml", WORLD);
    let (out, s) = sim(&[&world, "--seed", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("a | 64 bytes from 10.0.0.2: seq=1"),
        "a pings b by name: {text}"
    );
    assert!(
        text.contains("a | 64 bytes from 10.0.0.3"),
        "a pings c: {text}"
    );
    assert!(
        text.contains("b | got: hello-from-c"),
        "c talks TCP to b: {text}"
    );
    assert!(
        s["switch"]["delivered"].as_u64().unwrap() >= 10,
        "{}",
        s["switch"]
    );
    assert_eq!(s["nodes"].as_array().unwrap().len(), 3);
    assert_eq!(s["quantum_ns"], 200_000);
    let (_, again) = sim(&[&world, "--seed", "1", "--quiet"]);
    assert_eq!(again["world_trace_hash"], s["world_trace_hash"]);
    let pcaps = dir.join("pcaps");
    std::fs::create_dir_all(&pcaps).unwrap();
    let (_, two) = sim(&[
        &world,
        "--seed",
        "1",
        "--quiet",
        "--jobs",
        "2",
        "--pcap-dir",
        pcaps.to_str().unwrap(),
    ]);
    assert_eq!(
        two["world_trace_hash"], s["world_trace_hash"],
        "--jobs 2 (and capturing) gives the same world"
    );
    for node in ["a", "b", "c"] {
        let p = std::fs::read(pcaps.join(format!("{node}.pcap"))).unwrap();
        assert_eq!(
            &p[..4],
            &0xa1b2_3c4d_u32.to_le_bytes(),
            "pcap, ns timestamps"
        );
        assert!(p.len() > 24 + 10 * 60, "{node}: {} bytes", p.len());
    }
    // Per-link captures: a-b (pings), a-c (pings), b-c (TCP), each both ways.
    for link in ["a.b", "a.c", "b.c"] {
        let p = pcaps.join(format!("link.{link}.pcap"));
        let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert!(bytes.len() > 24 + 4 * 60, "{link}: {} bytes", bytes.len());
    }
    let (_, other) = sim(&[&world, "--seed", "2", "--quiet"]);
    assert_ne!(other["world_trace_hash"], s["world_trace_hash"]);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bad_scenarios_are_one_line_errors_naming_the_line() {
    let dir = scratch("sim-bad");
    for (text, want) in [
        (
            "[[node]]\nname = \"a\"\n[[node]]\nname = \"a\"\n",
            "line 4: node.name \"a\" is used twice",
        ),
        ("[[node]]\nname = \"a\"\ncolour = \"red\"\n", "line 3"),
        (
            "[[node]]\nname = \"a\"\n[[links]]\nbetween = [\"a\", \"nobody\"]\n",
            "line 4: links.between names \"nobody\"",
        ),
        (
            "[[node]]\nname = \"a\"\nkernel = \"/no/such/Image\"\n",
            "line 3: /no/such/Image does not exist",
        ),
        (
            "[[node]]\nname = \"a\"\nclock_drift_ppm = 20000\n",
            "line 3: node.clock_drift_ppm 20000",
        ),
        (
            "[faults]\nprofile = \"mild\"\n[[node]]\nname = \"a\"\n",
            "line 2: faults.profile: unknown variant `mild`, expected one of `none`, `light`, `heavy`",
        ),
        (
            "[peer]\nname = \"a\"\n[[node]]\nname = \"a\"\n",
            "line 2: peer.name \"a\" is also a node's name",
        ),
        (
            "[[node]]\nname = \"a\"\ndisk = \"nope.ext4\"\n",
            "line 3: node.disk \"nope.ext4\"",
        ),
    ] {
        let f = write_file(&dir, "bad.toml", text);
        let out = wio(&["sim", &f, "--quiet"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(101), "{err}");
        assert!(err.contains(want), "{text:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    }
    let out = wio(&["sim", "/no/such/world.toml"]);
    assert_eq!(out.status.code(), Some(101));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_partition_stops_traffic_for_exactly_its_interval_and_a_node_restarts() {
    if !require_riscv_guests(
        "a_partition_stops_traffic_for_exactly_its_interval_and_a_node_restarts",
    ) {
        return;
    }
    let dir = scratch("sim-partition");
    // a pings b every 200 ms; a and b are cut off from each other from 1 s to 2 s: the
    // five requests sent in that second are lost, every other one answered.
    let world = write_file(
        &dir,
        "world.toml",
        r#"max_virtual_secs = 30
[link]
latency_us = 200
[[node]]
name = "a"
run = "ping -c 15 -i 0.2 b | grep 'bytes from' | sed 's/.*seq=\\([0-9]*\\).*/\\1/' | tr '\\n' ' '; echo"
[[node]]
name = "b"
run = "sleep 5"
[[node]]
name = "c"
faults = "crash.json"
run = "echo c is up; sleep 5"
[[partition]]
at_ms = 1000
duration_ms = 1000
groups = [["a"], ["b"]]
"#,
    );
    // c loses power at 1.5 s for 300 ms, then boots again from its image.
    write_file(
        &dir,
        "crash.json",
        r#"{"faults": [{"at_ns": 1500000000, "duration_ns": 300000000, "target": "node", "kind": "crash", "params": {}}]}"#,
    );
    let (out, s) = sim(&[&world, "--seed", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let seqs: Vec<u64> = numbers(&text, "a").iter().map(|n| *n as u64).collect();
    assert_eq!(seqs.len(), 10, "{seqs:?}");
    let missing: Vec<u64> = (0..15).filter(|k| !seqs.contains(k)).collect();
    assert_eq!(missing.len(), 5, "{missing:?}");
    assert!(
        missing.windows(2).all(|w| w[1] == w[0] + 1),
        "one gap: {missing:?}"
    );
    assert_eq!(s["switch"]["partitioned"], 5, "{}", s["switch"]);
    // c crashed and came back: two boots on its console, one restart in its summary.
    assert_eq!(text.matches("c | c is up").count(), 2, "{text}");
    let c = s["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n[0] == "c")
        .unwrap();
    assert_eq!(c[1]["restarts"], 1, "{c}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_degraded_link_delays_frames_for_exactly_its_interval() {
    if !require_riscv_guests("a_degraded_link_delays_frames_for_exactly_its_interval") {
        return;
    }
    let dir = scratch("sim-degrade");
    // 50 ms more each way between a and b from 1 s to 2 s: the five pings sent then take
    // 100 ms longer, the others do not.
    let world = write_file(
        &dir,
        "world.toml",
        r#"max_virtual_secs = 30
[link]
latency_us = 200
[[node]]
name = "a"
run = "ping -c 15 -i 0.2 b | grep 'bytes from' | sed 's/.*time=//; s/ ms//' | tr '\\n' ' '; echo"
[[node]]
name = "b"
run = "sleep 5"
[[degrade]]
at_ms = 1000
duration_ms = 1000
between = ["a", "b"]
latency_us = 50000
"#,
    );
    let out = wio(&["sim", &world, "--seed", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let rtts = numbers(&text, "a");
    assert_eq!(rtts.len(), 15, "every ping answered: {rtts:?}");
    // The five pings sent within the interval are delayed: both ways (100 ms more), but the
    // last one's reply may leave after the interval's end (then 50 ms more, one way).
    let slow: Vec<usize> = (0..rtts.len()).filter(|i| rtts[*i] >= 10.0).collect();
    assert_eq!(slow.len(), 5, "{rtts:?}");
    assert!(
        slow.windows(2).all(|w| w[1] == w[0] + 1),
        "one run: {rtts:?}"
    );
    let (last, both) = slow.split_last().unwrap();
    assert!(
        both.iter().all(|i| (100.0..110.0).contains(&rtts[*i])),
        "{rtts:?}"
    );
    let r = rtts[*last];
    assert!(
        (100.0..110.0).contains(&r) || (50.0..60.0).contains(&r),
        "{rtts:?}"
    );
    assert!(rtts.iter().all(|r| *r < 110.0), "{rtts:?}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Two nodes: b sends a steady TCP stream of 300 KiB to a, which counts it.
const BULK: &str = r#"max_virtual_secs = 30
[link]
latency_us = 200
jitter_us = 50
[[node]]
name = "a"
run = "nc -l -p 5000 | wc -c"
[[node]]
name = "b"
run = "sleep 1; dd if=/dev/zero bs=1024 count=300 2>/dev/null | nc a 5000; echo done"
"#;

/// Virtual ns of the frames node `mac_last` (the last byte of its MAC) sent, from its pcap.
fn sent_times(pcap: &std::path::Path, mac_last: u8) -> Vec<u64> {
    let d = std::fs::read(pcap).unwrap();
    let word = |at: usize| u32::from_le_bytes(d[at..at + 4].try_into().unwrap());
    let mut at = 24;
    let mut out = Vec::new();
    while at + 16 <= d.len() {
        let ns = u64::from(word(at)) * 1_000_000_000 + u64::from(word(at + 4));
        let len = word(at + 8) as usize;
        let frame = &d[at + 16..at + 16 + len];
        if frame[6..12] == [0x52, 0x54, 0x00, 0x0a, 0x00, mac_last] {
            out.push(ns);
        }
        at += 16 + len;
    }
    out
}

#[test]
fn a_world_snapshot_restored_with_its_seed_equals_the_uninterrupted_run() {
    if !require_riscv_guests("a_world_snapshot_restored_with_its_seed_equals_the_uninterrupted_run")
    {
        return;
    }
    let dir = scratch("sim-snapshot");
    let world = write_file(&dir, "bulk.toml", BULK);
    let pcaps = dir.join("pcaps");
    std::fs::create_dir_all(&pcaps).unwrap();
    let (out, whole) = sim(&[
        &world,
        "--seed",
        "1",
        "--quiet",
        "--pcap-dir",
        pcaps.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let hash = whole["world_trace_hash"].clone();
    // The snapshot point: when b has sent half its frames, in the middle of the stream,
    // so frames are on their way between the machines when it is taken.
    let sent = sent_times(&pcaps.join("b.pcap"), 2);
    assert!(sent.len() > 100, "b streamed: {} frames", sent.len());
    let at = format!("{}ns", sent[sent.len() / 2]);
    let snap = dir.join("w.snap");
    let (out, taken) = sim(&[
        &world,
        "--seed",
        "1",
        "--quiet",
        "--snapshot-at",
        &at,
        "--snapshot-out",
        snap.to_str().unwrap(),
    ]);
    let err = stderr(&out);
    assert_eq!(
        taken["world_trace_hash"], hash,
        "taking it changes nothing: {err}"
    );
    let in_flight: u64 = err
        .split(" frames in flight")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no frame count: {err}"));
    assert!(
        in_flight > 0,
        "frames were in flight at the snapshot: {err}"
    );
    let snap = snap.to_str().unwrap();
    let (out, restored) = sim(&["--from", snap, "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        restored["world_trace_hash"], hash,
        "same seed: the same world"
    );
    assert_eq!(restored["seed"], 1);
    let (_, two) = sim(&["--from", snap, "--quiet", "--jobs", "2"]);
    assert_eq!(two["world_trace_hash"], hash, "--jobs 2 too");
    // Another seed: the same past, another future; each seed is one world.
    let (out, other) = sim(&["--from", snap, "--quiet", "--seed", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_ne!(other["world_trace_hash"], hash);
    let (_, again) = sim(&["--from", snap, "--quiet", "--seed", "2"]);
    assert_eq!(again["world_trace_hash"], other["world_trace_hash"]);
    // A world snapshot is not a machine's, and the other way round.
    let out = wio(&["run", "--from", snap]);
    assert_eq!(out.status.code(), Some(101));
    assert!(stderr(&out).contains("wio sim --from"), "{}", stderr(&out));
    let out = wio(&["sim", "--from", &world]);
    assert_eq!(out.status.code(), Some(101));
    assert!(stderr(&out).contains("WIOWORLD"), "{}", stderr(&out));

    // Explore over the world: one report line per seed, seed 1 is the original world,
    // every failing seed has a `wio sim` line that reproduces it.
    let report = dir.join("r.json");
    let out = wio(&[
        "explore",
        "--from",
        snap,
        "--seeds",
        "0..4",
        "--jobs",
        "2",
        "--fail-on",
        "307200",
        "--report",
        report.to_str().unwrap(),
    ]);
    let text = stdout(&out);
    assert_ne!(
        out.status.code(),
        Some(0),
        "every seed counts 307200 bytes: {text}"
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let results = r["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    assert_eq!(results[1]["trace_hash"], hash);
    for res in results {
        assert_eq!(res["failed"], true, "{res}");
        assert_eq!(res["matched"][0], "307200", "{res}");
    }
    let line = results[2]["reproduce"].as_str().unwrap();
    assert!(
        line.starts_with("wio sim --from ") && line.ends_with("--seed 2"),
        "{line}"
    );
    assert!(text.contains("reproduce seed 2: wio sim --from"), "{text}");
    assert_eq!(
        results[2]["trace_hash"], other["world_trace_hash"],
        "the report's seed 2 is `wio sim --seed 2`"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_nodes_clock_drift_moves_its_timers_against_the_world() {
    if !require_riscv_guests("a_nodes_clock_drift_moves_its_timers_against_the_world") {
        return;
    }
    let dir = scratch("sim-drift");
    // Three nodes sleep 10 s by their own clocks: one 1% fast, one exact, one 1% slow.
    let world = write_file(
        &dir,
        "drift.toml",
        r#"max_virtual_secs = 60
[[node]]
name = "fast"
sched_noise = "off"
clock_drift_ppm = 10000
run = "sleep 10"
[[node]]
name = "exact"
sched_noise = "off"
run = "sleep 10"
[[node]]
name = "slow"
clock_drift_ppm = -10000
run = "sleep 10"
"#,
    );
    let ends = |s: &serde_json::Value| -> Vec<i64> {
        s["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n[1]["virtual_ns"].as_i64().unwrap())
            .collect()
    };
    let (out, s) = sim(&[&world, "--seed", "3", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let e = ends(&s);
    // 1% of 10 s is 100 ms (a slow clock: 10 s / 0.99 - 10 s = 101 ms).
    assert!((95_000_000..105_000_000).contains(&(e[1] - e[0])), "{e:?}");
    assert!((96_000_000..107_000_000).contains(&(e[2] - e[1])), "{e:?}");
    // A re-seeded world snapshot keeps the fixed drifts.
    let snap = dir.join("d.snap");
    let (_, _) = sim(&[
        &world,
        "--seed",
        "3",
        "--quiet",
        "--snapshot-at",
        "5s",
        "--snapshot-out",
        snap.to_str().unwrap(),
    ]);
    let (out, r) = sim(&["--from", snap.to_str().unwrap(), "--seed", "4", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let e = ends(&r);
    assert!((95_000_000..105_000_000).contains(&(e[1] - e[0])), "{e:?}");
    assert!((96_000_000..107_000_000).contains(&(e[2] - e[1])), "{e:?}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_world_fault_profile_draws_partitions_and_degraded_links_from_the_seed() {
    if !require_riscv_guests(
        "a_world_fault_profile_draws_partitions_and_degraded_links_from_the_seed",
    ) {
        return;
    }
    let dir = scratch("sim-world-faults");
    let world = write_file(
        &dir,
        "faults.toml",
        r#"max_virtual_secs = 40
[faults]
profile = "heavy"
after_ms = 2000
[[node]]
name = "a"
run = "ping -c 30 -q b"
[[node]]
name = "b"
run = "sleep 32"
"#,
    );
    let faults = |s: &serde_json::Value| s["faults"].as_array().cloned().unwrap_or_default();
    let (out, one) = sim(&[&world, "--seed", "1", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let f1 = faults(&one);
    assert!(
        f1.len() >= 2,
        "heavy: a partition every ~10 s, a degradation every ~5 s: {f1:?}"
    );
    assert!(
        f1.iter()
            .all(|f| f["from_ns"].as_u64().unwrap() >= 2_000_000_000),
        "{f1:?}"
    );
    let sw = &one["switch"];
    assert!(
        sw["partitioned"].as_u64().unwrap() + sw["degraded"].as_u64().unwrap() > 0,
        "the faults hit the pings: {sw}"
    );
    assert!(
        stderr(&out).contains("fault         "),
        "the summary lists them"
    );
    let (_, again) = sim(&[&world, "--seed", "1", "--quiet"]);
    assert_eq!(faults(&again), f1);
    assert_eq!(again["world_trace_hash"], one["world_trace_hash"]);
    let (_, two) = sim(&[&world, "--seed", "2", "--quiet"]);
    assert_ne!(faults(&two), f1, "another seed, other faults");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn nodes_reach_the_worlds_external_service_and_it_is_snapshotted_with_the_world() {
    if !require_riscv_guests(
        "nodes_reach_the_worlds_external_service_and_it_is_snapshotted_with_the_world",
    ) {
        return;
    }
    let dir = scratch("sim-peer");
    let world = write_file(
        &dir,
        "peer.toml",
        r#"max_virtual_secs = 30
[link]
latency_us = 300
jitter_us = 40
[peer]
name = "echo"
[[node]]
name = "a"
run = "ping -c 3 echo; echo hello-peer | nc -w 1 echo 7"
[[node]]
name = "b"
run = "ping -c 2 echo"
"#,
    );
    let (out, s) = sim(&[&world, "--seed", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("a | 64 bytes from 10.0.0.254: seq=2"),
        "{text}"
    );
    assert!(
        text.contains("b | 2 packets transmitted, 2 packets received"),
        "{text}"
    );
    assert!(
        text.contains("a | hello-peer"),
        "the peer echoed over TCP: {text}"
    );
    assert_eq!(s["peer"]["tcp_connections"], 1, "{}", s["peer"]);
    assert_eq!(s["peer"]["tcp_bytes"], 11, "{}", s["peer"]);
    // A snapshot after the pings, before the TCP exchange: restored, the same world.
    let snap = dir.join("p.snap");
    let (_, taken) = sim(&[
        &world,
        "--seed",
        "1",
        "--quiet",
        "--snapshot-at",
        "console:--- echo ping statistics",
        "--snapshot-out",
        snap.to_str().unwrap(),
    ]);
    assert_eq!(taken["world_trace_hash"], s["world_trace_hash"]);
    let (out, restored) = sim(&["--from", snap.to_str().unwrap(), "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(restored["world_trace_hash"], s["world_trace_hash"]);
    assert_eq!(restored["peer"], s["peer"]);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn nodes_boot_from_root_disks_that_stay_unmodified() {
    if !require_riscv_guests("nodes_boot_from_root_disks_that_stay_unmodified") {
        return;
    }
    let Some(base) = wio_e2e_tests::require_riscv_artifact(
        "nodes_boot_from_root_disks_that_stay_unmodified",
        "RISCV64_ROOTFS",
        wio_e2e_tests::Capability::RiscvGuests,
    ) else {
        return;
    };
    let before = std::fs::read(&base).unwrap();
    let dir = scratch("sim-disks");
    // Two nodes on the same built disk, by name and by path: each writes to its own
    // overlay; the extra kernel argument reaches the guest.
    let world = write_file(
        &dir,
        "disks.toml",
        &format!(
            r#"max_virtual_secs = 30
[[node]]
name = "a"
disk = "rootfs"
cmdline = "wio.extra=a"
run = "echo from-a > /note; sync; cat /note; grep -o 'wio.extra=[a-z]*' /proc/cmdline"
[[node]]
name = "b"
disk = "{}"
run = "cat /note 2>/dev/null || echo no-note; ping -c 1 a"
"#,
            base.display()
        ),
    );
    let out = wio(&["sim", &world, "--seed", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("a | from-a"), "{text}");
    assert!(text.contains("a | wio.extra=a"), "{text}");
    assert!(
        text.contains("b | no-note"),
        "b has its own overlay: {text}"
    );
    assert!(
        std::fs::read(&base).unwrap() == before,
        "the base image is unchanged"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn ctrl_c_ends_a_world_promptly_with_every_nodes_summary() {
    if !require_riscv_guests("ctrl_c_ends_a_world_promptly_with_every_nodes_summary") {
        return;
    }
    let dir = scratch("sim-ctrl-c");
    // Two nodes that would compute for an hour of virtual time.
    let world = write_file(
        &dir,
        "busy.toml",
        r#"max_virtual_secs = 3600
[[node]]
name = "a"
run = "echo busy; while :; do :; done"
[[node]]
name = "b"
run = "echo busy; while :; do :; done"
"#,
    );
    let summary = dir.join("summary.json");
    let child = std::process::Command::new(wio_e2e_tests::wio_bin())
        .args(["sim", &world, "--seed", "1", "--summary-json"])
        .arg(&summary)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn wio sim");
    let (out, took) = wio_e2e_tests::interrupt_after(
        child,
        wio_e2e_tests::StopSignal::Int,
        std::time::Duration::from_secs(4),
    );
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(took.as_secs() < 5, "took {took:?} after Ctrl-C");
    // The summary names both nodes, each ended by the interruption, before the time limit.
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).expect("summary written")).unwrap();
    assert_eq!(s["wio_exit_code"], 130, "{s}");
    let nodes = s["nodes"].as_array().expect("nodes");
    assert_eq!(nodes.len(), 2, "{s}");
    for n in nodes {
        assert_eq!(n[1]["wio_exit_code"], 130, "{n}");
    }
    assert!(s["virtual_ns"].as_u64().unwrap() < 3_600_000_000_000, "{s}");
}
