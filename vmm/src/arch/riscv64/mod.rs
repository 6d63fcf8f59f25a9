//! RISC-V (riscv64) machine set-up: the memory map, the device tree, and
//! loading a Linux `Image` with its initrd, as a supervisor binary interface
//! (SBI) implementation would hand them to the kernel.

pub mod boot;
pub mod fdt;
pub mod layout;
