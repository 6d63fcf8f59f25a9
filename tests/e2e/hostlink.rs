//! End-to-end tests of the host link (`wio sim --net host --allow ... --record TAPE`,
//! `--replay TAPE`): a guest fetches from an HTTP server this test starts on 127.0.0.1;
//! the recorded run and its replays (the server stopped) give the same world trace hash,
//! and `wio verify --golden` of its traces passes; a snapshot of the replay keeps the tape
//! and its branches are answered from it; a guest built to send another request
//! stops its replay (and the golden run's check) with the divergence message; a
//! port that is not allowed refuses the connection (counted, traced); damaged tapes and a
//! tape of another configuration are one-line errors.
//! Need the guests built by images/build-all-riscv64.sh.

#![forbid(unsafe_code)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use wio_e2e_tests::{
    initrd_adding, require_riscv_guests, riscv_guest_artifact, scratch, stderr, stdout, wio,
    with_summary,
};

/// An HTTP server on 127.0.0.1 answering `GET /hello.txt` (404 otherwise) until stopped.
struct Server {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start() -> Server {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::spawn(move || {
            for c in l.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(mut c) = c else { continue };
                let mut buf = Vec::new();
                let mut b = [0u8; 1024];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match c.read(&mut b) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => buf.extend_from_slice(&b[..n]),
                    }
                }
                let (status, body) = if buf.starts_with(b"GET /hello.txt ") {
                    ("200 OK", "hello from the host\n")
                } else {
                    ("404 Not Found", "no\n")
                };
                let _ = write!(
                    c,
                    "HTTP/1.0 {status}\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Server {
            port,
            stop,
            thread: Some(thread),
        }
    }

    fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The small guest's initramfs with /etc/wio-request holding `path` (a second, gzip'd
/// archive after it: the kernel unpacks both): a build whose client asks for `path`.
fn initrd_asking(path: &str, to: &Path) {
    let base = riscv_guest_artifact("RISCV64_SMALL_INITRAMFS").unwrap();
    let request = format!("{path}\n");
    initrd_adding(&base, &[("etc/wio-request", request.as_bytes(), 0o644)], to);
}

/// A test's scratch folder, the host's server started, the small guest's initramfs asking
/// for /hello.txt, and the small kernel.
fn setup(name: &str) -> (PathBuf, Server, PathBuf, PathBuf) {
    let dir = scratch(name);
    let server = Server::start();
    let initrd = dir.join("initrd.img");
    initrd_asking("/hello.txt", &initrd);
    let kernel = riscv_guest_artifact("RISCV64_SMALL_IMAGE").unwrap();
    (dir, server, initrd, kernel)
}

#[test]
fn a_recorded_host_fetch_replays_bit_for_bit_without_the_host() {
    let test = "a_recorded_host_fetch_replays_bit_for_bit_without_the_host";
    if !require_riscv_guests(test) {
        return;
    }
    let (dir, mut server, initrd, kernel) = setup("hostlink");
    let world = dir.join("fetch.toml");
    std::fs::write(
        &world,
        format!(
            "max_virtual_secs = 30\n[[node]]\nname = \"c\"\nkernel = \"{}\"\ninitrd = \"initrd.img\"\nrun = \"wget -q -O - http://api:{}$(cat /etc/wio-request); echo rc=$?; wget -q -O - http://api:9999/x; echo rc=$?; nslookup api 10.0.0.254; nslookup c 10.0.0.254; nslookup example.com 10.0.0.254; echo dns=$?\"\n",
            kernel.display(),
            server.port
        ),
    )
    .unwrap();
    let w = world.to_str().unwrap();
    let tape = dir.join("fetch.tape");
    let t = tape.to_str().unwrap();
    let allow = format!("api=127.0.0.1:{}", server.port);
    let golden = dir.join("golden");
    let g = golden.to_str().unwrap();
    let (o, rec) = with_summary(
        "sim",
        &[
            w,
            "--seed",
            "3",
            "--net",
            "host",
            "--allow",
            &allow,
            "--record",
            t,
            "--trace-dir",
            g,
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("hello from the host"), "{out}");
    // The port nobody allowed: refused, counted (and traced in the world's trace).
    assert!(out.contains("Connection refused"), "{out}");
    // The peer's DNS answers the world's names (an allowed destination at the peer, a
    // node at its address) and no other.
    assert!(
        out.contains("Address: 10.0.0.254")
            && out.contains("Address: 10.0.0.1")
            && out.contains("can't find example.com: NXDOMAIN"),
        "{out}"
    );
    assert!(rec["host"]["dns_answered"].as_u64().unwrap() >= 2, "{rec}");
    assert!(rec["host"]["dns_refused"].as_u64().unwrap() >= 1, "{rec}");
    assert_eq!(rec["host"]["mode"], "recording", "{rec}");
    assert_eq!(rec["host"]["refused"], 1, "{rec}");
    assert!(rec["host"]["tape_events"].as_u64().unwrap() >= 4, "{rec}");
    // Without the host, twice: the recorded run, bit for bit (the tape's seed by default).
    server.stop();
    for _ in 0..2 {
        let (o, s) = with_summary("sim", &[w, "--replay", t]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(stdout(&o).contains("hello from the host"), "{}", stdout(&o));
        assert_eq!(s["world_trace_hash"], rec["world_trace_hash"]);
        assert_eq!(s["host"]["mode"], "replay", "{s}");
        assert!(
            stderr(&o).contains("sandbox       on"),
            "a replay needs no network: {}",
            stderr(&o)
        );
    }
    // A world snapshot of the replay keeps the tape: its branches are answered from it, and
    // the tape's own seed is the recorded run again.
    let snap = dir.join("fetch.snap");
    let o = wio(&[
        "sim",
        w,
        "--replay",
        t,
        "--quiet",
        "--snapshot-at",
        "console:sim: node c",
        "--snapshot-out",
        snap.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let report = dir.join("explore.json");
    let o = wio(&[
        "explore",
        "--from",
        snap.to_str().unwrap(),
        "--seeds",
        "2..5",
        "--jobs",
        "2",
        "--report",
        report.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let results = r["results"].as_array().unwrap();
    let of = |seed: u64| results.iter().find(|x| x["seed"] == seed).unwrap()["trace_hash"].clone();
    assert_eq!(of(3), rec["world_trace_hash"], "{r}");
    assert!(
        of(2) != of(3) && of(4) != of(3),
        "other seeds, other runs: {r}"
    );
    // The recorded run is a golden run: this build runs it the same (from its tape).
    let o = wio(&["verify", "--golden", g]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("structurally equal"), "{}", stdout(&o));
    // A build whose client asks for something else: stopped where it parts from the tape.
    initrd_asking("/other.txt", &initrd);
    let o = wio(&["verify", "--golden", g]);
    assert_eq!(o.status.code(), Some(104), "{}", stderr(&o));
    assert!(stderr(&o).contains("GET /other.txt"), "{}", stderr(&o));
    let o = wio(&["sim", w, "--replay", t, "--quiet"]);
    assert_eq!(o.status.code(), Some(104), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("the replay left its tape")
            && e.contains("GET /other.txt")
            && e.contains("GET /hello.txt"),
        "{e}"
    );
    initrd_asking("/hello.txt", &initrd);
    // Bad tapes and another configuration: one line each.
    let text = std::fs::read_to_string(&tape).unwrap();
    let cut = dir.join("cut.tape");
    let lines: Vec<&str> = text.lines().collect();
    std::fs::write(&cut, lines[..lines.len() - 1].join("\n")).unwrap();
    let other = dir.join("other.toml");
    std::fs::write(
        &other,
        std::fs::read_to_string(&world)
            .unwrap()
            .replace("max_virtual_secs = 30", "max_virtual_secs = 31"),
    )
    .unwrap();
    for (scenario, tape, code, want) in [
        (w, cut.to_str().unwrap(), 101, "truncated"),
        (other.to_str().unwrap(), t, 100, "another configuration"),
    ] {
        let o = wio(&["sim", scenario, "--replay", tape, "--quiet"]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(code), "{e}");
        assert!(e.contains(want) && e.trim().lines().count() == 1, "{e}");
    }
}

/// A world with a simulated dependency of the allowed destination's name and port: the
/// host stands in for it while recording, and a replay whose guest asks for something the
/// tape does not hold goes on, answered by the dependency from there (the summary says
/// where it left the tape); the same replay twice is the same run.
#[test]
fn a_replay_past_its_tape_is_answered_by_the_dependency_standing_in() {
    let test = "a_replay_past_its_tape_is_answered_by_the_dependency_standing_in";
    if !require_riscv_guests(test) {
        return;
    }
    let (dir, mut server, initrd, kernel) = setup("hostlink-standin");
    let world = dir.join("fetch.toml");
    std::fs::write(
        &world,
        format!(
            "max_virtual_secs = 30\n[[node]]\nname = \"c\"\nkernel = \"{}\"\ninitrd = \"initrd.img\"\nrun = \"wget -q -O - http://api:{p}$(cat /etc/wio-request); echo rc=$?; wget -q -O - http://api:{p}/hello.txt; echo rc=$?\"\n[[dependency]]\nname = \"api\"\nport = {p}\n[[dependency.route]]\npath = \"/*\"\nbody = \"the stand-in answers {{path}}\\n\"\n",
            kernel.display(),
            p = server.port
        ),
    )
    .unwrap();
    let w = world.to_str().unwrap();
    let tape = dir.join("fetch.tape");
    let t = tape.to_str().unwrap();
    let allow = format!("api=127.0.0.1:{}", server.port);
    let (o, rec) = with_summary(
        "sim",
        &[
            w, "--seed", "5", "--net", "host", "--allow", &allow, "--record", t,
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(
        out.matches("hello from the host").count(),
        2,
        "the host answers while recording, not the dependency: {out}"
    );
    assert!(!out.contains("stand-in"), "{out}");
    assert!(rec["host"].get("left_tape").is_none(), "{rec}");
    server.stop();
    // The recorded run again, from the tape alone.
    let (o, s) = with_summary("sim", &[w, "--replay", t]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(s["world_trace_hash"], rec["world_trace_hash"]);
    // A build asking for something else: the dependency answers from there on, the first
    // request and the second (which the tape holds, but past where the run left it).
    initrd_asking("/other.txt", &initrd);
    let mut hashes = Vec::new();
    for _ in 0..2 {
        let (o, s) = with_summary("sim", &[w, "--replay", t]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let out = stdout(&o);
        assert!(
            out.contains("the stand-in answers /other.txt")
                && out.contains("the stand-in answers /hello.txt"),
            "{out}"
        );
        let left = s["host"]["left_tape"].as_str().unwrap_or_default();
        assert!(
            left.contains("GET /other.txt") && left.contains("GET /hello.txt"),
            "{s}"
        );
        assert!(stderr(&o).contains("left tape"), "{}", stderr(&o));
        assert_eq!(s["dependencies"][0]["requests"], 2, "{s}");
        hashes.push(s["world_trace_hash"].clone());
    }
    assert_eq!(hashes[0], hashes[1]);
    assert_ne!(hashes[0], rec["world_trace_hash"]);
    // The same name at another port is refused in one line.
    let other = format!("api=127.0.0.1:{}", server.port.wrapping_add(1).max(1024));
    let o = wio(&["sim", w, "--net", "host", "--allow", &other, "--quiet"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(100), "{e}");
    assert!(
        e.contains("the host stands in for it only at that port") && e.trim().lines().count() == 1,
        "{e}"
    );
}

/// Standard base64 of `bytes` (a node script on a kernel command line), by coreutils.
fn base64(bytes: &[u8]) -> String {
    use std::process::{Command, Stdio};
    let mut c = Command::new("base64")
        .arg("-w0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("base64 runs");
    c.stdin.take().unwrap().write_all(bytes).unwrap();
    let o = c.wait_with_output().unwrap();
    assert!(o.status.success());
    String::from_utf8(o.stdout).unwrap()
}

/// `wio run --net host` (a single machine): the recorded run and its replays without the
/// host give the same trace hash; a port not allowed is refused and counted; a build
/// asking for something else stops its replay naming both requests; a host link with
/// snapshots or on x86-64 is refused in one line.
#[test]
fn a_single_machine_records_its_host_link_and_replays_it_without_the_host() {
    let test = "a_single_machine_records_its_host_link_and_replays_it_without_the_host";
    if !require_riscv_guests(test) {
        return;
    }
    let (dir, mut server, initrd, kernel) = setup("hostlink-machine");
    let script = format!(
        "wget -q -O - http://api:{}$(cat /etc/wio-request); echo rc=$?; wget -q -O - http://api:9999/x; echo rc=$?; nslookup api 10.0.2.2; nslookup example.com 10.0.2.2; echo dns=$?",
        server.port
    );
    let cmdline = format!(
        "console=ttyS0 earlycon=sbi kfence.sample_interval=0 panic=-1 random.trust_cpu=off wio.node=c wio.ip=10.0.2.15 wio.hosts=api:10.0.2.2 wio.run={}",
        base64(script.as_bytes())
    );
    let tape = dir.join("machine.tape");
    let t = tape.to_str().unwrap();
    let allow = format!("api=127.0.0.1:{}", server.port);
    let machine = [
        "--arch",
        "riscv64",
        "--kernel",
        kernel.to_str().unwrap(),
        "--initrd",
        initrd.to_str().unwrap(),
        "--cmdline",
        &cmdline,
    ];
    let run = |extra: &[&str]| {
        let mut args = machine.to_vec();
        args.extend_from_slice(extra);
        with_summary("run", &args)
    };
    let (o, rec) = run(&[
        "--seed", "3", "--net", "host", "--allow", &allow, "--record", t,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("hello from the host") && out.contains("Connection refused"),
        "{out}"
    );
    assert_eq!(rec["host_link"]["mode"], "recording", "{rec}");
    assert_eq!(rec["host_link"]["refused"], 1, "{rec}");
    // Its peer's DNS answers the allowed name, and no other.
    assert!(
        out.contains("Address: 10.0.2.2") && out.contains("can't find example.com: NXDOMAIN"),
        "{out}"
    );
    assert!(
        rec["host_link"]["dns_refused"].as_u64().unwrap() >= 1,
        "{rec}"
    );
    server.stop();
    for _ in 0..2 {
        let (o, s) = run(&["--replay", t]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(stdout(&o).contains("hello from the host"), "{}", stdout(&o));
        assert_eq!(s["trace_hash"], rec["trace_hash"]);
        assert_eq!(s["host_link"]["mode"], "replay", "{s}");
        assert_eq!(s["sandbox"], "on (seccomp)", "{s}");
    }
    initrd_asking("/other.txt", &initrd);
    let mut args = machine.to_vec();
    args.extend_from_slice(&["--replay", t, "--quiet"]);
    args.insert(0, "run");
    let o = wio(&args);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(104), "{e}");
    assert!(
        e.contains("the replay left its tape")
            && e.contains("GET /other.txt")
            && e.contains("GET /hello.txt"),
        "{e}"
    );
    for (extra, want) in [
        (
            vec![
                "--arch",
                "riscv64",
                "--snapshot-at",
                "console:sim",
                "--net",
                "host",
                "--allow",
                allow.as_str(),
            ],
            "cannot be snapshotted",
        ),
        (
            vec![
                "--arch",
                "x86_64",
                "--net",
                "host",
                "--allow",
                allow.as_str(),
            ],
            "riscv64",
        ),
    ] {
        let mut args = vec!["run", "--quiet"];
        args.extend(extra);
        let o = wio(&args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(100), "{e}");
        assert!(e.contains(want) && e.trim().lines().count() == 1, "{e}");
    }
}
