//! End-to-end tests of wio's command line and bad-input handling that need no KVM:
//! every failure is one line naming the problem, with a documented exit code.

#![forbid(unsafe_code)]

use wio_e2e_tests::{scratch, stderr, wio, wio_env};

fn assert_one_line_error(o: &std::process::Output, code: i32, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "stderr: {err}");
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("wio: error:"))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains(needle), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn help_lists_examples_and_exit_codes() {
    let out = wio(&["run", "--help"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Examples:"));
    assert!(text.contains("--seed"));
    let out = wio(&["--help"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Exit codes:"));
    // Every code of the README's table, the interrupted one too, and the environment.
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("the README");
    let codes: Vec<&str> = readme
        .lines()
        .filter_map(|l| l.strip_prefix("| ")?.split(' ').next())
        .filter(|c| c.len() == 3 && c.bytes().all(|b| b.is_ascii_digit()))
        .collect();
    assert!(codes.len() >= 12, "{codes:?}");
    for code in codes {
        assert!(
            text.contains(&format!("  {code}  ")),
            "--help names exit code {code}"
        );
    }
    for var in [
        "WIO_CACHE",
        "WIO_NO_JIT",
        "WIO_WARM_CACHES",
        "WIO_COLD_BRANCHES",
        "WIO_KVM_DEVICE",
        "WIO_DEBUG_EXITS",
    ] {
        assert!(text.contains(var), "--help names {var}");
    }
    // Shell completions know the subcommands.
    let out = wio(&["completions", "bash"]);
    assert!(out.status.success());
    let script = String::from_utf8_lossy(&out.stdout);
    assert!(
        script.contains("explore") && script.contains("--budget"),
        "{script}"
    );
    let out = wio(&["completions", "nosh"]);
    assert_eq!(out.status.code(), Some(100), "{}", stderr(&out));
    assert!(stderr(&out).contains("possible values"), "{}", stderr(&out));
}

#[test]
fn bad_flags_are_usage_errors() {
    let out = wio(&["run", "--bogus"]);
    assert_eq!(out.status.code(), Some(100));
    let out = wio(&["run", "--seed", "minus-one"]);
    assert_eq!(out.status.code(), Some(100));
    let out = wio(&["run", "--epoch", "yesterday"]);
    assert_one_line_error(&out, 100, "RFC 3339");
    let out = wio(&["run", "--mem", "1"]);
    assert_one_line_error(&out, 100, "--mem");
    // Learning another branch's code needs the snapshot both branches start from.
    let out = wio(&["run", "--learn-from", "3"]);
    assert_eq!(out.status.code(), Some(100));
    assert!(stderr(&out).contains("--from"), "{}", stderr(&out));
}

#[test]
fn missing_kernel_is_named() {
    let out = wio(&["run", "--kernel", "/nonexistent/bzImage"]);
    assert_one_line_error(&out, 101, "/nonexistent/bzImage");
}

#[test]
fn kernel_of_the_wrong_format_is_rejected() {
    let dir = scratch("formats");
    let junk = dir.join("junk.bin");
    std::fs::write(&junk, vec![0x5a; 8192]).unwrap();
    let out = wio(&["run", "--kernel", junk.to_str().unwrap()]);
    assert_one_line_error(&out, 101, "not an x86-64 ELF or bzImage");

    let mut riscv = vec![0u8; 4096];
    riscv[..4].copy_from_slice(b"\x7fELF");
    riscv[4] = 2;
    riscv[5] = 1;
    riscv[18] = 243; // EM_RISCV
    let rv = dir.join("riscv.elf");
    std::fs::write(&rv, riscv).unwrap();
    let out = wio(&["run", "--kernel", rv.to_str().unwrap()]);
    assert_one_line_error(&out, 101, "RISC-V");

    let unreadable = dir.join("a-directory");
    std::fs::create_dir_all(&unreadable).unwrap();
    let out = wio(&["run", "--kernel", unreadable.to_str().unwrap()]);
    assert_one_line_error(&out, 101, "a-directory");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn kernel_too_large_for_memory_says_raise_mem() {
    let dir = scratch("big");
    let big = dir.join("big.elf");
    let mut bytes = vec![0u8; 20 << 20];
    bytes[..4].copy_from_slice(b"\x7fELF");
    bytes[4] = 2;
    bytes[5] = 1;
    bytes[18] = 62; // EM_X86_64
    std::fs::write(&big, bytes).unwrap();
    let out = wio(&["run", "--kernel", big.to_str().unwrap(), "--mem", "16"]);
    assert_one_line_error(&out, 101, "raise --mem");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn missing_initrd_is_named() {
    let out = wio(&["run", "--initrd", "/nonexistent/initrd.cpio"]);
    assert_one_line_error(&out, 101, "/nonexistent/initrd.cpio");
}

#[test]
fn host_without_kvm_gets_a_clear_error() {
    let out = wio_env(
        &["run", "--seed", "1"],
        "WIO_KVM_DEVICE",
        "/nonexistent/kvm",
    );
    assert_one_line_error(&out, 102, "does not exist");
}

#[test]
fn unwritable_summary_is_an_output_error() {
    let out = wio_env(
        &[
            "run",
            "--seed",
            "1",
            "--quiet",
            "--trace",
            "/nonexistent/dir/trace.jsonl",
        ],
        "WIO_KVM_DEVICE",
        "/dev/kvm",
    );
    // Either KVM is missing (102) or the trace cannot be created (105); never a panic.
    let err = stderr(&out);
    assert!(matches!(out.status.code(), Some(102) | Some(105)), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn verify_trace_rejects_garbage() {
    let dir = scratch("verify");
    let f = dir.join("t.jsonl");
    std::fs::write(&f, "not json\n").unwrap();
    let out = wio(&["verify-trace", f.to_str().unwrap()]);
    assert_one_line_error(&out, 109, "not JSON");
    let out = wio(&["verify-trace", "/nonexistent/trace.jsonl"]);
    assert_one_line_error(&out, 101, "/nonexistent/trace.jsonl");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_explicit_initrd_wins_over_the_built_guests() {
    // With --guest small, --initrd is the one booted (here: refused, it does not exist),
    // never silently replaced by the built guest's initramfs.
    let out = wio(&[
        "run",
        "--arch",
        "riscv64",
        "--guest",
        "small",
        "--initrd",
        "/nonexistent/other-initrd.cpio",
    ]);
    let err = stderr(&out);
    if err.contains("images/build-all-riscv64.sh") {
        wio_e2e_tests::skip(
            "an_explicit_initrd_wins_over_the_built_guests",
            wio_e2e_tests::Capability::RiscvGuests,
            "wio finds no built small riscv64 guest (run images/build-all-riscv64.sh)",
        );
        return;
    }
    assert_one_line_error(&out, 101, "/nonexistent/other-initrd.cpio");
}

/// Seed ranges, shards, `--until`, `--epoch` and `--snapshot-at` are parsed by the command
/// line itself, before any file is read: a bad one is a one-line usage error naming the
/// flag and what it expects.
#[test]
fn bad_seed_ranges_shards_and_until_are_refused_by_the_parser() {
    for (args, needle) in [
        (
            &["explore", "--from", "/nonexistent.snap", "--seeds", "5..3"][..],
            "is empty",
        ),
        (
            &["explore", "--from", "/nonexistent.snap", "--seeds", "a..b"][..],
            "expected A..B",
        ),
        (
            &[
                "explore",
                "--from",
                "/nonexistent.snap",
                "--seeds",
                "0..9",
                "--shard",
                "3/2",
            ][..],
            "expected i/N",
        ),
        (
            &["run", "--arch", "riscv64", "--until", "ready"][..],
            "expected console:TEXT",
        ),
        (
            &["sim", "/nonexistent.toml", "--until", "console:"][..],
            "expected console:TEXT",
        ),
        (
            &[
                "run",
                "--arch",
                "riscv64",
                "--epoch",
                "1969-07-20T20:17:00Z",
            ][..],
            "from 1970 on",
        ),
        (
            &["run", "--arch", "riscv64", "--snapshot-at", "soon"][..],
            "expected a virtual time",
        ),
        (
            &["sim", "/nonexistent.toml", "--snapshot-at", "console:"][..],
            "needs text",
        ),
        (
            &["sim", "/nonexistent.toml", "--gdb", "127.0.0.1:1234"][..],
            "expected NAME=ADDR",
        ),
    ] {
        let out = wio(args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(100), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(
            !err.contains("nonexistent"),
            "refused before reading files: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(err.starts_with("wio: error: "), "{err}");
    }
}
