//! Loading a riscv64 Linux `Image`, its initrd and the device tree into RAM: the image a
//! machine boots ([`BootImage`], kept for the boot after a crash fault), the hart on guest
//! memory, and each boot's device-tree rng-seed.

use super::fdt;
use super::firmware;
use super::layout::{self, KERNEL_DEFAULT_OFFSET, RAM_BASE};
use crate::error::{MachineError, MemoryError, Result, WioError};
use crate::machine::power::{boot_stream, restart_file};
use crate::memory::GuestMem;
use crate::snapshot::Meta;
use std::path::{Path, PathBuf};
use vm_memory::{GuestAddress, GuestMemoryBackend};
use wio_riscv::{Hart, Ram};
use wio_scheduler::{stream_names, RunSeed};

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
                return Err(MemoryError::Place { what: "initrd" }.into());
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

/// A hart whose RAM is `mem` (which stays mapped as long as the hart lives).
pub(super) fn hart_on(mem: &GuestMem, mem_bytes: u64, entry: u64) -> Result<Hart> {
    let host = mem
        .get_host_address(GuestAddress(layout::RAM_BASE))
        .map_err(|source| MemoryError::HostAddress { source })?;
    // SAFETY: `host` points at the single mapping of `mem_bytes` bytes that `mem` owns; the
    // clone handed to Ram keeps it mapped for the hart's lifetime, and the hart and the
    // devices access it only through raw pointers / vm-memory, never through held references.
    let ram = unsafe {
        Ram::from_raw(
            layout::RAM_BASE,
            host,
            mem_bytes as usize,
            Box::new(mem.clone()),
        )
    };
    let mut hart = Hart::new(ram, entry, layout::CYCLES_PER_TICK);
    // WIO_NO_JIT=1 interprets every block (same results, slower): for comparisons and as
    // an escape hatch should the block compiler be suspected.
    if std::env::var_os("WIO_NO_JIT").is_some_and(|v| !v.is_empty() && v != "0") {
        hart.set_compiling(false);
    }
    Ok(hart)
}

/// What a boot loads: the kernel, the initrd and the command line, kept so that a machine
/// can boot again after a crash.
pub struct BootImage {
    /// Where the kernel came from (for errors).
    pub kernel_path: PathBuf,
    /// The kernel `Image`.
    pub kernel: Vec<u8>,
    /// The initrd and where it came from.
    pub initrd: Option<(PathBuf, Vec<u8>)>,
    /// The kernel command line.
    pub cmdline: String,
    /// How many virtio-mmio slots the device tree lists.
    pub virtio_slots: usize,
    /// M-mode firmware started before the kernel (`--firmware`), and where it came from.
    pub firmware: Option<(PathBuf, Vec<u8>)>,
    /// RAM is ECC memory (`--ecc`).
    pub ecc: bool,
    /// The hart's optional extensions (`--isa`).
    pub isa: wio_riscv::Isa,
}

impl BootImage {
    /// Whether the kernel is a bare-metal program (an ELF, started in M-mode).
    pub fn bare_metal(&self) -> bool {
        firmware::is_elf(&self.kernel)
    }

    /// Whether the guest's M-mode runs its own code (firmware or a bare-metal program).
    pub fn m_mode(&self) -> bool {
        self.firmware.is_some() || self.bare_metal()
    }

    /// Loads the kernel, the initrd and a device tree (with `rng_seed`) into the hart's RAM
    /// of `mem_bytes` and points the hart at where the machine starts: the kernel in
    /// supervisor mode (wio's SBI), the firmware in M-mode with the kernel as its next
    /// stage, or a bare-metal program in M-mode.
    /// With `vmgenid`, the tree lists the VM generation ID.
    pub fn load_into(
        &self,
        hart: &mut Hart,
        mem_bytes: u64,
        rng_seed: &[u8],
        vmgenid: bool,
    ) -> Result<Placement> {
        let placement = if self.bare_metal() {
            self.load_bare_metal(&mut hart.ram, mem_bytes)?
        } else {
            load(
                &mut hart.ram,
                &self.kernel_path,
                &self.kernel,
                self.initrd.as_ref().map(|(p, b)| (p, b.as_slice())),
            )?
        };
        let virtio: Vec<(u32, u32)> = (0..self.virtio_slots)
            .map(|slot| (slot as u32, super::bus::virtio_irq(slot)))
            .collect();
        let blob = fdt::build(&fdt::FdtSpec {
            mem_bytes,
            bootargs: &self.cmdline,
            initrd: placement.initrd,
            rng_seed,
            virtio: &virtio,
            m_mode: self.m_mode(),
            edac: self.ecc,
            vmgenid,
            isa: self.isa,
        })?;
        hart.set_ecc(self.ecc);
        hart.set_isa(self.isa);
        if blob.len() as u64 > MAX_FDT_BYTES || !hart.ram.load(placement.fdt_addr, &blob) {
            return Err(MemoryError::Place {
                what: "device tree",
            }
            .into());
        }
        match &self.firmware {
            Some((path, bytes)) => {
                let fw = firmware::parse_firmware(path, bytes, mem_bytes)?;
                if fw.end() > placement.entry {
                    return Err(WioError::ArtifactFormat {
                        what: "firmware",
                        path: path.clone(),
                        reason: format!(
                            "occupies up to {:#x}, over the kernel at {:#x}; firmware must fit below RAM base + 2 MiB",
                            fw.end(),
                            placement.entry
                        ),
                    });
                }
                // fw_dynamic_info just above the device tree, in the RAM the tree reserves.
                let info_addr = placement.fdt_addr + MAX_FDT_BYTES;
                if !fw.load(&mut hart.ram)
                    || !hart
                        .ram
                        .load(info_addr, &firmware::dynamic_info(placement.entry))
                {
                    return Err(MemoryError::Place { what: "firmware" }.into());
                }
                hart.enter_firmware(fw.entry, placement.fdt_addr, info_addr);
            }
            None if self.bare_metal() => {
                hart.enter_firmware(placement.entry, placement.fdt_addr, 0)
            }
            None => hart.enter_supervisor(placement.entry, 0, placement.fdt_addr),
        }
        Ok(placement)
    }

    /// Loads a bare-metal ELF program; the device tree goes where it goes for a kernel.
    fn load_bare_metal(&self, ram: &mut Ram, mem_bytes: u64) -> Result<Placement> {
        if let Some((path, _)) = &self.initrd {
            return Err(MachineError::BareMetalInitrd {
                program: self.kernel_path.clone(),
                initrd: path.clone(),
            }
            .into());
        }
        let img = firmware::parse_elf("kernel", &self.kernel_path, &self.kernel, mem_bytes)?;
        let fdt_addr = (RAM_BASE + mem_bytes - 2 * 1024 * 1024).max(RAM_BASE);
        if img.end() > fdt_addr {
            return Err(bad_kernel(
                &self.kernel_path,
                format!(
                    "occupies memory up to {:#x}, where the device tree goes ({fdt_addr:#x}); raise --mem",
                    img.end()
                ),
            ));
        }
        if !img.load(ram) {
            return Err(MemoryError::Place { what: "program" }.into());
        }
        Ok(Placement {
            entry: img.entry,
            kernel_end: img.end(),
            initrd: None,
            fdt_addr,
        })
    }

    /// The image a snapshot's machine booted, read again from the paths the snapshot
    /// names and checked against its hashes (a restored machine needs it only to boot
    /// again after a crash fault).
    pub fn from_meta(meta: &Meta, virtio_slots: usize) -> Result<BootImage> {
        let read = |what, path, sha: &str| restart_file(what, path, sha).map(|(_, bytes)| bytes);
        let kernel = read("kernel", meta.kernel_path.as_ref(), &meta.kernel_sha256)?;
        let initrd = match &meta.initrd_sha256 {
            Some(sha) => Some((
                meta.initrd_path.clone().unwrap_or_default(),
                read("initrd", meta.initrd_path.as_ref(), sha)?,
            )),
            None => None,
        };
        let firmware = match &meta.firmware_sha256 {
            Some(sha) => Some((
                meta.firmware_path.clone().unwrap_or_default(),
                read("firmware", meta.firmware_path.as_ref(), sha)?,
            )),
            None => None,
        };
        Ok(BootImage {
            kernel_path: meta.kernel_path.clone().unwrap_or_default(),
            kernel,
            initrd,
            cmdline: meta.cmdline.clone(),
            virtio_slots,
            firmware,
            ecc: meta.ecc,
            isa: meta.isa,
        })
    }
}

/// The rng-seed a boot's device tree carries: boot 1 from `riscv-fdt-rng-seed`, boot n
/// from `riscv-fdt-rng-seed/boot-n`, so a restart never repeats the first boot's entropy
/// and adding restarts shifts no other stream.
pub fn fdt_rng_seed(seed: RunSeed, boot: u32) -> [u8; 64] {
    let name = boot_stream(stream_names::RISCV_FDT_RNG_SEED, boot);
    let mut out = [0u8; 64];
    seed.stream(&name).fill_bytes(&mut out);
    out
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
