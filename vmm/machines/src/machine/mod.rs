//! What every machine shares, whatever its architecture: the run configuration and
//! result, the console, the virtio devices and disk, the built-guest lookup, and the
//! [`Machine`] interface the run driver, `wio explore` and the benchmarks speak to.
//!
//! The architectures (`arch/x86_64`, `arch/riscv64`) implement [`Machine`] and
//! [`LoadedSnapshot`]; `builder` picks one; `driver` runs any of them. Nothing here
//! knows an architecture.

pub mod config;
pub mod console;
pub mod driver;
pub mod finish;
pub mod guests;
pub mod noise;
pub mod novelty;
pub mod power;
pub mod sdk;
pub mod virtio;

pub use config::{BootMeta, RunConfig, RunResult};

use crate::error::{MachineError, Result};
use crate::snapshot::{Meta, Snapshot};
use crate::summary::Summary;
use console::Console;
use std::path::{Path, PathBuf};
use std::time::Instant;
use wio_clock::VirtualTime;
use wio_virtio_devices::Frame;

/// A guest architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Arch {
    /// x86-64 on KVM.
    #[value(name = "x86_64", alias = "x86-64", alias = "amd64")]
    X86_64,
    /// riscv64 (RV64GC) on wio's deterministic interpreter.
    #[value(name = "riscv64", alias = "riscv")]
    Riscv64,
}

impl Arch {
    /// The name snapshots, traces and summaries use.
    pub fn name(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Riscv64 => "riscv64",
        }
    }

    /// The architecture a snapshot's metadata names.
    pub fn from_name(name: &str) -> Option<Arch> {
        match name {
            "x86_64" => Some(Arch::X86_64),
            "riscv64" => Some(Arch::Riscv64),
            _ => None,
        }
    }
}

/// Why [`Machine::run_until`] returned.
#[derive(Debug)]
pub enum Stop {
    /// The machine reached one of its step boundaries (x86-64: every exit; riscv64: every
    /// exit and at least every 20 ms of virtual time) before the limit. Nothing is half
    /// done: the driver may look at the console or take a snapshot, then call again.
    Yield,
    /// Virtual time reached the limit (x86-64 notices it at the first exit at or after it;
    /// riscv64 stops on the last instruction at or before it: exactly on it unless its
    /// drifting clock steps over it).
    Limit,
    /// The guest asked for a snapshot here (riscv64: SBI call with its tag; x86-64: the
    /// paravirt port, no tag).
    GuestSnapshot(Option<u64>),
    /// A program in the guest declared its setup complete (the `wio.sdk` channel's
    /// `antithesis_setup`): the natural branch point (`--snapshot-at setup-complete`).
    SetupComplete,
    /// The run ended: the guest's exit status, or the error that ended it.
    End(Result<u32>),
}

/// One virtual machine, booted or restored, of either architecture.
///
/// Every method is called between two steps of the machine's run loop, where no exit
/// is half handled. A machine is a function of (seed, configuration, guest artifacts):
/// nothing a method does depends on host time or thread scheduling.
pub trait Machine {
    /// The seed it runs with now (the snapshot's, or the one a restore re-keyed it with).
    fn seed(&self) -> u64;
    /// Its virtual time.
    fn now(&self) -> VirtualTime;
    /// Runs the guest until the next step boundary, the limit, a guest request or the end.
    fn run_until(&mut self, limit: VirtualTime) -> Stop;
    /// Its console: the watched texts and the lines that matched them.
    fn console(&mut self) -> &mut Console;
    #[cfg_attr(
        not(test),
        allow(
            dead_code,
            reason = "the multi-machine simulation will call it; tested here"
        )
    )]
    /// Where an idle machine stopped at its limit would next wake by itself (its timer or
    /// its next device event; `VirtualTime::MAX`: only a delivered frame can wake it), or
    /// None when it did not stop idle. A world whose machines are all parked can skip
    /// to the earliest such time: nothing anywhere happens before it.
    fn parked_until(&self) -> Option<VirtualTime> {
        None
    }

    /// The frames its guest sent through its network port since the last call, with the
    /// virtual time each left (machines built with `RunConfig::net_port`; none otherwise).
    fn take_frames(&mut self) -> Vec<Frame>;
    #[cfg_attr(
        not(test),
        allow(
            dead_code,
            reason = "the multi-machine simulation will call it; tested here"
        )
    )]
    /// A frame reaching its network port at `frame.at_ns`, which must not be before
    /// [`Machine::now`]; the guest receives it at that virtual time.
    fn deliver_frame(&mut self, frame: Frame) -> Result<()>;
    /// The lines the guest's test-composer agent wrote on `wio.composer` since the last
    /// call, with the virtual time each was written (machines built with
    /// `RunConfig::composer`; none otherwise).
    fn take_composer_lines(&mut self) -> Vec<wio_virtio_devices::console::Line> {
        Vec::new()
    }
    /// Sends `bytes` to the guest's agent on `wio.composer`, from now on. False when the
    /// machine has no such port, or its guest has left too much unread
    /// (`console::MAX_COMPOSER_OWED`).
    fn send_composer(&mut self, _bytes: &[u8]) -> bool {
        false
    }
    /// From now on no fault of its plan starts in these windows [from, until) of virtual
    /// ns (a world's test composer holds faults off); a fault already in force runs its
    /// course. Machines without a fault plan ignore it.
    fn quiet_faults(&mut self, _windows: &[(u64, u64)]) {}
    /// Its whole state as a snapshot; `reason` says why it was taken.
    fn snapshot(&mut self, reason: String) -> Result<Snapshot>;
    /// Its whole state kept in memory, ready to be restored like a loaded snapshot file (a
    /// moment of a guided exploration): the same state [`Machine::snapshot`] takes, never
    /// written. `cfg` is the configuration it was restored or booted with.
    fn moment(&mut self, _cfg: &RunConfig) -> Result<Box<dyn LoadedSnapshot>> {
        Err(MachineError::NoMoments.into())
    }
    /// The code its engine decoded and built, for [`LoadedSnapshot::learn`] of the snapshot
    /// it was restored from (riscv64; None where an architecture keeps none).
    fn learned_code(&self) -> Option<LearnedCode> {
        None
    }
    /// From now on, notes what the run sees for the first time ([`novelty`]) of `signals`:
    /// console line shapes here; an architecture adds promise firsts and code coverage where
    /// it has them. Changes nothing the guest can see.
    fn observe(&mut self, signals: &[novelty::Signal]) {
        if signals.contains(&novelty::Signal::Console) {
            self.console().observe_shapes();
        }
    }
    /// What it saw for the first time since the last call (nothing unless observing).
    fn take_marks(&mut self) -> Vec<novelty::Mark> {
        self.console().take_shape_marks()
    }
    /// Ends the run: flushes the console, closes the trace (noting `until`, the console
    /// text the run stopped at, if it did), carries out `--persist`, and builds the summary.
    fn finish(
        self: Box<Self>,
        cfg: &RunConfig,
        outcome: Result<u32>,
        wall: Instant,
        until: Option<&str>,
    ) -> RunResult;
}

/// Where a loaded snapshot came from and what it is of (every architecture's loaded
/// snapshot keeps one).
pub struct SnapshotOrigin {
    /// Where it was read from.
    pub path: PathBuf,
    /// What it is of.
    pub meta: Meta,
    /// The file's checksum (names the snapshot in reports).
    pub sha256: String,
}

/// A snapshot read and checked once, ready to be restored any number of times (guest
/// memory in a memfd that every restore maps copy-on-write). Shared by the worker
/// threads of an exploration.
pub trait LoadedSnapshot: Send + Sync {
    /// Where it came from and what it is of.
    fn origin(&self) -> &SnapshotOrigin;
    /// A machine in the recorded state, run with `cfg`'s seed, outputs and limits (the
    /// guest and its devices come from the snapshot). With a seed other than the
    /// snapshot's, every stream is re-keyed from it: the past is shared, the future differs.
    fn restore(&self, cfg: &RunConfig, wall: Instant) -> Result<Box<dyn Machine>>;

    /// Where it was read from.
    fn path(&self) -> &Path {
        &self.origin().path
    }
    /// What it is of.
    fn meta(&self) -> &Meta {
        &self.origin().meta
    }
    /// The file's checksum.
    fn sha256(&self) -> &str {
        &self.origin().sha256
    }
    /// Host memory its guest memory takes (bytes): what a guided exploration counts
    /// against `--max-memory` for each moment it keeps.
    fn resident_bytes(&self) -> u64 {
        self.meta().mem_bytes
    }
    /// For a flat exploration's many branches: each restore gets its own copies of the
    /// pages the first branches wrote at once (riscv64, see
    /// `memory::layers::Layers::populate_written`); the guest sees the same memory either
    /// way. Not for guided explorations, whose moments keep the pages a view holds.
    fn populate_written(&self) {}
    /// Warm branches: every later restore starts with what a branch restored from this
    /// snapshot decoded and built (`code`, from [`Machine::learned_code`] at its end), each
    /// instruction of it fetched and compared at its first use and each block fetched again
    /// when first entered, so the guest sees the memory its own branch holds. Only the first
    /// call counts (restores must not depend on which branch finished when); false when
    /// this snapshot kept nothing (another architecture, or a second call).
    fn learn(&self, _code: LearnedCode) -> Result<bool> {
        Ok(false)
    }
    /// Whether restores start with what a branch taught it ([`LoadedSnapshot::learn`]).
    fn learned(&self) -> bool {
        false
    }
}

/// What a machine's engine decoded and built, as [`Machine::learned_code`] gives it: opaque
/// here, read by the architecture whose snapshot learns it.
pub struct LearnedCode(pub Box<dyn std::any::Any + Send>);

/// How one branch of an exploration ended.
pub struct BranchEnd {
    /// The run's summary (trace hash, virtual time, status or error).
    pub summary: Summary,
    /// The console texts (of those watched) that appeared, in order.
    pub matched: Vec<String>,
    /// Whether the branch stopped at its `until` text rather than at its end.
    pub stopped_at_until: bool,
    /// The whole console line of each watched text that appeared: (text, line).
    pub lines: Vec<(String, String)>,
    /// Host wall time of each part of the branch (for `wio bench`; it never reaches a
    /// report, a trace or a snapshot: rule 1).
    pub cost: BranchCost,
}

/// Host wall time one branch spent in each part: what a branch costs besides its guest
/// work is `restore` + `end`, and the run loop's share of `run`.
#[derive(Debug, Clone, Copy, Default)]
pub struct BranchCost {
    /// Restoring the snapshot as a machine with the branch's seed (guest memory mapped,
    /// engine and devices loaded, futures re-keyed).
    pub restore: std::time::Duration,
    /// Running the guest to the branch's end.
    pub run: std::time::Duration,
    /// Ending it: the summary, the trace hash, and freeing the machine (guest memory
    /// unmapped).
    pub end: std::time::Duration,
}
