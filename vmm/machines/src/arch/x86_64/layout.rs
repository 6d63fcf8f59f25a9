//! Fixed guest-physical addresses of the x86-64 machine.
//!
//! Everything below 1 MiB is wio's boot scratch space (GDT, page tables,
//! boot_params, command line, setup_data); kernels load at 1 MiB.

/// The boot GDT.
pub const GDT_ADDR: u64 = 0x500;
/// The Linux "zero page" (struct boot_params).
pub const ZERO_PAGE_ADDR: u64 = 0x7000;
/// Initial stack pointer (the guest sets up its own stack soon after entry).
pub const BOOT_STACK_ADDR: u64 = 0x8ff0;
/// Top-level page table (PML4).
pub const PML4_ADDR: u64 = 0x9000;
/// Page-directory-pointer table for the first 512 GiB.
pub const PDPT_ADDR: u64 = 0xa000;
/// First of [`IDENTITY_MAP_GIB`] page directories (2 MiB pages).
pub const PD_ADDR: u64 = 0xb000;
/// How many GiB the boot page tables identity-map.
pub const IDENTITY_MAP_GIB: u64 = 4;
/// The kernel command line.
pub const CMDLINE_ADDR: u64 = 0x2_0000;
/// Longest command line wio passes (Linux x86's COMMAND_LINE_SIZE).
pub const MAX_CMDLINE_BYTES: usize = 2048;
/// setup_data entries (the RNG seed).
pub const SETUP_DATA_ADDR: u64 = 0x3_0000;
/// Where conventional memory ends for the e820 map (EBDA and BIOS area above).
pub const EBDA_START: u64 = 0x9_fc00;
/// wio's ACPI tables (`acpi`): the BIOS area Linux scans for the RSDP (e820 reserved).
pub const ACPI_START: u64 = 0xe_0000;
/// End of the ACPI tables' area (1 MiB).
pub const ACPI_END: u64 = 0x10_0000;
// The tables sit in the e820-reserved area between the EBDA and 1 MiB.
const _: () = assert!(ACPI_START >= EBDA_START && ACPI_END <= KERNEL_LOAD_ADDR);
/// The VM generation ID's 16 bytes (`devices::vmgenid`): the last page of the ACPI area,
/// reserved memory the kernel maps and reads when the ID's device is notified. The tables
/// end below it.
pub const VMGENID_ADDR: u64 = ACPI_END - 0x1000;
/// Where kernels are loaded.
pub const KERNEL_LOAD_ADDR: u64 = 0x10_0000;
/// Highest address an initrd may end at (also bounded by the kernel's initrd_addr_max).
pub const MAX_INITRD_ADDR: u64 = 0x3800_0000;
/// Smallest guest memory wio accepts, in MiB.
pub const MIN_MEM_MIB: u64 = 16;
/// Largest guest memory wio accepts, in MiB: one RAM region below the 32-bit MMIO hole.
pub const MAX_MEM_MIB: u64 = 3072;
