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
    let src = manifest.join("../../guest-kernel/x86_64-testguest");
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
    build_bzimage(&src, &out, &entry_o, &guest_o);
}

/// Offset of the 64-bit entry point in a bzImage's protected-mode part.
const BZIMAGE_ENTRY64: u64 = 0x200;

/// Wraps the test guest in the Linux bzImage format (a setup header, then the
/// protected-mode part loaded at 1 MiB with the 64-bit entry at +0x200), so the
/// bzImage loading path is tested with a guest whose behaviour is known.
fn build_bzimage(src: &Path, out: &Path, entry_o: &Path, guest_o: &Path) {
    let script = std::fs::read_to_string(src.join("link.ld")).expect("read link.ld");
    let moved = script.replace(
        ". = 0x100000;",
        &format!(". = {:#x};", 0x10_0000 + BZIMAGE_ENTRY64),
    );
    assert_ne!(moved, script, "link.ld must place the guest at 0x100000");
    let moved_ld = out.join("link-bzimage.ld");
    std::fs::write(&moved_ld, moved).expect("write link-bzimage.ld");
    let elf = out.join("x86_64-testguest-bz.elf");
    let flat = out.join("x86_64-testguest-bz.bin");
    run(
        Command::new("ld")
            .args([
                "-nostdlib",
                "-static",
                "-no-pie",
                "--no-warn-rwx-segments",
                "-T",
            ])
            .arg(&moved_ld)
            .arg(entry_o)
            .arg(guest_o)
            .arg("-o")
            .arg(&elf),
        "ld (bzImage variant)",
    );
    run(
        Command::new("objcopy")
            .args(["-O", "binary"])
            .arg(&elf)
            .arg(&flat),
        "objcopy",
    );
    let payload = std::fs::read(&flat).expect("read flat test guest");
    const SETUP_SECTS: usize = 4;
    let mut image = vec![0u8; (SETUP_SECTS + 1) * 512];
    image[0x1f1] = SETUP_SECTS as u8;
    image[0x1fe..0x200].copy_from_slice(&0xaa55u16.to_le_bytes());
    image[0x202..0x206].copy_from_slice(b"HdrS");
    image[0x206..0x208].copy_from_slice(&0x020fu16.to_le_bytes()); // boot protocol 2.15
    image[0x211] = 0x01; // LOADED_HIGH
    image[0x214..0x218].copy_from_slice(&0x10_0000u32.to_le_bytes()); // code32_start
    image[0x22c..0x230].copy_from_slice(&0x7fff_ffffu32.to_le_bytes()); // initrd_addr_max
    image[0x230..0x234].copy_from_slice(&0x20_0000u32.to_le_bytes()); // kernel_alignment
    image[0x238..0x23c].copy_from_slice(&2047u32.to_le_bytes()); // cmdline_size
    let mut pm = vec![0u8; BZIMAGE_ENTRY64 as usize];
    pm.extend_from_slice(&payload);
    let init_size = (pm.len() + 64 * 1024) as u32; // room for .bss, which the flat binary omits
    image[0x260..0x264].copy_from_slice(&init_size.to_le_bytes());
    image.extend_from_slice(&pm);
    std::fs::write(out.join("x86_64-testguest.bzImage"), image).expect("write bzImage");
}
