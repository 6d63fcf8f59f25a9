//! Loading a riscv64 Linux `Image`, its initrd and the device tree into RAM.

use super::layout::{KERNEL_DEFAULT_OFFSET, RAM_BASE};
use crate::error::{Result, WioError};
use std::path::{Path, PathBuf};
use wio_riscv::Ram;

/// Offset of the "RISCV\0\0\0" magic in the Image header.
const MAGIC_OFFSET: usize = 48;
/// Offset of the "RSC\x05" magic.
const MAGIC2_OFFSET: usize = 56;
/// Size of the Image header.
const HEADER_LEN: usize = 64;

/// The fields of a RISC-V Linux Image header wio uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageHeader {
    /// Where the image wants to sit relative to the start of RAM.
    pub text_offset: u64,
    /// Bytes the image occupies in memory once running (including .bss).
    pub image_size: u64,
}

fn bad_kernel(path: &Path, reason: String) -> WioError {
    WioError::ArtifactFormat {
        what: "kernel",
        path: path.to_path_buf(),
        reason,
    }
}

/// Parses and checks the Image header.
pub fn parse_header(path: &Path, bytes: &[u8]) -> Result<ImageHeader> {
    if bytes.len() < HEADER_LEN {
        return Err(bad_kernel(
            path,
            format!(
                "is {} bytes, too short for a RISC-V Linux Image",
                bytes.len()
            ),
        ));
    }
    if &bytes[MAGIC_OFFSET..MAGIC_OFFSET + 8] != b"RISCV\0\0\0"
        || &bytes[MAGIC2_OFFSET..MAGIC2_OFFSET + 4] != b"RSC\x05"
    {
        let hint = if &bytes[..4] == b"\x7fELF" {
            "is an ELF file; wio boots riscv64 kernels in the flat Image format (arch/riscv/boot/Image)"
        } else if bytes.len() > 0x206 && &bytes[0x202..0x206] == b"HdrS" {
            "is an x86 bzImage; pass it without --arch riscv64"
        } else if bytes[..2] == [0x1f, 0x8b] {
            "is gzip-compressed; decompress it first (zcat vmlinuz > Image)"
        } else {
            "has no RISC-V Image header (magic \"RISCV\" at byte 48)"
        };
        return Err(bad_kernel(path, hint.to_string()));
    }
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap_or([0; 8]));
    let text_offset = match u64_at(8) {
        0 => KERNEL_DEFAULT_OFFSET,
        t => t,
    };
    Ok(ImageHeader {
        text_offset,
        image_size: u64_at(16).max(bytes.len() as u64),
    })
}

/// Where things were placed.
#[derive(Debug, Clone, Copy)]
pub struct Placement {
    /// Kernel entry (= load address).
    pub entry: u64,
    /// End of the kernel's memory footprint.
    pub kernel_end: u64,
    /// Initrd range (start, end).
    pub initrd: Option<(u64, u64)>,
    /// Where the device tree goes.
    pub fdt_addr: u64,
}

/// Maximum device tree size wio reserves.
pub const MAX_FDT_BYTES: u64 = 64 * 1024;

/// Loads the kernel and initrd and decides where the device tree goes.
pub fn load(
    ram: &mut Ram,
    kernel_path: &Path,
    kernel: &[u8],
    initrd: Option<(&PathBuf, &[u8])>,
) -> Result<Placement> {
    let header = parse_header(kernel_path, kernel)?;
    let entry = RAM_BASE + header.text_offset;
    let kernel_end = entry + header.image_size;
    let ram_end = RAM_BASE + ram.size();
    // The device tree sits in the last 2 MiB of RAM, the initrd just below it.
    let fdt_addr = (ram_end - 2 * 1024 * 1024).max(RAM_BASE);
    if kernel_end > fdt_addr || !ram.load(entry, kernel) {
        return Err(bad_kernel(
            kernel_path,
            format!(
                "needs {} MiB of RAM above its load address but the guest has {} MiB; raise --mem",
                header.image_size >> 20,
                ram.size() >> 20
            ),
        ));
    }
    let initrd_range = match initrd {
        Some((path, bytes)) => {
            let size = bytes.len() as u64;
            let start = fdt_addr
                .checked_sub(size)
                .map(|s| s & !0xfff)
                .filter(|&s| s >= kernel_end);
            let Some(start) = start else {
                return Err(WioError::ArtifactFormat {
                    what: "initrd",
                    path: path.clone(),
                    reason: format!("is {} MiB and does not fit between the kernel and the end of RAM; raise --mem", size >> 20),
                });
            };
            if !ram.load(start, bytes) {
                return Err(WioError::Internal("initrd placement out of RAM".into()));
            }
            Some((start, start + size))
        }
        None => None,
    };
    Ok(Placement {
        entry,
        kernel_end,
        initrd: initrd_range,
        fdt_addr,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(text_offset: u64, size: usize) -> Vec<u8> {
        let mut b = vec![0u8; size];
        b[8..16].copy_from_slice(&text_offset.to_le_bytes());
        b[16..24].copy_from_slice(&(size as u64).to_le_bytes());
        b[48..56].copy_from_slice(b"RISCV\0\0\0");
        b[56..60].copy_from_slice(b"RSC\x05");
        b
    }

    #[test]
    fn loads_at_text_offset_and_places_initrd_and_fdt() {
        let mut ram = Ram::new(RAM_BASE, 64 << 20);
        let k = image(0x20_0000, 4096);
        let initrd = vec![0x55u8; 10_000];
        let p = PathBuf::from("initrd");
        let pl = load(&mut ram, Path::new("Image"), &k, Some((&p, &initrd))).unwrap();
        assert_eq!(pl.entry, RAM_BASE + 0x20_0000);
        let (s, e) = pl.initrd.unwrap();
        assert_eq!(s % 4096, 0);
        assert!(e <= pl.fdt_addr);
        assert_eq!(ram.slice(s, 1).unwrap(), &[0x55]);
    }

    #[test]
    fn rejects_non_images_with_hints() {
        let mut ram = Ram::new(RAM_BASE, 64 << 20);
        let err = load(&mut ram, Path::new("vmlinux"), b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", None).unwrap_err();
        assert!(err.to_string().contains("ELF"), "{err}");
        let err = load(&mut ram, Path::new("junk"), &[0u8; 100], None).unwrap_err();
        assert!(err.to_string().contains("no RISC-V Image header"), "{err}");
    }

    #[test]
    fn too_small_memory_says_raise_mem() {
        let mut ram = Ram::new(RAM_BASE, 16 << 20);
        let k = image(0x20_0000, 15 << 20);
        let err = load(&mut ram, Path::new("Image"), &k, None).unwrap_err();
        assert!(err.to_string().contains("raise --mem"), "{err}");
    }
}
