//! End-to-end tests of running imported container images (riscv64 guests needed):
//! `wio run --image` starts the entrypoint as the image says, and an image is a node of a
//! world (`[[node]] image = ...`). The images are built byte by byte (`support/oci.rs`).

#![forbid(unsafe_code)]

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use wio_e2e_tests::oci::{
    branch_again, explore, explore_finds, first_failing, import_built, import_json, layer,
    private_cache, riscv_busybox, sha, sim_summary, snapshot_at_setup, wio_in, Layout, E, GZIP,
};
use wio_e2e_tests::{scratch, stderr};

/// A runnable image (busybox, a non-root user in a supplementary group, a whiteout, a hard
/// link; an amd64 image beside it), imported as `wio-run-test:1` into a cache of its own
/// beside the built guests: the cache and the disk, or None (skipped) without guests.
fn runnable_image(dir: &Path, test: &str) -> Option<(PathBuf, PathBuf)> {
    let busybox = riscv_busybox(dir, test)?;
    let l = Layout::new(&dir.join("layout"));
    let base = layer(&[
        E::File("bin/busybox", &busybox, 0o755, 0),
        E::Symlink("bin/sh", "busybox"),
        E::File(
            "etc/passwd",
            b"root:x:0:0::/root:/bin/sh\napp:x:1000:1000::/home/app:/bin/sh\n",
            0o644,
            0,
        ),
        E::File(
            "etc/group",
            b"root:x:0:\napp:x:1000:\nstaff:x:50:app\n",
            0o644,
            0,
        ),
        E::File("tmp/gone", b"whited out\n", 0o644, 0),
    ]);
    let top = layer(&[
        E::File("tmp/.wh.gone", b"", 0o644, 0),
        E::Hardlink("bin/bb", "bin/busybox"),
    ]);
    let script = "echo \"user=$(id -u):$(id -g) groups=$(id -G) pwd=$(pwd) greeting=$GREETING\"; \
                  [ -e /tmp/gone ] && echo gone=present || echo gone=absent; [ /bin/bb -ef /bin/busybox ] && echo hardlink=ok; exit 7";
    let config = json!({
        "User": "app", "Env": ["GREETING=hi from the image"], "WorkingDir": "/srv/app",
        "Entrypoint": ["/bin/sh", "-c"], "Cmd": [script],
    });
    let riscv = l.image("riscv64", &[base, top], config, GZIP);
    let amd = l.one_file_image("amd64", "etc/arch", b"amd64\n");
    l.index("localhost/wio-run-test:1", vec![amd, riscv]);
    let archive = dir.join("image.tar");
    l.archive(&archive);
    let cache = private_cache(dir);
    let imported = import_json(&cache, &archive);
    Some((
        cache,
        PathBuf::from(imported["disk"].as_str().expect("disk")),
    ))
}

#[test]
fn an_image_runs_its_entrypoint_as_its_config_says() {
    let dir = scratch("images-run");
    let Some((cache, disk)) =
        runnable_image(&dir, "an_image_runs_its_entrypoint_as_its_config_says")
    else {
        return;
    };
    let before = sha(&std::fs::read(&disk).expect("disk"));

    let run = |extra: &[&str]| {
        let summary = dir.join("summary.json");
        let mut args = vec![
            "run",
            "--image",
            "wio-run-test:1",
            "--seed",
            "3",
            "--summary-json",
            summary.to_str().expect("utf-8"),
        ];
        args.extend_from_slice(extra);
        let o = wio_in(&cache, &args);
        let s: Value =
            serde_json::from_slice(&std::fs::read(&summary).expect("summary")).expect("json");
        (o, s)
    };
    let (o, s) = run(&[]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(
        o.status.code(),
        Some(7),
        "the entrypoint's status: {out}{}",
        stderr(&o)
    );
    assert!(
        out.contains("user=1000:1000 groups=1000 50 pwd=/srv/app greeting=hi from the image"),
        "{out}"
    );
    assert!(
        out.contains("gone=absent") && out.contains("hardlink=ok"),
        "{out}"
    );
    // Same seed, same bits; the image's disk file is never written.
    let (_, again) = run(&[]);
    assert!(s["trace_hash"].is_string(), "{s}");
    assert_eq!(s["trace_hash"], again["trace_hash"]);
    assert_eq!(before, sha(&std::fs::read(&disk).expect("disk")));
    // Arguments after -- replace the image's cmd, keeping its entrypoint.
    let (o, _) = run(&["--", "echo replaced as $(id -un); exit 3"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("replaced as app"));
}

#[test]
fn an_image_is_a_node_of_a_world() {
    let dir = scratch("images-world");
    let Some((cache, _)) = runnable_image(&dir, "an_image_is_a_node_of_a_world") else {
        return;
    };
    let world = dir.join("world.toml");
    std::fs::write(
        &world,
        r#"max_virtual_secs = 30
end_when_done = ["client"]
[[node]]
name = "server"
image = "wio-run-test:1"
user = "root"
environment = ["GREETING=from the world"]
command = ["echo \"$GREETING as $(id -u)\"; nc -l -p 7000 -e echo hello-over-tcp"]
[[node]]
name = "client"
run = "sleep 1; nc server 7000 </dev/null"
"#,
    )
    .expect("world");
    let sim = |seed: &str| {
        sim_summary(
            &cache,
            &world,
            seed,
            &dir.join(format!("world-{seed}.json")),
        )
    };
    let (o, s) = sim("4");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(
        out.contains("server | from the world as 0"),
        "the node's overrides: {out}"
    );
    assert!(
        out.contains("server | wio-image: node server at 10.0.0.1"),
        "{out}"
    );
    assert!(
        out.contains("client | hello-over-tcp"),
        "the client reached the image by name: {out}"
    );
    let (_, again) = sim("4");
    assert!(s["world_trace_hash"].is_string(), "{s}");
    assert_eq!(
        s["world_trace_hash"], again["world_trace_hash"],
        "same seed, same world"
    );

    // Fields an image node cannot have, and image fields without an image: one line each.
    for (text, needle) in [
        (
            "[[node]]\nname = \"a\"\nimage = \"wio-run-test:1\"\nrun = \"true\"\n",
            "node.run with node.image",
        ),
        (
            "[[node]]\nname = \"a\"\nrun = \"true\"\ncommand = [\"x\"]\n",
            "node.command changes an image's process",
        ),
        (
            "[[node]]\nname = \"a\"\nimage = \"nothing-here:1\"\n",
            "no imported image is called nothing-here:1",
        ),
    ] {
        refused_scenario(&dir.join("bad.toml"), &cache, text, needle);
    }
}

#[test]
fn a_compose_project_boots_and_its_services_find_each_other_by_name() {
    let dir = scratch("images-compose");
    let Some((cache, _)) = runnable_image(
        &dir,
        "a_compose_project_boots_and_its_services_find_each_other_by_name",
    ) else {
        return;
    };
    // Values of variables come from .env beside the file, never from wio's environment.
    std::fs::write(dir.join(".env"), "GREETING=hello from env\n").expect(".env");
    std::fs::write(dir.join("b.env"), "WHO=b\n").expect("env_file");
    // A bind mount's files are copied in (read-only here); a named volume is a folder.
    std::fs::create_dir_all(dir.join("conf")).expect("conf");
    std::fs::write(dir.join("conf/greeting.txt"), "from a host file\n").expect("conf file");
    let compose = dir.join("compose.yaml");
    std::fs::write(
        &compose,
        r#"services:
  a:
    image: wio-run-test:1
    user: root
    # Not ready for two virtual seconds: c connects once, so it must wait for a's health.
    command: ["sleep 2; touch /tmp/up; nc -l -p 7000 -e echo \"$$GREETING from a\""]
    healthcheck:
      test: ["CMD", "/bin/busybox", "test", "-e", "/tmp/up"]
      interval: 250ms
    environment:
      GREETING: ${GREETING}
    ports: ["7000:7000"]
  b:
    image: wio-run-test:1
    user: root
    env_file: b.env
    volumes:
      - ./conf:/etc/b:ro
      - state:/var/lib/b
    command: ["cat /etc/b/greeting.txt; touch /etc/b/x 2>/dev/null || echo conf=read-only; touch /var/lib/b/y && echo state=writable; nc -l -p 7001 -e echo from $$WHO"]
  c:
    image: wio-run-test:1
    depends_on:
      a:
        condition: service_healthy
      b:
        condition: service_started
    command:
      - nc a 7000 </dev/null; for i in 1 2 3 4 5; do nc b 7001 </dev/null && break; sleep 1; done
volumes:
  state:
x-wio:
  end_when_done: [c]
  max_virtual_secs: 30
"#,
    )
    .expect("compose");
    let sim = |seed: &str| {
        sim_summary(
            &cache,
            &compose,
            seed,
            &dir.join(format!("compose-{seed}.json")),
        )
    };
    let (o, s) = sim("5");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = stderr(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(out.contains("c | hello from env from a"), "{out}");
    assert!(out.contains("c | from b"), "{out}");
    assert!(
        out.contains("b | from a host file")
            && out.contains("b | conf=read-only")
            && out.contains("b | state=writable"),
        "{out}"
    );
    assert!(
        err.contains("services.a.ports (line 12) is ignored"),
        "{err}"
    );
    assert!(
        err.contains("services.c.depends_on: the nodes of a world boot together"),
        "{err}"
    );
    let waited = out
        .find("c | wio-image: a is healthy")
        .expect("c waited for a");
    assert!(out[..waited].contains("a | wio-image: healthy"), "{out}");
    let (_, again) = sim("5");
    assert!(s["world_trace_hash"].is_string(), "{s}");
    assert_eq!(
        s["world_trace_hash"], again["world_trace_hash"],
        "same seed, same world"
    );

    // A compose world explores as a TOML world does: from a snapshot taken at 1 virtual s,
    // seed 5's branch is the world above, bit for bit, and other seeds are other worlds.
    let r = branches_at_1s(&cache, &dir, &compose, "5..7");
    let hashes: Vec<&str> = r["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|b| b["trace_hash"].as_str().expect("hash"))
        .collect();
    assert_eq!(hashes.len(), 2, "{r}");
    assert_eq!(
        Some(hashes[0]),
        s["world_trace_hash"].as_str(),
        "seed 5's branch is the world"
    );
    assert_ne!(hashes[0], hashes[1], "another seed, another world");

    // An unsupported key, and an image nothing answers to: one line, with the compose line.
    for (text, needle) in [
        (
            "services:\n  a:\n    image: wio-run-test:1\n    cap_add: [NET_ADMIN]\n",
            "line 4: services.a.cap_add is not supported",
        ),
        (
            "services:\n  a:\n    image: nothing-here:1\n",
            "line 3: node.image: no imported image is called nothing-here:1",
        ),
    ] {
        refused_scenario(&dir.join("bad.yaml"), &cache, text, needle);
    }
}

/// Compose networks: web is on `front`, db on `back`, api on both. api reaches db and web
/// reaches api, but web neither resolves db's name nor reaches its address; the world
/// explores from a snapshot taken before web tries (seed 5's branch is the world, so the
/// snapshot kept who reaches whom), and a network nobody declared is one line.
#[test]
fn compose_networks_keep_services_apart() {
    let dir = scratch("images-networks");
    let Some((cache, _)) = runnable_image(&dir, "compose_networks_keep_services_apart") else {
        return;
    };
    let compose = dir.join("compose.yaml");
    std::fs::write(
        &compose,
        r#"services:
  web:
    image: wio-run-test:1
    networks: [front]
    command:
      - sleep 2; nc api 7000 </dev/null; grep -qw db /etc/hosts && echo db-named || echo db-not-named; nc -w 3 10.0.0.3 7001 </dev/null || echo db-unreachable
  api:
    image: wio-run-test:1
    networks: [front, back]
    command: ["nc -l -p 7000 -e echo from-api & sleep 1; nc db 7001 </dev/null; wait"]
  db:
    image: wio-run-test:1
    networks:
      back:
    command: ["while :; do nc -l -p 7001 -e echo from-db; done"]
networks:
  front:
  back:
x-wio:
  end_when_done: [web]
  max_virtual_secs: 30
"#,
    )
    .expect("compose");
    let (o, s) = sim_summary(&cache, &compose, "5", &dir.join("s.json"));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(out.contains("api | from-db"), "api reaches db: {out}");
    assert!(out.contains("web | from-api"), "web reaches api: {out}");
    assert!(out.contains("web | db-not-named"), "{out}");
    assert!(out.contains("web | db-unreachable"), "{out}");
    assert!(!out.contains("web | from-db"), "{out}");

    let r = branches_at_1s(&cache, &dir, &compose, "5..6");
    assert_eq!(
        r["results"][0]["trace_hash"], s["world_trace_hash"],
        "seed 5's branch is the world: {r}"
    );

    refused_scenario(
        &dir.join("bad.yaml"),
        &cache,
        "services:\n  a:\n    image: wio-run-test:1\n    networks: [back]\n",
        "line 4: services.a.networks: network \"back\" is not declared",
    );
}

/// Compose's restart policies, kept by the node's launcher: `on-failure:2` runs a failing
/// process three times (100 ms, then 200 ms apart) and the node ends with its status;
/// `always` starts a process that exits 0 again; a policy compose does not know is one line.
#[test]
fn a_service_restarts_as_its_policy_says() {
    let dir = scratch("images-restart");
    let Some((cache, _)) = runnable_image(&dir, "a_service_restarts_as_its_policy_says") else {
        return;
    };
    let compose = dir.join("compose.yaml");
    std::fs::write(
        &compose,
        r#"services:
  flaky:
    image: wio-run-test:1
    restart: on-failure:2
    command: ["n=$$(cat /tmp/n 2>/dev/null || echo 0); n=$$((n + 1)); echo $$n >/tmp/n; echo run $$n; exit 3"]
  steady:
    image: wio-run-test:1
    restart: always
    command: ["echo up"]
x-wio:
  end_when_done: [flaky]
  max_virtual_secs: 30
"#,
    )
    .expect("compose");
    let (o, s) = sim_summary(&cache, &compose, "3", &dir.join("s.json"));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(3), "{out}{}", stderr(&o));
    for line in [
        "flaky | run 1",
        "flaky | wio-image: exit status=3; restart 1 (on-failure) in 0.100 s",
        "flaky | run 2",
        "flaky | wio-image: exit status=3; restart 2 (on-failure) in 0.200 s",
        "flaky | run 3",
        "steady | wio-image: exit status=0; restart 1 (always) in 0.100 s",
        "steady | wio-image: exit status=0; restart 2 (always) in 0.200 s",
    ] {
        assert!(out.contains(line), "{line:?} in {out}");
    }
    assert!(!out.contains("run 4"), "at most 2 restarts: {out}");
    // nodes: [name, summary] pairs.
    let flaky = s["nodes"]
        .as_array()
        .and_then(|n| n.iter().find(|n| n[0] == "flaky"))
        .expect("flaky's summary");
    assert_eq!(flaky[1]["exit_status"], 3, "{s}");

    refused_scenario(
        &dir.join("bad.yaml"),
        &cache,
        "services:\n  a:\n    image: wio-run-test:1\n    restart: sometimes\n",
        "line 4: node.restart \"sometimes\": no, always, unless-stopped, on-failure",
    );
}

/// The report of an exploration of `seeds` from the world of `compose` (seed 5)
/// snapshotted at 1 virtual second.
fn branches_at_1s(cache: &Path, dir: &Path, compose: &Path, seeds: &str) -> Value {
    let snap = dir.join("at-1s.snap");
    let o = wio_in(
        cache,
        &[
            "sim",
            compose.to_str().expect("utf-8"),
            "--seed",
            "5",
            "--quiet",
            "--snapshot-at",
            "1s",
            "--snapshot-out",
            snap.to_str().expect("utf-8"),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let (o, r) = explore(cache, &snap, seeds, &dir.join("explore.json"));
    assert!(o.status.success(), "{}", stderr(&o));
    r
}

/// `wio sim FILE` of a scenario `text` that must fail: exit 101, one `wio: error:` line
/// naming the file and `needle`.
fn refused_scenario(file: &Path, cache: &Path, text: &str, needle: &str) {
    std::fs::write(file, text).expect("bad scenario");
    let o = wio_in(cache, &["sim", file.to_str().expect("utf-8")]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(101), "{err}");
    assert_eq!(
        err.lines().filter(|l| l.starts_with("wio: error:")).count(),
        1,
        "{err}"
    );
    let name = file.file_name().and_then(|n| n.to_str()).expect("name");
    assert!(
        err.contains(needle) && err.contains(name),
        "{needle:?} in {err}"
    );
}

/// The payment scenario as a compose project of one image built from Debian's packages
/// (images/payments/image.sh): with the receipt bug planted through `.env`, an
/// exploration from setup-complete finds seeds that break the receipt promise, and only
/// that one, and `wio sim --from` reproduces such a seed's world bit for bit.
#[test]
fn the_payments_compose_project_finds_the_receipt_bug_and_its_seed_reproduces() {
    let test = "the_payments_compose_project_finds_the_receipt_bug_and_its_seed_reproduces";
    let dir = scratch("images-payments");
    let Some(cache) = import_built(test, "RISCV64_PAYMENTS_IMAGE", &dir, "wio-payments:1") else {
        return;
    };
    let compose = dir.join("compose.yaml");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../images/payments/compose.yaml"
        ),
        &compose,
    )
    .expect("compose");
    std::fs::write(dir.join(".env"), "BUG=receipt-no-retry\n").expect(".env");
    let snap = dir.join("receipt.snap");
    snapshot_at_setup(&cache, &compose, &snap, &["--until", "console:client: p0:"]);
    let report = dir.join("report.json");
    // About one seed in eight breaks the promise (3 of 24 measured).
    let (out, r) = explore_finds(
        &cache,
        &snap,
        "0..24",
        &report,
        "every successful charge has its receipt",
    );
    assert_eq!(
        out.matches("FAILED ").count(),
        1,
        "only the receipt promise breaks: {out}"
    );
    let failing = first_failing(&r);
    let seed = &failing["seed"];
    let (o, s) = branch_again(&cache, &snap, seed, &dir.join("again.json"));
    assert_eq!(
        o.status.code(),
        Some(108),
        "the promise fails again: {}",
        stderr(&o)
    );
    assert_eq!(
        s["world_trace_hash"], failing["trace_hash"],
        "seed {seed} reproduces bit for bit"
    );
}

/// The Antithesis Rust SDK in an image node (images/riscv64-rust-sdk.sh's program, bound
/// into a Debian image): its assertions reach the summary through the image's
/// libvoidstar.so, and its random numbers come from wio's port, so they are the seed's.
#[test]
fn the_rust_sdk_states_its_promises_through_libvoidstar() {
    let test = "the_rust_sdk_states_its_promises_through_libvoidstar";
    let Some(demo) = wio_e2e_tests::require_riscv_artifact(
        test,
        "RISCV64_RUST_SDK_DEMO",
        wio_require::Capability::RiscvGuests,
    ) else {
        return;
    };
    let dir = scratch("images-rust-sdk");
    let Some(cache) = import_built(test, "RISCV64_PAYMENTS_IMAGE", &dir, "wio-payments:1") else {
        return;
    };
    std::fs::create_dir_all(dir.join("bin")).expect("bin");
    std::fs::copy(&demo, dir.join("bin/wio-rust-sdk-demo")).expect("demo");
    let compose = dir.join("compose.yaml");
    std::fs::write(
        &compose,
        "services:\n  rust:\n    image: wio-payments:1\n    command: [/opt/wio-rust/wio-rust-sdk-demo]\n    \
         volumes:\n      - ./bin:/opt/wio-rust:ro\nx-wio:\n  end_when_done: [rust]\n  max_virtual_secs: 30\n",
    )
    .expect("compose");
    let run = |seed: &str, name: &str| {
        let (o, s) = sim_summary(&cache, &compose, seed, &dir.join(name));
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(o.status.success(), "{out}{}", stderr(&o));
        let sum = out
            .lines()
            .find_map(|l| {
                l.split_once("sum of the drawn numbers ")
                    .map(|(_, n)| n.to_string())
            })
            .expect("the demo's line");
        (s, sum)
    };
    let (s, sum) = run("3", "a.json");
    let promise = |id: &str| {
        s["promises"]
            .as_array()
            .expect("promises")
            .iter()
            .find(|p| p["id"] == id)
            .unwrap_or_else(|| panic!("no promise {id}: {}", s["promises"]))
            .clone()
    };
    assert_eq!(
        promise("rust: the loop stays in bounds")["status"],
        "passed"
    );
    assert_eq!(promise("rust: the demo ran to its end")["passes"], 1);
    assert_eq!(
        promise("rust: a drawn number is even")["display_type"],
        "Sometimes"
    );
    // Ten draws, each 8 bytes from wio's random port (not the guest's own getrandom).
    assert_eq!(
        s["nodes"][0][1]["promises"]["channel"]["random_requests"],
        10
    );
    let (again, same) = run("3", "b.json");
    assert_eq!(
        (again["world_trace_hash"].clone(), same),
        (s["world_trace_hash"].clone(), sum.clone())
    );
    let (_, other) = run("4", "c.json");
    assert_ne!(other, sum, "another seed, other numbers");
}
