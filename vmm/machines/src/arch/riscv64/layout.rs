//! The riscv64 machine's physical memory map (close to QEMU's `virt` board,
//! so kernels configured for it find their devices where they expect).

/// Goldfish RTC base.
pub const RTC_BASE: u64 = 0x0010_1000;
/// Goldfish RTC register window.
pub const RTC_SIZE: u64 = 0x1000;
/// The RTC's PLIC source.
pub const RTC_IRQ: u32 = 11;
/// The test device (SiFive's "test finisher", as on QEMU's `virt`): a 32-bit write of
/// [`TEST_PASS`] powers off, [`TEST_FAIL`] | code << 16 powers off with a failure code,
/// [`TEST_RESET`] reboots. Listed in the device tree of M-mode guests.
pub const TEST_BASE: u64 = 0x0010_0000;
/// Test device register window.
pub const TEST_SIZE: u64 = 0x1000;
/// Test device: power off, success.
pub const TEST_PASS: u32 = 0x5555;
/// Test device: power off with the failure code in the upper 16 bits.
pub const TEST_FAIL: u32 = 0x3333;
/// Test device: reset.
pub const TEST_RESET: u32 = 0x7777;
/// The flight I/O board of M-mode guests (see `devices::riscv::flight_io`).
pub const FLIGHT_IO_BASE: u64 = 0x1020_0000;
/// Flight I/O register window.
pub const FLIGHT_IO_SIZE: u64 = 0x1000;
/// The promise port of M-mode guests (see `devices::riscv::sdk_port`).
pub const SDK_PORT_BASE: u64 = 0x1020_1000;
/// Promise port register window.
pub const SDK_PORT_SIZE: u64 = 0x1000;
/// The EDAC unit of ECC memory (`--ecc`; see `devices::riscv::edac`).
pub const EDAC_BASE: u64 = 0x1020_2000;
/// EDAC register window.
pub const EDAC_SIZE: u64 = 0x1000;
/// The EDAC unit's PLIC source.
pub const EDAC_IRQ: u32 = 12;
/// The VM generation ID (see `devices::vmgenid`).
pub const VMGENID_BASE: u64 = 0x1020_3000;
/// VM generation ID register window.
pub const VMGENID_SIZE: u64 = 0x1000;
/// The VM generation ID's PLIC source (pulsed when the ID changes).
pub const VMGENID_IRQ: u32 = 13;
/// PLIC base.
pub const PLIC_BASE: u64 = 0x0c00_0000;
/// PLIC size.
pub const PLIC_SIZE: u64 = 0x0400_0000;
/// NS16550 UART base.
pub const UART_BASE: u64 = 0x1000_0000;
/// UART register window.
pub const UART_SIZE: u64 = 0x100;
/// The UART's PLIC source.
pub const UART_IRQ: u32 = 10;
/// First virtio-mmio slot.
pub const VIRTIO_BASE: u64 = 0x1000_1000;
/// Size of one virtio-mmio slot.
pub const VIRTIO_SIZE: u64 = 0x1000;
/// Number of virtio-mmio slots (PLIC sources 1..=8).
pub const VIRTIO_SLOTS: u32 = 8;
/// RAM base.
pub const RAM_BASE: u64 = 0x8000_0000;
/// Where the kernel Image goes: RAM base + the Image's text offset (2 MiB by default).
pub const KERNEL_DEFAULT_OFFSET: u64 = 0x20_0000;
/// Timebase frequency advertised to the guest (`time` ticks per second).
pub const TIMEBASE_HZ: u64 = 10_000_000;
/// Virtual nanoseconds per instruction (the hart's clock runs at 1 GHz).
pub const NS_PER_CYCLE: u64 = 1;
/// Cycles per `time` tick.
pub const CYCLES_PER_TICK: u64 = 1_000_000_000 / NS_PER_CYCLE / TIMEBASE_HZ;
/// Smallest RAM wio accepts for riscv64 guests, in MiB.
pub const MIN_MEM_MIB: u64 = 16;
/// Largest RAM, in MiB.
pub const MAX_MEM_MIB: u64 = 8192;
