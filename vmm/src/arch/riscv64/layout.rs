//! The riscv64 machine's physical memory map (close to QEMU's `virt` board,
//! so kernels configured for it find their devices where they expect).

/// Goldfish RTC base.
pub const RTC_BASE: u64 = 0x0010_1000;
/// Goldfish RTC register window.
pub const RTC_SIZE: u64 = 0x1000;
/// The RTC's PLIC source.
pub const RTC_IRQ: u32 = 11;
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
