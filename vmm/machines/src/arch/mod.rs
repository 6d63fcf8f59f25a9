//! The two machines wio builds, one folder each; neither imports the other. Both
//! implement `crate::machine::Machine`.

pub mod riscv64;
pub mod x86_64;
