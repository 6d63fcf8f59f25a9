//! x86-64 machine set-up: where things live in guest memory, how a kernel is
//! loaded and described to the guest (boot_params), and the CPU state and CPUID
//! profile the guest starts with.

pub mod boot;
pub mod cpuid;
pub mod gdt;
pub mod layout;
pub mod paging;
pub mod regs;
