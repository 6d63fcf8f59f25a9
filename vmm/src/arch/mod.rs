//! Architecture-specific machine set-up: memory layout, boot protocol and
//! initial CPU state for each guest architecture wio runs.

pub mod x86_64;
