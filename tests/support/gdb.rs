//! gdb-multiarch sessions against `wio run --gdb` / `wio sim --gdb` (the gdb and vector
//! e2e tests share them).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use crate::{skip, wio_bin, Capability};

/// Whether gdb-multiarch is here (ci/test.sh installs it); skips `test` if not.
pub fn have_gdb(test: &str) -> bool {
    let ok = Command::new("gdb-multiarch")
        .arg("--version")
        .output()
        .is_ok();
    if !ok {
        skip(
            test,
            Capability::Gdb,
            "gdb-multiarch is not installed (apt-get install gdb-multiarch; ci/test.sh does)",
        );
    }
    ok
}

/// Runs `wio ARGS --gdb ... --summary-json DIR/debugged.json` under gdb-multiarch with
/// `script` (its `ADDR` replaced by where wio waits); returns gdb's output and the
/// debugged run's summary `key` (`trace_hash`, a world's `world_trace_hash`), asserting
/// wio exited 0.
pub fn gdb_session(dir: &Path, args: &[&str], script: &str, key: &str) -> (String, String) {
    let debugged = dir.join("debugged.json");
    let mut child = Command::new(wio_bin())
        .args(args)
        .args(["--quiet"])
        .args(gdb_flag(args))
        .args(["--summary-json", debugged.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start wio");
    // "wio: waiting for gdb on 127.0.0.1:PORT: ..."
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let addr = line
        .strip_prefix("wio: waiting for gdb on ")
        .map(|r| r.split(':').take(2).collect::<Vec<_>>().join(":"))
        .filter(|a| a.contains(':'))
        .unwrap_or_else(|| panic!("wio did not say where it waits: {line:?}"));
    let drain = std::thread::spawn(move || {
        let mut rest = String::new();
        while err.read_line(&mut rest).unwrap_or(0) > 0 {}
        rest
    });
    let gdb_file = dir.join("session.gdb");
    std::fs::write(&gdb_file, script.replace("ADDR", &addr)).unwrap();
    let g = Command::new("gdb-multiarch")
        .args(["-nx", "-batch", "-x", gdb_file.to_str().unwrap()])
        .output()
        .expect("run gdb-multiarch");
    let out = String::from_utf8_lossy(&g.stdout).to_string() + &String::from_utf8_lossy(&g.stderr);
    let status = child.wait().unwrap();
    let wio_err = drain.join().unwrap();
    assert!(status.success(), "wio: {status}\n{wio_err}\ngdb:\n{out}");
    (out, hash_keyed(&debugged, key))
}

/// `--gdb 127.0.0.1:0` for `wio run`, `--gdb b=127.0.0.1:0` for `wio sim` (node b).
fn gdb_flag(args: &[&str]) -> [&'static str; 2] {
    if args.first() == Some(&"sim") {
        ["--gdb", "b=127.0.0.1:0"]
    } else {
        ["--gdb", "127.0.0.1:0"]
    }
}

/// The summary file's `key`.
pub fn hash_keyed(p: &Path, key: &str) -> String {
    let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    s[key].as_str().unwrap().to_string()
}
