//! How a guest can end a run by crashing (exit 103), how determinism can fail (exit 104),
//! and how a debugger can end one (exit 110): each case a variant with the values it
//! names, so a program can tell them apart without reading the text.

use std::fmt;

/// Where an x86-64 guest's CPU was: its RIP, when the engine could read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rip(pub Option<u64>);

impl fmt::Display for Rip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(pc) => write!(f, "RIP {pc:#x}"),
            None => f.write_str("an unknown RIP"),
        }
    }
}

/// How a riscv64 guest asked to be reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetDevice {
    /// The SiFive test device's reset value.
    TestDevice,
    /// The SBI system-reset extension (SRST) with a reboot type.
    SbiSystemReset,
}

impl fmt::Display for ResetDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ResetDevice::TestDevice => "test device reset",
            ResetDevice::SbiSystemReset => "SBI system reset",
        })
    }
}

/// Why a CPU engine stopped on something it cannot run past (`engine::Exit::Crash`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineCrash {
    /// KVM_EXIT_INTERNAL_ERROR: an instruction KVM cannot emulate.
    #[error(
        "KVM internal error (suberror {suberror}); the guest executed something KVM cannot emulate"
    )]
    KvmInternal {
        /// KVM's suberror code.
        suberror: u32,
    },
    /// KVM_EXIT_FAIL_ENTRY: the hardware refused to enter the guest.
    #[error("KVM could not enter the guest (hardware reason {reason:#x})")]
    FailEntry {
        /// The hardware's reason code.
        reason: u64,
    },
    /// An exit the engine has no handling for.
    #[error("unexpected KVM exit {exit}")]
    UnexpectedExit {
        /// The exit as KVM's bindings print it.
        exit: String,
    },
}

/// The guest crashed: wio cannot run it further (exit 103).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CrashError {
    /// A riscv64 guest asked for a reboot; wio does not reboot guests.
    #[error(
        "guest requested a reboot ({device}) at pc {pc:#x}; a Linux panic with panic=-1 ends here"
    )]
    RebootRequest {
        /// How it asked.
        device: ResetDevice,
        /// The hart's pc.
        pc: u64,
    },
    /// An x86-64 guest pulsed the i8042's reset line; wio does not reboot guests.
    #[error("guest requested a CPU reset (i8042) near {near}; wio does not reboot guests (a Linux panic with panic=-1 ends here)")]
    CpuReset {
        /// Where the CPU was.
        near: Rip,
    },
    /// A riscv64 hart waits in WFI with nothing that could ever wake it.
    #[error("guest waits for an interrupt (WFI at pc {pc:#x}) with no timer armed and no device pending: it can never wake up")]
    WaitsForever {
        /// The pc of the WFI.
        pc: u64,
    },
    /// An x86-64 guest halted with nothing that could ever wake it.
    #[error(
        "guest halted at {near} with no timer armed and no interrupt pending: it can never wake up"
    )]
    HaltsForever {
        /// Where the CPU halted.
        near: Rip,
    },
    /// An x86-64 triple fault (KVM's shutdown exit).
    #[error("triple fault (shutdown) near {near}; the guest hit an exception it could not handle")]
    TripleFault {
        /// Where the CPU was.
        near: Rip,
    },
    /// The engine stopped on something it cannot run past.
    #[error("{why} near {near}")]
    Engine {
        /// What the engine met.
        why: EngineCrash,
        /// Where the CPU was.
        near: Rip,
    },
    /// `wio bench`'s bare KVM loop met an exit other than port I/O.
    #[error("bare loop: unexpected exit {exit}")]
    BareLoop {
        /// The exit as KVM's bindings print it.
        exit: String,
    },
}

/// Determinism could not be kept, or two runs that must agree did not (exit 104).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NondeterminismError {
    /// A KVM guest ran past the watchdog without an exit: preempting it would depend on
    /// host timing.
    #[error("guest ran more than {watchdog_ms} ms of wall time without a VM exit, at {near}; on KVM wio can preempt a guest only at exits, so kicking it would make the run depend on host timing. Make the guest halt or do I/O in its loops; raise --watchdog-ms if the host is just slow")]
    NoExit {
        /// The watchdog's limit, wall ms.
        watchdog_ms: u64,
        /// Where the CPU was.
        near: Rip,
    },
    /// Two reports being merged give one seed two trace hashes.
    #[error("seed {seed} has two different trace hashes in the reports ({first} and {second})")]
    SeedHashes {
        /// The seed.
        seed: u64,
        /// The hash the first report gives.
        first: String,
        /// The hash another report gives.
        second: String,
    },
    /// A branch rerun with its faults listed explicitly did not fail the same way.
    #[error("{branch} with its own faults listed explicitly keeps {message:?}: a fault the list cannot express changed the run (please report)")]
    ExplicitFaults {
        /// The branch ("seed 7").
        branch: String,
        /// The promise's message it kept.
        message: String,
    },
    /// A run under the debugger ended with another trace hash than the plain run.
    #[error("the run under the debugger has trace hash {debugged}, the plain run {plain}")]
    Debugged {
        /// The plain run's trace hash.
        plain: String,
        /// The debugged run's trace hash.
        debugged: String,
    },
}

/// A debugger ended the run, or could not be served (exit 110).
#[derive(Debug, thiserror::Error)]
pub enum DebuggerError {
    /// gdb's `kill` ended a machine's run.
    #[error("gdb killed the run at {at_ns} ns{}", retired_text(.retired))]
    Killed {
        /// Virtual time, ns.
        at_ns: u64,
        /// Instructions retired (riscv64), when known.
        retired: Option<u64>,
    },
    /// gdb's `kill` ended a world's node.
    #[error("gdb killed the node at {at_ns} ns")]
    KilledNode {
        /// Virtual time, ns.
        at_ns: u64,
    },
    /// `--gdb ADDR` could not be listened on, or gdb not accepted there.
    #[error("--gdb {addr}: {step}{source}{}", step.hint())]
    Listen {
        /// The address given.
        addr: String,
        /// What failed.
        step: ListenStep,
        /// The host's error.
        #[source]
        source: std::io::Error,
    },
    /// The remote protocol failed (the connection, or a packet gdbstub could not serve).
    #[error("gdb: {0}")]
    Protocol(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Which step of waiting for gdb failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListenStep {
    /// Binding the address.
    Bind,
    /// Reading back the bound address.
    LocalAddress,
    /// Accepting gdb's connection.
    Accept,
}

impl ListenStep {
    /// What to do about it, when there is something to say.
    fn hint(self) -> &'static str {
        match self {
            ListenStep::Bind => " (give a free host:port, e.g. 127.0.0.1:1234)",
            ListenStep::LocalAddress | ListenStep::Accept => "",
        }
    }
}

impl fmt::Display for ListenStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ListenStep::Bind => "cannot listen there: ",
            ListenStep::LocalAddress => "",
            ListenStep::Accept => "accepting gdb: ",
        })
    }
}

fn retired_text(retired: &Option<u64>) -> String {
    retired
        .map(|n| format!(" ({n} instructions retired)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{exit_code, WioError};

    /// Each typed case reads as its text did when it was a string, and keeps its exit code.
    #[test]
    fn crashes_and_determinism_failures_keep_their_text_and_code() {
        let near = Rip(Some(0x1000));
        let cases: Vec<(WioError, &str, i32)> = vec![
            (
                CrashError::RebootRequest { device: ResetDevice::SbiSystemReset, pc: 0x80 }.into(),
                "guest crashed: guest requested a reboot (SBI system reset) at pc 0x80; a Linux panic with panic=-1 ends here",
                exit_code::GUEST_CRASH,
            ),
            (
                CrashError::TripleFault { near }.into(),
                "guest crashed: triple fault (shutdown) near RIP 0x1000; the guest hit an exception it could not handle",
                exit_code::GUEST_CRASH,
            ),
            (
                CrashError::Engine { why: EngineCrash::FailEntry { reason: 0x21 }, near: Rip(None) }.into(),
                "guest crashed: KVM could not enter the guest (hardware reason 0x21) near an unknown RIP",
                exit_code::GUEST_CRASH,
            ),
            (
                NondeterminismError::SeedHashes { seed: 3, first: "a".into(), second: "b".into() }.into(),
                "determinism failure: seed 3 has two different trace hashes in the reports (a and b)",
                exit_code::NONDETERMINISM,
            ),
            (
                DebuggerError::Killed { at_ns: 5, retired: Some(9) }.into(),
                "gdb killed the run at 5 ns (9 instructions retired)",
                exit_code::DEBUGGER,
            ),
            (
                DebuggerError::Listen {
                    addr: "x:1".into(),
                    step: ListenStep::Bind,
                    source: std::io::Error::other("in use"),
                }
                .into(),
                "--gdb x:1: cannot listen there: in use (give a free host:port, e.g. 127.0.0.1:1234)",
                exit_code::DEBUGGER,
            ),
        ];
        for (e, text, code) in cases {
            assert_eq!(e.to_string(), text);
            assert_eq!(e.exit_code(), code, "{text}");
        }
    }
}
