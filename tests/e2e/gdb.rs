//! `wio run --gdb`: Debian's gdb-multiarch drives a riscv64 run in batch mode: a
//! breakpoint on a kernel symbol (from the small kernel's System.map), steps,
//! reverse-stepi back to the previous pc and registers, a write watchpoint on a kernel
//! variable (jiffies) that fires, reverse-continue back to the previous hit, `monitor`
//! commands; and the debugged run ends with the trace hash of the run without gdb.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use wio_e2e_tests::{require_riscv_guests, riscv_guest_artifact, scratch, wio, wio_bin};

/// The address of `sym` (of type `kind`) in the small kernel's System.map.
fn symbol(kind: &str, sym: &str) -> Option<u64> {
    let image = riscv_guest_artifact("RISCV64_SMALL_IMAGE")?;
    let map = std::fs::read_to_string(image.with_file_name("System.map")).ok()?;
    map.lines()
        .find_map(|l| l.strip_suffix(&format!(" {kind} {sym}")))
        .and_then(|a| u64::from_str_radix(a, 16).ok())
}

/// The hex value after `key=` on the line starting with `tag`.
fn value(out: &str, tag: &str, key: &str) -> String {
    let line = out
        .lines()
        .find(|l| l.starts_with(tag))
        .unwrap_or_else(|| panic!("no {tag} line in gdb's output:\n{out}"));
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key}= on {line}"))
        .to_string()
}

#[test]
fn gdb_breaks_steps_watches_and_runs_backwards_without_changing_the_run() {
    if !require_riscv_guests("gdb_breaks_steps_watches_and_runs_backwards_without_changing_the_run")
    {
        return;
    }
    if Command::new("gdb-multiarch")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("SKIPPED: gdb test: gdb-multiarch is not installed (ci/test.sh installs it)");
        return;
    }
    let (Some(start_kernel), Some(jiffies)) = (symbol("T", "start_kernel"), symbol("D", "jiffies"))
    else {
        eprintln!("SKIPPED: gdb test: no System.map with start_kernel and jiffies next to the small kernel");
        return;
    };
    let dir = scratch("gdb");
    let plain = dir.join("plain.json");
    let out = wio(&[
        "run",
        "--arch",
        "riscv64",
        "--seed",
        "5",
        "--quiet",
        "--summary-json",
        plain.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let debugged = dir.join("debugged.json");
    let mut child = Command::new(wio_bin())
        .args([
            "run",
            "--arch",
            "riscv64",
            "--seed",
            "5",
            "--quiet",
            "--gdb",
            "127.0.0.1:0",
        ])
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
        .and_then(|r| r.split(':').take(2).collect::<Vec<_>>().join(":").into())
        .filter(|a: &String| a.contains(':'))
        .unwrap_or_else(|| panic!("wio did not say where it waits: {line:?}"));
    let drain = std::thread::spawn(move || {
        let mut rest = String::new();
        while err.read_line(&mut rest).unwrap_or(0) > 0 {}
        rest
    });
    let j = format!("*(unsigned long *){jiffies:#x}");
    let script = format!(
        "set architecture riscv:rv64
target remote {addr}
break *{start_kernel:#x}
continue
printf \"AT_BREAK pc=%lx\\n\", $pc
stepi
printf \"STEP1 pc=%lx ra=%lx sp=%lx a0=%lx a1=%lx\\n\", $pc, $ra, $sp, $a0, $a1
stepi
printf \"STEP2 pc=%lx\\n\", $pc
reverse-stepi
printf \"BACK pc=%lx ra=%lx sp=%lx a0=%lx a1=%lx\\n\", $pc, $ra, $sp, $a0, $a1
delete
watch {j}
continue
printf \"WATCH1 j=%lx pc=%lx\\n\", {j}, $pc
continue
printf \"WATCH2 j=%lx pc=%lx\\n\", {j}, $pc
reverse-continue
printf \"REVERSE j=%lx pc=%lx\\n\", {j}, $pc
monitor where
delete
detach
"
    );
    let gdb_file = dir.join("session.gdb");
    std::fs::write(&gdb_file, script).unwrap();
    let g = Command::new("gdb-multiarch")
        .args(["-nx", "-batch", "-x", gdb_file.to_str().unwrap()])
        .output()
        .expect("run gdb-multiarch");
    let out = String::from_utf8_lossy(&g.stdout).to_string() + &String::from_utf8_lossy(&g.stderr);
    let status = child.wait().unwrap();
    let wio_err = drain.join().unwrap();
    assert!(status.success(), "wio: {status}\n{wio_err}\ngdb:\n{out}");
    // The breakpoint on the kernel symbol.
    assert_eq!(
        value(&out, "AT_BREAK", "pc"),
        format!("{start_kernel:x}"),
        "{out}"
    );
    // reverse-stepi: the previous pc and registers, exactly.
    let step1 = out
        .lines()
        .find(|l| l.starts_with("STEP1"))
        .unwrap()
        .replace("STEP1", "");
    let back = out
        .lines()
        .find(|l| l.starts_with("BACK"))
        .unwrap()
        .replace("BACK", "");
    assert_eq!(step1, back, "{out}");
    assert_ne!(value(&out, "STEP2", "pc"), value(&out, "STEP1", "pc"));
    // The watchpoint fires on each change of jiffies (gdb stops with the write done), and
    // reverse-continue returns to the previous hit.
    assert!(out.contains("Hardware watchpoint 2"), "{out}");
    let w1 = u64::from_str_radix(&value(&out, "WATCH1", "j"), 16).unwrap();
    let w2 = u64::from_str_radix(&value(&out, "WATCH2", "j"), 16).unwrap();
    let back_j = u64::from_str_radix(&value(&out, "REVERSE", "j"), 16).unwrap();
    assert_eq!(w2, w1 + 1, "{out}");
    // Back at the previous hit: just before the instruction that wrote the first value.
    assert_eq!(
        back_j + 1,
        w1,
        "back before the write that made {w1:x}: {out}"
    );
    assert!(
        out.contains("instructions retired, position"),
        "monitor where: {out}"
    );
    // gdb attached, stepping, watching and going back changed nothing of the run.
    let hash = |p: &std::path::Path| {
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        s["trace_hash"].as_str().unwrap().to_string()
    };
    assert_eq!(hash(&debugged), hash(&plain));
    let _ = std::fs::remove_dir_all(dir);
}
