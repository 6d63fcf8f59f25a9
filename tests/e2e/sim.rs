//! End-to-end tests of `wio sim` (riscv64): three nodes on one virtual clock ping each
//! other by name and hold a TCP conversation through the world's switch; one seed gives
//! one world trace, another seed another; bad scenarios are one-line errors naming the
//! line. They need images/build-all-riscv64.sh.

#![forbid(unsafe_code)]

use wio_e2e_tests::{require_riscv_guests, scratch, stderr, stdout, wio, write_file};

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
    let dir = scratch("sim-summary");
    let path = dir.join(format!("w-{}.json", args.join("-").len()));
    let mut all = vec!["sim"];
    all.extend_from_slice(args);
    all.extend(["--summary-json", path.to_str().unwrap()]);
    let out = wio(&all);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("no world summary ({e}): {}", stderr(&out)));
    let _ = std::fs::remove_file(&path);
    (out, serde_json::from_str(&text).unwrap())
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
