//! The x86-64 machine on KVM: where things live in guest memory, how a kernel is loaded
//! and described to the guest (boot_params), the CPU state and CPUID profile it starts
//! with, the KVM vCPU engine and its watchdog, the PC platform, the run loop, and the
//! machine that puts them together.

pub mod acpi;
pub mod boot;
pub mod cpuid;
pub mod gdb;
pub mod gdt;
pub mod host;
pub mod kvm;
pub mod layout;
pub mod machine;
pub mod paging;
pub mod platform;
mod power;
pub mod regs;
pub mod run_loop;
pub mod snapshot;
pub mod testguest;
mod watchdog;

pub use snapshot::X86Loaded;
