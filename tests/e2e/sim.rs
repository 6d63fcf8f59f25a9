//! End-to-end tests of `wio sim` (riscv64): three nodes on one virtual clock ping each
//! other by name and hold a TCP conversation through the world's switch; one seed gives
//! one world trace, another seed another; bad scenarios are one-line errors naming the
//! line. They need images/build-all-riscv64.sh.

#![forbid(unsafe_code)]

use wio_e2e_tests::{require_riscv_guests, scratch, stderr, stdout, wio, with_summary, write_file};

const WORLD: &str = r#"max_virtual_secs = 30
[link]
latency_us = 200
jitter_us = 20
[[node]]
name = "a"
run = "ping -c 2 b && ping -c 2 c"
[[node]]
name = "b"
run = "nc -l -p 5000 > /tmp/got; echo got: $(cat /tmp/got)"
[[node]]
name = "c"
run = "sleep 1; echo hello-from-c | nc b 5000; echo sent; sleep 2"
"#;

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
    let slow: Vec<usize> = (0..rtts.len()).filter(|i| rtts[*i] >= 100.0).collect();
    assert_eq!(slow.len(), 5, "{rtts:?}");
    assert!(
        slow.windows(2).all(|w| w[1] == w[0] + 1),
        "one run: {rtts:?}"
    );
    assert!(
        rtts.iter().all(|r| *r < 10.0 || (100.0..110.0).contains(r)),
        "{rtts:?}"
    );
    let _ = std::fs::remove_dir_all(dir);
}
