//! M-mode guests: firmware started before a supervisor kernel (`--firmware`, e.g.
//! Debian's OpenSBI) and bare-metal programs (`--kernel` of a RISC-V ELF). Both start the
//! hart in M-mode (`Hart::enter_firmware`), where the guest owns SBI, the CLINT's timer
//! and PMP; wio's built-in SBI is then out of the picture.
//!
//! What is read here: raw binaries, and little-endian ELF64 RISC-V executables whose
//! loadable segments fit in RAM (an ELF linked at address 0, as OpenSBI's position
//! independent fw_*.elf are, is loaded at the RAM base). And what is handed on:
//! OpenSBI's `fw_dynamic_info` (a2), naming the next stage.

use super::layout::RAM_BASE;
use crate::error::{Result, WioError};
use std::path::Path;
use wio_riscv::Ram;

/// How many loadable segments an ELF may have (far more than any toolchain emits).
const MAX_SEGMENTS: usize = 64;

/// ELF machine number of RISC-V.
const EM_RISCV: u16 = 243;

/// A loadable image: where its bytes go and where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loadable {
    /// Entry point (physical).
    pub entry: u64,
    /// (physical address, file bytes, size in memory; the rest is zero).
    pub segments: Vec<(u64, Vec<u8>, u64)>,
}

impl Loadable {
    /// One past the highest byte it occupies.
    pub fn end(&self) -> u64 {
        self.segments
            .iter()
            .map(|(a, _, m)| a.saturating_add(*m))
            .max()
            .unwrap_or(self.entry)
    }

    /// Copies the segments into RAM (zero-filling beyond their file bytes).
    pub fn load(&self, ram: &mut Ram) -> bool {
        self.segments.iter().all(|(addr, bytes, memsz)| {
            let zeros = vec![0u8; (*memsz as usize).saturating_sub(bytes.len())];
            ram.load(*addr, bytes) && ram.load(addr + bytes.len() as u64, &zeros)
        })
    }
}

/// Whether `bytes` start like an ELF file.
pub fn is_elf(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x7fELF")
}

fn bad(what: &'static str, path: &Path, reason: String) -> WioError {
    WioError::ArtifactFormat {
        what,
        path: path.to_path_buf(),
        reason,
    }
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Reads a RISC-V ELF64 executable into a [`Loadable`] that fits in `ram_size` bytes of
/// RAM at [`RAM_BASE`]. `what` names it in errors ("firmware", "kernel").
pub fn parse_elf(what: &'static str, path: &Path, b: &[u8], ram_size: u64) -> Result<Loadable> {
    let err = |reason: String| bad(what, path, reason);
    let truncated = || err("is a truncated ELF file".into());
    if b.get(4) != Some(&2) || b.get(5) != Some(&1) {
        return Err(err(
            "is an ELF file but not a little-endian 64-bit one; riscv64 machines run RV64 ELF executables".into(),
        ));
    }
    let machine = u16_at(b, 18).ok_or_else(truncated)?;
    if machine != EM_RISCV {
        return Err(err(format!(
            "is an ELF file for machine {machine}, not RISC-V ({EM_RISCV})"
        )));
    }
    let entry = u64_at(b, 24).ok_or_else(truncated)?;
    let phoff = u64_at(b, 32).ok_or_else(truncated)?;
    let phentsize = u64::from(u16_at(b, 54).ok_or_else(truncated)?);
    let phnum = u64::from(u16_at(b, 56).ok_or_else(truncated)?);
    if phentsize < 56 {
        return Err(err(format!("has program headers of {phentsize} bytes")));
    }
    let mut segments = Vec::new();
    for i in 0..phnum {
        let at = phoff
            .checked_add(i * phentsize)
            .and_then(|a| usize::try_from(a).ok())
            .ok_or_else(truncated)?;
        if u32_at(b, at).ok_or_else(truncated)? != 1 {
            continue; // not PT_LOAD
        }
        let offset = u64_at(b, at + 8).ok_or_else(truncated)?;
        let paddr = u64_at(b, at + 24).ok_or_else(truncated)?;
        let filesz = u64_at(b, at + 32).ok_or_else(truncated)?;
        let memsz = u64_at(b, at + 40).ok_or_else(truncated)?;
        if memsz == 0 {
            continue;
        }
        if filesz > memsz {
            return Err(err(format!(
                "has a segment at {paddr:#x} with more file bytes ({filesz}) than memory ({memsz})"
            )));
        }
        let bytes = offset
            .checked_add(filesz)
            .and_then(|end| b.get(usize::try_from(offset).ok()?..usize::try_from(end).ok()?))
            .ok_or_else(truncated)?;
        if segments.len() == MAX_SEGMENTS {
            return Err(err(format!(
                "has more than {MAX_SEGMENTS} loadable segments"
            )));
        }
        segments.push((paddr, bytes.to_vec(), memsz));
    }
    if segments.is_empty() {
        return Err(err("has no loadable segment".into()));
    }
    let mut image = Loadable { entry, segments };
    // Linked at 0 (position independent firmware): placed at the RAM base.
    let lowest = image.segments.iter().map(|s| s.0).min().unwrap_or(0);
    if lowest < RAM_BASE && image.end() <= ram_size {
        image.entry += RAM_BASE;
        for s in &mut image.segments {
            s.0 += RAM_BASE;
        }
    }
    let ram_end = RAM_BASE + ram_size;
    for (addr, _, memsz) in &image.segments {
        if *addr < RAM_BASE || addr.saturating_add(*memsz) > ram_end {
            return Err(err(format!(
                "has a segment at {addr:#x} ({memsz} bytes) outside RAM ({RAM_BASE:#x}..{ram_end:#x}); link it into RAM or raise --mem"
            )));
        }
    }
    if !(RAM_BASE..ram_end).contains(&image.entry) {
        return Err(err(format!(
            "starts at {:#x}, outside RAM ({RAM_BASE:#x}..{ram_end:#x})",
            image.entry
        )));
    }
    Ok(image)
}

/// Reads firmware: an ELF as [`parse_elf`] does, anything else as a raw binary for the
/// RAM base.
pub fn parse_firmware(path: &Path, bytes: &[u8], ram_size: u64) -> Result<Loadable> {
    if is_elf(bytes) {
        return parse_elf("firmware", path, bytes, ram_size);
    }
    if bytes.is_empty() {
        return Err(bad("firmware", path, "is empty".into()));
    }
    Ok(Loadable {
        entry: RAM_BASE,
        segments: vec![(RAM_BASE, bytes.to_vec(), bytes.len() as u64)],
    })
}

/// OpenSBI's `fw_dynamic_info` (version 2): magic "OSBI", version, the next stage's
/// address and mode (1 = S), options (0), the boot hart (0). Six little-endian u64s.
pub fn dynamic_info(next_addr: u64) -> [u8; 48] {
    let fields: [u64; 6] = [0x4942_534f, 2, next_addr, 1, 0, 0];
    let mut out = [0u8; 48];
    for (chunk, v) in out.chunks_exact_mut(8).zip(fields) {
        chunk.copy_from_slice(&v.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal RISC-V ELF64 with one PT_LOAD segment of `code` at `addr`.
    pub(crate) fn elf(addr: u64, code: &[u8], bss: u64) -> Vec<u8> {
        let mut b = vec![0u8; 64 + 56];
        b[..4].copy_from_slice(b"\x7fELF");
        b[4] = 2;
        b[5] = 1;
        b[16..18].copy_from_slice(&2u16.to_le_bytes());
        b[18..20].copy_from_slice(&EM_RISCV.to_le_bytes());
        b[24..32].copy_from_slice(&addr.to_le_bytes());
        b[32..40].copy_from_slice(&64u64.to_le_bytes());
        b[54..56].copy_from_slice(&56u16.to_le_bytes());
        b[56..58].copy_from_slice(&1u16.to_le_bytes());
        let ph = 64;
        b[ph..ph + 4].copy_from_slice(&1u32.to_le_bytes());
        b[ph + 8..ph + 16].copy_from_slice(&120u64.to_le_bytes());
        b[ph + 16..ph + 24].copy_from_slice(&addr.to_le_bytes());
        b[ph + 24..ph + 32].copy_from_slice(&addr.to_le_bytes());
        b[ph + 32..ph + 40].copy_from_slice(&(code.len() as u64).to_le_bytes());
        b[ph + 40..ph + 48].copy_from_slice(&(code.len() as u64 + bss).to_le_bytes());
        b.extend_from_slice(code);
        b
    }

    #[test]
    fn loads_segments_and_zeroes_bss() {
        let e = elf(RAM_BASE + 0x1000, &[1, 2, 3, 4], 4);
        let img = parse_elf("kernel", Path::new("prog.elf"), &e, 1 << 20).unwrap();
        assert_eq!(img.entry, RAM_BASE + 0x1000);
        let mut ram = Ram::new(RAM_BASE, 1 << 20);
        ram.load(RAM_BASE + 0x1004, &[9; 4]);
        assert!(img.load(&mut ram));
        assert_eq!(
            ram.slice(RAM_BASE + 0x1000, 8).unwrap(),
            &[1, 2, 3, 4, 0, 0, 0, 0]
        );
    }

    #[test]
    fn position_independent_firmware_goes_to_the_ram_base() {
        let e = elf(0, &[0x13, 0, 0, 0], 0);
        let img = parse_firmware(Path::new("fw.elf"), &e, 1 << 20).unwrap();
        assert_eq!(img.entry, RAM_BASE);
        assert_eq!(img.segments[0].0, RAM_BASE);
        let raw = parse_firmware(Path::new("fw.bin"), &[0x13, 0, 0, 0], 1 << 20).unwrap();
        assert_eq!(raw.entry, RAM_BASE);
    }

    #[test]
    fn refuses_foreign_truncated_and_outside_elfs() {
        let mut e = elf(RAM_BASE, &[0; 4], 0);
        e[18] = 62; // x86-64
        let msg = parse_elf("kernel", Path::new("a"), &e, 1 << 20)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("not RISC-V"), "{msg}");
        let e = elf(RAM_BASE, &[0; 4], 0);
        let msg = parse_elf("kernel", Path::new("a"), &e[..100], 1 << 20)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("truncated"), "{msg}");
        let e = elf(RAM_BASE + (2 << 20), &[0; 4], 0);
        let msg = parse_elf("kernel", Path::new("a"), &e, 1 << 20)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("outside RAM"), "{msg}");
        assert!(parse_firmware(Path::new("e"), &[], 1 << 20).is_err());
    }

    #[test]
    fn dynamic_info_is_opensbi_version_2() {
        let d = dynamic_info(0x8020_0000);
        assert_eq!(&d[..4], b"OSBI");
        assert_eq!(
            u64::from_le_bytes(d[16..24].try_into().unwrap()),
            0x8020_0000
        );
        assert_eq!(u64::from_le_bytes(d[24..32].try_into().unwrap()), 1);
    }
}
