//! Failures inside wio that a correct wio never meets (exit 107, "please report"): each
//! a variant naming what broke, so a report says which invariant failed.

/// A wio invariant that did not hold.
#[derive(Debug, thiserror::Error)]
pub enum InternalError {
    /// vm-fdt refused the device tree wio built.
    #[error("building the device tree: {0}")]
    DeviceTree(#[source] vm_fdt::Error),
    /// The riscv64 engine stopped for a reason its machine does not serve.
    #[error("the RISC-V engine returned {exit}")]
    RiscvExit {
        /// The exit, as the engine's type prints it.
        exit: String,
    },
    /// The x86-64 engine reported an exit only interpreters make.
    #[error("the x86-64 engine reported {exit} near {near}; x86-64 guests have none")]
    X86Exit {
        /// The exit, as the engine's type prints it.
        exit: String,
        /// Where the CPU was.
        near: super::Rip,
    },
    /// A paused or crashed machine with no event queued to end the pause or restart it.
    #[error("the machine is stopped and nothing is left to restart it")]
    StoppedForGood,
    /// An interrupt injected into an engine that takes none.
    #[error("this engine takes no injected interrupts (vector {vector})")]
    NoInjection {
        /// The vector.
        vector: u8,
    },
    /// A snapshot refused the code a branch restored from it learned (see
    /// `LoadedSnapshot::learn`): what a hart decoded and built, merged with the snapshot's
    /// own, must always prepare.
    #[error("the snapshot refused the code its branch learned: {0}")]
    LearnedCode(#[source] wio_riscv::state::StateError),
    /// An operation a test's stand-in machine or snapshot (scripted, synthetic, fake)
    /// does not model.
    #[error("{what} is not modelled by this stand-in")]
    NotModelled {
        /// What was asked (`"a snapshot of a scripted machine"`).
        what: &'static str,
    },
}
