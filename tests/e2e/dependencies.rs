//! End-to-end tests of simulated dependencies (`[[dependency]]` in a world scenario): a
//! guest calls an HTTP API that wio serves on the peer and sees each kind of fault it is
//! given (a refused connection, a reset, an error status, a timeout that applied its
//! request and one that did not, a slow answer); one seed gives one world trace, another
//! seed other latencies; faults drawn from the seed differ by seed, and `wio shrink` of a
//! failing seed keeps the timeout that breaks the promise and removes faults that do not.
//! Need the guests built by images/build-all-riscv64.sh.

#![forbid(unsafe_code)]

use wio_e2e_tests::{require_riscv_guests, scratch, stderr, stdout, wio, with_summary};

/// A client that calls `POST /charge` every 100 ms for 8.5 s (1 s timeout), printing
/// `START END RESULT` per call (uptimes, s), against a bank whose faults are written
/// in the file, one kind per half-second window.
const WRITTEN: &str = r#"max_virtual_secs = 40
[[dependency]]
name = "bank"
port = 8080
latency_ms = [2, 20]
[[dependency.route]]
method = "POST"
path = "/charge"
body = "charge {count}\n"
[[dependency.fault]]
kind = "refuse"
at_ms = 1000
duration_ms = 500
[[dependency.fault]]
kind = "timeout-before"
at_ms = 2000
duration_ms = 500
[[dependency.fault]]
kind = "timeout-after"
at_ms = 4000
duration_ms = 500
route = "/charge"
[[dependency.fault]]
kind = "reset"
at_ms = 6000
duration_ms = 500
[[dependency.fault]]
kind = "error"
at_ms = 7000
duration_ms = 500
status = 502
[[dependency.fault]]
kind = "slow"
at_ms = 8000
duration_ms = 300
slow_ms = 400
[[node]]
name = "c"
run = "while :; do s=$(cut -d' ' -f1 /proc/uptime); r=$(wget -q -T 1 -O - --post-data x http://bank:8080/charge 2>&1 | head -1); e=$(cut -d' ' -f1 /proc/uptime); echo \"call $s $e $r\"; case $s in 9.*) break;; esac; sleep 0.1; done; echo finished"
"#;

/// (start, end, result) of each call the client printed.
fn calls(out: &str) -> Vec<(f64, f64, String)> {
    out.lines()
        .filter_map(|l| l.split_once("call "))
        .filter_map(|(_, rest)| {
            let mut p = rest.splitn(3, ' ');
            let s = p.next()?.parse().ok()?;
            let e = p.next()?.parse().ok()?;
            Some((s, e, p.next().unwrap_or("").to_string()))
        })
        .collect()
}

fn count(result: &str) -> Option<u64> {
    result.strip_prefix("charge ")?.trim().parse().ok()
}

#[test]
fn a_guest_sees_each_written_dependency_fault_and_one_seed_gives_one_trace() {
    let test = "a_guest_sees_each_written_dependency_fault_and_one_seed_gives_one_trace";
    if !require_riscv_guests(test) {
        return;
    }
    let dir = scratch("dependency-written");
    let world = dir.join("bank.toml");
    std::fs::write(&world, WRITTEN).unwrap();
    let w = world.to_str().unwrap();
    let (o, s) = with_summary("sim", &[w, "--seed", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let calls = calls(&out);
    assert!(calls.len() > 30 && out.contains("finished"), "{out}");
    let within = |from: f64, until: f64| calls.iter().filter(move |c| c.0 >= from && c.0 < until);
    // Every call started in [from, until) (at least two) answered so.
    let each = |from: f64, until: f64, ok: &dyn Fn(&(f64, f64, String)) -> bool| {
        let v: Vec<_> = within(from, until).collect();
        assert!(
            v.len() >= 2 && v.iter().all(|c| ok(c)),
            "[{from}, {until}): {calls:?}"
        );
    };
    // Refused while the refuse window lasts, answered before and after it.
    each(1.05, 1.45, &|c| c.2.contains("Connection refused"));
    each(0.0, 0.9, &|c| count(&c.2).is_some());
    // A timeout before applying: the next answer counts on from the last one.
    let timed_out = |from, until| {
        within(from, until)
            .find(|c| c.2.contains("timed out"))
            .unwrap_or_else(|| panic!("a timeout in [{from}, {until}): {calls:?}"))
            .0
    };
    let step_over = |t: f64| {
        let before = calls
            .iter()
            .rev()
            .filter(|c| c.0 < t)
            .find_map(|c| count(&c.2));
        let after = calls.iter().filter(|c| c.0 > t).find_map(|c| count(&c.2));
        after.unwrap() - before.unwrap()
    };
    assert_eq!(step_over(timed_out(2.0, 2.5)), 1, "not applied: {calls:?}");
    // A timeout after applying: the charge the caller never heard of is counted.
    assert_eq!(step_over(timed_out(4.0, 4.5)), 2, "applied: {calls:?}");
    each(6.05, 6.45, &|c| c.2.contains("reset by peer"));
    each(7.05, 7.45, &|c| c.2.contains("502"));
    // Slow answers take the fault's 400 ms more; others at most the latency's 20 ms plus
    // the guest's own work.
    let slow: Vec<_> = within(8.0, 8.3).collect();
    assert!(
        !slow.is_empty()
            && slow
                .iter()
                .all(|c| c.1 - c.0 >= 0.4 && count(&c.2).is_some()),
        "{slow:?}"
    );
    each(0.0, 0.9, &|c| c.1 - c.0 < 0.2);
    let deps = &s["dependencies"][0];
    assert_eq!(deps["name"], "bank", "{s}");
    for kind in [
        "refuse",
        "timeout-before",
        "timeout-after",
        "reset",
        "error",
        "slow",
    ] {
        assert!(
            deps["faults"][kind].as_u64().unwrap_or(0) >= 1,
            "{kind}: {deps}"
        );
    }
    assert!(stderr(&o).contains("dependency    bank:"), "{}", stderr(&o));
    // One seed, one world; another seed draws other latencies: `wio diff` of their traces
    // names where they first part.
    let (d1, d1b, d2) = (dir.join("one"), dir.join("one-again"), dir.join("two"));
    let traced = |seed: &str, d: &std::path::Path| {
        let (o, s) = with_summary(
            "sim",
            &[
                w,
                "--seed",
                seed,
                "--quiet",
                "--trace-dir",
                d.to_str().unwrap(),
            ],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        s
    };
    assert_eq!(s["world_trace_hash"], traced("1", &d1)["world_trace_hash"]);
    traced("1", &d1b);
    assert_ne!(s["world_trace_hash"], traced("2", &d2)["world_trace_hash"]);
    let same = wio(&["diff", d1.to_str().unwrap(), d1b.to_str().unwrap()]);
    assert_eq!(same.status.code(), Some(0), "{}", stdout(&same));
    assert!(stdout(&same).contains("c: same ("), "{}", stdout(&same));
    let o = wio(&["diff", d1.to_str().unwrap(), d2.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let d: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let c = d["traces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "c")
        .unwrap();
    assert!(
        c["first"]["index"].as_u64().is_some() && c["first"]["a"] != c["first"]["b"],
        "{c}"
    );
    let text = stdout(&wio(&["diff", d1.to_str().unwrap(), d2.to_str().unwrap()]));
    assert!(
        text.contains("c: ")
            && text.contains("first difference at event")
            && text.contains("  A: "),
        "{text}"
    );
}

/// A client that charges 40 times and checks that every charge the bank applied was
/// answered (the counts it hears go up by one), against a bank whose faults are drawn from
/// the seed: timeouts after applying break that promise, errors, resets and slow answers
/// do not.
const DRAWN: &str = r#"max_virtual_secs = 30
[[dependency]]
name = "bank"
port = 8080
latency_ms = [2, 20]
[[dependency.route]]
method = "POST"
path = "/charge"
body = "charge {count}\n"
[dependency.faults]
kinds = ["timeout-after", "slow", "error", "reset"]
every_ms = 2000
duration_ms = [100, 400]
after_ms = 1000
until_ms = 8000
[[node]]
name = "c"
run = "echo ready; ok=0; i=0; while [ $i -lt 40 ]; do i=$((i+1)); r=$(wget -q -T 3 -O - --post-data x http://bank:8080/charge 2>&1); case $r in 'charge '*) n=${r#charge }; [ $n = $((ok+1)) ] || { echo \"charge $n applied unanswered\"; wio-assert always 'every applied charge was answered' false; exit 0; }; ok=$n;; esac; sleep 0.1; done; wio-assert always 'every applied charge was answered' true; echo done ok=$ok"
"#;

#[test]
fn drawn_dependency_faults_follow_the_seed_and_shrink_keeps_the_one_that_matters() {
    let test = "drawn_dependency_faults_follow_the_seed_and_shrink_keeps_the_one_that_matters";
    if !require_riscv_guests(test) {
        return;
    }
    let dir = scratch("dependency-drawn");
    let snap = wio_e2e_tests::ready_world_snapshot(&dir, "bank", DRAWN);
    let snap = snap.to_str().unwrap();
    let kinds = |s: &serde_json::Value| -> Vec<String> {
        s["faults"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["kind"].as_str().unwrap().to_string())
            .collect()
    };
    // Each seed draws its own faults; pick one that breaks the promise among others.
    let mut failing = None;
    let mut drawn = Vec::new();
    for seed in 1..=8u64 {
        let (o, s) = with_summary(
            "sim",
            &["--from", snap, "--seed", &seed.to_string(), "--quiet"],
        );
        let k = kinds(&s);
        assert!(k.iter().all(|k| k.starts_with("dependency ")), "{k:?}");
        drawn.push(s["faults"].clone());
        if o.status.code() == Some(108) && k.len() >= 3 && failing.is_none() {
            failing = Some((seed, k.len()));
        }
    }
    drawn.dedup();
    assert!(drawn.len() >= 7, "seeds draw other faults: {drawn:?}");
    let (seed, before) = failing.expect("a failing seed among 1-8 with 3 faults or more");
    let plan = dir.join("plan.json");
    let o = wio(&[
        "shrink",
        "--from",
        snap,
        "--seed",
        &seed.to_string(),
        "--jobs",
        "2",
        "--out",
        plan.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    let left: Vec<&str> = p["between"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    // Fewer faults, a timeout after applying among them (a slow answer may stay too when
    // it moves a request into the timeout's window).
    assert!(
        left.len() < before && left.contains(&"dependency timeout-after"),
        "the timeout after applying matters, not every fault: {left:?} (of {before}); {}",
        stdout(&o)
    );
    assert!(
        stdout(&o).contains("dependency timeout-after: bank"),
        "{}",
        stdout(&o)
    );
    // The plan reproduces the broken promise.
    let (o, s) = with_summary(
        "sim",
        &[
            "--from",
            snap,
            "--seed",
            &seed.to_string(),
            "--fault-plan",
            plan.to_str().unwrap(),
            "--quiet",
        ],
    );
    assert_eq!(o.status.code(), Some(108), "{}", stderr(&o));
    assert!(
        s["promises"]
            .to_string()
            .contains("every applied charge was answered"),
        "{s}"
    );
}

/// The payment scenario on a simulated bank (images/payments/simbank.toml: the bank is a
/// dependency wio serves, the services the wio-payments:1 image's, unchanged, calling it
/// over HTTP through images/payments/simbank.py): with the service's idempotency defect
/// planted, an exploration from setup-complete finds seeds that charge a payment twice
/// (10 of 16 measured), such a seed reproduces bit for bit, and `wio diff --report` of it
/// and another seed names where they first part.
#[test]
fn the_payment_scenario_on_a_simulated_bank_finds_the_idempotency_bug() {
    use wio_e2e_tests::oci::{
        branch_again, explore_finds, first_failing, import_built, snapshot_at_setup, wio_in,
    };
    let test = "the_payment_scenario_on_a_simulated_bank_finds_the_idempotency_bug";
    let dir = scratch("dependency-simbank");
    let Some(cache) = import_built(test, "RISCV64_PAYMENTS_IMAGE", &dir, "wio-payments:1") else {
        return;
    };
    let world = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../images/payments/simbank.toml"
    ));
    let snap = dir.join("simbank.snap");
    snapshot_at_setup(
        &cache,
        world,
        &snap,
        &["--node-args", "payments=wio.bug=no-idempotency"],
    );
    let (out, r) = explore_finds(
        &cache,
        &snap,
        "0..4",
        &dir.join("report.json"),
        "no payment is charged twice",
    );
    assert!(
        out.contains("dependency "),
        "the bank's faults are listed: {out}"
    );
    let failing = first_failing(&r);
    let (o, s) = branch_again(&cache, &snap, &failing["seed"], &dir.join("again.json"));
    assert_eq!(o.status.code(), Some(108), "{}", stderr(&o));
    assert_eq!(s["world_trace_hash"], failing["trace_hash"]);
    assert!(
        s["dependencies"][0]["requests"].as_u64().unwrap() > 12,
        "{s}"
    );
    // Two seeds of the report, run again and compared: where the failing one first parts
    // from another (each run again is the report's run: no warning); a seed with itself is
    // the same run.
    let report = dir.join("report.json");
    let seed = failing["seed"].to_string();
    let other = if seed == "0" { "1" } else { "0" };
    let rep = report.to_str().unwrap();
    let o = wio_in(&cache, &["diff", "--report", rep, &seed, other]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("first difference at event") && out.contains("  A: "),
        "{out}"
    );
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    let o = wio_in(&cache, &["diff", "--report", rep, &seed, &seed]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let o = wio_in(&cache, &["diff", "--report", rep, &seed, "99"]);
    assert_eq!(o.status.code(), Some(101), "{}", stderr(&o));
    assert!(stderr(&o).contains("has no seed 99"), "{}", stderr(&o));
}

/// The payment scenario recorded against a bank on the host (images/payments/hostbank.py,
/// standing in for simbank.toml's simulated bank) and replayed without it: the replays
/// are the recorded run, bit for bit; an exploration of the replay's setup-complete
/// snapshot meets the simulated bank's faults in every seed but the tape's (where the
/// first one hits, the run leaves the tape and the simulated bank answers), and finds the
/// idempotency defect the recording never showed.
#[test]
fn the_payment_scenario_recorded_against_a_host_bank_replays_and_its_branches_find_the_idempotency_bug(
) {
    use std::io::BufRead;
    use wio_e2e_tests::oci::{explore_finds, import_built, wio_in};
    let test = "the_payment_scenario_recorded_against_a_host_bank_replays_and_its_branches_find_the_idempotency_bug";
    let dir = scratch("dependency-hostbank");
    let Some(cache) = import_built(test, "RISCV64_PAYMENTS_IMAGE", &dir, "wio-payments:1") else {
        return;
    };
    let images = concat!(env!("CARGO_MANIFEST_DIR"), "/../images/payments");
    let world = format!("{images}/simbank.toml");
    let mut bank = std::process::Command::new("python3")
        .args([&format!("{images}/hostbank.py"), "7000"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("python3 runs the host's bank");
    let mut first = String::new();
    std::io::BufReader::new(bank.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(
        first.contains("serving on 127.0.0.1:7000"),
        "the host's bank did not start (is port 7000 free?): {first:?}"
    );
    let tape = dir.join("bank.tape");
    let t = tape.to_str().unwrap();
    let bug = "payments=wio.bug=no-idempotency";
    let hash = |o: &std::process::Output| {
        let e = stderr(o);
        e.lines()
            .find_map(|l| l.strip_prefix("world trace   "))
            .unwrap_or_else(|| panic!("no world trace hash: {e}"))
            .to_string()
    };
    let o = wio_in(
        &cache,
        &[
            "sim",
            &world,
            "--seed",
            "1",
            "--node-args",
            bug,
            "--net",
            "host",
            "--allow",
            "bank=127.0.0.1:7000",
            "--record",
            t,
        ],
    );
    let _ = bank.kill();
    let _ = bank.wait();
    let recorded = hash(&o);
    assert!(
        stderr(&o).contains("host link     recording: 26 connections"),
        "{}",
        stderr(&o)
    );
    let snap = dir.join("bank.snap");
    for extra in [
        vec![],
        vec![
            "--snapshot-at",
            "setup-complete",
            "--snapshot-out",
            snap.to_str().unwrap(),
        ],
    ] {
        let mut args = vec!["sim", &world, "--node-args", bug, "--replay", t];
        args.extend(extra);
        let o = wio_in(&cache, &args);
        assert_eq!(hash(&o), recorded, "{}", stderr(&o));
        assert!(!stderr(&o).contains("left tape"), "{}", stderr(&o));
    }
    let (_, r) = explore_finds(
        &cache,
        &snap,
        "0..4",
        &dir.join("report.json"),
        "no payment is charged twice",
    );
    for b in r["results"].as_array().unwrap() {
        let left = b["left_tape"].as_str().unwrap_or_default();
        if b["seed"] == 1 {
            assert!(b.get("left_tape").is_none(), "the tape's seed: {b}");
            assert_eq!(b["trace_hash"].as_str(), Some(recorded.as_str()), "{b}");
        } else {
            assert!(left.contains("fault of the dependency"), "{b}");
        }
    }
}
