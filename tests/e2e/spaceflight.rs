//! End-to-end tests of wio's spaceflight targets on riscv64: M-mode guests (Debian's
//! unmodified OpenSBI under Debian's kernel, bare-metal ELF programs) and radiation
//! faults. They need the artifacts of images/build-all-riscv64.sh (ci/test.sh builds
//! them) and skip loudly (SKIPPED: …) otherwise.

#![forbid(unsafe_code)]

use wio_e2e_tests::{require_riscv_guests, riscv_guest_artifact, run_with_summary, stdout};

/// Boots Debian's kernel and initramfs under OpenSBI fw_dynamic with `seed`.
fn opensbi_boot(seed: u64, extra: &[&str]) -> (String, serde_json::Value) {
    let fw = riscv_guest_artifact("RISCV64_OPENSBI_FW_DYNAMIC").expect("OpenSBI in the manifest");
    let kernel = riscv_guest_artifact("RISCV64_DEBIAN_IMAGE").expect("Debian kernel");
    let initrd = riscv_guest_artifact("RISCV64_DEBIAN_INITRAMFS").expect("Debian initramfs");
    let seed = seed.to_string();
    let mut args = vec![
        "--arch",
        "riscv64",
        "--firmware",
        fw.to_str().unwrap(),
        "--kernel",
        kernel.to_str().unwrap(),
        "--initrd",
        initrd.to_str().unwrap(),
        "--seed",
        &seed,
        "--no-summary",
    ];
    args.extend_from_slice(extra);
    let (out, s) = run_with_summary(&args);
    (stdout(&out), s)
}

#[test]
fn opensbi_boots_the_debian_kernel_to_its_workload_twice_identically() {
    if !require_riscv_guests("opensbi_boots_the_debian_kernel_to_its_workload_twice_identically") {
        return;
    }
    let (text1, s1) = opensbi_boot(3, &[]);
    assert_eq!(s1["exit_status"], 0, "{text1}");
    // OpenSBI itself ran (its banner, our CLINT as its timer, the syscon power-off it
    // found in the device tree) and Linux used its SBI, not wio's.
    for needle in [
        "OpenSBI v",
        "Platform Timer Device       : aclint-mtimer @ 10000000Hz",
        "Platform Shutdown Device    : syscon-poweroff",
        "Boot HART PMP Count         : 16",
        "SBI implementation ID=0x1 ",
        "wio-init: modules loaded",
        "workload: tcp echo: hello-over-tcp",
        "wio-init: done status=0",
    ] {
        assert!(text1.contains(needle), "missing {needle:?}:\n{text1}");
    }
    assert!(s1["exits"]["mtimecmp"].as_u64().unwrap_or(0) > 10, "{s1}");
    assert_eq!(
        s1["exits"]["sbi"],
        serde_json::Value::Null,
        "wio's SBI served calls: {s1}"
    );
    let (text2, s2) = opensbi_boot(3, &[]);
    assert_eq!(s1["trace_hash"], s2["trace_hash"]);
    assert_eq!(text1, text2);
    // Another seed moves what the guest sees (its entropy at least).
    let (text3, s3) = opensbi_boot(4, &[]);
    assert_eq!(s3["exit_status"], 0);
    assert_ne!(s1["trace_hash"], s3["trace_hash"]);
    let urandom = |t: &str| {
        t.lines()
            .find(|l| l.starts_with("workload: urandom"))
            .map(str::to_string)
    };
    assert!(urandom(&text1).is_some());
    assert_ne!(urandom(&text1), urandom(&text3));
}
