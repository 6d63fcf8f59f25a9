//! Architecture-specific machine set-up: memory layout, boot protocol and
//! initial CPU state for each guest architecture wio runs.

pub mod riscv64;
pub mod x86_64;
