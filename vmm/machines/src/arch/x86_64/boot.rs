//! Loading an x86-64 guest: kernel (ELF or bzImage) with linux-loader, the
//! command line, an optional initrd, and the Linux boot_params ("zero page")
//! with an e820 map and a `SETUP_RNG_SEED` setup_data entry drawn from the seed.

use super::layout::{
    CMDLINE_ADDR, EBDA_START, GDT_ADDR, KERNEL_LOAD_ADDR, MAX_CMDLINE_BYTES, MAX_INITRD_ADDR,
    SETUP_DATA_ADDR, VMGENID_ADDR, ZERO_PAGE_ADDR,
};
use super::{acpi, gdt::BOOT_GDT, paging};
use crate::devices::vmgenid;
use crate::error::{MachineError, MemoryError, Result, WioError};
use crate::memory::GuestMem;
use linux_loader::bootparam::{boot_e820_entry, boot_params, setup_header};
use linux_loader::loader::{bzimage::BzImage, elf::Elf, KernelLoader};
use std::io::Cursor;
use std::path::{Path, PathBuf};
use vm_memory::{Address, Bytes, GuestAddress, GuestMemoryBackend};

/// setup_data type of an RNG seed (Linux `SETUP_RNG_SEED`).
pub const SETUP_RNG_SEED: u32 = 9;
/// Bytes of RNG seed handed to the guest.
pub const RNG_SEED_LEN: usize = 32;
const E820_RAM: u32 = 1;
const E820_RESERVED: u32 = 2;
const KERNEL_BOOT_FLAG_MAGIC: u16 = 0xaa55;
const KERNEL_HDR_MAGIC: u32 = 0x5372_6448; // "HdrS"
const KERNEL_LOADER_OTHER: u8 = 0xff;
const KEEP_SEGMENTS_AND_CAN_USE_HEAP: u8 = 0x80 | 0x40;
/// Offset of the 64-bit entry point from the start of a bzImage's protected-mode kernel.
const BZIMAGE_64BIT_ENTRY_OFFSET: u64 = 0x200;

/// A kernel image: a file named by the user or the built-in test guest.
pub struct KernelImage {
    /// Shown in errors: the path, or "built-in test guest".
    pub name: PathBuf,
    /// The image bytes.
    pub bytes: Vec<u8>,
}

impl KernelImage {
    /// Reads a kernel file, with an error naming the file on failure.
    pub fn from_file(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|source| WioError::ArtifactIo {
            what: "kernel",
            path: path.to_path_buf(),
            source,
        })?;
        Ok(KernelImage {
            name: path.to_path_buf(),
            bytes,
        })
    }
}

/// The formats wio boots on x86-64.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelFormat {
    /// An ELF executable (vmlinux, or the test guest), entered in 64-bit mode at e_entry.
    Elf,
    /// A Linux bzImage, entered at its 64-bit entry point.
    BzImage,
}

/// Identifies a kernel image's format from its magic numbers.
pub fn detect_format(bytes: &[u8]) -> Option<KernelFormat> {
    if bytes.len() >= 4 && &bytes[..4] == b"\x7fELF" {
        return Some(KernelFormat::Elf);
    }
    let boot_flag = bytes
        .get(0x1fe..0x200)
        .map(|b| u16::from_le_bytes([b[0], b[1]]));
    let hdr = bytes
        .get(0x202..0x206)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    if boot_flag == Some(KERNEL_BOOT_FLAG_MAGIC) && hdr == Some(KERNEL_HDR_MAGIC) {
        return Some(KernelFormat::BzImage);
    }
    None
}

/// What the boot loader needs to describe the guest.
pub struct BootSpec<'a> {
    /// The kernel.
    pub kernel: &'a KernelImage,
    /// An optional initrd file.
    pub initrd: Option<&'a Path>,
    /// The kernel command line.
    pub cmdline: &'a str,
    /// RNG seed bytes for `SETUP_RNG_SEED`, drawn from the run seed.
    pub rng_seed: [u8; RNG_SEED_LEN],
    /// The virtio-mmio slots the ACPI tables describe (kernels without
    /// `virtio_mmio.device=` support find them there).
    pub virtio: &'a [acpi::MmioDevice],
    /// The VM generation ID's bytes, written where the ACPI tables say
    /// ([`VMGENID_ADDR`]).
    pub vmgenid: [u8; vmgenid::ID_LEN],
}

/// Where the guest starts.
#[derive(Debug, Clone, Copy)]
pub struct BootInfo {
    /// Guest-physical 64-bit entry point.
    pub entry: u64,
    /// The kernel's format.
    pub format: KernelFormat,
    /// Guest-physical end of the loaded kernel.
    pub kernel_end: u64,
    /// Where the initrd was placed and its size, if any.
    pub initrd: Option<(u64, u64)>,
}

fn format_error(kernel: &KernelImage, reason: String) -> WioError {
    WioError::ArtifactFormat {
        what: "kernel",
        path: kernel.name.clone(),
        reason,
    }
}

/// Loads kernel, initrd, command line, page tables, GDT and boot_params into `mem`.
pub fn load(mem: &GuestMem, spec: &BootSpec) -> Result<BootInfo> {
    let mem_end = mem.last_addr().raw_value() + 1;
    check_cmdline(spec.cmdline)?;
    let (format, entry, kernel_end, setup_header) = load_kernel(mem, spec.kernel, mem_end)?;

    let mut params = boot_params::default();
    if let Some(hdr) = setup_header {
        params.hdr = hdr;
    }
    params.hdr.type_of_loader = KERNEL_LOADER_OTHER;
    params.hdr.boot_flag = KERNEL_BOOT_FLAG_MAGIC;
    params.hdr.header = KERNEL_HDR_MAGIC;
    params.hdr.loadflags |= KEEP_SEGMENTS_AND_CAN_USE_HEAP;
    params.hdr.cmd_line_ptr = CMDLINE_ADDR as u32;
    params.hdr.cmdline_size = spec.cmdline.len() as u32;
    params.hdr.setup_data = SETUP_DATA_ADDR;

    let mut cmdline = spec.cmdline.as_bytes().to_vec();
    cmdline.push(0);
    write(mem, &cmdline, CMDLINE_ADDR, "command line")?;
    write_setup_data(mem, &spec.rng_seed)?;

    let initrd = match spec.initrd {
        Some(path) => {
            let addr_max = if params.hdr.initrd_addr_max != 0 {
                u64::from(params.hdr.initrd_addr_max).min(MAX_INITRD_ADDR)
            } else {
                MAX_INITRD_ADDR
            };
            let (addr, size) = load_initrd(mem, path, kernel_end, addr_max.min(mem_end))?;
            params.hdr.ramdisk_image = addr as u32;
            params.hdr.ramdisk_size = size as u32;
            Some((addr, size))
        }
        None => None,
    };

    set_e820(&mut params, mem_end);
    for (addr, bytes) in acpi::tables(spec.virtio) {
        write(mem, &bytes, addr, "ACPI tables")?;
    }
    write(mem, &spec.vmgenid, VMGENID_ADDR, "the VM generation ID")?;
    params.acpi_rsdp_addr = acpi::RSDP_ADDR;
    mem.write_obj(params, GuestAddress(ZERO_PAGE_ADDR))
        .map_err(|source| MemoryError::Write {
            what: "boot_params",
            addr: ZERO_PAGE_ADDR,
            source,
        })?;
    write_gdt_and_page_tables(mem)?;

    Ok(BootInfo {
        entry,
        format,
        kernel_end,
        initrd,
    })
}

/// Refuses a command line that does not fit its page or holds a NUL.
fn check_cmdline(cmdline: &str) -> Result<()> {
    if cmdline.len() + 1 > MAX_CMDLINE_BYTES {
        return Err(MachineError::CmdlineTooLong {
            len: cmdline.len(),
            max: MAX_CMDLINE_BYTES - 1,
        }
        .into());
    }
    if cmdline.as_bytes().contains(&0) {
        return Err(MachineError::CmdlineNul.into());
    }
    Ok(())
}

/// Loads an ELF vmlinux or a bzImage at [`KERNEL_LOAD_ADDR`]: its format, entry point,
/// end and (bzImage) setup header.
fn load_kernel(
    mem: &GuestMem,
    kernel: &KernelImage,
    mem_end: u64,
) -> Result<(KernelFormat, u64, u64, Option<setup_header>)> {
    let format = detect_format(&kernel.bytes).ok_or_else(|| {
        format_error(kernel, "not an x86-64 ELF or bzImage kernel (no ELF magic, no \"HdrS\" setup header); pass a vmlinux or bzImage built for x86-64".into())
    })?;
    if kernel.bytes.len() as u64 + KERNEL_LOAD_ADDR > mem_end {
        return Err(format_error(
            kernel,
            format!(
                "kernel is {} KiB and does not fit in {} MiB of guest memory; raise --mem",
                kernel.bytes.len() >> 10,
                mem_end >> 20
            ),
        ));
    }
    let mut image = Cursor::new(kernel.bytes.as_slice());
    let too_small = |e: linux_loader::loader::Error| {
        format_error(
            kernel,
            format!(
                "cannot be loaded ({e}); if the image is valid, raise --mem (now {} MiB)",
                mem_end >> 20
            ),
        )
    };
    let (entry, kernel_end, setup_header) = match format {
        KernelFormat::Elf => {
            check_elf_machine(kernel)?;
            let r = Elf::load(mem, None, &mut image, Some(GuestAddress(KERNEL_LOAD_ADDR)))
                .map_err(too_small)?;
            (r.kernel_load.raw_value(), r.kernel_end, None)
        }
        KernelFormat::BzImage => {
            let r = BzImage::load(
                mem,
                Some(GuestAddress(KERNEL_LOAD_ADDR)),
                &mut image,
                Some(GuestAddress(KERNEL_LOAD_ADDR)),
            )
            .map_err(too_small)?;
            (
                r.kernel_load.raw_value() + BZIMAGE_64BIT_ENTRY_OFFSET,
                r.kernel_end,
                r.setup_header,
            )
        }
    };
    Ok((format, entry, kernel_end, setup_header))
}

/// The setup_data entry that hands the kernel its seeded RNG seed: next (u64) = 0,
/// type (u32), len (u32), data.
fn write_setup_data(mem: &GuestMem, rng_seed: &[u8]) -> Result<()> {
    let mut setup = Vec::with_capacity(16 + RNG_SEED_LEN);
    setup.extend_from_slice(&0u64.to_le_bytes());
    setup.extend_from_slice(&SETUP_RNG_SEED.to_le_bytes());
    setup.extend_from_slice(&(RNG_SEED_LEN as u32).to_le_bytes());
    setup.extend_from_slice(rng_seed);
    write(mem, &setup, SETUP_DATA_ADDR, "setup_data")
}

/// The memory map: RAM below the EBDA, the legacy hole reserved, RAM from 1 MiB up.
fn set_e820(params: &mut boot_params, mem_end: u64) {
    let e820 = [
        (0, EBDA_START, E820_RAM),
        (EBDA_START, 0x10_0000 - EBDA_START, E820_RESERVED),
        (0x10_0000, mem_end - 0x10_0000, E820_RAM),
    ];
    for (i, &(addr, size, type_)) in e820.iter().enumerate() {
        params.e820_table[i] = boot_e820_entry {
            addr,
            size,
            r#type: type_,
        };
    }
    params.e820_entries = e820.len() as u8;
}

/// The boot GDT and the identity-mapped page tables the kernel's 64-bit entry expects.
fn write_gdt_and_page_tables(mem: &GuestMem) -> Result<()> {
    for (i, entry) in BOOT_GDT.iter().enumerate() {
        let addr = GDT_ADDR + 8 * i as u64;
        mem.write_obj(*entry, GuestAddress(addr))
            .map_err(|source| MemoryError::Write {
                what: "the GDT",
                addr,
                source,
            })?;
    }
    paging::write_identity_map(mem).map_err(|source| MemoryError::Write {
        what: "the page tables",
        addr: super::layout::PML4_ADDR,
        source,
    })?;
    Ok(())
}

fn write(mem: &GuestMem, bytes: &[u8], addr: u64, what: &'static str) -> Result<()> {
    mem.write_slice(bytes, GuestAddress(addr))
        .map_err(|source| MemoryError::Write { what, addr, source }.into())
}

fn check_elf_machine(kernel: &KernelImage) -> Result<()> {
    const EM_X86_64: u16 = 62;
    let class = kernel.bytes.get(4).copied();
    let machine = kernel
        .bytes
        .get(18..20)
        .map(|b| u16::from_le_bytes([b[0], b[1]]));
    if class != Some(2) || machine != Some(EM_X86_64) {
        let found = match machine {
            Some(243) => "RISC-V (use --arch riscv64)".to_string(),
            Some(183) => "AArch64".to_string(),
            Some(m) => format!("machine type {m}"),
            None => "a truncated header".to_string(),
        };
        return Err(format_error(
            kernel,
            format!("is an ELF for {found}, not 64-bit x86-64"),
        ));
    }
    Ok(())
}

/// Places the initrd page-aligned as high as allowed, above the kernel.
fn load_initrd(mem: &GuestMem, path: &Path, kernel_end: u64, addr_max: u64) -> Result<(u64, u64)> {
    let bytes = std::fs::read(path).map_err(|source| WioError::ArtifactIo {
        what: "initrd",
        path: path.to_path_buf(),
        source,
    })?;
    crate::initrd::check(path, &bytes)?;
    let size = bytes.len() as u64;
    let too_big = || WioError::ArtifactFormat {
        what: "initrd",
        path: path.to_path_buf(),
        reason: format!(
            "is {} KiB and does not fit between the kernel and {:#x}; raise --mem",
            size >> 10,
            addr_max
        ),
    };
    let addr = addr_max.checked_sub(size).ok_or_else(too_big)? & !0xfff;
    if addr < kernel_end {
        return Err(too_big());
    }
    write(mem, &bytes, addr, "initrd")?;
    Ok((addr, size))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::x86_64::layout;
    use crate::memory;

    #[test]
    fn detects_formats() {
        assert_eq!(detect_format(b"\x7fELF\x02\x01"), Some(KernelFormat::Elf));
        let mut bz = vec![0u8; 0x300];
        bz[0x1fe] = 0x55;
        bz[0x1ff] = 0xaa;
        bz[0x202..0x206].copy_from_slice(b"HdrS");
        assert_eq!(detect_format(&bz), Some(KernelFormat::BzImage));
        assert_eq!(detect_format(b"MZ garbage"), None);
        assert_eq!(detect_format(&[]), None);
    }

    #[test]
    fn rejects_garbage_with_a_message() {
        let mem = memory::allocate(0, 32 << 20).unwrap();
        let kernel = KernelImage {
            name: "junk.bin".into(),
            bytes: vec![0x42; 4096],
        };
        let spec = BootSpec {
            kernel: &kernel,
            initrd: None,
            cmdline: "",
            rng_seed: [0; 32],
            virtio: &[],
            vmgenid: [0; vmgenid::ID_LEN],
        };
        let err = load(&mem, &spec).unwrap_err();
        assert!(
            err.to_string().contains("not an x86-64 ELF or bzImage"),
            "{err}"
        );
        assert_eq!(err.exit_code(), crate::error::exit_code::BAD_ARTIFACT);
    }

    #[test]
    fn rejects_a_riscv_elf() {
        let mem = memory::allocate(0, 32 << 20).unwrap();
        let mut bytes = vec![0u8; 64];
        bytes[..4].copy_from_slice(b"\x7fELF");
        bytes[4] = 2;
        bytes[18] = 243;
        let kernel = KernelImage {
            name: "Image".into(),
            bytes,
        };
        let spec = BootSpec {
            kernel: &kernel,
            initrd: None,
            cmdline: "",
            rng_seed: [0; 32],
            virtio: &[],
            vmgenid: [0; vmgenid::ID_LEN],
        };
        let err = load(&mem, &spec).unwrap_err();
        assert!(err.to_string().contains("RISC-V"), "{err}");
    }

    #[test]
    fn writes_rng_seed_setup_data() {
        let mem = memory::allocate(0, 32 << 20).unwrap();
        let kernel = KernelImage {
            name: "guest".into(),
            bytes: super::super::testguest::X86_64_TEST_GUEST.to_vec(),
        };
        let spec = BootSpec {
            kernel: &kernel,
            initrd: None,
            cmdline: "quiet",
            rng_seed: [7; 32],
            virtio: &[],
            vmgenid: [0; vmgenid::ID_LEN],
        };
        let info = load(&mem, &spec).unwrap();
        assert_eq!(info.format, KernelFormat::Elf);
        assert_eq!(info.entry, KERNEL_LOAD_ADDR);
        let ty: u32 = mem.read_obj(GuestAddress(SETUP_DATA_ADDR + 8)).unwrap();
        assert_eq!(ty, SETUP_RNG_SEED);
        let b: u8 = mem.read_obj(GuestAddress(SETUP_DATA_ADDR + 16)).unwrap();
        assert_eq!(b, 7);
        let ptr: u32 = mem.read_obj(GuestAddress(ZERO_PAGE_ADDR + 0x228)).unwrap();
        assert_eq!(u64::from(ptr), CMDLINE_ADDR);
    }

    #[test]
    fn loads_a_bzimage_at_its_64_bit_entry() {
        let mem = memory::allocate(0, 32 << 20).unwrap();
        let kernel = KernelImage {
            name: "bzImage".into(),
            bytes: super::super::testguest::X86_64_TEST_GUEST_BZIMAGE.to_vec(),
        };
        let spec = BootSpec {
            kernel: &kernel,
            initrd: None,
            cmdline: "console=ttyS0",
            rng_seed: [1; 32],
            virtio: &[],
            vmgenid: [0; vmgenid::ID_LEN],
        };
        let info = load(&mem, &spec).unwrap();
        assert_eq!(info.format, KernelFormat::BzImage);
        assert_eq!(info.entry, KERNEL_LOAD_ADDR + BZIMAGE_64BIT_ENTRY_OFFSET);
        let params: boot_params = mem.read_obj(GuestAddress(ZERO_PAGE_ADDR)).unwrap();
        assert_eq!({ params.hdr.header }, KERNEL_HDR_MAGIC);
        assert_eq!(
            { params.hdr.version },
            0x020f,
            "the kernel's own setup header is kept"
        );
        assert_eq!({ params.hdr.type_of_loader }, KERNEL_LOADER_OTHER);
        assert_eq!({ params.hdr.cmd_line_ptr }, CMDLINE_ADDR as u32);
        assert_eq!({ params.e820_entries }, 3);
    }

    #[test]
    fn writes_acpi_tables_describing_the_virtio_slots() {
        let mem = memory::allocate(0, 64 << 20).unwrap();
        let kernel = KernelImage {
            name: "bzImage".into(),
            bytes: super::super::testguest::X86_64_TEST_GUEST_BZIMAGE.to_vec(),
        };
        let slots: Vec<_> = (0..3)
            .map(crate::arch::x86_64::platform::virtio_slot)
            .collect();
        let spec = BootSpec {
            kernel: &kernel,
            initrd: None,
            cmdline: "console=ttyS0",
            rng_seed: [1; 32],
            virtio: &slots,
            vmgenid: [0x5a; vmgenid::ID_LEN],
        };
        load(&mem, &spec).unwrap();
        let params: boot_params = mem.read_obj(GuestAddress(ZERO_PAGE_ADDR)).unwrap();
        assert_eq!({ params.acpi_rsdp_addr }, acpi::RSDP_ADDR);
        // The RSDP is where Linux also scans for it, inside the e820-reserved BIOS area.
        let mut area = vec![0u8; (layout::ACPI_END - layout::ACPI_START) as usize];
        mem.read_slice(&mut area, GuestAddress(layout::ACPI_START))
            .unwrap();
        let at = (acpi::RSDP_ADDR - layout::ACPI_START) as usize;
        assert_eq!(&area[at..at + 8], b"RSD PTR ");
        let hid = b"LNRO0005\0";
        let devices = area.windows(hid.len()).filter(|w| w == hid).count();
        assert_eq!(devices, 3, "one DSDT device per slot");
        // The VM generation ID is at the address its ACPI device names, in the same area.
        let at = (layout::VMGENID_ADDR - layout::ACPI_START) as usize;
        assert_eq!(area[at..at + vmgenid::ID_LEN], [0x5a; vmgenid::ID_LEN]);
    }

    #[test]
    fn places_the_initrd_high_and_page_aligned() {
        let dir = std::env::temp_dir().join(format!("wio-initrd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("initrd.img");
        let mut cpio = b"070701".to_vec();
        cpio.resize(10_000, 0xab);
        std::fs::write(&path, cpio).unwrap();
        let mem = memory::allocate(0, 64 << 20).unwrap();
        let kernel = KernelImage {
            name: "guest".into(),
            bytes: super::super::testguest::X86_64_TEST_GUEST.to_vec(),
        };
        let spec = BootSpec {
            kernel: &kernel,
            initrd: Some(&path),
            cmdline: "",
            rng_seed: [0; 32],
            virtio: &[],
            vmgenid: [0; vmgenid::ID_LEN],
        };
        let info = load(&mem, &spec).unwrap();
        let (addr, size) = info.initrd.unwrap();
        assert_eq!(size, 10_000);
        assert_eq!(addr % 4096, 0);
        assert!(
            addr + size <= 64 << 20 && addr > (32 << 20),
            "initrd at {addr:#x}"
        );
        let b: u8 = mem.read_obj(GuestAddress(addr + 9_999)).unwrap();
        assert_eq!(b, 0xab);
        let params: boot_params = mem.read_obj(GuestAddress(ZERO_PAGE_ADDR)).unwrap();
        let ramdisk_image = params.hdr.ramdisk_image;
        assert_eq!(u64::from(ramdisk_image), addr);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
