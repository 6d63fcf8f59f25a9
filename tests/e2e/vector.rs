//! End-to-end tests of the vector extension (`--isa rv64gcv`): Debian's unmodified kernel
//! finds `v` in the device tree and runs a user program built with `-march=rv64gcv`
//! (`images/probe/wio-vector.c`: strip-mined integer and FP loops, compares, segment loads,
//! gathers), which prints what QEMU's user-mode emulator prints at the same VLEN; two runs
//! of a seed are identical; a snapshot taken in the middle of the program restores to the
//! same end; without `v` the program dies of SIGILL.
//!
//! They need the riscv64 guests (images/build-all-riscv64.sh), the cross compiler and
//! qemu-user, and skip loudly otherwise.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use wio_e2e_tests::{
    initrd_adding, require_riscv_guests, riscv_guest_artifact, run_with_summary, scratch, skip,
    stderr, stdout, wio, Capability,
};

/// The program, built for rv64gcv as the probe programs are (freestanding, no gp).
fn build_program(dir: &Path, test: &str) -> Option<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../images/probe/wio-vector.c");
    let out = dir.join("wio-vector");
    let built = Command::new("riscv64-linux-gnu-gcc")
        .args([
            "-march=rv64gcv",
            "-mabi=lp64d",
            "-Os",
            "-static",
            "-nostdlib",
            "-ffreestanding",
            "-fno-stack-protector",
            "-fno-pie",
            "-no-pie",
            "-mno-relax",
            "-Wl,--no-relax",
            "-fno-tree-loop-distribute-patterns",
        ])
        .arg(format!("-I{}", src.parent().unwrap().display()))
        .arg("-o")
        .arg(&out)
        .arg(&src)
        .output();
    match built {
        Ok(o) if o.status.success() => Some(out),
        Ok(o) => panic!(
            "building wio-vector.c failed: {}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(_) => {
            skip(
                test,
                Capability::CrossGcc,
                "riscv64-linux-gnu-gcc is not on PATH (apt-get install gcc-riscv64-linux-gnu)",
            );
            None
        }
    }
}

/// Debian's initramfs with the program as /bin/wio-probe (which its workload runs).
fn initrd_with(dir: &Path, program: &Path) -> PathBuf {
    let base = riscv_guest_artifact("RISCV64_DEBIAN_INITRAMFS").unwrap();
    let bytes = std::fs::read(program).unwrap();
    let path = dir.join("initrd.cpio.gz");
    initrd_adding(&base, &[("bin/wio-probe", &bytes, 0o755)], &path);
    path
}

/// The program's "vector: ..." lines.
fn vector_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with("vector: "))
        .map(str::to_string)
        .collect()
}

#[test]
fn debian_runs_a_vector_program_as_qemu_does_and_a_snapshot_in_it_restores() {
    let test = "debian_runs_a_vector_program_as_qemu_does_and_a_snapshot_in_it_restores";
    if !require_riscv_guests(test) {
        return;
    }
    let dir = scratch("vector");
    let Some(program) = build_program(&dir, test) else {
        return;
    };
    let qemu = match Command::new("qemu-riscv64")
        .args(["-cpu", "rv64,v=true,vlen=512,elen=64,vext_spec=v1.0"])
        .arg(&program)
        .output()
    {
        Ok(o) => o,
        Err(_) => {
            skip(
                test,
                Capability::QemuUser,
                "qemu-riscv64 is not on PATH (apt-get install qemu-user)",
            );
            return;
        }
    };
    let expected = vector_lines(&String::from_utf8_lossy(&qemu.stdout));
    assert_eq!(expected.len(), 7, "QEMU's run: {expected:?}");
    assert_eq!(expected[0], "vector: vlenb=0000000000000040");

    let initrd = initrd_with(&dir, &program);
    let kernel = riscv_guest_artifact("RISCV64_DEBIAN_IMAGE").unwrap();
    let (k, i) = (kernel.to_str().unwrap(), initrd.to_str().unwrap());
    let args = |isa: &'static str| {
        vec![
            "--arch", "riscv64", "--kernel", k, "--initrd", i, "--isa", isa, "--seed", "3",
        ]
    };
    let (first_out, first) = run_with_summary(&args("rv64gcv"));
    assert_eq!(first["exit_status"], 0, "{}", stderr(&first_out));
    assert_eq!(
        vector_lines(&stdout(&first_out)),
        expected,
        "wio and QEMU differ"
    );
    assert!(
        stdout(&first_out).contains("riscv: ELF capabilities acdfimv"),
        "{}",
        stdout(&first_out)
    );
    assert_eq!(first["isa"], "rv64gcv_zvl512b");
    let (_, again) = run_with_summary(&args("rv64gcv"));
    assert_eq!(
        first["trace_hash"], again["trace_hash"],
        "two runs of seed 3"
    );

    // A snapshot right after the program's first vector line (its vector state live), and a
    // restore of it: the same run.
    let snap = dir.join("mid.snap");
    let mut with_snap = args("rv64gcv");
    with_snap.extend([
        "--quiet",
        "--snapshot-at",
        "console:vector: int_sum",
        "--snapshot-out",
        snap.to_str().unwrap(),
    ]);
    let o = wio(&[&["run"][..], &with_snap].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let info = wio(&["snapshot", "info", snap.to_str().unwrap()]);
    assert!(stdout(&info).contains("vector"), "{}", stdout(&info));
    let (restored_out, restored) = run_with_summary(&["--from", snap.to_str().unwrap()]);
    assert_eq!(
        restored["trace_hash"],
        first["trace_hash"],
        "{}",
        stderr(&restored_out)
    );

    // gdb sees the vector registers there (VLEN, and v24 read as words: what it holds
    // depends on what the kernel did since the program's last vector instruction) and
    // writes them (a word of v24 changed, read back, and put back); the debugged replay
    // is the run.
    if wio_e2e_tests::gdb::have_gdb(test) {
        let script = "set architecture riscv:rv64
target remote ADDR
printf \"VEC vlenb=%lx bits=%lx acc=%lx\\n\", $vlenb, sizeof($v31) * 8, $v24.w[0]
set $keep = $v24.w[1]
set $v24.w[1] = 0x5eed1234
printf \"SET %lx\\n\", $v24.w[1]
set $v24.w[1] = $keep
detach
";
        let (out, debugged) = wio_e2e_tests::gdb::gdb_session(
            &dir,
            &["run", "--from", snap.to_str().unwrap()],
            script,
            "trace_hash",
        );
        let line = out
            .lines()
            .find(|l| l.starts_with("VEC"))
            .unwrap_or_default();
        assert!(
            line.starts_with("VEC vlenb=40 bits=200 acc="),
            "gdb:\n{out}"
        );
        assert!(out.lines().any(|l| l == "SET 5eed1234"), "gdb:\n{out}");
        assert_eq!(serde_json::Value::from(debugged), first["trace_hash"]);
    }

    // VLEN 128: QEMU's results at 128 bits; and without v the program is killed.
    let (small_out, _) = run_with_summary(&args("rv64gcv_zvl128b"));
    let qemu128 = Command::new("qemu-riscv64")
        .args(["-cpu", "rv64,v=true,vlen=128,elen=64,vext_spec=v1.0"])
        .arg(&program)
        .output()
        .unwrap();
    assert_eq!(
        vector_lines(&stdout(&small_out)),
        vector_lines(&String::from_utf8_lossy(&qemu128.stdout))
    );
    // Radiation aimed at the vector registers (upset choice "v"): traced, and the same per
    // seed.
    let profile = dir.join("v.toml");
    std::fs::write(
        &profile,
        "start_ms = 500\nend_ms = 4000\n[[rule]]\nkind = \"upset\"\nchoices = [\"v\"]\n\
         count = [20, 20]\nvalue = [0, 131071]\n",
    )
    .unwrap();
    let mut hit = args("rv64gcv");
    hit.extend(["--faults", profile.to_str().unwrap()]);
    let (hit_out, hit1) = run_with_summary(&hit);
    let (_, hit2) = run_with_summary(&hit);
    assert_eq!(
        hit1["trace_hash"],
        hit2["trace_hash"],
        "{}",
        stderr(&hit_out)
    );
    assert_eq!(hit1["faults"].as_array().map(Vec::len), Some(20), "{hit1}");
    let (plain_out, _) = run_with_summary(&args("rv64gc"));
    assert!(
        vector_lines(&stdout(&plain_out)).is_empty(),
        "{}",
        stdout(&plain_out)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
