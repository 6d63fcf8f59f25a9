//! End-to-end tests of guided exploration of world snapshots (`wio explore --from
//! WORLD.snap --budget N`): a bug behind three rare draws on one node of a two-node world
//! is reached, and `wio sim --path` replays the failing branch to its world trace hash; the
//! report is the same on one or two threads; a guided branch that breaks a promise is shrunk
//! (`wio shrink` replays its path to its last moment), reproduced with `wio sim --path
//! --fault-plan`, and verified against a build that is still broken and one that is fixed.
//! Need the guests built by images/build-all-riscv64.sh.

#![forbid(unsafe_code)]

use std::path::Path;
use wio_e2e_tests::{
    guided_explore, read_report as report, ready_world_snapshot, require_riscv_guests, scratch,
    stderr, stdout, wio, with_summary,
};

/// A world of two nodes: `a` passes three stages, each a 1-in-16 draw from its kernel's
/// random numbers 50 ms after the last (a console line per stage passed), `b` pings `a`
/// meanwhile. Snapshotted when `a` is ready, before its first draw. A branch's seed reaches
/// `a`'s random numbers through the VM generation ID its restore re-draws.
const STAGES_WORLD: &str = r#"max_virtual_secs = 20
[link]
latency_us = 200
jitter_us = 20
[[node]]
name = "a"
run = "echo ready; for k in one two three; do sleep 0.05; v=$(od -An -N1 -tu1 /dev/urandom); [ $((v % 16)) = 0 ] || exit 0; echo stage $k; done; echo planted: BUG reached"
[[node]]
name = "b"
run = "ping -c 2 a; echo pinged"
"#;

/// A guided exploration of the world snapshot `snap`: `budget` branches on `jobs` threads,
/// failing at the planted bug.
fn guided_world(snap: &Path, budget: u64, jobs: u32, rep: &Path) -> std::process::Output {
    guided_explore(snap, budget, jobs, &["--fail-on", "planted: BUG"], rep)
}

#[test]
fn guided_search_over_a_world_reaches_a_bug_on_one_node_and_wio_sim_replays_its_path() {
    let test = "guided_search_over_a_world_reaches_a_bug_on_one_node_and_wio_sim_replays_its_path";
    if !require_riscv_guests(test) {
        return;
    }
    let dir = scratch("guided-world");
    let snap = ready_world_snapshot(&dir, "stages", STAGES_WORLD);
    // Guided: moments of the whole world, kept where a node saw something new.
    let rep = dir.join("guided.json");
    // 640 branches: room for the bug (1 in 4,096 flat branches), found at branch 208 when
    // the root's branches were drawn at random and at 419 once they ran a flat
    // exploration's seeds 0, 1, 2, ... (one sample each, on one build of the guests).
    let o = guided_world(&snap, 640, 2, &rep);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    let r = report(&rep);
    let moments = r["tree"]["moments"].as_array().unwrap();
    assert!(
        moments
            .iter()
            .any(|m| m["new"].to_string().contains("b: console")),
        "node b's console shapes are marks of their own: {moments:?}"
    );
    let results = r["results"].as_array().unwrap();
    let failing = results
        .iter()
        .find(|x| x["failed"] == true)
        .unwrap_or_else(|| panic!("the planted bug in 640 world branches: {moments:?}"));
    let path = failing["path"].as_str().unwrap();
    assert!(path.contains('@'), "found past a moment: {path}");
    let line = failing["reproduce"].as_str().unwrap();
    assert!(
        line.starts_with("wio sim --from ") && line.ends_with(&format!("--path {path}")),
        "{line}"
    );
    // The path replays under `wio sim`, to the report's world trace hash and the bug.
    let (o, s) = with_summary("sim", &["--from", snap.to_str().unwrap(), "--path", path]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        s["world_trace_hash"],
        failing["trace_hash"],
        "{}",
        stderr(&o)
    );
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("a | planted: BUG reached"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // The same tree and results on one thread.
    let (one, two) = (dir.join("one.json"), dir.join("two.json"));
    for (jobs, rep) in [(1, &one), (2, &two)] {
        let o = guided_world(&snap, 32, jobs, rep);
        assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    }
    assert_eq!(report(&one), report(&two), "whatever --jobs");
    // A path that does not fit the world is a one-line error.
    let o = wio(&["sim", "--from", snap.to_str().unwrap(), "--path", "5@1,6"]);
    assert_eq!(o.status.code(), Some(100), "{}", stderr(&o));
    assert!(stderr(&o).contains("does not fit"), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(dir);
}

/// A world whose node `a` breaks an `always` promise behind two 1-in-16 draws 50 ms apart
/// (`fixed`: the same world whose promise holds there), while `b` pings it under the
/// `heavy` fault profile (partitions and degraded links drawn from the seed).
fn bug_world(fixed: bool) -> String {
    format!(
        r#"max_virtual_secs = 30
[faults]
profile = "heavy"
[[node]]
name = "a"
run = "echo ready; for k in one two; do sleep 0.05; v=$(od -An -N1 -tu1 /dev/urandom); [ $((v % 16)) = 0 ] || exit 0; echo stage $k; done; wio-assert always 'the deep bug is not reached' {fixed}; echo planted: BUG reached"
[[node]]
name = "b"
run = "ping -c 16 -i 0.5 a; echo pinged"
"#
    )
}

#[test]
fn a_guided_worlds_failing_branch_is_shrunk_reproduced_and_verified_by_its_path() {
    let test = "a_guided_worlds_failing_branch_is_shrunk_reproduced_and_verified_by_its_path";
    if !require_riscv_guests(test) {
        return;
    }
    let dir = scratch("guided-world-shrink");
    let snap = ready_world_snapshot(&dir, "bug", &bug_world(false));
    let snap = snap.to_str().unwrap();
    let rep = dir.join("guided.json");
    let o = wio(&[
        "explore",
        "--from",
        snap,
        "--budget",
        // Room for a failing branch past a moment: 160 were enough when the root's branches
        // were drawn at random; the first failing one past a moment was 223 once they ran a
        // flat exploration's seeds (one sample, on one build of the guests).
        "320",
        "--jobs",
        "2",
        "--report",
        rep.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let r = report(&rep);
    let failing: Vec<&serde_json::Value> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["failed"] == true)
        .collect();
    // The first failing branch past a moment (a root branch may fail too: the bug is one
    // branch in 256 of the root's).
    let first = failing
        .iter()
        .find(|x| x["path"].as_str().is_some_and(|p| p.contains('@')))
        .unwrap_or_else(|| panic!("a failing branch past a moment: {r}"));
    let path = first["path"].as_str().unwrap();
    let branch = first["seed"].to_string();
    // Shrink that branch: its path to its last moment, then its faults.
    let plan = dir.join("plan.json");
    let o = wio(&[
        "shrink",
        "--report",
        rep.to_str().unwrap(),
        "--seed",
        &branch,
        "--jobs",
        "2",
        "--out",
        plan.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains(&format!("--path {path} --fault-plan")),
        "the reproduce line names the path: {text}"
    );
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    assert_eq!(saved["path"], path, "{saved}");
    assert!(
        stderr(&o).contains("fault(s) after its last moment"),
        "{}",
        stderr(&o)
    );
    // The plan reproduces the violation from the path's last moment.
    let (o, s) = with_summary(
        "sim",
        &[
            "--from",
            snap,
            "--path",
            path,
            "--fault-plan",
            plan.to_str().unwrap(),
            "--quiet",
        ],
    );
    assert_eq!(o.status.code(), Some(108), "{}", stderr(&o));
    assert!(
        s["promises"]
            .to_string()
            .contains("the deep bug is not reached"),
        "{s}"
    );
    // The plan records how its branch ran (here: the snapshot's noise levels, so nothing),
    // and a replay runs it so: a plan that records `off` replays as `--sched-noise off`
    // does, which is not the snapshot's level.
    assert!(saved.get("sched_noise").is_none(), "{saved}");
    let mut off = saved.clone();
    off["sched_noise"] = "off".into();
    let plan_off = dir.join("plan-off.json");
    std::fs::write(&plan_off, off.to_string()).unwrap();
    let replay = |plan: &Path, extra: &[&str]| {
        let mut args = vec!["--from", snap, "--path", path, "--fault-plan"];
        args.push(plan.to_str().unwrap());
        args.push("--quiet");
        args.extend_from_slice(extra);
        let (o, s) = with_summary("sim", &args);
        (s["world_trace_hash"].clone(), stderr(&o))
    };
    let (recorded, _) = replay(&plan_off, &[]);
    let (given, _) = replay(&plan, &["--sched-noise", "off"]);
    assert_eq!(recorded, given, "the plan's noise level is used");
    assert_ne!(recorded, s["world_trace_hash"], "noise off is another run");
    let (_, said) = replay(&plan_off, &["--sched-noise", "heavy"]);
    assert!(
        said.contains("--sched-noise as given, not as the fault plan records it"),
        "{said}"
    );
    // Verify: against the same build every case still fails; against the fixed build (the
    // promise holds where it broke) every case is fixed, its path replayed there.
    let verify = |fixed: &str| {
        wio(&[
            "verify",
            "--from",
            fixed,
            "--report",
            rep.to_str().unwrap(),
            "--plan",
            plan.to_str().unwrap(),
            "--jobs",
            "2",
        ])
    };
    let o = verify(snap);
    assert_eq!(o.status.code(), Some(108), "{}", stderr(&o));
    let cases = failing.len() + 1;
    assert!(
        stdout(&o).contains(&format!("0 of {cases} case(s) fixed")),
        "{}",
        stdout(&o)
    );
    assert!(
        stdout(&o).contains(&format!("branch {}", first["seed"])),
        "{}",
        stdout(&o)
    );
    let fixed = ready_world_snapshot(&dir, "fixed", &bug_world(true));
    let o = verify(fixed.to_str().unwrap());
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(
        stdout(&o).contains(&format!("{cases} of {cases} case(s) fixed: the fix holds")),
        "{}",
        stdout(&o)
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_world_explored_with_sched_noise_carries_it_to_every_branch_and_reproduce_line() {
    let test = "a_world_explored_with_sched_noise_carries_it_to_every_branch_and_reproduce_line";
    if !require_riscv_guests(test) {
        return;
    }
    let dir = scratch("world-sched-noise");
    let snap = ready_world_snapshot(&dir, "stages", STAGES_WORLD);
    let snap = snap.to_str().unwrap();
    let hash = |extra: &[&str]| {
        let mut args = vec!["--from", snap, "--quiet"];
        args.extend_from_slice(extra);
        let (o, s) = with_summary("sim", &args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        s["world_trace_hash"].as_str().unwrap().to_string()
    };
    let heavy = hash(&["--seed", "5", "--sched-noise", "heavy"]);
    assert_eq!(
        heavy,
        hash(&["--seed", "5", "--sched-noise", "heavy"]),
        "one seed, one world"
    );
    assert_ne!(heavy, hash(&["--seed", "5"]), "the noise reaches the nodes");
    // --no-summary, as on `wio run`: the summary JSON only.
    let (o, s) = with_summary("sim", &["--from", snap, "--quiet", "--no-summary"]);
    assert!(!stderr(&o).contains("wio sim summary"), "{}", stderr(&o));
    assert!(s["world_trace_hash"].is_string());
    // Flat: every reproduce line carries the level and gives the branch's hash.
    let explore = |how: &[&str], name: &str| {
        let rep = dir.join(name);
        let mut args = vec!["explore", "--from", snap, "--sched-noise", "heavy"];
        args.extend_from_slice(how);
        args.extend_from_slice(&["--report", rep.to_str().unwrap()]);
        let o = wio(&args);
        assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
        report(&rep)
    };
    let r = explore(&["--seeds", "5..7"], "flat.json");
    let first = &r["results"][0];
    assert!(
        first["reproduce"]
            .as_str()
            .unwrap()
            .ends_with("--seed 5 --sched-noise heavy"),
        "{first}"
    );
    assert_eq!(first["trace_hash"], heavy.as_str());
    // Guided: a branch's path replays with the level too.
    let r = explore(&["--budget", "32"], "guided.json");
    let deep = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["path"].as_str().unwrap().contains('@'))
        .unwrap_or_else(|| panic!("a branch from a moment in 32: {r}"));
    let line = deep["reproduce"].as_str().unwrap();
    assert!(line.ends_with("--sched-noise heavy"), "{line}");
    let path = deep["path"].as_str().unwrap();
    assert_eq!(
        hash(&["--path", path, "--sched-noise", "heavy"]),
        deep["trace_hash"].as_str().unwrap()
    );
    let _ = std::fs::remove_dir_all(dir);
}
