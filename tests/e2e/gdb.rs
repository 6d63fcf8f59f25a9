//! `wio run --gdb`: Debian's gdb-multiarch drives a riscv64 run in batch mode: a
//! breakpoint on a kernel symbol of Debian's unmodified kernel (its System.map, from the
//! -dbg package: images/riscv64-debian-symbols.sh), steps,
//! reverse-stepi back to the previous pc and registers, a write watchpoint on a kernel
//! variable (jiffies) that fires, reverse-continue back to the previous hit, `monitor`
//! commands; and the debugged run ends with the trace hash of the run without gdb.

use std::path::Path;
use std::process::Command;
use wio_e2e_tests::{
    require_riscv_artifact, require_riscv_guests, riscv_guest_artifact, scratch, skip, wio,
    Capability,
};

/// The address of `sym` (of type `kind`) in the System.map at `map`.
fn symbol(map: Option<&Path>, kind: &str, sym: &str) -> Option<u64> {
    let map = std::fs::read_to_string(map?).ok()?;
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

/// Runs `wio run ARGS --gdb 127.0.0.1:0 --summary-json DIR/debugged.json` under
/// gdb-multiarch with `script` (its `ADDR` replaced by where wio waits); returns gdb's
/// output and the debugged run's trace hash (asserting wio exited 0).
fn session(dir: &Path, args: &[&str], script: &str) -> (String, String) {
    session_keyed(dir, args, script, "trace_hash")
}

/// The trace hash of a summary file.
fn hash(p: &Path) -> String {
    hash_keyed(p, "trace_hash")
}

use wio_e2e_tests::gdb::{gdb_session as session_keyed, hash_keyed, have_gdb};

/// The trace hash of `wio run ARGS` without gdb.
fn plain_hash(dir: &Path, args: &[&str]) -> String {
    let plain = dir.join("plain.json");
    let mut all = args.to_vec();
    all.extend(["--quiet", "--summary-json", plain.to_str().unwrap()]);
    let out = wio(&all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    hash(&plain)
}

#[test]
fn gdb_breaks_steps_watches_and_runs_backwards_without_changing_the_run() {
    if !require_riscv_guests("gdb_breaks_steps_watches_and_runs_backwards_without_changing_the_run")
    {
        return;
    }
    let test = "gdb_breaks_steps_watches_and_runs_backwards_without_changing_the_run";
    if !have_gdb(test) {
        return;
    }
    let Some(map) = require_riscv_artifact(
        test,
        "RISCV64_DEBIAN_SYSTEM_MAP",
        Capability::RiscvDebianSymbols,
    ) else {
        return;
    };
    let (Some(start_kernel), Some(jiffies)) = (
        symbol(Some(&map), "T", "start_kernel"),
        symbol(Some(&map), "D", "jiffies"),
    ) else {
        panic!("{} has no start_kernel or jiffies", map.display());
    };
    let dir = scratch("gdb");
    let args = [
        "run", "--arch", "riscv64", "--guest", "debian", "--seed", "5",
    ];
    let plain = plain_hash(&dir, &args);
    let j = format!("*(unsigned long *){jiffies:#x}");
    let script = format!(
        "set architecture riscv:rv64
target remote ADDR
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
    let (out, debugged) = session(&dir, &args, &script);
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
    assert_eq!(debugged, plain);
    let _ = std::fs::remove_dir_all(dir);
}

/// A write watchpoint on a user program's variable: wio-race (images/probe/wio-race.c,
/// run by the small guest's workload with wio.race=1) compiled again here with debug
/// information (same compiler and flags: the same code at the same addresses), gdb
/// stops in its loop by source line, watches its shared counter, sees two stores, and
/// reverse-continue goes back to the first; the run is the run without gdb.
#[test]
fn gdb_watches_a_user_program_variable_and_goes_back() {
    if !require_riscv_guests("gdb_watches_a_user_program_variable_and_goes_back") {
        return;
    }
    let test = "gdb_watches_a_user_program_variable_and_goes_back";
    if !have_gdb(test) {
        return;
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../images/probe/wio-race.c");
    let dir = scratch("gdb-user");
    let elf = dir.join("wio-race.debug");
    // The flags of images/riscv64-initramfs.sh (PROBE_CFLAGS) with -g instead of -s.
    let cc = Command::new("riscv64-linux-gnu-gcc")
        .args([
            "-Os",
            "-static",
            "-nostdlib",
            "-ffreestanding",
            "-fno-stack-protector",
        ])
        .args([
            "-fno-pie",
            "-no-pie",
            "-mno-relax",
            "-Wl,--no-relax",
            "-g",
            "-o",
        ])
        .arg(&elf)
        .arg(&src)
        .output();
    match cc {
        Ok(o) if o.status.success() => {}
        Ok(o) => panic!(
            "riscv64-linux-gnu-gcc is here but cannot build wio-race: {}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => {
            skip(
                test,
                Capability::CrossGcc,
                &format!("riscv64-linux-gnu-gcc cannot run ({e}) (apt-get install gcc-riscv64-linux-gnu; ci/test.sh does)"),
            );
            return;
        }
    }
    let text = std::fs::read_to_string(&src).unwrap();
    let line = 1 + text
        .lines()
        .position(|l| l.contains("*counter = v + 1;"))
        .expect("the store line of wio-race.c");
    let cmdline = "console=ttyS0 earlycon=sbi kfence.sample_interval=0 panic=-1 random.trust_cpu=off wio.race=1";
    let args = [
        "run",
        "--arch",
        "riscv64",
        "--seed",
        "5",
        "--cmdline",
        cmdline,
    ];
    let plain = plain_hash(&dir, &args);
    // The breakpoint's condition tells wio-race from other programs at the same address;
    // the counter's pointer lives in s0 in the loop (the compiled code keeps it there).
    let script = format!(
        "file {elf}
set $sig = *(unsigned int *)race_main
target remote ADDR
break wio-race.c:{line} if *(unsigned int *)race_main == $sig
continue
continue
printf \"IN_RACE pc=%lx\\n\", $pc
set $c = (unsigned long *)$s0
delete
watch *(unsigned long *)$c
continue
printf \"UWATCH1 v=%lx\\n\", *(unsigned long *)$c
continue
printf \"UWATCH2 v=%lx\\n\", *(unsigned long *)$c
reverse-continue
printf \"UREVERSE v=%lx\\n\", *(unsigned long *)$c
delete
detach
",
        elf = elf.display()
    );
    let (out, debugged) = session(&dir, &args, &script);
    assert!(out.contains(&format!("wio-race.c:{line}")), "{out}");
    let v = |tag: &str| u64::from_str_radix(&value(&out, tag, "v"), 16).unwrap();
    let (w1, w2, back) = (v("UWATCH1"), v("UWATCH2"), v("UREVERSE"));
    assert!(out.contains("Hardware watchpoint 2"), "{out}");
    assert_eq!(w2, w1 + 1, "two stores of the loop: {out}");
    assert_eq!(back + 1, w1, "back before the store that made {w1}: {out}");
    assert_eq!(debugged, plain);
    let _ = std::fs::remove_dir_all(dir);
}

/// `wio sim --gdb b=ADDR`: gdb stops node b of a two-node world at a kernel breakpoint,
/// steps it, watches jiffies, is told reverse execution needs the whole world, detaches;
/// the world's trace hash is that of the world without gdb.
#[test]
fn gdb_debugs_one_node_of_a_world_and_the_world_stays_the_same() {
    if !require_riscv_guests("gdb_debugs_one_node_of_a_world_and_the_world_stays_the_same") {
        return;
    }
    let test = "gdb_debugs_one_node_of_a_world_and_the_world_stays_the_same";
    if !have_gdb(test) {
        return;
    }
    let map = riscv_guest_artifact("RISCV64_SMALL_IMAGE").map(|i| i.with_file_name("System.map"));
    let (Some(start_kernel), Some(jiffies)) = (
        symbol(map.as_deref(), "T", "start_kernel"),
        symbol(map.as_deref(), "D", "jiffies"),
    ) else {
        skip(
            test,
            Capability::RiscvGuests,
            "no System.map with start_kernel and jiffies next to the small kernel (run images/build-all-riscv64.sh)",
        );
        return;
    };
    let dir = scratch("gdb-world");
    let scenario = wio_e2e_tests::write_file(
        &dir,
        "world.toml",
        "max_virtual_secs = 30\n[[node]]\nname = \"a\"\nrun = \"nc -l -p 5000 | wc -c\"\n[[node]]\nname = \"b\"\nrun = \"sleep 1; echo hello | nc a 5000\"\n",
    );
    let plain = dir.join("plain.json");
    let out = wio(&[
        "sim",
        &scenario,
        "--seed",
        "1",
        "--quiet",
        "--summary-json",
        plain.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j = format!("*(unsigned long *){jiffies:#x}");
    let script = format!(
        "set architecture riscv:rv64
target remote ADDR
break *{start_kernel:#x}
continue
printf \"AT_BREAK pc=%lx\\n\", $pc
stepi
printf \"STEP pc=%lx\\n\", $pc
delete
watch {j}
continue
printf \"W1 j=%lx\\n\", {j}
continue
printf \"W2 j=%lx\\n\", {j}
reverse-stepi
delete
detach
"
    );
    let args = ["sim", scenario.as_str(), "--seed", "1"];
    let (out, debugged) = session_keyed(&dir, &args, &script, "world_trace_hash");
    assert_eq!(
        value(&out, "AT_BREAK", "pc"),
        format!("{start_kernel:x}"),
        "{out}"
    );
    assert_ne!(
        value(&out, "STEP", "pc"),
        value(&out, "AT_BREAK", "pc"),
        "{out}"
    );
    let w1 = u64::from_str_radix(&value(&out, "W1", "j"), 16).unwrap();
    let w2 = u64::from_str_radix(&value(&out, "W2", "j"), 16).unwrap();
    assert_eq!(w2, w1 + 1, "{out}");
    assert!(out.contains("No more reverse-execution history"), "{out}");
    assert_eq!(debugged, hash_keyed(&plain, "world_trace_hash"));
    let _ = std::fs::remove_dir_all(dir);
}

/// x86-64 on KVM (`wio run --gdb` on the built-in test guest), as far as KVM allows:
/// gdb single-steps it three instructions (into a call: the return address is on the
/// stack), reads registers and memory; a second run stops at a breakpoint on the third
/// step's address with the same registers (the debug registers: no memory patched);
/// both runs keep the trace hash of the run without gdb.
#[test]
fn gdb_steps_and_breaks_the_x86_64_test_guest() {
    if !wio_e2e_tests::require_kvm("gdb_steps_and_breaks_the_x86_64_test_guest") {
        return;
    }
    if !have_gdb("gdb_steps_and_breaks_the_x86_64_test_guest") {
        return;
    }
    let dir = scratch("gdb-x86");
    let args = ["run", "--seed", "42"];
    let plain = plain_hash(&dir, &args);
    let show = "printf \"AT rip=%lx rsp=%lx rax=%lx rdi=%lx\\n\", $rip, $rsp, $rax, $rdi";
    let script = format!(
        "set architecture i386:x86-64
target remote ADDR
printf \"START rip=%lx\\n\", $rip
stepi
stepi
stepi
{show}
printf \"RET ret=%lx\\n\", *(unsigned long *)$rsp
detach
"
    );
    let (out, stepped) = session(&dir, &args, &script);
    let start = u64::from_str_radix(&value(&out, "START", "rip"), 16).unwrap();
    let at = value(&out, "AT", "rip");
    let ret = u64::from_str_radix(&value(&out, "RET", "ret"), 16).unwrap();
    assert!(
        ret > start && ret < start + 64,
        "a call near the entry returns after it: {out}"
    );
    assert_eq!(stepped, plain, "stepping changed the run");
    let script = format!(
        "set architecture i386:x86-64
target remote ADDR
break *0x{at}
continue
{show}
delete
continue
"
    );
    let (again, broken) = session(&dir, &args, &script);
    let line = |o: &str| o.lines().find(|l| l.starts_with("AT ")).map(str::to_string);
    assert_eq!(
        line(&again),
        line(&out),
        "the breakpoint stops where the steps did:\n{again}"
    );
    assert_eq!(broken, plain, "the breakpoint changed the run");
    let _ = std::fs::remove_dir_all(dir);
}

/// `wio run --from SNAP --gdb`: a replay of a snapshot under gdb: stepped, stepped back,
/// moved to a virtual time by `monitor seek`, and still the replay without gdb.
#[test]
fn gdb_debugs_a_replay_from_a_snapshot() {
    if !require_riscv_guests("gdb_debugs_a_replay_from_a_snapshot")
        || !have_gdb("gdb_debugs_a_replay_from_a_snapshot")
    {
        return;
    }
    let dir = scratch("gdb-from");
    let snap = dir.join("start.snap");
    wio_e2e_tests::riscv_snapshot(&snap, 3, "1s");
    let args = ["run", "--from", snap.to_str().unwrap()];
    let plain = plain_hash(&dir, &args);
    let script = "set architecture riscv:rv64
target remote ADDR
monitor where
stepi
stepi
printf \"S2 pc=%lx sp=%lx a0=%lx\\n\", $pc, $sp, $a0
stepi
reverse-stepi
printf \"B2 pc=%lx sp=%lx a0=%lx\\n\", $pc, $sp, $a0
monitor seek 1.5s
monitor where
detach
";
    let (out, debugged) = session(&dir, &args, script);
    let s2 = out
        .lines()
        .find(|l| l.starts_with("S2"))
        .map(|l| l.replace("S2", ""));
    let b2 = out
        .lines()
        .find(|l| l.starts_with("B2"))
        .map(|l| l.replace("B2", ""));
    assert!(
        s2.is_some() && s2 == b2,
        "reverse-stepi back to the second step:\n{out}"
    );
    let seeked = out
        .lines()
        .filter_map(|l| l.strip_prefix("virtual time "))
        .filter_map(|l| l.split(' ').next()?.parse::<u64>().ok())
        .collect::<Vec<_>>();
    // where, the seek's own where, where again.
    assert_eq!(seeked.len(), 3, "{out}");
    assert_eq!(seeked[1], seeked[2], "{out}");
    assert!(
        seeked[0] < 1_500_000_000 && seeked[1] >= 1_500_000_000,
        "{out}"
    );
    assert_eq!(debugged, plain);
    let _ = std::fs::remove_dir_all(dir);
}
