//! End-to-end tests of the test composer (riscv64 guests needed): a compose project of
//! three services whose client image carries `/opt/antithesis/test/v1/<template>/`
//! commands; they run in the documented order, as the image's user, with faults held off
//! where the rules say; a failing command is a violated property; the seed chooses the
//! branch and the same seed replays it.

#![forbid(unsafe_code)]

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use wio_e2e_tests::oci::{
    branch_again, explore, explore_finds, first_failing, import_built, import_json, layer,
    private_cache, riscv_busybox, sim_summary, snapshot_at_setup, Layout, E, GZIP,
};
use wio_e2e_tests::{scratch, stderr};

/// The commands of the client image, by path under /opt/antithesis/test/v1/.
const COMMANDS: [(&str, &str); 10] = [
    ("main/first_setup", "echo \"composer: first_setup uid=$(id -u)\"; nc store 7000 </dev/null; sleep 4"),
    (
        "main/parallel_driver_put",
        "echo composer: put; sleep 1; nc store 7000 </dev/null; echo '{\"antithesis_assert\":{\"id\":\"put ran\",\"message\":\"put ran\",\"assert_type\":\"always\",\"display_type\":\"Always\",\"must_hit\":false,\"hit\":true,\"condition\":true,\"details\":null}}' >/dev/virtio-ports/wio.sdk",
    ),
    ("main/parallel_driver_get", "echo composer: get; nc store 7000 </dev/null; sleep 0.5"),
    ("main/serial_driver_compact", "echo composer: compact; sleep 1"),
    ("main/anytime_health", "nc store 7000 </dev/null >/dev/null"),
    (
        "main/eventually_recovered",
        "\"$ANTITHESIS_STOP_FAULTS\" 3 && echo composer: eventually; \
         for i in 1 2 3 4 5 6 7 8 9 10; do nc store 7000 </dev/null && exit 0; sleep 1; done; exit 1",
    ),
    ("main/finally_done", "echo composer: finally"),
    ("main/helper_lib.sh", "echo composer: HELPER RAN; exit 9"),
    ("broken/singleton_driver_fails", "echo composer: failing; exit 3"),
    ("broken/finally_after", "echo composer: after the failure"),
];

/// The busybox image with the client's commands, imported as `wio-composer-test:1` into a
/// cache of its own: the cache, or None (skipped) without guests.
fn image(dir: &Path, test: &str) -> Option<PathBuf> {
    let busybox = riscv_busybox(dir, test)?;
    let scripts: Vec<(String, Vec<u8>)> = COMMANDS
        .iter()
        .map(|(p, body)| {
            (
                format!("opt/antithesis/test/v1/{p}"),
                format!("#!/bin/sh\n{body}\n").into_bytes(),
            )
        })
        .collect();
    let mut entries = vec![
        E::File("bin/busybox", &busybox, 0o755, 0),
        E::Symlink("bin/sh", "busybox"),
        E::File(
            "etc/passwd",
            b"root:x:0:0::/root:/bin/sh\napp:x:1000:1000::/home/app:/bin/sh\n",
            0o644,
            0,
        ),
        E::File("etc/group", b"root:x:0:\napp:x:1000:\n", 0o644, 0),
        // Not executable: not a command.
        E::File(
            "opt/antithesis/test/v1/main/parallel_driver_notexec",
            b"#!/bin/sh\nexit 8\n",
            0o644,
            0,
        ),
    ];
    entries.extend(scripts.iter().map(|(p, b)| E::File(p, b, 0o755, 0)));
    let l = Layout::new(&dir.join("layout"));
    let config = json!({ "User": "app", "Entrypoint": ["/bin/sh", "-c"], "Cmd": ["sleep 100000"] });
    let riscv = l.image("riscv64", &[layer(&entries)], config, GZIP);
    l.index("localhost/wio-composer-test:1", vec![riscv]);
    let archive = dir.join("image.tar");
    l.archive(&archive);
    let cache = private_cache(dir);
    import_json(&cache, &archive);
    Some(cache)
}

/// The project: a store answering on 7000 that declares setup complete once it listens,
/// an app, and a client; every service holds its promise channel open for good (a
/// virtio-console port opens once: the agent shares it with the commands); faults
/// between the nodes.
const COMPOSE: &str = r#"services:
  store:
    image: wio-composer-test:1
    user: root
    command: ["exec 3>/dev/virtio-ports/wio.sdk; (sleep 1; echo '{\"antithesis_setup\":{\"status\":\"complete\",\"details\":{}}}' >/dev/virtio-ports/wio.sdk) & while :; do nc -l -p 7000 -e echo stored; done"]
  app:
    image: wio-composer-test:1
    command: ["exec 3>/dev/virtio-ports/wio.sdk; nc store 7000 </dev/null; sleep 100000"]
    x-wio:
      faults: heavy
  client:
    image: wio-composer-test:1
    command: ["exec 3>/dev/virtio-ports/wio.sdk; sleep 100000"]
x-wio:
  max_virtual_secs: 120
  faults:
    profile: heavy
    after_ms: 0
"#;

fn runs(s: &Value) -> Vec<Value> {
    s["composer"]["runs"].as_array().expect("runs").clone()
}

fn name(r: &Value) -> String {
    r["command"].as_str().expect("command").to_string()
}

fn kind_of(r: &Value) -> &'static str {
    let n = name(r);
    let n = n.split('/').nth(1).unwrap_or("");
    [
        "first_",
        "parallel_driver_",
        "serial_driver_",
        "singleton_driver_",
        "anytime_",
        "eventually_",
        "finally_",
    ]
    .into_iter()
    .find(|p| n.starts_with(p))
    .expect("a command")
}

fn span(r: &Value) -> (u64, u64) {
    (
        r["started_ns"].as_u64().expect("start"),
        r["ended_ns"].as_u64().unwrap_or(u64::MAX),
    )
}

#[test]
fn test_composer_commands_run_in_the_documented_order() {
    let test = "test_composer_commands_run_in_the_documented_order";
    let dir = scratch("composer");
    let Some(cache) = image(&dir, test) else {
        return;
    };
    let compose = dir.join("compose.yaml");
    std::fs::write(&compose, COMPOSE).expect("compose");
    let mut templates = std::collections::BTreeMap::new();
    let mut hashes = Vec::new();
    let mut held = 0;
    for seed in 1..=6u64 {
        let (o, s) = sim_summary(
            &cache,
            &compose,
            &seed.to_string(),
            &dir.join(format!("s{seed}.json")),
        );
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        let c = &s["composer"];
        let template = c["template"].as_str().expect("a template").to_string();
        assert!(
            c["finished"].as_bool().unwrap(),
            "seed {seed}: {c}\n{out}{}",
            stderr(&o)
        );
        let found = c["commands_found"].as_array().unwrap();
        // Every node's agent reported the image's 9 commands; no helper, no non-executable.
        assert_eq!(found.len(), 27, "{found:?}");
        assert!(
            !out.contains("HELPER RAN")
                && !found
                    .iter()
                    .any(|f| f.as_str().unwrap().contains("notexec"))
        );
        let runs = runs(&s);
        assert!(runs
            .iter()
            .all(|r| name(r).starts_with(&format!("{template}/"))));
        let quiet: Vec<(u64, u64)> = serde_json::from_value(c["quiet"].clone()).unwrap();
        // No fault between nodes, and none of app's own, starts while faults are held off.
        let node_faults = s["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|n| n[1]["faults"].as_array().cloned().unwrap_or_default())
            .map(|f| f["at_ns"].as_u64().unwrap());
        let world_faults = s["faults"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| f["from_ns"].as_u64().unwrap());
        let starts: Vec<u64> = node_faults.chain(world_faults).collect();
        for from in &starts {
            assert!(
                !quiet.iter().any(|(a, b)| from >= a && from < b),
                "seed {seed}: a fault at {from} in {quiet:?}"
            );
        }
        held += s["nodes"][1][1]["faults"].as_array().map_or(0, Vec::len);
        if template == "main" {
            assert!(o.status.success(), "seed {seed}: {out}{}", stderr(&o));
            // first_ first and alone, as the image's user, faults held off meanwhile.
            assert_eq!(kind_of(&runs[0]), "first_");
            // As the service's user: root on store (compose's `user`), the image's elsewhere.
            let uid = if runs[0]["node"] == "store" { 0 } else { 1000 };
            assert!(
                out.contains(&format!("composer: first_setup uid={uid}")),
                "{out}"
            );
            let first_end = span(&runs[0]).1;
            assert!(runs[1..].iter().all(|r| span(r).0 >= first_end));
            assert!(
                quiet[0].0 <= span(&runs[0]).0 && quiet[0].1 >= first_end,
                "{quiet:?}"
            );
            // A serial driver beside no other driver.
            for a in &runs {
                for b in &runs {
                    let (x, y) = (span(a), span(b));
                    let other_driver = ["serial_driver_", "parallel_driver_"].contains(&kind_of(b));
                    if kind_of(a) == "serial_driver_" && other_driver && x != y {
                        assert!(x.1 <= y.0 || y.1 <= x.0, "seed {seed}: {a} beside {b}");
                    }
                }
            }
            let last = runs.last().unwrap();
            match kind_of(last) {
                "eventually_" => {
                    assert!(quiet.contains(&(span(last).0, u64::MAX)), "{quiet:?}");
                    // Its $ANTITHESIS_STOP_FAULTS 3 reached wio: a window of 3 s.
                    assert!(
                        quiet.iter().any(|(a, b)| b - a == 3_000_000_000),
                        "{quiet:?}"
                    );
                    assert!(out.contains("composer: eventually"));
                }
                "finally_" => {
                    assert!(runs[..runs.len() - 1]
                        .iter()
                        .all(|r| span(r).1 <= span(last).0));
                    assert!(out.contains("composer: finally"));
                }
                k => panic!("seed {seed} ends with {k}"),
            }
            // Exit 0, killed by the composer, or lost with app's crash.
            let lost = |r: &Value| r["status"].is_null() && r["node"] == "app";
            assert!(
                runs.iter()
                    .all(|r| r["status"] == 0 || r["killed"] == true || lost(r)),
                "{runs:?}"
            );
            // Every put that ended stated its promise, beside the others and the client's
            // open channel.
            let puts = runs
                .iter()
                .filter(|r| name(r) == "main/parallel_driver_put" && r["status"] == 0)
                .count() as u64;
            let put = s["promises"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["id"] == "put ran");
            assert_eq!(
                put.map_or(0, |p| p["passes"].as_u64().unwrap()),
                puts,
                "seed {seed}"
            );
        } else {
            // The failing singleton driver: a violated property, and the seed fails.
            assert_eq!(o.status.code(), Some(108), "seed {seed}: {out}");
            let v = s["promises"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["id"] == "test command broken/singleton_driver_fails exits 0")
                .expect("the command's property");
            assert_eq!(v["status"], "violated", "{v}");
            assert_eq!(name(&runs[0]), "broken/singleton_driver_fails");
            assert_eq!(name(runs.last().unwrap()), "broken/finally_after");
            // A command all three nodes have runs once, on one of them.
            assert_eq!(runs.len(), 2, "{runs:?}");
        }
        *templates.entry(template).or_insert(0) += 1;
        hashes.push((
            seed,
            s["world_trace_hash"].clone(),
            runs.iter().map(name).collect::<Vec<_>>(),
        ));
    }
    // app's heavy profile did apply faults (outside the quiet windows).
    assert!(held > 0, "no node fault applied in 6 seeds");
    // Seeds choose templates and orders.
    let orders: std::collections::BTreeSet<_> = hashes.iter().map(|h| h.2.clone()).collect();
    assert!(orders.len() >= 3, "{hashes:?}");
    // The same seed replays its branch bit for bit.
    let (seed, hash, order) = hashes[0].clone();
    let (_, again) = sim_summary(&cache, &compose, &seed.to_string(), &dir.join("again.json"));
    assert_eq!(again["world_trace_hash"], hash);
    assert_eq!(runs(&again).iter().map(name).collect::<Vec<_>>(), order);
    // The timeline shows every run on its node's lane and the quiet windows.
    let svg = dir.join("t.svg");
    let path = |p: &Path| p.to_str().expect("utf-8").to_string();
    let o = wio_e2e_tests::oci::wio_in(
        &cache,
        &[
            "sim",
            &path(&compose),
            "--seed",
            &seed.to_string(),
            "--quiet",
            "--timeline",
            &path(&svg),
        ],
    );
    assert!(o.status.code().is_some(), "{}", stderr(&o));
    let svg = std::fs::read_to_string(&svg).expect("timeline");
    for (i, n) in order.iter().enumerate() {
        assert!(
            svg.contains(&format!("<title>run {i}: {n} (")),
            "run {i} {n} not drawn"
        );
    }
    assert!(svg.contains("faults held off"));
    eprintln!("composer: templates by seed {templates:?}");
}

/// Explored from its setup-complete snapshot, each branch draws its own template and
/// order (the snapshot holds a composer that drew nothing); the branches where the failing
/// command ran fail, and such a seed reproduces from the snapshot bit for bit.
#[test]
fn composer_branches_of_a_snapshot_explore_and_reproduce() {
    let test = "composer_branches_of_a_snapshot_explore_and_reproduce";
    let dir = scratch("composer-explore");
    let Some(cache) = image(&dir, test) else {
        return;
    };
    let compose = dir.join("compose.yaml");
    std::fs::write(&compose, COMPOSE).expect("compose");
    let snap = dir.join("setup.snap");
    // (Seed 1's own branch may fail: only the snapshot matters here.)
    snapshot_at_setup(&cache, &compose, &snap, &[]);
    let (o, r) = explore(&cache, &snap, "0..8", &dir.join("report.json"));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let results = r["results"].as_array().expect("results");
    let failing: Vec<&Value> = results.iter().filter(|b| b["failed"] == true).collect();
    assert!(
        !failing.is_empty() && failing.len() < results.len(),
        "some branches choose the failing template, some not: {out}{}",
        stderr(&o)
    );
    assert!(
        out.contains("test command broken/singleton_driver_fails exits 0"),
        "{out}"
    );
    let (o, s) = branch_again(&cache, &snap, &failing[0]["seed"], &dir.join("again.json"));
    assert_eq!(o.status.code(), Some(108), "{}", stderr(&o));
    assert_eq!(
        s["world_trace_hash"], failing[0]["trace_hash"],
        "{}",
        failing[0]
    );
    assert_eq!(s["composer"]["template"], "broken");
    // A snapshot taken while a command runs and faults are held off (seed 3 draws the
    // main template, whose first_ command sleeps 4 s) continues exactly: the composer's
    // state, its outbox and its quiet windows come back with it.
    let (_, whole) = sim_summary(&cache, &compose, "3", &dir.join("whole.json"));
    assert_eq!(whole["composer"]["template"], "main");
    let mid = dir.join("mid.snap");
    let path = |p: &Path| p.to_str().expect("utf-8").to_string();
    let o = wio_e2e_tests::oci::wio_in(
        &cache,
        &[
            "sim",
            &path(&compose),
            "--seed",
            "3",
            "--quiet",
            "--snapshot-at",
            "3s",
            "--snapshot-out",
            &path(&mid),
        ],
    );
    assert!(mid.is_file(), "{}", stderr(&o));
    let first = &whole["composer"]["runs"][0];
    assert!(
        first["started_ns"].as_u64() < Some(3_000_000_000)
            && first["ended_ns"].as_u64() > Some(3_000_000_000)
    );
    let (_, resumed) = branch_again(&cache, &mid, &json!(3), &dir.join("resumed.json"));
    assert_eq!(resumed["world_trace_hash"], whole["world_trace_hash"]);
    assert_eq!(resumed["composer"]["runs"], whole["composer"]["runs"]);
}

/// The example project (examples/kv), as its README walks through it: the image archive
/// built by examples/kv/image.sh imported, the world snapshotted at setup-complete with
/// the planted bug, explored (branches where the composer's drivers race break "no
/// acknowledged increment is lost"), a failing seed reproduced bit for bit, and the fix
/// (BUG=none) verified on those seeds.
#[test]
fn the_kv_example_finds_its_lost_update_and_the_fix_holds() {
    let test = "the_kv_example_finds_its_lost_update_and_the_fix_holds";
    let dir = scratch("composer-kv");
    let Some(cache) = import_built(test, "RISCV64_KV_IMAGE", &dir, "wio-kv:1") else {
        return;
    };
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/kv");
    let project = dir.join("kv");
    std::fs::create_dir_all(project.join("test")).expect("project");
    std::fs::copy(example.join("compose.yaml"), project.join("compose.yaml")).expect("compose");
    for f in std::fs::read_dir(example.join("test")).expect("test/") {
        let f = f.expect("entry").path();
        std::fs::copy(&f, project.join("test").join(f.file_name().expect("name"))).expect("copy");
    }
    let compose = project.join("compose.yaml");
    let snapshot = |bug: &str, snap: &Path| {
        std::fs::write(project.join(".env"), format!("BUG={bug}\n")).expect(".env");
        snapshot_at_setup(&cache, &compose, snap, &[]);
    };
    let buggy = dir.join("buggy.snap");
    snapshot("lost-update", &buggy);
    let report = dir.join("report.json");
    let (_, r) = explore_finds(
        &cache,
        &buggy,
        "0..6",
        &report,
        "no acknowledged increment is lost",
    );
    let failing = first_failing(&r);
    let (_, s) = branch_again(&cache, &buggy, &failing["seed"], &dir.join("again.json"));
    assert_eq!(s["world_trace_hash"], failing["trace_hash"]);
    assert_eq!(s["composer"]["template"], "kv");
    let fixed = dir.join("fixed.snap");
    snapshot("none", &fixed);
    let path = |p: &Path| p.to_str().expect("utf-8").to_string();
    let o = wio_e2e_tests::oci::wio_in(
        &cache,
        &[
            "verify",
            "--from",
            &path(&fixed),
            "--report",
            &path(&report),
            "--jobs",
            "2",
        ],
    );
    let out = String::from_utf8_lossy(&o.stdout).into_owned() + &stderr(&o);
    assert!(o.status.success() && out.contains("the fix holds"), "{out}");
}
