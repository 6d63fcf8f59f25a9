//! Builds the freestanding x86-64 test guest (wio's default x86-64 guest) from
//! `guest-kernel/x86_64-testguest` with the host's gcc and ld, so `wio run`
//! has a guest without any download or cache.

use std::path::{Path, PathBuf};
use std::process::Command;

fn run(cmd: &mut Command, what: &str) {
    let status = cmd.status().unwrap_or_else(|e| {
        panic!("building the x86-64 test guest: cannot start {what} ({e}); install gcc and binutils (apt-get install gcc binutils)")
    });
    assert!(
        status.success(),
        "building the x86-64 test guest: {what} failed ({status})"
    );
}

fn main() {
    let manifest =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let src = manifest.join("../guest-kernel/x86_64-testguest");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    for f in ["guest.c", "entry.S", "link.ld"] {
        println!("cargo:rerun-if-changed={}", src.join(f).display());
    }
    let guest_o = out.join("guest.o");
    let entry_o = out.join("entry.o");
    let elf = out.join("x86_64-testguest.elf");
    let cc = std::env::var("WIO_GUEST_CC").unwrap_or_else(|_| "gcc".to_string());
    println!("cargo:rerun-if-env-changed=WIO_GUEST_CC");
    run(
        Command::new(&cc)
            .args([
                "-m64",
                "-ffreestanding",
                "-fno-pic",
                "-fno-pie",
                "-fno-stack-protector",
                "-fno-asynchronous-unwind-tables",
                "-mno-red-zone",
                "-mgeneral-regs-only",
                "-mcmodel=small",
                "-O2",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-c",
            ])
            .arg(src.join("guest.c"))
            .arg("-o")
            .arg(&guest_o),
        "gcc (guest.c)",
    );
    run(
        Command::new(&cc)
            .args(["-m64", "-c"])
            .arg(src.join("entry.S"))
            .arg("-o")
            .arg(&entry_o),
        "gcc (entry.S)",
    );
    run(
        Command::new("ld")
            .args([
                "-nostdlib",
                "-static",
                "-no-pie",
                "--no-warn-rwx-segments",
                "-T",
            ])
            .arg(src.join("link.ld"))
            .arg(&entry_o)
            .arg(&guest_o)
            .arg("-o")
            .arg(&elf),
        "ld",
    );
    assert!(
        Path::new(&elf).exists(),
        "test guest ELF missing after link"
    );
}
