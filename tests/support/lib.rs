//! Helpers for the end-to-end tests: find the `wio` binary, run it,
//! read its JSON summary, and tell whether this host can run KVM guests. A test that
//! cannot run here says so through [`skip`] (the `wio-require` crate), naming the
//! [`Capability`] it lacks, so CI's `WIO_REQUIRE` can refuse the skip.

#![forbid(unsafe_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
pub mod gdb;
pub use wio_require::{skip, Capability};

pub mod browser;
pub mod oci;

/// The `wio` binary of the same build profile as this test: `WIO_BIN` if set, else the
/// `wio` beside this test executable. The e2e tests are targets of the `wio` package
/// (vmm/Cargo.toml), so `cargo test` builds that binary with them, before they run.
pub fn wio_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("WIO_BIN") {
            return PathBuf::from(p);
        }
        // Test executables live in target/<profile>/deps/, the binary in target/<profile>/.
        let exe = std::env::current_exe().expect("test executable path");
        let bin = exe
            .parent()
            .and_then(Path::parent)
            .expect("target/<profile>/deps layout")
            .join("wio");
        assert!(
            bin.exists(),
            "no wio binary at {}: run the e2e tests with `cargo test -p wio` (which builds it), or set WIO_BIN",
            bin.display()
        );
        bin
    })
}

/// Runs `wio` with `args` and returns its output.
pub fn wio(args: &[&str]) -> Output {
    Command::new(wio_bin())
        .args(args)
        .output()
        .expect("spawn wio")
}

/// Runs `wio` with an extra environment variable.
pub fn wio_env(args: &[&str], key: &str, value: &str) -> Output {
    Command::new(wio_bin())
        .args(args)
        .env(key, value)
        .output()
        .expect("spawn wio")
}

/// A scratch directory unique to this test process and `name`.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wio-e2e-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Runs `wio run` with `args` plus `--summary-json`, returning (output, summary).
pub fn run_with_summary(args: &[&str]) -> (Output, Value) {
    with_summary("run", args)
}

/// Runs `wio SUBCOMMAND` (`run`, `sim`) with `args` plus `--summary-json`, returning
/// (output, summary).
pub fn with_summary(subcommand: &str, args: &[&str]) -> (Output, Value) {
    let dir = scratch("summary");
    let path = dir.join(format!("s-{}.json", unique()));
    let mut all = vec![
        subcommand,
        "--summary-json",
        path.to_str().expect("utf-8 temp path"),
    ];
    all.extend_from_slice(args);
    let out = wio(&all);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "no summary JSON ({e}); stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let _ = std::fs::remove_file(&path);
    (out, serde_json::from_str(&text).expect("summary is JSON"))
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// What this host offers for x86-64 guests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KvmHost {
    /// VT-x or AMD-V.
    Hardware,
    /// PVM: small ring-0 guests only, CPUID not enforced.
    Pvm,
    /// Some other KVM.
    Other,
    /// No usable /dev/kvm.
    Unusable,
}

/// Detects the host, the same way wio does.
pub fn kvm_host() -> KvmHost {
    let usable = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/kvm")
        .is_ok();
    if !usable {
        KvmHost::Unusable
    } else if Path::new("/sys/module/kvm_intel").exists()
        || Path::new("/sys/module/kvm_amd").exists()
    {
        KvmHost::Hardware
    } else if Path::new("/sys/module/kvm_pvm").exists() {
        KvmHost::Pvm
    } else {
        KvmHost::Other
    }
}

/// True when KVM guests can run; otherwise skips `test` (needs [`Capability::Kvm`]).
pub fn require_kvm(test: &str) -> bool {
    if kvm_host() == KvmHost::Unusable {
        skip(
            test,
            Capability::Kvm,
            "/dev/kvm is missing or cannot be opened read-write, so no x86-64 guest can run (run on a KVM host, as root or in the kvm group)",
        );
        return false;
    }
    true
}

/// True when this host's KVM is hardware virtualization (VT-x or AMD-V); otherwise skips
/// `test` (needs [`Capability::HardwareKvm`]) saying that `what` needs it.
pub fn require_hardware_kvm(test: &str, what: &str) -> bool {
    let host = kvm_host();
    if host != KvmHost::Hardware {
        skip(
            test,
            Capability::HardwareKvm,
            &format!("{what} needs hardware virtualization and this host's KVM is {host:?} (ci/l1.sh runs it inside an L1 with kvm_amd)"),
        );
        return false;
    }
    true
}

/// The text of a console line starting with `prefix`, if present.
pub fn console_line<'a>(stdout: &'a str, prefix: &str) -> Option<&'a str> {
    stdout.lines().find(|l| l.starts_with(prefix))
}

/// Parses `key=value` (a decimal number) out of a console line.
pub fn field(line: &str, key: &str) -> Option<u64> {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
}

/// The wio cache folder, as wio finds it.
pub fn cache_dir() -> PathBuf {
    std::env::var_os("WIO_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/wio")
        })
}

/// True when images/build-all-riscv64.sh has built the riscv64 guests; otherwise skips
/// `test` (needs [`Capability::RiscvGuests`]).
pub fn require_riscv_guests(test: &str) -> bool {
    let manifest = cache_dir().join("riscv64-guests.env");
    if !manifest.exists() {
        skip(
            test,
            Capability::RiscvGuests,
            &format!(
                "no riscv64 guests: {} is missing (run images/build-all-riscv64.sh; ci/test.sh does)",
                manifest.display()
            ),
        );
        return false;
    }
    true
}

/// The guest manifest's `key` (for example `RISCV64_ROOTFS`) when it names an existing
/// file; otherwise None after skipping `test`. `need` is [`Capability::RiscvGuests`] for
/// an artifact images/build-all-riscv64.sh always builds, or the capability of an optional
/// one (OpenSBI, the flight example, the Debian kernel's symbols: a failed download leaves
/// them out of a build that succeeds).
pub fn require_riscv_artifact(test: &str, key: &str, need: Capability) -> Option<PathBuf> {
    if !require_riscv_guests(test) {
        return None;
    }
    let found = riscv_guest_artifact(key).filter(|p| p.is_file());
    if found.is_none() {
        skip(
            test,
            need,
            &format!(
                "{key} in {} names no file (run images/build-all-riscv64.sh; its log says why an artifact is missing)",
                cache_dir().join("riscv64-guests.env").display()
            ),
        );
    }
    found
}

/// Every line of `stdout` that starts with `prefix`.
pub fn console_lines<'a>(stdout: &'a str, prefix: &str) -> Vec<&'a str> {
    stdout.lines().filter(|l| l.starts_with(prefix)).collect()
}

/// A key of the riscv64 guest manifest (for example `RISCV64_ROOTFS`).
pub fn riscv_guest_artifact(key: &str) -> Option<PathBuf> {
    manifest_entry("riscv64-guests.env", key)
}

/// The path a build manifest in the cache (`riscv64-guests.env`, `x86_64-guests.env`)
/// gives for `key`, when the manifest has that key.
fn manifest_entry(manifest: &str, key: &str) -> Option<PathBuf> {
    let text = std::fs::read_to_string(cache_dir().join(manifest)).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
        .map(|v| PathBuf::from(v.trim()))
}

/// A command's standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A command's standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Writes `text` to `dir/name` and returns the path as a string (for command lines).
pub fn write_file(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write a test file");
    p.to_str().expect("utf-8 test path").to_string()
}

/// Takes a snapshot of the small riscv64 guest booted with `seed` at `at` (`--snapshot-at`
/// syntax) into `path`; asserts that it worked.
pub fn riscv_snapshot(path: &Path, seed: u64, at: &str) {
    let seed = seed.to_string();
    let out = wio(&[
        "run",
        "--arch",
        "riscv64",
        "--seed",
        &seed,
        "--quiet",
        "--snapshot-at",
        at,
        "--snapshot-out",
        path.to_str().expect("a UTF-8 path"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// `wio explore --from SNAP --budget BUDGET --jobs JOBS EXTRA... --report REP`: a guided
/// exploration of `snap` (a machine's snapshot or a world's).
pub fn guided_explore(snap: &Path, budget: u64, jobs: u32, extra: &[&str], rep: &Path) -> Output {
    let (budget, jobs) = (budget.to_string(), jobs.to_string());
    let mut args = vec![
        "explore",
        "--from",
        snap.to_str().expect("utf-8 snapshot path"),
        "--budget",
        &budget,
        "--jobs",
        &jobs,
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--report", rep.to_str().expect("utf-8 report path")]);
    wio(&args)
}

/// `--watchdog-ms` for Linux guests inside L1: under TCG a kernel's decompressor runs for
/// seconds without an exit (the default 5 s cut Debian's kernel there now and then).
pub const LINUX_WATCHDOG_MS: &str = "60000";

/// wio's small x86-64 kernel (guest-kernel/x86_64, with the determinism patches) and its
/// busybox workload initramfs (images/x86_64-initramfs.sh), as ci/l1.sh hands them to the
/// tests inside its L1: `None` (the test skips, saying why) anywhere else.
pub fn x86_small_kernel(test: &str) -> Option<(String, String)> {
    let (Some(kernel), Some(initrd)) = (
        std::env::var("WIO_X86_SMALL_KERNEL").ok(),
        std::env::var("WIO_X86_SMALL_INITRD").ok(),
    ) else {
        skip(
            test,
            Capability::X86Linux,
            "no WIO_X86_SMALL_KERNEL/INITRD (run ci/l1.sh, which builds them and sets them inside its L1)",
        );
        return None;
    };
    if !require_hardware_kvm(test, "an x86-64 Linux guest") {
        return None;
    }
    Some((kernel, initrd))
}

/// wio's small x86-64 kernel and the redis root disk (images/x86_64-rootfs.sh --redis), as
/// ci/l1.sh hands them to the tests inside its L1: `None` (the test skips, saying why)
/// anywhere else.
pub fn x86_small_kernel_and_redis_disk(test: &str) -> Option<(String, String)> {
    let (kernel, _) = x86_small_kernel(test)?;
    let Ok(rootfs) = std::env::var("WIO_X86_REDIS_ROOTFS") else {
        skip(
            test,
            Capability::X86Linux,
            "no WIO_X86_REDIS_ROOTFS (run ci/l1.sh, which builds it with images/x86_64-rootfs.sh --redis)",
        );
        return None;
    };
    Some((kernel, rootfs))
}

/// The built x86-64 artifact `key` of `images/build-all-x86_64.sh`'s manifest (for example
/// `X86_64_PAYMENTS_ROOTFS`) when it names an existing file and the host has hardware KVM
/// to run it; otherwise `None` after skipping `test` (ci/l1.sh hands the built guests to
/// its L1 by name).
pub fn require_x86_artifact(test: &str, key: &str) -> Option<PathBuf> {
    let manifest = "x86_64-guests.env";
    let Some(path) = manifest_entry(manifest, key).filter(|p| p.is_file()) else {
        skip(
            test,
            Capability::X86Linux,
            &format!(
                "{key} in {} names no file (run images/build-all-x86_64.sh, or ci/l1.sh, which builds the x86-64 guests and hands them to its L1)",
                cache_dir().join(manifest).display()
            ),
        );
        return None;
    };
    require_hardware_kvm(test, "an x86-64 Linux guest").then_some(path)
}

/// The payment world `world`'s setup-complete snapshot of the build with `bug`
/// (`--node-args payments=wio.bug=BUG`), seed 1, written to `snap`: the run stops at the
/// first payment (only the snapshot matters). `extra`: more `wio sim` arguments.
pub fn payments_snapshot(world: &str, snap: &Path, bug: &str, extra: &[&str]) {
    let node_args = format!("payments=wio.bug={bug}");
    let mut args = vec![
        "sim",
        world,
        "--seed",
        "1",
        "--quiet",
        "--node-args",
        &node_args,
        "--snapshot-at",
        "setup-complete",
        "--snapshot-out",
        snap.to_str().expect("a UTF-8 path"),
        "--until",
        "console:client: p0:",
    ];
    args.extend_from_slice(extra);
    let out = wio(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(snap.exists(), "{}", stderr(&out));
}

/// The console line starting with `prefix`, or a panic showing the console.
pub fn line_of<'a>(text: &'a str, prefix: &str) -> &'a str {
    console_line(text, prefix).unwrap_or_else(|| panic!("no {prefix:?} line in:\n{text}"))
}

/// The promise `id` in a run summary's `promises`, or a panic showing them.
pub fn summary_promise<'a>(s: &'a Value, id: &str) -> &'a Value {
    s["promises"]["list"]
        .as_array()
        .and_then(|l| l.iter().find(|p| p["id"] == id))
        .unwrap_or_else(|| panic!("no promise {id:?} in {}", s["promises"]))
}

/// The first line of the trace file at `path` whose event is `ev`, or a panic.
pub fn trace_event(path: &Path, ev: &str) -> Value {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("a JSON trace line"))
        .find(|v| v["ev"] == ev)
        .unwrap_or_else(|| panic!("no {ev} line in the trace {}", path.display()))
}

/// A JSON file wio wrote (an exploration's report, a summary), read and parsed.
pub fn read_report(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// The console line each result of an exploration's `report` stopped at (`--until`), in
/// order; every result must have ended there.
pub fn until_lines(report: &Value) -> Vec<String> {
    report["results"]
        .as_array()
        .expect("a report's results")
        .iter()
        .map(|res| {
            assert_eq!(res["ended"], "until", "{res}");
            res["until_line"]
                .as_str()
                .expect("an until line")
                .to_string()
        })
        .collect()
}

/// `wio explore --from SNAP --seeds SEEDS --jobs 2 --report REPORT` plus `extra`.
pub fn explore_to(snap: &Path, seeds: &str, report: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "explore",
        "--from",
        snap.to_str().expect("a UTF-8 path"),
        "--seeds",
        seeds,
        "--jobs",
        "2",
        "--report",
        report.to_str().expect("a UTF-8 path"),
    ];
    args.extend_from_slice(extra);
    wio(&args)
}

/// A signal that asks wio to stop (it handles both the same way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    /// SIGINT: Ctrl-C in a terminal.
    Int,
    /// SIGTERM: what `kill`, systemd or a Kubernetes pod stop sends.
    Term,
}

impl StopSignal {
    /// The name `kill -s` takes.
    pub fn name(self) -> &'static str {
        match self {
            StopSignal::Int => "INT",
            StopSignal::Term => "TERM",
        }
    }
}

/// Sends `signal` to `child` after `after`, then waits for it: its output and how long it
/// took to end after the signal.
pub fn interrupt_after(
    child: std::process::Child,
    signal: StopSignal,
    after: std::time::Duration,
) -> (Output, std::time::Duration) {
    std::thread::sleep(after);
    let sent = std::time::Instant::now();
    let kill = std::process::Command::new("kill")
        .args(["-s", signal.name(), &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(kill.success(), "kill -s {} {}", signal.name(), child.id());
    let out = child.wait_with_output().expect("wait for wio");
    (out, sent.elapsed())
}

/// The world snapshot of `scenario` (written to DIR/NAME.toml), seed 1, taken when a node
/// prints `ready`: DIR/NAME.snap.
pub fn ready_world_snapshot(dir: &Path, name: &str, scenario: &str) -> PathBuf {
    let world = dir.join(format!("{name}.toml"));
    std::fs::write(&world, scenario).expect("write the scenario");
    let snap = dir.join(format!("{name}.snap"));
    let o = wio(&[
        "sim",
        world.to_str().expect("utf-8"),
        "--seed",
        "1",
        "--quiet",
        "--snapshot-at",
        "console:ready",
        "--snapshot-out",
        snap.to_str().expect("utf-8"),
    ]);
    assert!(snap.is_file(), "{}", stderr(&o));
    snap
}

/// An uncompressed cpio (newc) archive of regular files (name, contents, permission bits):
/// appended (gzip'd) to an initramfs, the kernel unpacks it over the first.
pub fn cpio(files: &[(&str, &[u8], u32)]) -> Vec<u8> {
    let mut out = Vec::new();
    let pad = |out: &mut Vec<u8>| {
        while !out.len().is_multiple_of(4) {
            out.push(0);
        }
    };
    let entry = |out: &mut Vec<u8>, ino: u32, name: &str, data: &[u8], mode: u32| {
        let fields = [
            ino,
            mode,
            0,
            0,
            1,
            0,
            data.len() as u32,
            0,
            0,
            0,
            0,
            name.len() as u32 + 1,
            0,
        ];
        out.extend_from_slice(b"070701");
        for f in fields {
            out.extend_from_slice(format!("{f:08x}").as_bytes());
        }
        out.extend_from_slice(name.as_bytes());
        out.push(0);
        pad(out);
        out.extend_from_slice(data);
        pad(out);
    };
    for (i, (name, data, mode)) in files.iter().enumerate() {
        entry(&mut out, i as u32 + 1, name, data, 0o100000 | mode);
    }
    entry(&mut out, 0, "TRAILER!!!", b"", 0);
    out
}

/// Writes to `to` the initramfs `base` with `files` (as [`cpio`] takes them) added: a
/// second, gzip'd archive after it, which the kernel unpacks over the first.
pub fn initrd_adding(base: &Path, files: &[(&str, &[u8], u32)], to: &Path) {
    let mut all = std::fs::read(base).expect("read the base initramfs");
    let mut gz = std::process::Command::new("gzip")
        .args(["-n", "-c"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run gzip");
    // Fed from a thread while this one reads gzip's output (neither pipe can fill up).
    let mut stdin = gz.stdin.take().expect("gzip's stdin");
    let archive = cpio(files);
    let feeder = std::thread::spawn(move || {
        use std::io::Write as _;
        stdin.write_all(&archive).expect("feed gzip");
    });
    let out = gz.wait_with_output().expect("gzip");
    feeder.join().expect("the gzip feeder");
    assert!(out.status.success(), "gzip failed");
    all.extend_from_slice(&out.stdout);
    std::fs::write(to, all).expect("write the initramfs");
}
