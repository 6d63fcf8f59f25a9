//! The external tools (assembler, linker, QEMU): finding them, the scratch folder, and
//! assembling and linking a batch into one ELF.

use super::*;
use std::fs;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

pub(crate) fn on_path(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|d| {
            let p = d.join(name);
            p.is_file()
                && fs::metadata(&p).is_ok_and(|m| {
                    use std::os::unix::fs::PermissionsExt;
                    m.permissions().mode() & 0o111 != 0
                })
        })
    })
}

pub(crate) struct Ctx {
    pub(crate) dir: PathBuf,
    pub(crate) keep: bool,
    pub(crate) counter: AtomicUsize,
    /// Programs use Zba/Zbb/Zbc/Zbs too: QEMU and wio's hart then implement them.
    pub(crate) bitmanip: bool,
    /// Programs use the vector extension (VLEN 128 on both sides).
    pub(crate) vector: bool,
}

impl Ctx {
    /// None (after skipping `test`, the test function's name) when a tool is missing.
    pub(crate) fn new(test: &str) -> Option<Ctx> {
        use wio_require::Capability;
        for (tool, need, package) in [
            ("qemu-riscv64", Capability::QemuUser, "qemu-user"),
            (
                "riscv64-linux-gnu-as",
                Capability::CrossGcc,
                "gcc-riscv64-linux-gnu",
            ),
            (
                "riscv64-linux-gnu-ld",
                Capability::CrossGcc,
                "gcc-riscv64-linux-gnu",
            ),
        ] {
            if !on_path(tool) {
                wio_require::skip(
                    test,
                    need,
                    &format!("`{tool}` is not on PATH (apt-get install {package})"),
                );
                return None;
            }
        }
        let dir = std::env::temp_dir().join(format!("wio-diff-{}-{test}", std::process::id()));
        fs::create_dir_all(&dir).expect("temp dir");
        fs::write(dir.join("link.ld"), LINKER_SCRIPT).expect("linker script");
        let keep = std::env::var("WIO_DIFF_KEEP").is_ok_and(|v| v == "1");
        if keep {
            println!("differential: keeping generated files in {}", dir.display());
        }
        Some(Ctx {
            dir,
            keep,
            counter: AtomicUsize::new(0),
            bitmanip: false,
            vector: false,
        })
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        if !self.keep {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

pub(crate) fn run_tool(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    if !out.status.success() {
        panic!(
            "{what} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Assembles and links `jobs` into one ELF; returns its path.
pub(crate) fn build(ctx: &Ctx, jobs: &[Job]) -> PathBuf {
    let n = ctx.counter.fetch_add(1, Ordering::Relaxed);
    let src = ctx.dir.join(format!("b{n}.S"));
    let obj = ctx.dir.join(format!("b{n}.o"));
    let elf = ctx.dir.join(format!("b{n}.elf"));
    fs::write(&src, batch_source(jobs)).expect("write asm");
    run_tool(
        Command::new("riscv64-linux-gnu-as")
            .args([
                "-march=rv64gcv_zba_zbb_zbc_zbs",
                "-mabi=lp64d",
                "-mno-relax",
                "-o",
            ])
            .arg(&obj)
            .arg(&src),
        &format!("assembling {}", src.display()),
    );
    run_tool(
        Command::new("riscv64-linux-gnu-ld")
            .args(["--no-relax", "--no-warn-rwx-segments"])
            .arg("-T")
            .arg(ctx.dir.join("link.ld"))
            .arg("-o")
            .arg(&elf)
            .arg(&obj),
        &format!("linking {}", obj.display()),
    );
    if !ctx.keep {
        let _ = fs::remove_file(&obj);
    }
    elf
}
