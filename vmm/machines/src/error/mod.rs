//! wio's errors and the process exit codes they map to.
//!
//! A guest's own exit status (0..=99) passes straight through as wio's exit
//! code; wio's own failures use 100 and above, so a script can always tell
//! "the guest said so" from "wio could not run it".

use std::path::PathBuf;

// The modules' own error types live here, in children of `error` that import only
// `WioError` and the leaves `devices` and `snapshot::persist`, never the modules that
// raise them: so `WioError` can hold them, and `exit_code` below decide their codes in one
// place, without an import cycle (ci/layout_check.py).
mod bench;
mod crash;
mod explore;
mod faults;
mod guests;
mod internal;
mod kvm;
mod machine;
mod memory;
mod path;
mod report;
mod scenario;
mod shrink;
mod snapshot;
mod trace;
mod world;

pub use bench::{BenchError, BenchFailure};
pub use crash::{
    CrashError, DebuggerError, EngineCrash, ListenStep, NondeterminismError, ResetDevice, Rip,
};
pub use explore::ExploreError;
pub use faults::{FaultsError, PlanError, ProfileError, RateError};
pub use guests::GuestsError;
pub use internal::InternalError;
pub use kvm::{KvmError, NoKvmError};
pub use machine::{MachineError, RestartWhy};
pub use memory::MemoryError;
pub use path::{PathError, PathSyntax};
pub use report::ReportCheckError;
pub use scenario::{NodeArgsError, ScenarioError};
pub use shrink::ShrinkError;
pub use snapshot::SnapshotError;
pub use trace::TraceError;
pub use world::{NotHere, WorldError};

/// Highest guest status that passes through unchanged; larger ones are clamped.
pub const MAX_GUEST_STATUS: u32 = 99;

/// Process exit codes for wio's own failures (documented in README.md).
pub mod exit_code {
    /// The command line was wrong (unknown flag, bad value).
    pub const USAGE: i32 = 100;
    /// A guest artifact (kernel, initrd) is missing, unreadable, of the wrong format or too large.
    pub const BAD_ARTIFACT: i32 = 101;
    /// Hardware virtualization is unavailable: no /dev/kvm, no permission, or an unusable KVM.
    pub const NO_VIRTUALIZATION: i32 = 102;
    /// The guest crashed: triple fault, reset request, or an exit KVM could not handle.
    pub const GUEST_CRASH: i32 = 103;
    /// Determinism could not be guaranteed (for example a guest running too long without exits).
    pub const NONDETERMINISM: i32 = 104;
    /// A host-side output (trace, summary) could not be written.
    pub const OUTPUT: i32 = 105;
    /// The guest did not exit before the virtual-time limit.
    pub const TIME_LIMIT: i32 = 106;
    /// An internal wio error: a bug; please report it with the command line.
    pub const INTERNAL: i32 = 107;
    /// A promise the guest's programs made failed (violated, never reached, never true).
    pub const PROMISE: i32 = 108;
    /// A trace failed verification: its hash chain is broken (tampered or damaged).
    pub const TRACE_INVALID: i32 = 109;
    /// A debugger ended the run (gdb's `kill`) or could not be served (`--gdb`).
    pub const DEBUGGER: i32 = 110;
    /// Ctrl-C or SIGTERM ended the run (128 + SIGINT, as shells report it).
    pub const INTERRUPTED: i32 = 130;
}

/// Everything that can stop wio before or during a run.
#[derive(Debug, thiserror::Error)]
pub enum WioError {
    /// Bad command-line value that clap could not catch.
    #[error("{0}")]
    Usage(String),
    /// A guest artifact could not be read.
    #[error("cannot read {what} {path}: {source}; check the path and permissions")]
    ArtifactIo {
        /// Which artifact ("kernel", "initrd").
        what: &'static str,
        /// Where it was looked for.
        path: PathBuf,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// A guest artifact has the wrong format or does not fit.
    #[error("{what} {path}: {reason}")]
    ArtifactFormat {
        /// Which artifact ("kernel", "initrd").
        what: &'static str,
        /// Where it came from.
        path: PathBuf,
        /// What is wrong and what to do.
        reason: String,
    },
    /// KVM is missing or unusable on this host.
    #[error("KVM unavailable: {0}")]
    NoKvm(#[from] NoKvmError),
    /// The guest crashed.
    #[error("guest crashed: {0}")]
    GuestCrash(#[from] CrashError),
    /// The run could not be kept deterministic.
    #[error("determinism failure: {0}")]
    Nondeterminism(#[from] NondeterminismError),
    /// An output file could not be written.
    #[error("cannot write {what} {path}: {source}")]
    Output {
        /// Which output ("trace", "summary").
        what: &'static str,
        /// Where it was to go.
        path: PathBuf,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// The guest did not finish within the virtual-time limit.
    #[error("guest did not exit within the virtual-time limit of {limit_ns} ns; raise --max-virtual-secs or check the guest")]
    TimeLimit {
        /// The limit in virtual nanoseconds.
        limit_ns: u64,
    },
    /// A wio invariant that did not hold (see [`InternalError`]).
    #[error("internal error: {0}")]
    Invariant(#[from] InternalError),
    /// A value wio made could not be encoded as JSON (a summary, report, plan, checkpoint).
    #[error("internal error: cannot encode the {what} as JSON: {source}")]
    Encode {
        /// What was being encoded (`"summary"`).
        what: &'static str,
        /// serde_json's error.
        #[source]
        source: serde_json::Error,
    },
    /// A run wio started for itself ended without a result (cancelled, or its thread gone).
    #[error("internal error: {what} ended without a result")]
    NoResult {
        /// Which run (`"a shrink probe"`).
        what: &'static str,
    },
    /// A call to the host that cannot fail in a sane process did.
    #[error("internal error: {what}: {source}")]
    Host {
        /// What wio was doing (`"finding the wio binary"`).
        what: &'static str,
        /// The host's error.
        #[source]
        source: std::io::Error,
    },
    /// The machine's instruction clock refused a drift (out of its range).
    #[error("internal error: riscv64 clock: {0}")]
    Clock(#[from] wio_clock::InstructionClockError),
    /// A KVM call failed unexpectedly (a bug, or a KVM wio cannot use); keeps the errno.
    #[error("internal error: {0}")]
    Kvm(#[from] KvmError),
    /// A snapshot cannot be taken now, or `--snapshot-at` names no point.
    #[error("{0}")]
    Snapshot(#[from] SnapshotError),
    /// Guest memory cannot be had on this host.
    #[error("{0}")]
    Memory(#[from] MemoryError),
    /// A guided exploration's path that does not parse or fit its snapshot.
    #[error("{0}")]
    Path(#[from] PathError),
    /// A world that cannot run as asked, or be snapshotted where asked.
    #[error("{0}")]
    World(#[from] WorldError),
    /// A built guest or disk that is unknown or not in the cache.
    #[error("{0}")]
    Guests(#[from] GuestsError),
    /// An exploration's options, reports or checkpoint that do not fit.
    #[error("{0}")]
    Explore(#[from] ExploreError),
    /// A shrink or a verification whose inputs do not fit.
    #[error("{0}")]
    Shrink(#[from] ShrinkError),
    /// A machine configuration, boot image or debugger request that does not fit.
    #[error("{0}")]
    Machine(#[from] MachineError),
    /// A benchmark option that does not fit.
    #[error("{0}")]
    Bench(#[from] BenchError),
    /// A benchmark's own guest or world did not behave as the benchmark needs.
    #[error("{0}")]
    BenchFailed(#[from] BenchFailure),
    /// Faults that do not fit this run.
    #[error("{0}")]
    Faults(#[from] FaultsError),
    /// A `--node-args` value that does not fit the scenario.
    #[error("{0}")]
    NodeArgs(#[from] NodeArgsError),
    /// A scenario file does not parse or check.
    #[error("{0}")]
    Scenario(#[from] ScenarioError),
    /// A fault plan file does not parse or check.
    #[error("fault plan {path}: {source}")]
    FaultPlan {
        /// The plan file.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        source: PlanError,
    },
    /// A fault profile file does not parse or check.
    #[error("fault profile {path}: {source}")]
    FaultProfile {
        /// The profile file.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        source: ProfileError,
    },
    /// A report file is not one `wio explore` could have written.
    #[error("report {path}: {source}")]
    Report {
        /// The report file.
        path: PathBuf,
        /// What is impossible about it.
        #[source]
        source: ReportCheckError,
    },
    /// A trace file's hash chain does not hold.
    #[error("trace {path} is invalid: {source}")]
    TraceInvalid {
        /// The trace file.
        path: PathBuf,
        /// Where and how the chain breaks.
        #[source]
        source: TraceError,
    },
    /// A debugger ended the run, or could not be served.
    #[error("{0}")]
    Debugger(#[from] DebuggerError),
    /// Ctrl-C or SIGTERM ended the run (at this virtual time, ns).
    #[error("interrupted (Ctrl-C or SIGTERM) at virtual {0} ns; the trace and summary cover the run up to there")]
    Interrupted(u64),
    /// The seccomp sandbox could not be installed.
    #[error("sandbox: {0}")]
    Sandbox(#[from] crate::sandbox::SandboxError),
    /// A container image that cannot be imported or is not in the cache.
    #[error("{0}")]
    Image(#[from] wio_images::ImageError),
    /// Promises failed: how many, and the first one's verdict and message.
    #[error("{count} promise(s) failed; first: {first}")]
    Promise {
        /// How many promises did not pass.
        count: usize,
        /// The first failing one ("VIOLATED Always \"balance never negative\"").
        first: String,
    },
}

impl WioError {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            // A replay that is not the recording: what determinism failures exit with.
            WioError::World(WorldError::TapeDiverged { .. }) => exit_code::NONDETERMINISM,
            // What the host or wio itself failed at, not the user's input.
            WioError::Memory(
                MemoryError::Extents { .. }
                | MemoryError::Overflows { .. }
                | MemoryError::Regions { .. }
                | MemoryError::Place { .. }
                | MemoryError::Write { .. }
                | MemoryError::HostAddress { .. },
            )
            | WioError::Snapshot(SnapshotError::State { .. })
            | WioError::World(
                WorldError::ThreadSpawn { .. }
                | WorldError::ThreadDied { .. }
                | WorldError::Port { .. },
            ) => exit_code::INTERNAL,
            WioError::Usage(_)
            | WioError::Snapshot(_)
            | WioError::Memory(_)
            | WioError::Path(_)
            | WioError::Bench(_)
            | WioError::Machine(_)
            | WioError::Shrink(_)
            | WioError::Explore(_)
            | WioError::Guests(_)
            | WioError::World(_)
            | WioError::Faults(_)
            | WioError::NodeArgs(_) => exit_code::USAGE,
            WioError::ArtifactIo { .. }
            | WioError::ArtifactFormat { .. }
            | WioError::Scenario(_)
            | WioError::FaultPlan { .. }
            | WioError::FaultProfile { .. }
            | WioError::Report { .. } => exit_code::BAD_ARTIFACT,
            WioError::NoKvm(_) => exit_code::NO_VIRTUALIZATION,
            WioError::GuestCrash(_) => exit_code::GUEST_CRASH,
            WioError::Nondeterminism(_) => exit_code::NONDETERMINISM,
            WioError::Output { .. } => exit_code::OUTPUT,
            WioError::TimeLimit { .. } => exit_code::TIME_LIMIT,
            WioError::BenchFailed(BenchFailure::StaleGuest { .. }) => exit_code::BAD_ARTIFACT,
            WioError::BenchFailed(_)
            | WioError::Invariant(_)
            | WioError::Encode { .. }
            | WioError::NoResult { .. }
            | WioError::Host { .. }
            | WioError::Clock(_)
            | WioError::Kvm(_)
            | WioError::Sandbox(_) => exit_code::INTERNAL,
            WioError::Image(e) => {
                use wio_images::ImageError as I;
                match e {
                    I::Cache { .. } | I::NoCache | I::Record { .. } => exit_code::OUTPUT,
                    I::TooSmall { .. }
                    | I::Ambiguous { .. }
                    | I::NoSuchRef { .. }
                    | I::NotImported { .. }
                    | I::NoProgram { .. } => exit_code::USAGE,
                    _ => exit_code::BAD_ARTIFACT,
                }
            }
            WioError::Promise { .. } => exit_code::PROMISE,
            WioError::TraceInvalid { .. } => exit_code::TRACE_INVALID,
            WioError::Debugger(_) => exit_code::DEBUGGER,
            WioError::Interrupted(_) => exit_code::INTERRUPTED,
        }
    }
}

/// Shorthand for results in wio.
pub type Result<T> = std::result::Result<T, WioError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forbidden_system_call_ends_with_the_internal_error_code() {
        assert_eq!(crate::sandbox::FORBIDDEN_EXIT, exit_code::INTERNAL);
    }

    /// Each typed variant exits with the code its errors had as strings (the README's
    /// table): files that do not check are bad artifacts, a broken trace is invalid, a
    /// failed KVM call is internal.
    #[test]
    fn typed_errors_keep_their_exit_codes() {
        let path = PathBuf::from("f");
        let cases: Vec<(WioError, i32)> = vec![
            (
                SnapshotError::BadPoint { text: "x".into() }.into(),
                exit_code::USAGE,
            ),
            (MemoryError::TooLarge { size: 1 }.into(), exit_code::USAGE),
            (
                MemoryError::Overflows { base: 1, size: 2 }.into(),
                exit_code::INTERNAL,
            ),
            (
                WorldError::ThreadDied { booting: false }.into(),
                exit_code::INTERNAL,
            ),
            (
                WioError::Encode {
                    what: "summary",
                    source: serde_json::from_str::<u8>("x").unwrap_err(),
                },
                exit_code::INTERNAL,
            ),
            (
                WioError::NoResult {
                    what: "a verify run",
                },
                exit_code::INTERNAL,
            ),
            (
                WioError::Host {
                    what: "finding the wio binary",
                    source: std::io::Error::from(std::io::ErrorKind::NotFound),
                },
                exit_code::INTERNAL,
            ),
            (
                wio_clock::InstructionClock::with_drift(1, i32::MAX)
                    .unwrap_err()
                    .into(),
                exit_code::INTERNAL,
            ),
            (
                KvmError::FpuShape { fpr: 7, xmm: 16 }.into(),
                exit_code::INTERNAL,
            ),
            (
                PathError::StepNotAfter {
                    at_ns: 1,
                    start_ns: 2,
                }
                .into(),
                exit_code::USAGE,
            ),
            (GuestsError::NoCache.into(), exit_code::USAGE),
            (
                BenchFailure::StaleGuest {
                    guest: "race guest",
                    reached: "printed \"race: start\"".into(),
                    needs: "wio-race",
                }
                .into(),
                exit_code::BAD_ARTIFACT,
            ),
            (
                BenchFailure::ReverseStep { from: 2, landed: 0 }.into(),
                exit_code::INTERNAL,
            ),
            (
                NoKvmError::CreateVm(vmm_sys_util::errno::Error::new(libc::EINVAL)).into(),
                exit_code::NO_VIRTUALIZATION,
            ),
            (
                MachineError::TooManyBreakpoints { max: 4 }.into(),
                exit_code::USAGE,
            ),
            (
                BenchError::SearchForm {
                    form: "x".into(),
                    known: "y".into(),
                }
                .into(),
                exit_code::USAGE,
            ),
            (
                ShrinkError::TooManyProbes { max: 1 }.into(),
                exit_code::USAGE,
            ),
            (
                ExploreError::MissingShards {
                    missing: vec![1, 3],
                    count: 4,
                }
                .into(),
                exit_code::USAGE,
            ),
            (
                WorldError::PlanNode { name: "x".into() }.into(),
                exit_code::USAGE,
            ),
            (
                PathError::Syntax {
                    text: "1@".into(),
                    why: PathSyntax::Empty,
                }
                .into(),
                exit_code::USAGE,
            ),
            (
                FaultsError::NoProfile { arg: "x".into() }.into(),
                exit_code::USAGE,
            ),
            (
                NodeArgsError::NoArgs { arg: "a=".into() }.into(),
                exit_code::USAGE,
            ),
            (
                ScenarioError::about("node", "no [[node]]").into(),
                exit_code::BAD_ARTIFACT,
            ),
            (
                WioError::FaultPlan {
                    path: path.clone(),
                    source: PlanError::TooMany { count: 2, max: 1 },
                },
                exit_code::BAD_ARTIFACT,
            ),
            (
                WioError::FaultProfile {
                    path: path.clone(),
                    source: ProfileError::Window {
                        start_ms: 2,
                        end_ms: 1,
                    },
                },
                exit_code::BAD_ARTIFACT,
            ),
            (
                WioError::Report {
                    path: path.clone(),
                    source: ReportCheckError::SeedOrder { seed: 3 },
                },
                exit_code::BAD_ARTIFACT,
            ),
            (
                WioError::TraceInvalid {
                    path,
                    source: TraceError::ChainBroken { line: 2 },
                },
                exit_code::TRACE_INVALID,
            ),
            (
                KvmError::new(
                    "KVM_SET_REGS",
                    vmm_sys_util::errno::Error::new(libc::EINVAL),
                )
                .into(),
                exit_code::INTERNAL,
            ),
        ];
        for (e, code) in cases {
            assert_eq!(e.exit_code(), code, "{e}");
        }
    }

    /// The typed errors read as their strings did.
    #[test]
    fn typed_errors_keep_their_text() {
        let e = WioError::TraceInvalid {
            path: "t.jsonl".into(),
            source: TraceError::ChainBroken { line: 2 },
        };
        assert_eq!(
            e.to_string(),
            "trace t.jsonl is invalid: line 2: chain broken"
        );
        let e = WioError::FaultProfile {
            path: "p.toml".into(),
            source: ProfileError::Rate {
                index: 0,
                source: RateError {
                    text: "x".into(),
                    why: "not a number",
                },
            },
        };
        assert_eq!(
            e.to_string(),
            "fault profile p.toml: rule[0].rate_per_bit_s: rate \"x\": not a number (write it like \"1.16e-12\")"
        );
        let e: WioError = KvmError::new(
            "KVM_SET_REGS",
            vmm_sys_util::errno::Error::new(libc::EINVAL),
        )
        .into();
        assert!(
            e.to_string().starts_with("internal error: KVM_SET_REGS: "),
            "{e}"
        );
        assert!(std::error::Error::source(&e).is_some(), "keeps the errno");
    }
}
