//! Running a batch: loading the ELF into wio's RAM and running each program there, running
//! the ELF in QEMU, and pairing up what each program did in both.

use super::*;
use std::fs;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use wio_riscv::{Hart, NoDevices, Ram, Stop};

pub(crate) fn u64_at(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().unwrap())
}
pub(crate) fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().unwrap())
}
pub(crate) fn u16_at(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes(b[off..off + 2].try_into().unwrap())
}

/// RAM holding the ELF's loadable segments at their addresses.
pub(crate) fn load_elf(elf: &[u8]) -> Ram {
    assert_eq!(&elf[..4], b"\x7fELF", "not an ELF");
    let phoff = u64_at(elf, 32) as usize;
    let phentsize = u16_at(elf, 54) as usize;
    let phnum = u16_at(elf, 56) as usize;
    let mut segs = Vec::new();
    for i in 0..phnum {
        let ph = phoff + i * phentsize;
        if u32_at(elf, ph) != 1 {
            continue; // not PT_LOAD
        }
        let off = u64_at(elf, ph + 8) as usize;
        let paddr = u64_at(elf, ph + 24);
        let filesz = u64_at(elf, ph + 32) as usize;
        let memsz = u64_at(elf, ph + 40);
        segs.push((paddr, &elf[off..off + filesz], memsz));
    }
    let end = segs.iter().map(|s| s.0 + s.2).max().expect("no segment");
    let size = ((end - BASE + 0xffff) & !0xfff) as usize;
    let mut ram = Ram::new(BASE, size);
    for (addr, bytes, _) in segs {
        assert!(ram.load(addr, bytes), "segment at {addr:#x} outside RAM");
    }
    ram
}

/// Addresses of one program in the image, from the table at BASE.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry {
    pub(crate) entry: u64,
    pub(crate) buf: u64,
    pub(crate) last: u64,
    pub(crate) end: u64,
    pub(crate) ecall_end: u64,
}

pub(crate) struct Image {
    pub(crate) ram: Ram,
    pub(crate) stub: u64,
    pub(crate) trap_end: u64,
    /// Where wio's trap vector saves x10-x12, scause, sepc, stval.
    pub(crate) save: u64,
    pub(crate) entries: Vec<Entry>,
}

pub(crate) fn image(elf_path: &Path) -> Image {
    let elf = fs::read(elf_path).expect("read ELF");
    let ram = load_elf(&elf);
    let word = |a: u64| u64_at(ram.slice(a, 8).expect("table in RAM"), 0);
    let n = word(BASE + 24) as usize;
    let entries = (0..n)
        .map(|i| {
            let e = BASE + 32 + 40 * i as u64;
            Entry {
                entry: word(e),
                buf: word(e + 8),
                last: word(e + 16),
                end: word(e + 24),
                ecall_end: word(e + 32),
            }
        })
        .collect();
    Image {
        stub: word(BASE),
        trap_end: word(BASE + 8),
        save: word(BASE + 16),
        ram,
        entries,
    }
}

/// Runs program `e` of the image in wio; its dump block and buffer, or why it did not finish.
pub(crate) fn run_wio(img: &Image, e: &Entry, ctx: &Ctx) -> Result<Vec<u8>, String> {
    let mut hart = Hart::new(img.ram.clone(), img.stub, 100);
    if ctx.bitmanip {
        hart.set_isa(BITMANIP_ISA.parse().expect("an ISA wio implements"));
    }
    if ctx.vector {
        hart.set_isa(
            wio_riscv::Isa::RV64GC
                .with_vector(generate_vector::VLEN)
                .expect("a VLEN wio implements"),
        );
    }
    hart.enter_supervisor(img.stub, 0, 0);
    if ctx.vector {
        hart.enable_vector();
    }
    hart.x[5] = e.entry;
    let stop = hart.run(&mut NoDevices, BUDGET);
    match stop {
        Stop::SbiCall if hart.pc == e.ecall_end => Ok(hart
            .ram
            .slice(e.buf - STATE_BYTES as u64, OUT_BYTES as u64)
            .expect("dump in RAM")
            .to_vec()),
        Stop::SbiCall if hart.pc == img.trap_end => trap_record(img, e, &hart),
        other => Err(format!(
            "wio stopped with {other:?} at pc {:#x} without reaching the program's ecall",
            hart.pc
        )),
    }
}

/// The state at a trap, laid out as QEMU's signal handler writes it.
pub(crate) fn trap_record(img: &Image, e: &Entry, hart: &Hart) -> Result<Vec<u8>, String> {
    let saved = |i: u64| u64_at(hart.ram.slice(img.save + 8 * i, 8).expect("save area"), 0);
    let (cause, epc, tval) = (saved(3), saved(4), saved(5));
    // The signal Linux sends for the exception, and its si_addr.
    let (signal, addr) = match cause {
        2 => (4, epc),                          // illegal instruction: SIGILL
        3 => (5, epc),                          // breakpoint: SIGTRAP
        4 | 6 => (7, tval),                     // misaligned: SIGBUS
        1 | 5 | 7 | 12 | 13 | 15 => (11, tval), // access or page fault: SIGSEGV
        _ => {
            return Err(format!(
                "wio trapped with cause {cause:#x} (sepc={epc:#x} stval={tval:#x})"
            ))
        }
    };
    let mut slots = [0u64; SLOTS];
    slots[0] = TRAP_MAGIC | signal;
    slots[1..32].copy_from_slice(&hart.x[1..32]);
    for (i, r) in (10..13).enumerate() {
        slots[r] = saved(i as u64);
    }
    slots[32..64].copy_from_slice(&hart.fp.f);
    slots[SLOT_FCSR] = u64::from(hart.fp.fflags) | (u64::from(hart.fp.frm) << 5);
    slots[SLOT_TRAP_PC] = epc;
    slots[SLOT_TRAP_ADDR] = addr;
    // QEMU's signal handler leaves the spare slot as memory holds it (a wild store may
    // have written it): so does this.
    let spare = e.buf - STATE_BYTES as u64 + 8 * (SLOTS as u64 - 1);
    slots[SLOTS - 1] = u64_at(hart.ram.slice(spare, 8).expect("dump block in RAM"), 0);
    let mut out: Vec<u8> = slots.iter().flat_map(|v| v.to_le_bytes()).collect();
    out.extend_from_slice(
        hart.ram
            .slice(e.buf, BUF_BYTES as u64)
            .expect("buffer in RAM"),
    );
    Ok(out)
}

/// What one program did in both.
pub(crate) struct Outcome {
    pub(crate) qemu: Result<Vec<u8>, String>,
    pub(crate) wio: Result<Vec<u8>, String>,
    /// Encoded bytes of the program's last kept item.
    pub(crate) last_bytes: Vec<u8>,
}

impl Outcome {
    pub(crate) fn differs(&self) -> bool {
        match (&self.qemu, &self.wio) {
            (Ok(q), Ok(w)) => q != w,
            _ => true,
        }
    }
}

/// Waits for `child`, killing it after `limit`; None when it was killed.
pub(crate) fn wait_for(mut child: std::process::Child, limit: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for qemu-riscv64") {
            return Some(status);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// `patch` (tests of this harness only) replaces 32-bit words in wio's copy of the image.
pub(crate) fn run_batch(ctx: &Ctx, jobs: &[Job], patch: Option<(u32, u32)>) -> Vec<Outcome> {
    let elf = build(ctx, jobs);
    let out_path = elf.with_extension("out");
    let err_path = elf.with_extension("err");
    let child = Command::new("qemu-riscv64")
        .args([
            "-cpu",
            if ctx.vector {
                QEMU_CPU_VECTOR
            } else if ctx.bitmanip {
                QEMU_CPU_BITMANIP
            } else {
                QEMU_CPU
            },
        ])
        .arg(&elf)
        .stdin(Stdio::null())
        .stdout(fs::File::create(&out_path).expect("qemu output file"))
        .stderr(fs::File::create(&err_path).expect("qemu stderr file"))
        .spawn()
        .expect("start qemu-riscv64");
    let mut img = image(&elf);
    assert_eq!(img.entries.len(), jobs.len());
    if let Some((from, to)) = patch {
        let mut bytes = img.ram.bytes().to_vec();
        let mut hits = 0;
        for off in (0..bytes.len() - 4).step_by(2) {
            if u32_at(&bytes, off) == from {
                bytes[off..off + 4].copy_from_slice(&to.to_le_bytes());
                hits += 1;
            }
        }
        assert!(hits > 0, "patch word {from:#x} not found");
        assert!(img.ram.load(BASE, &bytes));
    }
    let wio: Vec<Result<Vec<u8>, String>> =
        img.entries.iter().map(|e| run_wio(&img, e, ctx)).collect();
    let status = wait_for(child, QEMU_TIMEOUT);
    let out = fs::read(&out_path).expect("qemu output");
    let qemu_err = format!(
        "qemu-riscv64 exited with {} after {} bytes: {}",
        status.map_or_else(|| "a timeout".to_string(), |s| s.to_string()),
        out.len(),
        fs::read_to_string(&err_path).unwrap_or_default().trim()
    );
    let status_ok = status.is_some_and(|s| s.success());
    if !ctx.keep {
        let _ = fs::remove_file(&out_path);
        let _ = fs::remove_file(&err_path);
        let _ = fs::remove_file(&elf);
        let _ = fs::remove_file(elf.with_extension("S"));
    }
    // A program that QEMU could not finish takes the rest of its batch down: run those again.
    let done = out.len() / OUT_BYTES;
    let rerun = if done + 1 < jobs.len() && !status_ok {
        run_batch(ctx, &jobs[done + 1..], patch)
    } else {
        Vec::new()
    };
    let mut outcomes: Vec<Outcome> = img
        .entries
        .iter()
        .zip(wio)
        .enumerate()
        .map(|(i, (e, w))| {
            let chunk = out.get(i * OUT_BYTES..(i + 1) * OUT_BYTES);
            let qemu = match chunk {
                Some(c) if status_ok || out.len() >= (i + 1) * OUT_BYTES => Ok(c.to_vec()),
                _ => Err(qemu_err.clone()),
            };
            let last_bytes = img
                .ram
                .slice(e.last, e.end - e.last)
                .map(<[u8]>::to_vec)
                .unwrap_or_default();
            Outcome {
                qemu,
                wio: w,
                last_bytes,
            }
        })
        .collect();
    for (i, o) in rerun.into_iter().enumerate() {
        outcomes[done + 1 + i].qemu = o.qemu;
    }
    outcomes
}
